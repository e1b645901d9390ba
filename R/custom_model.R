#' A model written in R
#'
#' Brings your own model to [sgais()], [ais()] and [nested_sampling()]: give its log-likelihood
#' (and ideally its gradient) as R functions of the parameters and a block of rows of the data,
#' and its prior from building blocks such as [normal_prior()]. The estimators call the
#' functions from C with a whole mini-batch (or chunk) of rows at once, so write them vectorised
#' over rows; each call costs a few microseconds of overhead, about the cost of the C gradient of
#' a linear regression on 500 rows.
#'
#' @section The functions:
#' * `log_likelihood(theta, data)` returns the log-likelihood of each row of `data`: a numeric
#'   vector with one element per row (`-Inf` for a zero likelihood; `NA`, `NaN` and `+Inf` are
#'   errors). `theta` is the named parameter vector and `data` a numeric matrix holding some
#'   rows of the data, with its column names (so write `data[, "y"]`, not `data$y`).
#' * `gradient(theta, data)` returns the gradient with respect to `theta` of the *sum* of those
#'   log-likelihoods, a vector as long as `theta`; a matrix with one row per row of `data` (the
#'   gradients of each row's log-likelihood) is accepted too and summed, but costs more.
#'
#' Without `gradient`, central finite differences of `log_likelihood` are used, which costs
#' `2 * length(theta)` extra calls per gradient and is slower and less accurate, so
#' `custom_model()` warns. Check a hand-written gradient with [check_gradients()], which
#' compares it with finite differences at draws from the prior.
#'
#' Errors in the functions stop the estimator with an error of class `sgais_error_model` that
#' names the function, as do results of the wrong length or type, or `NA`. The functions should
#' not use random numbers.
#'
#' @section Parameters on constrained scales:
#' The samplers move on the whole real line. Give a standard deviation as its log (and use
#' `exp()` of it in the likelihood) with a prior for scales such as [half_normal_prior()], which
#' includes the Jacobian of the transform. Other constraints need a transform and its
#' log-Jacobian in the prior ([custom_prior()]).
#'
#' @param log_likelihood `function(theta, data)`: per-row log-likelihoods (see below).
#' @param gradient `function(theta, data)`: the gradient of their sum, or `NULL` for numerical
#'   gradients.
#' @param data The observations: a data frame of numeric (or logical) columns or a numeric
#'   matrix, one row per observation. Factors must be coded first (e.g. with
#'   [stats::model.matrix()]).
#' @param parameter_names Names of the parameters; or give their number as `dim`.
#' @param prior The prior: building blocks such as `normal_prior(sd = 10)` (one block covers
#'   every parameter), joined with `c()` ([normal_prior()]), or a [custom_prior()].
#' @param dim The number of parameters, when `parameter_names` is not given (they are then
#'   `theta1`, `theta2`, ...).
#' @param label A short name for the model in printed output and plots.
#' @return A model of class `c("sgais_custom_model", "sgais_model")`.
#' @seealso [check_gradients()]; [compiled_model()] for models written in C.
#' @export
#' @examples
#' # linear regression with unknown noise: y = a + b x + e, e ~ N(0, sigma^2)
#' set.seed(1)
#' d <- data.frame(x = rnorm(200))
#' d$y <- 1 + 2 * d$x + rnorm(200, sd = 0.5)
#' model <- custom_model(
#'   log_likelihood = function(theta, data) {
#'     mu <- theta[1] + theta[2] * data[, "x"]
#'     stats::dnorm(data[, "y"], mu, exp(theta[3]), log = TRUE)
#'   },
#'   gradient = function(theta, data) {
#'     s2 <- exp(2 * theta[3])
#'     r <- data[, "y"] - theta[1] - theta[2] * data[, "x"]
#'     c(sum(r) / s2, sum(r * data[, "x"]) / s2, sum(r^2) / s2 - length(r))
#'   },
#'   data = d,
#'   parameter_names = c("a", "b", "log_sigma"),
#'   prior = c(normal_prior(sd = 10, dim = 2), half_normal_prior(scale = 2))
#' )
#' model
#' check_gradients(model, seed = 1)
#' \donttest{
#' fit <- sgais(model, seed = 1)
#' fit
#' }
custom_model <- function(log_likelihood, gradient = NULL, data, parameter_names = NULL,
                         prior = normal_prior(), dim = NULL, label = "custom model") {
  call <- sys.call()
  check_function(log_likelihood, "log_likelihood", 2L, call)
  if (!is.null(gradient)) check_function(gradient, "gradient", 2L, call)
  if (missing(data)) abort("`data` must be given: the observations, one row per observation.", call)
  parameter_names <- check_parameter_names(parameter_names, dim, call)
  if (!is.character(label) || length(label) != 1L || is.na(label)) {
    abort("`label` must be a string.", call)
  }
  x <- custom_data_matrix(data, "`data`", call)
  columns <- colnames(x)
  fns <- list(log_likelihood = log_likelihood,
              gradient = if (is.null(gradient)) {
                warn(paste0(
                  "No `gradient`: using finite differences of `log_likelihood`, which cost ",
                  2L * length(parameter_names), " extra calls per gradient and lose accuracy. ",
                  "Give `gradient` for speed, and check it with `check_gradients()`."
                ), call, class = "sgais_warning_numerical_gradient")
                numerical_gradient(log_likelihood)
              } else {
                gradient
              },
              prior_log_density = NULL, prior_gradient = NULL, prior_draw = NULL)
  hyper <- list()
  if (inherits(prior, "sgais_custom_prior")) {
    fns$prior_log_density <- prior$log_density
    fns$prior_gradient <- prior$gradient
    fns$prior_draw <- prior$draw
  } else {
    hyper$prior <- prior_matrix(prior, length(parameter_names), call)
  }
  hyper$prior_description <- describe_prior(prior, parameter_names)
  model <- new_sgais_model(
    family = "custom",
    data = list(xt = by_observation(x)),
    spec = list(columns = columns, hyper = hyper),
    n = nrow(x),
    parameter_names = parameter_names,
    label = label,
    details = c(likelihood = "given by R functions (log_likelihood, gradient)",
                prior = hyper$prior_description),
    functions = fns,
    block_dimnames = list(NULL, columns),
    prior = prior,
    class = "sgais_custom_model"
  )
  check_custom_functions(model, call)
  model
}

