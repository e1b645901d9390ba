# Design matrices for the regression models (linear, softmax), built from a specification (see
# R/model_spec.R) so that the rows a model is built from and any new rows get the same design.
# Formula interface: the design is that of model.matrix(), with the terms, factor levels and
# contrasts of the data the model was built from. Matrix interface: the covariates with an
# intercept column in front. The builders of rows return list(a = design matrix, y = the response
# as given, what = how error messages name the response), and the formula interface also the
# `offset` of its offset() terms (NULL if none; only the count regressions use it); each model
# checks its own kind of response. regression_design() also returns the spec it built, as `spec`.

# The spec and design of the formula interface or of the matrix interface, whichever was used.
# `counts`: the formula's response may be two columns, `cbind(successes, failures)`
# (logistic_regression()). Only models whose likelihood has an offset (`offset = TRUE`:
# poisson_regression(), which negative_binomial_regression() builds on) take offset() terms; the
# others reject them rather than drop them.
regression_design <- function(formula, data, x, y, call, offset = FALSE, counts = FALSE) {
  if (!is.null(formula)) {
    if (!is.null(x) || !is.null(y)) {
      abort("Give either `formula` and `data` or `x` and `y`, not both.", call)
    }
    design <- formula_design(formula, data, call, counts)
    if (!offset && !is.null(design$offset)) {
      abort(paste("`formula` has an offset() term, which this model does not support (only",
                  "`poisson_regression()` and `negative_binomial_regression()` have an offset);",
                  "subtract it from the response, or make it a covariate."), call,
            "sgais_error_offset")
    }
    design
  } else if (!is.null(x) || !is.null(y)) {
    matrix_design(x, y, call)
  } else {
    abort("Give either `formula` and `data` or `x` and `y`.", call)
  }
}

# The regression constructors' pipeline: formula -> rows -> design -> prior -> model. Every
# constructor takes its rows with regression_input(), its design with regression_design() (and
# checks its own kind of response), the prior's scales with with_autoscale() (R/prior.R), and
# makes the model with regression_model(); between them it states only what is particular to its
# family.

# The first step: `family` refused (glm()'s argument), glm()'s `offset` of the formula interface
# made an offset() term of `formula` (formula_with_offset(); only the count regressions have
# one), the rows of `data` that `weights` and `subset` (both unevaluated) and `na.action` select
# (glm_rows(), with `trials`), and the default of `prior` (default_prior()). `env`: the
# constructor's caller. Returns list(formula, data, prior).
regression_input <- function(formula, data, weights, subset, na.action, family, env, call, prior,
                             prior_sd_missing, offset = NULL, trials = NULL) {
  check_no_family(family, call)
  formula <- formula_with_offset(formula, offset, data, env, call)
  list(formula = formula,
       data = glm_rows(data, formula, weights, subset, na.action, env, call, trials),
       prior = default_prior(prior, prior_sd_missing))
}

# The last step: the model of `family` (class "sgais_<family>" and then `parent`) from `auto`,
# what with_autoscale() made of the design and the coefficients' prior arguments; `hyper`, the
# family's hyperparameters with the coefficients' `prior_sd`, to which the coefficients' prior
# (regression_prior(); one per class when `hyper$classes`, normal priors only with `normal_only`)
# is added by with_coef_prior(), last unless `hyper` keeps it a place (`prior = NULL`). What is
# particular to the family: `data`, function(design, call) giving the data the C core reads
# (model_data()); `details`, the lines of print() before the prior's, whose line is the
# coefficients' prior (`wording`: how to say N(0, prior_sd^2) on every one, and how to say a
# description of blocks) and then `prior`; `sampled`, the line after the scaling rule; `spec`,
# the fields the family adds to the spec; `parameters`, the names of the parameters after the
# coefficients, which are the design's columns (class after class, as the C core stores theta,
# when there are classes: `spec$classes`); `...`, the model's own fields (`formula`).
regression_model <- function(family, auto, hyper, call, label, data, details, ..., prior = "",
                             sampled = NULL, spec = NULL, parameters = NULL, normal_only = FALSE,
                             wording = c("theta_j ~ N(0, sd = %s), independent", "%s"),
                             parent = NULL) {
  design <- auto$design
  columns <- colnames(design$a)
  classes <- hyper[["classes"]] %||% 1L
  coef <- regression_prior(columns, auto$prior, auto$prior_intercept, hyper$prior_sd, call,
                           classes = classes, normal_only = normal_only)
  spec <- c(design$spec, spec, list(hyper = with_coef_prior(hyper, coef)))
  coef_text <- if (is.null(coef$description)) sprintf(wording[1], format(coef$prior_sd)) else
    sprintf(wording[2], coef$description)
  if (classes > 1L) {
    columns <- paste0(rep(columns, classes), "[", rep(spec$classes, each = length(columns)), "]")
  }
  new_sgais_model(
    family = family,
    data = data(design, call),
    spec = spec,
    n = nrow(design$a),
    parameter_names = c(columns, parameters),
    label = label,
    details = c(details, prior = paste0(coef_text, prior), scaling = auto$rule, sampled = sampled),
    ...,
    class = c(paste0("sgais_", family), parent)
  )
}

