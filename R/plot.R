# Plots of every result, with ggplot2. Each autoplot() method first builds a tidy data frame
# from the object's as.data.frame() (the columns every fit shares, ?sgais_evidence, then the
# method's own): plot_data() returns it, so the tests check the numbers behind every picture.
# plot() prints the autoplot().

# Okabe & Ito's colour-blind-safe palette (blue, vermillion, bluish green, reddish purple,
# orange, sky blue, yellow, black).
okabe_ito <- c("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442",
               "#000000")

# The colours of the plots: `options(sgais.colours =)` or plot()'s `colours`, else the palette
# above.
plot_colours <- function() getOption("sgais.colours") %||% okabe_ito

palette_for <- function(levels) {
  rep_len(plot_colours(), length(levels))
}

colour_at <- function(k) rep_len(plot_colours(), k)[k]

# Axis labels with thousands separators ("12,000"), blank where ggplot2 asks for NA.
count_labels <- function(x) {
  ifelse(is.na(x), "", formatC(x, format = "fg", big.mark = ",", digits = 15))
}

log_x_axis <- function() ggplot2::scale_x_log10(labels = count_labels)

plot_theme <- function() {
  # The wider right margin keeps the last log-axis label ("1,000,000") inside the picture.
  ggplot2::theme_bw() +
    ggplot2::theme(legend.position = "bottom",
                   plot.margin = ggplot2::margin(5.5, 20, 5.5, 5.5))
}

# The panel a plot method draws: `which` (its first element, the default being the first
# choice), checked, after checking that nothing else was given.
plot_panel <- function(which, choices, call, ...) {
  check_dots_empty(call, c("object", "which"), ...)
  check_choice(which[1L], "which", choices, call, "sgais_error_argument")
}


#' Plot a fit, a comparison or detected shifts
#'
#' `autoplot()` methods (ggplot2's generic) for the results of the package, and `plot()`, which
#' prints them. Each plot is built from a tidy data frame, which `plot_data()` returns with the
#' same arguments, so the numbers behind a picture can be read or re-plotted.
#'
#' \describe{
#'   \item{[sgais()] fits}{`which = "evidence"` (the default): the log evidence per observation
#'     \eqn{\log \hat Z_n / n} against the observations \eqn{n} on a log axis (paper Figure 2a),
#'     with a band of \eqn{\pm 2} standard errors when the fit has them and the exact curve
#'     (dashed) when the model has one ([exact_log_evidence()]); `"steps"`: annealing steps per
#'     chunk (paper Figure 5b); `"time"`: cumulative seconds (paper Figure 2b); `"ess"`: the
#'     effective sample size after each chunk and the lowest within it.}
#'   \item{[ais()] fits}{`"schedule"`: the annealing schedule \eqn{\lambda} against the step, on a
#'     log axis; `"ess"`: the ESS of each step's incremental weights.}
#'   \item{[nested_sampling()] fits}{`"likelihood"`: the log-likelihood of the removed points
#'     against \eqn{-\log X}{-log X}, the log prior volume they enclose; `"contributions"`: each
#'     removed point's share of the evidence, \eqn{L_i w_i / \hat Z}{L_i w_i / Z}, against
#'     \eqn{-\log X}{-log X} (where the posterior mass lies, as ernest and dynesty plot it). With
#'     replicates, the first replicate's run.}
#'   \item{[exact_evidence()] fits}{`"evidence"`: the closed form per observation at the fit's
#'     prefix lengths.}
#'   \item{[importance_sampling()] fits}{`"weights"`: the normalised importance weights by
#'     rank, on a log axis, against equal weights (a steep head: few draws carry the estimate).}
#'   \item{[online_nested_sampling()] fits}{`"evidence"`: as for SGAIS fits, at the chunk ends;
#'     `"iterations"`: nested-sampling iterations per chunk; `"time"`: cumulative seconds.}
#'   \item{[compare_models()] comparisons}{`"probability"`: posterior model probabilities
#'     against \eqn{n}; `"bayes_factor"`: each model's log Bayes factor against the best model at
#'     each \eqn{n}. With standard errors (every fit but the paper preset's single runs) a band
#'     of \eqn{\pm 2} SE: for
#'     the log Bayes factor \eqn{\pm 2 \sqrt{se_k^2 + se_{best}^2}}{+/- 2 sqrt(se_k^2 +
#'     se_best^2)}; for a probability the range it takes when every log evidence moves by up to
#'     2 SE, its own against the others' (a conservative interval). On data shorter than two
#'     chunks, one value per model: a dot for each, with its interval.}
#'   \item{[detect_shifts()] results}{`"trajectory"`: each chunk's log predictive per
#'     observation against \eqn{n}, with the flagged chunks' starts marked by vertical lines;
#'     `"scores"`: the chunk scores against the threshold.}
#' }
#' To overlay several fits of the same data (SGAIS trajectories, AIS and nested sampling
#' estimates), see [plot_evidence()].
#'
#' @param object,x A fit from [sgais()], [ais()] or [nested_sampling()], a comparison from
#'   [compare_models()], or the result of [detect_shifts()].
#' @param which The panel (see Details); the first is the default.
#' @param exact For SGAIS fits: draw the exact evidence when the model has one.
#' @param ... Unused (an error if given); for `plot()`, the arguments of `autoplot()`.
#' @param colours,col For `plot()`: colours for the series, in place of the default palette
#'   (Okabe and Ito's, which is safe for colour blindness), recycled; `col` is the same, as base
#'   graphics name it. `options(sgais.colours = )` sets them for every plot.
#' @return `autoplot()`: a ggplot object, whose colours, labels and theme change as any ggplot's
#'   (e.g. `+ ggplot2::scale_colour_manual(values = c("red", "black"))`, which replaces the
#'   package's scale). `plot()`: the same ggplot, invisibly, after printing it. `plot_data()`: the
#'   data frame behind the plot.
#' @name sgais_plots
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(5000, seed = 1))
#' fit <- sgais(model, replicates = 2, seed = 1, progress = FALSE)
#' ggplot2::autoplot(fit)
#' plot(fit, which = "steps", col = "darkred")
#' head(plot_data(fit))
NULL

