# Measurements of model_search() against its targets, side by side in one run:
#   1. Boston, all 2^13 models under zellner_siow_prior(1) (BAS's "JZS"), g_prior() and
#      zellner_siow_prior() (BayesFactor's default): the largest inclusion-probability
#      differences against BAS (run here) and BayesFactor (stored), the log Bayes factor of
#      medv ~ crim + rm against medv ~ rm, and our time against bas.lm()'s, alone and with
#      coef() (the model-averaged coefficients, which model_search() computes too), in this run;
#   2. Boston with 20 noise covariates (33 terms) by MCMC: accuracy against the stored long chain,
#      and time against BAS's MCMC (run here with 1e5 iterations; stored with 1e6);
#   3. a linear stream of 10^6 rows with 15 candidates whose x7 starts to matter at row 500,001:
#      x7's inclusion probability along the rows, and the whole search's time;
#   4. logistic regression, 10 candidates, 2e4 rows: the top 20 models' probabilities, every
#      inclusion probability and the probability left to the screen (mass_outside) against the
#      stored enumeration of all 1,024 models, and the time (seeds 1 and 2).
# The references are made by model-search-references.R (inst/extdata/model-search-*.csv), the
# data by model-search-data.R. Overwrites inst/validation/model-search.txt with what it prints.
#   Rscript inst/validation/model-search.R     (from the package root; sgais and BAS installed;
#                                               one thread, about 2 minutes)
source(file.path("inst", "validation", "model-search-data.R")) # sgais, BAS, suite.R
reference <- function(name) {
  utils::read.csv(file.path("inst", "extdata", name), stringsAsFactors = FALSE)
}
out <- character(0)
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n", sep = "")
  out <<- c(out, line)
}
elapsed <- function(expr) system.time(expr)[["elapsed"]]
verdict <- function(ok) if (ok) "pass" else "FAIL"
# median elapsed seconds of each function in `fs`, their runs interleaved so that they share the
# machine's load
race <- function(fs, reps = 5) {
  times <- matrix(NA_real_, reps, length(fs), dimnames = list(NULL, names(fs)))
  for (r in seq_len(reps)) for (f in names(fs)) times[r, f] <- elapsed(fs[[f]]())
  apply(times, 2L, stats::median)
}
largest <- function(a, b) {
  d <- abs(a - b[names(a)])
  sprintf("%.1e (%s)", max(d), names(a)[which.max(d)])
}
quiet <- function(code) suppressWarnings(code)

say("model_search() validation: sgais %s, BAS %s, %s", utils::packageVersion("sgais"),
    utils::packageVersion("BAS"), R.version.string)
say("%s; one thread; load average at the start %s", format(Sys.time(), "%F %H:%M"),
    paste(utils::head(scan("/proc/loadavg", what = "", quiet = TRUE), 3), collapse = " "))

# ---- 1. Boston, 13 terms -----------------------------------------------------------------------
boston <- MASS::Boston
refs <- reference("model-search-boston.csv")
stored <- function(source, prior) {
  r <- refs[refs$source == source & refs$prior == prior, ]
  stats::setNames(r$inclusion_probability, r$term)
}
say("")
say("1. MASS::Boston, medv ~ . (13 terms, all 8,192 models), uniform prior over the models")
say(paste("   target: every inclusion probability within 0.005 of BAS's and BayesFactor's, in",
          "no more time than BAS's bas.lm() and coef() (what model_search() returns: the",
          "inclusion probabilities and the model-averaged coefficients)"))
bas_lm <- function(...) {
  bas.lm(medv ~ ., boston, method = "deterministic", modelprior = uniform(), ...)
}
runs <- list(
  "zellner_siow_prior(1)" = list(
    ours = function() model_search(medv ~ ., boston, prior = zellner_siow_prior(1),
                                   progress = FALSE),
    bas = function() bas_lm(prior = "JZS"),
    bas_coef = function() coef(bas_lm(prior = "JZS"))),
  "g_prior()" = list(
    ours = function() model_search(medv ~ ., boston, prior = g_prior(), progress = FALSE),
    bas = function() bas_lm(prior = "g-prior", alpha = nrow(boston)),
    bas_coef = function() coef(bas_lm(prior = "g-prior", alpha = nrow(boston)))),
  "zellner_siow_prior()" = list(
    ours = function() model_search(medv ~ ., boston, prior = zellner_siow_prior(),
                                   progress = FALSE)))
