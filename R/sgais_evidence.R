# The parent class of every estimator's result (sgais_fit, sgais_ais_fit, sgais_ns_fit,
# sgais_online_ns_fit and sgais_is_fit).
# Fields common to all: method, log_evidence, n (observations used), model, settings, call, seed,
# initial_seed, final_seed and the cost (seconds, gradient_evaluations, likelihood_evaluations).

# The one builder of every estimator's fit. `run` is what run_in_slices() returned, with the RNG
# states added, or combine_runs() of replicate runs: its seeds, time and the evaluation counts in
# its trace become the fit's. `fields` is what is particular to the estimator, a named list:
# `log_evidence`, `n` and `data_digest` where they are not the model's (all its observations),
# and the estimator's own fields, kept in their order after those every fit has. `class`: the
# estimator's class.
new_sgais_evidence <- function(method, model, run, settings, call, seed, fields, class) {
  n <- fields[["n"]] %||% model$n
  stopifnot(
    is.character(method), is.numeric(fields[["log_evidence"]]),
    length(fields[["log_evidence"]]) == 1L, inherits(model, "sgais_model"), is.list(settings),
    is.numeric(run$seconds), is.data.frame(run$trace)
  )
  structure(
    c(list(
      method = method, log_evidence = fields[["log_evidence"]], n = as_count(n), model = model,
      settings = settings, call = call, seed = seed, initial_seed = run$initial_seed,
      final_seed = run$final_seed, seconds = run$seconds,
      gradient_evaluations = sum(run$trace$gradient_evaluations),
      likelihood_evaluations = sum(run$trace$likelihood_evaluations),
      data_digest = fields[["data_digest"]] %||% extend_digest("", model, 0, n),
      format_version = fit_format_version
    ), fields[setdiff(names(fields), c("log_evidence", "n", "data_digest"))]),
    class = c(class, "sgais_evidence")
  )
}

