# The validation suite's full tier (`make validate`): every estimator and preset against trusted
# references; and, below, the index of the suite.
#
#   Rscript inst/validation/run.R [--quick] [--methods=sgais,sgais_paper,ais,ns] [--cases=id,...]
#                                 [--replicates=10] [--seed=1] [--workers=2] [--out=file.csv]
#   Rscript inst/validation/run.R --report[=a.csv,b.csv]    # the targets over stored results
#
# For each case of cases.R it runs
#   sgais        sgais() with its defaults (the robust preset) and `replicates` replicates;
#   sgais_paper  sgais(control = sgais_control("paper")), one run (the paper's algorithm);
#   ais          ais() with its defaults, `replicates` replicates, when n <= 10^4;
#   ns           nested_sampling() with its defaults, `replicates` replicates, when n <= 10^4
#                and the model has at most 25 parameters (the random walk needs proposals in
#                proportion to the number of parameters at every iteration);
# and prints one row per case and method: the reference, the estimate +/- its replicate SE,
# the error, seconds and gradient evaluations; then the issue's targets:
#   - SGAIS at its defaults: |error| <= max(3 nats, 3 SE) on every case with n <= 10^5; the
#     paper's model at 10^6 within 10 nats, with at most 2x the paper preset's gradients;
#   - AIS and NS at their defaults: |error| <= 2 nats on every case with n <= 10^4;
#   - replicate SE: the reference inside estimate +/- 2 SE in at least 90% of the cases.
# With R replicates the SE has R - 1 degrees of freedom, so even an unbiased estimator's
# +/- 2 SE covers only 2 pt(2, R - 1) - 1 of the time: 86% with 4 replicates, 92% with 10 (the
# default here); over one seed's 77 fits a coverage of 90% has a binomial sd of 3.4 points.
# Each fit's row (with every replicate's log evidence, `replicate_log_evidence`, and besides the
# fit's SE the replicates' alone, `se_replicates`, before the floor of their predicted sds) goes
# to results.csv (or --out) as soon as it is done, replacing the stored row of the same case,
# method and seed: results.csv holds the latest fit of each, seeds 1 and 2. --report prints the
# targets over results.csv (or over the files named, a later file's row replacing an earlier's),
# seed by seed and then the coverage over all seeds. --quick runs the cases with n <= 10^4 with
# 2 replicates and writes only to --out. The replicates run through the future framework on
# `workers` local processes. One seed takes 70 to 80 minutes on 2 cores, half of it nested
# sampling on the mixtures with 3 and 4 components.
#
# The suite. Every script runs from the package's root with sgais installed, sources suite.R
# (options, result files) and overwrites one result file beside it, which vignette("validation")
# reads; times on the 2-core development machine.
#   run.R             the above                                       results.csv     75 min a seed
#   quick.R           every estimator x preset x model family once on small data, then the quick
#                     checks of checks.R (`make validate-quick`)      quick.csv       3 min
#   checks.R          statistical checks moved out of the tests       checks.csv      2 min
#   coverage.R        a single run's SE: coverage of +/- 2 SE, 7 estimators x 10 small cases x
#                     100 seeds (50 for nested sampling)              coverage.csv    35 min
#   glmm.R            every estimator on GLMs with random intercepts and slopes against Stan
#                                                                     glmm.csv        80 min
#   random-effects.R  every estimator on linear random effects       random-effects.csv  11 min
#   mixture-clusters.R  estimators on separated clusters against a closed form
#                                                                     mixture-clusters.txt  2 h
#   shift-stream.R    the paper's shifting stream in order and shuffled  shift-stream.txt  75 min
#   model-search.R    model_search() against BAS, BayesFactor and enumeration
#                                                                     model-search.txt  2 min
#   compare.R         compare_models() at its defaults on real data  compare.txt     seconds
#   binomial.R        binomial counts against their Bernoulli rows   binomial.txt    1 min
#   hostile.R         the hostile-input table, classified            hostile.txt     20 s
# Shared code: cases.R (run.R's cases), quadrature.R (grid references), glmm-data.R,
# random-effects-data.R, mixture-reference.R and model-search-data.R (data and closed forms).
# References, computed once with development-only tools (rstan, bridgesampling, BayesFactor,
# BAS, lme4) and stored; rerun only when a model or prior changes:
#   references.R      Stan + bridge sampling on real data: softmax, mixtures, GLMs
#                     -> references.csv (each run's diagnostics in references-runs.csv), 1.5 h
#   coverage.R --references  logistic cases by importance sampling in R -> coverage-references.csv
#   glmm-references.R, glmm-slopes-references.R, random-effects-cor-references.R  Stan + bridge
#                     sampling for random effects (stan-setup.R, glmm-reference-functions.R)
#                     -> glmm-references.csv, glmm-slopes-references.csv,
#                        random-effects-cor-references.csv (5 to 30 minutes each)
#   glmm-bacteria-references.R, random-effects-references.R, bayesfactor-references.R,
#   bayesfactor-agreement.R, choosing-models.R, model-search-references.R
#                     -> inst/extdata/*.csv, read by the other vignettes and model-search.R
# One-off experiments that settled a default are in inst/design.md ("Experiments behind
# decisions"), with their figures.