say("   seconds: medians of 7 runs, interleaved with BAS's")
pass_boston <- TRUE
for (prior in names(runs)) {
  r <- runs[[prior]]
  ours <- r$ours()$inclusion
  times <- race(r, 7)
  line <- sprintf("   %-22s model_search %.3f s", prior, times[["ours"]])
  gaps <- numeric(0)
  if (!is.null(r$bas)) {
    bas <- r$bas()
    bas_pip <- stats::setNames(bas$probne0[-1], bas$namesx[-1])
    gaps <- c(gaps, max(abs(ours - bas_pip[names(ours)])))
    line <- sprintf("%s, bas.lm() %.3f s, with coef() %.3f s; largest |difference| from BAS %s",
                    line, times[["bas"]], times[["bas_coef"]], largest(ours, bas_pip))
    pass_boston <- pass_boston && times[["ours"]] <= times[["bas_coef"]]
  }
  if (prior %in% refs$prior[refs$source == "BayesFactor"]) {
    bf <- stored("BayesFactor", prior)
    gaps <- c(gaps, max(abs(ours - bf[names(ours)])))
    line <- sprintf("%s; from BayesFactor (stored) %s", line, largest(ours, bf))
  }
  pass_boston <- pass_boston && all(gaps <= 0.005)
  say("%s", line)
}
say(paste("   (the enumeration alone against bas.lm() alone: inst/bench/linear-search.R;",
          "model_search() also averages the coefficients over the models)"))
bf_seconds <- unique(refs$seconds[refs$source == "BayesFactor"])
say("   BayesFactor's regressionBF() took %s s (stored runs)",
    paste(sprintf("%.0f", bf_seconds), collapse = " and "))
# the log Bayes factor of crim + rm against rm under r = 1, from the search's table of every model
all_models <- model_search(medv ~ ., boston, prior = zellner_siow_prior(1), top = 8192,
                           progress = FALSE)$models
terms <- setdiff(names(boston), "medv")
with_terms <- function(v) {
  which(apply(as.matrix(all_models[terms]), 1L, function(m) setequal(terms[m], v)))
}
ours_bf <- all_models$log_evidence[with_terms(c("crim", "rm"))] -
  all_models$log_evidence[with_terms("rm")]
bas_fit <- runs[["zellner_siow_prior(1)"]]$bas()
which_bas <- function(v) {
  idx <- sort(c(0L, match(v, bas_fit$namesx) - 1L))
  Position(function(w) identical(sort(as.integer(w)), idx), bas_fit$which)
}
bas_bf <- bas_fit$logmarg[which_bas(c("crim", "rm"))] - bas_fit$logmarg[which_bas("rm")]
bf_bf <- unique(refs$log_bf_crim_rm_vs_rm[refs$source == "BayesFactor" &
                                             refs$prior == "zellner_siow_prior(1)"])
say(paste("   log BF(crim + rm : rm) under zellner_siow_prior(1): model_search %.4f, BAS %.4f,",
          "BayesFactor %.4f (stored); target 26.9210"),
    ours_bf, bas_bf, bf_bf)
pass_boston <- pass_boston && all(sprintf("%.4f", c(ours_bf, bas_bf, bf_bf)) == "26.9210")
say("   Boston: %s", verdict(pass_boston))

# ---- 2. Boston with 20 noise covariates, 33 terms ----------------------------------------------
noisy <- boston_noise()
noise_refs <- reference("model-search-noise.csv")
stopifnot(grepl(data_fingerprint(noisy), noise_refs$how[1], fixed = TRUE))
long <- noise_refs[noise_refs$source == "reference", ]
long <- stats::setNames(long$inclusion_probability, long$term)
check <- noise_refs[noise_refs$source == "check", ]
say("")
say(paste("2. Boston + 20 noise covariates (33 terms), zellner_siow_prior(1), beta-binomial(1, 1)",
          "prior over the models"))
say(paste("   target: inclusion probabilities within 0.02 of a long run, in no more time than",
          "BAS's MCMC at that accuracy"))
