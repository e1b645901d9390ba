# Argument checks used before every .Call. Each names the argument, what was expected and what
# was given, and reports the user's call rather than the helper's.

# Every error is of class `sgais_error`; `class` puts more specific classes before it and `...`
# adds fields to the condition (e.g. the column and level a data error is about), so callers can
# catch one kind of error and read what it is about.
abort <- function(message, call = NULL, class = NULL, ...) {
  stop(structure(
    class = c(class, "sgais_error", "error", "condition"),
    list(message = message, call = call, ...)
  ))
}

# A warning of class `class` (and `sgais_warning`), as abort() raises errors.
# Raised by the C core (src/ffi.c, sg_raise()) for a failure it reports by status code, so that
# R users can catch it by class: sgais_error_model (a model's own function failed or returned
# nonsense), sgais_error_likelihood (NaN, +Inf or zero likelihood), sgais_error_divergence (the
# sampler's moves broke down), sgais_error_annealing (annealing did not finish) and
# sgais_error_input (an object the core cannot use).
core_error <- function(kind, message) {
  abort(message, class = paste0("sgais_error_", kind))
}

warn <- function(message, call = NULL, class = NULL) {
  warning(structure(
    class = c(class, "sgais_warning", "warning", "condition"),
    list(message = message, call = call)
  ))
}

# A short description of a bad value for error messages.
describe <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.factor(x)) return("a factor")
  if (!is.atomic(x)) return(paste("an object of class", class(x)[1]))
  if (length(x) != 1L) return(sprintf("a %s vector of length %d", typeof(x), length(x)))
  if (is.character(x)) return(sprintf("\"%s\"", x))
  format(x)
}

is_number <- function(x) {
  is.numeric(x) && length(x) == 1L && !is.na(x)
}

check_whole_number <- function(x, arg, min, call) {
  if (!is_number(x) || !is.finite(x) || x != round(x) || x < min || x > .Machine$integer.max) {
    abort(sprintf("`%s` must be a whole number >= %s, not %s.", arg, min, describe(x)), call)
  }
  as.integer(x)
}

check_positive <- function(x, arg, call) {
  if (!is_number(x) || !is.finite(x) || x <= 0) {
    abort(sprintf("`%s` must be a positive finite number, not %s.", arg, describe(x)), call)
  }
  as.double(x)
}

# A model's scale hyperparameter (a standard deviation, shape, rate, degrees of freedom): a
# positive number in `hyper_range` (R/model.R), within which squares, reciprocals and products
# with data stay far inside the doubles, so the closed forms keep their precision.
check_hyper <- function(x, arg, call) {
  x <- check_positive(x, arg, call)
  if (x < hyper_range[1] || x > hyper_range[2]) {
    abort(sprintf(paste("`%s` must be between %g and %g, not %s: beyond, its square or",
                        "reciprocal leaves the range where the evidence keeps its precision."),
                  arg, hyper_range[1], hyper_range[2], describe(x)), call)
  }
  x
}

# x in (lower, upper], the interval every bounded tuning value here uses.
check_half_open <- function(x, arg, lower, upper, call, upper_name = format(upper)) {
  if (!is_number(x) || !(x > lower && x <= upper)) {
    abort(sprintf("`%s` must be a number in (%s, %s], not %s.", arg, lower, upper_name, describe(x)), call)
  }
  as.double(x)
}

# x in (lower, upper), open at both ends (a probability that must not be 0 or 1).
check_open_interval <- function(x, arg, lower, upper, call) {
  if (!is_number(x) || !(x > lower && x < upper)) {
    abort(sprintf("`%s` must be a number in (%s, %s), not %s.", arg, lower, upper, describe(x)), call)
  }
  as.double(x)
}

# One of `choices` (a string), or an error naming them.
check_choice <- function(x, arg, choices, call, class = NULL) {
  if (!is.character(x) || length(x) != 1L || is.na(x) || !x %in% choices) {
    abort(sprintf("`%s` must be one of %s, not %s.", arg,
                  paste0("\"", choices, "\"", collapse = ", "), describe(x)), call, class)
  }
  x
}

check_flag <- function(x, arg, call) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    abort(sprintf("`%s` must be TRUE or FALSE, not %s.", arg, describe(x)), call)
  }
  x
}

