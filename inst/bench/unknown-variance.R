# SGAIS with its default settings on the two models with an unknown noise scale:
# - linear_regression(noise_sd = NULL) (normal-inverse-gamma prior, defaults prior_sd = 1,
#   variance_shape = variance_scale = 1) on a simulated regression with 5 covariates and noise
#   sd 0.5, against its exact evidence at N = 10^5 and 10^6;
# - robust_regression() (defaults df = 4, prior_sd = 1, scale_prior = 1) at N = 10^5 on the same
#   covariates and coefficients with Student-t (df 4) noise of scale 0.5, against ais() with its
#   default settings (no closed form; AIS uses the full data at every step, about 2 minutes here).
# Prints N, the reference log Z, SGAIS's log Z, the error in nats, the relative error and the
# seconds of each run.
# Run with: Rscript inst/bench/unknown-variance.R [max_n] [seeds]   (from an installed sgais)
#   e.g. Rscript inst/bench/unknown-variance.R 1e6 1,2
suppressPackageStartupMessages(library(sgais))
options(width = 120)

args <- commandArgs(trailingOnly = TRUE)
max_n <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
seeds <- if (length(args) >= 2) as.integer(strsplit(args[2], ",")[[1]]) else 1L
sizes <- c(1e5, 1e6)
sizes <- sizes[sizes <= max_n]

cat(sprintf("sgais %s, %s, single-threaded\n", utils::packageVersion("sgais"), R.version.string))
data <- simulate_linear_regression(max(sizes), dim = 5, noise_sd = 0.5, seed = 2019)

# One row of the table, also printed as it comes.
row <- function(model, n, reference, reference_seconds, fit, seed) {
  out <- data.frame(
    model = model, n = n, seed = seed, reference = reference,
    reference_seconds = reference_seconds, sgais = log_evidence(fit),
    error = log_evidence(fit) - reference,
    relative_error = (log_evidence(fit) - reference) / abs(reference),
    seconds = fit$seconds
  )
  cat(sprintf("%s, N = %g, seed %d: error %.3f nats in %.1f s\n", model, n, seed, out$error,
              out$seconds))
  out
}

rows <- list()
for (n in sizes) {
  model <- linear_regression(y ~ ., data[seq_len(n), ], noise_sd = NULL, prior = "paper")
  t0 <- proc.time()[["elapsed"]]
  exact <- exact_log_evidence(model)
  exact_seconds <- proc.time()[["elapsed"]] - t0
  for (seed in seeds) {
    fit <- sgais(model, seed = seed, progress = FALSE)
    rows[[length(rows) + 1L]] <- row("linear NIG (exact)", n, exact, exact_seconds, fit, seed)
  }
}

# robust regression: the same design and coefficients, t_4 noise of scale 0.5
n <- 1e5
theta <- attr(data, "parameters")
x <- as.matrix(data[seq_len(n), 1:5])
set.seed(2020)
noise <- 0.5 * stats::rt(n, df = 4)
model <- robust_regression(x = x, y = theta[1] + drop(x %*% theta[-1]) + noise, prior = "paper")
reference <- ais(model, seed = 1, progress = FALSE)
for (seed in seeds) {
  fit <- sgais(model, seed = seed, progress = FALSE)
  rows[[length(rows) + 1L]] <- row("robust t4 (AIS seed 1)", n, log_evidence(reference),
                                   reference$seconds, fit, seed)
}

cat("\n")
res <- do.call(rbind, rows)
res$n <- format(res$n, scientific = TRUE)
res$reference <- sprintf("%.2f", res$reference)
res$sgais <- sprintf("%.2f", res$sgais)
res$error <- sprintf("%.3f", res$error)
res$relative_error <- sprintf("%.2e", res$relative_error)
res$reference_seconds <- sprintf("%.2f", res$reference_seconds)
res$seconds <- sprintf("%.2f", res$seconds)
print(res, row.names = FALSE)
