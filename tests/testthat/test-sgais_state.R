same_run <- function(a, b) {
  cols <- setdiff(names(a$trajectory), "seconds")
  expect_identical(b$trajectory[cols], a$trajectory[cols])
  expect_identical(b$log_evidence, a$log_evidence)
  expect_identical(b$state$particles, a$state$particles)
  expect_identical(b$state$log_weights, a$state$log_weights)
  expect_identical(b$model$data, a$model$data)
}

online_data <- function(n = 2534) simulate_linear_regression(n, seed = 11)

test_that("a fit continued in pieces, split inside chunks, is the fit of all the data at once", {
  d <- online_data()
  whole <- quietly(sgais(linear_regression(y ~ ., d), seed = 5, progress = FALSE))
  first <- quietly(sgais(linear_regression(y ~ ., d[1:734, ]), seed = 5, progress = FALSE))
  # the first piece reports all its 734 observations, from a partial chunk computed on a copy
  expect_equal(first$n, 734L)
  tr <- as.data.frame(first)
  expect_identical(tr$n, c(500L, 734L))
  expect_identical(tr$partial, c(FALSE, TRUE))
  expect_identical(first$state$resume[[1]]$n, 500L)
  second <- quietly(sgais(first, d[735:1111, ], progress = FALSE))
  third <- quietly(update(second, d[1112:2534, ], progress = FALSE))
  same_run(whole, third)
  expect_false(any(head(third$trajectory$partial, -1)))
  expect_true(tail(third$trajectory$partial, 1))
  # one observation at a time across a chunk boundary
  piece <- quietly(sgais(linear_regression(y ~ ., d[1:998, ]), seed = 5, progress = FALSE))
  for (i in 999:1002) piece <- quietly(sgais(piece, d[i, , drop = FALSE], progress = FALSE))
  piece <- quietly(sgais(piece, d[1003:2534, ], progress = FALSE))
  same_run(whole, piece)
})

test_that("continuing works for the paper's preset and for replicates", {
  d <- online_data(1800)
  paper <- sgais_control("paper")
  whole <- quietly(sgais(linear_regression(y ~ ., d), control = paper, seed = 2, progress = FALSE))
  part <- quietly(sgais(linear_regression(y ~ ., d[1:1250, ]), control = paper, seed = 2,
                        progress = FALSE))
  same_run(whole, quietly(sgais(part, d[1251:1800, ], progress = FALSE)))

  whole <- quietly(sgais(linear_regression(y ~ ., d), replicates = 3, seed = 2, progress = FALSE))
  part <- quietly(sgais(linear_regression(y ~ ., d[1:700, ]), replicates = 3, seed = 2,
                        progress = FALSE))
  cont <- quietly(sgais(part, d[701:1800, ], progress = FALSE))
  same_run(whole, cont)
  expect_identical(cont$log_evidence_se, whole$log_evidence_se)
  expect_identical(cont$diagnostics, whole$diagnostics)
})

test_that("a continued fit uses its own random streams, under any plan", {
  skip_on_cran()
  d <- online_data(1500)
  part <- quietly(sgais(linear_regression(y ~ ., d[1:600, ]), replicates = 2, seed = 4,
                        progress = FALSE))
  set.seed(1)
  before <- .Random.seed
  kind <- RNGkind()
  a <- quietly(sgais(part, d[601:1500, ], progress = FALSE))
  expect_identical(.Random.seed, before)
  expect_identical(RNGkind(), kind)
  set.seed(99)
  b <- quietly(sgais(part, d[601:1500, ], progress = FALSE))
  same_run(a, b)
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  c <- quietly(sgais(part, d[601:1500, ], progress = FALSE))
  same_run(a, c)
})

test_that("a fit saved with saveRDS() continues as if it had never stopped", {
  d <- online_data(1700)
  whole <- quietly(sgais(linear_regression(y ~ ., d), seed = 8, progress = FALSE))
  part <- quietly(sgais(linear_regression(y ~ ., d[1:1100, ]), seed = 8, progress = FALSE))
  file <- tempfile(fileext = ".rds")
  on.exit(unlink(file), add = TRUE)
  saveRDS(part, file)
  same_run(whole, quietly(sgais(readRDS(file), d[1101:1700, ], progress = FALSE)))
})

test_that("continuing works for every model", {
  iris2 <- iris[c(rbind(1:50, 51:100, 101:150)), ] # the classes interleaved
  whole <- quietly(sgais(softmax_regression(Species ~ ., iris2), seed = 3, chunk_size = 40,
                         progress = FALSE))
  part <- quietly(sgais(softmax_regression(Species ~ ., iris2[1:70, ]), seed = 3, chunk_size = 40,
                        progress = FALSE))
  same_run(whole, quietly(sgais(part, iris2[71:150, ], progress = FALSE)))

  y <- simulate_gaussian_mixture(900, components = 2, seed = 3)
  whole <- quietly(sgais(gaussian_mixture(y, components = 2), seed = 3, progress = FALSE))
  part <- quietly(sgais(gaussian_mixture(y[1:333, ], components = 2), seed = 3, progress = FALSE))
  same_run(whole, quietly(sgais(part, y[334:900, ], progress = FALSE)))

  d <- online_data(900)
  x <- as.matrix(d[1:5])
  whole <- quietly(sgais(linear_regression(x = x, y = d$y), seed = 3, progress = FALSE))
  part <- quietly(sgais(linear_regression(x = x[1:450, ], y = d$y[1:450]), seed = 3,
                        progress = FALSE))
  same_run(whole, quietly(sgais(part, list(x = x[451:900, ], y = d$y[451:900]), progress = FALSE)))
})

test_that("continuing checks its arguments and the fit", {
  d <- online_data(600)
  fit <- quietly(sgais(linear_regression(y ~ ., d[1:500, ]), seed = 1, progress = FALSE))
  expect_error(sgais(fit, d[501:600, ], particles = 10), "cannot be changed",
               class = "sgais_error")
  expect_error(sgais(fit), "`new_data` is missing", class = "sgais_error")
  expect_error(sgais(fit, d[501:600, -1]), class = "sgais_error_missing_column")
  expect_error(sgais(fit, transform(d[501:600, ], extra = 1)), class = "sgais_error_extra_column")
  expect_error(sgais(fit, d[501:600, ], progress = NA), "`progress`", class = "sgais_error")
  broken <- fit
  broken$state$resume[[1]]$theta <- broken$state$resume[[1]]$theta[-1, ]
  expect_error(sgais(broken, d[501:600, ]), "cannot be continued", class = "sgais_error_invalid_state")
  broken <- fit
  broken$state$resume[[1]]$seed <- NULL
  expect_error(sgais(broken, d[501:600, ]), "random number stream",
               class = "sgais_error_invalid_state")
  broken <- fit
  broken$state <- unclass(broken$state)
  expect_error(sgais(broken, d[501:600, ]), "older version", class = "sgais_error_invalid_state")
  expect_error(sgais(list(), d), "`model` must be an sgais model", class = "sgais_error")
  expect_output(print(fit$state), "<SGAIS state: 500 observations, 1 replicate of 100 particles")
})
