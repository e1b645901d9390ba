# Issue 41, item 3: do the package's estimators reproduce BayesFactor's Bayes factors under its
# JZS prior (zellner_siow_prior()), to 0.05 nats? For BayesFactor's documented example
# (attitude) and mtcars, each model's log Bayes factor against the intercept-only model and the
# comparisons of vignette("choosing-models"), by
#   - BayesFactor (regressionBF / lmBF; bayesfactor-references.csv, made by
#     bayesfactor-references.R),
#   - the closed form (exact_log_evidence(), a one-dimensional integral over g),
#   - SGAIS through compare_models() of formulas, and nested sampling and AIS fits, at settings
#     chosen for a standard error near 0.015 nats per model (0.02 per Bayes factor): SGAIS with
#     1,000 particles and target ESS 900, 24 replicates; nested sampling with 2,000 live points,
#     20 replicates; AIS at its defaults, 20 replicates (the cheaper check: its SE is larger).
# Writes inst/extdata/bayesfactor-agreement.csv (read by vignette("choosing-models")) and prints
# the table with times.
#   Rscript inst/validation/bayesfactor-agreement.R      (from the package root; ~20 minutes)
suppressMessages(library(sgais))
source(file.path("inst", "validation", "suite.R"))
refs <- utils::read.csv(file.path("inst", "extdata", "bayesfactor-references.csv"),
                        stringsAsFactors = FALSE)
refs <- refs[refs$scale == "medium", ]
jzs <- function(formula, data) linear_regression(formula, data, prior = zellner_siow_prior())
sets <- list(
  attitude = list(data = attitude, models = list(
    null = rating ~ 1, complaints = rating ~ complaints,
    complaints_learning = rating ~ complaints + learning, all = rating ~ .)),
  mtcars = list(data = mtcars, models = list(
    null = mpg ~ 1, wt_hp = mpg ~ wt + hp, wt_hp_qsec = mpg ~ wt + hp + qsec,
    wt_hp_qsec_disp = mpg ~ wt + hp + qsec + disp))
)
sgais_settings <- list(particles = 1000, early_particles = 1000, target_ess = 900)

rows <- list()
for (set in names(sets)) {
  s <- sets[[set]]
  cat(sprintf("%s: %d models\n", set, length(s$models)))
  t_sgais <- system.time(cmp <- do.call(compare_models, c(
    list(s$models, s$data, family = jzs, replicates = 24, seed = 1, progress = FALSE),
    sgais_settings)))[["elapsed"]]
  for (name in names(s$models)) {
    model <- jzs(s$models[[name]], s$data)
    fit <- cmp$fits[[name]]
    t_ns <- system.time(ns <- nested_sampling(model, live_points = 2000, replicates = 20, seed = 2,
                                              progress = FALSE))[["elapsed"]]
    t_ais <- system.time(a <- ais(model, replicates = 20, seed = 3,
                                  progress = FALSE))[["elapsed"]]
    rhs <- paste(deparse(s$models[[name]][[3]]), collapse = "")
    formula <- if (rhs == ".") {
      paste(as.character(s$models[[name]][[2]]), "~",
            paste(setdiff(names(s$data), as.character(s$models[[name]][[2]])), collapse = " + "))
    } else paste(deparse(s$models[[name]]), collapse = "")
    bf <- refs$log_bf[refs$data == set & refs$formula == formula][1]
    rows[[length(rows) + 1L]] <- data.frame(
      data = set, model = name, formula = formula,
      bayesfactor = if (name == "null") 0 else bf,
      exact = exact_log_evidence(model),
      sgais = fit[["log_evidence"]], sgais_se = fit[["log_evidence_se"]],
      ns = ns[["log_evidence"]], ns_se = ns[["log_evidence_se"]],
      ais = a[["log_evidence"]], ais_se = a[["log_evidence_se"]],
      sgais_seconds = t_sgais / length(s$models), ns_seconds = t_ns, ais_seconds = t_ais,
      stringsAsFactors = FALSE)
    cat(sprintf("  %-20s done (NS %.0f s, AIS %.0f s)\n", name, t_ns, t_ais))
  }
}
tab <- do.call(rbind, rows)
# log Bayes factors against each data set's intercept-only model, with SEs
against_null <- function(col, se) {
  out <- tab[[col]] - ave(ifelse(tab$model == "null", tab[[col]], NA), tab$data,
                          FUN = function(v) v[!is.na(v)][1])
  if (is.null(se)) return(list(out, NA))
  s0 <- ave(ifelse(tab$model == "null", tab[[se]], NA), tab$data, FUN = function(v) v[!is.na(v)][1])
  list(out, ifelse(tab$model == "null", NA, sqrt(tab[[se]]^2 + s0^2)))
}
tab$exact_bf <- against_null("exact", NULL)[[1]]
for (m in c("sgais", "ns", "ais")) {
  v <- against_null(m, paste0(m, "_se"))
  tab[[paste0(m, "_bf")]] <- v[[1]]
  tab[[paste0(m, "_bf_se")]] <- v[[2]]
}
out <- file.path("inst", "extdata", "bayesfactor-agreement.csv")
utils::write.csv(tab, out, row.names = FALSE)

