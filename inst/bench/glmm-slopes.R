# Random slopes in a GLM at scale (issue 45): logistic regression with a random intercept and a
# random slope of x1 per group, correlated (glmm-data.R's glmm_slopes_data(): sds 0.6 and 0.4,
# correlation 0.5; glmm_slopes_model(): prior = "paper", group sds half-normal(1), LKJ(2)), at
# 10^4 and 10^5 rows in 50 and 5,000 groups, one thread: importance_sampling() at its defaults
# (500 draws) against importance_sampling() with 4,000 draws as the reference, and sgais() at
# its defaults where it takes under --max-seconds (default 400; stopped runs print NA).
# Prints seconds and errors; the same model's random intercept alone is timed alongside, the
# cost of the second effect.
#   Rscript inst/bench/glmm-slopes.R [--max-n=1e5] [--seed=1] [--max-seconds=400] [--out=file.csv]
# (stored: inst/validation/glmm-slopes-scale-2026-11-27.{txt,csv})
suppressPackageStartupMessages(library(sgais))
options(width = 150)
opt <- function(name, default) {
  hit <- grep(sprintf("^--%s=", name), commandArgs(TRUE), value = TRUE)
  if (length(hit)) sub(sprintf("^--%s=", name), "", hit[1]) else default
}
here <- local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file) == 1L) dirname(normalizePath(file)) else file.path("inst", "bench")
})
source(file.path(here, "..", "validation", "glmm-data.R"))
sizes <- c(1e4, 1e5)
sizes <- sizes[sizes <= as.numeric(opt("max-n", "1e5"))]
seed <- as.integer(opt("seed", "1"))
max_seconds <- as.numeric(opt("max-seconds", "400"))
out <- opt("out", "")
sgais_threads(1)
cat(sprintf("sgais %s, %s, one thread, %s\n\n", utils::packageVersion("sgais"), R.version.string,
            format(Sys.time(), "%F %H:%M")))
timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- tryCatch(expr, error = function(e) NULL)
  list(value = value, seconds = proc.time()[["elapsed"]] - t0)
}
limited <- function(expr) {
  setTimeLimit(elapsed = max_seconds, transient = TRUE)
  on.exit(setTimeLimit(elapsed = Inf))
  expr
}
rows <- list()
for (groups in c(50L, 5000L)) {
  for (n in sizes) {
    d <- glmm_slopes_data("logistic", n, groups, seed = 46)
    models <- list(
      slopes = glmm_slopes_model("logistic", d),
      intercept = logistic_regression(y ~ x1 + x2 + (1 | g), d, prior = "paper",
                                      prior_sd = glmm_prior_sd, group_sd = half_normal_prior(1))
    )
    for (name in names(models)) {
      m <- models[[name]]
      ref <- timed(suppressWarnings(importance_sampling(m, draws = 4000, seed = seed + 100L,
                                                        progress = FALSE)))
      fits <- list(
        importance_sampling = timed(suppressWarnings(importance_sampling(m, seed = seed,
                                                                         progress = FALSE))),
        sgais = timed(suppressWarnings(limited(sgais(m, seed = seed, progress = FALSE))))
      )
      for (est in names(fits)) {
        f <- fits[[est]]
        estimate <- if (is.null(f$value)) NA_real_ else f$value$log_evidence
        se <- if (is.null(f$value)) NA_real_ else f$value$log_evidence_se
        row <- data.frame(groups = groups, rows = n, model = name, estimator = est, seed = seed,
                          reference = ref$value$log_evidence, reference_se = ref$value$log_evidence_se,
                          reference_seconds = ref$seconds, estimate = estimate,
                          error = estimate - ref$value$log_evidence, se = se, seconds = f$seconds)
        cat(sprintf("G = %4d  N = %6g  %-9s %-19s: reference %12.3f (SE %.3f, %5.1f s), estimate %12.3f, error %+7.3f (SE %.3f), %6.1f s\n",
                    groups, n, name, est, row$reference, row$reference_se, row$reference_seconds,
                    row$estimate, row$error, row$se, row$seconds))
        rows[[length(rows) + 1L]] <- row
      }
    }
  }
}
res <- do.call(rbind, rows)
if (nzchar(out)) utils::write.csv(res, out, row.names = FALSE)
