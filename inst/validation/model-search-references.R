# References for model_search(): computed once, stored in inst/extdata/ with a column `how` that
# says how and when each was obtained, and read by model-search.R (the measurements) and
# vignette("variable-selection"). BAS (CRAN) and BayesFactor (Debian: apt-get install
# r-cran-bayesfactor) are development references, never dependencies of sgais.
#
#   boston    MASS::Boston, medv ~ . (13 terms, all 8,192 submodels), uniform prior over the
#             models: BAS's bas.lm(method = "deterministic") under "JZS" (zellner_siow_prior(1))
#             and the g-prior with g = n (g_prior()), with their times (median of 5 runs); and
#             BayesFactor's regressionBF() with rscaleCont = 1 and its default "medium"
#             (zellner_siow_prior()), inclusion probabilities from its Bayes factors against
#             the intercept-only model. Also the log Bayes factor of medv ~ crim + rm against
#             medv ~ rm under r = 1 by each. -> inst/extdata/model-search-boston.csv
#   noise     Boston with 20 pure-noise covariates (33 terms, boston_noise() in
#             model-search-data.R), zellner_siow_prior(1), beta-binomial(1, 1) prior over the
#             models: two long model_search(method = "mcmc") chains of 5e6 iterations (seed 1 is
#             the reference, seed 2 checks it), and BAS's MCMC with 1e5 and 1e6 iterations.
#             -> inst/extdata/model-search-noise.csv
#   logistic  simulate_logistic_search() (2e4 rows, 10 candidates; model-search-data.R), default
#             prior of logistic_regression(), uniform prior over the models: every one of the
#             1,024 models' log evidence by importance_sampling() with 2,000 draws, and again
#             with 20,000 draws (another seed) for the models of probability at least 1e-4.
#             -> inst/extdata/model-search-logistic.csv (one row per model)
#   logistic-inclusion
#             reads that file (it checks the data's fingerprint, so the 1,024 importance
#             samplers need not run again) and runs the vignette's model_search(y ~ ., data,
#             family = "binomial", seed = 1), writing its probability and evidence estimator
#             of every model into the file's columns search_* (part `logistic` writes them too);
#             BAS's bas.glm(method = "deterministic") under its default prior and g.prior(n)
#             (times: median of 3 runs); the inclusion probabilities of the reference (from the
#             stored probabilities), of the search and of BAS, with their times.
#             -> inst/extdata/model-search-logistic-inclusion.csv
#
# Run from the package root, with sgais installed (one thread; one part or several):
#   Rscript inst/validation/model-search-references.R boston noise logistic logistic-inclusion
# boston takes about 4 minutes (BayesFactor's two enumerations), noise about 4, logistic about 40
# (the 1,024 importance samplers), logistic-inclusion about 3 (BAS, 6 runs).
source(file.path("inst", "validation", "model-search-data.R")) # sgais, BAS, suite.R
extdata <- file.path("inst", "extdata")
parts <- commandArgs(TRUE)
if (!length(parts)) parts <- c("boston", "noise", "logistic", "logistic-inclusion")
today <- format(Sys.Date())
versions <- sprintf("sgais %s, BAS %s, %s", utils::packageVersion("sgais"),
                    utils::packageVersion("BAS"), R.version.string)
cat(versions, "\n")
elapsed <- function(expr) system.time(expr)[["elapsed"]]
median_time <- function(f, reps = 5) {
  stats::median(vapply(seq_len(reps), function(i) elapsed(f()), numeric(1)))
}
write_csv <- function(x, name) {
  path <- file.path(extdata, name)
  utils::write.csv(x, path, row.names = FALSE)
  cat(sprintf("%d rows written to %s\n", nrow(x), normalizePath(path)))
}