#' @importFrom ggplot2 autoplot
#' @export
ggplot2::autoplot

#' @rdname sgais_plots
#' @export
plot_data <- function(object, ...) {
  UseMethod("plot_data")
}

#' @export
plot_data.default <- function(object, ...) {
  abort_wrong_object(object, "object", paste(
    takes_fit, "a comparison from `compare_models()`, a search from `model_search()` or shifts",
    "from `detect_shifts()`"), sys.call())
}

#' @rdname sgais_plots
#' @export
plot_data.sgais_fit <- function(object, which = c("evidence", "steps", "time", "ess"),
                                exact = TRUE, ...) {
  object <- validate_sgais_evidence(object, sys.call())
  call <- sys.call()
  which <- plot_panel(which, c("evidence", "steps", "time", "ess"), call, ...)
  exact <- check_flag(exact, "exact", call)
  df <- as.data.frame(object)
  n <- df$n
  switch(which,
    evidence = evidence_panel_data(object, df, exact),
    steps = data.frame(n = n, annealing_steps = df$annealing_steps),
    time = data.frame(n = n, seconds = df$seconds),
    ess = data.frame(n = rep(n, 2L), ess = c(df$ess, df$min_ess),
                     what = factor(rep(c("after the chunk", "lowest within it"), each = length(n)),
                                   levels = c("after the chunk", "lowest within it")))
  )
}

#' @rdname sgais_plots
#' @export
autoplot.sgais_fit <- function(object, which = c("evidence", "steps", "time", "ess"),
                               exact = TRUE, ...) {
  call <- sys.call()
  which <- plot_panel(which, c("evidence", "steps", "time", "ess"), call, ...)
  d <- plot_data.sgais_fit(object, which = which, exact = exact)
  obs <- "observations (log scale)"
  several <- length(unique(d$n)) > 1L
  p <- switch(which,
    evidence = evidence_panel(d, "SGAIS"),
    steps = series_plot(d, "n", "annealing_steps", "annealing steps per chunk"),
    time = series_plot(d, "n", "seconds", "seconds (cumulative)"),
    ess = ggplot2::ggplot(d, ggplot2::aes(.data$n, .data$ess, colour = .data$what)) +
      line_if(several) + ggplot2::geom_point(size = 0.8) +
      ggplot2::scale_colour_manual(NULL, values = palette_for(1:2)) +
      ggplot2::labs(y = "effective sample size")
  )
  p + log_x_axis() + ggplot2::labs(x = obs, title = fit_title(object)) + plot_theme()
}

