# The one restart executor (R/restart.R, restart_execute()) that SGAIS, SIR, the sequential
# estimator and online nested sampling run their restarts through.
test_that("a restart's draws come from the run's key and the observations, shuffled or not", {
  model <- linear_regression(y ~ ., simulate_linear_regression(50, seed = 1), prior = "paper")
  key <- c(7, 11)
  seen <- function(model, drawn) list(model = model, drawn = drawn)
  a <- sgais:::restart_execute(model, key, 30, 5, seen)
  b <- withr::with_seed(99, sgais:::restart_execute(model, key, 30, 5, seen))
  # the session's stream does not matter
  expect_identical(a, b)
  expect_identical(dim(a$drawn$theta), c(model$dim, 5L))
  # shuffled: the first 30 observations in a random order
  expect_identical(a$model$n, 30L)
  expect_setequal(a$drawn$order, 1:30)
  expect_false(identical(a$drawn$order, 1:30))
  expect_identical(a$model$data[[1]], model$data[[1]][, a$drawn$order, drop = FALSE])
  # another point or key, other draws; unshuffled, the model as it is
  expect_false(identical(sgais:::restart_execute(model, key, 40, 5, seen)$drawn$theta,
                         a$drawn$theta))
  plain <- sgais:::restart_execute(model, key, 30, 5, seen, shuffle = FALSE)
  expect_identical(plain$model, model)
  expect_null(plain$drawn$order)
})

test_that("online nested sampling's restart policy is the grid from its chunks", {
  model <- gaussian_mixture(matrix(c(0, 0.1, 3, 3.1), ncol = 1), components = 2)
  settings <- list(chunk_size = 20L, restart_every = NULL)
  policy <- sgais:::restart_policy(model, settings)
  expect_identical(policy[c("every", "base", "threshold", "whole", "on_reference")],
                   list(every = 2, base = 20L, threshold = Inf, whole = FALSE,
                        on_reference = FALSE))
  expect_identical(sgais:::restart_policy(model, list(chunk_size = 20L, restart_every = Inf))$every,
                   Inf)
})

# SIR's shift trigger (restart_threshold, 5 in its robust preset): a regression whose intercept
# moves by 5 noise sds after 600 observations. Its chunk after the change is predicted far worse
# than the one before, so the run restarts there, from all the observations so far annealed;
# that estimate is within the regressions' tolerance of the exact one (seeds 2-6: within 0.6).
test_that("SIR restarts after a shift, from all the data so far", {
  n <- 1200
  x <- withr_seed(3, matrix(stats::rnorm(n * 2), n, 2))
  y <- drop(x %*% c(1, -1)) + 5 * (seq_len(n) > 600) + withr_seed(4, stats::rnorm(n))
  d <- data.frame(y = y, x)
  lr <- function(rows) linear_regression(y ~ ., d[rows, ], prior = "paper", noise_sd = 1)
  run <- function(...) {
    quietly(sir(lr(1:n), particles = 50, early_particles = 50, max_rounds = 1, seed = 1,
                progress = FALSE, ...))$trajectory
  }
  tr <- run()
  at <- tr$n[tr$restarts > 0]
  expect_identical(at, 630L)
  expect_identical(tr$n[tr$shift_restarts > 0], at)
  expect_lt(abs(tr$log_evidence[tr$n == at] - exact_log_evidence(lr(seq_len(at)))), 3)
  expect_true(all(run(restart_threshold = Inf)$restarts == 0))
})

# The shift trigger's surprise (src/restart.c, shift_score) takes both means' variances from the
# earlier observations: a chunk in which one observation in eight comes from far away (a new
# cluster's first points) is a shift, which the chunk's own variance, inflated by those very
# points, would hide (its z statistic stays near sqrt(100 / 7), about 3.8, however far they are).
test_that("a chunk whose few observations come from far away is a shift", {
  n <- 600L
  x <- withr_seed(3, matrix(stats::rnorm(n * 2), n, 2))
  y <- drop(x %*% c(1, -1)) + withr_seed(4, stats::rnorm(n))
  far <- seq(505, n, by = 8)
  d <- data.frame(y = y, x)
  run <- function(d) {
    model <- linear_regression(y ~ ., d, prior = "paper", noise_sd = 1)
    quietly(sgais(model, chunk_size = 100, restart_threshold = 5, seed = 1,
                  progress = FALSE))$trajectory
  }
  expect_true(all(run(d)$shift_restarts == 0))
  d$y[far] <- d$y[far] + 15
  tr <- run(d)
  expect_identical(tr$n[tr$shift_restarts > 0], n)
})
