# SGAIS against the reference methods (AIS and nested sampling on the full data) on the paper's
# linear regression, with the paper's settings for each (Section 6.1), in one run:
# log Z, error against the exact evidence, wall seconds, per-observation gradient and likelihood
# evaluations, and the SGAIS speed-ups over NS and AIS (the paper at N = 10^6: 3.3x over NS and
# 24.9x over AIS).
#
# Usage (from the installed package):
#   Rscript -e 'source(system.file("bench", "reference-methods.R", package = "sgais"))'
#   Rscript inst/bench/reference-methods.R 1e3 1e4 1e5     # sizes on the command line
# Set SGAIS_BENCH_NS_1E6=true to add nested sampling alone at N = 10^6.
suppressPackageStartupMessages(library(sgais))
options(width = 200)

sizes <- as.numeric(commandArgs(trailingOnly = TRUE))
if (length(sizes) == 0 || anyNA(sizes)) sizes <- c(1e3, 1e4, 1e5)
seed <- 1

run_one <- function(method, fun, model, exact) {
  fit <- fun(model)
  data.frame(
    n = model$n, method = method, log_z = fit$log_evidence, exact = exact,
    error = fit$log_evidence - exact, rel_error = (fit$log_evidence - exact) / abs(exact),
    seconds = fit$seconds, gradient_evals = fit$gradient_evaluations,
    likelihood_evals = fit$likelihood_evaluations
  )
}

methods <- list(
  SGAIS = function(model) sgais(model, seed = seed, progress = FALSE),
  AIS = function(model) ais(model, seed = seed, progress = FALSE),
  NS = function(model) nested_sampling(model, seed = seed, progress = FALSE),
  SGAIS_paper = function(model) sgais(model, control = sgais_control("paper"), seed = seed, progress = FALSE),
  AIS_paper = function(model) ais(model, control = ais_control("paper"), seed = seed, progress = FALSE),
  NS_paper = function(model) nested_sampling(model, control = nested_control("paper"), seed = seed, progress = FALSE),
  # The paper's NS step (learning_rate 1e-3) is far wider than the posterior once n is large, so
  # nearly every constrained step is reflected, new points barely move and the run stops early
  # with log Z overestimated (+20 to +29 nats here). Scaling the step to the posterior width,
  # with more live points and steps (the setting of the tests at N = 2,000, lr = 2e-5), reduces
  # the bias (+2 nats on average at N = 2,000) but does not remove it at larger n.
  NS_scaled = function(model) {
    nested_sampling(model, control = nested_control("paper"), live_points = 20, sghmc_steps = 200,
                    learning_rate = 0.04 / model$n, seed = seed, progress = FALSE)
  }
)

rows <- list()
for (n in sizes) {
  model <- linear_regression(y ~ ., simulate_linear_regression(n, seed = seed), prior = "paper", noise_sd = 1)
  exact <- exact_log_evidence(model)
  for (m in names(methods)) {
    r <- run_one(m, methods[[m]], model, exact)
    message(sprintf("n = %g  %-9s log Z %.2f  error %+.2f  %.2f s", n, m, r$log_z, r$error, r$seconds))
    rows[[length(rows) + 1L]] <- r
  }
}
if (identical(Sys.getenv("SGAIS_BENCH_NS_1E6"), "true")) {
  model <- linear_regression(y ~ ., simulate_linear_regression(1e6, seed = seed), prior = "paper", noise_sd = 1)
  exact <- exact_log_evidence(model)
  for (m in c("SGAIS", "NS")) rows[[length(rows) + 1L]] <- run_one(m, methods[[m]], model, exact)
}
table <- do.call(rbind, rows)

cat("\nReference methods on linear regression (paper settings, seed", seed, ")\n\n")
print(table, digits = 6, row.names = FALSE)

cat("\nTime ratios (speed-up of SGAIS):\n")
ratios <- do.call(rbind, lapply(split(table, table$n), function(t) {
  s <- t$seconds[t$method == "SGAIS"]
  get <- function(m) if (any(t$method == m)) t$seconds[t$method == m] / s else NA_real_
  data.frame(n = t$n[1], NS_over_SGAIS = get("NS"), NS_scaled_over_SGAIS = get("NS_scaled"),
             AIS_over_SGAIS = get("AIS"))
}))
print(ratios, digits = 4, row.names = FALSE)
