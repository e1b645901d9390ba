# Negative binomial regression (src/negative_binomial_regression.c): overdispersed counts, size
# omega^-2, theta = (coefficients, log omega).

# Counts with a covariate and an exposure.
negbin_data <- function(n = 200, seed = 1) {
  withr::with_seed(seed, {
    x <- stats::rnorm(n)
    t <- stats::runif(n, 0.5, 2)
    data.frame(x = x, t = t, y = stats::rnbinom(n, mu = t * exp(0.5 + 0.4 * x), size = 2))
  })
}

# R's log-likelihood of the same model (dnbinom), and its gradient by central differences.
ref_negbin <- function(theta, d) {
  f <- function(th) {
    sum(stats::dnbinom(d$y, mu = d$t * exp(th[1] + th[2] * d$x), size = exp(-2 * th[3]), log = TRUE))
  }
  h <- 1e-6
  grad <- vapply(seq_along(theta), function(j) {
    e <- replace(numeric(length(theta)), j, h)
    (f(theta + e) - f(theta - e)) / (2 * h)
  }, numeric(1))
  list(log_lik = f(theta), grad = grad)
}

test_that("the C log-likelihood, prior and gradients match R, with an offset", {
  test_tags("memcheck")
  d <- negbin_data()
  model <- negative_binomial_regression(y ~ x + offset(log(t)), d, prior_sd = 2,
                                        overdispersion_prior = 0.5)
  for (theta in list(c(0.3, 0.5, log(0.6)), c(-1, 2, 1.5), c(0.5, 0.4, -6))) {
    ev <- sgais:::model_evaluate(model, theta)
    ref <- ref_negbin(theta, d)
    expect_equal(ev$log_lik, ref$log_lik, tolerance = 1e-12)
    expect_equal(ev$grad_log_lik, ref$grad, tolerance = 1e-6)
    # N(0, 2^2) on the coefficients, omega = exp(theta[3]) ~ N+(0, 0.5^2) with its Jacobian
    omega <- exp(theta[3])
    expect_equal(ev$log_prior, sum(stats::dnorm(theta[1:2], 0, 2, log = TRUE)) + log(2) +
                   stats::dnorm(omega, 0, 0.5, log = TRUE) + theta[3])
    expect_equal(ev$grad_log_prior, c(-theta[1:2] / 4, 1 - omega^2 / 0.25))
  }
})

test_that("large counts, and the Poisson limit of a tiny overdispersion, are exact", {
  d <- negbin_data()
  # counts past the exact sums (64) and the log-factorial table (256): lgamma() and digamma()
  big <- transform(d, y = y * 60)
  model <- negative_binomial_regression(y ~ x + offset(log(t)), big, prior = "paper")
  theta <- c(3, 0.4, log(0.5))
  ref <- ref_negbin(theta, big)
  ev <- sgais:::model_evaluate(model, theta)
  expect_equal(ev$log_lik, ref$log_lik, tolerance = 1e-12)
  expect_equal(ev$grad_log_lik, ref$grad, tolerance = 1e-6)
  # omega -> 0: the Poisson likelihood, continuous across the switch at size e^36
  pois <- poisson_regression(y ~ x + offset(log(t)), d)
  nb <- negative_binomial_regression(y ~ x + offset(log(t)), d)
  at <- function(t) sgais:::model_evaluate(nb, c(0.5, 0.4, t))$log_lik
  poisson <- sgais:::model_evaluate(pois, c(0.5, 0.4))$log_lik
  expect_equal(at(-17.9), poisson, tolerance = 1e-12)
  expect_equal(at(-18.1), poisson, tolerance = 1e-12)
  expect_equal(at(-400), poisson)
  expect_true(is.finite(at(-700)))
})

test_that("gradients pass the finite-difference check", {
  d <- negbin_data()
  check <- check_gradients(negative_binomial_regression(y ~ x + offset(log(t)), d), seed = 1)
  expect_identical(nrow(check), 30L) # 5 points x 2 terms x 3 parameters
  expect_lt(max(check$rel_error), 1e-6)
})