shown <- tab[tab$model != "null", ]
cat("\nlog Bayes factor against the intercept-only model (JZS prior, scale \"medium\"):\n")
cat(sprintf("%-9s %-40s %9s %9s %16s %16s %16s\n", "data", "model", "BayesF.", "exact",
            "SGAIS (SE)", "NS (SE)", "AIS (SE)"))
for (i in seq_len(nrow(shown))) {
  r <- shown[i, ]
  cat(sprintf("%-9s %-40s %9.4f %9.4f %9.3f (%.3f) %9.3f (%.3f) %9.3f (%.3f)\n", r$data,
              substr(r$formula, 1, 40), r$bayesfactor, r$exact_bf, r$sgais_bf, r$sgais_bf_se,
              r$ns_bf, r$ns_bf_se, r$ais_bf, r$ais_bf_se))
}
err <- function(m) shown[[paste0(m, "_bf")]] - shown$bayesfactor
cat(sprintf("\nlargest |error| against BayesFactor: exact %.1e; SGAIS %.3f, NS %.3f, AIS %.3f nats\n",
            max(abs(shown$exact_bf - shown$bayesfactor)), max(abs(err("sgais"))),
            max(abs(err("ns"))), max(abs(err("ais")))))
cat(sprintf("within 0.05 nats: SGAIS %d of %d, NS %d, AIS %d\n", sum(abs(err("sgais")) < 0.05),
            nrow(shown), sum(abs(err("ns")) < 0.05), sum(abs(err("ais")) < 0.05)))
cat(sprintf("mean seconds per model: SGAIS %.1f, NS %.1f, AIS %.1f\n", mean(tab$sgais_seconds),
            mean(tab$ns_seconds), mean(tab$ais_seconds)))
cat("\nthe comparisons of vignette(\"choosing-models\"):\n")
pair <- function(set, a, b) {
  x <- tab[tab$data == set, ]
  d <- function(col) x[[col]][x$model == a] - x[[col]][x$model == b]
  se <- function(m) sqrt(x[[paste0(m, "_se")]][x$model == a]^2 + x[[paste0(m, "_se")]][x$model == b]^2)
  cat(sprintf("%-9s %s vs %s: BayesFactor %.4f, exact %.4f, SGAIS %.3f (%.3f), NS %.3f (%.3f), AIS %.3f (%.3f)\n",
              set, a, b, d("bayesfactor"), d("exact"), d("sgais"), se("sgais"), d("ns"), se("ns"),
              d("ais"), se("ais")))
}
pair("attitude", "complaints_learning", "complaints")
pair("mtcars", "wt_hp_qsec", "wt_hp")
