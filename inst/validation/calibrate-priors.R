# Calibrates the tests of the regressions' `prior` and `prior_intercept` (tests/testthat/test-prior.R)
# and of prior_sensitivity() (test-prior_sensitivity.R, at the end): the error of single
# default-preset runs of SGAIS, AIS and nested sampling against the exact
# evidence, over seeds 1-8, on the tests' models: a linear regression with per-coefficient normal
# priors away from zero, known noise and unknown variance (normal-inverse-gamma). The tests take
# seed 11 and accept the calibrated mean error +/- 4 sd.
#
#   Rscript inst/validation/calibrate-priors.R        (from the package root, sgais installed;
#                                                      about 1 minute on 2 cores)
suppressMessages(library(sgais))
source("tests/testthat/helper-prior-models.R")
models <- list(known = prior_test_model(), nig = prior_test_model(noise_sd = NULL))
runs <- list(
  sgais = function(m, s) sgais(m, seed = s, progress = FALSE),
  ais = function(m, s) ais(m, seed = s, progress = FALSE),
  ns = function(m, s) nested_sampling(m, seed = s, progress = FALSE)
)
for (name in names(models)) {
  model <- models[[name]]
  exact <- exact_log_evidence(model)
  for (method in names(runs)) {
    err <- vapply(1:8, function(s) {
      suppressWarnings(log_evidence(runs[[method]](model, s))) - exact
    }, numeric(1))
    cat(sprintf("%-5s %-5s exact %10.4f  error mean %+.3f  sd %.3f  (min %+.3f, max %+.3f)\n",
                name, method, exact, mean(err), stats::sd(err), min(err), max(err)))
  }
}

# prior_sensitivity() (tests/testthat/test-prior_sensitivity.R): the change in log evidence when
# the prior sd of the paper's linear regression (500 observations, 3 covariates) is doubled or
# halved, by reweighting SGAIS's particles (4 replicates), against the exact change; seeds 1-8.
data <- simulate_linear_regression(500, dim = 3, seed = 9)
model <- linear_regression(y ~ ., data, prior = "paper", noise_sd = 1)
exact <- vapply(c(0.5, 1, 2), function(k) {
  exact_log_evidence(linear_regression(y ~ ., data, prior_sd = k, noise_sd = 1))
}, numeric(1))
err <- t(vapply(1:8, function(s) {
  fit <- suppressWarnings(sgais(model, replicates = 4, seed = s, progress = FALSE))
  sens <- prior_sensitivity(fit)
  (sens$change - (exact - exact[2]))[c(1, 3)]
}, numeric(2)))
cat(sprintf("sensitivity scale %-3s  change error mean %+.4f  sd %.4f  (min %+.4f, max %+.4f)\n",
            c("0.5", "2"), colMeans(err), apply(err, 2, stats::sd), apply(err, 2, min),
            apply(err, 2, max)), sep = "")
