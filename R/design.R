# Design matrices for the regression models (linear, softmax): from a formula and a data frame
# through model.matrix(), or from a covariate matrix with an intercept column added. The builders return
# list(a = design matrix, y = the response as given, response = its name, what = how error
# messages name it, formula); each model checks its own kind of response.

# The design of the formula interface or of the matrix interface, whichever was used.
regression_design <- function(formula, data, x, y, call) {
  if (!is.null(formula)) {
    if (!is.null(x) || !is.null(y)) {
      abort("Give either `formula` and `data` or `x` and `y`, not both.", call)
    }
    design_from_formula(formula, data, call)
  } else if (!is.null(x) || !is.null(y)) {
    design_from_matrix(x, y, call)
  } else {
    abort("Give either `formula` and `data` or `x` and `y`.", call)
  }
}

design_from_formula <- function(formula, data, call) {
  if (!inherits(formula, "formula")) {
    abort(sprintf("`formula` must be a formula such as `y ~ x`, not %s.", describe(formula)), call)
  }
  if (is.null(data) || !is.data.frame(data)) {
    abort(sprintf("`data` must be a data frame, not %s.", describe(data)), call)
  }
  if (nrow(data) < 1L) abort("`data` must have at least one row.", call)
  if (length(formula) != 3L) abort("`formula` must have a response, as in `y ~ x`.", call)
  mf <- tryCatch(
    stats::model.frame(formula, data, na.action = stats::na.pass),
    error = function(e) abort(paste("`formula` does not fit `data`:", conditionMessage(e)), call)
  )
  response <- deparse(formula[[2L]])
  y <- stats::model.response(mf)
  if (is.null(y) || length(y) < 1L) abort(sprintf("The response `%s` has no observations.", response), call)
  a <- stats::model.matrix(attr(mf, "terms"), mf)
  attr(a, "assign") <- NULL
  attr(a, "contrasts") <- NULL
  check_design(a, "`data`", call)
  list(a = a, y = y, response = response, what = sprintf("the response `%s`", response),
       formula = formula)
}

design_from_matrix <- function(x, y, call) {
  if (is.null(x)) abort("`x` is missing: give covariates `x` with the response `y`.", call)
  if (is.null(y)) abort("`y` is missing: give a response `y` with the covariates `x`.", call)
  if (is.data.frame(x)) {
    check_numeric_columns(x, "`x`", call)
    x <- as.matrix(x)
  }
  if (is.null(dim(x))) x <- matrix(x, ncol = 1L)
  if (!is.numeric(x) || length(dim(x)) != 2L) {
    abort(sprintf("`x` must be a numeric matrix, not %s.", describe(x)), call)
  }
  if (nrow(x) < 1L) abort("`x` must have at least one row.", call)
  if (!is.atomic(y)) abort(sprintf("`y` must be a vector, not %s.", describe(y)), call)
  if (length(y) != nrow(x)) {
    abort(sprintf("`x` has %d rows but `y` has %d elements; they must match.", nrow(x), length(y)), call)
  }
  names <- colnames(x)
  if (is.null(names)) names <- paste0("x", seq_len(ncol(x)))
  a <- cbind(1, x)
  storage.mode(a) <- "double"
  colnames(a) <- c("(Intercept)", names)
  check_design(a, "`x`", call)
  list(a = a, y = y, response = "y", what = "`y`", formula = NULL)
}

check_design <- function(a, what, call) {
  if (ncol(a) < 1L) abort(sprintf("The design built from %s has no columns.", what), call)
  check_finite_cells(a, what, call)
}

