# The R side of the model interface. A model object (class `sgais_model`) is a list whose fields
# `family`, `data` and `hyper` are read by the C core (src/model.c builds its sg_model from them);
# `spec` is what turns rows of data into `data` (R/model_spec.R), hyperparameters included: `hyper`
# is `spec$hyper`. The other fields are for people: a label, sizes, parameter names and a
# description of the likelihood and prior for print().

new_sgais_model <- function(family, data, spec, n, parameter_names, label, details, ...,
                            class = character()) {
  hyper <- spec$hyper
  stopifnot(
    is.character(family), length(family) == 1L, is.list(data), is.list(spec), is.list(hyper),
    !is.null(names(hyper)), is.numeric(n), is.character(parameter_names),
    is.character(details), !is.null(names(details))
  )
  structure(
    list(
      family = family, data = data, hyper = hyper, spec = spec, n = as.integer(n),
      dim = length(parameter_names), parameter_names = parameter_names,
      label = label, details = details, ...
    ),
    class = c(class, "sgais_model")
  )
}

#' @export
format.sgais_model <- function(x, ...) {
  names <- x$parameter_names
  shown <- if (length(names) > 8) c(names[1:7], "...") else names
  c(
    sprintf("<sgais model: %s>", x$label),
    sprintf("  observations: %s%s", format_count(x$n),
            if (model_dropped(x) > 0) sprintf(" (holds the last %s: from a fit with a bounded reservoir)",
                                              format_count(x$n - model_dropped(x))) else ""),
    sprintf("  parameters:   %d (%s)", x$dim, paste(shown, collapse = ", ")),
    sprintf("  %-13s %s", paste0(names(x$details), ":"), x$details)
  )
}

#' @export
print.sgais_model <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}

#' @importFrom stats nobs
#' @export
nobs.sgais_model <- function(object, ...) object$n

