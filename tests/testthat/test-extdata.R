# The paper-reproduction results shipped in inst/extdata (made by inst/scripts/reproduce-paper.R)
# have the columns the vignettes read, and values that make sense.

read_extdata <- function(file) {
  path <- system.file("extdata", file, package = "sgais")
  expect_true(nzchar(path), info = file)
  utils::read.csv(path, stringsAsFactors = FALSE)
}

test_that("the accuracy runs have the vignette's columns, and linear regression its exact value", {
  acc <- read_extdata("paper-accuracy.csv")
  expect_true(all(c("model", "method", "preset", "seed", "run_n", "n", "log_evidence",
                    "seconds", "status", "exact") %in% names(acc)))
  expect_true(all(acc$method %in% c("SGAIS", "AIS", "NS")))
  expect_true(all(acc$preset %in% c("paper", "robust")))
  done <- acc[acc$status == "done", ]
  expect_true(all(is.finite(done$log_evidence) & done$log_evidence < 0))
  expect_true(all(done$n <= done$run_n))
  lin <- acc[acc$model == "linear", ]
  expect_true(all(is.finite(lin$exact)))
  # The exact values are those of the package, on the script's data (seed 2019).
  n <- c(1000, 10000)
  z <- exact_log_evidence(linear_regression(y ~ ., prior = "paper", data = simulate_linear_regression(10000, seed = 2019),
                                            noise_sd = 1),
                          n = n)
  expect_equal(lin$exact[match(n, lin$n)], z)
  # Skipped or capped runs carry their reason and no estimate.
  expect_true(all(is.na(acc$log_evidence[acc$status != "done"])))
})

test_that("the shift, A1 and sensitivity runs have the vignettes' columns", {
  shift <- read_extdata("paper-shift.csv")
  expect_named(shift, c("preset", "components", "order", "n", "log_evidence", "annealing_steps",
                        "seconds"))
  expect_setequal(unique(shift$order), c("in order", "shuffled"))
  a1 <- read_extdata("paper-a1.csv")
  expect_named(a1, c("method", "preset", "seed", "n", "log_evidence", "seconds"))
  expect_true(all(a1$n %in% seq(20, 1000, by = 20)))
  sens <- read_extdata("paper-sensitivity.csv")
  expect_true(all(c("parameter", "particles", "target_ess", "sghmc_steps", "learning_rate",
                    "batch_size", "seed", "n", "log_evidence", "seconds",
                    "annealing_steps") %in% names(sens)))
  expect_true("reference (robust SGAIS)" %in% sens$parameter)
  info <- read_extdata("paper-info.csv")
  expect_true(all(c("collected", "machine", "sgais_commit", "data_seed") %in% info$key))
})