test_that("prior draws follow the prior", {
  model <- negative_binomial_regression(y ~ x, negbin_data(), overdispersion_prior = 2)
  draws <- withr::with_seed(3, sgais:::model_prior_draw(model, 4000))
  expect_gt(stats::ks.test(draws[1, ], "pnorm", 0, 2.5)$p.value, 1e-3)
  expect_gt(stats::ks.test(exp(draws[3, ]) / 2, function(q) 2 * stats::pnorm(q) - 1)$p.value, 1e-3)
})

test_that("formula and matrix interfaces build the same model; new rows continue exactly", {
  d <- negbin_data()
  f <- negative_binomial_regression(y ~ x + offset(log(t)), d, prior = "paper")
  m <- negative_binomial_regression(x = d$x, y = d$y, offset = log(d$t), prior = "paper")
  expect_equal(f$data, m$data)
  expect_identical(f$parameter_names, c("(Intercept)", "x", "log_overdispersion"))
  expect_output(print(f), "NB\\(mean mu, size omega\\^-2\\)")
  expect_output(print(f), "omega ~ half-normal\\(sd = 1\\)")
  # (20 particles: continuation does not depend on their number)
  whole <- quiet_sgais(f, particles = 20, early_particles = 20, seed = 3)
  first <- quiet_sgais(negative_binomial_regression(y ~ x + offset(log(t)), d[1:120, ],
                                                    prior = "paper"),
                       particles = 20, early_particles = 20, seed = 3)
  expect_identical(log_evidence(quietly(sgais(first, d[121:200, ], progress = FALSE))),
                   log_evidence(whole))
  # priors of its own on the coefficients, as the other regressions
  own <- negative_binomial_regression(y ~ x, d, prior = cauchy_prior(scale = 1),
                                      prior_intercept = normal_prior(1, 2))
  expect_equal(sgais:::model_evaluate(own, c(0.2, -0.3, 0))$log_prior,
               stats::dnorm(0.2, 1, 2, log = TRUE) + stats::dcauchy(-0.3, log = TRUE) + log(2) +
                 stats::dnorm(1, log = TRUE))
})

test_that("bad counts and arguments give classed errors that name them", {
  d <- negbin_data(30)
  expect_error(negative_binomial_regression(y ~ x, transform(d, y = y + 0.5)), "whole numbers",
               class = "sgais_error")
  expect_error(negative_binomial_regression(y ~ x, d, overdispersion_prior = 0),
               "`overdispersion_prior` must be a positive finite number", class = "sgais_error")
  err <- expect_error(negative_binomial_regression(y ~ x, d, prior_sd = -1), "`prior_sd`",
                      class = "sgais_error")
  expect_match(deparse(conditionCall(err))[1], "^negative_binomial_regression")
  expect_error(negative_binomial_regression(y ~ x, d, prior = half_normal_prior()), "`prior`",
               class = "sgais_error_prior")
  bad <- negative_binomial_regression(y ~ x, d)
  bad$hyper$overdispersion_prior <- -1
  expect_error(sgais(bad, progress = FALSE), "overdispersion_prior",
               class = "sgais_error_invalid_model")
})

test_that("SGAIS, AIS and nested sampling agree with a quadrature of the evidence", {
  test_tags("slow")
  # y ~ 1 on 300 counts (helper-negbin.R): two parameters, b and log omega, whose evidence
  # the 2-D midpoint rule gives to 1e-9. Single default runs, seeds 1-8, error mean / sd:
  # SGAIS -0.064 / 0.135, AIS +0.033 / 0.199, nested sampling -0.003 / 0.293. Seed 11 within
  # the mean +/- 4 sd.
  d <- negbin_counts()
  model <- negative_binomial_regression(y ~ 1, d)
  reference <- negbin_quadrature_log_evidence(d$y)
  expect_near_reference(log_evidence(quiet_sgais(model, seed = 11)), reference, -0.064, 0.135)
  expect_near_reference(log_evidence(quietly(ais(model, seed = 11, progress = FALSE))), reference,
                        0.033, 0.199)
  expect_near_reference(log_evidence(quietly(nested_sampling(model, seed = 11, progress = FALSE))),
                        reference, -0.003, 0.293)
})
