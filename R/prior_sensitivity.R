#' How the evidence and Bayes factors move with the prior's scale
#'
#' A Bayes factor is only as good as its prior: this shows, for free, how a fit's log evidence
#' (or every model's log evidence and log Bayes factor in a comparison) changes when the scales
#' of the prior are multiplied by `scales`, e.g. halved and doubled. The evidence under another
#' prior \eqn{p'} is
#' \deqn{Z' = Z \, E_{p(\theta \mid y)}\!\left[\frac{p'(\theta)}{p(\theta)}\right] \approx Z
#' \sum_i \bar w_i \frac{p'(\theta_i)}{p(\theta_i)},}{Z' = Z E_posterior[p'(theta) / p(theta)]
#' ~ Z sum_i w_i p'(theta_i) / p(theta_i),}
#' estimated from the fit's weighted particles (normalised weights \eqn{\bar w_i}{w_i}; nested
#' sampling: its weighted dead and live points) in log space, with no new run. The estimate is
#' only as good as the particles' coverage of the posterior under \eqn{p'}: the effective sample
#' size of the reweighted particles, \eqn{(\sum_i \bar w_i r_i)^2 / \sum_i (\bar w_i r_i)^2}{(sum
#' w_i r_i)^2 / sum (w_i r_i)^2} with \eqn{r_i = p'(\theta_i)/p(\theta_i)}{r_i = p'(theta_i) /
#' p(theta_i)}, is reported, and below `min_ess` the row is marked unreliable and a warning of
#' class `sgais_warning_low_ess` says so: refit with the other prior (or more particles) then.
#' A narrower prior (scale < 1) is the harder case: it puts weight where the posterior under the
#' wider prior has few particles.
#'
#' What is scaled: the coefficients' priors of the regressions (`prior_sd`, and the scales of
#' `prior` and `prior_intercept`; the priors of noise scales, overdispersion, group sds and
#' correlations keep theirs; the scale of [g_prior()] and [zellner_siow_prior()],
#' \eqn{\sqrt g}{sqrt(g)} or \eqn{r}, so that scales 1.41 and 2 take `"medium"` to `"wide"` and
#' `"ultrawide"`), and every block of a prior from building blocks ([custom_model()],
#' [compiled_model()]; an [lkj_prior()] block has no scale, and keeps its prior). Models
#' whose prior has no such scale ([gaussian_mixture()], a [custom_prior()]) are an error of
#' class `sgais_error_prior_sensitivity`.
#'
#' @param x A fit from [sgais()], [ais()], [nested_sampling()] or the other estimators, or a
#'   comparison from [compare_models()].
#' @param scales Factors for the prior scales (positive numbers); 1, the fit's own prior, is
#'   always included.
#' @param min_ess The effective sample size of the reweighted particles below which a row is
#'   unreliable (default 10).
#' @return A data frame of class `sgais_prior_sensitivity`, one row per scale (and model, for a
#'   comparison): `scale`, `log_evidence`, `change` (from the fit's own prior), `ess` and
#'   `reliable`; for a comparison also `model` and `log_bayes_factor` (against the model with the
#'   largest log evidence at the same scale).
#' @seealso [compare_models()], [exact_log_evidence()] (which gives the evidence under any
#'   normal prior of a linear regression exactly).
#' @export
#' @examples
#' data <- simulate_linear_regression(1000, seed = 1)
#' fit <- sgais(linear_regression(y ~ ., data), seed = 1)
#' prior_sensitivity(fit)
#' # the exact change when the prior sd is doubled
#' exact_log_evidence(linear_regression(y ~ ., data, prior_sd = 2)) -
#'   exact_log_evidence(linear_regression(y ~ ., data))
#'
#' cmp <- compare_models(list(all = y ~ ., two = y ~ x1 + x2), data,
#'                       family = function(formula, data) linear_regression(formula, data),
#'                       seed = 1)
#' prior_sensitivity(cmp)
prior_sensitivity <- function(x, scales = c(0.5, 2), min_ess = 10) {
  call <- sys.call()
  if (!is.numeric(scales) || length(scales) < 1L || anyNA(scales) || any(!is.finite(scales)) ||
      any(scales <= 0)) {
    abort(sprintf("`scales` must be positive finite numbers, not %s.", describe(scales)), call)
  }
  min_ess <- check_positive(min_ess, "min_ess", call)
  scales <- sort(unique(c(1, scales)))
  if (inherits(x, "sgais_comparison")) {
    x <- validate_sgais_comparison(x, call)
    rows <- lapply(names(x$fits), function(name) {
      cbind(model = name, reweighted_evidence(x$fits[[name]], scales, min_ess, call))
    })
    out <- do.call(rbind, rows)
    out$model <- factor(out$model, levels = names(x$fits))
    best <- stats::ave(out$log_evidence, out$scale, FUN = max)
    out$log_bayes_factor <- out$log_evidence - best
    out <- out[order(out$scale, out$model), c("model", "scale", "log_evidence", "change",
                                              "log_bayes_factor", "ess", "reliable")]
  } else if (inherits(x, "sgais_evidence")) {
    out <- reweighted_evidence(x, scales, min_ess, call)
  } else {
    abort(sprintf("`x` must be a fit or a comparison, not %s.", describe(x)), call)
  }
  rownames(out) <- NULL
  low <- out[!out$reliable, , drop = FALSE]
  if (nrow(low)) {
    warn(sprintf(paste(
      "The reweighted particles are too few to say at %s (effective sample size %s, below",
      "`min_ess` = %g): refit with that prior, or with more particles."),
      paste(sprintf("scale %g%s", low$scale,
                    if (is.null(low$model)) "" else sprintf(" (%s)", low$model)), collapse = ", "),
      paste(sprintf("%.1f", low$ess), collapse = ", "), min_ess), call, "sgais_warning_low_ess")
  }
  structure(out, class = c("sgais_prior_sensitivity", "data.frame"))
}