say(paste("   reference: model_search(method = \"mcmc\"), 5e6 iterations (%.0f s, %s models",
          "visited); a second chain of 5e6 differs by at most %.4f"),
    noise_refs$seconds[noise_refs$source == "reference"][1],
    format(noise_refs$models_visited[noise_refs$source == "reference"][1], big.mark = ","),
    max(abs(check$inclusion_probability - long[check$term])))
search_noise <- function(iterations, seed) {
  seconds <- elapsed(s <- withCallingHandlers(
    model_search(medv ~ ., noisy, prior = zellner_siow_prior(1), model_prior = "beta-binomial",
                 method = "mcmc", iterations = iterations, seed = seed, progress = FALSE),
    sgais_warning_unconverged = function(w) invokeRestart("muffleWarning")))
  c(seconds = seconds, error = max(abs(s$inclusion - long[names(s$inclusion)])),
    visited = s$visited)
}
ours_noise <- list()
for (iterations in c(1e5, 2e5)) {
  for (seed in 1:3) {
    r <- search_noise(iterations, seed)
    ours_noise[[length(ours_noise) + 1L]] <- c(iterations = iterations, seed = seed, r)
    say("   model_search, %.0e iterations (seed %d)%s: %5.2f s, largest |PIP - reference| %.4f",
        iterations, seed, if (iterations == 2e5) " (the default)" else "", r[["seconds"]],
        r[["error"]])
  }
}
ours_noise <- as.data.frame(do.call(rbind, ours_noise))
set.seed(1)
bas_seconds <- elapsed(bas <- bas.lm(medv ~ ., noisy, prior = "JZS", method = "MCMC",
                                     MCMC.iterations = 1e5, modelprior = beta.binomial(1, 1)))
bas_error <- max(abs(bas$probne0.RN[-1] - long[bas$namesx[-1]]))
bas_freq_error <- max(abs(bas$probne0.MCMC[-1] - long[bas$namesx[-1]]))
say(paste("   BAS MCMC, 1e5 iterations (this run): %.2f s, largest |PIP - reference| %.4f",
          "renormalised, %.4f frequencies"),
    bas_seconds, bas_error, bas_freq_error)
for (s in split(noise_refs[noise_refs$source == "BAS", ],
                noise_refs$iterations[noise_refs$source == "BAS"])) {
  say(paste("   BAS MCMC, %.0e iterations (stored run): %.2f s, largest |PIP - reference| %.4f",
            "renormalised, %.4f frequencies"),
      s$iterations[1], s$seconds[1], max(abs(s$inclusion_probability - long[s$term])),
      max(abs(s$frequency - long[s$term])))
}
default_runs <- ours_noise[ours_noise$iterations == 2e5, ]
bas_runs <- noise_refs[noise_refs$source == "BAS", ]
bas_accuracy <- vapply(split(bas_runs, bas_runs$iterations), function(s) {
  max(abs(s$inclusion_probability - long[s$term]))
}, numeric(1))
# the cheapest BAS run as accurate as our worst default run: its time is what BAS needs
as_accurate <- c(if (bas_error <= max(default_runs$error)) bas_seconds,
                 vapply(names(bas_accuracy)[bas_accuracy <= max(default_runs$error)], function(i) {
                   bas_runs$seconds[bas_runs$iterations == as.numeric(i)][1]
                 }, numeric(1)))
bas_needs <- if (length(as_accurate)) min(as_accurate) else NA_real_
say("   default iterations: largest error %.4f, at most %.2f s; BAS's first run as accurate: %s",
    max(default_runs$error), max(default_runs$seconds),
    if (is.na(bas_needs)) "none of the BAS runs" else sprintf("%.1f s", bas_needs))
pass_noise <- max(default_runs$error) <= 0.02 && !is.na(bas_needs) &&
  max(default_runs$seconds) <= bas_needs
say("   p = 33: %s", verdict(pass_noise))

# ---- 3. a linear stream with a change ----------------------------------------------------------
say("")
say(paste("3. A linear stream of 10^6 rows in blocks of 10^4, 15 candidates (default prior), x7's",
          "coefficient 0 up to row 500,000 and 0.05 after"))
say(paste("   target: x7's inclusion probability below 0.2 before the change and above 0.5 after",
          "it; the search in at most 10 s on one thread"))