# The design of the rows `new_data` of a regression with spec `spec` (see model_data()),
# centred as the model's own rows were when it was built with `prior = "autoscale"`, g_prior()
# or zellner_siow_prior() (`spec$center`, centred_design() in R/prior.R).
regression_rows <- function(spec, new_data, call) {
  rows <- uncentred_rows(spec, new_data, call)
  if (!is.null(spec$center)) rows$a <- sweep(rows$a, 2, spec$center)
  rows
}

uncentred_rows <- function(spec, new_data, call) {
  if (spec$interface == "formula") return(formula_rows(spec, new_data, call, "new_data"))
  if (!is.list(new_data) || is.null(new_data[["x"]]) || is.null(new_data[["y"]])) {
    abort(sprintf(
      "`new_data` must be a list with the covariates `x` and the response `y` (the model was built from `x` and `y`), not %s.",
      describe(new_data)
    ), call)
  }
  matrix_rows(spec, new_data[["x"]], new_data[["y"]], call, "`new_data$x`", "`new_data$y`")
}

# Formula interface ----------------------------------------------------------------------------

# A formula is code, and a fit stores it (with the `predvars` of its terms) to build the rows of
# new data when it is continued, possibly from a file written elsewhere. So a model's formula
# may call only these transformations, and it is evaluated (at construction and on every
# continuation) among the data's columns and these functions alone, whatever environment a
# stored formula carries: a crafted fit cannot run code through it.
formula_functions <- list(
  base = c("+", "-", "*", "/", "^", "%%", "%/%", ":", "%in%", "(", "==", "!=", "<", ">", "<=",
           ">=", "&",
           "|", "!", "log", "log2", "log10", "log1p", "exp", "expm1", "sqrt", "abs", "sin", "cos",
           "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "floor", "ceiling", "round",
           "signif", "trunc", "sign", "pmin", "pmax", "I", "c", "list", "factor", "as.factor",
           "ordered", "as.ordered", "as.numeric", "as.double", "as.integer", "as.logical",
           "as.character", "ifelse", "is.na", "cut", "interaction", "scale", "mean", "min", "max",
           "cbind",
           "sd"),
  stats = c("poly", "offset", "relevel", "sd"),
  splines = c("ns", "bs")
)

# The environment stored formulas are evaluated in: the functions above, nothing else.
formula_sandbox <- local({
  env <- NULL
  function() {
    if (is.null(env)) {
      env <<- new.env(parent = emptyenv())
      for (pkg in names(formula_functions)) {
        if (!requireNamespace(pkg, quietly = TRUE)) next
        ns <- asNamespace(pkg)
        for (f in formula_functions[[pkg]]) {
          if (exists(f, envir = ns, inherits = TRUE)) assign(f, get(f, envir = ns), envir = env)
        }
      }
      # pkg::f, for the functions above only (sandbox_formula() has checked the names)
      assign("::", function(pkg, name) {
        pkg <- as.character(substitute(pkg))
        name <- as.character(substitute(name))
        if (!name %in% formula_functions[[pkg]]) stop("`", pkg, "::", name, "` is not allowed here")
        getExportedValue(pkg, name)
      }, envir = env)
      lockEnvironment(env, bindings = TRUE)
    }
    env
  }
})

