#' Posterior predictive density of new observations
#'
#' The log posterior predictive density of each new observation given the data a fit has seen,
#' \deqn{\log p(y' \mid y_{1:n}) = \log \int p(y' \mid \theta) \, p(\theta \mid y_{1:n}) \, d\theta
#' \approx \log \sum_i \bar w_i \, p(y' \mid \theta_i),}{log p(y' | y_1..n) = log integral p(y' |
#' theta) p(theta | y_1..n) dtheta ~ log sum_i w_i p(y' | theta_i),}
#' estimated from the fit's weighted particles (normalised weights \eqn{\bar w_i}{w_i}; nested
#' sampling: its weighted dead and live points), in log space. For a comparison of models it is
#' the model average (thesis eq. 1.5 to 1.8),
#' \eqn{p(y' \mid y_{1:n}) = \sum_k p(M_k \mid y_{1:n}) \, p(y' \mid y_{1:n}, M_k)}{p(y' | y) =
#' sum_k p(M_k | y) p(y' | y, M_k)}, with the posterior model probabilities after all `n`
#' observations. Each new observation is predicted from the data the fit has seen, not from the
#' other new observations (so the values are not the sequential predictive of a chunk, whose sum
#' is the change in log evidence when the chunk is added: see the trajectory's `log_predictive`
#' in [sgais()]).
#'
#' @param x A fit from [sgais()], [ais()] or [nested_sampling()], or a comparison from
#'   [compare_models()].
#' @param new_data New observations, as the model's constructor takes its data (see `new_data`
#'   in [sgais()]).
#' @param ... Unused.
#' @return A numeric vector: the log predictive density of each row of `new_data`.
#' @seealso [sgais()] for continuing a fit on the new observations once they are seen.
#' @export
#' @examples
#' data <- simulate_linear_regression(3000, seed = 1)
#' fit <- sgais(linear_regression(y ~ ., data[1:2000, ]), seed = 1)
#' lp <- predictive_density(fit, data[2001:3000, ])
#' mean(lp) # the mean log score of the next 1000 observations
predictive_density <- function(x, new_data, ...) {
  UseMethod("predictive_density")
}

#' @export
predictive_density.default <- function(x, new_data, ...) {
  abort_wrong_object(x, "x", paste(takes_fit, "or a comparison from `compare_models()`"),
                     sys.call())
}

#' @rdname predictive_density
#' @export
predictive_density.sgais_evidence <- function(x, new_data, ...) {
  call <- sys.call()
  check_dots_empty(call, c("x", "new_data"), ...)
  x <- validate_sgais_evidence(x, call)
  if (missing(new_data)) abort("`new_data` is missing: give the observations to predict.", call)
  check_functions_trusted(x$model, call)
  model <- model_for_prediction(x$model, new_data, call)
  p <- weighted_particles(x)
  # points whose weight is below e^-50 of the largest change nothing (nested sampling's early dead
  # points are most of its points)
  keep <- p$logw > max(p$logw) - 50
  loglik <- with_model_errors(
    .Call(C_ffi_model_pointwise_log_lik, model, t(p$theta[keep, , drop = FALSE]))
  )
  logw <- p$logw[keep] - log_sum_exp(p$logw[keep])
  # log sum_i w_i p(y_j | theta_i) for every j, by log-sum-exp over the particles
  apply(sweep(loglik, 2, logw, `+`), 1, log_sum_exp)
}

#' @rdname predictive_density
#' @export
predictive_density.sgais_comparison <- function(x, new_data, ...) {
  call <- sys.call()
  check_dots_empty(call, c("x", "new_data"), ...)
  x <- validate_sgais_comparison(x, call)
  last <- comparison_final(x)
  log_prob <- log(last$probability[match(names(x$fits), as.character(last$model))])
  each <- vapply(x$fits, predictive_density, numeric(nrow_of(new_data)), new_data = new_data)
  each <- matrix(each, ncol = length(x$fits))
  apply(sweep(each, 2, log_prob, `+`), 1, log_sum_exp)
}

# The number of observations in `new_data` as the models take it (rows, or the length of `y`).
nrow_of <- function(new_data) {
  if (is.data.frame(new_data) || is.matrix(new_data)) return(nrow(new_data))
  if (is.list(new_data) && !is.null(new_data$y)) return(length(new_data$y))
  length(new_data)
}

# A fit's posterior as weighted points: a points x parameters matrix and log-weights (any
# scale). Annealing fits: the final particles (all replicates', whose weights carry each
# replicate's evidence, so together they are the combined posterior); nested sampling: the dead
# and final live points with their posterior weights.
weighted_particles <- function(x) {
  UseMethod("weighted_particles")
}

#' @export
weighted_particles.sgais_evidence <- function(x) {
  x <- validate_sgais_evidence(x, sys.call())
  list(theta = x$state$particles, logw = x$state$log_weights)
}

#' @export
weighted_particles.sgais_ns_fit <- function(x) {
  x <- validate_sgais_evidence(x, sys.call())
  d <- x$dead
  list(theta = d[, x$model$parameter_names, drop = FALSE], logw = d[, "log_weight"])
}