#' Exact log evidence of a model
#'
#' The closed-form log marginal likelihood \eqn{\log p(y_1, \dots, y_n)}, for models that have
#' one: Bayesian linear regression with known noise or with the conjugate prior of an unknown
#' noise variance, and a Gaussian mixture with one component. Use it to check an estimate, or an
#' estimate's whole trajectory. Other models (softmax and robust regression, mixtures of several
#' components) give an error that says so.
#'
#' For [linear_regression()] the evidence is that of \eqn{y \sim N(0, \sigma^2 I + \tau^2 A
#' A^\top)}{y ~ N(0, s^2 I + t^2 A A')} with design matrix \eqn{A}. It is computed through the
#' posterior precision \eqn{P = A^\top A / \sigma^2 + I / \tau^2}{P = A'A / s^2 + I / t^2} and its
#' Cholesky factor (no explicit inverse), accumulating \eqn{A^\top A} over the data in order, so
#' all prefix lengths cost one pass over the data.
#'
#' For [linear_regression()] with `noise_sd = NULL` (\eqn{\sigma^2 \sim \mathrm{InvGamma}(a,
#' b)}{sigma^2 ~ InvGamma(a, b)}, \eqn{\theta \mid \sigma^2 \sim N(0, \sigma^2 \tau^2 I)}{theta
#' | sigma^2 ~ N(0, sigma^2 t^2 I)}) the data are multivariate Student-t, \eqn{y \sim t_{2a}(0,
#' (b/a)(I + \tau^2 A A^\top))}{y ~ t_{2a}(0, (b/a)(I + t^2 A A'))}, computed in the same way
#' through \eqn{P = A^\top A + I / \tau^2}{P = A'A + I / t^2}:
#' \deqn{\log Z = \log\Gamma(a + \tfrac n2) - \log\Gamma(a) + a \log b - (a + \tfrac n2) \log(b +
#' \tfrac Q2) - \tfrac n2 \log 2\pi - \tfrac12 \log\det(I + \tau^2 A^\top A)}{log Z = lgamma(a +
#' n/2) - lgamma(a) + a log b - (a + n/2) log(b + Q/2) - n log(2 pi) / 2 - log det(I + t^2 A'A) / 2}
#' with \eqn{Q = y^\top y - y^\top A P^{-1} A^\top y}{Q = y'y - y'A P^-1 A'y}.
#'
#' For [gaussian_mixture()] with `components = 1` each dimension is a normal-inverse-gamma model,
#' \eqn{y_i \sim N(\mu, \sigma^2)}{y_i ~ N(mu, sigma2)}, \eqn{\mu \mid \sigma^2 \sim N(0, r
#' \sigma^2)}{mu | sigma2 ~ N(0, r sigma2)}, \eqn{\sigma^2 \sim \mathrm{InvGamma}(a, b)}{sigma2 ~
#' InvGamma(a, b)}, whose evidence is
#' \deqn{\log Z = \log\Gamma(a_n) - \log\Gamma(a) + a \log b - a_n \log b_n + \tfrac12 \log(\kappa /
#' \kappa_n) - \tfrac n2 \log 2\pi}{log Z = lgamma(a_n) - lgamma(a) + a log b - a_n log b_n +
#' log(kappa / kappa_n) / 2 - n log(2 pi) / 2}
#' with \eqn{\kappa = 1/r}{kappa = 1/r}, \eqn{\kappa_n = \kappa + n}{kappa_n = kappa + n},
#' \eqn{a_n = a + n/2} and \eqn{b_n = b + \frac12 \sum_i (y_i - \bar y)^2 + \frac{\kappa n \bar
#' y^2}{2 \kappa_n}}{b_n = b + sum (y_i - ybar)^2 / 2 + kappa n ybar^2 / (2 kappa_n)}; the
#' dimensions add.
#'
#' @param model A model, e.g. from [linear_regression()] or a one-component [gaussian_mixture()].
#' @param n Optional prefix lengths: whole numbers in `1:nobs(model)`. `NULL` (the default) means
#'   all observations.
#' @return A numeric vector, one log evidence for each element of `n`.
#' @export
#' @examples
#' data <- simulate_linear_regression(1000, seed = 1)
#' model <- linear_regression(y ~ ., data)
#' exact_log_evidence(model)
#' exact_log_evidence(model, n = c(10, 100, 1000))
exact_log_evidence <- function(model, n = NULL) {
  UseMethod("exact_log_evidence")
}

#' @export
exact_log_evidence.default <- function(model, n = NULL) {
  check_model(model, sys.call())
  abort(sprintf(
    "`model` (%s) has no closed-form evidence; estimate it with `sgais()`.", model$label
  ), sys.call())
}

# Prefix lengths for exact evidence: whole numbers in 1..N.
check_prefix_lengths <- function(n, total, call) {
  if (is.null(n)) return(total)
  if (!is.numeric(n) || length(n) == 0L || anyNA(n) || any(!is.finite(n)) ||
      any(n != round(n)) || any(n < 1) || any(n > total)) {
    abort(sprintf("`n` must hold whole numbers between 1 and %s (the number of observations).",
                  format_count(total)), call)
  }
  as.integer(n)
}

# Data as the C models read them: one column per observation (the transpose of the usual one row
# per observation), so an observation's values are contiguous and a mini-batch touches one cache
# line per observation. Names are dropped: C reads positions.
by_observation <- function(a) {
  out <- t(a)
  dimnames(out) <- NULL
  out
}

# The exact log evidence of `model` at prefix lengths n, or NULL when the model has none.
exact_or_null <- function(model, n) {
  tryCatch(exact_log_evidence(model, n = n), sgais_error = function(e) NULL)
}

# The C model functions as R sees them: log prior, log likelihood of observations
# start + 1, ..., start + n, and their gradients at theta. Used by tests and gradient checks.
model_evaluate <- function(model, theta, start = 0L, n = model$n - start) {
  with_model_errors(
    .Call(C_ffi_model_evaluate, model, as.double(theta), as.integer(start), as.integer(n))
  )
}

# n draws from the prior as a dim x n matrix.
model_prior_draw <- function(model, n) {
  with_model_errors(.Call(C_ffi_model_prior_draw, model, as.integer(n)))
}
