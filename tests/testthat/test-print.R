# Snapshots of what people read: the printed models, fits, summaries and controls, and the main
# error messages. Times are fixed before printing (they vary from run to run); every other
# figure is fixed by the seed. After an intended change of output, review and accept with
# testthat::snapshot_review().

# a fit with every time set to one second, so that tables of times print the same every run
fixed_times <- function(fit) {
  fit$seconds <- 1
  for (table in c("trajectory", "schedule", "trace")) {
    for (col in c("seconds", "chunk_seconds")) {
      if (!is.null(fit[[table]][[col]])) fit[[table]][[col]] <- 1
    }
  }
  fit
}

data <- simulate_linear_regression(300, seed = 1)
model <- linear_regression(y ~ ., data, noise_sd = 1)

test_that("models print their likelihood, prior and sizes", {
  expect_snapshot(model)
  expect_snapshot(softmax_regression(y ~ ., simulate_softmax_regression(100, dim = 2, seed = 1)))
  expect_snapshot(gaussian_mixture(simulate_gaussian_mixture(100, components = 2, dim = 2, seed = 1),
                                   components = 2))
})

test_that("fits print their estimate, cost and diagnostics", {
  fit <- fixed_times(sgais(model, seed = 1, progress = FALSE))
  expect_snapshot(fit)
  expect_snapshot(summary(fit))
  expect_snapshot(fixed_times(ais(model, seed = 1, progress = FALSE)))
  ns <- fixed_times(nested_sampling(model, seed = 1, progress = FALSE))
  expect_snapshot(ns)
  expect_snapshot(summary(ns))
})

test_that("controls print their resolved settings", {
  expect_snapshot(sgais_control())
  expect_snapshot(nested_control("paper", live_points = 20))
})

test_that("the main errors say what is wrong and what to do", {
  broken <- model
  broken$n <- 100L
  expect_snapshot(error = TRUE, sgais(broken, progress = FALSE))
  expect_snapshot(error = TRUE, sgais(model, target_ess = 50, progress = FALSE))
  expect_snapshot(error = TRUE, ais(model, particles = -1, progress = FALSE))
  expect_snapshot(error = TRUE, linear_regression(y ~ x1 + offset(x2), data))
  expect_snapshot(error = TRUE, linear_regression(q ~ x1, data))
  scaled <- data
  scaled$y <- scaled$y * 1e6
  expect_snapshot(error = TRUE, nested_sampling(linear_regression(y ~ ., scaled,
                                                                  noise_sd = 1), progress = FALSE))
  fit <- ais(model, seed = 1, progress = FALSE)
  fit$log_evidence <- "a"
  expect_snapshot(error = TRUE, summary(fit))
})

test_that("every print is within 100 columns", {
  d <- simulate_linear_regression(120, dim = 2, seed = 2)
  m <- linear_regression(y ~ ., d)
  fits <- list(
    exact_evidence(m, seed = 1),
    importance_sampling(m, seed = 1, progress = FALSE),
    quietly(sgais(m, seed = 1, progress = FALSE)),
    quietly(ais(m, seed = 1, progress = FALSE)),
    quietly(nested_sampling(m, seed = 1, progress = FALSE)),
    quietly(sir(m, seed = 1, progress = FALSE)),
    quietly(online_nested_sampling(m, seed = 1, progress = FALSE))
  )
  cmp <- compare_models(stats::setNames(fits[1:3], c("exact", "is", "sgais")))
  shown <- c(fits, lapply(fits, summary), list(m, cmp, summary(cmp)),
             list(sgais_control(), nested_control(), logistic_regression(y > 0 ~ x1, d),
                  softmax_regression(y ~ ., simulate_softmax_regression(100, dim = 6, seed = 1))))
  out <- unlist(lapply(shown, function(x) utils::capture.output(print(x))))
  expect_lte(max(nchar(out)), 100L)
})
