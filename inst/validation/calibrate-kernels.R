# Calibration of the tolerances in tests/testthat/test-kernels.R and test-sequential.R: the error
# of log Z against the exact evidence for every kernel and estimator on the tests' model (linear
# regression, n = 1000, 5 covariates, noise sd 1, simulated with seed 3), over calibration seeds
# 1-5. The tests run other seeds. FlyMC, which needs logistic regression, is calibrated on the
# tests' flymc_model() (tests/testthat/helper-glm.R: n = 1000, intercept and one slope) against
# its grid evidence, and on the tests' flymc_softmax_model() (softmax regression, n = 1000, 3
# classes, 9 parameters) against importance sampling (softmax_reference(), same helper file).
# Usage, from the package's root (--only=linear, logistic or softmax runs one section):
#   Rscript inst/validation/calibrate-kernels.R [--seeds=1:5] [--only=softmax]
args <- commandArgs(trailingOnly = TRUE)
seeds <- 1:5
only <- NULL
for (a in args) {
  if (startsWith(a, "--seeds=")) seeds <- eval(parse(text = sub("--seeds=", "", a)))
  if (startsWith(a, "--only=")) only <- sub("--only=", "", a)
}
suppressPackageStartupMessages(library(sgais))
model <- linear_regression(y ~ ., simulate_linear_regression(1000, seed = 3), prior = "paper", noise_sd = 1)
exact <- exact_log_evidence(model)
runs <- list(
  "SGAIS sghmc" = function(s) sgais(model, seed = s, progress = FALSE),
  "SGAIS sgld" = function(s) sgais(model, kernel = "sgld", seed = s, progress = FALSE),
  "SGAIS austerity" = function(s) sgais(model, kernel = "austerity", seed = s, progress = FALSE),
  "SGAIS confidence" = function(s) sgais(model, kernel = "confidence", seed = s, progress = FALSE),
  "AIS sgld" = function(s) ais(model, kernel = "sgld", seed = s, progress = FALSE),
  "AIS sgld euler" = function(s) ais(model, kernel = "sgld", integrator = "euler", seed = s,
                                     progress = FALSE),
  "AIS austerity" = function(s) ais(model, kernel = "austerity", seed = s, progress = FALSE),
  "AIS confidence" = function(s) ais(model, kernel = "confidence", seed = s, progress = FALSE),
  "SIR" = function(s) sir(model, seed = s, progress = FALSE),
  "sequential" = function(s) sequential_sgmcmc(model, hybrid = FALSE, seed = s, progress = FALSE),
  "sequential + NS" = function(s) sequential_sgmcmc(model, seed = s, progress = FALSE)
)
# The error of each run's log Z against `reference` over the seeds: mean, sd, largest.
calibrate <- function(runs, reference) {
  rows <- lapply(names(runs), function(name) {
    err <- vapply(seeds, function(s) suppressWarnings(runs[[name]](s))$log_evidence - reference, 0)
    data.frame(run = name, mean = mean(err), sd = sd(err), max_abs = max(abs(err)),
               errors = paste(sprintf("%+.2f", err), collapse = " "))
  })
  print(do.call(rbind, rows), digits = 3, row.names = FALSE)
}
source("tests/testthat/helper-glm.R", local = TRUE)
# Whether to run the section `name` (all of them without --only).
section <- function(name) is.null(only) || identical(only, name)
if (section("linear")) calibrate(runs, exact)

# FlyMC on logistic regression, against the grid evidence (with SGHMC on the same model)
logistic <- flymc_model()
grid <- flymc_reference(logistic)
runs <- list(
  "AIS flymc" = function(s) ais(logistic, kernel = "flymc", seed = s, progress = FALSE),
  "SGAIS flymc" = function(s) sgais(logistic, kernel = "flymc", seed = s, progress = FALSE),
  "AIS sghmc" = function(s) ais(logistic, seed = s, progress = FALSE),
  "SGAIS sghmc" = function(s) sgais(logistic, seed = s, progress = FALSE)
)
if (section("logistic")) calibrate(runs, grid)

# SIR and the sequential estimators on the same logistic regression (a model without a
# closed-form evidence: checked against the grid, as the issue asks of them off linear
# regression)
runs <- list(
  "SIR logistic" = function(s) sir(logistic, seed = s, progress = FALSE),
  "sequential + NS logistic" = function(s) sequential_sgmcmc(logistic, seed = s, progress = FALSE),
  "SIR austerity logistic" = function(s) sir(logistic, kernel = "austerity", seed = s, progress = FALSE)
)
if (section("logistic")) calibrate(runs, grid)

# FlyMC on softmax regression (Bohning's bound), against importance sampling with 200,000 draws
# (with SGHMC on the same model). Measured: see tests/testthat/test-kernels.R.
if (section("softmax")) {
  softmax <- flymc_softmax_model()
  ref <- softmax_reference(softmax, draws = 2e5)
  cat(sprintf("\nsoftmax reference: importance sampling %.4f (se %.4f, ESS %.0f of 200,000)\n",
              ref[["log_evidence"]], ref[["se"]], ref[["ess"]]))
  runs <- list(
    "AIS flymc softmax" = function(s) ais(softmax, kernel = "flymc", seed = s, progress = FALSE),
    "SGAIS flymc softmax" = function(s) sgais(softmax, kernel = "flymc", seed = s, progress = FALSE),
    "AIS sghmc softmax" = function(s) ais(softmax, seed = s, progress = FALSE),
    "SGAIS sghmc softmax" = function(s) sgais(softmax, seed = s, progress = FALSE)
  )
  calibrate(runs, ref[["log_evidence"]])
}
