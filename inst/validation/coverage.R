# Standard-error coverage on small data: does the standard error a single run reports cover the
# reference as often as it says?
#
#   Rscript inst/validation/coverage.R [--seeds=100] [--slow-seeds=50] [--estimators=name,...]
#                                      [--cases=id,...] [--out=file.csv] [--references]
#
# Every estimator at its defaults, f(model, seed = s, progress = FALSE) with seeds 1, ..., --seeds
# (1, ..., --slow-seeds for nested_sampling() and online_nested_sampling(), whose runs take 10 to
# 100 times as long here) (one replicate: the SE is the one a single run reports), on small
# data (n <= 500): linear
# regressions with unknown noise (normal-inverse-gamma, prior = "autoscale"), on real data and
# simulated to vary what the paper held fixed (noise level, number of covariates, units of the
# response, correlated covariates), whose evidence is exact (exact_log_evidence()), and logistic
# regressions under their default prior, whose references are computed apart from the package
# (below). For each run it records the estimate, the SE, error = estimate - reference,
# z = error / SE, the seconds and the warnings, and per estimator x case it prints the coverage
# of +/- 2 SE (the fraction of runs with |z| <= 2; a run without a finite positive SE, or that
# failed, does not cover), the mean error (bias), the sd of the errors, the mean SE, their ratio
# sd(error) / mean(SE) (1 for an SE that is right on average) and the median seconds. A cell is
# marked "<90%" below 90% coverage. With an honest SE and normal errors (95.4% within 2 SE) a
# cell of 50 seeds falls below 90% (6 misses or more) with probability 0.025, of 100 seeds
# 0.006; with a true coverage of 92% (an SE 10% small), 0.21 and 0.18: a cell just under 90%
# is read with its ratio sd(error) / mean(SE).
#
# The runs are written to one CSV file (default inst/validation/coverage.csv), one row per run,
# overwritten at each cell; with --estimators or --cases, the stored rows of the other cells are
# kept, so a subset can be rerun after a change. vignette("validation") reads it.
#
# References of the logistic regressions: no closed form, so they come from an importance sampler
# written here in R (logistic_is_reference(): the log posterior by plogis() and dnorm(), the mode
# by optim(), a t(5) proposal at the mode with the inverse Hessian as scale, 200,000 draws), which
# shares no code with the package; checked against the package's importance_sampling() with
# 200,000 draws and a long ais() (5,000 particles), and, for the model of two parameters, a grid
# quadrature (quadrature.R). They are stored in coverage-references.csv with how they were
# obtained; --references recomputes them (about a minute). Each run checks that the stored value
# still belongs to the model (the package's importance sampling with 20,000 draws within 5 of its
# SEs), and stops if not: a changed default prior needs --references.
#
# Run from the package's root with sgais installed. The fits run one after another on one thread
# (sgais_threads(1): on data this small a second thread only adds overhead), so the seconds are
# comparable between runs; the stored runs' fits took 35 minutes in all.

started <- proc.time()[["elapsed"]]
suppressMessages(library(sgais))
`%||%` <- function(x, y) if (is.null(x)) y else x
source(file.path("inst", "validation", "suite.R"))
args <- commandArgs(TRUE)
seeds <- seq_len(as.integer(opt("seeds", "100")))
slow_seeds <- seq_len(as.integer(opt("slow-seeds", "50")))
slow <- c("nested_sampling", "online_nested_sampling")
only_estimators <- opt("estimators", "")
only_cases <- opt("cases", "")
out_file <- opt("out", file.path(validation_dir, "coverage.csv"))
ref_file <- file.path(validation_dir, "coverage-references.csv")
make_references <- "--references" %in% args

sgais_threads(1)
source(file.path(validation_dir, "cases.R"))            # simulate_regression(), nig_real_case(), case_reference()
source("tests/testthat/helper-glm.R")         # grid_log_evidence(), t_importance_evidence()
source(file.path(validation_dir, "quadrature.R"))       # logistic_grid_reference()

# ---- the cases -------------------------------------------------------------------------------
# Each is a case as in cases.R (`id`, `what`, `model`, `reference`: "exact" or a stored number).

# A simulated linear regression (cases.R's simulate_regression()) with unknown noise and the
# default prior; `scale` multiplies the response (its units).
nig_sim_case <- function(id, what, n, p, noise_sd, seed, scale = 1, ...) {
  list(id = id, what = paste(what, "(simulated; unknown noise, default prior; exact)"),
       model = function() {
         d <- simulate_regression(n, p, noise_sd, seed, ...)
         linear_regression(x = d$x, y = scale * d$y, noise_sd = NULL)
       },
       reference = "exact")
}