# The evidence panel of a fit with a trajectory (SGAIS, online nested sampling), from its
# as.data.frame() `df`: log Z_n / n at each n, a band of +- 2 SE, and the exact curve.
evidence_panel_data <- function(object, df, exact) {
  n <- df$n
  out <- data.frame(n = n, log_evidence_per_obs = df$log_evidence / n,
                    lower = (df$log_evidence - 2 * df$log_evidence_se) / n,
                    upper = (df$log_evidence + 2 * df$log_evidence_se) / n)
  z <- if (exact) exact_or_null(object$model, n) else NULL
  out$exact_per_obs <- if (is.null(z)) NA_real_ else z / n
  out
}

# Its plot, the estimate labelled `method`.
evidence_panel <- function(d, method) {
  several <- length(unique(d$n)) > 1L
  d$estimate <- method
  p <- ggplot2::ggplot(d, ggplot2::aes(.data$n, .data$log_evidence_per_obs))
  if (any(!is.na(d$lower))) {
    p <- p + ggplot2::geom_ribbon(ggplot2::aes(ymin = .data$lower, ymax = .data$upper),
                                  fill = colour_at(1), alpha = 0.25, na.rm = TRUE)
  }
  p <- p + line_if(several, ggplot2::aes(colour = .data$estimate, linetype = .data$estimate))
  # Points mark the chunks while they can be told apart; a long trajectory is a line.
  if (nrow(d) <= 60L) {
    p <- p + ggplot2::geom_point(ggplot2::aes(colour = .data$estimate), size = 0.8,
                                 show.legend = FALSE)
  }
  if (any(!is.na(d$exact_per_obs))) {
    p <- p + line_if(several, ggplot2::aes(y = .data$exact_per_obs, colour = "exact",
                                           linetype = "exact"))
  }
  # a linetype scale only where there are lines (ggplot2 4 warns about a scale no layer uses)
  p + ggplot2::scale_colour_manual(NULL, values = stats::setNames(c(colour_at(1), "black"), c(method, "exact"))) +
    (if (several) ggplot2::scale_linetype_manual(NULL, values = stats::setNames(c("solid", "dashed"), c(method, "exact")))) +
    ggplot2::labs(y = "log evidence per observation")
}

#' @rdname sgais_plots
#' @export
plot_data.sgais_online_ns_fit <- function(object, which = c("evidence", "iterations", "time"),
                                          exact = TRUE, ...) {
  object <- validate_sgais_evidence(object, sys.call())
  call <- sys.call()
  which <- plot_panel(which, c("evidence", "iterations", "time"), call, ...)
  exact <- check_flag(exact, "exact", call)
  df <- as.data.frame(object)
  switch(which,
    evidence = evidence_panel_data(object, df, exact),
    iterations = data.frame(n = df$n, iterations = df$iterations),
    time = data.frame(n = df$n, seconds = df$seconds)
  )
}

#' @rdname sgais_plots
#' @export
autoplot.sgais_online_ns_fit <- function(object, which = c("evidence", "iterations", "time"),
                                         exact = TRUE, ...) {
  call <- sys.call()
  which <- plot_panel(which, c("evidence", "iterations", "time"), call, ...)
  d <- plot_data.sgais_online_ns_fit(object, which = which, exact = exact)
  p <- switch(which,
    evidence = evidence_panel(d, "online NS"),
    iterations = series_plot(d, "n", "iterations", "nested-sampling iterations per chunk"),
    time = series_plot(d, "n", "seconds", "seconds (cumulative)")
  )
  p + log_x_axis() + ggplot2::labs(x = "observations (log scale)", title = fit_title(object)) +
    plot_theme()
}

# geom_line(...) when the groups have two points or more (a one-chunk fit is a point, and
# ggplot2 complains of a line through one point); NULL, which adds nothing, otherwise.
line_if <- function(several, ...) {
  if (several) ggplot2::geom_line(...) else NULL
}

