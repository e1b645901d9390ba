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
#' @section Saved fits:
#' A fit of a model written in R holds the model's functions, but sgais runs them only in the R
#' session that built the model: a fit (or checkpoint) read from a file is printed, plotted and
#' summarised as usual, but continuing it, auditing it, or computing predictive densities or
#' prior sensitivity from it is an error of class `sgais_error_untrusted_functions` until you
#' build the model again and give its functions back with [reattach_functions()]. Code in a file
#' is not run because the file was read.
#'
#' Errors in the functions stop the estimator with an error of class `sgais_error_model` that
#' names the function, as do results of the wrong length or type, or `NA`. The functions must
#' not use random numbers: `custom_model()` evaluates them twice at one point and refuses
#' functions that give other values the second time (`sgais_error_model_random`).
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
    session = .Call(C_ffi_session_token),
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
  check_unique_names(colnames(data), sprintf("The columns of %s", what), call)
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
  if (anyNA(colnames(x)) || any(colnames(x) == "")) {
    abort(sprintf("%s must have non-empty column names.", what), call)
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
    if (!is.null(fun) && !inherits(e, "sgais_error") && !is_time_limit(e)) {
      abort(sprintf("`%s` failed: %s", fun, conditionMessage(e)), class = "sgais_error_model",
            parent = e)
    }
  })
}

# TRUE for the error setTimeLimit() raises (R's own message, in the session's language): it
# stops the run wherever it happens to be, so it is not the user's function failing.
is_time_limit <- function(e) {
  conditionMessage(e) %in% c(gettext("reached elapsed time limit", domain = "R"),
                             gettext("reached CPU time limit", domain = "R"))
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

# Evaluates the model at a prior draw on its first rows, so that a function returning the wrong
# length or type fails when the model is built, not in the middle of a run; and a second time
# after other random numbers, so that functions that use the RNG are refused: the estimators'
# weights and acceptance steps assume a fixed likelihood (with a random one nested sampling's
# constrained moves and the annealing's bisection never settle).
check_custom_functions <- function(model, call) {
  rows <- min(model$n, 10L)
  values <- with_rng_restored(tryCatch({
    set.seed(1L)
    theta <- drop(model_prior_draw(model, 1L))
    lapply(1:2, function(s) {
      set.seed(s)
      model_evaluate(model, theta, 0L, rows)
    })
  }, sgais_error = function(e) {
    abort(sprintf("`%s` cannot be evaluated at a draw from its prior: %s", "model",
                  conditionMessage(e)), call, class = class(e)[1])
  }))
  same <- mapply(function(a, b) isTRUE(all.equal(a, b, tolerance = 1e-10)), values[[1]],
                 values[[2]])
  if (!all(same)) {
    what <- names(values[[1]])[!same][1]
    abort(sprintf(paste("The model's functions give other values for the same parameters and",
                        "rows on a second call (%s): they use random numbers. The likelihood,",
                        "gradient and prior density must be fixed functions of `theta` and `data`."),
                  what), call, class = "sgais_error_model_random")
  }
  invisible(model)
}

#' Give a saved fit of a model written in R its functions again
#'
#' A fit of a [custom_model()] read from a file (with [readRDS()], [load()] or a checkpoint of
#' [sgais_stream()]) holds the model's R functions, but sgais does not run functions that come
#' from a file: continuing, auditing or predicting from such a fit is an error of class
#' `sgais_error_untrusted_functions`. Build the model again with the code you trust and give it
#' here; its functions (and custom prior) replace the stored ones. The fit's data, settings and
#' sampler state are kept, so the continuation is exactly the one the original session would
#' have run, provided the functions are the same.
#'
#' @param fit A fit of a custom model, e.g. from `readRDS()`.
#' @param model The model built again with [custom_model()] in this session: the same parameter
#'   names, data columns and prior. Its data are not used (the fit keeps its own).
#' @return `fit`, whose model runs `model`'s functions.
#' @seealso [custom_model()]
#' @export
#' @examples
#' d <- data.frame(y = rnorm(100, 1))
#' make_model <- function(data) {
#'   custom_model(function(theta, data) stats::dnorm(data[, "y"], theta, 1, log = TRUE),
#'                function(theta, data) sum(data[, "y"] - theta),
#'                data = data, parameter_names = "mu", prior = normal_prior(sd = 10))
#' }
#' \donttest{
#' fit <- sgais(make_model(d), seed = 1)
#' path <- tempfile(fileext = ".rds")
#' saveRDS(fit, path)
#' saved <- readRDS(path)
#' # sgais(saved, data.frame(y = 1)) is an error: the stored functions are not run
#' saved <- reattach_functions(saved, make_model(d))
#' more <- sgais(saved, data.frame(y = rnorm(50, 1)))
#' }
reattach_functions <- function(fit, model) {
  call <- sys.call()
  fit <- validate_sgais_evidence(fit, call)
  if (!identical(fit$model$family, "custom")) {
    abort(sprintf(paste("`fit` is a fit of %s, which holds no R functions; only fits of a",
                        "`custom_model()` need them given again."), fit$model$label), call)
  }
  model <- check_model(model, call)
  if (!identical(model$family, "custom") || !functions_trusted(model)) {
    abort(paste("`model` must be a model built by `custom_model()` in this session, not",
                if (identical(model$family, "custom")) "one read from a file." else
                  sprintf("%s.", model$label)), call)
  }
  old <- fit$model
  differs <- function(what) {
    abort(sprintf("`model` has other %s than the fit's model, so it is not the same model.", what),
          call, class = "sgais_error_data_mismatch")
  }
  if (!identical(model$parameter_names, old$parameter_names)) differs("parameter names")
  if (!identical(model$spec$columns, old$spec$columns)) differs("data columns")
  if (!identical(model$hyper$prior, old$hyper$prior) ||
      !identical(model$hyper$prior_description, old$hyper$prior_description)) {
    differs("prior")
  }
  fit$model$functions <- model$functions
  fit$model$prior <- model$prior
  fit$model$session <- model$session
  fit
}

# TRUE unless `model` runs R functions that were not built in this session (a custom model read
# from a file: its session token lost its address; see src/custom_model.c).
functions_trusted <- function(model) {
  !identical(model$family, "custom") || isTRUE(.Call(C_ffi_session_token_live, model$session))
}

# Refuses to run the R functions of a fit's model when they were read from a file (the first
# bullet of the saved-fit rule: a file's contents are data, never code to run).
check_functions_trusted <- function(model, call) {
  if (functions_trusted(model)) return(invisible(model))
  abort(paste("The fit's model is written in R functions and was read from a file (or built in",
              "another R session); sgais does not run functions stored in a file. Build the model",
              "again with `custom_model()` and give it back: `fit <- reattach_functions(fit, model)`."),
        call, class = "sgais_error_untrusted_functions")
}
