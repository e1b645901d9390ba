#' Detect shifts in the data distribution from an evidence trajectory
#'
#' SGAIS updates the posterior chunk by chunk, and each chunk leaves two traces of how well the
#' data so far predicted it (paper Section 5; thesis Section 1.2): its sequential log predictive
#' density \eqn{\log \hat p(C \mid y_{<C})}{log p(C | earlier data)}, the change in log
#' evidence, per observation (trajectory column `log_predictive_per_obs`), and the number of
#' annealing steps it needed (`annealing_steps`): a chunk from a new distribution is both
#' surprising (its log predictive drops) and hard (the posterior must move far, in many steps).
#' `detect_shifts()` scores every chunk against a robust running baseline of the chunks before
#' it and flags those whose score exceeds `threshold`.
#'
#' @section The rule:
#' The baseline of chunk \eqn{t} is the median of the last 20 chunks before it (fewer at the
#' start), never reaching back past the last flagged chunk: after a shift the new regime is the
#' baseline, so the chunks that follow one shift are not flagged again while the model adapts.
#' The first chunk, annealed from the prior, is never part of a baseline or scored; the first
#' chunk scored is the third.
#' \describe{
#'   \item{surprise}{\eqn{(m - x_t) / s}, with \eqn{x_t} the chunk's log predictive per
#'     observation, \eqn{m} the baseline median and \eqn{s} the larger of the baseline's MAD
#'     (scaled to an sd) and the chunk-to-chunk noise of the whole trajectory (the MAD of
#'     successive differences over \eqn{\sqrt 2}{sqrt(2)}), which keeps a short baseline from
#'     making noise look significant. It is one-sided: only data predicted worse count.}
#'   \item{effort}{the same on the square root of the annealing steps (which makes the noise of
#'     a count about the same at every level), with \eqn{s} at least 1/2, the sd of the square
#'     root of a Poisson count: 2 steps where the baseline takes 1 score 0.8, 10 steps 4.3, 60
#'     steps where it takes 2 score 12.7. A chunk where the run started again ([restarts])
#'     reports the steps of that whole run, not its own: its effort is not scored, nor part of
#'     a baseline. Its log predictive is mostly that run's correction of the estimate, so its
#'     surprise is scored, and part of a baseline, only where the particles had predicted the
#'     chunk far worse than the observations before it (column `shift_restarts`), or where a
#'     baseline has no other chunk.}
#' }
#' A chunk is flagged when the larger of the two scores exceeds `threshold`, the one tuning
#' knob: a larger threshold flags only larger shifts. The change is located to the chunk: it
#' happened among that chunk's observations (`from` to `to`), most likely at its start (`at`,
#' the number of observations before it). A partial last chunk is not scored.
#'
#' A stationary stream scores below the default threshold, and the shifts of
#' [simulate_shifting_mixture()] score well above it (the figures are in
#' `system.file("design.md", package = "sgais")`). A sampler that finds a mode late makes a jump
#' in effort and surprise that looks like a shift: check a flagged chunk against the fit's
#' diagnostics, or with more `particles`, and check the fit itself with [audit_evidence()], which
#' re-estimates the evidence of the data seen so far in a random order and warns when the online
#' estimate disagrees.
#'
#' A shift can leave the particles in a mode of the earlier data. SGAIS's robust preset computes
#' the surprise online, before every chunk, and starts the run again from the data so far
#' shuffled where a chunk is predicted far worse than the observations before it ([restarts]). A
#' shift that both flag without such a run has cost the online
#' estimate its accuracy: refit shuffled (or with [ais()]) for the evidence. Shifts smaller than
#' the noise of one chunk's log predictive cannot be seen: larger chunks (`chunk_size`) see
#' smaller ones, and locate them less finely.
#'
#' @param fit An [sgais()] fit, or a comparison from [compare_models()] (each model's fit is
#'   scored; the result has a `model` column).
#' @param threshold The score above which a chunk is flagged, in robust standard deviations;
#'   default 5.
#' @return An object of class `sgais_shifts`: a list with `shifts`, a data frame with one row per
#'   flagged chunk (`at`, the observations before the chunk; `from` and `to`, its observations;
#'   `score`, `surprise`, `effort` and `signal`, the larger of the two), `scores`, the same
#'   columns for every chunk with the baseline's `log_predictive_per_obs` and `annealing_steps`,
#'   and `threshold`. `as.data.frame()` returns `shifts` (or `scores` with
#'   `which = "scores"`).
#' @seealso [sgais()] for the trajectory; [compare_models()] to compare models as data arrive;
#'   [audit_evidence()] to check an online estimate against the same data shuffled.
#' @export
#' @examples
#' # a regression whose response shifts by 2 after 2,000 rows
#' data <- simulate_linear_regression(3000, seed = 1)
#' data$y[2001:3000] <- data$y[2001:3000] + 2
#' fit <- sgais(linear_regression(y ~ ., data), seed = 1, progress = FALSE)
#' shifts <- detect_shifts(fit)
#' shifts
#' head(as.data.frame(shifts, which = "scores"))
detect_shifts <- function(fit, threshold = 5) {
  call <- sys.call()
  threshold <- check_positive(threshold, "threshold", call)
  if (inherits(fit, "sgais_comparison")) {
    fits <- comparison_sgais_fits(validate_sgais_comparison(fit, call), "`detect_shifts()`", call)
    each <- lapply(names(fits), function(name) {
      s <- shift_scores(fits[[name]]$trajectory, threshold)
      cbind(model = rep(name, nrow(s)), s, stringsAsFactors = FALSE)
    })
    return(new_sgais_shifts(do.call(rbind, each), threshold))
  }
  if (!inherits(fit, "sgais_fit")) {
    abort(sprintf(paste(
      "`fit` must be a fit from sgais() or a comparison from compare_models(), not %s:",
      "shifts are read from an evidence trajectory, which only SGAIS makes."), describe(fit)),
      call, class = "sgais_error_argument")
  }
  fit <- validate_sgais_evidence(fit, call)
  new_sgais_shifts(shift_scores(fit$trajectory, threshold), threshold)
}