suppressMessages(library(sgais))
source(file.path("inst", "validation", "suite.R"))
args <- commandArgs(TRUE)
quick <- "--quick" %in% args
methods <- strsplit(opt("methods", "sgais,sgais_paper,ais,ns"), ",")[[1]]
replicates <- as.integer(opt("replicates", if (quick) "2" else "10"))
report <- opt("report", if ("--report" %in% args) "results.csv" else "")
workers <- as.integer(opt("workers", "2"))
seed <- as.integer(opt("seed", "1"))
only <- opt("cases", "")
out_file <- opt("out", if (quick) "" else file.path(validation_dir, "results.csv"))

source(file.path(validation_dir, "cases.R"))
ref_file <- file.path(validation_dir, "references.csv")
references <- if (file.exists(ref_file)) utils::read.csv(ref_file, stringsAsFactors = FALSE)
cases <- validation_cases(references)
if (nzchar(only)) cases <- Filter(function(k) k$id %in% strsplit(only, ",")[[1]], cases)

if (workers > 1) future::plan(future::multisession, workers = workers)

run_method <- function(method, model) {
  quiet <- function(code) {
    withCallingHandlers(code, warning = function(w) invokeRestart("muffleWarning"))
  }
  t0 <- proc.time()[["elapsed"]]
  fit <- switch(method,
    sgais = quiet(sgais(model, replicates = replicates, seed = seed, progress = FALSE)),
    sgais_paper = quiet(sgais(model, control = sgais_control("paper"), seed = seed, progress = FALSE)),
    ais = quiet(ais(model, replicates = replicates, seed = seed, progress = FALSE)),
    ns = quiet(nested_sampling(model, replicates = replicates, seed = seed, progress = FALSE))
  )
  x <- fit$replicate_log_evidence
  list(
    estimate = fit$log_evidence,
    se = if (is.null(fit$log_evidence_se)) NA_real_ else fit$log_evidence_se,
    # the package's own combination, without the floor of the predicted sds
    se_replicates = sgais:::replicate_summary(x, if (method == "ns") "log" else "z")$log_evidence_se,
    predicted_sd = max(fit$diagnostics$predicted_sd),
    # every replicate's log evidence, so that other combinations and SEs can be checked later
    replicate_log_evidence = paste(sprintf("%.10g", fit$replicate_log_evidence), collapse = ";"),
    seconds = proc.time()[["elapsed"]] - t0,
    gradients = fit$gradient_evaluations
  )
}

applies <- function(method, model) {
  switch(method,
    sgais = TRUE,
    sgais_paper = TRUE,
    ais = model$n <= 1e4,
    ns = model$n <= 1e4 && model$dim <= 25
  )
}