make_seconds <- elapsed(blocks <- simulate_shift_stream())
stream_seconds <- elapsed(stream <- model_search(y ~ ., block_source(blocks), block_size = 1e4,
                                                 seed = 1, progress = FALSE))
rm(blocks)
along <- inclusion_probabilities(stream, along = TRUE)
before <- along$n <= 5e5
crossing <- along$n[!before & along$x7 > 0.5][1]
stays <- all(along$x7[along$n >= crossing] > 0.5)
null_terms <- paste0("x", 6:15)[paste0("x", 6:15) != "x7"]
say(paste("   %d checkpoints; x7's largest inclusion probability up to row 500,000: %.4f; first",
          "above 0.5 at row %s, and %s after"),
    nrow(along), max(along$x7[before]), format(crossing, big.mark = ","),
    if (stays) "above 0.5 at every checkpoint" else "not at every checkpoint")
shown <- c(5e5, 5.3e5, 5.5e5, 5.6e5, 5.7e5, 6e5, 1e6)
say("   x7 at rows %s: %s",
    paste(format(shown, big.mark = ",", scientific = FALSE, trim = TRUE), collapse = ", "),
    paste(sprintf("%.3f", along$x7[match(shown, along$n)]), collapse = ", "))
say("   the other zero coefficients' largest inclusion probability at any checkpoint: %.4f",
    max(as.matrix(along[null_terms])))
say(paste("   the search: %.2f s (32,768 models at each of %d checkpoints; simulating the rows",
          "took %.2f s more)"),
    stream_seconds, nrow(along), make_seconds)
pass_stream <- max(along$x7[before]) < 0.2 && !is.na(crossing) && stays && stream_seconds <= 10
say("   stream: %s", verdict(pass_stream))

# ---- 4. logistic regression, 10 candidates, 2e4 rows -------------------------------------------
logit <- simulate_logistic_search()
logit_refs <- reference("model-search-logistic.csv")
stopifnot(grepl(data_fingerprint(logit), logit_refs$how[1], fixed = TRUE))
logit_inclusion <- reference("model-search-logistic-inclusion.csv")
ref_pip <- logit_inclusion[logit_inclusion$source == "reference", ]
ref_pip <- stats::setNames(ref_pip$inclusion_probability, ref_pip$term)
say("")
say(paste("4. Logistic regression, 10 candidates, 2e4 rows (default prior), uniform prior over",
          "the models"))
say(paste("   target: the top 20 models' probabilities within 0.02 and every inclusion",
          "probability within 0.03 of"))
say("   full enumeration with accurate evidence, in at most 60 s")
say(paste("   reference: every model's evidence by importance_sampling() (%d with 2,000 draws,",
          "%d with 20,000; largest Pareto k %.2f)"),
    sum(logit_refs$draws == 2000), sum(logit_refs$draws == 20000), max(logit_refs$pareto_k))
pass_logit <- TRUE
logit_terms <- paste0("x", 1:10)
for (seed in 1:2) {
  seconds <- elapsed(search <- model_search(y ~ ., logit, family = "binomial", seed = seed,
                                            progress = FALSE))
  m <- search$models
  rhs <- apply(as.matrix(m[logit_terms]), 1L, function(v) {
    if (any(v)) paste(logit_terms[v], collapse = " + ") else "1"
  })
  ref_p <- logit_refs$probability[match(rhs, logit_refs$model)]
  top_gap <- max(abs(m$probability - ref_p))
  pip_gap <- max(abs(search$inclusion - ref_pip[names(search$inclusion)]))
  ref_top <- logit_refs$model[order(-logit_refs$probability)][1:20]
  say("   seed %d: %.1f s; %d models with accurate evidence, %.1e of the probability screened only",
      seed, seconds, sum(search$state$result$estimator != "screen"), search$mass_outside)
  say(paste("     top 20 models: largest |probability - reference| %.4f (%s); %d of the",
            "reference's top 20 among them"),
      top_gap, rhs[which.max(abs(m$probability - ref_p))], sum(ref_top %in% rhs))
  say("     inclusion probabilities: largest |difference| %s", largest(search$inclusion, ref_pip))
  pass_logit <- pass_logit && top_gap <= 0.02 && pip_gap <= 0.03 && seconds <= 60
}
say("   logistic: %s", verdict(pass_logit))

writeLines(out, file.path(validation_dir, "model-search.txt"))
