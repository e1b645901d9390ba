# Models separate their specification from their data.
#
# Every model keeps in its field `spec` all it needs to turn rows of data into the `data` list the
# C core reads, and nothing that depends on which rows it was built from:
# - formula interface (R/design.R), `interface = "formula"`: the `formula`; the `terms` of the
#   model frame (`y ~ .` expanded), whose `predvars` keep the coefficients of data-dependent terms
#   such as poly(), scale() or splines::ns(); the factor levels `xlevels` and the `contrasts`
#   (stored, so a later change of options(contrasts) does not change the coding); the `response`
#   name; `column_classes`, the class of each column of the data, named by column; the
#   `design_columns`; and `row_by_row`, NULL when the design of a row depends on that row alone,
#   else the reason it does not (a term such as I(x - mean(x)) uses all the rows);
# - matrix interfaces (regression `x`, `interface = "matrix"`; mixture `y`): the `columns` (names)
#   and whether the user `named` them, which decides whether new rows are matched to them by name
#   or by position;
# - softmax regression: the class labels `classes`, in the order of the parameter blocks;
# - logistic regression: `response_levels`, the levels (failure, success) of a factor response,
#   NULL for a 0/1 or logical one;
# - Poisson regression: `offset`, whether it has one (from the formula's offset() terms, which
#   `terms` keeps, or the argument `offset` of the matrix interface);
# - `hyper`, the hyperparameters, which the model also has as its field `hyper` for C.
#
# A constructor builds the spec from the data it is given, then builds its data from the spec
# with the same function model_data() uses for new rows. So the model built from all the rows and
# model_data() on any split of them, bound back together, have identical data.

# model_data(model, new_data, call): the `data` list, in the layout the C core reads (one column
# per observation, see by_observation()), of the rows `new_data` and of those rows only, built from
# `model$spec` alone; the model is not changed. `new_data` is what the model's constructor took:
# - formula interface: a data frame with the columns the formula uses (others the data had when
#   the model was built may be there or not; a column it did not have is an error), response
#   included;
# - matrix interface of the regressions: a list (or data frame) with elements `x` (covariates: a
#   numeric matrix, data frame or vector) and `y` (the response), and `offset` for a
#   poisson_regression() built with one;
# - gaussian_mixture(): a numeric matrix, data frame or vector.
# Columns of a matrix interface are matched to the model's by name when both name every column,
# else by position (then there must be as many).
# Rows that do not fit the spec give errors of class `sgais_error_data_mismatch` (under
# `sgais_error`), and more precisely:
#   sgais_error_missing_column  a column the model uses is absent (field `column`);
#   sgais_error_extra_column    a column the model was not built with (field `column`);
#   sgais_error_column_type     a column changed kind, e.g. numeric to factor (field `column`);
#   sgais_error_column_count    unnamed columns, but not as many as the model has;
#   sgais_error_unseen_level    a factor level the model was not built with (`column`, `level`);
#   sgais_error_unseen_class    a softmax or logistic class label the model was not built with
#                               (`class_label`);
#   sgais_error_not_row_by_row  the formula has a term that needs all rows at once;
#   sgais_error_design_columns  the design has other columns than the model's (a safety net the
#                               checks above should leave unused).
# Non-finite values are errors of class `sgais_error_non_finite`, as in the constructors.
model_data <- function(model, new_data, call = NULL) {
  UseMethod("model_data")
}

#' @exportS3Method
model_data.default <- function(model, new_data, call = NULL) {
  check_model(model, call)
  abort(sprintf("`model` (%s) cannot take new rows.", model$label), call)
}

# A copy of `model` whose data are the rows `new_data` (and only those): same spec, parameters,
# prior and class, so an estimator can run on one chunk of a stream.
model_with_data <- function(model, new_data, call = NULL) {
  UseMethod("model_with_data")
}

#' @exportS3Method
model_with_data.default <- function(model, new_data, call = NULL) {
  with_rows(model, model_data(model, new_data, call))
}

# `model` holding the data list `data` (and only those rows).
with_rows <- function(model, data) {
  model$data <- data
  model$n <- data_rows(data)
  model$dropped <- NULL
  model
}

# A copy of `model` whose data are the rows `new_data`, to predict them from a fit of `model`
# (predictive_density()): model_with_data(), except for models whose rows depend on the rows
# before them (random effects, R/linear_mixed.R).
model_for_prediction <- function(model, new_data, call = NULL) {
  UseMethod("model_for_prediction")
}

#' @exportS3Method
model_for_prediction.default <- function(model, new_data, call = NULL) {
  model_with_data(model, new_data, call)
}

