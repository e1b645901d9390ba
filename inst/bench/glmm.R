# Random-intercept logistic regression (logistic_regression(y ~ x1 + x2 + (1 | g))) at 10^4,
# 10^5 and 10^6 rows in 50 and 5,000 groups: importance_sampling() and sgais() at their defaults
# on one thread (seeds 1 and 2) against a reference, with the seconds of each. The data and
# priors are those of inst/validation/glmm-data.R (prior = "paper": coefficients N(0, 2.5^2),
# group sd half-normal(1)). The reference is importance_sampling() with 2,000 draws (seed 99):
# the model's own quadrature over each group's effect (15 nodes, checked against integrate() in
# tests/testthat/test-glm_mixed.R), importance sampling over the rest; it agrees with Stan +
# bridgesampling to 0.02 nats at 10^4 rows (inst/validation/glmm-references.csv,
# glmm-brms-2026-11-27.txt), and SGAIS, whose annealing and moves share nothing with it but the
# quadrature, is the check at 10^5 and 10^6. A run longer than the limit is stopped.
#   Rscript inst/bench/glmm.R [max rows] [seconds per run, at most] [out.csv]
# (defaults 1e6, 400, no CSV; about 40 minutes at 10^6)
suppressPackageStartupMessages(library(sgais))
args <- commandArgs(trailingOnly = TRUE)
max_rows <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
limit <- if (length(args) >= 2) as.numeric(args[2]) else 400
out_csv <- if (length(args) >= 3) args[3] else ""
here <- local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) == 1L) dirname(normalizePath(file)) else file.path("inst", "bench")
})
source(file.path(here, "..", "validation", "glmm-data.R"))
sgais_threads(1)
cat(sprintf("sgais %s, %s, one thread, %s\n\n", utils::packageVersion("sgais"), R.version.string,
            format(Sys.time(), "%F %H:%M")))

rows <- c(1e4, 1e5, 1e6)
rows <- rows[rows <= max_rows]
out <- list()
for (n in rows) for (G in c(50L, 5000L)) {
  d <- glmm_data("logistic", n, G, seed = 45)
  model <- logistic_regression(y ~ x1 + x2 + (1 | g), d, prior = "paper", prior_sd = 2.5)
  t_ref <- system.time(ref <- importance_sampling(model, draws = 2000, seed = 99,
                                                   progress = FALSE))[["elapsed"]]
  for (est in c("importance_sampling", "sgais")) for (seed in 1:2) {
    setTimeLimit(elapsed = limit, transient = TRUE)
    t0 <- proc.time()[["elapsed"]]
    fit <- tryCatch(get(est)(model, seed = seed, progress = FALSE), error = function(e) NULL)
    setTimeLimit(elapsed = Inf)
    secs <- proc.time()[["elapsed"]] - t0
    est_z <- if (is.null(fit)) NA else log_evidence(fit)
    se <- if (is.null(fit)) NA else fit$log_evidence_se
    cat(sprintf(paste("G = %4d  N = %7g  %-19s seed %d: reference %14.3f (SE %.3f, %5.1f s),",
                      "estimate %14.3f, error %+7.3f (SE %.2f), %6.1f s%s\n"), G, n, est, seed,
                ref$log_evidence, ref$log_evidence_se, t_ref, est_z, est_z - ref$log_evidence,
                se, secs, if (is.null(fit)) sprintf("  (stopped at the %g s limit)", limit) else ""))
    out[[length(out) + 1L]] <- data.frame(groups = G, rows = n, estimator = est, seed = seed,
                                          reference = ref$log_evidence,
                                          reference_se = ref$log_evidence_se, estimate = est_z,
                                          se = se, error = est_z - ref$log_evidence,
                                          seconds = secs, reference_seconds = t_ref)
  }
}
res <- do.call(rbind, out)
if (nzchar(out_csv)) utils::write.csv(res, out_csv, row.names = FALSE)
