# prior_sensitivity(): the log evidence under the prior with its scales multiplied, by reweighting
# a fit's particles, against the exact evidence of linear regression.

test_that("the reweighted change in log evidence follows the exact one", {
  # Reweighting SGAIS's final particles (replicates = 4), seeds 1-8 on this model (calibration:
  # inst/design.md): the estimated change minus the exact change at scale 2 had mean
  # -0.0000 (sd 0.0010), at scale 0.5 mean +0.0002 (sd 0.0047). Seed 11 within 4 sd.
  data <- simulate_linear_regression(500, dim = 3, seed = 9)
  model <- linear_regression(y ~ ., data, prior = "paper", noise_sd = 1)
  fit <- quiet_sgais(model, replicates = 4, seed = 11)
  s <- prior_sensitivity(fit)
  expect_s3_class(s, "sgais_prior_sensitivity")
  expect_identical(s$scale, c(0.5, 1, 2))
  expect_identical(s$change[2], 0)
  expect_identical(s$log_evidence[2], log_evidence(fit))
  exact <- vapply(c(0.5, 1, 2), function(k) {
    exact_log_evidence(linear_regression(y ~ ., data, prior_sd = k, noise_sd = 1))
  }, numeric(1))
  exact_change <- exact - exact[2]
  expect_lt(abs(s$change[3] - exact_change[3] - 0), 4 * 0.0010)
  expect_lt(abs(s$change[1] - exact_change[1] - 0.0002), 4 * 0.0047)
  expect_true(all(s$reliable))
  expect_output(print(s), "prior sensitivity")
})

test_that("nested sampling's dead points reweight too, and blocks of any kind scale", {
  data <- simulate_linear_regression(300, dim = 2, seed = 4)
  model <- linear_regression(y ~ ., data, prior = normal_prior(c(0.5, 0), c(2, 1)),
                             prior_intercept = normal_prior(1, 3), noise_sd = 1)
  fit <- quietly(nested_sampling(model, seed = 1, progress = FALSE))
  s <- prior_sensitivity(fit, scales = 2)
  scaled <- linear_regression(y ~ ., data, prior = normal_prior(c(0.5, 0), c(4, 2)),
                              prior_intercept = normal_prior(1, 6), noise_sd = 1)
  exact_change <- exact_log_evidence(scaled) - exact_log_evidence(model)
  # nested sampling's thousands of weighted points: the reweighting error is well below its own
  # spread (0.2-0.3 nats on such models, test-prior.R)
  expect_lt(abs(s$change[s$scale == 2] - exact_change), 0.1)
  # a robust regression's coefficients scale, its noise scale's prior does not
  r <- robust_regression(y ~ ., data, prior_sd = 2)
  m <- sgais:::scaled_prior_model(r, 3, NULL)
  expect_equal(m$hyper$prior_sd, 6)
  expect_equal(m$hyper$scale_prior, r$hyper$scale_prior)
})