# A copy of `model` with the rows `new_data` after its own: what a continued fit runs on. Each
# element of a model's data holds one column (matrix) or one element (vector) per observation,
# so rows are added element by element.
#
# `model$n` counts every observation the model has seen; a model from a fit with a bounded
# reservoir holds only its last ones, after the first `model$dropped` (see sgais(), "A bounded
# reservoir"). Only the rows held are limited to what R can index.
model_add_rows <- function(model, new_data, call = NULL) {
  UseMethod("model_add_rows")
}

#' @exportS3Method
model_add_rows.default <- function(model, new_data, call = NULL) {
  append_rows(model, model_data(model, new_data, call), call)
}

# `model` with the data list `add` (the rows of `new_data`) after its own.
append_rows <- function(model, add, call) {
  n_add <- data_rows(add)
  held <- data_rows(model$data)
  if (held + n_add > .Machine$integer.max) {
    abort(sprintf("A model can hold at most %s observations; it has %s and `new_data` %s.",
                  format_count(.Machine$integer.max), format_count(held), format_count(n_add)),
          call)
  }
  stopifnot(identical(names(add), names(model$data)))
  # the C core's packings of earlier data (src/rows_r.c) would keep copies of the data alive
  .Call(C_ffi_rows_forget)
  model$data <- data_bind(model$data, add)
  model$n <- as_count(model$n + n_add)
  model
}

# A copy of `model` holding only its observations after the first `from` (it has seen them all).
model_drop_rows <- function(model, from) {
  dropped <- model_dropped(model)
  if (from == dropped) return(model)
  keep <- seq.int(from - dropped + 1, length.out = model$n - from)
  model$data <- data_columns(model$data, keep)
  model$dropped <- as_count(from)
  model
}

# A copy of `model` that has seen only its first `n` observations (an interrupted fit's model).
model_keep_first <- function(model, n) {
  UseMethod("model_keep_first")
}

#' @exportS3Method
model_keep_first.default <- function(model, n) {
  if (n == model$n) return(model)
  model$data <- data_columns(model$data, seq_len(n - model_dropped(model)))
  model$n <- as_count(n)
  model
}

# The response in a model's data list, what the likelihood is of: `y`, or, for a model of whole
# observations (gaussian_mixture()), `yt`, one column per observation; for models written in R
# or C (custom_model(), compiled_model()), which do not say which columns are the response,
# every value of the observation (`xt`); binomial counts, successes and trials (a column each).
# Two fits are of the same observations when their responses are the same, whatever their
# covariates.
data_response <- function(data) {
  if (!is.null(data$trials)) return(rbind(data$y, data$trials, deparse.level = 0))
  if (!is.null(data$y)) data$y else if (!is.null(data$yt)) data$yt else data$xt
}

# `digest` (src/ffi.c, ffi_data_digest(); "" to start) continued over the responses of
# observations from + 1, ..., to of `model`, which must hold them. The digest of n observations
# is the same whatever pieces they came in.
extend_digest <- function(digest, model, from, to) {
  if (to <= from) return(digest)
  cols <- seq.int(from - model_dropped(model) + 1, to - model_dropped(model))
  response <- data_response(data_columns(model$data, cols))
  .Call(C_ffi_data_digest, digest, as.vector(response))
}

# How many of the observations a model has seen it no longer holds.
model_dropped <- function(model) if (is.null(model$dropped)) 0 else model$dropped

# Models' data lists: every element has one column (matrix) or element (vector) per observation,
# and the first is a matrix.
# A model's data list holds one column (matrix) or element (vector) per observation, or, for a
# model whose observations are units of several rows (R/glm_mixed.R), one per row and, in the
# elements named `unit_*`, one per unit (`unit_rows`: its rows, which are consecutive).
data_rows <- function(data) {
  if (is.null(data$unit_rows)) ncol(data[[1L]]) else length(data$unit_rows)
}
# The rows a model holds: its observations, or for a model of units of rows their own rows (not
# the earlier rows of a group that a unit repeats as its context).
model_rows <- function(model) {
  d <- model$data
  if (!model_of_groups(model)) model$n else ncol(d$xt) - sum(d$unit_context)
}
# Whether the model's observations are units of several rows of a group (R/glm_mixed.R).
model_of_groups <- function(model) !is.null(model$data$unit_rows)
data_bind <- function(a, b) {
  Map(function(old, new) if (is.matrix(old)) cbind(old, new) else c(old, new), a, b)
}
data_columns <- function(data, idx) {
  per_unit <- startsWith(names(data), "unit_")
  rows <- idx
  if (any(per_unit)) {
    start <- cumsum(c(0L, data$unit_rows))
    rows <- unlist(lapply(idx, function(u) start[u] + seq_len(data$unit_rows[u])), use.names = FALSE)
  }
  out <- lapply(seq_along(data), function(k) {
    x <- data[[k]]
    at <- if (per_unit[k]) idx else rows
    if (is.matrix(x)) x[, at, drop = FALSE] else x[at]
  })
  names(out) <- names(data)
  out
}

