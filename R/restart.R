# Restarts of a streaming run: one policy and one executor for SGAIS, SIR, the sequential
# estimator (the estimators of SGAIS's sampler, src/sgais.c) and online nested sampling.
#
# A streaming run takes its data chunk by chunk, each from the particles the earlier chunks left.
# Where those particles cannot follow the posterior (a mixture's posterior changes its mode as
# clusters show in the data; a chunk the particles predict far worse than the one before), the
# run restarts: its particles are replaced by those of a run on every observation so far, from
# the prior, and the run goes on from there. The triggers:
# - the periodic grid base * every^j (periodic_restart_due());
# - a shift: a chunk predicted worse than the one before by over `restart_threshold` SEs
#   (SGAIS only; src/sgais.c, shift_score());
# - the model's reference becoming complete for the data so far (a mixture's data showing as
#   many clusters as it has components), until a restart has started from it.
# restart_policy() resolves them once per run from the model and the settings;
# restart_triggers() gives the C core the values for the run's state; src/sgais.c
# (restart_due()) stops the run before a chunk whose end calls for a restart, and
# restart_execute() runs the restart. Online nested sampling restarts on the grid only
# (ons_next_state()), from restart_draws() as the others.

# The fields of the run state (run_state_fields, R/sgais_state.R) that restarts keep: the
# observations at the last restart, at the last after a shift, and whether a restart has
# started from the model's reference.
restart_state_fields <- function() {
  list(restart_n = run_state_field(at, state$restart_n, 0),
       shift_restart_n = run_state_field(0, state$shift_restart_n, 0),
       reference_restart = run_state_field(FALSE, state$reference_restart, FALSE))
}

# The restart policy of a run of `model` with `settings` (SGAIS's sampler): the grid's ratio
# `every` and `base`, the shift threshold, whether the run restarts from the model's reference,
# and the settings of the restart runs (`settings`, and `cs` as the C core reads them). A
# restart anneals, for SIR and the sequential estimator too: one importance step per chunk
# cannot follow a mixture's change of mode (restart_settings()). With `whole`
# (restart_in_one_chunk()) a restart anneals all its observations at once from the model's
# reference. SIR and the sequential estimator restart at all only with a finite ratio: Inf is
# the estimator as published.
restart_policy <- function(model, settings) {
  every <- restart_ratio(model, settings)
  again <- restart_settings(settings)
  whole <- restart_in_one_chunk(model, again)
  list(every = every, base = restart_base(model, settings, whole),
       threshold = settings$restart_threshold %||% Inf, whole = whole,
       on_reference = whole && (settings$update == "annealed" || is.finite(every)),
       settings = again, cs = c_settings(again))
}

# The ratio of the grid of periodic restarts: the setting `restart_every`, by default (NULL) 2
# for models whose posteriors have separated modes that local moves cannot travel between (those
# with jump proposals) and for SIR on a model of groups (sir_of_groups()), else Inf; and Inf
# with a bounded reservoir, where restarts cannot re-run every observation so far.
restart_ratio <- function(model, settings) {
  if (bounded_reservoir(settings)) return(Inf)
  by_model <- model_has_jumps(model) || sir_of_groups(model, settings)
  settings$restart_every %||% (if (by_model) 2 else Inf)
}

# Whether the run is SIR on a model of groups (R/glm_mixed.R), each observation all the rows of
# a group: its first chunks are then importance steps of whole groups from the prior or near it,
# where its error is made. So it restarts by default (restart_ratio()), and from its first chunk
# on (restart_base()).
sir_of_groups <- function(model, settings) {
  identical(settings$update, "importance") && model_of_groups(model)
}

# The base of the grid of periodic restarts: `chunk_size`, or `exact_until` when restarts run in
# chunks (in the exact phase an annealed run does not need them); for SIR on a model of groups
# its first chunk (sir_of_groups()).
restart_base <- function(model, settings, whole) {
  if (sir_of_groups(model, settings)) return(settings$first_chunk_size %||% settings$chunk_size)
  max(if (!whole) settings$exact_until, settings$chunk_size)
}