# One fit's log evidence under its prior with the scales multiplied by each of `scales`.
reweighted_evidence <- function(fit, scales, min_ess, call) {
  fit <- validate_sgais_evidence(fit, call)
  check_functions_trusted(fit$model, call)
  p <- weighted_particles(fit)
  keep <- p$logw > max(p$logw) - 50 # weights below e^-50 of the largest change nothing
  theta <- p$theta[keep, , drop = FALSE]
  logw <- p$logw[keep] - log_sum_exp(p$logw[keep])
  # the prior alone: the model on its first observation, so that building it in C at every
  # point does not pass over all the data
  model <- fit$model
  model$data <- data_columns(model$data, 1L)
  model$n <- 1
  model$dropped <- NULL
  log_prior <- function(model) {
    vapply(seq_len(nrow(theta)), function(i) model_evaluate(model, theta[i, ], 0L, 0L)$log_prior,
           numeric(1))
  }
  base <- log_prior(model)
  rows <- lapply(scales, function(k) {
    if (k == 1) return(data.frame(scale = 1, change = 0, ess = ess_of(logw)))
    lr <- logw + log_prior(scaled_prior_model(model, k, call)) - base
    data.frame(scale = k, change = log_sum_exp(lr), ess = ess_of(lr))
  })
  out <- do.call(rbind, rows)
  out$log_evidence <- fit$log_evidence + out$change
  out$reliable <- out$ess >= min_ess
  out[c("scale", "log_evidence", "change", "ess", "reliable")]
}

# The effective sample size of points with log-weights `lw` (any scale).
ess_of <- function(lw) exp(2 * log_sum_exp(lw) - log_sum_exp(2 * lw))

# `model` with the scales of its prior multiplied by k (see prior_sensitivity()).
scaled_prior_model <- function(model, k, call) {
  h <- model$hyper
  blocks <- h[["prior"]] # not h$prior, which would match h$prior_sd
  if (!is.null(h[["zellner"]])) {
    # g-prior and Zellner-Siow: the coefficients' scale is sqrt(g) or r, and h$g is g or r^2
    h$g <- h$g * k^2
  } else if (!is.null(h[["prior_sd"]])) {
    h$prior_sd <- h$prior_sd * k
    # the coefficients' blocks only: with random effects the blocks go on to the noise's, the
    # group sds' and their correlation's, which keep their priors
    coef <- if (inherits(model, c("sgais_linear_mixed", "sgais_glm_mixed")) && !is.null(blocks)) {
      blocks[2, ] < nrow(model$data$xt)
    } else {
      TRUE
    }
    if (!is.null(blocks)) h$prior[5, coef] <- blocks[5, coef] * k
  } else if (is.matrix(blocks)) {
    h$prior[5, ] <- blocks[5, ] * k
  } else {
    abort(sprintf(paste("`x` is a fit of %s, whose prior has no scale to vary (the regressions'",
                        "coefficients and priors from building blocks have)."), model$label),
          call, "sgais_error_prior_sensitivity")
  }
  model$hyper <- h
  model
}

#' @export
format.sgais_prior_sensitivity <- function(x, ...) {
  shown <- data.frame(x, check.names = FALSE)
  shown$log_evidence <- sprintf("%.3f", x$log_evidence)
  shown$change <- sprintf("%+.3f", x$change)
  if (!is.null(x$log_bayes_factor)) shown$log_bayes_factor <- sprintf("%.3f", x$log_bayes_factor)
  shown$ess <- sprintf("%.1f", x$ess)
  shown$reliable <- ifelse(x$reliable, "", "unreliable")
  c("<prior sensitivity: log evidence with the prior scales multiplied by `scale`>",
    utils::capture.output(print(shown, row.names = FALSE)),
    "  (change: from the fit's own prior, scale 1; ess: of the reweighted particles)")
}

#' @export
print.sgais_prior_sensitivity <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}