# set.seed() takes whole numbers R can hold as integers. Returns the seed as a number, the same
# whatever type it was given in: a bit64 integer64 (a double holding an integer's bits, which
# set.seed() would read as a different number) is converted exactly, without needing bit64.
check_seed <- function(seed, call) {
  if (inherits(seed, "integer64") && is.double(seed) && length(seed) == 1L) {
    seed <- integer64_value(seed)
  }
  if (!is.null(seed) && (!is_number(seed) || !is.finite(seed) || seed != round(seed) ||
                         abs(seed) > .Machine$integer.max)) {
    abort(sprintf("`seed` must be NULL or a whole number between -%s and %s, not %s.",
                  format_count(.Machine$integer.max), format_count(.Machine$integer.max),
                  describe(seed)), call)
  }
  seed
}

# The value of a one-element integer64 (two's complement in the double's 8 bytes) as a double,
# NA for its NA; exact up to 2^53, which covers every seed.
integer64_value <- function(x) {
  words <- readBin(writeBin(unclass(x), raw(), endian = "little"), "integer", n = 2L,
                   endian = "little")
  if (is.na(words[2L]) && words[1L] == 0L) return(NA_real_) # bit64's NA is the smallest integer
  low <- if (is.na(words[1L])) 2^31 else words[1L] %% 2^32
  high <- if (is.na(words[2L])) -2^31 else words[2L]
  high * 2^32 + low
}

# The error of a generic given an object it has no method for: what its argument `arg` takes,
# and, for a model or a comparison, what to call instead.
abort_wrong_object <- function(x, arg, takes, call) {
  hint <- if (inherits(x, "sgais_model")) {
    " A model has no estimate yet: fit it first, e.g. `fit <- sgais(model)`, then pass `fit`."
  } else if (inherits(x, "sgais_comparison") && is.list(x) && is.character(names(x[["fits"]]))) {
    sprintf(" A comparison holds a fit per model: pass one of them, e.g. `%s$fits$%s`.", arg,
            names(x[["fits"]])[1L])
  } else {
    ""
  }
  abort(sprintf("`%s` must be %s, not %s.%s", arg, takes, describe(x), hint), call,
        "sgais_error_argument")
}

# What the methods on fits take, for abort_wrong_object().
takes_fit <- paste("a fit from `sgais()`, `ais()`, `nested_sampling()` or another estimator of",
                   "the package")

check_model <- function(model, call) {
  if (!inherits(model, "sgais_model")) {
    abort(sprintf(
      "`model` must be an sgais model (e.g. from `linear_regression()`), not %s.",
      describe(model)
    ), call)
  }
  validate_sgais_model(model, call)
  # a compiled model's class must be registered (its package loaded) before C looks it up
  if (inherits(model, "sgais_compiled_model")) {
    ensure_model_class(model$class_name, model$package, call)
  }
  model
}

# Data checks shared by the model constructors.

# A data frame's columns must all be numeric; the error names the first that is not.
# The columns of a data frame as model.matrix() can read them: numbers stored in a class it would
# misread are converted, or refused with an error of class `sgais_error_column_type` that says
# why. bit64's integer64 (what DBI returns for big INTEGER columns) is a double holding an
# integer's bits, which arithmetic reads as values near 1e-323: converted to doubles, exactly
# below 2^53; difftime columns become seconds, whatever unit each block of data used; columns
# with physical units (the units package) are refused, as blocks could use different units.
plain_columns <- function(x, what, call) {
  check_unique_names(names(x), sprintf("The columns of %s", what), call)
  for (name in names(x)) {
    column <- x[[name]]
    if (inherits(column, "integer64")) {
      if (!requireNamespace("bit64", quietly = TRUE)) {
        abort(sprintf("Column `%s` of %s is a bit64 integer64, which needs the bit64 package to read; convert it with as.numeric() first.",
                      name, what), call, "sgais_error_column_type", column = name)
      }
      # (bit64 warns of the precision lost beyond 2^53, which is refused below)
      values <- suppressWarnings(as.double(column))
      if (any(abs(values) >= 2^53, na.rm = TRUE)) {
        abort(sprintf(paste("Column `%s` of %s (integer64) holds integers beyond 2^53, which",
                            "doubles cannot hold exactly; rescale it first."), name, what),
              call, "sgais_error_column_type", column = name)
      }
      x[[name]] <- values
    } else if (inherits(column, "difftime")) {
      x[[name]] <- as.numeric(column, units = "secs")
    } else if (inherits(column, "units")) {
      abort(sprintf(paste("Column `%s` of %s has physical units; drop them with as.numeric()",
                          "(in one unit for all the data) first."), name, what),
            call, "sgais_error_column_type", column = name)
    }
  }
  x
}