# Periodic restarts fall on the grid base * every^j, j >= 1: at the first of its points at least
# `every` times the last restart. A stream without other restarts restarts at each point that is
# a chunk end (all of them with every = 2), all its restarts costing about one run on all the
# data; a restart after a shift or from the reference, between two points, moves the next
# periodic one to a later point, not off the grid.
periodic_restart_due <- function(every, last, base) {
  if (!is.finite(every)) return(Inf)
  due <- every * max(last, base)
  point <- every * base
  # by products, not logarithms, so that the points are exact (with every = 2)
  while (point < due * (1 - 1e-12)) point <- point * every
  point
}

# The settings of a restart's run: SGAIS's own; for SIR and the sequential estimator, theirs
# annealed as SGAIS's robust preset anneals (adaptively, resampling, all the observations so far
# at once from the model's reference).
restart_settings <- function(settings) {
  if (settings$update == "annealed") return(settings)
  robust <- control_presets$sgais$robust
  settings[c("update", "resample", "reference")] <- robust[c("update", "resample", "reference")]
  settings$first_chunk_size <- settings$chunk_size
  settings
}

# Whether restarts anneal all their observations as one chunk from the model's reference: for
# models that have one, when the setting `reference` is on.
restart_in_one_chunk <- function(model, settings) {
  isTRUE(settings$reference) && model_has_reference(model)
}

# The C settings `cs` with the triggers of `policy` for a run in `state` (the C core's
# restart_due(), src/sgais.c): a shift calls for a restart only once the data have grown by
# half since the last shift restart (so that a drift flagged in every chunk does not restart
# every chunk); the periodic restart is due at the next point of the grid; the reference
# triggers until a restart has started from it.
restart_triggers <- function(cs, policy, state) {
  cs$restart_threshold <- policy$threshold
  cs$restart_after <- 1.5 * state$shift_restart_n
  cs$restart_on_reference <- policy$on_reference && !isTRUE(state$reference_restart)
  cs$restart_due <- periodic_restart_due(policy$every, state$restart_n, policy$base)
  cs
}

# The C settings `cs` of a run that does not restart: a restart's own run, which must reach its
# end (nor restarts when its own chunks first show the reference to apply: a subset can show
# more clusters than all the observations).
restart_never <- function(cs) {
  cs[c("restart_threshold", "restart_after", "restart_due", "restart_on_reference")] <-
    list(Inf, 0, Inf, FALSE)
  cs
}

# The restart of a run that stopped before the chunk ending at out$restart_at (`out`: the
# result of run(), a function calling the C core as sgais_advance() does, on `state` with the
# settings `cs` from restart_triggers()). Returns `out` with the state after the restart and the
# trace with the restart's row added.
restart_execute <- function(model, out, state, cs, policy, run) {
  at <- out$restart_at
  shifted <- at < cs$restart_due
  again <- sgais_restart(model, out$state, at, policy$cs, run, policy$whole)
  again$state$shift_restart_n <- if (shifted) at else state$shift_restart_n
  # whether the restart's chunk was a shift, whatever called for the restart (?detect_shifts)
  again$trace$shift_restarts <- as.integer(isTRUE(out$restart_shift))
  out$state <- again$state
  out$trace <- rbind(out$trace, again$trace)
  out
}

# The draws a restart at `at` observations of a run whose random-stream key is `key` starts
# from: the order of the observations (with `shuffle`), M prior draws and the new key, from R's
# generator seeded from both (restart_seed()), so that a run split into pieces restarts
# identically and restarts at different points draw differently.
restart_draws <- function(model, key, at, M, shuffle = TRUE) {
  with_seed(restart_seed(key, at), {
    order <- if (shuffle) sample.int(at)
    list(order = order, theta = model_prior_draw(model, M), key = rng_key())
  })
}

restart_seed <- function(key, at) {
  as.integer((sum(key * c(1, 65536)) + at) %% .Machine$integer.max)
}

