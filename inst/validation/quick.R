# The quick validation tier: every estimator with each of its presets on every model family once,
# on small data, against an independent reference; then the quick statistical checks.
#
#   make validate-quick                       # from the package's root, with sgais installed
#   Rscript inst/validation/quick.R [--families=id,...] [--estimators=name,...] [--presets=robust,paper]
#                                   [--no-checks] [--out=file.csv]
#
# Part 1. sgais(), ais(), nested_sampling(), online_nested_sampling(), sir() and
# sequential_sgmcmc(), each with its control's "robust" (default) and "paper" preset
# (sgais_control(), ais_control(), nested_control(), online_nested_control(), sir_control(),
# sequential_control()), one run each (seed 1), on nine model families:
#   linear_regression         1,000 rows of the paper's model (5 covariates, noise sd 1): exact
#   linear_regression_nig     the same model with unknown noise (normal-inverse-gamma): exact
#   logistic_regression       intercept + 1 covariate, 1,000 rows: 2-D grid quadrature (quadrature.R)
#   poisson_regression        intercept + 1 covariate + offset, 1,000 rows: 2-D grid quadrature
#   robust_regression         location-scale t, 500 rows with 3 outliers: nested integrate()
#                             (quadrature_log_evidence(), tests/testthat/helper-robust.R)
#   negative_binomial_regression  y ~ 1, 300 overdispersed counts: 2-D midpoint rule over the
#                             intercept and log overdispersion (tests/testthat/helper-negbin.R)
#   softmax_regression        iris (150 rows, 15 parameters), in its own order (sorted by species,
#                             so the third class first appears at row 101): Stan + bridge
#                             sampling (references.csv, case iris_softmax)
#   gaussian_mixture          scale(faithful), 272 rows, 2 components: Stan + bridge sampling
#                             (references.csv, case faithful_mix_k2)
#   custom_model              the paper's linear regression written in R, 500 rows: exact
#                             evidence of the same built-in linear_regression()
# The estimators' own warnings (class sgais_warning) are muffled and counted (column warnings;
# other warnings are counted after a "+"). A pair that an estimator refuses at the start with a
# classed error saying the model does not suit it is "n/a", with the reason.
# Judging: a robust-preset run passes when |error| <= max(3, 3 sd), sd the fit's own predicted
# sd of log Z (fit$diagnostics$predicted_sd; 3 nats when it gives none); an error raised by it
# is a FAIL. The runs of `known_failures` (below: understood, and left to an open issue) are
# "known" while they fail, listed with their reason, and not counted; "PASS?" once they pass. A paper-preset run is "reported", not judged (the paper's settings are known to be
# biased), except that an error or a log evidence that is not finite is a FAIL.
#
# Part 2. The checks of checks.R whose tier is "quick" (statistical tests moved out of the test
# suite): detect_shifts() on the paper's shifting mixture, the stability of SGAIS's mini-batch
# moves on the paper's softmax regression at n = 20,000, and the slow hostile-input cases of
# tests/testthat/helper-hostile.R. `Rscript inst/validation/checks.R --tier=full` runs all of
# them, the longer ones too.
#
# It prints one table per part, then `validate-quick: N passed, N failed` (rows judged pass or
# FAIL; "reported" and "n/a" rows are not counted), and exits with status 1 if any row failed.
# Part 1's rows go to quick.csv (or --out) after every fit, replacing the stored rows of the same
# family, estimator and preset; Part 2's to checks.csv (checks.R). Progress goes to stderr, the
# tables to stdout.
# --families, --estimators and --presets run a part of Part 1; --no-checks skips Part 2.
# About 3 minutes on the 2-core development machine: Part 1 about a minute (the slowest fits,
# nested sampling and online nested sampling on the mixture, softmax and custom model, 3 to 8 s
# each), Part 2 about 90 s. The fits run one after another, each on the package's default
# threads.
#
# Run from the package's root with sgais installed.

started <- proc.time()[["elapsed"]]
suppressMessages(library(sgais))
source(file.path("inst", "validation", "suite.R"))
args <- commandArgs(TRUE)
only_families <- opt("families", "")
only_estimators <- opt("estimators", "")
presets <- strsplit(opt("presets", "robust,paper"), ",")[[1]]
run_part2 <- !"--no-checks" %in% args
out_file <- opt("out", file.path(validation_dir, "quick.csv"))