# `x` (a formula or terms, with its `variables` and `predvars`) checked to call only the
# functions of formula_functions, by name or as pkg::f; then returned with the sandbox as its
# environment. An error of class `sgais_error_formula_function` otherwise, before anything runs.
sandbox_formula <- function(x, call) {
  allowed <- unique(unlist(formula_functions, use.names = FALSE))
  bad <- character(0)
  walk <- function(e) {
    if (!is.call(e)) return()
    f <- e[[1L]]
    if (is.call(f) && is.name(f[[1L]]) && as.character(f[[1L]]) %in% c("::", ":::")) {
      pkg <- as.character(f[[2L]])
      name <- as.character(f[[3L]])
      if (as.character(f[[1L]]) == ":::" || !pkg %in% names(formula_functions) ||
          !name %in% formula_functions[[pkg]]) {
        bad <<- c(bad, paste0(pkg, as.character(f[[1L]]), name))
      }
    } else if (is.name(f)) {
      if (!as.character(f) %in% c(allowed, "~")) bad <<- c(bad, as.character(f))
    } else {
      bad <<- c(bad, paste(deparse(f), collapse = " "))
    }
    for (i in seq_along(e)[-1L]) if (!identical(e[[i]], quote(expr = ))) walk(e[[i]])
  }
  walk(x)
  for (a in c("variables", "predvars")) walk(attr(x, a))
  if (length(bad)) {
    abort(sprintf(paste(
      "`formula` calls %s; a model's formula may use only the transformations a fit can apply",
      "again safely when it is continued (arithmetic, log(), exp(), sqrt(), I(), factor(),",
      "poly(), scale(), splines' ns() and bs(), offset() and the like): transform the columns",
      "of the data first."), backticked(unique(bad))), call, "sgais_error_formula_function")
  }
  environment(x) <- formula_sandbox()
  x
}

# glm()'s row arguments, for the formula interface: `subset` (an expression in the columns of
# `data`, or a logical or index vector), `na.action` (na.omit, na.exclude or na.fail, as the
# function or its name) and `weights` (frequency weights of whole numbers >= 0: a column of
# `data`, by name, or a numeric vector of one per row of `data`, which becomes the column
# `(weights)`, as in model.frame()). The rows come out selected, without incomplete rows
# (na.omit, na.exclude) and each repeated `weights` times, so the likelihood and the evidence are
# exactly those of the weighted data (and `n` counts a row as often as its weight). The rule for
# incomplete rows and the weights' column are kept (attribute "sgais_rows", then the spec's
# `rows`) and applied to the new rows of a continuation as well, which must have that column.
# `weights` and `subset` come unevaluated (substitute()). `trials` (logistic_regression()): NULL,
# or a function of the selected rows that says whether the weights are instead the number of
# trials of each row (a proportion response, as in glm()): then the rows are not repeated, and
# the rules name the column as `trials` (read by formula_rows()).
glm_rows <- function(data, formula, weights, subset, na.action, env, call, trials = NULL) {
  if (is.null(weights) && is.null(subset) && is.null(na.action)) return(data)
  if (is.null(formula)) {
    abort(paste("`weights`, `subset` and `na.action` select and weight the rows of `data`; give",
                "`formula` and `data` with them, or select the rows of `x` and `y` first."),
          call, "sgais_error_argument")
  }
  check_data_frame(data, "`data`", call)
  rows <- list(na_action = na_action_name(na.action, call), weights = NULL)
  if (!is.null(weights)) {
    column <- weights_column(weights, data, env, call)
    if (is.numeric(column)) {
      data[[weights_vector]] <- column
      column <- weights_vector
      rows$vector <- TRUE
    }
    rows$weights <- column
  }
  if (!is.null(subset)) {
    keep <- eval(subset, data, env)
    if (is.logical(keep) && length(keep) == nrow(data)) keep <- which(keep)
    if (!is.numeric(keep) || anyNA(keep) || any(keep < 1 | keep > nrow(data) | keep != round(keep))) {
      abort(sprintf(paste("`subset` must select rows of `data`: a logical vector of %d values or",
                          "row numbers, not %s."), nrow(data), describe(keep)),
            call, "sgais_error_argument")
    }
    data <- data[keep, , drop = FALSE]
    if (nrow(data) < 1L) abort("`subset` selects no rows of `data`.", call, "sgais_error_argument")
  }
  if (!is.null(rows$weights) && !is.null(trials) && trials(data)) {
    rows$trials <- rows$weights
    rows$weights <- NULL
  }
  out <- apply_glm_rows(rows, data, formula, "`data`", call)
  attr(out, "sgais_rows") <- rows
  out
}