# Estimators that start from a model need all its rows; a model from a fit with a bounded
# reservoir holds only its last ones.
check_all_rows <- function(model, call) {
  check_model(model, call)
  dropped <- model_dropped(model)
  if (dropped > 0) {
    abort(sprintf(paste(
      "`model` holds only its last %s of %s observations: it comes from a fit with a bounded",
      "`reservoir_size`, which keeps no more. Build the model on the data again."),
      format_count(model$n - dropped), format_count(model$n)), call, "sgais_error_rows_dropped")
  }
  model
}

# The spec of `model`, or an error for a model that has none (one saved by an older version).
spec_of <- function(model, call) {
  if (is.null(model$spec)) {
    abort(sprintf(
      "`model` (%s) was built without a specification, so it cannot take new rows; build it again.",
      model$label
    ), call)
  }
  model$spec
}

abort_mismatch <- function(message, call, class, ...) {
  abort(message, call, c(class, "sgais_error_data_mismatch"), ...)
}

# `a`, `b` for messages.
backticked <- function(x) paste0("`", x, "`", collapse = ", ")

plural <- function(n, word, words = paste0(word, "s")) if (n == 1L) word else words

# Data columns named `names` against a spec's `expected` names, of which a model uses `used`:
# every used column must be there, and no column the spec does not have (nor one twice).
check_column_names <- function(names, expected, used, what, call) {
  missing <- setdiff(used, names)
  if (length(missing)) {
    abort_mismatch(sprintf(
      "%s has no %s %s, which the model uses.", what, plural(length(missing), "column"),
      backticked(missing)
    ), call, "sgais_error_missing_column", column = missing)
  }
  extra <- unique(c(setdiff(names, expected), names[duplicated(names)]))
  if (length(extra)) {
    abort_mismatch(sprintf(
      "%s has %s %s that the model was not built with; its columns are fixed when it is built (also with `y ~ .`), so drop %s.",
      what, plural(length(extra), "a column", "columns"), backticked(extra),
      plural(length(extra), "it", "them")
    ), call, "sgais_error_extra_column", column = extra)
  }
}

# Matrix interfaces (regression `x`, mixture `y`) ---------------------------------------------

# `x` as a numeric matrix, from a data frame of numeric columns, a matrix or a vector (one column).
as_numeric_matrix <- function(x, what, call, hint = "") {
  no_rows <- sprintf("%s must have at least one row.", what)
  if (is.data.frame(x)) {
    x <- plain_columns(x, what, call)
    check_numeric_columns(x, what, call, hint)
    if (nrow(x) < 1L) abort(no_rows, call) # as.matrix() would make it logical
    x <- as.matrix(x)
  }
  if (is.numeric(x) && is.null(dim(x))) x <- matrix(x, ncol = 1L)
  if (!is.numeric(x) || length(dim(x)) != 2L) {
    abort(sprintf("%s must be a numeric matrix or data frame, not %s.", what, describe(x)), call)
  }
  if (nrow(x) < 1L) abort(no_rows, call)
  x
}

# The spec of a matrix's columns: their names (`prefix`1, `prefix`2, ... when it has none) and
# whether new rows are matched to them by name (the user named every column, each once) or by
# position.
matrix_columns <- function(x, prefix) {
  names <- colnames(x)
  list(
    columns = if (is.null(names)) paste0(prefix, seq_len(ncol(x))) else names,
    named = all_named(names) && !anyDuplicated(names)
  )
}

all_named <- function(names) !is.null(names) && !anyNA(names) && all(nzchar(names))

# The numeric matrix `x` with the columns of `spec`, in its order and with its names: matched by
# name when both name all their columns, else by position.
match_columns <- function(x, spec, what, call) {
  names <- colnames(x)
  if (spec$named && all_named(names)) {
    check_column_names(names, spec$columns, spec$columns, what, call)
    if (!identical(names, spec$columns)) x <- x[, spec$columns, drop = FALSE]
  } else if (ncol(x) != length(spec$columns)) {
    abort_mismatch(sprintf(
      "%s has %d %s, but the model was built with %d (%s).", what, ncol(x),
      plural(ncol(x), "column"), length(spec$columns), backticked(spec$columns)
    ), call, "sgais_error_column_count")
  }
  colnames(x) <- spec$columns
  x
}