#' @exportS3Method
model_data.sgais_custom_model <- function(model, new_data, call = NULL) {
  x <- custom_data_matrix(new_data, "`new_data`", call)
  columns <- model$spec$columns
  missing_columns <- setdiff(columns, colnames(x))
  if (length(missing_columns)) {
    abort(sprintf("`new_data` has no column `%s`, which the model uses.", missing_columns[1]),
          call, class = c("sgais_error_missing_column", "sgais_error_data_mismatch"),
          column = missing_columns[1])
  }
  list(xt = by_observation(x[, columns, drop = FALSE]))
}

# Data of a custom or compiled model as a numeric matrix with named columns, one row per
# observation; non-finite values are errors (as in every constructor).
custom_data_matrix <- function(data, what, call) {
  if (is.data.frame(data)) {
    bad <- which(!vapply(data, function(col) is.numeric(col) || is.logical(col), logical(1)))
    if (length(bad)) {
      abort(sprintf(
        "%s must have numeric columns; column `%s` is %s. Code factors first, e.g. with `model.matrix()`.",
        what, names(data)[bad[1]], describe(data[[bad[1]]])
      ), call)
    }
    x <- matrix(as.double(unlist(data, use.names = FALSE)), nrow = nrow(data),
                dimnames = list(NULL, names(data)))
  } else if (is.matrix(data) && (is.numeric(data) || is.logical(data))) {
    x <- data
    storage.mode(x) <- "double"
  } else if (is.numeric(data) && is.null(dim(data))) {
    x <- matrix(as.double(data), ncol = 1L)
  } else {
    abort(sprintf("%s must be a data frame or numeric matrix, not %s.", what, describe(data)), call)
  }
  if (nrow(x) < 1L || ncol(x) < 1L) abort(sprintf("%s must have at least one row and column.", what), call)
  if (is.null(colnames(x))) colnames(x) <- paste0("x", seq_len(ncol(x)))
  if (anyNA(colnames(x)) || any(colnames(x) == "") || anyDuplicated(colnames(x))) {
    abort(sprintf("%s must have distinct, non-empty column names.", what), call)
  }
  check_finite_cells(x, what, call)
  rownames(x) <- NULL
  x
}

