# Online nested sampling (thesis Section 4.3) against plain nested sampling on the same data, in
# one run: the paper's linear regression (6 parameters, noise sd 1) at N = 2,000 and 10,000, and
# a harder one (10 covariates, 11 parameters, noise sd 0.2) at N = 2,000. For each: the final
# error against the exact evidence, the largest |error| at the chunk ends (online) , wall
# seconds, and per-observation likelihood and gradient evaluations; online with both moves
# (`walk`, exact on the chunk's prior; `sghmc`, the thesis's mini-batch SGHMC reflected off the
# contour), 10 chunks, robust preset (100 live points), single-threaded.
#
# Usage (from the installed package):
#   Rscript inst/bench/online-ns.R                 # every setting, seed 1
#   Rscript inst/bench/online-ns.R --seeds 1,2,3   # more seeds (one row per seed)
#   Rscript inst/bench/online-ns.R --settings 1,3  # some settings only (1-3, as listed above)
suppressPackageStartupMessages(library(sgais))
options(width = 200)

args <- commandArgs(trailingOnly = TRUE)
option <- function(name, default) {
  at <- match(name, args)
  if (is.na(at) || at == length(args)) return(default)
  as.integer(strsplit(args[at + 1L], ",")[[1]])
}
seeds <- option("--seeds", 1L)
chosen <- option("--settings", 1:3)
sgais_threads(1)
cat(sprintf("sgais %s, %s, single-threaded\n", utils::packageVersion("sgais"), R.version.string))

settings <- list(
  list(label = "N = 2,000, 6 parameters, noise sd 1", n = 2000, dim = 5, noise_sd = 1),
  list(label = "N = 10,000, 6 parameters, noise sd 1", n = 10000, dim = 5, noise_sd = 1),
  list(label = "N = 2,000, 11 parameters, noise sd 0.2", n = 2000, dim = 10, noise_sd = 0.2)
)[chosen]

quiet <- function(code) withCallingHandlers(code, warning = function(w) invokeRestart("muffleWarning"))

methods <- list(
  "NS" = function(model, seed) nested_sampling(model, seed = seed, progress = FALSE),
  "online NS, walk" = function(model, seed) {
    online_nested_sampling(model, chunk_size = model$n / 10, seed = seed, progress = FALSE)
  },
  "online NS, sghmc" = function(model, seed) {
    online_nested_sampling(model, chunk_size = model$n / 10, move = "sghmc", seed = seed,
                           progress = FALSE)
  }
)

rows <- list()
for (s in settings) {
  data <- simulate_linear_regression(s$n, dim = s$dim, noise_sd = s$noise_sd, seed = 2019)
  model <- linear_regression(y ~ ., data, noise_sd = s$noise_sd, prior = "paper")
  for (seed in seeds) {
    for (m in names(methods)) {
      fit <- quiet(methods[[m]](model, seed))
      exact <- exact_log_evidence(model)
      tr <- fit$trajectory
      along <- if (is.null(tr)) NA_real_ else
        max(abs(tr$log_evidence - exact_log_evidence(model, n = tr$n)))
      rows[[length(rows) + 1L]] <- data.frame(
        setting = s$label, method = m, seed = seed, log_z = fit$log_evidence,
        error = fit$log_evidence - exact, max_abs_error_chunks = along,
        sd_predicted = fit$log_evidence_sd, seconds = fit$seconds,
        iterations = fit$iterations, likelihood_evals = fit$likelihood_evaluations,
        gradient_evals = fit$gradient_evaluations, check.names = FALSE
      )
      print(rows[[length(rows)]], row.names = FALSE, digits = 6)
    }
  }
}
cat("\n")
out <- do.call(rbind, rows)
print(out, row.names = FALSE, digits = 4)