# One series against x in the first colour: its points and a line through them (points = FALSE:
# the line only, for long traces), with the y label.
series_plot <- function(d, x, y, ylab, points = TRUE) {
  ggplot2::ggplot(d, ggplot2::aes(.data[[x]], .data[[y]])) +
    line_if(nrow(d) > 1L, colour = colour_at(1)) +
    (if (points) ggplot2::geom_point(colour = colour_at(1), size = 0.8)) +
    ggplot2::labs(y = ylab)
}

fit_title <- function(object) {
  sprintf("%s, %s observations", object$method, format_count(object$n))
}

#' @rdname sgais_plots
#' @export
plot_data.sgais_exact_fit <- function(object, which = "evidence", ...) {
  object <- validate_sgais_evidence(object, sys.call())
  plot_panel(which, "evidence", sys.call(), ...)
  evidence_panel_data(object, as.data.frame(object), exact = FALSE)
}

#' @rdname sgais_plots
#' @export
autoplot.sgais_exact_fit <- function(object, which = "evidence", ...) {
  d <- plot_data.sgais_exact_fit(object, which = which, ...)
  evidence_panel(d, "closed form") + log_x_axis() +
    ggplot2::labs(x = "observations (log scale)", title = fit_title(object)) + plot_theme()
}

#' @rdname sgais_plots
#' @export
plot_data.sgais_ais_fit <- function(object, which = c("schedule", "ess"), ...) {
  object <- validate_sgais_evidence(object, sys.call())
  call <- sys.call()
  which <- plot_panel(which, c("schedule", "ess"), call, ...)
  df <- as.data.frame(object)
  switch(which,
    schedule = data.frame(step = df$step, lambda = df$lambda),
    ess = data.frame(step = df$step, ess = df$ess)
  )
}

#' @rdname sgais_plots
#' @export
autoplot.sgais_ais_fit <- function(object, which = c("schedule", "ess"), ...) {
  call <- sys.call()
  which <- plot_panel(which, c("schedule", "ess"), call, ...)
  d <- plot_data.sgais_ais_fit(object, which = which)
  p <- switch(which,
    schedule = series_plot(d, "step", "lambda", "lambda (likelihood power, log scale)") +
      ggplot2::scale_y_log10(),
    ess = series_plot(d, "step", "ess", "ESS of the incremental weights")
  )
  p + ggplot2::labs(x = "annealing step", title = fit_title(object)) + plot_theme()
}

#' @rdname sgais_plots
#' @export
plot_data.sgais_is_fit <- function(object, which = "weights", ...) {
  object <- validate_sgais_evidence(object, sys.call())
  plot_panel(which, "weights", sys.call(), ...)
  lw <- object$state$log_weights
  w <- sort(exp(lw - log_sum_exp(lw)), decreasing = TRUE)
  data.frame(rank = seq_along(w), weight = w)
}

# Importance sampling: the normalised weights by rank (log scale), so that a few draws carrying
# most of the weight (a proposal that misses the posterior) show as a steep head.
#' @rdname sgais_plots
#' @export
autoplot.sgais_is_fit <- function(object, which = "weights", ...) {
  d <- plot_data.sgais_is_fit(object, which = which, ...)
  series_plot(d, "rank", "weight", "normalised weight (log scale)", points = FALSE) +
    ggplot2::geom_hline(yintercept = 1 / nrow(d), linetype = "dashed", colour = "grey40") +
    ggplot2::scale_y_log10() +
    ggplot2::labs(x = "draw, by weight", title = fit_title(object),
                  caption = sprintf("dashed: equal weights; ESS %.1f of %d, Pareto k %s",
                                    object$ess, nrow(d), format(round(object$pareto_k, 2)))) +
    plot_theme()
}

#' @rdname sgais_plots
#' @export
plot_data.sgais_ns_fit <- function(object, which = c("likelihood", "contributions"), ...) {
  object <- validate_sgais_evidence(object, sys.call())
  call <- sys.call()
  which <- plot_panel(which, c("likelihood", "contributions"), call, ...)
  df <- as.data.frame(object)
  lv <- df$log_volume
  switch(which,
    likelihood = data.frame(minus_log_volume = -lv, log_likelihood = df$log_likelihood),
    contributions = {
      # w_i = X_{i-1} - X_i, in logs: log X_{i-1} + log(1 - X_i / X_{i-1}); X_0 = 1
      prev <- c(0, lv[-length(lv)])
      log_w <- prev + log(-expm1(lv - prev))
      lc <- df$log_likelihood + log_w
      data.frame(minus_log_volume = -lv, share = exp(lc - log_sum_exp(lc)))
    }
  )
}