# The data of the simulated logistic regressions: n rows of p standard normal covariates
# (standardised exactly, so that under prior = "autoscale" every coefficient's prior is
# N(0, 2.5^2) and the two-parameter model is the grid's) and P(y = 1) = plogis(b0 + x'b).
logistic_data <- function(n, p, b0, b, seed) {
  sgais:::with_seed(seed, {
    x <- scale(matrix(stats::rnorm(n * p), n, p))
    colnames(x) <- paste0("x", seq_len(p))
    data.frame(x, y = stats::rbinom(n, 1, stats::plogis(b0 + drop(x %*% b))))
  })
}

logistic_case <- function(id, what, formula, data) {
  list(id = id, what = paste(what, "(default prior; reference: coverage-references.csv)"),
       formula = formula, data = data,
       model = function() logistic_regression(formula, data),
       reference = "stored")
}

coverage_cases <- function() {
  sim_logistic_2 <- logistic_data(300, 1, -0.5, 1.2, seed = 21)
  list(
    nig_real_case("mtcars_3", "mtcars, mpg ~ wt + hp + qsec", mpg ~ wt + hp + qsec, datasets::mtcars),
    nig_real_case("mtcars_2", "mtcars, mpg ~ wt + hp", mpg ~ wt + hp, datasets::mtcars),
    nig_real_case("swiss", "swiss, Fertility ~ .", Fertility ~ ., datasets::swiss),
    nig_real_case("birthwt_bwt", "MASS::birthwt, bwt ~ age + lwt + race + smoke + ptl + ht + ui",
                  bwt ~ age + lwt + factor(race) + smoke + ptl + ht + ui, MASS::birthwt),
    nig_sim_case("sim_n100_sd03", "n = 100, 3 covariates, noise sd 0.3", 100, 3, 0.3, seed = 31),
    nig_sim_case("sim_n500_p10", "n = 500, 10 covariates, noise sd 1", 500, 10, 1, seed = 32),
    nig_sim_case("sim_units_1000", "n = 200, 3 covariates, response x 1000", 200, 3, 1, seed = 33,
                 scale = 1000),
    nig_sim_case("sim_correlated", "n = 200, 3 covariates correlated at 0.95", 200, 3, 1,
                 seed = 34, rho = 0.95),
    logistic_case("birthwt_low", "MASS::birthwt, logistic low ~ age + lwt + smoke + ht",
                  low ~ age + lwt + smoke + ht, MASS::birthwt),
    logistic_case("sim_logistic_2", "n = 300, logistic y ~ x1 (2 parameters)", y ~ x1,
                  sim_logistic_2)
  )
}

# ---- references of the logistic regressions --------------------------------------------------

# The evidence of logistic_regression(formula, data) under its default prior, computed here
# without the package: the covariates centred at their means, the intercept N(0, 2.5^2) and each
# slope N(0, (2.5 / sd(x_j))^2) (?logistic_regression, prior = "autoscale"); importance sampling
# from a multivariate t(df) at the posterior mode with the inverse Hessian there as scale
# (the log posterior is concave), `draws` draws (t_importance_evidence() of helper-glm.R).
# Returns the log evidence, its delta-method SE and the ESS.
logistic_is_reference <- function(formula, data, draws = 2e5, seed = 1, df = 5) {
  mf <- stats::model.frame(formula, data)
  y <- stats::model.response(mf)
  a <- stats::model.matrix(formula, mf)
  slopes <- colnames(a) != "(Intercept)"
  a[, slopes] <- sweep(a[, slopes, drop = FALSE], 2, colMeans(a[, slopes, drop = FALSE]))
  prior_sd <- ifelse(slopes, 2.5 / apply(a, 2, stats::sd), 2.5)
  sign <- 2 * y - 1
  log_post <- function(theta) { # theta: d x B
    eta <- a %*% theta
    colSums(stats::plogis(sign * eta, log.p = TRUE)) +
      colSums(stats::dnorm(theta, sd = prior_sd, log = TRUE))
  }
  gradient <- function(th) {
    drop(crossprod(a, y - stats::plogis(drop(a %*% th)))) - th / prior_sd^2
  }
  mode <- stats::optim(rep(0, ncol(a)), function(th) -log_post(matrix(th)), function(th) -gradient(th),
                       method = "BFGS", control = list(reltol = 1e-14, maxit = 1000))$par
  p <- stats::plogis(drop(a %*% mode))
  H <- crossprod(a, a * (p * (1 - p))) + diag(1 / prior_sd^2, ncol(a))
  t_importance_evidence(log_post, mode, H, draws, seed, df, block = 5000) # helper-glm.R
}

