# Correlated random slopes at scale (issue 45): linear regression with a random intercept and a
# random slope of x1 per group, correlated,
#   y = 1 + (0.5 + v_g) x1 - 0.3 x2 + u_g + e,  (u_g, v_g) ~ N(0, sds (0.5, 0.3), correlation 0.5),
#   e ~ N(0, 1),
# the rows' groups drawn uniformly, at N = 10^4, 10^5, 10^6 rows in `groups` groups. For each
# size, on one thread:
#   known        (1 + x1 | g), noise sd, group sds and correlation known: SGAIS at its defaults
#                against the exact evidence;
#   correlated   (1 + x1 | g), everything unknown (default priors, the correlation LKJ(1)):
#                SGAIS at its defaults against importance_sampling() (an independent method;
#                no closed form), and
#   independent  (1 + x1 || g), the sds unknown: SGAIS, for the log Bayes factor of the
#                correlation;
# prints the reference, the estimate, its error and predicted SE, and seconds.
# Run with: Rscript inst/bench/random-slopes.R [--max-n=1e6] [--groups=5000] [--seed=1]
#   [--out=file.csv]
# (stored: inst/validation/random-slopes-scale-2026-11-27.{txt,csv})
suppressPackageStartupMessages(library(sgais))
options(width = 150)
opt <- function(name, default) {
  hit <- grep(sprintf("^--%s=", name), commandArgs(TRUE), value = TRUE)
  if (length(hit)) sub(sprintf("^--%s=", name), "", hit[1]) else default
}
sizes <- c(1e4, 1e5, 1e6)
sizes <- sizes[sizes <= as.numeric(opt("max-n", "1e6"))]
groups <- as.integer(opt("groups", "5000"))
seed <- as.integer(opt("seed", "1"))
out <- opt("out", "")
sgais_threads(1)
cat(sprintf("sgais %s, %s, one thread, %s\n\n", utils::packageVersion("sgais"), R.version.string,
            format(Sys.time(), "%F %H:%M")))

rho <- 0.5
simulate <- function(n, G, seed) {
  withr::with_seed(seed, {
    g <- sample.int(G, n, replace = TRUE)
    x1 <- stats::rnorm(n)
    x2 <- stats::rnorm(n)
    b <- matrix(stats::rnorm(2 * G), G) %*% chol(matrix(c(1, rho, rho, 1), 2)) %*% diag(c(0.5, 0.3))
    data.frame(y = 1 + (0.5 + b[g, 2]) * x1 - 0.3 * x2 + b[g, 1] + stats::rnorm(n), x1 = x1,
               x2 = x2, g = sprintf("g%04d", g))
  })
}
timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- expr
  list(value = value, seconds = proc.time()[["elapsed"]] - t0)
}

data <- simulate(max(sizes), groups, seed = 46)
rows <- list()
for (n in sizes) {
  d <- data[seq_len(n), ]
  models <- list(
    known = linear_regression(y ~ x1 + x2 + (1 + x1 | g), d, noise_sd = 1, group_sd = c(0.5, 0.3),
                              group_cor = matrix(c(1, rho, rho, 1), 2)),
    correlated = linear_regression(y ~ x1 + x2 + (1 + x1 | g), d, noise_sd = NULL),
    independent = linear_regression(y ~ x1 + x2 + (1 + x1 || g), d, noise_sd = NULL)
  )
  for (name in names(models)) {
    m <- models[[name]]
    ref <- switch(name,
      known = timed(list(log_evidence = exact_log_evidence(m), se = 0, how = "exact")),
      correlated = timed({
        is <- importance_sampling(m, draws = 2000, seed = seed, progress = FALSE)
        list(log_evidence = is$log_evidence, se = is$log_evidence_se,
             how = "importance_sampling(draws = 2000)")
      }),
      independent = list(value = list(log_evidence = NA_real_, se = NA_real_, how = "none"),
                         seconds = NA_real_))
    fit <- timed(sgais(m, seed = seed, progress = FALSE))
    row <- data.frame(
      groups = groups, n = n, model = name, seed = seed, reference = ref$value$log_evidence,
      reference_se = ref$value$se, reference_how = ref$value$how,
      reference_seconds = ref$seconds, estimate = fit$value$log_evidence,
      error = fit$value$log_evidence - ref$value$log_evidence,
      predicted_se = fit$value$diagnostics$predicted_sd[1], seconds = fit$seconds
    )
    cat(sprintf("G = %5d  N = %7g  %-11s: reference %14.3f (SE %.3f, %5.1f s), SGAIS %14.3f, error %+7.3f (SE %.2f), %6.1f s\n",
                groups, n, name, row$reference, row$reference_se, row$reference_seconds,
                row$estimate, row$error, row$predicted_se, row$seconds))
    rows[[length(rows) + 1L]] <- row
  }
}
res <- do.call(rbind, rows)
cat("\nLog Bayes factor of correlated over independent effects (SGAIS):\n")
for (n in sizes) {
  e <- res[res$n == n, ]
  cat(sprintf("  N = %7g: %+.2f\n", n, e$estimate[e$model == "correlated"] -
                e$estimate[e$model == "independent"]))
}
if (nzchar(out)) utils::write.csv(res, out, row.names = FALSE)