#' @rdname sgais_plots
#' @export
autoplot.sgais_ns_fit <- function(object, which = c("likelihood", "contributions"), ...) {
  call <- sys.call()
  which <- plot_panel(which, c("likelihood", "contributions"), call, ...)
  d <- plot_data.sgais_ns_fit(object, which = which)
  p <- switch(which,
    likelihood = series_plot(d, "minus_log_volume", "log_likelihood",
                             "log-likelihood of the removed point", points = FALSE),
    contributions = series_plot(d, "minus_log_volume", "share", "share of the evidence per point",
                                points = FALSE)
  )
  p + ggplot2::labs(x = "-log prior volume (nats)", title = fit_title(object)) + plot_theme()
}

#' @rdname sgais_plots
#' @export
plot_data.sgais_comparison <- function(object, which = c("probability", "bayes_factor"), ...) {
  call <- sys.call()
  which <- plot_panel(which, c("probability", "bayes_factor"), call, ...)
  object <- validate_sgais_comparison(object, call)
  df <- as.data.frame(object)
  value <- if (which == "probability") "probability" else "log_bayes_factor"
  bounds <- comparison_intervals(df, object$prior, which)
  data.frame(model = df$model, n = df$n, value = df[[value]], lower = bounds$lower,
             upper = bounds$upper)
}

# +/- 2 SE intervals of a comparison's trajectory `df` (NA where a model has no SE): for the log
# Bayes factor against the best model, +/- 2 sqrt(se_k^2 + se_best^2); for a probability, its
# value when the model's log evidence is 2 SE lower and every other's 2 SE higher, and the
# reverse (conservative: all moving against it at once).
comparison_intervals <- function(df, prior, which) {
  lower <- upper <- rep(NA_real_, nrow(df))
  for (n in unique(df$n)) {
    i <- which(df$n == n)
    z <- df$log_evidence[i]
    se <- df$log_evidence_se[i]
    if (anyNA(se)) next
    if (which == "bayes_factor") {
      best <- which.max(z)
      half <- 2 * sqrt(se^2 + se[best]^2)
      half[best] <- 0
      lower[i] <- df$log_bayes_factor[i] - half
      upper[i] <- df$log_bayes_factor[i] + half
    } else {
      bounds <- probability_bounds(z + log(prior[as.character(df$model[i])]), se)
      lower[i] <- bounds$lower
      upper[i] <- bounds$upper
    }
  }
  list(lower = lower, upper = upper)
}

# The bounds of the posterior probabilities of models `k` from their log posterior weights
# `log_post` (log evidence + log prior) and the SEs of their log evidences: model k's
# probability when its log evidence is 2 SE lower and every other's 2 SE higher, and the
# reverse (conservative: all moving against it at once). An SE of 0 is a log evidence known
# exactly.
probability_bounds <- function(log_post, se, k = seq_along(log_post)) {
  if (all(se == 0)) {
    p <- exp(log_post[k] - log_sum_exp(log_post))
    return(list(lower = p, upper = p))
  }
  at <- function(j, sign) {
    shifted <- log_post - sign * 2 * se
    shifted[j] <- log_post[j] + sign * 2 * se[j]
    exp(shifted[j] - log_sum_exp(shifted))
  }
  list(lower = vapply(k, at, numeric(1), sign = -1), upper = vapply(k, at, numeric(1), sign = 1))
}

# Probability bounds as printed: "[lower, upper]" to 2 significant digits ("" where lower is NA).
probability_interval_labels <- function(lower, upper) {
  each <- function(p) vapply(signif(p, 2), format, character(1), scientific = 3)
  ifelse(is.na(lower), "", sprintf("[%s, %s]", each(lower), each(upper)))
}