# Names that must tell their elements apart (columns, fits): an error of class
# `sgais_error_argument` naming each one given twice, rather than the first silently read for both.
check_unique_names <- function(names, what, call) {
  twice <- unique(names[duplicated(names) & !is.na(names) & nzchar(names)])
  if (length(twice)) {
    abort(sprintf("%s must have distinct names; %s %s given more than once.", what,
                  backticked(twice), if (length(twice) == 1L) "is" else "are"), call,
          "sgais_error_argument")
  }
  invisible(names)
}

check_numeric_columns <- function(x, what, call, hint = "") {
  bad <- which(!vapply(x, is.numeric, logical(1)))
  if (length(bad)) {
    abort(sprintf("%s must have numeric columns only; `%s` is %s.%s", what, names(x)[bad[1]],
                  describe(x[[bad[1]]]), hint), call, "sgais_error_column_type",
          column = names(x)[bad[1]])
  }
}

# Every cell of a matrix with column names must be finite, and at most `data_max` in size;
# the error names the first that is not.
check_finite_cells <- function(a, what, call) {
  bad <- which(!is.finite(a), arr.ind = TRUE)
  if (nrow(bad)) {
    abort(sprintf("%s contains non-finite values (NA, NaN or Inf), first in column `%s` at row %d.",
                  what, colnames(a)[bad[1, 2]], bad[1, 1]), call, "sgais_error_non_finite",
          column = colnames(a)[bad[1, 2]], row = bad[1, 1])
  }
  bad <- which(abs(a) > data_max, arr.ind = TRUE)
  if (nrow(bad)) {
    abort(sprintf(paste("%s contains values larger than %g in size, first in column `%s` at row",
                        "%d: their squares and sums overflow. Rescale the data."),
                  what, data_max, colnames(a)[bad[1, 2]], bad[1, 1]), call,
          "sgais_error_extreme_values", column = colnames(a)[bad[1, 2]], row = bad[1, 1])
  }
}

# The largest data value (in size) the models take: squares of sums of many of them stay finite.
data_max <- 1e100

# The error for the observations `bad` (indices) of a response that are missing or `kind`.
abort_bad_observations <- function(what, bad, kind, call) {
  abort(sprintf("%s contains %s (NA, NaN and Inf are not allowed), first at observation %d.",
                what, if (length(bad) == 1L) paste("a", kind, "value") else paste(length(bad), kind, "values"),
                bad[1]), call, "sgais_error_non_finite", row = bad[1])
}

# A request whose memory or work can be told before it starts (draws, replicates' particles, the
# steps of their moves) is refused with an error of class `sgais_error_too_large` saying what it
# would need, rather than failing after hours or with R's "cannot allocate". `evaluations`: a
# lower bound on the work, in evaluations of one observation's log-likelihood or gradient at one
# point (the unit of a fit's `likelihood_evaluations`). The limits are the options
# `sgais.max_memory` (bytes; 8 GiB by default) and `sgais.max_work` (evaluations; 1e12 by
# default, hours of work at the fastest models' rate, `work_rate`).
check_request_size <- function(bytes, what, call, evaluations = 0) {
  limit <- getOption("sgais.max_memory", 8 * 2^30)
  if (!(is.finite(bytes) && bytes <= limit)) {
    abort(sprintf(paste("%s would need %s of memory, more than the %s allowed; ask for less (or",
                        "raise options(sgais.max_memory =))."),
                  what, format_bytes(bytes), format_bytes(limit)), call, "sgais_error_too_large")
  }
  limit <- getOption("sgais.max_work", 1e12)
  if (!(is.finite(evaluations) && evaluations <= limit)) {
    abort(sprintf(paste("%s would take at least %s evaluations of an observation's likelihood or",
                        "gradient (%s even at %s a second), more than the %s allowed; ask for",
                        "less (or raise options(sgais.max_work =))."),
                  what, format_big(evaluations), format_duration(evaluations / work_rate),
                  format_big(work_rate), format_big(limit)), call, "sgais_error_too_large")
  }
  invisible(bytes)
}