# Checks the fields every fit has before a method trusts them; a damaged or hand-edited fit
# gives an error of class `sgais_error_invalid_fit` that names the field, not a wrong number.
# Returns the fit in the current format (upgrade_fit()): callers go on with the result.
validate_sgais_evidence <- function(x, call = NULL) {
  bad <- function(what) {
    abort(sprintf("The fit is not valid: %s.", what), call, "sgais_error_invalid_fit")
  }
  if (!inherits(x, "sgais_evidence") || !is.list(x)) bad("it is not an sgais fit")
  if (!is.character(x$method) || length(x$method) != 1L) bad("its `method` is not a string")
  # [[ ]], not $: a fit without `log_evidence` would give its `log_evidence_se` by partial matching
  z <- x[["log_evidence"]]
  if (!is.numeric(z) || length(z) != 1L || !is.finite(z)) {
    bad("its `log_evidence` is not a finite number")
  }
  if (!inherits(x$model, "sgais_model")) bad("its `model` is not an sgais model")
  validate_sgais_model(x$model, call)
  if (!is_number(x$n) || x$n != x$model$n) bad("its `n` is not the number of its model's observations")
  for (field in c("seconds", "gradient_evaluations", "likelihood_evaluations")) {
    if (!is_number(x[[field]]) || x[[field]] < 0) bad(sprintf("its `%s` is not a count", field))
  }
  if (!is.character(x$data_digest) || length(x$data_digest) != 1L ||
      !grepl("^[0-9a-f]{16}$", x$data_digest)) {
    bad("its `data_digest` is not a digest of its observations")
  }
  validate_fit_settings(x, bad, call)
  for (field in c("log_evidence_se", "replicate_sd")) {
    v <- x[[field]]
    if (!is.null(v) && (!is.numeric(v) || length(v) != 1L || is.nan(v) || isTRUE(v < 0) ||
                        isTRUE(v == Inf))) {
      bad(sprintf("its `%s` is not a standard deviation (a number >= 0) or NA", field))
    }
  }
  if (!is.null(x$replicate_log_evidence) &&
      (!is.numeric(x$replicate_log_evidence) || !all(is.finite(x$replicate_log_evidence)))) {
    bad("its `replicate_log_evidence` are not finite numbers")
  }
  diag <- x$diagnostics
  if (!is.null(diag) && (!is.data.frame(diag) || !is.numeric(diag$predicted_sd) ||
                         isTRUE(any(diag$predicted_sd < 0 | diag$predicted_sd == Inf)))) {
    bad(paste("its `diagnostics` are not a data frame with a standard deviation (`predicted_sd`)",
              "per replicate"))
  }
  # the table of rows each method keeps, with the columns its methods read
  table <- c(sgais_fit = "trajectory", sgais_ais_fit = "schedule", sgais_ns_fit = "trace",
             sgais_online_ns_fit = "trajectory")
  kind <- intersect(names(table), class(x))
  if (length(kind)) {
    name <- table[[kind[1]]]
    columns <- switch(kind[1],
      sgais_fit = c("n", "log_evidence", "log_evidence_per_obs", "annealing_steps", "ess",
                    "seconds", "gradient_evaluations", "likelihood_evaluations"),
      sgais_ais_fit = c("lambda", "log_evidence", "ess", "seconds"),
      sgais_ns_fit = c("iteration", "log_likelihood", "log_volume", "log_evidence", "ess", "seconds"),
      sgais_online_ns_fit = c("n", "log_evidence", "log_evidence_per_obs", "log_predictive",
                              "iterations", "information", "ess", "seconds",
                              "gradient_evaluations", "likelihood_evaluations")
    )
    rows <- x[[name]]
    if (!is.data.frame(rows) || nrow(rows) < 1L || !all(columns %in% names(rows)) ||
        !all(vapply(rows[columns], is.numeric, logical(1)))) {
      bad(sprintf("its `%s` is not a data frame with the numeric columns %s", name, backticked(columns)))
    }
    wrong <- bad_table_columns(rows, columns)
    if (length(wrong)) {
      bad(sprintf("its `%s` has impossible values (NaN, NA, +Inf or negative counts) in %s",
                  name, backticked(wrong)))
    }
    if (name == "trajectory" && rows$n[nrow(rows)] != x$n) {
      bad("the last row of its `trajectory` is not at its `n` observations")
    }
  }
  # the weighted points posterior_samples() and predictive_density() draw from
  if (inherits(x, c("sgais_ns_fit", "sgais_online_ns_fit"))) {
    dead <- x$dead
    if (!is.matrix(dead) || !is.double(dead) || ncol(dead) != x$model$dim + 2L || nrow(dead) < 1L ||
        anyNA(dead) || any(dead == Inf) || all(dead[, ncol(dead)] == -Inf)) {
      bad("its `dead` points are not a numeric matrix with a column per parameter, then the log-likelihood and log-weight")
    }
  } else if (inherits(x, c("sgais_fit", "sgais_ais_fit", "sgais_is_fit"))) {
    st <- x$state
    if (!is.list(st) || !is.matrix(st$particles) || !is.double(st$particles) ||
        ncol(st$particles) != x$model$dim || !is.double(st$log_weights) ||
        length(st$log_weights) != nrow(st$particles) || !all(is.finite(st$particles)) ||
        anyNA(st$log_weights) || any(st$log_weights == Inf) || all(st$log_weights == -Inf)) {
      bad("its `state` does not hold the particles (a matrix with a column per parameter) and their log-weights")
    }
  }
  upgrade_fit(x)
}