# ---- Boston, 13 terms --------------------------------------------------------------------------
if ("boston" %in% parts) {
  boston <- MASS::Boston
  terms <- setdiff(names(boston), "medv")
  bas_runs <- list(
    "zellner_siow_prior(1)" = function() {
      bas.lm(medv ~ ., boston, prior = "JZS", method = "deterministic", modelprior = uniform())
    },
    "g_prior()" = function() {
      bas.lm(medv ~ ., boston, prior = "g-prior", alpha = nrow(boston), method = "deterministic",
             modelprior = uniform())
    })
  bas_calls <- c("zellner_siow_prior(1)" = "prior = \"JZS\"",
                 "g_prior()" = "prior = \"g-prior\", alpha = nrow(Boston)")
  # log Bayes factor of the model with `a` against the model with `b` in a BAS fit
  bas_log_bf <- function(fit, a, b) {
    which_model <- function(v) {
      idx <- sort(c(0L, match(v, fit$namesx) - 1L))
      Position(function(w) identical(sort(as.integer(w)), idx), fit$which)
    }
    fit$logmarg[which_model(a)] - fit$logmarg[which_model(b)]
  }
  bas_rows <- do.call(rbind, lapply(names(bas_runs), function(prior) {
    fit <- bas_runs[[prior]]()
    seconds <- median_time(bas_runs[[prior]])
    data.frame(source = "BAS", prior = prior, term = fit$namesx[-1],
               inclusion_probability = fit$probne0[-1],
               log_bf_crim_rm_vs_rm = bas_log_bf(fit, c("crim", "rm"), "rm"), seconds = seconds,
               how = sprintf(paste("BAS %s bas.lm(medv ~ ., MASS::Boston, %s, method =",
                                   "\"deterministic\", modelprior = uniform()); probne0; seconds:",
                                   "median elapsed of 5 runs, one R process; %s"),
                             utils::packageVersion("BAS"), bas_calls[[prior]], today),
               stringsAsFactors = FALSE)
  }))
  suppressPackageStartupMessages(library(BayesFactor))
  bf_priors <- c("zellner_siow_prior(1)", "zellner_siow_prior()")
  bf_rows <- do.call(rbind, lapply(bf_priors, function(prior) {
    scale <- if (prior == "zellner_siow_prior(1)") 1 else "medium"
    seconds <- elapsed(bf <- regressionBF(medv ~ ., boston, rscaleCont = scale, progress = FALSE))
    x <- extractBF(bf)
    log_bf <- c(0, log(x$bf)) # the intercept-only model, then BayesFactor's 8,191
    models <- c("", rownames(x))
    members <- vapply(terms, function(t) {
      vapply(strsplit(models, " + ", fixed = TRUE), function(m) t %in% m, logical(1))
    }, logical(length(models)))
    p <- exp(log_bf - max(log_bf))
    p <- p / sum(p)
    data.frame(source = "BayesFactor", prior = prior, term = terms,
               inclusion_probability = drop(p %*% members),
               log_bf_crim_rm_vs_rm = log_bf[models == "crim + rm"] - log_bf[models == "rm"],
               seconds = seconds,
               how = sprintf(paste("BayesFactor %s regressionBF(medv ~ ., MASS::Boston,",
                                   "rscaleCont = %s): log Bayes factors of the 8,191 models",
                                   "against the intercept-only one (largest error estimate %.1e),",
                                   "inclusion probabilities under a uniform prior over the 8,192",
                                   "models; seconds: one run, elapsed; %s"),
                             utils::packageVersion("BayesFactor"), deparse(scale),
                             max(x$error, na.rm = TRUE), today),
               stringsAsFactors = FALSE)
  }))
  out <- rbind(bas_rows, bf_rows)
  print(out[setdiff(names(out), "how")], digits = 5, row.names = FALSE)
  write_csv(out, "model-search-boston.csv")
}

