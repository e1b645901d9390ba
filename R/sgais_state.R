# The state of an SGAIS fit: what it reports about its particles, and what a continuation on new
# data starts from (see sgais.sgais_fit()).
#
# `particles`, `log_weights`: the particles and log-weights after all observations (all
#   replicates' stacked), for posterior_samples() and for people;
# `n`: the observations the fit has seen;
# `resume`: one list per replicate, the C sampler state after the last whole chunk (theta, logw,
#   n, the control-variate anchor, the adapted step, the preconditioner's running covariance; see
#   state_fields in src/sgais_r.c), with `key`, the key of the replicate's random streams
#   (src/rng.h), and R's RNG state at that point as `seed` (for draws in R, e.g. the key of a fit
#   saved before keys existed), so a continuation neither uses nor changes the session's stream;
# `traces`: one data frame per replicate, its chunk by chunk trace (the last row `partial` when
#   the observations end inside a chunk), from which the trajectory and the diagnostics of the
#   continued fit are made;
# `pilot`: with schedule "pilot", the pilot run's `resume` and `trace` (as a replicate's; its
#   resume state also holds `lambdas`, every annealing step's lambda so far), continued first
#   so that the replicates take its steps on the new chunks (see sgais_more()); else NULL.
new_sgais_state <- function(particles, log_weights, n, resume, traces, pilot = NULL) {
  stopifnot(is.matrix(particles), is.numeric(log_weights), is.list(resume), is.list(traces),
            length(resume) == length(traces), is.null(pilot) || is.list(pilot))
  structure(
    list(particles = particles, log_weights = log_weights, n = n, resume = resume,
         traces = traces, pilot = pilot),
    class = "sgais_state"
  )
}

# The run state of SGAIS's sampler: one replicate's record, which the C core continues from
# (ffi_sgais_run(), src/sgais_r.c) and a fit keeps in `resume`. One row per field, in the
# record's order: its value at a run's start (from the prior draws `theta`, the random-stream
# `key` and `at`, R/restart.R), after a call of the core that processed chunks (from the core's
# result `res`, its trace `tr` of `k` rows and the `state` before), and in a fit saved before
# the field existed (upgrade_sgais_state()). `absent`: not in the record then. `finite`: numbers
# that validate_sgais_state() requires finite. The fields the core reads, with what each must
# hold, are its table state_fields (src/sgais_r.c).
run_state_field <- function(start, after, old, finite = FALSE) {
  list(start = substitute(start), after = substitute(after),
       old = if (missing(old)) quote(absent) else substitute(old), finite = finite)
}
run_state_fields <- c(list(
  theta = run_state_field(theta, res$theta),
  logw = run_state_field(numeric(ncol(theta)), res$logw),
  n = run_state_field(0, tr$n[k]),
  anchor = run_state_field(numeric(0), res$anchor, finite = TRUE),
  anchor_grad = run_state_field(numeric(0), res$anchor_grad, finite = TRUE),
  anchor_n = run_state_field(0, res$anchor_n, finite = TRUE),
  step_size = run_state_field(0, res$step_size_end, finite = TRUE),
  precond_cov = run_state_field(numeric(0), res$precond_cov, finite = TRUE),
  precond_n = run_state_field(0, res$precond_n, finite = TRUE),
  precond_ess = run_state_field(0, res$precond_ess, finite = TRUE),
  reservoir = run_state_field(NULL, absent),
  slots = run_state_field(absent, res$slots),
  score = run_state_field(numeric(0), res$score, numeric(0), finite = TRUE),
  buffer_start = run_state_field(absent, state$buffer_start),
  key = run_state_field(key, state$key),
  log_z = run_state_field(absent, tr$log_evidence[k], finite = TRUE),
  lambdas = run_state_field(numeric(0), c(state$lambdas, res$lambdas), finite = TRUE)
), eval(restart_state_fields), list(
  genealogy = run_state_field(NULL, res$genealogy)
))

# The run state `when` ("start" or "after", see run_state_fields) from the values in `values`.
run_state <- function(when, values) {
  out <- list()
  for (name in names(run_state_fields)) {
    e <- run_state_fields[[name]][[when]]
    if (!identical(e, quote(absent))) out[name] <- list(eval(e, values))
  }
  out
}