# The weights `weights` (unevaluated): the name of the column of `data` it names (unquoted or as
# a string), or the numeric vector of one weight per row of `data` it evaluates to.
weights_column <- function(weights, data, env, call) {
  name <- if (is.name(weights)) as.character(weights) else if (is.character(weights)) weights
  if (length(name) == 1L && name %in% names(data)) return(name)
  value <- tryCatch(eval(weights, data, env), error = function(e) NULL)
  if (is.numeric(value) && is.null(dim(value)) && length(value) == nrow(data)) return(value)
  abort(sprintf(paste("`weights` must name a column of `data` (e.g. `weights = n`) or be a",
                      "numeric vector of one weight per row of `data` (%d); not %s."),
                nrow(data), paste(deparse(weights), collapse = " ")), call, "sgais_error_argument")
}

# The column that weights given as a vector become, as in model.frame().
weights_vector <- "(weights)"

# The name of an na.action function, one of those glm_rows() knows.
na_action_name <- function(na.action, call) {
  if (is.null(na.action)) return(NULL)
  known <- c("na.omit", "na.exclude", "na.fail")
  if (is.character(na.action) && length(na.action) == 1L && na.action %in% known) return(na.action)
  if (is.function(na.action)) {
    for (name in known) if (identical(na.action, get(name, envir = asNamespace("stats")))) return(name)
  }
  abort(sprintf("`na.action` must be na.omit, na.exclude or na.fail (or the name of one), not %s.",
                describe(na.action)), call, "sgais_error_argument")
}

# `data` with the row rules `rows` applied: incomplete rows (in the formula's variables and the
# weights) dropped or refused, then rows repeated by their weights (the column `(weights)` of
# weights given as a vector then dropped). Trials (rows$trials) are checked like weights but
# kept, in their column.
apply_glm_rows <- function(rows, data, formula, what, call) {
  if (is.null(rows) || (is.null(rows$na_action) && is.null(rows$weights) && is.null(rows$trials))) {
    return(data)
  }
  column <- rows$weights %||% rows$trials
  if (!is.null(column) && !column %in% names(data)) {
    abort_mismatch(sprintf(if (isTRUE(rows$vector)) {
      paste("%s has no column `%s`: the model's weights were given as a vector, and new rows",
            "must bring their own, in a column `%2$s` (or build the model with `weights`",
            "naming a column of `data`).")
    } else "%s has no column `%s`, the model's weights.", what, column),
    call, "sgais_error_missing_column", column = column)
  }
  vars <- intersect(c(all.vars(formula), column), names(data))
  if ("." %in% all.vars(formula)) vars <- names(data)
  if (!is.null(rows$na_action)) {
    complete <- stats::complete.cases(data[vars])
    if (rows$na_action == "na.fail" && !all(complete)) {
      abort(sprintf("%s has missing values (`na.action = na.fail`), first at row %d.", what,
                    which(!complete)[1L]), call, "sgais_error_non_finite", row = which(!complete)[1L])
    }
    data <- data[complete, , drop = FALSE]
  }
  if (!is.null(column)) {
    w <- data[[column]]
    # trials are whole numbers the C core takes exactly (below 2^53); frequency weights repeat
    # rows, at most R's integer range
    most <- if (is.null(rows$trials)) .Machine$integer.max else 2^53 - 1
    if (!is.numeric(w) || anyNA(w) || any(w < 0 | w != round(w)) || any(w > most)) {
      bad <- which(!is.finite(w) | w < 0 | w != round(w) | w > most)[1L]
      abort(sprintf(paste("The weights%s of %s must be whole numbers >= 0 (%s); row %s has %s."),
                    if (isTRUE(rows$vector)) "" else sprintf(" `%s`", column), what,
                    if (is.null(rows$trials)) "frequency weights" else "the number of trials",
                    format_count(bad), format(w[bad])),
            call, "sgais_error_weights", row = bad)
    }
    if (is.null(rows$trials)) {
      data <- data[rep.int(seq_len(nrow(data)), as.integer(w)), , drop = FALSE]
      if (nrow(data) < 1L) {
        abort(sprintf("The weights of %s are all 0.", what), call, "sgais_error_weights")
      }
      data[[weights_vector]] <- NULL
    }
  }
  rownames(data) <- NULL
  data
}