source(file.path(validation_dir, "cases.R"))
# the test suite's references: the grid rule, the robust regression's quadrature and the linear
# regression written in R (helpers that only define functions, as hostile.R sources the table)
for (helper in c("helper-glm.R", "helper-robust.R", "helper-custom.R", "helper-negbin.R")) {
  source(file.path("tests/testthat", helper))
}
source(file.path(validation_dir, "quadrature.R"))
source(file.path(validation_dir, "checks.R"))
references <- utils::read.csv(file.path(validation_dir, "references.csv"), stringsAsFactors = FALSE)
stored <- validation_cases(references)
stored_case <- function(id) Filter(function(k) identical(k$id, id), stored)[[1]]

# ---- the model families ----------------------------------------------------------------------
# Each is a case as in cases.R (`id`, `what`, `model`, `reference`: "exact" or a number), its id
# the model family; case_reference() gives the reference. The data are simulated with fixed seeds.

# A grid reference whose finer and wider grids moved it by more than 1e-6 nats is not one.
converged <- function(grid) {
  if (grid[["error"]] > 1e-6) {
    stop(sprintf("the grid quadrature has not converged (%.2g nats)", grid[["error"]]), call. = FALSE)
  }
  grid[["reference"]]
}

quick_families <- function() {
  logistic_data <- sgais:::with_seed(4, {
    x <- stats::rnorm(1000)
    data.frame(x = x, y = stats::rbinom(1000, 1, stats::plogis(-0.5 + 1.2 * x)))
  })
  poisson_data <- sgais:::with_seed(2, {
    x <- stats::rnorm(1000)
    t <- stats::runif(1000, 0.5, 2)
    data.frame(x = x, t = t, y = stats::rpois(1000, t * exp(0.3 + 0.5 * x)))
  })
  # test-robust_regression.R's location-scale t model: 500 observations, three outliers
  robust_y <- location_scale()$y
  custom_data <- simulate_linear_regression(500, seed = 7)
  negbin_y <- negbin_counts() # tests/testthat/helper-negbin.R

  softmax <- stored_case("iris_softmax")
  mixture <- stored_case("faithful_mix_k2")
  list(
    linear_case("linear_regression", "paper's model, 5 covariates, noise sd 1", 1000, 5, seed = 4),
    list(
      id = "linear_regression_nig", what = "paper's model, unknown noise (normal-inverse-gamma)",
      model = function() {
        linear_regression(y ~ ., simulate_linear_regression(1000, seed = 5), noise_sd = NULL, prior = "paper")
      },
      reference = "exact"
    ),
    list(
      id = "linear_regression_zellner", what = "attitude, rating ~ complaints + learning, JZS prior",
      model = function() {
        linear_regression(rating ~ complaints + learning, datasets::attitude,
                          prior = zellner_siow_prior())
      },
      reference = "exact"
    ),
    list(
      id = "logistic_regression", what = "y ~ x, P(y = 1) = plogis(-0.5 + 1.2 x)",
      model = function() logistic_regression(y ~ x, logistic_data, prior_sd = 2.5),
      reference = converged(logistic_grid_reference(logistic_data$x, logistic_data$y, 2.5))
    ),
    list(
      id = "poisson_regression", what = "y ~ x + offset(log(t)), rate t exp(0.3 + 0.5 x)",
      model = function() poisson_regression(y ~ x + offset(log(t)), poisson_data, prior_sd = 2.5),
      reference = converged(poisson_grid_reference(poisson_data$x, poisson_data$y, poisson_data$t,
                                                   2.5))
    ),
    list(
      id = "robust_regression", what = "y ~ 1, t(4) errors, 3 outliers",
      model = function() {
        robust_regression(y ~ 1, data.frame(y = robust_y), df = 4, prior_sd = 2, scale_prior = 1.5)
      },
      reference = quadrature_log_evidence(robust_y, 4, 2, 1.5)
    ),
    list(
      id = "negative_binomial_regression", what = "y ~ 1, 300 counts of mean 2 and size 2",
      model = function() negative_binomial_regression(y ~ 1, negbin_y, prior = "paper"),
      reference = negbin_quadrature_log_evidence(negbin_y$y)
    ),
    list(id = "softmax_regression", what = softmax$what, model = softmax$model,
         reference = softmax$reference),
    list(id = "gaussian_mixture", what = mixture$what, model = mixture$model,
         reference = mixture$reference),
    list(
      id = "custom_model", what = "paper's linear regression written in R (custom_model())",
      model = function() r_linear_regression(custom_data),
      reference = exact_log_evidence(linear_regression(y ~ ., custom_data, prior = "paper", noise_sd = 1))
    )
  )
}