# Computes the references of the logistic cases and their checks, and writes them to `file`.
write_references <- function(cases, file) {
  rows <- lapply(Filter(function(k) identical(k$reference, "stored"), cases), function(k) {
    message(sprintf("  reference of %s", k$id))
    model <- k$model()
    t0 <- proc.time()[["elapsed"]]
    ref <- logistic_is_reference(k$formula, k$data)
    is_fit <- importance_sampling(model, draws = 2e5, seed = 1, progress = FALSE)
    ais_fit <- ais(model, particles = 5000, seed = 1, progress = FALSE)
    grid <- if (model$dim == 2L) {
      x <- k$data[[all.vars(k$formula)[2]]]
      logistic_grid_reference(x, k$data$y, 2.5)
    } else c(reference = NA, error = NA)
    data.frame(case = k$id, n = model$n, dim = model$dim,
               reference = round(ref[["log_evidence"]], 6), reference_se = signif(ref[["se"]], 3),
               method = sprintf("importance sampling in R (t(5) at the mode, 200,000 draws, ESS %.0f)",
                                ref[["ess"]]),
               check_importance_sampling = round(is_fit$log_evidence, 6),
               check_importance_sampling_se = signif(is_fit$log_evidence_se, 3),
               check_ais_5000 = round(ais_fit$log_evidence, 6),
               check_ais_5000_se = signif(ais_fit$log_evidence_se, 3),
               check_grid = round(grid[["reference"]], 6),
               seconds = round(proc.time()[["elapsed"]] - t0, 1), stringsAsFactors = FALSE)
  })
  refs <- do.call(rbind, rows)
  utils::write.csv(refs, file, row.names = FALSE)
  refs
}

# The stored reference of case `k` for its `model`, after checking that it still belongs to it.
stored_reference <- function(k, model, refs) {
  r <- refs[refs$case == k$id, ]
  if (nrow(r) != 1L) stop(sprintf("no reference for %s in %s: run with --references", k$id, ref_file),
                          call. = FALSE)
  check <- importance_sampling(model, draws = 2e4, seed = 99, progress = FALSE)
  if (abs(check$log_evidence - r$reference) > max(0.02, 5 * check$log_evidence_se)) {
    stop(sprintf(paste("the stored reference of %s (%.4f) is not the model's (importance sampling:",
                       "%.4f +/- %.4f): the model or its prior changed; run with --references"),
                 k$id, r$reference, check$log_evidence, check$log_evidence_se), call. = FALSE)
  }
  r$reference
}

# ---- the estimators --------------------------------------------------------------------------

estimators <- mget(c("importance_sampling", "ais", "nested_sampling", "sir", "sequential_sgmcmc",
                     "sgais", "online_nested_sampling"), envir = asNamespace("sgais"))

# One run at the defaults: the fit, or the error; the classes of its warnings (muffled).
run_one <- function(f, model, seed) {
  warned <- character(0)
  t0 <- proc.time()[["elapsed"]]
  res <- tryCatch(
    withCallingHandlers(list(fit = f(model, seed = seed, progress = FALSE)),
                        warning = function(w) {
                          warned <<- c(warned, class(w)[1])
                          invokeRestart("muffleWarning")
                        }),
    error = function(e) list(error = conditionMessage(e))
  )
  res$seconds <- proc.time()[["elapsed"]] - t0
  res$warnings <- paste(unique(warned), collapse = ";")
  res
}

# One row per estimator x case of the runs `d`.
summarise_cells <- function(d) {
  cells <- unique(d[c("estimator", "case")])
  do.call(rbind, lapply(seq_len(nrow(cells)), function(i) {
    x <- d[d$estimator == cells$estimator[i] & d$case == cells$case[i], ]
    ok <- is.finite(x$error)
    covered <- ok & is.finite(x$z) & abs(x$z) <= 2
    sd_error <- if (sum(ok) > 1) stats::sd(x$error[ok]) else NA_real_
    mean_se <- mean(x$se[ok & is.finite(x$se)])
    data.frame(estimator = cells$estimator[i], case = cells$case[i], n = x$n[1], runs = nrow(x),
               failed = sum(!ok), warned = sum(nzchar(x$warnings)),
               coverage = mean(covered), bias = mean(x$error[ok]), sd_error = sd_error,
               mean_se = mean_se, ratio = sd_error / mean_se,
               rmse_over_se = sqrt(mean(x$z[ok]^2)),
               median_seconds = stats::median(x$seconds), stringsAsFactors = FALSE)
  }))
}

print_cells <- function(s) {
  cat(sprintf("%-22s %-15s %4s %4s %8s %8s %8s %8s %6s %7s %5s %5s\n", "estimator", "case", "n",
              "runs", "coverage", "bias", "sd(err)", "mean SE", "ratio", "median s", "fail",
              "warn"))
  for (i in seq_len(nrow(s))) {
    x <- s[i, ]
    cat(sprintf("%-22s %-15s %4d %4d %7.0f%% %+8.3f %8.3f %8.3f %6.2f %7.2f %5d %5d%s\n",
                x$estimator, x$case, x$n, x$runs, 100 * x$coverage, x$bias, x$sd_error,
                x$mean_se, x$ratio, x$median_seconds, x$failed, x$warned,
                if (x$coverage < 0.9) "  <90%" else ""))
  }
}

