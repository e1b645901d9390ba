test_that("check_gradients returns a row per point, term and parameter", {
  model <- small_model(200)
  check <- check_gradients(model, n = 3, seed = 1)
  expect_s3_class(check, c("sgais_gradient_check", "data.frame"))
  expect_identical(names(check), c("point", "term", "parameter", "analytic", "numeric", "rel_error"))
  expect_identical(nrow(check), 3L * 2L * 6L)
  expect_identical(unique(check$term), c("log_prior", "log_likelihood"))
  expect_identical(check$parameter[1:6], model$parameter_names)
  # linear regression: both gradients right to far better than 1e-5
  expect_lt(max(check$rel_error), 1e-5)
  # the analytic column is the model's own gradient at the prior draw
  theta <- withr::with_seed(1, sgais:::model_prior_draw(model, 1))[, 1]
  ev <- sgais:::model_evaluate(model, theta)
  expect_equal(check$analytic[check$point == 1], c(ev$grad_log_prior, ev$grad_log_lik))
  expect_output(print(check), "gradient check: Bayesian linear regression")
  expect_output(print(check), "3 points, 6 parameters, log-likelihood of the first 200 observations")
  expect_output(print(check), "log likelihood: largest relative error")
})

test_that("a wrong gradient is caught", {
  # f(theta) = sum(theta^2) with the right gradient for the prior and a wrong one (3 theta
  # instead of 2 theta in the second coordinate) for the likelihood
  evaluate <- function(theta) {
    list(log_prior = sum(theta^2), grad_log_prior = 2 * theta,
         log_lik = sum(theta^2), grad_log_lik = 2 * theta * c(1, 1.5))
  }
  rows <- sgais:::gradient_rows(evaluate, c(0.5, -2), c("a", "b"), 1L, NULL)
  expect_lt(max(rows$rel_error[rows$term == "log_prior"]), 1e-9)
  expect_lt(rows$rel_error[rows$term == "log_likelihood" & rows$parameter == "a"], 1e-9)
  expect_equal(rows$rel_error[rows$term == "log_likelihood" & rows$parameter == "b"], 1 / 3,
               tolerance = 1e-6)
  bad <- function(theta) list(log_prior = NaN, grad_log_prior = theta, log_lik = 0, grad_log_lik = theta)
  expect_error(sgais:::gradient_rows(bad, 1, "a", 2L, NULL), "not finite at point 2")
})

test_that("points can be given, and the check is reproducible with a seed", {
  model <- small_model(100)
  one <- check_gradients(model, theta = rep(0.1, 6))
  expect_identical(max(one$point), 1L)
  two <- check_gradients(model, theta = rbind(rep(0.1, 6), rep(-3, 6)), observations = 50)
  expect_identical(max(two$point), 2L)
  expect_output(print(two), "first 50 observations")
  expect_identical(check_gradients(model, n = 2, seed = 4), check_gradients(model, n = 2, seed = 4))
  set.seed(99); u1 <- runif(1)
  set.seed(99); check_gradients(model, n = 1, seed = 1); u2 <- runif(1)
  expect_identical(u1, u2)
})

test_that("bad arguments give errors that name them", {
  model <- small_model(100)
  expect_error(check_gradients(list()), "`model` must be an sgais model")
  expect_error(check_gradients(model, n = 0), "`n` must be a whole number >= 1")
  expect_error(check_gradients(model, observations = 101), "`observations` must not exceed the number of observations \\(100\\)")
  expect_error(check_gradients(model, observations = 0), "`observations` must be a whole number >= 1")
  expect_error(check_gradients(model, theta = 1:3), "`theta` must be a numeric vector of length 6")
  expect_error(check_gradients(model, theta = c(1:5, NA)), "`theta` must be finite")
  expect_error(check_gradients(model, seed = "x"), "`seed` must be NULL or a whole number")
})

test_that("the steps follow the prior's spread, so the data's units do not matter", {
  # softmax regression on covariates in the hundreds: under prior = "autoscale" the slopes'
  # prior sds are 2.5 / sd(x_j), about 0.025, and a step of 1e-3 would be 4% of that
  data <- simulate_softmax_regression(300, dim = 4, classes = 3, seed = 5)
  data[1:4] <- data[1:4] * 100
  check <- check_gradients(softmax_regression(y ~ ., data), n = 3, seed = 2)
  expect_lt(max(check$rel_error), 1e-6)
})