check_function <- function(f, arg, n_args, call) {
  if (!is.function(f)) abort(sprintf("`%s` must be a function, not %s.", arg, describe(f)), call)
  formals_n <- length(formals(args(f)))
  if (formals_n < n_args && !("..." %in% names(formals(args(f))))) {
    abort(sprintf("`%s` must take %d argument%s.", arg, n_args, if (n_args == 1L) "" else "s"),
          call)
  }
  invisible(f)
}

check_parameter_names <- function(parameter_names, dim, call) {
  if (is.null(parameter_names)) {
    if (is.null(dim)) abort("Give the parameters' names as `parameter_names`, or their number as `dim`.", call)
    dim <- check_whole_number(dim, "dim", 1, call)
    return(paste0("theta", seq_len(dim)))
  }
  if (!is.character(parameter_names) || length(parameter_names) < 1L || anyNA(parameter_names) ||
      any(parameter_names == "") || anyDuplicated(parameter_names)) {
    abort("`parameter_names` must be distinct, non-empty strings.", call)
  }
  if (!is.null(dim) && !identical(as.numeric(dim), as.numeric(length(parameter_names)))) {
    abort(sprintf("`dim` (%s) differs from the number of `parameter_names` (%d).", format(dim),
                  length(parameter_names)), call)
  }
  parameter_names
}

# Evaluates `expr`, a .Call that may call back the R functions of a custom_model(), turning an R
# error inside one of them into an sgais_error_model condition that names it (the C core says
# which function was running; src/custom_model.c). One handler per .Call: a wrapper around each
# function would cost more than the call itself on small blocks.
with_model_errors <- function(expr) {
  withCallingHandlers(expr, error = function(e) {
    fun <- .Call(C_ffi_custom_model_failed)
    if (!is.null(fun) && !inherits(e, "sgais_error")) {
      abort(sprintf("`%s` failed: %s", fun, conditionMessage(e)), class = "sgais_error_model",
            parent = e)
    }
  })
}

# The gradient of sum(log_likelihood(theta, data)) by central differences with steps
# 1e-5 max(1, |theta_j|) (relative error about 1e-10 for smooth functions).
numerical_gradient <- function(log_likelihood) {
  f <- log_likelihood
  function(theta, data) {
    h <- 1e-5 * pmax(1, abs(theta))
    vapply(seq_along(theta), function(j) {
      up <- theta
      down <- theta
      up[j] <- theta[j] + h[j]
      down[j] <- theta[j] - h[j]
      (sum(f(up, data)) - sum(f(down, data))) / (2 * h[j])
    }, numeric(1))
  }
}

# Evaluates the model once at a prior draw on its first rows, so that a function returning the
# wrong length or type fails when the model is built, not in the middle of a run.
check_custom_functions <- function(model, call) {
  theta <- with_rng_restored({
    set.seed(1L)
    drop(model_prior_draw(model, 1L))
  })
  tryCatch(
    model_evaluate(model, theta, 0L, min(model$n, 10L)),
    sgais_error = function(e) {
      abort(sprintf("`%s` cannot be evaluated at a draw from its prior: %s", "model",
                    conditionMessage(e)), call, class = class(e)[1])
    }
  )
  invisible(model)
}