# ---- Boston with 20 noise covariates, 33 terms -------------------------------------------------
if ("noise" %in% parts) {
  noisy <- boston_noise()
  fingerprint <- data_fingerprint(noisy)
  data_how <- sprintf(paste("data: boston_noise() of inst/validation/model-search-data.R",
                            "(fingerprint %s)"), fingerprint)
  chain <- function(seed) {
    seconds <- elapsed(s <- model_search(medv ~ ., noisy, prior = zellner_siow_prior(1),
                                         model_prior = "beta-binomial", method = "mcmc",
                                         iterations = 5e6, seed = seed, progress = FALSE))
    data.frame(source = if (seed == 1) "reference" else "check", iterations = 5e6, seed = seed,
               term = names(s$inclusion), inclusion_probability = unname(s$inclusion),
               frequency = NA_real_, seconds = seconds, models_visited = s$visited,
               how = sprintf(paste("sgais %s model_search(medv ~ ., data, prior =",
                                   "zellner_siow_prior(1), model_prior = \"beta-binomial\",",
                                   "method = \"mcmc\", iterations = 5e6, seed = %d):",
                                   "renormalised evidences of the visited models; %s; %s"),
                             utils::packageVersion("sgais"), seed, data_how, today),
               stringsAsFactors = FALSE)
  }
  bas_chain <- function(iterations) {
    set.seed(1)
    seconds <- elapsed(b <- bas.lm(medv ~ ., noisy, prior = "JZS", method = "MCMC",
                                   MCMC.iterations = iterations,
                                   modelprior = beta.binomial(1, 1)))
    data.frame(source = "BAS", iterations = iterations, seed = 1, term = b$namesx[-1],
               inclusion_probability = b$probne0.RN[-1], frequency = b$probne0.MCMC[-1],
               seconds = seconds, models_visited = b$n.models,
               how = sprintf(paste("BAS %s set.seed(1); bas.lm(medv ~ ., data, prior = \"JZS\",",
                                   "method = \"MCMC\", MCMC.iterations = %g, modelprior =",
                                   "beta.binomial(1, 1)): probne0.RN (renormalised) and",
                                   "probne0.MCMC (frequency); %s; %s"),
                             utils::packageVersion("BAS"), iterations, data_how, today),
               stringsAsFactors = FALSE)
  }
  out <- rbind(chain(1), chain(2), bas_chain(1e5), bas_chain(1e6))
  ref <- out$inclusion_probability[out$source == "reference"]
  for (s in split(out, paste(out$source, out$iterations))) {
    cat(sprintf("%-10s %8g iterations: %7.1f s, largest |PIP - reference| %.4f%s\n", s$source[1],
                s$iterations[1], s$seconds[1], max(abs(s$inclusion_probability - ref)),
                if (anyNA(s$frequency)) "" else
                  sprintf(" (frequencies %.4f)", max(abs(s$frequency - ref)))))
  }
  write_csv(out, "model-search-noise.csv")
}

# ---- logistic regression, 10 candidates, 2e4 rows ----------------------------------------------
if (any(c("logistic", "logistic-inclusion") %in% parts)) {
  d <- simulate_logistic_search()
  fingerprint <- data_fingerprint(d)
  data_how <- sprintf(paste("data: simulate_logistic_search() of",
                            "inst/validation/model-search-data.R (fingerprint %s)"), fingerprint)
  terms <- paste0("x", 1:10)
  K <- length(terms)
  # model_search()'s codes: term k is bit k - 1; row i of the models' file is code i - 1
  codes <- 0:(2^K - 1)
  included <- t(vapply(codes, function(code) bitwAnd(code, 2L^(0:(K - 1))) != 0L, logical(K)))
  rhs <- apply(included, 1L, function(v) if (any(v)) paste(terms[v], collapse = " + ") else "1")
  # The vignette's run of model_search() on these data, and the models' file's columns search_*
  # from it: every model's probability by the search (its accurate evidence, or the screen's)
  # and how the search had its evidence ("screen": the Laplace screen only). The file's `how` has
  # the reference's provenance on its first row and the search's on its second.
  run_search <- function() {
    seconds <- elapsed(s <- model_search(y ~ ., d, family = "binomial", seed = 1,
                                         progress = FALSE))
    result <- s$state$result
    at <- match(codes, result$codes)
    run <- sprintf(paste("sgais %s model_search(y ~ ., data, family = \"binomial\", seed = 1),",
                         "%.1f s on one thread (%d models with accurate evidence, the rest",
                         "screened only); %s; %s"),
                   utils::packageVersion("sgais"), seconds, sum(result$estimator != "screen"),
                   data_how, today)
    list(search = s, seconds = seconds,
         probability = signif(result$probability[at], 5), method = result$estimator[at],
         run = run, how = paste("search_*: every model's probability and evidence estimator in",
                                run))
  }
  with_search <- function(models, run) {
    models$search_probability <- run$probability
    models$search_method <- run$method
    models$how[2] <- run$how
    models
  }
}