rows <- list()
if (nzchar(report)) cases <- list()
for (case in cases) {
  model <- case$model()
  if (quick && model$n > 1e4) next
  reference <- case_reference(case, model)
  for (method in methods) {
    if (!applies(method, model)) next
    res <- tryCatch(run_method(method, model), error = function(e) {
      message(sprintf("%s / %s failed: %s", case$id, method, conditionMessage(e)))
      NULL
    })
    row <- data.frame(
      case = case$id, n = model$n, dim = model$dim, method = method,
      replicates = if (method == "sgais_paper") 1L else replicates, seed = seed, reference = reference,
      estimate = if (is.null(res)) NA else res$estimate, se = if (is.null(res)) NA else res$se,
      se_replicates = if (is.null(res)) NA else res$se_replicates,
      predicted_sd = if (is.null(res)) NA else res$predicted_sd,
      seconds = if (is.null(res)) NA else res$seconds,
      gradients = if (is.null(res)) NA else res$gradients,
      replicate_log_evidence = if (is.null(res)) NA else res$replicate_log_evidence
    )
    row$error <- row$estimate - row$reference
    row$error_in_se <- row$error / row$se
    rows[[length(rows) + 1L]] <- row
    # written after every fit, so that an interrupted run keeps what it has done
    if (nzchar(out_file)) write_rows(do.call(rbind, rows), out_file, c("case", "method", "seed"))
    cat(sprintf("%-20s %9s %3d %-11s ref %13.3f  est %13.3f +/- %6.3f  err %8.3f  %6.1f s  %.2e grads\n",
                row$case, format(row$n, big.mark = ","), row$dim, row$method, row$reference,
                row$estimate, row$se, row$error, row$seconds, row$gradients))
  }
}
if (nzchar(report)) {
  # a file not found as given is looked for beside this script
  paths <- strsplit(report, ",")[[1]]
  paths <- ifelse(file.exists(paths), paths, file.path(validation_dir, paths))
  files <- lapply(paths, utils::read.csv, stringsAsFactors = FALSE)
  # files written before a column existed (seed, se_replicates) have it as NA
  columns <- unique(unlist(lapply(files, names)))
  results <- do.call(rbind, lapply(files, function(f) {
    f[setdiff(columns, names(f))] <- NA
    f[columns]
  }))
  # a later file's result for a case, method and seed replaces an earlier file's (files
  # written before the column `seed` existed are seed 1, the only one run then)
  results$seed[is.na(results$seed)] <- 1L
  results <- results[!duplicated(results[c("case", "method", "seed")], fromLast = TRUE), ]
  cat(sprintf("%d results of %d cases, seed%s %s\n", nrow(results), length(unique(results$case)),
              if (length(unique(results$seed)) > 1L) "s" else "",
              paste(sort(unique(results$seed)), collapse = ", ")))
} else {
  results <- do.call(rbind, rows)
}