# ---- the estimators ---------------------------------------------------------------------------

estimators <- list(
  sgais = list(fit = sgais, control = sgais_control),
  ais = list(fit = ais, control = ais_control),
  nested_sampling = list(fit = nested_sampling, control = nested_control),
  online_nested_sampling = list(fit = online_nested_sampling, control = online_nested_control),
  sir = list(fit = sir, control = sir_control),
  sequential_sgmcmc = list(fit = sequential_sgmcmc, control = sequential_control)
)
# The class of the error by which an estimator says at the start that a model does not suit it
# (check_kernel_model() in R/control.R: a kernel the model's family cannot serve): the pair is
# "n/a". At the presets' kernels (SGHMC; the walk for nested sampling) no pair raises it.
not_applicable <- "sgais_error_kernel"

run_one <- function(estimator, preset, model) {
  warnings <- 0L
  other <- character(0)
  t0 <- proc.time()[["elapsed"]]
  res <- tryCatch(
    withCallingHandlers(
      list(fit = estimator$fit(model, control = estimator$control(preset), seed = 1,
                               progress = FALSE)),
      warning = function(w) {
        if (inherits(w, "sgais_warning")) {
          warnings <<- warnings + 1L
        } else {
          other <<- c(other, conditionMessage(w))
        }
        invokeRestart("muffleWarning")
      }
    ),
    error = function(e) list(error = e)
  )
  res$seconds <- proc.time()[["elapsed"]] - t0
  res$warnings <- warnings
  res$other <- other
  res
}

# Known failures: robust-preset runs that fail for a reason understood and left to an open issue.
# Such a run is "known" (printed with its reason, not counted as a failure) while it fails, and
# "PASS?" (counted as a failure, so that the entry is removed) once it passes.
known_failures <- list()
known_failure <- function(family, estimator, preset) {
  for (k in known_failures) {
    if (preset == "robust" && family == k$family && estimator %in% k$estimator) return(k$reason)
  }
  NULL
}

verdict_of <- function(preset, estimate, error, bound, failed, known = NULL) {
  if (failed || !is.finite(estimate)) return(if (is.null(known)) "FAIL" else "known")
  if (preset == "paper") return("reported")
  pass <- abs(error) <= bound
  if (!is.null(known)) return(if (pass) "PASS?" else "known")
  if (pass) "pass" else "FAIL"
}

families <- quick_families()
if (nzchar(only_families)) {
  families <- Filter(function(k) k$id %in% strsplit(only_families, ",")[[1]], families)
}
if (nzchar(only_estimators)) estimators <- estimators[strsplit(only_estimators, ",")[[1]]]

