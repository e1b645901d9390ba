#' A model written in C
#'
#' Builds a model whose likelihood (and optionally prior) is C code that another package, or
#' code you compile yourself, registers with sgais through its C API: the header
#' `sgais.h` (in `system.file("include", package = "sgais")`; use `LinkingTo: sgais`) defines a
#' model class, a struct of C functions, and `sgais_register_model_class()`, to be called from
#' the package's init routine. The estimators then evaluate the model at the speed of the
#' built-in ones.
#'
#' The model stores the class's name and package, not a pointer, so a model or fit saved with
#' [saveRDS()] works in a new R session: the package is loaded again, which registers its
#' classes. The package `sgaisexample`, in `system.file("examples", "sgaisexample", package =
#' "sgais")`, is a complete example: Bayesian linear regression with known noise written in C.
#'
#' @param class The name of the registered model class (the `name` field of its
#'   `sgais_model_class`).
#' @param data The observations, a data frame of numeric columns or a numeric matrix with one
#'   row per observation. The C code sees observation `i` as `n_vars` consecutive doubles.
#' @param hyper A numeric vector of hyperparameters, passed to the C code in this order.
#' @param parameter_names,dim The parameters' names, or their number.
#' @param prior The prior, from building blocks such as [normal_prior()], used when the class
#'   has no prior functions of its own (then this is ignored).
#' @param package The package that registers the class, loaded when needed (also in a new
#'   session); `NULL` when the class is registered by code you load yourself.
#' @param label A short name for the model in printed output and plots.
#' @return A model of class `c("sgais_compiled_model", "sgais_model")`.
#' @seealso [custom_model()] for models written in R.
#' @export
#' @examples
#' \dontrun{
#' # after installing inst/examples/sgaisexample:
#' d <- simulate_linear_regression(1000, seed = 1)
#' model <- compiled_model("sgaisexample_linear_regression",
#'                         data = cbind(intercept = 1, as.matrix(d)),
#'                         hyper = c(noise_sd = 1), dim = 6, prior = normal_prior(sd = 1),
#'                         package = "sgaisexample")
#' fit <- sgais(model, seed = 1)
#' }
compiled_model <- function(class, data, hyper = numeric(), parameter_names = NULL, dim = NULL,
                           prior = normal_prior(), package = NULL, label = class) {
  call <- sys.call()
  if (!is.character(class) || length(class) != 1L || is.na(class) || class == "") {
    abort("`class` must be the name of a registered model class.", call)
  }
  if (!is.null(package) && (!is.character(package) || length(package) != 1L || is.na(package))) {
    abort("`package` must be NULL or a package name.", call)
  }
  if (!is.numeric(hyper) || any(!is.finite(hyper))) {
    abort("`hyper` must be a numeric vector of finite values.", call)
  }
  if (!is.character(label) || length(label) != 1L || is.na(label)) abort("`label` must be a string.", call)
  parameter_names <- check_parameter_names(parameter_names, dim, call)
  x <- custom_data_matrix(data, "`data`", call)
  ensure_model_class(class, package, call)
  spec <- list(columns = colnames(x),
               hyper = list(values = as.double(hyper),
                            prior = prior_matrix(prior, length(parameter_names), call)))
  model <- new_sgais_model(
    family = "compiled",
    data = list(xt = by_observation(x)),
    spec = spec,
    n = nrow(x),
    parameter_names = parameter_names,
    label = label,
    details = c(likelihood = sprintf("compiled model class \"%s\"%s", class,
                                     if (is.null(package)) "" else sprintf(" (package %s)", package)),
                prior = describe_prior(prior, parameter_names)),
    class_name = class,
    package = package,
    class = "sgais_compiled_model"
  )
  # evaluated once, so that a class that cannot use these data fails here
  model_evaluate(model, drop(with_rng_restored({
    set.seed(1L)
    model_prior_draw(model, 1L)
  })), 0L, min(model$n, 10L))
  model
}

#' @exportS3Method
model_data.sgais_compiled_model <- function(model, new_data, call = NULL) {
  model_data.sgais_custom_model(model, new_data, call)
}

# Loads the package that registers a compiled model class (a model read with readRDS() in a new
# session) and checks the class is registered.
ensure_model_class <- function(class, package, call) {
  if (!is.null(package) && !isNamespaceLoaded(package)) {
    ok <- suppressPackageStartupMessages(requireNamespace(package, quietly = TRUE))
    if (!ok) {
      abort(sprintf("The package `%s`, which defines the model class \"%s\", is not installed.",
                    package, class), call, class = "sgais_error_model_class")
    }
  }
  if (!.Call(C_ffi_api_model_class, class)) {
    abort(sprintf("The compiled model class \"%s\" is not registered%s.", class,
                  if (is.null(package)) "; load the code that registers it" else
                    sprintf(" by package `%s`", package)),
          call, class = "sgais_error_model_class")
  }
  invisible(TRUE)
}