# Evaluations a second of the fastest models on one core, for the time a request would take.
work_rate <- 1e8

format_duration <- function(seconds) {
  if (!is.finite(seconds)) return("forever")
  units <- c(second = 1, minute = 60, hour = 3600, day = 86400, year = 365 * 86400)
  k <- max(1L, findInterval(seconds, units))
  v <- round(seconds / units[[k]])
  sprintf("about %s %s%s", format_big(v), names(units)[k], if (v == 1) "" else "s")
}

format_bytes <- function(bytes) {
  if (!is.finite(bytes)) return("an unbounded amount")
  units <- c("bytes", "KB", "MB", "GB", "TB", "PB")
  k <- max(0, min(length(units) - 1, floor(log(max(bytes, 1), 1024))))
  sprintf("%.3g %s", bytes / 1024^k, units[k + 1])
}

# `replicates` runs of `method` (settings_schema's name) with `settings` on `model`. Memory: the
# particles, the copies a move keeps and the fit's stacked particles, about four copies of M x
# dim doubles per replicate; a restart from a model's reference anneals up to twice
# `early_particles` (sgais_restart()). Work: what every run must do at least (run_work()).
check_run_size <- function(replicates, settings, model, method, call) {
  ns <- method %in% ns_methods
  early <- settings$early_particles * (if (model_has_reference(model)) 2 else 1)
  M <- if (ns) settings$live_points else max(settings$particles, early)
  check_request_size(32 * replicates * M * (model$dim + 2),
                     sprintf("%s replicate%s of %s %s in %d dimensions", format_count(replicates),
                             if (replicates == 1) "" else "s",
                             format_count(M), if (ns) "live points" else "particles", model$dim),
                     call, evaluations = replicates * run_work(settings, model, method))
}

# A lower bound on one run's evaluations (of one observation's likelihood or gradient at one
# point), from every setting that multiplies them. Every particle is weighted on every
# observation; SGAIS moves every particle at least once per chunk (annealed update; SIR and the
# sequential estimator at least once in all), for at least `min_sghmc_steps` steps on a
# mini-batch; AIS at least once, on all the data. Nested sampling stops only when the live points'
# volume X is below tolerance / (1 + tolerance) (their share L_max X of Z-hat <= L_max (1 - X)),
# after at least M log(1 + 1 / tolerance) iterations, each a move of at least `walk_steps` (or
# the walk's fewest, or `min_sghmc_steps`) steps on all the data seen so far.
run_work <- function(settings, model, method) {
  n <- max(1, model$n)
  steps <- max(1, settings$min_sghmc_steps %||% settings$sghmc_steps %||% 1)
  if (method %in% ns_methods) {
    if (identical(settings$move, "walk")) {
      steps <- settings$walk_steps %||% min(25, settings$max_walk_steps %||% 25)
    }
    M <- settings$live_points
    iterations <- min(settings$max_iterations, M * log1p(1 / settings$tolerance))
    return(M * n + iterations * max(1, steps) * n)
  }
  M <- settings$particles
  if (method == "ais") return(M * n + M * steps * n)
  per_step <- if (settings$kernel %in% mh_kernels) settings$mh_batch_size else
    min(settings$batch_size %||% n, n)
  moves <- if (identical(settings$update, "annealed")) max(1, floor(n / settings$chunk_size)) else 1
  M * n + moves * M * steps * per_step
}

# The dense preconditioner costs O(dim^2) memory and O(M dim^2) time per move: beyond this many
# parameters it is refused (the diagonal one scales to thousands).
dense_metric_max_dim <- 1000L
check_metric_size <- function(settings, model, call) {
  if (identical(settings$preconditioner, "dense") && model$dim > dense_metric_max_dim) {
    abort(sprintf(paste("`preconditioner = \"dense\"` for %s parameters would estimate and",
                        "factor a %s x %s metric at every move (%s each); use",
                        "`preconditioner = \"diagonal\"` with more than %d parameters."),
                  format_count(model$dim), format_count(model$dim), format_count(model$dim),
                  format_bytes(8 * model$dim^2), dense_metric_max_dim),
          call, "sgais_error_too_large")
  }
  invisible(settings)
}
