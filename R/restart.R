# Restarts of a streaming run (SGAIS, SIR, the sequential estimator, online nested sampling):
# where the particles the earlier chunks left cannot follow the posterior, they are replaced by
# those of a run on every observation so far, from the prior. restart_policy() resolves the
# triggers once per run, restart_triggers() passes them to the C core, src/sgais.c
# (restart_due()) stops the run before a chunk whose end calls for a restart, and
# restart_execute() runs it. Online nested sampling restarts on the grid only (ons_next_state()).

# The fields restarts keep in the run state (run_state_fields): the observations at the last
# restart and at the last after a shift, and whether one has started from the reference.
# (A function, as run_state_field() comes later in the collation; the rows are quoted, as
# run_state_field() reads its arguments unevaluated.)
restart_state_fields <- function() {
  eval(quote(list(restart_n = run_state_field(at, state$restart_n, 0),
                  shift_restart_n = run_state_field(0, state$shift_restart_n, 0),
                  reference_restart = run_state_field(FALSE, state$reference_restart, FALSE))))
}

# The restart policy of a run of `model` with `settings`: the grid's ratio `every` and `base`
# (`exact_until` or `chunk_size`, as restarts do not run in one chunk or do; SIR on groups: its
# first chunk, sir_of_groups()), the shift threshold, whether restarts anneal all their
# observations at once from the model's reference (`whole`), and whether the reference triggers
# one. A restart anneals, for SIR and the sequential estimator as SGAIS's robust preset does
# (`settings`, and `cs` as C reads them): one importance step per chunk cannot follow a
# mixture's change of mode. Those two restart only with a finite ratio (Inf: as published).
restart_policy <- function(model, settings) {
  every <- restart_ratio(model, settings)
  again <- settings
  if (settings$update != "annealed") {
    robust <- control_presets$sgais$robust
    again[c("update", "resample", "reference")] <- robust[c("update", "resample", "reference")]
    again$first_chunk_size <- again$chunk_size
  }
  whole <- isTRUE(again$reference) && model_has_reference(model)
  base <- max(if (!whole) settings$exact_until, settings$chunk_size)
  if (sir_of_groups(model, settings)) base <- settings$first_chunk_size %||% settings$chunk_size
  list(every = every, base = base, threshold = settings$restart_threshold %||% Inf, whole = whole,
       on_reference = whole && (settings$update == "annealed" || is.finite(every)),
       settings = again, cs = c_settings(again))
}

# The ratio of the grid of periodic restarts: the setting `restart_every`; NULL: 2 for models
# with jump proposals (separated modes that local moves cannot travel between) and for SIR on a
# model of groups, else Inf; Inf with a bounded reservoir, which cannot re-run every observation.
restart_ratio <- function(model, settings) {
  if (bounded_reservoir(settings)) return(Inf)
  by_model <- model_has_jumps(model) || sir_of_groups(model, settings)
  settings$restart_every %||% (if (by_model) 2 else Inf)
}

# SIR on a model of groups (R/glm_mixed.R): its first importance steps take whole groups from
# the prior or near it, where its error is made; so it restarts, from its first chunk on.
sir_of_groups <- function(model, settings) {
  identical(settings$update, "importance") && model_of_groups(model)
}

# The grid base * every^j, j >= 1: the first of its points at least `every` times the last
# restart (a restart between two points moves the next periodic one to a later point, not off
# the grid). By products, not logarithms, so that the points are exact (with every = 2).
periodic_restart_due <- function(every, last, base) {
  if (!is.finite(every)) return(Inf)
  due <- every * max(last, base)
  point <- every * base
  while (point < due * (1 - 1e-12)) point <- point * every
  point
}