# The columns of a fit's table of rows (`columns`: those its methods read) that hold values no
# run writes: NA or NaN, or +Inf in the columns read (-Inf only in a log-density, e.g. the first
# points of nested sampling under a likelihood that can be zero); a negative count. The other
# columns may be NA where a chunk has no such figure, and an NA written by C may read as NaN
# (valgrind does not keep R's NA payload), so NaN there is NA.
bad_table_columns <- function(rows, columns) {
  counts <- c("n", "ess", "seconds", "gradient_evaluations", "likelihood_evaluations",
              "annealing_steps", "iterations", "iteration", "log_evidence_se")
  # the usual case at the cost of a few vectorised passes; the columns are named only on failure
  read <- unlist(rows[columns], use.names = FALSE)
  se <- rows[["log_evidence_se"]]
  if (!anyNA(read) && !any(read == Inf) &&
      all(unlist(rows[columns[!startsWith(columns, "log_")]], use.names = FALSE) > -Inf) &&
      all(unlist(rows[intersect(counts, columns)], use.names = FALSE) >= 0) &&
      !isTRUE(any(se < 0 | se == Inf))) {
    return(character(0))
  }
  checked <- intersect(names(rows), c(columns, "log_evidence_se"))
  wrong <- vapply(checked, function(col) {
    v <- rows[[col]]
    if (col == "log_evidence_se") return(is.numeric(v) && isTRUE(any(v < 0 | v == Inf)))
    if (anyNA(v) || any(v == Inf)) return(TRUE)
    if (!startsWith(col, "log_") && any(v == -Inf)) return(TRUE)
    col %in% counts && any(v < 0)
  }, logical(1))
  checked[wrong]
}

# A fit's settings checked by the parser that made them (resolve_settings()), so that a damaged
# or edited setting is refused by name before any method or continuation reads it. `bad`: the
# validator's error.
validate_fit_settings <- function(x, bad, call) {
  s <- x$settings
  if (!is.list(s) || !is.character(s$preset) || length(s$preset) != 1L || is.na(s$preset)) {
    bad("its `settings` are not an estimator's settings")
  }
  method <- fit_settings_method(x, s)
  if (is.null(method)) return(invisible())
  s <- upgrade_settings(s)
  if (!s$preset %in% names(control_presets[[method]])) {
    bad(sprintf("its `settings$preset` is not one of %s",
                backticked(names(control_presets[[method]]))))
  }
  tryCatch(resolve_settings(method, s, call), sgais_error = function(e) {
    bad(sprintf("its `settings` are not valid (%s)", sub("\\.$", "", conditionMessage(e))))
  })
  invisible()
}

# The schema's name (settings_schema) of the estimator that made a fit, or NULL for a fit whose
# settings are not the schema's (importance sampling's).
fit_settings_method <- function(x, s) {
  if (inherits(x, "sgais_fit")) {
    if (!is.character(s$update) || length(s$update) != 1L) return("sgais")
    return(switch(s$update, importance = "sir", averaged = "sequential", "sgais"))
  }
  if (inherits(x, "sgais_ais_fit")) return("ais")
  if (inherits(x, "sgais_ns_fit")) return("nested_sampling")
  if (inherits(x, "sgais_online_ns_fit")) return("online_nested_sampling")
  NULL
}

#' Results of the evidence estimators
#'
#' [sgais()], [ais()], [nested_sampling()], [online_nested_sampling()] and
#' [importance_sampling()] return objects of classes `sgais_fit`, `sgais_ais_fit`,
#' `sgais_ns_fit`, `sgais_online_ns_fit` and `sgais_is_fit`, all with the parent class
#' `sgais_evidence` (an importance-sampling fit's data frame has a row per draw: the shared
#' columns, `method` and `n` set and the others `NA`, then the draw, its parameters and its
#' log-weight). They share
#' [log_evidence()], [confint()] (with replicates), [posterior_samples()], `print()`, `summary()`
#' and [as.data.frame()], whose data frame begins with the same columns for every method, in
#' this order:
#' \describe{
#'   \item{`method`}{`"SGAIS"`, `"AIS"`, `"Nested sampling"`, `"Online NS"` or
#'     `"importance sampling"`;}
#'   \item{`n`}{the observations in that row's target (SGAIS and online nested sampling: the
#'     prefix so far; AIS and nested sampling: all of them);}
#'   \item{`log_evidence`}{the estimate so far (SGAIS: of the prefix; AIS: of the tempered target
#'     at that step; nested sampling: the sum so far);}
#'   \item{`log_evidence_se`}{its standard error from replicates where the method has one
#'     (SGAIS), else `NA`;}
#'   \item{`ess`}{an effective sample size (SGAIS: of the weights after the chunk; AIS: of the
#'     step's incremental weights; nested sampling: of the posterior weights of the points
#'     removed so far);}
#'   \item{`seconds`, `gradient_evaluations`, `likelihood_evaluations`}{the cumulative cost
#'     (evaluations per observation and particle);}
#' }
#' followed by the method's own columns (see each function's Value section): one row per chunk
#' for SGAIS and online nested sampling, per annealing step for AIS, per iteration for nested
#' sampling.
#'
#' Every fit also carries `data_digest`, a 64-bit digest (FNV-1a, 16 hex digits) of the
#' responses of the observations it is a fit of, in order and whatever pieces they came in, by
#' which [compare_models()] checks that fits are of the same observations.
#'
#' @name sgais_evidence
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(1000, seed = 1))
#' fits <- list(sgais(model, seed = 1), ais(model, seed = 1), nested_sampling(model, seed = 1))
#' shared <- lapply(fits, function(f) utils::tail(as.data.frame(f)[1:8], 1))
#' do.call(rbind, shared)
NULL