if ("logistic" %in% parts) {
  one <- function(i, draws, seed) {
    model <- logistic_regression(stats::as.formula(paste("y ~", rhs[i])), d)
    seconds <- elapsed(fit <- suppressWarnings(
      importance_sampling(model, draws = draws, seed = seed, progress = FALSE)))
    c(log_evidence = fit$log_evidence, se = fit$log_evidence_se, k = fit$pareto_k,
      seconds = seconds)
  }
  first <- matrix(NA_real_, length(codes), 4L)
  for (i in seq_along(codes)) {
    first[i, ] <- one(i, 2000, 100000 + codes[i])
    if (i %% 64L == 0L) cat(sprintf("  %d of %d models, %.0f s so far\n", i, length(codes),
                                    sum(first[, 4], na.rm = TRUE)))
  }
  p_first <- exp(first[, 1] - max(first[, 1]))
  p_first <- p_first / sum(p_first)
  again <- which(p_first >= 1e-4)
  cat(sprintf("  %d models of probability >= 1e-4 again with 20,000 draws\n", length(again)))
  second <- t(vapply(again, function(i) one(i, 20000, 200000 + codes[i]), numeric(4)))
  log_z <- first[, 1]
  log_z[again] <- second[, 1]
  se <- first[, 2]
  se[again] <- second[, 2]
  k <- first[, 3]
  k[again] <- second[, 3]
  p <- exp(log_z - max(log_z))
  p <- p / sum(p)
  cat(sprintf(paste("  largest Pareto k %.2f (2,000 draws) and %.2f (20,000); the two estimates",
                    "of the models done twice differ by at most %.4f nats (largest SE %.4f)\n"),
              max(first[, 3]), max(second[, 3]), max(abs(second[, 1] - first[again, 1])),
              max(first[again, 2])))
  models <- data.frame(
    model = rhs, size = rowSums(included), log_evidence = round(log_z, 5),
    log_evidence_se = signif(se, 3), pareto_k = round(k, 3),
    draws = ifelse(seq_along(codes) %in% again, 20000L, 2000L),
    log_evidence_2000 = ifelse(seq_along(codes) %in% again, round(first[, 1], 5), NA),
    probability = signif(p, 5), search_probability = NA_real_, search_method = NA_character_,
    how = c(sprintf(paste(
      "sgais %s logistic_regression(y ~ <model>, data) (default prior), importance_sampling(draws",
      "= 2000, seed = 100000 + code), and draws = 20000, seed = 200000 + code for the models of",
      "probability >= 1e-4 under a uniform prior over the 1,024 models (log_evidence_2000 keeps",
      "their first estimate), the code of a model being sum(2^(k - 1)) over its terms xk;",
      "%.0f s in all on one thread; %s; %s"), utils::packageVersion("sgais"),
      sum(first[, 4]) + sum(second[, 4]), data_how, today), rep("", length(codes) - 1L)),
    stringsAsFactors = FALSE)
  search_run <- run_search()
  write_csv(with_search(models, search_run), "model-search-logistic.csv")
}

