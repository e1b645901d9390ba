#' Check a model's gradients against finite differences
#'
#' Every estimator in sgais moves its particles with the gradients of the log prior and the
#' log-likelihood that the model computes (in C for the built-in models and [compiled_model()],
#' with your R function for [custom_model()]); a wrong gradient gives a wrong evidence without
#' any error. `check_gradients()` compares both gradients with central finite differences
#' of the log prior and log-likelihood themselves, at random draws from the prior (or at points
#' you give), parameter by parameter.
#'
#' The finite differences use the five-point central stencil
#' \eqn{(-f(x + 2h) + 8f(x + h) - 8f(x - h) + f(x - 2h)) / 12h}{(-f(x+2h) + 8f(x+h) - 8f(x-h) +
#' f(x-2h)) / 12h} with \eqn{h = 10^{-3} \max(w, |x|)}{h = 1e-3 max(w, |x|)}, where \eqn{w}{w} is
#' the parameter's spread under the prior (the interquartile range of 200 prior draws over 1.349,
#' the sd of a normal prior), so that the step follows the data's units; its truncation
#' error is of order \eqn{h^4}; its rounding error is about \eqn{10^{-13} |f| / h}, so relative
#' errors near 1e-8 or below mean the gradient is right, and a mistake typically shows as an
#' error of order one. The relative error is \eqn{|g - \hat g| / \max(|g|, |\hat g|, 1)}{|g -
#' g_fd| / max(|g|, |g_fd|, 1)}: absolute for gradients smaller than one.
#'
#' @param model A model, e.g. from [linear_regression()], [softmax_regression()],
#'   [gaussian_mixture()] or [custom_model()].
#' @param n Number of random prior draws to check at (ignored when `theta` is given).
#' @param observations The log-likelihood is that of the first `observations` rows (all rows by
#'   default, at most 1,000: the check is of the code, not of the data).
#' @param theta Optional points to check at instead of prior draws: a numeric vector of length
#'   `model$dim`, or a matrix with one such row per point (e.g. from [posterior_samples()]).
#' @param seed Optional seed for the prior draws; the caller's random stream is left as it was.
#' @return A data frame of class `sgais_gradient_check` with a row per point, term and parameter:
#'   `point`, `term` (`"log_prior"` or `"log_likelihood"`), `parameter`, `analytic` (the model's
#'   gradient), `numeric` (the finite difference) and `rel_error`. It prints as a summary.
#' @export
#' @examples
#' model <- softmax_regression(y ~ ., simulate_softmax_regression(200, dim = 3, seed = 1))
#' check <- check_gradients(model, seed = 1)
#' check
#' max(check$rel_error)
check_gradients <- function(model, n = 5, observations = min(nobs(model), 1000L), theta = NULL,
                            seed = NULL) {
  call <- sys.call()
  check_all_rows(model, call)
  n <- check_whole_number(n, "n", 1, call)
  observations <- check_whole_number(observations, "observations", 1, call)
  if (observations > model$n) {
    abort(sprintf("`observations` must not exceed the number of observations (%s).",
                  format_count(model$n)), call)
  }
  seed <- check_seed(seed, call)
  points <- if (is.null(theta)) {
    t(with_seed(seed, model_prior_draw(model, n)))
  } else {
    check_theta_points(theta, model, call)
  }
  evaluate <- function(x) model_evaluate(model, x, 0L, observations)
  # each parameter's step is a fraction of its prior's spread (the interquartile range of draws
  # of a fixed seed; the caller's stream is untouched), so that the check does not depend on the
  # data's units
  width <- apply(with_seed(1L, model_prior_draw(model, 200L)), 1, stats::IQR) / 1.349
  width[!is.finite(width) | width <= 0] <- 1
  rows <- lapply(seq_len(nrow(points)), function(i) {
    gradient_rows(evaluate, points[i, ], model$parameter_names, i, call, width)
  })
  out <- do.call(rbind, rows)
  rownames(out) <- NULL
  structure(out, class = c("sgais_gradient_check", "data.frame"),
            model = model$label, observations = observations)
}

check_theta_points <- function(theta, model, call) {
  if (is.null(dim(theta))) theta <- matrix(theta, nrow = 1L)
  if (!is.numeric(theta) || length(dim(theta)) != 2L || ncol(theta) != model$dim ||
      nrow(theta) < 1L) {
    abort(sprintf("`theta` must be a numeric vector of length %d or a matrix with %d columns.",
                  model$dim, model$dim), call)
  }
  if (any(!is.finite(theta))) abort("`theta` must be finite (no NA, NaN or Inf).", call)
  theta
}

# The rows of one point: `evaluate(theta)` returns the log prior, the log-likelihood and their
# gradients as model_evaluate() does; each gradient is compared with the five-point central
# difference of its function, with step 1e-3 of the parameter's prior spread `width` (or of
# |theta_j| when larger, against rounding).
gradient_rows <- function(evaluate, theta, names, point, call, width = rep(1, length(theta))) {
  at <- evaluate(theta)
  if (!is.finite(at$log_prior) || !is.finite(at$log_lik)) {
    abort(sprintf("The log prior or log-likelihood is not finite at point %d; the gradients cannot be checked there.",
                  point), call)
  }
  numeric_grad <- vapply(seq_along(theta), function(j) {
    h <- 1e-3 * max(width[j], abs(theta[j]))
    f <- function(step) {
      x <- theta
      x[j] <- x[j] + step * h
      e <- evaluate(x)
      c(e$log_prior, e$log_lik)
    }
    (-f(2) + 8 * f(1) - 8 * f(-1) + f(-2)) / (12 * h)
  }, numeric(2))
  analytic <- c(at$grad_log_prior, at$grad_log_lik)
  numeric <- c(numeric_grad[1L, ], numeric_grad[2L, ])
  data.frame(
    point = point,
    term = rep(c("log_prior", "log_likelihood"), each = length(theta)),
    parameter = rep(names, 2L),
    analytic = analytic,
    numeric = numeric,
    rel_error = abs(analytic - numeric) / pmax(abs(analytic), abs(numeric), 1),
    stringsAsFactors = FALSE
  )
}

#' @export
format.sgais_gradient_check <- function(x, ...) {
  worst <- function(term) {
    r <- x[x$term == term, , drop = FALSE]
    i <- which.max(r$rel_error)
    sprintf("  %-15s largest relative error %.1e (%s, point %d)", paste0(sub("_", " ", term), ":"),
            r$rel_error[i], r$parameter[i], r$point[i])
  }
  c(
    sprintf("<gradient check: %s>", attr(x, "model")),
    sprintf("  %d point%s, %d parameters, log-likelihood of the first %s observations",
            max(x$point), if (max(x$point) > 1) "s" else "", sum(x$point == 1L) / 2L,
            format_count(attr(x, "observations"))),
    worst("log_prior"),
    worst("log_likelihood")
  )
}

#' @export
print.sgais_gradient_check <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}