#' @rdname sgais_plots
#' @export
autoplot.sgais_comparison <- function(object, which = c("probability", "bayes_factor"), ...) {
  call <- sys.call()
  which <- plot_panel(which, c("probability", "bayes_factor"), call, ...)
  d <- plot_data.sgais_comparison(object, which = which)
  y_label <- if (which == "probability") "posterior model probability" else
    "log Bayes factor against the best model (nats)"
  intervals <- !all(is.na(d$lower))
  colours <- ggplot2::scale_colour_manual(NULL, values = palette_for(levels(d$model)))
  if (length(unique(d$n)) < 2L) {
    # one n: a dot (and interval) per model, not a one-point trajectory
    p <- ggplot2::ggplot(d, ggplot2::aes(.data$model, .data$value, colour = .data$model)) +
      ggplot2::geom_point(size = 2.5)
    if (intervals) {
      p <- p + ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$lower, ymax = .data$upper),
                                      width = 0.15, na.rm = TRUE)
    }
    return(p + colours + ggplot2::guides(colour = "none") +
             ggplot2::labs(x = NULL, y = y_label,
                           subtitle = sprintf("after %s observations%s", format_count(d$n[1]),
                                              if (intervals) "; bars: +/- 2 SE" else "")) +
             plot_theme())
  }
  p <- ggplot2::ggplot(d, ggplot2::aes(.data$n, .data$value, colour = .data$model))
  if (intervals) {
    p <- p + ggplot2::geom_ribbon(ggplot2::aes(ymin = .data$lower, ymax = .data$upper,
                                               fill = .data$model),
                                  alpha = 0.2, colour = NA, na.rm = TRUE) +
      ggplot2::scale_fill_manual(NULL, values = palette_for(levels(d$model)))
  }
  p + ggplot2::geom_line() + ggplot2::geom_point(size = 0.8) + colours + log_x_axis() +
    ggplot2::labs(x = "observations (log scale)", y = y_label) + plot_theme()
}

#' @rdname sgais_plots
#' @export
plot_data.sgais_shifts <- function(object, which = c("trajectory", "scores"), ...) {
  call <- sys.call()
  which <- plot_panel(which, c("trajectory", "scores"), call, ...)
  s <- as.data.frame(object, which = "scores")
  keep <- c(if ("model" %in% names(s)) "model", "at", "to",
            if (which == "trajectory") "log_predictive_per_obs" else c("score", "signal"),
            "flagged")
  out <- s[keep]
  if (which == "scores") out <- out[!is.na(out$score), , drop = FALSE]
  rownames(out) <- NULL
  out
}

#' @rdname sgais_plots
#' @export
autoplot.sgais_shifts <- function(object, which = c("trajectory", "scores"), ...) {
  call <- sys.call()
  which <- plot_panel(which, c("trajectory", "scores"), call, ...)
  d <- plot_data.sgais_shifts(object, which = which)
  by_model <- "model" %in% names(d)
  aes_line <- if (by_model) {
    ggplot2::aes(.data$to, .data[[if (which == "scores") "score" else "log_predictive_per_obs"]],
                 colour = .data$model)
  } else {
    ggplot2::aes(.data$to, .data[[if (which == "scores") "score" else "log_predictive_per_obs"]])
  }
  p <- ggplot2::ggplot(d, aes_line)
  flagged <- d[d$flagged, , drop = FALSE]
  if (nrow(flagged)) {
    p <- p + ggplot2::geom_vline(ggplot2::aes(xintercept = .data$at), data = flagged,
                                 colour = colour_at(2), linetype = "dashed")
  }
  # a line needs two chunks in a group (one scored chunk makes a point only)
  several <- max(if (by_model) table(d$model) else nrow(d), 0L) > 1L
  p <- p + (if (by_model) line_if(several) else line_if(several, colour = colour_at(1)))
  p <- p + (if (by_model) ggplot2::geom_point(size = 0.8)
            else ggplot2::geom_point(colour = colour_at(1), size = 0.8))
  if (by_model) {
    p <- p + ggplot2::scale_colour_manual(NULL, values = palette_for(unique(d$model)))
  }
  if (which == "scores") {
    p <- p + ggplot2::geom_hline(yintercept = object$threshold, linetype = "dotted")
  }
  p + ggplot2::scale_x_continuous(labels = count_labels) +
    ggplot2::labs(x = "observations (end of chunk)",
                    y = if (which == "scores") "shift score (robust sds)"
                        else "log predictive per observation of the chunk",
                    caption = if (nrow(flagged)) "dashed: start of a flagged chunk" else NULL) +
    plot_theme()
}