# The trace of a run of SGAIS's sampler: a row per chunk, its columns the C core's (trace_columns
# in src/sgais_r.c, the same names), restart_trace_columns and `partial` (sgais_more()). One row
# per column: its value in a row of no chunk's work (hybrid_start()'s first row; and in a fit
# saved before the column existed, upgrade_sgais_state()); how one row stands for several
# chunks (`chunks`: "last", "mean" of the known values, "min" or "sum"; trace_join_chunks());
# and how the trajectory joins the replicates' (`replicates`: "mean", "min" or "sum", in the
# trajectory's order; NULL: a column new_sgais_fit() makes its own way, or none).
trace_column <- function(empty, chunks = "sum", replicates = NULL) {
  list(empty = empty, chunks = chunks, replicates = replicates)
}
trace_columns <- c(list(
  n = trace_column(0, "last"), log_evidence = trace_column(0, "last"),
  predicted_var = trace_column(0), genealogy_var = trace_column(NA_real_, "last"),
  annealing_steps = trace_column(0L, "sum", "mean"), min_ess = trace_column(NA_real_, "min", "min"),
  ess = trace_column(NA_real_, "last", "mean"), resamples = trace_column(0L, "sum", "mean"),
  sghmc_steps = trace_column(0L, "sum", "mean"),
  acceptance = trace_column(NA_real_, "mean", "mean"),
  step_size = trace_column(NA_real_, "last", "mean"), divergent = trace_column(0L, "sum", "mean"),
  step_halvings = trace_column(0L, "sum", "mean"), reanchors = trace_column(0L, "sum", "mean"),
  data_fraction = trace_column(NA_real_, "mean", "mean"),
  jump_acceptance = trace_column(NA_real_, "mean", "mean"),
  exact_fallback = trace_column(0L, "sum", "mean")
), eval(restart_trace_columns), list(
  seconds = trace_column(0), gradient_evaluations = trace_column(0),
  likelihood_evaluations = trace_column(0), partial = trace_column(FALSE)
))

# A trace row of no chunk's work (trace_columns' `empty`), with the values in `...`.
trace_row <- function(...) {
  as.data.frame(utils::modifyList(lapply(trace_columns, `[[`, "empty"), list(...)))
}

# One row standing for the rows of trace `tr` (trace_columns' `chunks`).
trace_join_chunks <- function(tr) {
  join <- list(
    last = function(x) x[length(x)], min = min, sum = sum,
    mean = function(x) if (all(is.na(x))) NA_real_ else mean(x, na.rm = TRUE)
  )
  as.data.frame(lapply(stats::setNames(nm = names(tr)), function(col) {
    join[[trace_columns[[col]]$chunks]](tr[[col]])
  }))
}

# Column `col` of the replicates' traces (data frames with the same rows) joined row by row by
# `how`: "mean", "min" or "sum".
trace_join <- function(traces, col, how) {
  if (how == "min") return(do.call(pmin, lapply(traces, `[[`, col)))
  rows <- nrow(traces[[1]])
  each <- matrix(vapply(traces, `[[`, numeric(rows), col), nrow = rows)
  if (how == "sum") rowSums(each) else rowMeans(each)
}

# The trajectory's columns from the replicates' traces: each column with a `replicates` rule of
# trace_columns, in their order.
trace_join_replicates <- function(traces) {
  how <- Filter(Negate(is.null), lapply(trace_columns, `[[`, "replicates"))
  Map(function(col, h) trace_join(traces, col, h), names(how), how)
}

# The state of a run before its first observation: particles `theta` (dim x M, prior draws)
# with equal weights, the run's random-stream `key`, and `at` (the observations it starts
# again at); no genealogy yet (src/anneal.h: each particle starts its own line).
sgais_initial_state <- function(theta, key, at = 0) {
  run_state("start", list(theta = theta, key = key, at = at))
}

# `fit` checked as a fit (validate_sgais_evidence()) with a state a continuation can start from:
# what every function that continues a fit calls first.
validate_continuable <- function(fit, call = NULL) {
  fit <- validate_sgais_evidence(fit, call)
  validate_sgais_state(fit$state, fit$model, fit$settings, call)
  check_functions_trusted(fit$model, call)
  fit
}

