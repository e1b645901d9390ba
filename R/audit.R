#' Audit an online evidence estimate against the same data shuffled
#'
#' The evidence does not depend on the order of the data, but an online estimate can: a sampler
#' whose particles settled in one mode before the data that favour another arrived (clusters that
#' appear over time, a shift) may never leave it, and each later chunk then looks unremarkable.
#' The paper's test of trust (Cameron et al. 2019, Section 7.2) is that the estimate on the data
#' in order agrees with the estimate on the same data shuffled. `audit_evidence()` makes that test:
#' at a few checkpoints \eqn{m} it re-estimates \eqn{\log Z}{log Z} of the first \eqn{m}
#' observations in a random order, with the fit's own settings and number of replicates, and
#' compares it with the fit's trajectory at \eqn{m}. Where they differ by more than
#' \eqn{\max(\mathrm{tolerance}, 3\sqrt{\mathrm{SE}_1^2 + \mathrm{SE}_2^2})}{max(tolerance, 3
#' sqrt(SE1^2 + SE2^2))} it gives a warning of class `sgais_warning_audit` with both numbers: one
#' of the two, usually the online one, is wrong. Agreement is evidence of trust, not proof: both
#' runs can miss the same mode (see [gaussian_mixture()] on data far from the prior).
#'
#' The audit refits the data seen up to each checkpoint, so with the default checkpoints (the
#' chunk ends nearest a quarter, a half and all of the data) it costs about 1.75 times the fit.
#' The model must hold all its rows (not a bounded `reservoir_size`). Use it on a stream at the
#' points where a decision is made, or after [detect_shifts()] flags a change: a flagged change
#' that the audit confirms is in the data; one where the online and shuffled estimates disagree
#' may be the sampler's.
#'
#' @param x An [sgais()] fit (also from [sir()], [sequential_sgmcmc()] or [sgais_stream()]), or a
#'   comparison from [compare_models()] (every model's fit is audited).
#' @param at The checkpoints: numbers of first observations, each a point of the fit's trajectory
#'   (`as.data.frame(fit)$n`); `NULL` (the default): the trajectory's points nearest a quarter, a
#'   half and all of the observations.
#' @param tolerance The smallest difference, in nats, that counts as a disagreement (default 3:
#'   the validation suite's bound, `max(3 nats, 3 SE)`).
#' @param progress Show progress bars (default: in interactive sessions).
#' @param seed A seed for the shuffles and the audit runs; `NULL` draws one from R's random
#'   stream, so `set.seed()` makes the audit reproducible.
#' @return A data frame of class `sgais_audit`, one row per checkpoint (and model, with a `model`
#'   column, for a comparison): `n`, the online `log_evidence` and its `se`, the `shuffled`
#'   estimate and its `shuffled_se`, their `difference` (online minus shuffled), the `bound` it is
#'   judged against, `agree` and the audit's `seconds`.
#' @seealso [detect_shifts()], which flags the chunks where the data changed.
#' @export
#' @examples
#' data <- simulate_linear_regression(2000, seed = 1)
#' fit <- sgais(linear_regression(y ~ ., data), seed = 1, progress = FALSE)
#' audit_evidence(fit, seed = 2)
audit_evidence <- function(x, at = NULL, tolerance = 3, progress = default_progress(),
                           seed = NULL) {
  call <- sys.call()
  tolerance <- check_positive(tolerance, "tolerance", call)
  progress <- check_flag(progress, "progress", call)
  seed <- check_seed(seed, call)
  if (is.null(seed)) seed <- sample.int(.Machine$integer.max, 1L)
  if (inherits(x, "sgais_comparison")) {
    fits <- comparison_sgais_fits(validate_sgais_comparison(x, call), "`audit_evidence()`", call)
    seeds <- with_seed(seed, sample.int(.Machine$integer.max, length(fits)))
    rows <- lapply(seq_along(fits), function(i) {
      out <- audit_rows(fits[[i]], at, tolerance, progress, seeds[i], call)
      cbind(model = rep(names(fits)[i], nrow(out)), out, stringsAsFactors = FALSE)
    })
    out <- do.call(rbind, rows)
  } else if (inherits(x, "sgais_fit")) {
    out <- audit_rows(validate_sgais_evidence(x, call), at, tolerance, progress, seed, call)
  } else {
    abort(sprintf(paste("`x` must be a fit from sgais() (or sir(), sequential_sgmcmc(),",
                        "sgais_stream()) or a comparison from compare_models(), not %s; other",
                        "estimators do not take the data in order."), describe(x)), call)
  }
  rownames(out) <- NULL
  out <- structure(out, class = c("sgais_audit", "data.frame"))
  bad <- out[!out$agree, , drop = FALSE]
  if (nrow(bad)) {
    where <- sprintf("%sn = %s: %.2f in order, %.2f shuffled (%s nats apart, bound %.1f)",
                     if (is.null(bad$model)) "" else paste0(bad$model, ", "),
                     format_count(bad$n), bad$log_evidence, bad$shuffled,
                     format(signif(abs(bad$difference), 3), big.mark = ","), bad$bound)
    warn(sprintf(paste(
      "The online estimate disagrees with the same data shuffled at %d checkpoint%s: %s. The",
      "evidence does not depend on the order of the data, so one of the two is wrong, most",
      "likely the online one (particles held in an old mode after the data changed). Trust",
      "neither: see ?audit_evidence."), nrow(bad), if (nrow(bad) == 1) "" else "s",
      paste(where, collapse = "; ")), call, "sgais_warning_audit")
  }
  out
}