# The result contract. Every fit's as.data.frame() begins with these columns, in this order,
# whatever the method, so that plots, comparisons and users can read any fit the same way:
#   method                  "SGAIS", "AIS" or "Nested sampling";
#   n                       observations in the target of that row (SGAIS: the prefix so far;
#                           AIS and nested sampling: all of them);
#   log_evidence            the estimate so far (SGAIS: of the prefix; AIS: of the tempered
#                           target at that step; nested sampling: the sum so far);
#   log_evidence_se         its standard error from replicates where the method has one, else NA;
#   ess                     an effective sample size (SGAIS: of the weights after the chunk; AIS:
#                           of the step's incremental weights; nested sampling: of the posterior
#                           weights of the points removed so far);
#   seconds, gradient_evaluations, likelihood_evaluations   the cumulative cost;
# then the method's own columns.
contract_columns <- c("method", "n", "log_evidence", "log_evidence_se", "ess", "seconds",
                      "gradient_evaluations", "likelihood_evaluations")

#' @export
as.data.frame.sgais_evidence <- function(x, row.names = NULL, optional = FALSE, ...) {
  call <- sys.call()
  check_dots_empty(call, c("x", "row.names", "optional"), ...)
  x <- validate_sgais_evidence(x, call)
  rows <- fit_rows(x)
  shared <- data.frame(method = rep(x$method, nrow(rows)), stringsAsFactors = FALSE)
  for (col in contract_columns[-1L]) {
    shared[[col]] <- if (is.null(rows[[col]])) rep(NA_real_, nrow(rows)) else rows[[col]]
  }
  out <- cbind(shared, rows[setdiff(names(rows), contract_columns)])
  rownames(out) <- NULL
  out
}

# A fit's rows (its trajectory, schedule or trace) for as.data.frame(), before the shared columns.
fit_rows <- function(x) UseMethod("fit_rows")

# The particles of an annealing run as a particles x parameters matrix.
particle_matrix <- function(run, model) {
  particles <- t(run$state$theta)
  colnames(particles) <- model$parameter_names
  particles
}

#' Log evidence of a fit
#'
#' The estimated log marginal likelihood \eqn{\log p(y)} of the data a fit has seen.
#'
#' @param x A fit from [sgais()], [ais()] or [nested_sampling()].
#' @param ... Unused.
#' @return A number.
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(2000, seed = 1))
#' fit <- sgais(model, seed = 1)
#' log_evidence(fit)
log_evidence <- function(x, ...) {
  UseMethod("log_evidence")
}

#' @export
log_evidence.default <- function(x, ...) {
  abort_wrong_object(x, "x", takes_fit, sys.call())
}

#' @rdname log_evidence
#' @export
log_evidence.sgais_evidence <- function(x, ...) {
  call <- sys.call()
  check_dots_empty(call, "x", ...)
  validate_sgais_evidence(x, call)[["log_evidence"]]
}

