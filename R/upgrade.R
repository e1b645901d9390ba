# Fits carry the version of the format they were made in (`format_version`). A fit saved by an
# earlier version of the package is brought up to date by upgrade_fit(), the one place that
# knows what earlier versions did not record, so that everything else reads one format. Each
# default below is what the runs of the version that lacked the field did, so a continued old
# fit goes on as it began.
#
# Versions: 0 (no `format_version`), fits saved before it existed; 1, before the SGAIS sampler's
# traces had `genealogy_var`; 2, the current format.
fit_format_version <- 2L

# `x`, a fit checked by validate_sgais_evidence(), in the current format.
upgrade_fit <- function(x) {
  version <- x[["format_version"]] %||% 0L
  if (version >= fit_format_version) return(x)
  x$settings <- upgrade_settings(x$settings)
  if (inherits(x, "sgais_ais_fit")) x$annealing <- x$annealing %||% "adaptive"
  if (inherits(x, "sgais_fit") && is.list(x$state)) x$state <- upgrade_sgais_state(x$state)
  x$format_version <- fit_format_version
  x
}

# The settings of a fit saved before the settings below existed (version 0). Idempotent:
# c_settings() applies it too, so that settings reaching the C core by any path are complete.
upgrade_settings <- function(settings) {
  if (is.null(settings$particles)) {
    # nested sampling, before jump proposals
    if (!is.null(settings$live_points) && is.null(settings$jumps)) settings$jumps <- 0L
    # before its prior could be repartitioned by a reference distribution
    if (!is.null(settings$live_points) && is.null(settings$reference)) settings$reference <- FALSE
    return(settings)
  }
  old <- list(
    # before kernels were a setting: SGHMC
    kernel = "sghmc", mh_bound = "bernstein", mh_tolerance = 0.05, mh_batch_size = 100L,
    # before jump proposals, and before moves were repeated until the particles decorrelated
    jumps = 0L, max_rounds = 1L, max_correlation = 1,
    # before the conditional ESS and the score control variate
    annealing_ess = "incremental", score_control_variate = FALSE,
    # before annealing paths could start at a reference distribution
    reference = FALSE
  )
  if (!is.null(settings$chunk_size)) {
    old <- c(old, list(
      # before SIR and the sequential estimator shared the sampler: SGAIS, with chunks of one
      # size, no exact early phase, every observation kept
      update = "annealed", first_chunk_size = settings$chunk_size, exact_until = 0L,
      reservoir_size = Inf
    ))
    # before chunks were split: never; and what runs did before restarts (restart_upgrade())
    old <- c(old, list(split_ess = 0), restart_upgrade(settings))
  }
  missing <- setdiff(names(old), names(settings))
  settings[missing] <- old[missing]
  settings
}

# An SGAIS fit's state (new_sgais_state()) saved before the fields below existed: its replicates'
# resume states and traces, and the pilot's.
upgrade_sgais_state <- function(state) {
  resume <- function(r) {
    if (!is.list(r)) return(r)
    # the fields older runs did not have, as those runs were (run_state_fields)
    for (name in names(run_state_fields)) {
      old <- run_state_fields[[name]]$old
      if (is.null(r[[name]]) && !identical(old, quote(absent))) r[[name]] <- eval(old)
    }
    r
  }
  trace <- function(t) {
    if (!is.data.frame(t)) return(t)
    # the columns older runs did not have, as those runs were (trace_columns)
    for (col in setdiff(names(trace_columns), names(t))) {
      t[[col]] <- rep(trace_columns[[col]]$empty, nrow(t))
    }
    t
  }
  if (is.list(state$resume)) state$resume <- lapply(state$resume, resume)
  if (is.list(state$traces)) state$traces <- lapply(state$traces, trace)
  if (is.list(state$pilot)) {
    state$pilot$resume <- resume(state$pilot$resume)
    state$pilot$trace <- trace(state$pilot$trace)
  }
  state
}