# glm()'s `offset` with a formula (unevaluated, from substitute(); `env` the caller's frame): an
# expression in the columns of `data`, made an offset() term of the formula, so that new rows
# bring their own offsets as they bring the columns. An expression that is NULL gives the formula
# unchanged; one of anything else than columns cannot be applied to new rows: an error.
formula_with_offset <- function(formula, offset, data, env, call) {
  if (is.null(formula) || is.null(offset)) return(formula)
  value <- if (is.data.frame(data)) tryCatch(eval(offset, data, env), error = function(e) e)
  if (is.null(value)) return(formula)
  outside <- setdiff(all.vars(offset), names(data))
  if (!is.data.frame(data) || inherits(value, "error") || length(outside) ||
      any(c("$", "[[", "[") %in% all.names(offset))) {
    abort(sprintf(paste(
      "With a formula, `offset` must be an expression in the columns of `data` (e.g. `offset =",
      "log(exposure)`), so that new rows bring their own; %s is not. Add the offset to `data`",
      "as a column."), paste(deparse(offset), collapse = " ")), call, "sgais_error_offset")
  }
  formula[[3L]] <- call("+", formula[[3L]], call("offset", offset))
  formula
}

# `family =`, the argument of glm(): each family is its own constructor here.
check_no_family <- function(family, call) {
  if (is.null(family)) return(invisible())
  name <- if (is.character(family)) family[1L] else if (is.function(family)) family()$family else
    if (inherits(family, "family")) family$family else ""
  to <- c(gaussian = "linear_regression()", binomial = "logistic_regression()",
          quasibinomial = "logistic_regression()", poisson = "poisson_regression()")
  hint <- if (name %in% names(to)) sprintf("; for the %s family use %s", name, to[[name]]) else
    if (grepl("^Negative Binomial", name)) "; use negative_binomial_regression()" else ""
  abort(sprintf(paste("`family` is glm()'s argument; here each family is its own constructor",
                      "(linear_regression(), logistic_regression(), poisson_regression(),",
                      "negative_binomial_regression(), robust_regression(),",
                      "softmax_regression())%s."), hint), call, "sgais_error_family")
}

formula_design <- function(formula, data, call, counts = FALSE) {
  if (!inherits(formula, "formula")) {
    abort(sprintf("`formula` must be a formula such as `y ~ x`, not %s.", describe(formula)), call)
  }
  if (has_bars(formula)) {
    abort(paste("`formula` has a random-effect term `( | )`; random effects are supported by",
                "`linear_regression()` only, so far."), call, "sgais_error_random_effects")
  }
  formula <- sandbox_formula(formula, call)
  check_data_frame(data, "`data`", call)
  data <- plain_columns(data, "`data`", call)
  if (length(formula) != 3L) abort("`formula` must have a response, as in `y ~ x`.", call)
  check_formula_variables(formula, data, call)
  # (the column of weights given as a vector is no variable of `y ~ .`)
  mf <- formula_frame(formula, data[setdiff(names(data), weights_vector)], "`data`", call)
  response <- stats::model.response(mf)
  if (!is.null(dim(response)) && NCOL(response) != 1L + counts) {
    abort(sprintf(paste("The response `%s` has %d columns; the model takes %s."),
                  deparse(formula[[2L]]), NCOL(response),
                  if (counts) "one response column, or two: `cbind(successes, failures)`" else
                    paste("one response column (binomial counts, `cbind(successes, failures)`,",
                          "are logistic_regression()'s)")),
          call, "sgais_error_response")
  }
  terms <- attr(mf, "terms") # `y ~ .` expanded, `predvars` with the coefficients of poly() etc.
  rules <- attr(data, "sgais_rows")
  spec <- list(
    interface = "formula", formula = formula, terms = terms, rows = rules, trials = rules$trials,
    xlevels = stats::.getXlevels(terms, mf), contrasts = NULL, response = deparse(formula[[2L]]),
    column_classes = vapply(data, function(column) class(column)[1L], character(1))
  )
  # the data are built again from the spec, as new rows will be: through `predvars`, whose
  # poly() differs in the last bits from the poly() of the first model frame
  rows <- formula_rows(spec, data, call, "data")
  spec$contrasts <- rows$contrasts
  spec$design_columns <- colnames(rows$a)
  spec$row_by_row <- row_by_row(spec, data, rows$a, call)
  rows$contrasts <- NULL
  c(list(spec = spec), rows)
}

