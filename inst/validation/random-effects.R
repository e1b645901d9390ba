# Issue 45's accuracy target for random effects in linear regression: every estimator at its
# defaults (sgais, ais, nested_sampling, online_nested_sampling, sir, sequential_sgmcmc,
# importance_sampling) within max(3 nats, 3 SE) of the reference, on held-out simulated data
# (seeds not used in the tests):
#   intercept_known   (1 | g), noise and group sds known: exact
#   intercept_sds     (1 | g), both sds unknown (default priors): exact given the sds, by
#                     quadrature over them
#   slopes_known      (1 + x || g), sds known: exact
#   slopes_cor_known  (1 + x | g), sds and correlation (0.5) known: exact
#   slopes_cor_lkj    (1 + x | g), sds known, correlation LKJ(2): exact given the correlation,
#                     by quadrature over it (integrate() against the Beta(2, 2) prior of
#                     (rho + 1) / 2)
#   slopes_cor        (1 + x | g), everything unknown (random_effects_cor_model()): Stan +
#                     bridgesampling, stored in random-effects-cor-references.csv (bound
#                     max(3, 3 SE) with the SE of the estimate and the reference's combined)
# with 4,000 rows in 40 groups (random-effects-data.R: y = 1 + 0.5 x1 - 0.3 x2 + u_g + v_g x1
# + e, u_g ~ N(0, 0.7^2), v_g ~ N(0, 0.3^2), e ~ N(0, 0.5^2); u_g and v_g independent, and
# correlated 0.5 for the slopes_cor cases). The SE is each fit's own (a replicate SE with
# --replicates > 1). Prints one row per case, estimator and seed, and the count that pass.
#   Rscript inst/validation/random-effects.R [--seeds=101,102] [--replicates=1] [--out=file.csv]
# The rows go to random-effects.csv (or --out), replacing the stored rows of the same case,
# estimator and seed (about 11 minutes for both seeds); a run with --replicates > 1 writes only
# to --out.
suppressMessages(library(sgais))
source(file.path("inst", "validation", "suite.R"))
seeds <- as.integer(strsplit(opt("seeds", "101,102"), ",")[[1]])
replicates <- as.integer(opt("replicates", "1"))
out <- opt("out", if (replicates == 1L) file.path(validation_dir, "random-effects.csv") else "")
cat(sprintf("sgais %s, random effects, %s\n\n", utils::packageVersion("sgais"),
            format(Sys.time(), "%F %H:%M")))

source(file.path(validation_dir, "random-effects-data.R"))
stan <- utils::read.csv(file.path(validation_dir, "random-effects-cor-references.csv"))
rho <- random_effects_cor_rho
known_cor <- matrix(c(1, rho, rho, 1), 2)
slopes_cor_given <- function(d, cor) {
  linear_regression(y ~ x1 + x2 + (1 + x1 | g), d, noise_sd = 0.5, group_sd = c(0.7, 0.3),
                    group_cor = cor)
}
# each case: the model of the data, its reference and the reference's SE (0 when exact)
cases <- list(
  intercept_known = function(d, seed) {
    m <- linear_regression(y ~ x1 + x2 + (1 | g), d, noise_sd = 0.5, group_sd = 0.7)
    list(model = m, reference = exact_log_evidence(m), se = 0)
  },
  intercept_sds = function(d, seed) {
    m <- linear_regression(y ~ x1 + x2 + (1 | g), d, noise_sd = NULL)
    list(model = m, reference = exact_log_evidence(m), se = 0)
  },
  slopes_known = function(d, seed) {
    m <- linear_regression(y ~ x1 + x2 + (1 + x1 || g), d, noise_sd = 0.5, group_sd = c(0.7, 0.3))
    list(model = m, reference = exact_log_evidence(m), se = 0)
  },
  slopes_cor_known = function(d, seed) {
    m <- slopes_cor_given(random_effects_data(seed, rho = rho), known_cor)
    list(model = m, reference = exact_log_evidence(m), se = 0)
  },
  slopes_cor_lkj = function(d, seed) {
    dc <- random_effects_data(seed, rho = rho)
    given <- function(r) exact_log_evidence(slopes_cor_given(dc, matrix(c(1, r, r, 1), 2)))
    peak <- given(rho)
    f <- Vectorize(function(r) exp(given(r) - peak) * stats::dbeta((r + 1) / 2, 2, 2) / 2)
    list(model = slopes_cor_given(dc, lkj_prior(2)),
         reference = peak + log(stats::integrate(f, -1, 1, rel.tol = 1e-10)$value), se = 0)
  },
  slopes_cor = function(d, seed) {
    ref <- stan[stan$seed == seed, ]
    if (nrow(ref) != 1L) stop(sprintf("no Stan reference for seed %d: run random-effects-cor-references.R", seed))
    list(model = random_effects_cor_model(random_effects_data(seed, rho = rho)),
         reference = ref$log_evidence, se = ref$error)
  }
)
estimators <- list(sgais = sgais, ais = ais, nested_sampling = nested_sampling,
                   online_nested_sampling = online_nested_sampling, sir = sir,
                   sequential_sgmcmc = sequential_sgmcmc, importance_sampling = importance_sampling)

rows <- list()
for (seed in seeds) {
  d <- random_effects_data(seed)
  for (case in names(cases)) {
    built <- cases[[case]](d, seed)
    model <- built$model
    reference <- built$reference
    for (est in names(estimators)) {
      t0 <- proc.time()[["elapsed"]]
      args <- list(model, seed = seed, progress = FALSE)
      # importance_sampling() has no replicates: its SE is from its draws
      if ("replicates" %in% names(formals(estimators[[est]]))) args$replicates <- replicates
      fit <- suppressWarnings(do.call(estimators[[est]], args))
      seconds <- proc.time()[["elapsed"]] - t0
      se <- if (!is.null(fit$log_evidence_se) && is.finite(fit$log_evidence_se)) {
        fit$log_evidence_se
      } else {
        fit$diagnostics$predicted_sd[1]
      }
      error <- fit$log_evidence - reference
      bound <- max(3, 3 * sqrt(se^2 + built$se^2))
      rows[[length(rows) + 1L]] <- data.frame(
        case = case, estimator = est, seed = seed, reference = reference,
        estimate = fit$log_evidence, error = error, se = se, bound = bound,
        verdict = if (abs(error) <= bound) "pass" else "FAIL", seconds = seconds
      )
      cat(sprintf("%-16s %-22s seed %d: error %+7.3f (SE %.2f, bound %.2f) %s %6.1f s\n", case,
                  est, seed, error, se, bound, if (abs(error) <= bound) "pass" else "FAIL",
                  seconds))
    }
  }
}
res <- do.call(rbind, rows)
cat(sprintf("\n%d of %d pass; largest |error| %.3f nats\n", sum(res$verdict == "pass"), nrow(res),
            max(abs(res$error))))
if (nzchar(out)) write_rows(res, out, c("case", "estimator", "seed"))