# Chunks in the running baseline (see ?detect_shifts, "The rule").
shift_window <- 20L

# The scores of every whole chunk of a trajectory (see ?detect_shifts, "The rule").
shift_scores <- function(trajectory, threshold) {
  tr <- trajectory[!trajectory$partial, , drop = FALSE]
  n_chunks <- nrow(tr)
  x <- tr$log_predictive_per_obs
  scored <- restart_unscored(tr, steps = sqrt(tr$annealing_steps), lp = x)
  steps <- scored$steps
  lp <- scored$lp
  # the chunk-to-chunk noise of the log predictive: successive differences of a stationary
  # stretch have twice its variance, and a few shifts (or restarts) do not move their median
  noise <- if (n_chunks >= 4L) stats::mad(diff(x[-1L])) / sqrt(2) else NA_real_
  surprise <- effort <- base_x <- base_steps <- rep(NA_real_, n_chunks)
  flagged <- logical(n_chunks)
  start <- 2L
  for (t in seq_len(n_chunks)[-(1:2)]) {
    base <- max(start, t - shift_window):(t - 1L)
    # a window of restarts alone (the second chunk's, where the run restarted) is the baseline
    # as it is: there is no other
    base_x[t] <- stats::median(if (all(is.na(lp[base]))) x[base] else lp[base], na.rm = TRUE)
    base_steps[t] <- stats::median(steps[base], na.rm = TRUE)
    scale_x <- max(stats::mad(lp[base], na.rm = TRUE), noise, na.rm = TRUE)
    scale_steps <- max(stats::mad(steps[base], na.rm = TRUE), 0.5, na.rm = TRUE)
    surprise[t] <- if (scale_x > 0) (base_x[t] - lp[t]) / scale_x else NA_real_
    effort[t] <- (steps[t] - base_steps[t]) / scale_steps
    if (any(c(surprise[t], effort[t]) > threshold, na.rm = TRUE)) {
      flagged[t] <- TRUE
      start <- t
    }
  }
  score <- pmax(surprise, effort, na.rm = TRUE)
  from <- c(0, tr$n)[seq_len(n_chunks)] + 1 # (no whole chunk: no rows)
  data.frame(
    chunk = seq_len(n_chunks),
    at = from - 1,
    from = from,
    to = tr$n,
    log_predictive_per_obs = x,
    baseline_log_predictive_per_obs = base_x,
    annealing_steps = tr$annealing_steps,
    baseline_annealing_steps = base_steps^2,
    surprise = surprise,
    effort = effort,
    score = score,
    signal = ifelse(is.na(score), NA_character_,
                    ifelse(is.na(effort) | (!is.na(surprise) & surprise >= effort), "surprise",
                           "effort")),
    flagged = flagged
  )
}

new_sgais_shifts <- function(scores, threshold) {
  keep <- c(if ("model" %in% names(scores)) "model", "at", "from", "to", "score", "surprise",
            "effort", "signal")
  shifts <- scores[scores$flagged, keep, drop = FALSE]
  rownames(shifts) <- NULL
  validate_sgais_shifts(structure(
    list(shifts = shifts, scores = scores, threshold = threshold),
    class = "sgais_shifts"
  ))
}

validate_sgais_shifts <- function(x, call = NULL) {
  ok <- is.list(x) && is.data.frame(x$shifts) && is.data.frame(x$scores) &&
    is_number(x$threshold) && all(c("at", "from", "to", "score") %in% names(x$shifts)) &&
    all(c("chunk", "score", "flagged") %in% names(x$scores)) &&
    nrow(x$shifts) == sum(x$scores$flagged)
  if (!ok) abort("`x` is not a valid sgais_shifts object.", call, class = "sgais_error_corrupt")
  x
}

#' @export
format.sgais_shifts <- function(x, ...) {
  x <- validate_sgais_shifts(x, sys.call())
  s <- x$shifts
  seen <- if (nrow(x$scores)) format_count(max(x$scores$to)) else "0"
  head <- sprintf("<%s detected in %s observations (%d chunks scored; threshold %s)>",
                  switch(as.character(min(nrow(s), 2L)), "0" = "No shift", "1" = "1 shift",
                         sprintf("%d shifts", nrow(s))),
                  seen, sum(!is.na(x$scores$score)), format(x$threshold))
  if (!nrow(s)) return(head)
  shown <- data.frame(
    at = format_count(s$at),
    chunk = sprintf("%s-%s", format_count(s$from), format_count(s$to)),
    score = sprintf("%.1f", s$score),
    signal = s$signal
  )
  if ("model" %in% names(s)) shown <- cbind(model = s$model, shown)
  c(head, utils::capture.output(print(shown, row.names = FALSE, right = TRUE)))
}

#' @export
print.sgais_shifts <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}

#' @export
as.data.frame.sgais_shifts <- function(x, row.names = NULL, optional = FALSE, ...,
                                       which = c("shifts", "scores")) {
  call <- sys.call()
  check_dots_empty(call, c("x", "row.names", "optional", "which"), ...)
  which <- if (missing(which)) "shifts" else
    check_choice(which, "which", c("shifts", "scores"), call)
  x <- validate_sgais_shifts(x, call)
  x[[which]]
}