# Every variable of the formula must be a column of the data: one found elsewhere (a global
# vector, or base R's `q` or `pi`) would not come with new rows, and is almost always a typo.
check_formula_variables <- function(formula, data, call) {
  outside <- setdiff(all.vars(formula), c(".", names(data)))
  if (length(outside)) {
    abort(sprintf(paste("`formula` uses %s, not %s of `data`; every variable must be a column",
                        "of `data` (the columns are %s)."),
                  backticked(outside), if (length(outside) > 1) "columns" else "a column",
                  backticked(utils::head(names(data), 10))),
          call, "sgais_error_missing_column", column = outside[1])
  }
}

check_data_frame <- function(data, what, call) {
  if (is.null(data) || !is.data.frame(data)) {
    abort(sprintf("%s must be a data frame, not %s.", what, describe(data)), call)
  }
  if (nrow(data) < 1L) abort(sprintf("%s must have at least one row.", what), call)
}

formula_frame <- function(formula, data, what, call) {
  tryCatch(
    stats::model.frame(formula, data, na.action = stats::na.pass),
    error = function(e) abort(sprintf("`formula` does not fit %s: %s", what, conditionMessage(e)), call)
  )
}

# The design of the rows `data` (the argument `arg`) from a formula spec. The response must be
# among the columns: the likelihood needs it.
formula_rows <- function(spec, data, call, arg) {
  what <- sprintf("`%s`", arg)
  check_data_frame(data, what, call)
  # the data a model is built from (formula_design()) have their columns converted, the spec's
  # columns by construction, and its row rules applied already (glm_rows())
  if (arg != "data") {
    data <- plain_columns(data, what, call)
    data <- apply_glm_rows(spec$rows, data, spec$terms, what, call)
    data <- check_formula_rows(spec, data, what, call)
  }
  design <- formula_matrix(spec, data, what, call)
  a <- design$a
  if (!is.null(spec$design_columns) && !identical(colnames(a), spec$design_columns)) {
    abort_mismatch(sprintf(
      "The design of %s has the columns %s, but the model's are %s.", what,
      backticked(colnames(a)), backticked(spec$design_columns)
    ), call, "sgais_error_design_columns")
  }
  check_design(a, what, call)
  response <- sprintf("the response `%s`%s", spec$response,
                      if (arg == "data") "" else sprintf(" in %s", what))
  if (is.null(design$y) || length(design$y) < 1L) {
    abort(sprintf("%s has no observations.", response), call)
  }
  # the trials of a proportion response (spec$trials: glm_rows()), in their column
  trials <- if (!is.null(spec$trials)) as.double(data[[spec$trials]])
  list(a = a, y = design$y, what = response, contrasts = design$contrasts, offset = design$offset,
       trials = trials)
}

# The model matrix, response and offset (the sum of the formula's offset() terms, NULL if none)
# of `data` from a formula spec, unchecked, and `assign`, each column's term (model.matrix()'s). Factors get the levels and contrasts of the spec (at
# construction, when it has none yet, those of model.matrix()).
formula_matrix <- function(spec, data, what, call) {
  terms <- sandbox_formula(spec$terms, call)
  mf <- formula_frame(terms, data, what, call)
  for (name in names(spec$xlevels)) {
    mf[[name]] <- recode_factor(mf[[name]], name, spec$xlevels[[name]], what, call)
  }
  a <- stats::model.matrix(terms, mf, contrasts.arg = spec$contrasts)
  contrasts <- attr(a, "contrasts")
  assign <- attr(a, "assign")
  attr(a, "assign") <- NULL
  attr(a, "contrasts") <- NULL
  list(a = a, y = stats::model.response(mf), contrasts = contrasts, offset = stats::model.offset(mf),
       assign = assign)
}

# A factor (or character) variable of the model frame as a factor with the levels `levels`; a
# value that is not one of them is an error that names it.
recode_factor <- function(x, name, levels, what, call) {
  if (is.factor(x) && identical(levels(x), levels)) return(x) # keeps its own contrasts, if any
  values <- as.character(x)
  unseen <- unique(values[!is.na(values) & !(values %in% levels)])
  if (length(unseen)) {
    abort_mismatch(sprintf(
      "%s has %s %s of `%s` that the model was not built with (it knows %s).", what,
      plural(length(unseen), "the level", "the levels"), quoted(unseen), name, quoted(levels)
    ), call, "sgais_error_unseen_level", column = name, level = unseen)
  }
  factor(values, levels = levels, ordered = is.ordered(x))
}

