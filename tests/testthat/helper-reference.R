# Linear-regression models with a closed-form evidence, shared by the reference-method tests
# (built once per size and seed).
reference_models <- new.env(parent = emptyenv())

reference_model <- function(n, seed = 1) {
  key <- paste(n, seed)
  if (is.null(reference_models[[key]])) {
    data <- simulate_linear_regression(n, seed = seed)
    reference_models[[key]] <- linear_regression(y ~ ., data)
  }
  reference_models[[key]]
}

# A fit without its timings (which differ between otherwise identical runs).
without_timing <- function(fit) {
  fit$seconds <- NULL
  fit$call <- NULL
  for (part in c("schedule", "trace", "trajectory")) {
    if (!is.null(fit[[part]])) fit[[part]]$seconds <- NULL
  }
  fit
}

# Evaluate `code` with R's RNG seeded (as the estimators' `seed` argument does).
withr_seed <- function(seed, code) {
  sgais:::with_seed(seed, code)
}
