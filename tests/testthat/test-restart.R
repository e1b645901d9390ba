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
