# Random intercepts at scale (issue 45): linear regression with a random intercept per group,
# y = 1 + 0.5 x1 - 0.3 x2 + u_g + e, u_g ~ N(0, 0.5^2), e ~ N(0, 1), the rows' groups drawn
# uniformly, at N = 10^4, 10^5, 10^6 rows and 50 and 5,000 groups. For each size, SGAIS at its
# defaults (one thread) on
#   known  the model with both sds known (noise_sd = 1, group_sd = 0.5): exact reference;
#   sds    both sds unknown (the default priors): reference by quadrature over the sds
#          (exact_log_evidence(), the coefficients in closed form);
#   fixed  the same regression without the random intercept (unknown noise): exact reference;
# and prints the reference, the estimate, its error and predicted SE, seconds, and the log
# Bayes factor of the random intercept (sds) over none (fixed), estimated and exact.
# Run with: Rscript inst/bench/random-effects.R [max_n] [groups] [seeds] [out.csv]
#   e.g. Rscript inst/bench/random-effects.R 1e6 50,5000 1,2 random-effects.csv
# (stored: inst/validation/random-effects-scale-2026-11-27.{txt,csv}, seeds 1 and 2; brms +
# bridgesampling on the same model: inst/bench/random-effects-brms.R)
suppressPackageStartupMessages(library(sgais))
options(width = 150)
args <- commandArgs(trailingOnly = TRUE)
max_n <- if (length(args) >= 1) as.numeric(args[1]) else 1e6
groups <- if (length(args) >= 2) as.integer(strsplit(args[2], ",")[[1]]) else c(50L, 5000L)
seeds <- if (length(args) >= 3) as.integer(strsplit(args[3], ",")[[1]]) else 1L
out <- if (length(args) >= 4) args[4] else NULL
sizes <- c(1e4, 1e5, 1e6)
sizes <- sizes[sizes <= max_n]
sgais_threads(1)

cat(sprintf("sgais %s, %s, one thread, %s\n\n", utils::packageVersion("sgais"), R.version.string,
            format(Sys.time(), "%F %H:%M")))

simulate <- function(n, G, seed) {
  withr::with_seed(seed, {
    g <- sample.int(G, n, replace = TRUE)
    x1 <- stats::rnorm(n)
    x2 <- stats::rnorm(n)
    u <- stats::rnorm(G, 0, 0.5)
    data.frame(y = 1 + 0.5 * x1 - 0.3 * x2 + u[g] + stats::rnorm(n), x1 = x1, x2 = x2,
               g = sprintf("g%04d", g))
  })
}

timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- expr
  list(value = value, seconds = proc.time()[["elapsed"]] - t0)
}

rows <- list()
for (G in groups) {
  data <- simulate(max(sizes), G, seed = 45)
  for (n in sizes) {
    d <- data[seq_len(n), ]
    models <- list(
      known = linear_regression(y ~ x1 + x2 + (1 | g), d, noise_sd = 1, group_sd = 0.5),
      sds = linear_regression(y ~ x1 + x2 + (1 | g), d, noise_sd = NULL),
      fixed = linear_regression(y ~ x1 + x2, d, noise_sd = NULL)
    )
    for (name in names(models)) {
      ref <- timed(exact_log_evidence(models[[name]]))
      for (seed in seeds) {
        fit <- timed(sgais(models[[name]], seed = seed, progress = FALSE))
        row <- data.frame(
          groups = G, n = n, model = name, seed = seed, reference = ref$value,
          reference_seconds = ref$seconds, estimate = fit$value$log_evidence,
          error = fit$value$log_evidence - ref$value,
          predicted_se = fit$value$diagnostics$predicted_sd[1], seconds = fit$seconds
        )
        cat(sprintf("G = %5d  N = %7g  %-5s seed %d: reference %14.3f (%5.1f s), estimate %14.3f, error %+7.3f (SE %.2f), %6.1f s\n",
                    G, n, name, seed, row$reference, row$reference_seconds, row$estimate,
                    row$error, row$predicted_se, row$seconds))
        rows[[length(rows) + 1L]] <- row
      }
    }
  }
}
res <- do.call(rbind, rows)
cat("\nLog Bayes factor of the random intercept (unknown sds) over none:\n")
bf <- merge(res[res$model == "sds", c("groups", "n", "seed", "reference", "estimate")],
            res[res$model == "fixed", c("groups", "n", "seed", "reference", "estimate")],
            by = c("groups", "n", "seed"), suffixes = c("_sds", "_fixed"))
bf$log_bf_exact <- bf$reference_sds - bf$reference_fixed
bf$log_bf_estimate <- bf$estimate_sds - bf$estimate_fixed
print(bf[, c("groups", "n", "seed", "log_bf_exact", "log_bf_estimate")], row.names = FALSE)
cat(sprintf("\nlargest |error| %.3f nats; largest |error| / max(1, predicted SE) %.2f\n",
            max(abs(res$error)), max(abs(res$error) / pmax(1, res$predicted_se))))
if (!is.null(out)) utils::write.csv(res, out, row.names = FALSE)
