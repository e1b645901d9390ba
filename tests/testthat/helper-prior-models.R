# The regression with priors of its own of test-prior.R (and of its calibration, inst/design.md,
# "Experiments behind decisions"): 400 observations of the paper's model with 3 covariates and
# noise sd 0.8, normal priors with a mean and sd per coefficient, the intercept's away from zero;
# `noise_sd = NULL` for the unknown-variance model (sds then in units of sigma).
prior_test_model <- function(noise_sd = 0.8, ...) {
  data <- simulate_linear_regression(400, dim = 3, noise_sd = 0.8, seed = 5)
  linear_regression(y ~ ., data, noise_sd = noise_sd,
                    prior = normal_prior(mean = c(0.5, -0.5, 0), sd = c(2, 0.5, 1)),
                    prior_intercept = normal_prior(1, 3), ...)
}
