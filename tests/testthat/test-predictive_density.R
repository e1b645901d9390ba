# The exact posterior predictive of Bayesian linear regression: y' | y ~ N(a' mu, s^2 + a' S a)
# with S = (A'A / s^2 + I / t^2)^-1 and mu = S A'y / s^2.
exact_predictive <- function(data, new, noise_sd = 1, prior_sd = 1) {
  a <- model.matrix(y ~ ., data)
  b <- model.matrix(y ~ ., new)
  S <- solve(crossprod(a) / noise_sd^2 + diag(ncol(a)) / prior_sd^2)
  mu <- S %*% crossprod(a, data$y) / noise_sd^2
  dnorm(new$y, drop(b %*% mu), sqrt(noise_sd^2 + rowSums((b %*% S) * b)), log = TRUE)
}

test_that("predictive densities match the exact posterior predictive", {
  d <- simulate_linear_regression(1300, seed = 31)
  old <- d[1:1000, ]
  new <- d[1001:1300, ]
  exact <- exact_predictive(old, new)
  model <- linear_regression(y ~ ., old, noise_sd = 1)
  for (fit in list(quietly(sgais(model, seed = 1, progress = FALSE)),
                   quietly(ais(model, seed = 1, progress = FALSE)),
                   quietly(nested_sampling(model, live_points = 50, seed = 1, progress = FALSE)))) {
    lp <- predictive_density(fit, new)
    expect_length(lp, 300)
    # 50 to a few hundred weighted points: their mean is close, each value within 0.1 nat
    expect_lt(abs(mean(lp - exact)), 0.02)
    expect_lt(max(abs(lp - exact)), 0.1)
  }
})

test_that("a comparison predicts by the model average", {
  d <- simulate_linear_regression(900, seed = 32)
  models <- list(all = linear_regression(y ~ ., d,
                                         noise_sd = 1), two = linear_regression(y ~ x1 + x2, d, noise_sd = 1))
  cmp <- quietly(compare_models(models, d[1:800, ], seed = 2, progress = FALSE, method = "sgais"))
  new <- d[801:900, ]
  each <- vapply(cmp$fits, predictive_density, numeric(100), new_data = new)
  p <- cmp$trajectory$probability[cmp$trajectory$n == 800]
  expect_equal(predictive_density(cmp, new), log(drop(exp(each) %*% p)))
})

test_that("predictive_density() checks the new observations", {
  d <- simulate_linear_regression(600, seed = 33)
  fit <- quietly(sgais(linear_regression(y ~ ., d[1:500, ],
                                         noise_sd = 1), seed = 1, progress = FALSE))
  expect_error(predictive_density(fit), "`new_data` is missing", class = "sgais_error")
  expect_error(predictive_density(fit, d[501:600, -1]), class = "sgais_error_missing_column")
  broken <- fit
  broken$n <- 3L
  expect_error(predictive_density(broken, d[501:600, ]), class = "sgais_error_invalid_fit")
})
