# Nested sampling on a mixture whose clusters overlap, against n: `nested_sampling()` with 20
# live points on `simulate_gaussian_mixture(n, seed = 4)` (5 components in 2 dimensions, two
# of them large and overlapping) fitted with 3 components (14 parameters), robust preset,
# single-threaded. For each n: NS CPU seconds, iterations, likelihood evaluations per iteration
# (full-data passes: walk proposals and jumps), the estimate and its SE, and AIS's and SGAIS's
# estimates on the same model, at their defaults (from the reference where the model has one)
# and AIS from the prior; the last column is NS's seconds per observation relative to the
# smallest n (1: cost linear in n). Read the seconds as ratios on a busy machine.
#
# Usage (from the installed package; the result file is overwritten):
#   Rscript inst/bench/ns-mixture.R                          # n = 200 ... 10,000
#   Rscript inst/bench/ns-mixture.R --sizes 200,500,1000     # some sizes only
#   Rscript inst/bench/ns-mixture.R --limit 600 --out f.txt  # CPU-second cap per NS run, file
suppressPackageStartupMessages(library(sgais))
options(width = 200)

# "--name value" pairs over the defaults
given <- commandArgs(trailingOnly = TRUE)
opts <- list(sizes = "200,500,1000,2000,5000,10000", limit = "Inf",
             out = file.path("inst", "bench", "ns-mixture.txt"))
opts[sub("^--", "", given[c(TRUE, FALSE)])] <- given[c(FALSE, TRUE)]
sizes <- as.integer(strsplit(opts$sizes, ",")[[1]])
limit <- as.numeric(opts$limit)
out <- opts$out
sgais_threads(1)

quiet <- function(code) withCallingHandlers(code, warning = function(w) invokeRestart("muffleWarning"))
cpu <- function(code) {
  t <- system.time(value <- code)
  list(value = value, seconds = unname(t[["user.self"]] + t[["sys.self"]]))
}

rows <- list()
for (n in sizes) {
  model <- gaussian_mixture(simulate_gaussian_mixture(n, seed = 4), components = 3)
  ns <- tryCatch({
    setTimeLimit(cpu = limit, transient = TRUE)
    on.exit(setTimeLimit(cpu = Inf), add = TRUE)
    cpu(quiet(nested_sampling(model, live_points = 20, seed = 1, progress = FALSE)))
  }, error = function(e) NULL)
  setTimeLimit(cpu = Inf)
  ais_ref <- cpu(quiet(ais(model, seed = 1, progress = FALSE)))$value
  ais_prior <- cpu(quiet(ais(model, reference = FALSE, seed = 1, progress = FALSE)))$value
  sg <- cpu(quiet(sgais(model, seed = 1, progress = FALSE)))$value
  f <- ns$value
  rows[[length(rows) + 1L]] <- data.frame(
    n = n, reference = sgais:::model_reference_level(model),
    ns_seconds = if (is.null(f)) NA else round(ns$seconds, 1),
    iterations = if (is.null(f)) NA else f$iterations,
    evals_per_iteration = if (is.null(f)) NA else
      round(f$likelihood_evaluations / n / f$iterations),
    ns = if (is.null(f)) NA else round(f$log_evidence, 2),
    ns_se = if (is.null(f)) NA else round(f$log_evidence_se, 2),
    ais = round(ais_ref$log_evidence, 2), ais_prior = round(ais_prior$log_evidence, 2),
    sgais = round(sg$log_evidence, 2)
  )
  cat(sprintf("n = %d done\n", n))
}
res <- do.call(rbind, rows)
res$ns_minus_ais_prior <- round(res$ns - res$ais_prior, 2)
res$cost_ratio_per_n <- round((res$ns_seconds / res$n) / (res$ns_seconds[1] / res$n[1]), 2)
lines <- c(
  sprintf("sgais %s, %s, single-threaded; NS capped at %s CPU s (NA: not finished)",
          utils::packageVersion("sgais"), R.version.string, format(limit)),
  utils::capture.output(print(res, row.names = FALSE))
)
writeLines(lines, out)
writeLines(lines)