# ---- run -------------------------------------------------------------------------------------

cases <- coverage_cases()
if (make_references) {
  refs <- write_references(cases, ref_file)
  print(refs, row.names = FALSE)
  cat(sprintf("references written to %s\n", ref_file))
  quit(status = 0)
}
refs <- utils::read.csv(ref_file, stringsAsFactors = FALSE)
if (nzchar(only_cases)) {
  wanted <- strsplit(only_cases, ",")[[1]]
  unknown <- setdiff(wanted, vapply(cases, `[[`, "", "id"))
  if (length(unknown)) stop("unknown case: ", paste(unknown, collapse = ", "), call. = FALSE)
  cases <- Filter(function(k) k$id %in% wanted, cases)
}
if (nzchar(only_estimators)) {
  wanted <- strsplit(only_estimators, ",")[[1]]
  unknown <- setdiff(wanted, names(estimators))
  if (length(unknown)) stop("unknown estimator: ", paste(unknown, collapse = ", "), call. = FALSE)
  estimators <- estimators[wanted]
}
subset <- nzchar(only_cases) || nzchar(only_estimators)
kept <- if (subset && file.exists(out_file)) utils::read.csv(out_file, stringsAsFactors = FALSE)

rows <- list()
write_out <- function() {
  runs <- do.call(rbind, rows)
  if (!is.null(kept)) {
    other <- !paste(kept$estimator, kept$case) %in% paste(runs$estimator, runs$case)
    runs <- rbind(kept[other, names(runs)], runs)
  }
  utils::write.csv(runs, out_file, row.names = FALSE)
}
for (k in cases) {
  model <- k$model()
  reference <- if (identical(k$reference, "stored")) stored_reference(k, model, refs) else
    case_reference(k, model)
  for (name in names(estimators)) {
    t0 <- proc.time()[["elapsed"]]
    cell <- lapply(if (name %in% slow) slow_seeds else seeds, function(s) {
      r <- run_one(estimators[[name]], model, s)
      estimate <- if (is.null(r$fit)) NA_real_ else r$fit$log_evidence
      se <- if (is.null(r$fit)) NA_real_ else r$fit$log_evidence_se %||% NA_real_
      data.frame(estimator = name, case = k$id, n = model$n, dim = model$dim, seed = s,
                 reference = reference, estimate = estimate, se = se,
                 error = estimate - reference,
                 z = if (is.finite(se) && se > 0) (estimate - reference) / se else NA_real_,
                 seconds = round(r$seconds, 3), warnings = r$warnings,
                 failure = if (is.null(r$error)) "" else gsub("\\s+", " ", r$error),
                 stringsAsFactors = FALSE)
    })
    rows[[length(rows) + 1L]] <- do.call(rbind, cell)
    write_out()
    s <- summarise_cells(rows[[length(rows)]])
    message(sprintf("  %-22s %-15s coverage %3.0f%%  ratio %5.2f  %6.1f s", name, k$id,
                    100 * s$coverage, s$ratio, proc.time()[["elapsed"]] - t0))
  }
}
runs <- do.call(rbind, rows)

cat(sprintf("sgais %s, SE coverage on small data, seeds 1-%d (%s: 1-%d)\n\n",
            utils::packageVersion("sgais"), max(seeds), paste(slow, collapse = ", "),
            max(slow_seeds)))
for (k in cases) cat(sprintf("  %-15s n = %3d  %s\n", k$id, k$model()$n, k$what))
cat("\n")
cells <- summarise_cells(runs)
print_cells(cells)
failures <- runs[nzchar(runs$failure), ]
if (nrow(failures)) {
  cat("\nfailed runs:\n")
  for (i in seq_len(nrow(failures))) {
    cat(sprintf("  %s / %s / seed %d: %s\n", failures$estimator[i], failures$case[i],
                failures$seed[i], failures$failure[i]))
  }
}
warned <- runs[nzchar(runs$warnings), ]
if (nrow(warned)) {
  cat("\nwarnings (runs per estimator, case and class):\n")
  tab <- table(paste(warned$estimator, warned$case, warned$warnings))
  for (w in names(tab)) cat(sprintf("  %s: %d\n", w, tab[[w]]))
}
cat(sprintf("\n%d of %d cells below 90%%; wall time %.1f min; runs in %s\n",
            sum(cells$coverage < 0.9), nrow(cells),
            (proc.time()[["elapsed"]] - started) / 60, out_file))