#' @rdname sgais_plots
#' @export
plot.sgais_evidence <- function(x, ..., colours = NULL, col = NULL) {
  call <- sys.call()
  colours <- check_colours(colours %||% col, call)
  if (!is.null(colours)) {
    old <- options(sgais.colours = colours)
    on.exit(options(old), add = TRUE)
  }
  p <- autoplot(x, ...)
  print(p)
  invisible(p)
}

# `colours` (or plot()'s `col`): NULL, or colours R knows, recycled over the series.
check_colours <- function(colours, call) {
  if (is.null(colours)) return(NULL)
  ok <- is.character(colours) && length(colours) >= 1L && !anyNA(colours) &&
    !inherits(tryCatch(grDevices::col2rgb(colours), error = identity), "error")
  if (!ok) {
    abort(sprintf("`colours` (or `col`) must be colours such as \"red\" or \"#0072B2\", not %s.",
                  describe(colours)), call, "sgais_error_argument")
  }
  colours
}

#' @rdname sgais_plots
#' @export
plot.sgais_comparison <- plot.sgais_evidence

#' @rdname sgais_plots
#' @export
plot.sgais_shifts <- plot.sgais_evidence

#' Overlay evidence estimates of the same data
#'
#' One picture of several fits of the same observations, as the paper's accuracy figures
#' (Figures 2a, 3a, 4a): each [sgais()] fit's trajectory \eqn{\log \hat Z_n / n} against
#' \eqn{n}, with a band of \eqn{\pm 2} standard errors where it has them; each [ais()] and
#' [nested_sampling()] estimate as a point at its \eqn{N} with \eqn{\pm 2} standard error bars
#' (from replicates, or a single run's own: for nested sampling \eqn{\sqrt{H/M}}); and the exact
#' curve when
#' the model has one.
#'
#' @param ... Fits from [sgais()], [ais()] or [nested_sampling()], or one list of them. Names
#'   (of the arguments or of the list) label them; unnamed fits are labelled by their method.
#' @param exact Draw the exact evidence when the model has one.
#' @return `plot_evidence()`: a ggplot object. `evidence_data()`: the data frame behind it, one
#'   row per fit and \eqn{n} (`label`, `method`, `n`, `log_evidence_per_obs`, `lower`, `upper`),
#'   with the exact values as rows labelled `"exact"`.
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(2000, seed = 1))
#' plot_evidence(sgais = sgais(model, seed = 1, progress = FALSE),
#'               ais = ais(model, seed = 1, progress = FALSE),
#'               ns = nested_sampling(model, seed = 1, progress = FALSE))
plot_evidence <- function(..., exact = TRUE) {
  d <- evidence_data(..., exact = exact)
  fits <- d[d$label != "exact", , drop = FALSE]
  labels <- unique(fits$label)
  colours <- stats::setNames(palette_for(labels), labels)
  # the estimators with a trajectory are lines, the others points
  trajectory <- fits$method %in% c("SGAIS", "SIR", "sequential SG-MCMC",
                                    "sequential SG-MCMC + NS", "Online NS")
  lines <- fits[trajectory, , drop = FALSE]
  points <- fits[!trajectory, , drop = FALSE]
  p <- ggplot2::ggplot(mapping = ggplot2::aes(.data$n, .data$log_evidence_per_obs,
                                              colour = .data$label))
  ribbon <- nrow(lines) && any(!is.na(lines$lower))
  if (ribbon) {
    p <- p + ggplot2::geom_ribbon(ggplot2::aes(ymin = .data$lower, ymax = .data$upper,
                                               fill = .data$label, colour = NULL),
                                  data = lines, alpha = 0.2, na.rm = TRUE, show.legend = FALSE)
  }
  if (nrow(lines)) {
    p <- p + line_if(max(table(lines$label)) > 1L, data = lines) + ggplot2::geom_point(data = lines, size = 0.6)
  }
  if (nrow(points)) {
    if (any(!is.na(points$lower))) {
      p <- p + ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$lower, ymax = .data$upper),
                                      data = points[!is.na(points$lower), , drop = FALSE],
                                      width = 0.05)
    }
    p <- p + ggplot2::geom_point(data = points, size = 2)
  }
  ex <- d[d$label == "exact", , drop = FALSE]
  if (nrow(ex)) {
    # a dashed line, or a cross where there is one n only
    p <- p + line_if(nrow(ex) > 1L, data = ex, ggplot2::aes(colour = NULL), colour = "black",
                     linetype = "dashed") +
      (if (nrow(ex) == 1L) ggplot2::geom_point(data = ex, ggplot2::aes(colour = NULL),
                                               colour = "black", shape = 4, size = 3))
  }
  # a fill scale only for the ribbons (without any, ggplot2 4 warns that no level is used)
  p + ggplot2::scale_colour_manual(NULL, values = colours) +
    (if (ribbon) ggplot2::scale_fill_manual(NULL, values = colours)) +
    log_x_axis() +
    ggplot2::labs(x = "observations (log scale)", y = "log evidence per observation",
                  caption = if (nrow(ex) > 1L) "dashed: exact" else if (nrow(ex)) "cross: exact" else NULL) +
    plot_theme()
}

