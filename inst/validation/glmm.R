# Issue 45's accuracy target for random effects in GLMs (R/glm_mixed.R): every estimator at
# its defaults (sgais, ais, nested_sampling, online_nested_sampling, sir, sequential_sgmcmc,
# importance_sampling) within max(3 nats, 3 SE) of the Stan + bridgesampling references
#   random intercepts   glmm-references.csv (computed by glmm-references.R, which also checks
#                       them against an independent importance sampler; glmm-data.R's data
#                       and priors: 2,000 rows in 40 groups, prior = "paper", group sd
#                       half-normal(1), negative binomial omega half-normal(1));
#   random slopes       glmm-slopes-references.csv (glmm-slopes-references.R; a random
#                       intercept and slope of x1, correlated, glmm_slopes_model());
# the SE is each fit's own. Prints one row per case and estimator, and the count that pass.
#   Rscript inst/validation/glmm.R [--cases=all|first] [--effects=both|intercept|slopes]
#     [--estimators=sgais,sir,...,sir_without_restarts] [--out=file.csv]
# (all but sir_without_restarts by default). The rows go to glmm.csv (or --out), replacing the
# stored rows of the same family, effects, seed and estimator: the first case of each family
# with both kinds of effects, the default, takes about 80 minutes (an hour of it the random
# slopes); --cases=all adds the second seed.
suppressMessages(library(sgais))
source(file.path("inst", "validation", "suite.R"))
out <- opt("out", file.path(validation_dir, "glmm.csv"))
source(file.path(validation_dir, "glmm-data.R"))
refs <- utils::read.csv(file.path(validation_dir, "glmm-references.csv"))
refs <- refs[refs$n == 2000, ]
# one case per family unless --cases=all
if (opt("cases", "first") != "all") refs <- refs[!duplicated(refs$family), ]
refs$effects <- "intercept"
slopes <- utils::read.csv(file.path(validation_dir, "glmm-slopes-references.csv"))
if (opt("cases", "first") != "all") slopes <- slopes[!duplicated(slopes$family), ]
slopes$effects <- "slopes"
columns <- c("family", "n", "groups", "seed", "stan_log_evidence", "effects")
refs <- rbind(refs[, columns], slopes[, columns])
effects <- opt("effects", "both")
if (effects != "both") refs <- refs[refs$effects == effects, ]
cat(sprintf("sgais %s, GLMs with random effects, %s\n\n", utils::packageVersion("sgais"),
            format(Sys.time(), "%F %H:%M")))
constructors <- list(logistic = logistic_regression, poisson = poisson_regression,
                     negative_binomial = negative_binomial_regression)
estimators <- list(sgais = sgais, ais = ais, nested_sampling = nested_sampling,
                   online_nested_sampling = online_nested_sampling, sir = sir,
                   sequential_sgmcmc = sequential_sgmcmc, importance_sampling = importance_sampling)
# on request only: SIR as published, without the robust preset's restarts on groups (?sir)
extras <- list(sir_without_restarts = function(...) sir(..., restart_every = Inf))
chosen <- opt("estimators", "")
if (nzchar(chosen)) {
  chosen <- strsplit(chosen, ",", fixed = TRUE)[[1]]
  estimators <- c(estimators, extras)
  unknown <- setdiff(chosen, names(estimators))
  if (length(unknown)) stop("unknown estimators: ", paste(unknown, collapse = ", "))
  estimators <- estimators[chosen]
}
rows <- list()
for (k in seq_len(nrow(refs))) {
  r <- refs[k, ]
  model <- if (r$effects == "slopes") {
    glmm_slopes_model(r$family, glmm_slopes_data(r$family, r$n, r$groups, r$seed))
  } else {
    constructors[[r$family]](y ~ x1 + x2 + (1 | g), glmm_data(r$family, r$n, r$groups, r$seed),
                             prior = "paper", prior_sd = glmm_prior_sd,
                             group_sd = half_normal_prior(glmm_group_sd_scale))
  }
  reference <- r$stan_log_evidence
  for (est in names(estimators)) {
    t0 <- proc.time()[["elapsed"]]
    fit <- suppressWarnings(estimators[[est]](model, seed = r$seed, progress = FALSE))
    seconds <- proc.time()[["elapsed"]] - t0
    se <- fit$log_evidence_se # every estimator's own at its defaults (one run: predicted)
    error <- fit$log_evidence - reference
    bound <- max(3, 3 * se, na.rm = TRUE)
    verdict <- if (abs(error) <= bound) "pass" else "FAIL"
    rows[[length(rows) + 1L]] <- data.frame(
      family = r$family, effects = r$effects, rows = r$n, groups = r$groups, seed = r$seed,
      estimator = est,
      reference = reference, estimate = fit$log_evidence, error = error, se = se, bound = bound,
      verdict = verdict, seconds = seconds
    )
    cat(sprintf("%-17s %-9s seed %d %-23s: error %+7.3f (SE %.2f, bound %.2f) %s %7.1f s\n",
                r$family, r$effects, r$seed, est, error, se, bound, verdict, seconds))
  }
  write_rows(do.call(rbind, rows), out, c("family", "effects", "seed", "estimator"))
}
res <- do.call(rbind, rows)
cat(sprintf("\n%d of %d pass; largest |error| %.3f nats; written to %s\n",
            sum(res$verdict == "pass"), nrow(res), max(abs(res$error)), out))