check <- function(label, ok, detail) {
  cat(sprintf("[%s] %s: %s\n", if (isTRUE(all(ok))) "pass" else "FAIL", label, detail))
}
# The accuracy targets over `results`, fits of one seed.
accuracy_targets <- function(results) {
  s <- results[results$method == "sgais" & results$n <= 1e5, ]
  bound <- pmax(3, 3 * ifelse(is.na(s$se), 0, s$se))
  check("SGAIS defaults, |error| <= max(3, 3 SE), n <= 1e5", abs(s$error) <= bound,
        sprintf("%d of %d cases; worst %s (error %.2f, SE %.2f)", sum(abs(s$error) <= bound), nrow(s),
                s$case[which.max(abs(s$error) / bound)], s$error[which.max(abs(s$error) / bound)],
                s$se[which.max(abs(s$error) / bound)]))
  big <- results[results$case == "lin_paper_1e6", ]
  if (nrow(big)) {
    rob <- big[big$method == "sgais", ]
    pap <- big[big$method == "sgais_paper", ]
    check("SGAIS defaults at 1e6 within 10 nats", abs(rob$error) <= 10,
          sprintf("error %.2f (paper preset %.2f)", rob$error, if (nrow(pap)) pap$error else NA))
    if (nrow(pap)) {
      ratio <- (rob$gradients / rob$replicates) / pap$gradients
      check("gradient evaluations per replicate at 1e6 <= 2x the paper preset's", ratio <= 2,
            sprintf("ratio %.2f (%.3g vs %.3g per run)", ratio, rob$gradients / rob$replicates, pap$gradients))
    }
  }
  for (m in c("ais", "ns")) {
    r <- results[results$method == m & results$n <= 1e4 & !is.na(results$error), ]
    if (!nrow(r)) next
    check(sprintf("%s defaults, |error| <= 2 nats, n <= 1e4", toupper(m)), abs(r$error) <= 2,
          sprintf("%d of %d cases; worst %s (%.2f)", sum(abs(r$error) <= 2), nrow(r),
                  r$case[which.max(abs(r$error))], r$error[which.max(abs(r$error))]))
  }
}
# The issue's targets over `results`, fits of one seed; with `pooled`, only the coverage (over
# the fits of several seeds).
targets <- function(results, pooled = FALSE) {
  if (!pooled) accuracy_targets(results)
  cov <- results[results$method %in% c("sgais", "ais", "ns") & !is.na(results$se), ]
  coverage <- function(label, inside) {
    # the binomial 95% interval says how well this many fits pin the coverage down
    ci <- 100 * stats::binom.test(sum(inside), length(inside))$conf.int
    check(label, mean(inside) >= 0.9,
          sprintf("%.1f%% of %d, 95%% interval %.0f-%.0f%% (SGAIS %.0f%%, AIS %.0f%%, NS %.0f%%)",
                  100 * mean(inside), nrow(cov), ci[1], ci[2],
                  100 * mean(inside[cov$method == "sgais"]), 100 * mean(inside[cov$method == "ais"]),
                  100 * mean(inside[cov$method == "ns"])))
  }
  # With R replicates the SE has R - 1 degrees of freedom: +/- 2 SE covers only 2 pt(2, R - 1) - 1
  # (86% for R = 4, 92% for R = 10) even for an unbiased estimator; confint() uses the t quantile.
  R <- sort(unique(cov$replicates))
  coverage(sprintf("replicate SE: reference within estimate +/- 2 SE in >= 90%% of cases (%s replicates; %s for an unbiased estimator)",
                   paste(R, collapse = ", "), paste(sprintf("%.0f%%", 100 * (2 * stats::pt(2, R - 1) - 1)), collapse = ", ")),
           abs(cov$error) <= 2 * cov$se)
  if (!is.null(cov$se_replicates) && !anyNA(cov$se_replicates)) {
    cat(sprintf(paste("  (with the replicates' SE alone, before the floor of their predicted sds:",
                      "%.0f%%; the floor raised the SE in %d of %d fits)\n"),
                100 * mean(abs(cov$error) <= 2 * cov$se_replicates),
                sum(cov$se > cov$se_replicates), nrow(cov)))
  }
  q <- stats::qt(0.975, cov$replicates - 1)
  coverage(sprintf("replicate SE: reference within confint() (estimate +/- t(0.975, R - 1) SE) in >= 90%% of cases"),
           abs(cov$error) <= q * cov$se)
  cat(sprintf("median |error| / SE: %.2f (for an honest SE with %s replicates about %s)\n",
              stats::median(abs(cov$error) / cov$se), paste(R, collapse = ", "),
              paste(sprintf("%.2f", stats::qt(0.75, R - 1)), collapse = ", ")))
}
seeds <- sort(unique(results$seed))
for (k in seeds) {
  cat(sprintf("\n== Targets%s ==\n", if (length(seeds) > 1L) sprintf(", seed %d", k) else ""))
  targets(results[results$seed == k, ])
}
if (length(seeds) > 1L) {
  cat(sprintf("\n== Coverage over the %d seeds ==\n", length(seeds)))
  targets(results, pooled = TRUE)
}
if (!nzchar(report) && nzchar(out_file)) cat(sprintf("\nResults written to %s\n", out_file))