# From the stored models (the part above, which need not run again): the reference's inclusion
# probabilities, the vignette's model_search() run and BAS's, side by side; the search's columns
# of the models' file are written again from this run.
if ("logistic-inclusion" %in% parts) {
  models <- utils::read.csv(file.path(extdata, "model-search-logistic.csv"),
                            stringsAsFactors = FALSE)
  if (!grepl(fingerprint, models$how[1], fixed = TRUE) || !identical(models$model, rhs)) {
    stop("inst/extdata/model-search-logistic.csv was not made from simulate_logistic_search()'s ",
         "data (fingerprint ", fingerprint, "): run the part `logistic` again.", call. = FALSE)
  }
  # an older file had the search's provenance on its first row too
  models$how[1] <- sub("; search_\\*: .*?; data: ", "; data: ", models$how[1])
  reference_seconds <- as.numeric(sub(".*; ([0-9.]+) s in all.*", "\\1", models$how[1]))
  if (!exists("search_run")) search_run <- run_search()
  old <- models$search_probability
  shared <- !is.na(old)
  cat(sprintf(paste("model_search(seed = 1): %.1f s; %d models with accurate evidence; its",
                    "probabilities differ from the stored ones by at most %.2e (%d models",
                    "stored)\n"), search_run$seconds, sum(search_run$method != "screen"),
              max(abs(search_run$probability[shared] - old[shared])), sum(shared)))
  models <- with_search(models, search_run)
  write_csv(models, "model-search-logistic.csv")
  p <- models$probability / sum(models$probability)
  members <- included * 1
  bas_glm <- function(prior) {
    f <- function() {
      if (prior == "default") {
        bas.glm(y ~ ., family = binomial(), data = d, method = "deterministic",
                modelprior = uniform())
      } else {
        bas.glm(y ~ ., family = binomial(), data = d, method = "deterministic",
                modelprior = uniform(), betaprior = g.prior(nrow(d)))
      }
    }
    fit <- f()
    seconds <- median_time(f, 3)
    data.frame(source = "BAS", prior = if (prior == "default") "CCH(0.5, n, 0)" else "g.prior(n)",
               term = fit$namesx[-1], inclusion_probability = fit$probne0[-1], seconds = seconds,
               how = sprintf(paste("BAS %s bas.glm(y ~ ., family = binomial(), data, method =",
                                   "\"deterministic\", modelprior = uniform()%s): probne0, from",
                                   "BAS's approximations of the evidence; seconds: median elapsed",
                                   "of 3 runs; %s; %s"), utils::packageVersion("BAS"),
                             if (prior == "default") "" else ", betaprior = g.prior(nrow(data))",
                             data_how, today),
               stringsAsFactors = FALSE)
  }
  inclusion <- rbind(
    data.frame(source = "reference", prior = "default", term = terms,
               inclusion_probability = drop(p %*% members), seconds = reference_seconds,
               how = sprintf(paste("the stored probabilities of all 1,024 models in",
                                   "model-search-logistic.csv (every evidence by",
                                   "importance_sampling(); uniform prior over the models),",
                                   "renormalised; seconds: that file's; %s; %s"), data_how, today),
               stringsAsFactors = FALSE),
    data.frame(source = "sgais", prior = "default", term = terms,
               inclusion_probability = unname(search_run$search$inclusion[terms]),
               seconds = search_run$seconds, how = search_run$run,
               stringsAsFactors = FALSE),
    bas_glm("default"), bas_glm("g"))
  side <- data.frame(term = terms)
  for (s in split(inclusion, paste(inclusion$source, inclusion$prior))) {
    side[[paste(s$source[1], s$prior[1])]] <- round(s$inclusion_probability[match(terms, s$term)],
                                                    4)
  }
  print(side, row.names = FALSE)
  cat(sprintf("seconds: %s\n", paste(sprintf("%s %s %.1f", inclusion$source, inclusion$prior,
                                             inclusion$seconds)[!duplicated(
                                               paste(inclusion$source, inclusion$prior))],
                                     collapse = "; ")))
  write_csv(inclusion, "model-search-logistic-inclusion.csv")
}