# The audit of one fit: a row per checkpoint.
audit_rows <- function(fit, at, tolerance, progress, seed, call) {
  model <- fit$model
  check_all_rows(model, call)
  check_functions_trusted(model, call)
  traj <- fit$trajectory
  traj <- traj[!is.na(traj$log_evidence), , drop = FALSE]
  at <- audit_checkpoints(at, traj$n, call)
  replicates <- max(1L, length(fit$replicate_log_evidence))
  # a seed for each checkpoint's shuffle and one for its run, all from `seed`
  seeds <- with_seed(seed, sample.int(.Machine$integer.max, 2L * length(at)))
  rows <- lapply(seq_along(at), function(k) {
    m <- at[k]
    shuffled <- model
    shuffled$data <- data_columns(model$data, with_seed(seeds[2L * k - 1L], sample.int(m)))
    shuffled$n <- m
    t0 <- proc.time()[["elapsed"]]
    refit <- sgais_start(shuffled, fit$settings, replicates, progress, seeds[2L * k], call)
    online <- traj[traj$n == m, ][1, ]
    se <- sqrt(online$log_evidence_se^2 + refit$log_evidence_se^2)
    bound <- max(tolerance, 3 * se, na.rm = TRUE)
    d <- online$log_evidence - refit$log_evidence
    data.frame(n = m, log_evidence = online$log_evidence, se = online$log_evidence_se,
               shuffled = refit$log_evidence, shuffled_se = refit$log_evidence_se,
               difference = d, bound = bound, agree = is.finite(d) && abs(d) <= bound,
               seconds = proc.time()[["elapsed"]] - t0)
  })
  do.call(rbind, rows)
}

# The checkpoints: `at` checked against the trajectory's points `n`, or by default the points
# nearest a quarter, a half and all of the observations.
audit_checkpoints <- function(at, n, call) {
  if (is.null(at)) {
    last <- max(n)
    return(sort(unique(vapply(c(0.25, 0.5, 1) * last, function(v) n[which.min(abs(n - v))],
                              numeric(1)))))
  }
  if (!is.numeric(at) || length(at) < 1L || anyNA(at) || any(!at %in% n)) {
    abort(sprintf(paste("`at` must be points of the fit's trajectory (numbers of observations:",
                        "%s), not %s."),
                  paste(format_count(utils::head(n, 8)), collapse = ", "), describe(at)), call)
  }
  sort(unique(as.numeric(at)))
}

#' @export
format.sgais_audit <- function(x, ...) {
  shown <- data.frame(x, check.names = FALSE)
  class(shown) <- "data.frame"
  for (col in c("log_evidence", "se", "shuffled", "shuffled_se", "difference")) {
    shown[[col]] <- sprintf("%.2f", shown[[col]])
  }
  shown$bound <- sprintf("%.1f", shown$bound)
  shown$seconds <- sprintf("%.1f", shown$seconds)
  shown$n <- format_count(shown$n)
  shown
}

#' @export
print.sgais_audit <- function(x, ...) {
  cat("<sgais audit: the online estimate against the same data shuffled>\n")
  print(format(x), row.names = FALSE)
  cat_lines(sprintf("  %d of %d checkpoints agree (|difference| <= bound: max(tolerance, 3 SE))",
                    sum(x$agree), nrow(x)))
  invisible(x)
}