# The one print() of every estimator's fit: the fields all fits have, then the estimator's own
# (fit_fields()), one line each, "  label:" then the text from the 14th character.
#' @export
format.sgais_evidence <- function(x, ...) {
  call <- sys.call()
  check_dots_empty(call, "x", ...)
  x <- validate_sgais_evidence(x, call)
  m <- x$model
  fields <- c(
    model = sprintf("%s, %s observations, %d parameter%s", m$label, format_count(x$n), m$dim,
                    if (m$dim == 1L) "" else "s"),
    "log Z" = sprintf("%.4f%s (%.6f per observation)", x$log_evidence, format_se(x),
                      x$log_evidence / x$n),
    cost = sprintf("%.2f s; %s gradient and %s likelihood evaluations", x$seconds,
                   format_big(x$gradient_evaluations), format_big(x$likelihood_evaluations)),
    check = format_reliability(x),
    fit_fields(x)
  )
  c(sprintf("<%s evidence estimate>", x$method),
    sprintf("  %-11s%s", paste0(names(fields), ":"), fields))
}

# An estimator's own fields of print() (format.sgais_evidence()), named by their labels: its
# settings, and how its run went.
fit_fields <- function(x) UseMethod("fit_fields")
fit_fields.default <- function(x) NULL

# The diagnostics' verdict: the predicted sd of log Z (largest over replicates).
format_reliability <- function(x) {
  sd <- x$diagnostics$predicted_sd
  if (is.null(sd)) return(character())
  if (anyNA(sd)) return("predicted sd of log Z: none (a step's weights collapsed; unreliable)")
  sprintf("predicted sd of log Z %.2f nats%s", max(sd),
          if (max(sd) > 1) " (over 1: unreliable, see ?sgais)" else "")
}

#' @export
print.sgais_evidence <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}

#' @export
summary.sgais_evidence <- function(object, ...) {
  call <- sys.call()
  check_dots_empty(call, "object", ...)
  object <- validate_sgais_evidence(object, call)
  exact <- exact_or_null(object$model, object$n)
  structure(
    list(
      method = object$method, label = object$model$label, n = object$n, dim = object$model$dim,
      log_evidence = object$log_evidence, log_evidence_se = object$log_evidence_se,
      replicate_log_evidence = object$replicate_log_evidence, exact_log_evidence = exact,
      seconds = object$seconds, gradient_evaluations = object$gradient_evaluations,
      likelihood_evaluations = object$likelihood_evaluations, settings = object$settings,
      diagnostics = object$diagnostics,
      call = object$call
    ),
    class = "summary.sgais_evidence"
  )
}

#' @export
format.summary.sgais_evidence <- function(x, ...) {
  out <- c(
    sprintf("%s estimate of the evidence of a %s", x$method, x$label),
    sprintf("(%s observations, %d parameters)", format_count(x$n), x$dim),
    "",
    sprintf("Call: %s", paste(deparse(x$call, width.cutoff = 500L), collapse = " ")),
    "",
    sprintf("log Z:       %.4f%s (%.6f per observation)", x$log_evidence, format_se(x),
            x$log_evidence / x$n)
  )
  if (!is.null(x$exact_log_evidence)) {
    err <- x$log_evidence - x$exact_log_evidence
    out <- c(out,
      sprintf("exact log Z: %.4f (error %+.4f, relative %+.2e)", x$exact_log_evidence, err,
              err / abs(x$exact_log_evidence)))
  }
  c(out,
    sprintf("Cost:        %.2f s; %s gradient and %s likelihood evaluations", x$seconds,
            format_big(x$gradient_evaluations), format_big(x$likelihood_evaluations)),
    if (!is.null(x$diagnostics)) {
      c("", "Diagnostics (one row per replicate):",
        utils::capture.output(print(x$diagnostics, digits = 8, row.names = FALSE)))
    })
}

#' @export
print.summary.sgais_evidence <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}

# update() of a fit that cannot be continued (AIS, nested sampling, online nested sampling): a
# classed error. Without this method stats::update() would evaluate the fit's stored `call`,
# which a fit read from a file could have replaced with any code.
#' @export
update.sgais_evidence <- function(object, ...) {
  call <- sys.call()
  object <- validate_sgais_evidence(object, call)
  abort(sprintf(paste(
    "A fit of %s cannot be continued on new data; only fits of sgais() (and their",
    "comparisons) can. Estimate the evidence of all the data again, or use sgais()."),
    object$method), call, "sgais_error_not_continuable")
}