# The C settings `cs` with the triggers of `policy` for a run in `state` (src/sgais.c,
# restart_due()): a shift only once the data have grown by half since the last shift restart
# (a drift flagged in every chunk must not restart every chunk), the grid's next point, and the
# reference until a restart has started from it. restart_never(): none (a restart's own run).
restart_triggers <- function(cs, policy, state) {
  cs$restart_threshold <- policy$threshold
  cs$restart_after <- 1.5 * state$shift_restart_n
  cs$restart_on_reference <- policy$on_reference && !isTRUE(state$reference_restart)
  cs$restart_due <- periodic_restart_due(policy$every, state$restart_n, policy$base)
  cs
}
restart_never <- function(cs) {
  cs[c("restart_threshold", "restart_after", "restart_due", "restart_on_reference")] <-
    list(Inf, 0, Inf, FALSE)
  cs
}

# The restart of a run that stopped before the chunk ending at out$restart_at (`out` from run(),
# which calls the C core as sgais_advance() does, on `state` with the settings `cs`): `out` with
# the state after the restart and its trace row added.
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

# A restart's draws at `at` observations of a run with random-stream key `key`: the order of the
# observations (with `shuffle`), M prior draws and the new key, from R's generator seeded from
# both, so that a run split into pieces restarts identically.
restart_draws <- function(model, key, at, M, shuffle = TRUE) {
  with_seed(as.integer((sum(key * c(1, 65536)) + at) %% .Machine$integer.max), {
    order <- if (shuffle) sample.int(at)
    list(order = order, theta = model_prior_draw(model, M), key = rng_key())
  })
}

# A restart of SGAIS's sampler at `at` observations (`state`: the run's state before the chunk
# ending there): a run on them in a random order from the prior, whose estimate and state the
# run goes on from, with the data in order (nothing in a state holding every observation depends
# on their order). With `whole` and a usable reference (model_reference_level()) it is one chunk
# annealed from it (src/anneal.h): a mixture's changes of mode cannot be crossed between chunks.
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

# A restart's trace row from its run's: costs and annealing steps summed over the run's chunks,
# estimate and particles the last chunk's.
restart_row <- function(tr) {
  mean_or_na <- function(x) if (all(is.na(x))) NA_real_ else mean(x, na.rm = TRUE)
  row <- lapply(stats::setNames(nm = names(tr)), function(col) {
    x <- tr[[col]]
    if (col %in% c("n", "log_evidence", "ess", "genealogy_var", "step_size")) x[nrow(tr)] else
      if (col %in% c("acceptance", "data_fraction", "jump_acceptance")) mean_or_na(x) else
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
# which one step per chunk cannot follow. Restarts anneal (restart_policy()), so a run with
# them does not warn.
warn_unannealed <- function(model, method, settings, call) {
  name <- c(sir = "SIR", sequential = "The sequential estimator")[[method]]
  rows <- model$data$unit_rows
  restarts <- restart_ratio(model, settings) < Inf
  if (method == "sir" && !is.null(rows) && mean(rows) >= 20 && !restarts) {
    warn(sprintf(paste(
      "SIR without restarts takes each observation of this model, a group of %.0f rows on",
      "average, in one importance step without annealing; from 20 rows a step its estimates",
      "can be far off, with standard errors that do not show it.",
      "Keep `restart_every` finite (the robust preset's default), or use `sgais()` or",
      "`importance_sampling()`."), mean(rows)), call, "sgais_warning_unreliable")
  }
  # with restarts (restart_policy()) the run re-anneals as the clusters show
  if (inherits(model, "sgais_gaussian_mixture") && model$hyper$components >= 3 && !restarts) {
    warn(sprintf(paste(
      "%s without restarts takes each chunk of a mixture in one step, which cannot follow its",
      "posterior's change of mode as clusters show in the data: its estimates can be far low,",
      "with standard errors that do not show it. Keep `restart_every` finite (the robust",
      "preset's default) and every observation (`reservoir_size = Inf`), or use `sgais()`,",
      "`ais()` or `nested_sampling()`."), name), call, "sgais_warning_unreliable")
  }
  invisible()
}