# A restart of SGAIS's sampler: the particles, which may sit in a mode that no longer holds the
# posterior, are replaced by those of a run on the same `at` observations in a random order,
# from the prior: the order of the data no longer matters, and log Z of the first `at`
# observations is that run's estimate, as valid as any (each later chunk's increment then
# builds on it). Nothing in a state with every observation held depends on their order (the
# anchor's gradient sums over all of them, the mini-batches draw from all of them), so the run
# goes on from that state with the data in order. `state` is the run's state after the chunks
# before the flagged one; returns the state after the restart and one trace row for it
# (restart_row()). With `whole` (restart_in_one_chunk()), when the model's reference built from
# the `at` observations is usable (model_reference_level()), the run is one chunk of all of
# them, annealed from it (src/anneal.h): a run in chunks would have to cross the mixture's
# changes of mode between chunks, which importance weights cannot.
sgais_restart <- function(model, state, at, cs, run, whole = FALSE) {
  drawn <- restart_draws(model, state$key, at, cs$early_particles)
  shuffled <- model
  shuffled$data <- data_columns(model$data, drawn$order)
  shuffled$n <- as_count(at)
  again <- restart_never(cs)
  whole <- whole && model_reference_level(shuffled) != "none"
  if (whole) again$chunk_size <- again$first_chunk_size <- as.integer(at)
  # every observation is held, from the first (the C side allows restarts only then)
  start <- sgais_initial_state(drawn$theta, drawn$key, at)
  start$slots <- integer(0)
  start$buffer_start <- 0
  out <- run(shuffled, start, at, again, no_schedule, Inf)
  stopifnot(out$state$n == at)
  # the shuffled run's lambdas are not a schedule for this chunk (pilot_schedule() skips it)
  out$state$lambdas <- state$lambdas
  out$state$reference_restart <- whole
  out$trace <- restart_row(out$trace)
  out
}

# The one trace row of a restart from the trace of its run: its costs the whole run's, its
# annealing steps all of the run's chunks', its estimate and particles' the last chunk's.
restart_row <- function(tr) {
  k <- nrow(tr)
  mean_or_na <- function(x) if (all(is.na(x))) NA_real_ else mean(x, na.rm = TRUE)
  last <- c("n", "log_evidence", "ess", "genealogy_var", "step_size")
  means <- c("acceptance", "data_fraction", "jump_acceptance")
  row <- lapply(stats::setNames(nm = names(tr)), function(col) {
    x <- tr[[col]]
    if (col %in% last) x[k] else if (col %in% means) mean_or_na(x) else
      if (col == "min_ess") min(x) else sum(x)
  })
  row$restarts <- 1L
  row$shift_restarts <- 0L
  as.data.frame(row)
}

# SIR and the sequential estimator take each chunk in one step from the particles they have
# (no annealing), which two kinds of model defeat when the run does not restart, with standard
# errors that do not show it; a classed warning says so before the run. An observation of a
# model of groups (R/glm_mixed.R) is all a group's rows, and from 20 rows a step is far off; a
# mixture's posterior changes its mode as observations arrive (inst/design.md, "Mixtures"),
# which one step per chunk cannot follow. Restarts anneal (restart_settings()), so a run with
# them does not warn.
warn_unannealed <- function(model, method, settings, call) {
  name <- c(sir = "SIR", sequential = "The sequential estimator")[[method]]
  rows <- model$data$unit_rows
  restarts <- restart_ratio(model, settings) < Inf
  if (method == "sir" && !is.null(rows) && mean(rows) >= 20 && !restarts) {
    warn(sprintf(paste(
      "SIR without restarts takes each observation of this model, a group of %.0f rows on",
      "average, in one importance step without annealing; from 20 rows a step its estimates",
      "were measured tens to hundreds of nats off, with standard errors that did not show it.",
      "Keep `restart_every` finite (the robust preset's default), or use `sgais()` or",
      "`importance_sampling()`."), mean(rows)), call, "sgais_warning_unreliable")
  }
  # with restarts (restart_settings()) the run re-anneals as the clusters show
  if (inherits(model, "sgais_gaussian_mixture") && model$hyper$components >= 3 && !restarts) {
    measured <- if (method == "sir") c("3 to 10", "126", "1 to 3") else
      c("3 to 6", "145", "0.5 to 4")
    warn(sprintf(paste(
      "%s without restarts takes each chunk of a mixture in one step, which cannot follow its",
      "posterior's change of mode as clusters show in the data: with %s components its",
      "estimates were measured up to %s nats low, with standard errors of %s that did not show",
      "it. Keep `restart_every` finite (the robust preset's default) and every observation",
      "(`reservoir_size = Inf`), or use `sgais()`, `ais()` or `nested_sampling()`."), name,
      measured[1], measured[2], measured[3]), call, "sgais_warning_unreliable")
  }
  invisible()
}