# "a", "b" for messages, at most `most` of them.
quoted <- function(x, most = 10L) {
  shown <- paste0("\"", utils::head(x, most), "\"", collapse = ", ")
  if (length(x) > most) paste0(shown, ", ...") else shown
}

# New rows can be given the design of the model's rows: its design is built row by row, and they
# have the columns the formula uses, the covariates of the kinds they had (the response is checked
# by the model: softmax labels may be a factor, characters or codes), and no column the data the
# model was built from did not have. Returns `data`, with 0/1 columns that were logical made
# logical again (a database stores TRUE/FALSE as the integers 1/0).
check_formula_rows <- function(spec, data, what, call) {
  if (!is.null(spec$row_by_row)) {
    abort_mismatch(sprintf(
      "New rows cannot be given the design of `model`: %s. Compute such terms in the data before building the model.",
      spec$row_by_row
    ), call, "sgais_error_not_row_by_row")
  }
  known <- names(spec$column_classes)
  used <- intersect(all.vars(spec$terms), known)
  check_column_names(names(data), known, used, what, call)
  for (name in setdiff(used, all.vars(spec$terms[[2L]]))) {
    was <- column_kind(spec$column_classes[[name]])
    is <- column_kind(class(data[[name]])[1L])
    if (was == "logical" && is == "numeric" && all(data[[name]] %in% c(0, 1, NA))) {
      data[[name]] <- as.logical(data[[name]])
    } else if (!identical(is, was)) {
      abort_mismatch(sprintf("Column `%s` of %s is %s, but it was %s when the model was built.",
                             name, what, is, was), call, "sgais_error_column_type", column = name)
    }
  }
  data
}

# What a column of class `class` is to model.matrix(): integers and doubles are numbers, factors
# and characters categories.
column_kind <- function(class) {
  switch(class,
         integer = , numeric = "numeric",
         factor = , ordered = , character = "categorical (a factor or character)",
         logical = "logical",
         paste("of class", class))
}

# NULL when the design of a row depends on that row alone, as model_data() needs; otherwise why
# not. Found by building the first row alone and comparing it with the first row of the design of
# all the rows: a term such as I(x - mean(x)) changes; poly(), scale() and splines do not, as
# their `predvars` hold the coefficients of all the rows.
row_by_row <- function(spec, data, a, call) {
  if (nrow(data) < 2L) return(NULL)
  first <- tryCatch(formula_matrix(spec, data[1L, , drop = FALSE], "`data`", call)$a,
                    error = function(e) e)
  if (inherits(first, "error")) {
    return(sprintf("the formula does not fit one row of the data (%s)", conditionMessage(first)))
  }
  same <- vapply(seq_len(ncol(a)), function(j) identical(unname(first[1L, j]), unname(a[1L, j])), NA)
  if (all(same)) return(NULL)
  sprintf("the design %s %s %s on all the rows at once (as with `mean()` or `sd()`)",
          plural(sum(!same), "column", "columns"), backticked(colnames(a)[!same]),
          plural(sum(!same), "depends", "depend"))
}

# Matrix interface -----------------------------------------------------------------------------

matrix_design <- function(x, y, call) {
  if (is.null(x)) abort("`x` is missing: give covariates `x` with the response `y`.", call)
  if (is.null(y)) abort("`y` is missing: give a response `y` with the covariates `x`.", call)
  x <- as_numeric_matrix(x, "`x`", call)
  spec <- c(list(interface = "matrix", response = "y"), matrix_columns(x, "x"))
  c(list(spec = spec), matrix_rows(spec, x, y, call, "`x`", "`y`"))
}

matrix_rows <- function(spec, x, y, call, x_what, y_what) {
  x <- match_columns(as_numeric_matrix(x, x_what, call), spec, x_what, call)
  if (!is.atomic(y)) abort(sprintf("%s must be a vector, not %s.", y_what, describe(y)), call)
  if (length(y) != nrow(x)) {
    abort(sprintf("%s has %d rows but %s has %d elements; they must match.",
                  x_what, nrow(x), y_what, length(y)), call)
  }
  a <- cbind(1, x)
  storage.mode(a) <- "double"
  colnames(a) <- c("(Intercept)", spec$columns)
  check_design(a, x_what, call)
  list(a = a, y = y, what = y_what)
}

check_design <- function(a, what, call) {
  if (ncol(a) < 1L) abort(sprintf("The design built from %s has no columns.", what), call)
  check_finite_cells(a, what, call)
}