test_that("a comparison reports every model's evidence and Bayes factor at each scale", {
  data <- simulate_linear_regression(400, dim = 3, seed = 2)
  models <- list(all = linear_regression(y ~ ., data, prior = "paper", noise_sd = 1),
                 one = linear_regression(y ~ x1, data, prior = "paper", noise_sd = 1))
  compared <- function(seed) {
    quietly(compare_models(models, data, seed = seed, progress = FALSE, method = "sgais"))
  }
  cmp <- compared(1)
  s <- prior_sensitivity(cmp)
  expect_identical(nrow(s), 6L)
  expect_identical(levels(s$model), c("all", "one"))
  at <- function(k) s[s$scale == k, ]
  for (k in c(0.5, 1, 2)) {
    expect_equal(max(at(k)$log_bayes_factor), 0)
    expect_equal(at(k)$log_bayes_factor, at(k)$log_evidence - max(at(k)$log_evidence))
  }
  # the change in the log Bayes factor of `all` against `one` follows the exact one (here not
  # monotone in the scale: the coefficients are 1-1.6 prior sds). Single runs, seeds 1-8: error
  # of the change mean +0.007 (sd 0.065) at scale 0.5, -0.003 (sd 0.016) at scale 2; the test
  # has seed 11 (compare_models(seed = 1) above is seed 1 of that calibration: refit on 11).
  cmp <- compared(11)
  s <- prior_sensitivity(cmp)
  at <- function(k) s[s$scale == k, ]
  bf <- function(k) at(k)$log_evidence[1] - at(k)$log_evidence[2]
  exact_bf <- function(k) {
    exact_log_evidence(linear_regression(y ~ ., data, prior_sd = k, noise_sd = 1)) -
      exact_log_evidence(linear_regression(y ~ x1, data, prior_sd = k, noise_sd = 1))
  }
  expect_lt(abs(bf(0.5) - bf(1) - (exact_bf(0.5) - exact_bf(1)) - 0.007), 4 * 0.065)
  expect_lt(abs(bf(2) - bf(1) - (exact_bf(2) - exact_bf(1)) + 0.003), 4 * 0.016)
})

test_that("too few effective particles warn, and unscalable priors are errors", {
  data <- simulate_linear_regression(400, dim = 3, seed = 2)
  fit <- quiet_sgais(linear_regression(y ~ ., data, noise_sd = 1), seed = 1)
  # a prior 100 times narrower leaves almost no weight where the particles are
  expect_warning(s <- prior_sensitivity(fit, scales = 0.01), "too few to say at scale 0.01",
                 class = "sgais_warning_low_ess")
  expect_false(s$reliable[s$scale == 0.01])
  # (20 particles, one move a step: a mixture has no scale to vary, however it was fitted)
  mixture <- quiet_sgais(gaussian_mixture(simulate_gaussian_mixture(300, seed = 1), components = 2),
                         particles = 20, early_particles = 20, max_rounds = 1, seed = 1)
  expect_error(prior_sensitivity(mixture), "no scale to vary", class = "sgais_error_prior_sensitivity")
  expect_error(prior_sensitivity(fit, scales = -1), "`scales`", class = "sgais_error")
  expect_error(prior_sensitivity(fit, min_ess = 0), "`min_ess`", class = "sgais_error")
  expect_error(prior_sensitivity(1), "`x` must be a fit or a comparison", class = "sgais_error")
})

test_that("with random effects only the coefficients' priors scale, not the sds' or correlation's", {
  set.seed(3)
  d <- data.frame(x = rnorm(120), g = rep(letters[1:8], 15))
  d$y <- 1 + 0.5 * d$x + rnorm(8)[match(d$g, letters)] + rnorm(120)
  d$k <- rpois(120, 2)
  models <- list(
    linear_regression(y ~ x + (1 + x | g), d, noise_sd = NULL),
    poisson_regression(k ~ x + (1 + x | g), d)
  )
  for (m in models) {
    scaled <- sgais:::scaled_prior_model(m, 2, NULL)
    p <- nrow(m$data$xt)
    coef <- m$hyper$prior[2, ] < p
    expect_equal(scaled$hyper$prior[5, coef], 2 * m$hyper$prior[5, coef])
    expect_identical(scaled$hyper$prior[, !coef], m$hyper$prior[, !coef])
    # the log prior changes by the coefficients' part alone
    theta <- c(0.3, -0.2, seq(-0.5, 0.5, length.out = length(m$parameter_names) - p))
    change <- sgais:::model_evaluate(scaled, theta)$log_prior - sgais:::model_evaluate(m, theta)$log_prior
    sds <- rep(m$hyper$prior[5, coef], m$hyper$prior[3, coef])
    means <- rep(m$hyper$prior[4, coef], m$hyper$prior[3, coef])
    expect_equal(change, sum(dnorm(theta[1:p], means, 2 * sds, log = TRUE) -
                               dnorm(theta[1:p], means, sds, log = TRUE)))
  }
})