#' @rdname plot_evidence
#' @export
evidence_data <- function(..., exact = TRUE) {
  call <- sys.call()
  fits <- list(...)
  if (length(fits) == 1L && is.list(fits[[1]]) && !inherits(fits[[1]], "sgais_evidence")) {
    fits <- fits[[1]]
  }
  if (!length(fits)) abort("Give at least one fit.", call, class = "sgais_error_argument")
  exact <- check_flag(exact, "exact", call)
  for (i in seq_along(fits)) {
    if (!inherits(fits[[i]], "sgais_evidence")) {
      abort(sprintf("Fit %d is %s, not a fit from sgais(), ais() or nested_sampling().",
                    i, describe(fits[[i]])), call, class = "sgais_error_argument")
    }
    fits[[i]] <- validate_sgais_evidence(fits[[i]], call)
  }
  check_unique_names(names(fits), "The fits", call)
  labels <- names(fits) %||% rep("", length(fits))
  methods <- vapply(fits, function(f) f$method, character(1))
  labels[labels == ""] <- methods[labels == ""]
  labels <- make.unique(labels, sep = " ")
  # fits of the same number of observations must be of the same observations
  n_all <- vapply(fits, function(f) as.numeric(f$n), numeric(1))
  digests <- vapply(fits, function(f) as.character(f$data_digest)[1], character(1))
  for (n in unique(n_all)) {
    if (length(unique(digests[n_all == n])) > 1L) {
      abort(sprintf("The fits of %s observations are not of the same observations (their `data_digest` differ).",
                    format_count(n)), call, class = "sgais_error_argument")
    }
  }
  rows <- lapply(seq_along(fits), function(i) {
    f <- fits[[i]]
    if (inherits(f, c("sgais_fit", "sgais_online_ns_fit"))) {
      tr <- as.data.frame(f)
      n <- tr$n
      z <- tr$log_evidence
      se <- tr$log_evidence_se
    } else {
      n <- f$n
      z <- f$log_evidence
      se <- f$log_evidence_se
      if (is.null(se) || is.na(se)) se <- f$log_evidence_sd %||% NA_real_
    }
    data.frame(label = labels[i], method = f$method, n = n, log_evidence_per_obs = z / n,
               lower = (z - 2 * se) / n, upper = (z + 2 * se) / n, stringsAsFactors = FALSE)
  })
  out <- do.call(rbind, rows)
  if (exact) {
    # the exact curve of the fit with the most observations, at every n shown
    model <- fits[[which.max(n_all)]]$model
    n <- sort(unique(out$n))
    z <- exact_or_null(model, n)
    if (!is.null(z)) {
      out <- rbind(out, data.frame(label = "exact", method = "exact", n = n,
                                   log_evidence_per_obs = z / n, lower = NA_real_,
                                   upper = NA_real_, stringsAsFactors = FALSE))
    }
  }
  out$label <- factor(out$label, levels = unique(out$label))
  rownames(out) <- NULL
  out
}