# Checks that `state` is a state a continuation can start from, for a fit of `model`: every field
# the C sampler reads has the right type and size, so a damaged or hand-edited fit gives a clear
# error rather than a wrong number.
validate_sgais_state <- function(state, model, settings, call = NULL) {
  cap <- reservoir_cap(settings)
  bad <- function(what) {
    abort(sprintf("The fit's `state` %s, so the fit cannot be continued.", what), call,
          "sgais_error_invalid_state")
  }
  if (!inherits(state, "sgais_state")) {
    bad("is not an SGAIS state (a fit made by an older version of sgais, or altered)")
  }
  resume <- state$resume
  traces <- state$traces
  if (!is.list(resume) || length(resume) < 1L || !is.list(traces) ||
      length(traces) != length(resume)) {
    bad("has no sampler state for its replicates")
  }
  if (!identical(state$n, model$n)) bad("does not hold as many observations as its model")
  if (!is.list(model$data) || !is.matrix(model$data[[1L]]) ||
      data_rows(model$data) != model$n - model_dropped(model)) {
    bad("belongs to a model whose data are not the observations it counts")
  }
  n_done <- NULL
  pilot <- state$pilot
  if (!is.null(pilot) && (!is.list(pilot) || !is.list(pilot$resume) ||
                          !is.double(pilot$resume$lambdas))) {
    bad("has no valid state for its pilot run")
  }
  # the pilot's state is checked as a replicate's (its messages name it "replicate R + 1")
  if (!is.null(pilot)) {
    resume <- c(resume, list(pilot$resume))
    traces <- c(traces, list(pilot$trace))
  }
  for (r in seq_along(resume)) {
    s <- resume[[r]]
    theta <- s$theta
    if (!is.list(s) || !is.matrix(theta) || !is.double(theta) || nrow(theta) != model$dim ||
        ncol(theta) < 1L || !all(is.finite(theta))) {
      bad(sprintf("has no valid particles for replicate %d", r))
    }
    if (!is.double(s$logw) || length(s$logw) != ncol(theta) || anyNA(s$logw) ||
        any(s$logw == Inf) || all(s$logw == -Inf)) {
      bad(sprintf("has no valid log-weights for replicate %d (finite, or -Inf for a weight of 0, and not all -Inf)", r))
    }
    # weights that all sit on one or two particles: the continuation can only carry that on
    ess <- weight_ess(s$logw)
    if (length(s$logw) >= 10L && ess < 2) {
      warn(sprintf(paste(
        "The state continued from is degenerate: the weights of replicate %d have an effective",
        "sample size of %.2g of %d particles, so the estimate goes on from one or two points and",
        "cannot be trusted. Refit with the default preset (which resamples), or more `particles`."),
        r, ess, length(s$logw)), call, "sgais_warning_degenerate_state")
    }
    if (!is_number(s$n) || s$n < 0 || s$n > model$n || s$n != round(s$n) ||
        (!is.null(n_done) && s$n != n_done)) {
      bad(sprintf("has an invalid count of observations for replicate %d", r))
    }
    n_done <- s$n
    if (n_done < model_dropped(model)) {
      bad(sprintf("starts before the observations its model holds, for replicate %d", r))
    }
    if (is.finite(cap)) {
      if (!is_data_like(s$reservoir, model$data, min(n_done, cap))) {
        bad(sprintf("has no valid reservoir of %s observations for replicate %d",
                    format_count(min(n_done, cap)), r))
      }
    }
    if (!is.integer(s$seed) || length(s$seed) < 2L) {
      bad(sprintf("has no random number stream for replicate %d", r))
    }
    # the key of the replicate's random streams (src/rng.h); fits from before keys had none
    key <- s$key
    if (!is.null(key) && (!is.double(key) || length(key) != 2L || anyNA(key) ||
                          any(key < 0 | key >= 2^32 | key != floor(key)))) {
      bad(sprintf("has an invalid random stream key for replicate %d", r))
    }
    tr <- traces[[r]]
    if (!is.data.frame(tr) || !all(c("n", "log_evidence", "partial") %in% names(tr))) {
      bad(sprintf("has no trace for replicate %d", r))
    }
    # the sampler continues from the last whole chunk of its trace (a partial last chunk is
    # done again): a count that disagrees would go on from the wrong observation
    whole <- which(!tr$partial %in% TRUE)
    resumes_at <- if (length(whole)) as.double(tr$n[whole[length(whole)]]) else 0
    if (!identical(resumes_at, as.double(s$n))) {
      bad(sprintf("has a count of observations for replicate %d that disagrees with its trace", r))
    }
    finite <- names(Filter(function(f) f$finite, run_state_fields))
    for (field in intersect(finite, names(s))) {
      v <- s[[field]]
      if (!is.numeric(v) || !all(is.finite(v))) {
        bad(sprintf("has an invalid `%s` for replicate %d (not finite numbers)", field, r))
      }
    }
  }
  state
}

#' @export
format.sgais_state <- function(x, ...) {
  sprintf("<SGAIS state: %s observations, %d replicate%s of %d particles, continuable from n = %s>",
          format_count(x$n), length(x$resume), if (length(x$resume) == 1L) "" else "s",
          ncol(x$resume[[1]]$theta), format_count(x$resume[[1]]$n))
}

#' @export
print.sgais_state <- function(x, ...) {
  cat_lines(format(x, ...))
  invisible(x)
}

# Whether `data` is a model data list like `like` (same elements, types and rows per observation)
# holding `rows` observations.
is_data_like <- function(data, like, rows) {
  is.list(data) && identical(names(data), names(like)) &&
    all(unlist(Map(function(x, y) {
      typeof(x) == typeof(y) && is.matrix(x) == is.matrix(y) &&
        (if (is.matrix(y)) nrow(x) == nrow(y) && ncol(x) == rows else length(x) == rows)
    }, data, like)))
}
