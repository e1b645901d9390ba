# Calibrates the tests of the regressions' `prior` and `prior_intercept` (tests/testthat/test-prior.R):
# the error of single default-preset runs of SGAIS, AIS and nested sampling against the exact
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
