#' Bayesian linear regression with known noise
#'
#' The paper's first model (Cameron et al. 2019, Appendix B.1): \eqn{y_i = b + x_i^\top w +
#' e_i}{y = b + x'w + e} with \eqn{e_i \sim N(0, \sigma^2)}{e ~ N(0, noise_sd^2)} of known
#' `noise_sd`, and independent \eqn{N(0, \tau^2)}{N(0, prior_sd^2)} priors on the intercept
#' \eqn{b} and on every weight in \eqn{w}. Its evidence has a closed form
#' ([exact_log_evidence()]), which makes it the reference for checking estimators.
#'
#' Give either `formula` and `data`, or the matrix interface `x` and `y`. With a formula the
#' design matrix is that of [stats::model.matrix()], so factors become dummy columns and the
#' intercept follows the formula (`- 1` removes it); with `x` and `y` an intercept column is
#' always added. Missing or infinite values are an error, not silently dropped: the evidence of
#' a data set with rows removed is the evidence of another data set.
#'
#' @param formula A model formula such as `y ~ x1 + x2` or `y ~ .`.
#' @param data A data frame holding the variables in `formula`.
#' @param noise_sd The known standard deviation \eqn{\sigma} of the noise.
#' @param prior_sd The prior standard deviation \eqn{\tau} of the intercept and each weight.
#' @param x A numeric matrix (or data frame of numeric columns, or vector) of covariates, one row
#'   per observation.
#' @param y A numeric response vector with one element per row of `x`.
#' @return A model of class `c("sgais_linear_regression", "sgais_model")` for [sgais()] and
#'   [exact_log_evidence()].
#' @seealso [simulate_linear_regression()] for the paper's data.
#' @export
#' @examples
#' data <- simulate_linear_regression(500, seed = 1)
#' model <- linear_regression(y ~ ., data)
#' model
#'
#' # the same model through the matrix interface
#' linear_regression(x = as.matrix(data[, 1:5]), y = data$y)
linear_regression <- function(formula = NULL, data = NULL, noise_sd = 1, prior_sd = 1,
                              x = NULL, y = NULL) {
  call <- sys.call()
  noise_sd <- check_positive(noise_sd, "noise_sd", call)
  prior_sd <- check_positive(prior_sd, "prior_sd", call)
  design <- regression_design(formula, data, x, y, call)
  spec <- c(design$spec, list(hyper = list(noise_sd = noise_sd, prior_sd = prior_sd)))
  new_sgais_model(
    family = "linear_regression",
    data = linear_regression_data(design, call),
    spec = spec,
    n = nrow(design$a),
    parameter_names = colnames(design$a),
    label = "Bayesian linear regression",
    details = c(
      likelihood = sprintf("%s ~ N(a'theta, sd = %s), a = row of the design", spec$response,
                           format(noise_sd)),
      prior = sprintf("theta_j ~ N(0, sd = %s), independent", format(prior_sd))
    ),
    formula = formula,
    class = "sgais_linear_regression"
  )
}

# The data the C core reads from the design of some rows (see model_data()).
linear_regression_data <- function(design, call) {
  check_response(design$y, design$what, call)
  list(xt = by_observation(design$a), y = as.double(design$y))
}

#' @exportS3Method
model_data.sgais_linear_regression <- function(model, new_data, call = NULL) {
  linear_regression_data(regression_rows(spec_of(model, call), new_data, call), call)
}

# The response of a linear regression: numeric and finite.
check_response <- function(y, what, call) {
  if (!is.numeric(y) || is.factor(y)) {
    abort(sprintf("%s must be numeric, not %s.", what, describe(y)), call)
  }
  if (length(y) < 1L) abort(sprintf("%s must have at least one observation.", what), call)
  bad <- which(!is.finite(y))
  if (length(bad)) abort_bad_observations(what, bad, "non-finite", call)
}

#' @rdname exact_log_evidence
#' @export
exact_log_evidence.sgais_linear_regression <- function(model, n = NULL) {
  check_all_rows(model, sys.call())
  n <- check_prefix_lengths(n, model$n, sys.call())
  s2 <- model$hyper[["noise_sd"]]^2
  t2 <- model$hyper[["prior_sd"]]^2
  xt <- model$data$xt
  y <- model$data$y
  p <- nrow(xt)
  ends <- sort(unique(n))
  xtx <- matrix(0, p, p)
  xty <- numeric(p)
  yy <- 0
  out <- numeric(length(ends))
  begin <- 1L
  for (k in seq_along(ends)) {
    rows <- seq.int(begin, ends[k])
    xtx <- xtx + tcrossprod(xt[, rows, drop = FALSE])
    xty <- xty + drop(xt[, rows, drop = FALSE] %*% y[rows])
    yy <- yy + sum(y[rows]^2)
    out[k] <- lr_log_evidence(xtx, xty, yy, ends[k], s2, t2)
    begin <- ends[k] + 1L
  }
  out[match(n, ends)]
}

# log N(y; 0, s2 I + t2 A A') from the sufficient statistics A'A, A'y, y'y by the matrix
# determinant lemma and Woodbury identity: with P = A'A / s2 + I / t2 = R'R and z = R^-T A'y / s2,
# log Z = -n/2 log(2 pi s2) - p/2 log t2 - sum(log diag R) - (y'y / s2 - z'z) / 2.
lr_log_evidence <- function(xtx, xty, yy, n, s2, t2) {
  p <- length(xty)
  r <- chol(xtx / s2 + diag(1 / t2, p))
  z <- backsolve(r, xty / s2, transpose = TRUE)
  -0.5 * n * log(2 * pi * s2) - 0.5 * p * log(t2) - sum(log(diag(r))) - 0.5 * (yy / s2 - sum(z^2))
}

#' Simulate the paper's linear-regression data
#'
#' Draws the intercept and `dim` weights from the standard normal prior, covariates from the
#' standard normal and the response with noise of standard deviation `noise_sd`, as in
#' Cameron et al. (2019), Section 6.1 and Appendix B.1. Rows are drawn one after another, so
#' with the same seed a smaller data set is the first rows of a larger one (the paper takes
#' its data sets as prefixes of the largest).
#'
#' @param n Number of observations.
#' @param dim Number of covariates.
#' @param noise_sd Standard deviation of the noise.
#' @param seed Optional seed; the caller's random stream is left as it was.
#' @return A data frame with columns `x1`, ..., `x<dim>` and `y`, with attributes `parameters`
#'   (the true intercept and weights) and `noise_sd`.
#' @export
#' @examples
#' data <- simulate_linear_regression(1000, seed = 42)
#' head(data)
#' attr(data, "parameters")
simulate_linear_regression <- function(n, dim = 5, noise_sd = 1, seed = NULL) {
  call <- sys.call()
  n <- check_whole_number(n, "n", 1, call)
  dim <- check_whole_number(dim, "dim", 1, call)
  noise_sd <- check_positive(noise_sd, "noise_sd", call)
  check_seed(seed, call)
  with_seed(seed, {
    theta <- stats::rnorm(dim + 1L)
    # one row of covariates and its noise per observation, drawn row after row
    draws <- matrix(stats::rnorm(n * (dim + 1)), nrow = n, byrow = TRUE)
  })
  x <- draws[, seq_len(dim), drop = FALSE]
  colnames(x) <- paste0("x", seq_len(dim))
  y <- theta[1] + drop(x %*% theta[-1]) + noise_sd * draws[, dim + 1L]
  out <- data.frame(x, y = y)
  attr(out, "parameters") <- stats::setNames(theta, c("(Intercept)", colnames(x)))
  attr(out, "noise_sd") <- noise_sd
  out
}