rows <- list()
notes <- character(0)
for (family in families) {
  model <- family$model()
  reference <- case_reference(family, model)
  for (name in names(estimators)) {
    for (preset in presets) {
      r <- run_one(estimators[[name]], preset, model)
      row <- data.frame(family = family$id, estimator = name, preset = preset, n = model$n,
                        reference = reference, estimate = NA_real_, error = NA_real_,
                        bound = NA_real_, seconds = r$seconds,
                        warnings = if (length(r$other)) sprintf("%d+%d", r$warnings, length(r$other))
                                   else as.character(r$warnings),
                        verdict = "", stringsAsFactors = FALSE)
      if (!is.null(r$error)) {
        na <- inherits(r$error, not_applicable)
        row$verdict <- if (na) "n/a" else "FAIL"
        notes <- c(notes, sprintf("%s / %s / %s: %s%s", family$id, name, preset,
                                  if (na) "n/a, " else "error: ",
                                  gsub("\\s+", " ", conditionMessage(r$error))))
      } else {
        fit <- r$fit
        row$estimate <- fit$log_evidence
        row$error <- row$estimate - reference
        sd <- suppressWarnings(max(fit$diagnostics$predicted_sd))
        row$bound <- if (is.finite(sd)) max(3, 3 * sd) else 3
        known <- known_failure(family$id, name, preset)
        row$verdict <- verdict_of(preset, row$estimate, row$error, row$bound, FALSE, known)
        if (row$verdict == "known") {
          notes <- c(notes, sprintf("%s / %s / %s: known failure: %s", family$id, name, preset,
                                    known))
        }
        if (row$verdict == "PASS?") {
          notes <- c(notes, sprintf("%s / %s / %s: a known failure passed: remove its entry from known_failures",
                                    family$id, name, preset))
        }
        if (row$verdict == "FAIL" && !is.finite(row$estimate)) {
          notes <- c(notes, sprintf("%s / %s / %s: log evidence %s", family$id, name, preset,
                                    format(row$estimate)))
        }
      }
      if (length(r$other)) {
        notes <- c(notes, sprintf("%s / %s / %s: other warning: %s", family$id, name, preset,
                                  gsub("\\s+", " ", r$other[1])))
      }
      rows[[length(rows) + 1L]] <- row
      if (nzchar(out_file)) {
        write_rows(do.call(rbind, rows), out_file, c("family", "estimator", "preset"))
      }
      message(sprintf("  %-28s %-22s %-6s %7.1f s  %s", row$family, row$estimator, row$preset,
                      row$seconds, row$verdict))
    }
  }
}
part1 <- do.call(rbind, rows)
part1_seconds <- proc.time()[["elapsed"]] - started

cat(sprintf("sgais %s, validate-quick, %s\n\n", utils::packageVersion("sgais"), format(Sys.time(), "%F %H:%M")))
cat(sprintf("Part 1: every estimator x preset x model family, seed 1 (%.0f s)\n", part1_seconds))
cat("robust: pass when |error| <= bound = max(3, 3 x the fit's predicted sd); paper: reported\n\n")
cat(sprintf("%-28s %-22s %-6s %5s %11s %11s %8s %5s %7s %8s  %s\n", "family", "estimator",
            "preset", "n", "reference", "estimate", "error", "bound", "seconds", "warnings",
            "verdict"))
for (i in seq_len(nrow(part1))) {
  x <- part1[i, ]
  cat(sprintf("%-28s %-22s %-6s %5d %11.3f %11s %8s %5s %7.1f %8s  %s\n", x$family, x$estimator,
              x$preset, x$n, x$reference,
              if (is.na(x$estimate)) "-" else sprintf("%.3f", x$estimate),
              if (is.na(x$error)) "-" else sprintf("%+.3f", x$error),
              if (is.na(x$bound)) "-" else sprintf("%.2f", x$bound), x$seconds, x$warnings,
              x$verdict))
}
if (length(notes)) cat("\n", paste0("  ", notes, "\n"), sep = "")

failed <- sum(part1$verdict %in% c("FAIL", "PASS?"))
passed <- sum(part1$verdict == "pass")
known <- sum(part1$verdict == "known")
if (run_part2) {
  t2 <- proc.time()[["elapsed"]]
  checks <- Filter(function(k) k$tier == "quick", validation_checks())
  part2 <- run_checks(checks)
  write_rows(part2, file.path(validation_dir, "checks.csv"), "check")
  cat(sprintf("\nPart 2: the quick statistical checks of checks.R (%.0f s)\n\n",
              proc.time()[["elapsed"]] - t2))
  print_checks(part2)
  failed <- failed + sum(part2$verdict == "FAIL")
  passed <- passed + sum(part2$verdict == "pass")
}
cat(sprintf("\nwall time %.1f min%s\n", (proc.time()[["elapsed"]] - started) / 60,
            if (nzchar(out_file)) paste0("; Part 1's rows in ", out_file) else ""))
cat(sprintf("validate-quick: %d passed, %d failed%s\n", passed, failed,
            if (known) sprintf(" (and %d known failures, listed above)", known) else ""))
if (failed) quit(status = 1)
