#' Restarts of a streaming run
#'
#' An online run ([sgais()], [sir()], [sequential_sgmcmc()], [online_nested_sampling()]) carries
#' its particles from chunk to chunk. Where the posterior moves where they cannot follow by their
#' moves (a shift in the data; a mixture whose clusters show one by one, so that components
#' spread over several clusters give way to one per cluster), a **restart** replaces the
#' particles and the estimate of log Z so far by those of a run on every observation so far, in
#' a random order, and the run goes on from there. The trajectory's column `restarts` marks the
#' chunks where a run restarted, `shift_restarts` those the particles had predicted far worse
#' than the observations before it (whatever called for the restart), and `print()` lists them.
#'
#' @section When:
#' \describe{
#'   \item{after a shift (`restart_threshold`)}{before each chunk the particles predict it; a
#'     chunk predicted worse than the observations before it (as many as it holds, and at least
#'     500 where there are) by over `restart_threshold` standard errors (the surprise of
#'     [detect_shifts()], computed online; 5 in the robust presets of SGAIS and SIR, else `Inf`:
#'     never) restarts the run, once the data have grown by half since the last such restart;}
#'   \item{on a grid (`restart_every`)}{each time the data have grown by the ratio
#'     `restart_every` since the last restart (`NULL`: 2 for models with jump proposals, that is
#'     mixtures, and for `sir()` on a model of groups, else `Inf`; `Inf` in the `"paper"`
#'     presets). Every online estimator takes it, online nested sampling (from `chunk_size`)
#'     only it. SGAIS's grid waits while a mixture's data show fewer clusters than components
#'     and it has jump proposals (`jumps` above 0): its moves then draw the spare components to
#'     the observations they could claim (see [gaussian_mixture()]), so that the chunk where a
#'     cluster appears follows it;}
#'   \item{after a poor step (`restart_ess`, SIR and the sequential estimator)}{a chunk whose
#'     one importance step would leave an ESS below this fraction of the particles, while the data
#'     so far fit in one mini-batch (`batch_size`, within `exact_until`), restarts the run: data
#'     in an order that moves the posterior far (sorted by an outcome), which particles that are
#'     never resampled cannot follow (0.5 in the sequential estimator's robust preset, else 0:
#'     never);}
#'   \item{once the reference applies}{for a mixture, as soon as the data show as many clusters
#'     as it has components: the restart anneals from the reference distribution built on them
#'     (`reference` in [sgais_control()]), unless a restart has already started from a complete
#'     reference (one from a reference of fewer clusters, on an earlier trigger, does not count).}
#' }
#'
#' @section How:
#' A restart of SGAIS, SIR or the sequential estimator anneals all the observations so far as
#' SGAIS's robust preset does, whatever the estimator's own update: in one chunk from the
#' model's reference distribution where it has one (with twice `early_particles` where the data
#' show fewer clusters than components, resampled down at the next chunk), else in SGAIS's
#' chunks from the prior. The chunks between restarts are the estimator's own. Online nested
#' sampling's is nested sampling of all the observations so far from the prior (or the
#' reference, as [nested_sampling()] starts): its estimate replaces the trajectory's (that
#' chunk's `log_predictive` is the correction, and `log_evidence_sd` counts the information
#' since) and its posterior is the next chunk's prior. A restart draws from a stream keyed by
#' the run's and the number of observations, so a run continued in pieces restarts where and as
#' the run at once does.
#' Restarts need every observation held: with a bounded `reservoir_size` there are none.
#'
#' `sir()`'s robust preset restarts on a model whose observations are groups (the random effects
#' of [logistic_regression()], [poisson_regression()] and [negative_binomial_regression()]) at
#' each doubling of the groups from its first chunk on, whose chunks are then whole groups: its
#' first importance steps, from the prior or near it, would leave few particles with weight.
#' Without restarts SIR and the sequential estimator warn (class `sgais_warning_unreliable`)
#' before a mixture of 3 or more components, and `sir()` before a model of groups of 20 rows or
#' more on average. The measurements behind these defaults are in
#' `system.file("design.md", package = "sgais")`.
#'
#' @seealso [detect_shifts()], whose scores the shift trigger computes; [audit_evidence()], which
#'   checks an online estimate against the same data shuffled; [sgais_control()].
#' @name restarts
#' @examples
#' \donttest{
#' # three clusters, the third appearing after 300 points: the run restarts once it shows
#' set.seed(1)
#' centres <- rbind(c(0, 0), c(2, 0), c(1, 2))
#' z <- c(rep(1:2, 150), rep(1:3, 100))
#' y <- centres[z, ] + matrix(rnorm(2 * length(z), sd = 0.1), ncol = 2)
#' fit <- sgais(gaussian_mixture(y, components = 3), chunk_size = 100, seed = 1,
#'              progress = FALSE)
#' fit$trajectory[fit$trajectory$restarts > 0, c("n", "log_evidence", "restarts")]
#' }
NULL

# Restarts of a streaming run (SGAIS, SIR, the sequential estimator, online nested sampling):
# where the particles the earlier chunks left cannot follow the posterior, they are replaced by
# those of a run on every observation so far, from the prior. restart_policy() resolves the
# triggers once per run; for SGAIS's sampler restart_triggers() passes them to the C core, whose
# sg_restart_due() (src/restart.c) stops the run before a chunk whose end calls for a restart,
# and restart_slices() runs it; online nested sampling restarts on the grid only
# (restart_on_grid(), its estimate kept by restart_ledger()). Both run it through
# restart_execute(). The settings (restart_settings()) and the run-state fields
# (restart_state_fields) of restarts are declared here too.

# The restart policy of a run of `model` with `settings`: the grid's ratio `every` and `base`
# (`exact_until` or `chunk_size`, as restarts do not run in one chunk or do; SIR on groups: its
# first chunk, sir_of_groups(); online nested sampling: `chunk_size`), the shift threshold,
# whether restarts anneal all their observations at once from the model's reference (`whole`),
# and whether the reference triggers one. A restart anneals, for SIR and the sequential
# estimator as SGAIS's robust preset does (`settings`, and `cs` as C reads them): one
# importance step per chunk cannot follow a mixture's change of mode. Those two restart only
# with a finite ratio (Inf: as published).
restart_policy <- function(model, settings) {
  every <- restart_ratio(model, settings)
  if (is.null(settings$update)) {
    return(list(every = every, base = settings$chunk_size, threshold = Inf, whole = FALSE,
                on_reference = FALSE))
  }
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

# The C settings `cs` with the triggers of `policy` for a run in `state` (src/restart.c,
# sg_restart_due()): a shift only once the data have grown by half since the last shift restart
# (a drift flagged in every chunk must not restart every chunk), the grid's next point, the
# reference until a restart has started from it, and a low one-step ESS while the data so far
# fit in one mini-batch, in the exact phase (sg_restart_step_ess()). restart_never(): none (a
# restart's own run).
restart_triggers <- function(cs, policy, state) {
  cs$restart_threshold <- policy$threshold
  cs$trigger_after <- 1.5 * state$shift_restart_n
  cs$trigger_on_reference <- policy$on_reference && !isTRUE(state$reference_restart)
  cs$trigger_due <- periodic_restart_due(policy$every, state$restart_n, policy$base)
  cs
}
restart_never <- function(cs) {
  cs[c("restart_threshold", "trigger_after", "trigger_due", "trigger_on_reference",
       "restart_ess")] <- list(Inf, 0, Inf, FALSE, 0)
  cs
}

# The fields of SGAIS's run state that restarts keep: the observations at the last restart and
# at the last after a shift (restart_triggers(), restart_slices()), and whether one has started
# from a complete reference (sgais_restart()). Rows of run_state_fields (R/sgais_state.R), which
# evaluates this call where run_state_field() is defined (that file is collated after this one).
restart_state_fields <- quote(list(
  restart_n = run_state_field(at, state$restart_n, 0),
  shift_restart_n = run_state_field(0, state$shift_restart_n, 0),
  reference_restart = run_state_field(FALSE, state$reference_restart, FALSE)
))

# The restart of any estimator's run at `at` observations: `rerun(model, drawn)` runs it on the
# observations so far (in a random order where its result depends on theirs: `shuffle`) from
# `M` prior draws drawn$theta and the key drawn$key, drawn from R's generator seeded from the
# run's `key` and `at`, so that a run split into pieces restarts identically.
restart_execute <- function(model, key, at, M, rerun, shuffle = TRUE) {
  drawn <- with_seed(as.integer((sum(key * c(1, 65536)) + at) %% .Machine$integer.max), {
    order <- if (shuffle) sample.int(at)
    list(order = order, theta = model_prior_draw(model, M), key = rng_key())
  })
  if (shuffle) {
    model$data <- data_columns(model$data, drawn$order)
    model$n <- as_count(at)
  }
  rerun(model, drawn)
}

# The ledger of an online nested-sampling run (online_slice()): log Z and information so far,
# and the observations at the last restart. A chunk adds its log Z and information at `at`
# observations; a restart's (`restarted`: its run on every observation so far) replace them.
restart_ledger <- function() list(log_z = 0, information = 0, restart_n = 0)
restart_ledger_add <- function(ledger, log_z, information, at, restarted) {
  if (restarted) return(list(log_z = log_z, information = information, restart_n = at))
  list(log_z = ledger$log_z + log_z, information = ledger$information + information,
       restart_n = ledger$restart_n)
}

# The next chunk, ending at `at`, of an online nested-sampling run with `ledger`: `carry_on()`,
# or where the grid of `policy` calls for a restart there, `rerun(model, drawn)` from M prior
# draws through restart_execute(), on the observations in order (nested sampling's estimate
# does not depend on it).
restart_on_grid <- function(model, policy, ledger, at, key, M, carry_on, rerun) {
  if (at < periodic_restart_due(policy$every, ledger$restart_n, policy$base)) return(carry_on())
  restart_execute(model, key, at, M, rerun, shuffle = FALSE)
}

# The slices of a run of SGAIS's sampler to n_end: `run(model, state, n_end, cs, schedule,
# budget)` calls the C core, which stops before a chunk that calls for a restart (its `stop`,
# sgais_r.c: that chunk's end, 0 for none, and whether it was a shift); the restart runs in its
# place, its trace row added to the core's, whose chunks did not restart.
restart_slices <- function(model, settings, cs, n_end, schedule, run) {
  policy <- restart_policy(model, settings)
  function(state, budget) {
    cs <- restart_triggers(cs, policy, state)
    out <- run(model, state, n_end, cs, schedule, budget)
    out$trace$restarts <- out$trace$shift_restarts <- integer(nrow(out$trace))
    at <- out$stop[1]
    if (at > 0) {
      again <- sgais_restart(model, out$state, at, policy$cs, run, policy$whole,
                             complete = out$stop[3] == 1)
      again$state$shift_restart_n <- if (at < cs$trigger_due) at else state$shift_restart_n
      # whether the restart's chunk was a shift, whatever called for the restart (?detect_shifts)
      again$trace$shift_restarts <- as.integer(out$stop[2] == 1)
      out$state <- again$state
      out$trace <- rbind(out$trace, again$trace)
    }
    out[c("state", "trace")]
  }
}

# A restart of SGAIS's sampler at `at` observations (`state`: the run's state before the chunk
# ending there): a run on them in a random order from the prior, whose estimate and state the
# run goes on from, with the data in order (nothing in a state holding every observation depends
# on their order). With `whole` and a usable reference (model_reference_level()) it is one chunk
# annealed from it (src/anneal.h): a mixture's changes of mode cannot be crossed between chunks.
# From a reference of fewer clusters than components it anneals twice `early_particles`: the
# spare components' modes, which few particles stand for, made its estimate nats low in one
# restart of three or four with one (inst/design.md); the run's next chunk resamples them down
# (src/sgais.c, chunk_begin).
sgais_restart <- function(model, state, at, cs, run, whole = FALSE, complete = FALSE) {
  restart_execute(model, state$key, at, cs$early_particles, function(shuffled, drawn) {
    again <- restart_never(cs)
    level <- if (whole) model_reference_level(shuffled) else "none"
    whole <- level != "none"
    if (whole) again$chunk_size <- again$first_chunk_size <- as.integer(at)
    theta <- drawn$theta
    if (level == "usable") {
      # the run draws every particle afresh from the reference: only their number counts here
      again$early_particles <- 2L * again$early_particles
      theta <- theta[, rep(seq_len(ncol(theta)), 2L), drop = FALSE]
    }
    # every observation is held, from the first (the C side allows restarts only then)
    start <- sgais_initial_state(theta, drawn$key, at)
    start$slots <- integer(0)
    start$buffer_start <- 0
    out <- run(shuffled, start, at, again, no_schedule, Inf)
    stopifnot(out$state$n == at)
    # the shuffled run's lambdas are not a schedule for this chunk (pilot_schedule() skips it)
    out$state$lambdas <- state$lambdas
    # only a complete reference ends its trigger: one merely usable (clusters yet to show) leaves
    # the completion to come, which no other trigger may catch (SIR between grid points). The
    # core judges completeness on a subsample of the data in order (`complete`), this on the
    # shuffled data: either ends it, so that a borderline cluster cannot restart every chunk.
    out$state$reference_restart <- complete || level == "complete"
    out$trace <- restart_row(out$trace)
    out
  })
}

# A restart's trace row from its run's (trace_join_chunks()): costs and annealing steps summed
# over the run's chunks, estimate and particles the last chunk's.
restart_row <- function(tr) {
  row <- trace_join_chunks(tr)
  row$restarts <- 1L
  row$shift_restarts <- 0L
  row
}

# The trace columns of restarts (rows of trace_columns, R/sgais_state.R, which evaluates this
# call): the chunks where a run restarted, and those of them whose chunk was a shift.
restart_trace_columns <- quote(list(
  restarts = trace_column(0L, "sum", "sum"),
  shift_restarts = trace_column(0L, "sum", "sum")
))

# Whether each row of trace `tr` is a restart's (none without the column).
restarted <- function(tr) if (is.null(tr$restarts)) logical(nrow(tr)) else tr$restarts > 0

# The cumulative sums of x (a value per row of `trace`) over the rows the estimate at each row
# rests on: a restart's row, whose run replaced the estimate so far, starts them again.
estimate_cumsum <- function(x, trace) stats::ave(x, cumsum(restarted(trace)), FUN = cumsum)

# SIR's particles in its exact early phase under the robust preset, when `given` (the settings
# given) has none: sir_early_particles (at least `particles`) where the run never restarts, as
# list(early_particles =), else NULL (the preset's: the restarts replace the estimate of the
# early importance steps). Without restarts those steps make most of SIR's error; more
# particles there shrink its variance and bias (inst/design.md, "Standard errors").
sir_early_particles <- 400L
model_early_particles <- function(model, method, preset, given, settings) {
  if (is.null(model) || method != "sir" || preset != "robust" || "early_particles" %in% given) {
    return(NULL)
  }
  if (restart_ratio(model, settings) < Inf) return(NULL)
  list(early_particles = max(sir_early_particles, settings$particles))
}

# A run without restarts, of a model that needs them, warns before it starts (class
# `sgais_warning_unreliable`): its estimates can be far off, with standard errors that do not
# show it. SIR and the sequential estimator take each chunk in one step from the particles they
# have: an observation of a model of groups (R/glm_mixed.R) is all a group's rows, and from 20
# rows a step is far off; a mixture's posterior changes its mode as observations arrive
# (inst/design.md, "Mixtures"), which one step per chunk cannot follow. SGAIS follows a mixture
# by its restarts and by exact moves while the data show fewer clusters than components
# (src/sgais.c, chunk_begin), both of which need every observation held: a bounded reservoir
# leaves its chunks to mini-batch moves, which cannot sample the spare components.
warn_unrestarted <- function(model, method, settings, call) {
  rows <- model$data$unit_rows
  restarts <- restart_ratio(model, settings) < Inf
  components <- if (inherits(model, "sgais_gaussian_mixture")) model$hyper$components else 0
  if (method == "sir" && !is.null(rows) && mean(rows) >= 20 && !restarts) {
    warn(sprintf(paste(
      "SIR without restarts takes each observation of this model, a group of %.0f rows on",
      "average, in one importance step without annealing; from 20 rows a step its estimates",
      "can be far off, with standard errors that do not show it.",
      "Keep `restart_every` finite (the robust preset's default), or use `sgais()` or",
      "`importance_sampling()`."), mean(rows)), call, "sgais_warning_unreliable")
  }
  if (method != "sgais" && components >= 3 && !restarts) {
    name <- c(sir = "SIR", sequential = "The sequential estimator")[[method]]
    warn(sprintf(paste(
      "%s without restarts takes each chunk of a mixture in one step, which cannot follow its",
      "posterior's change of mode as clusters show in the data: its estimates can be far low,",
      "with standard errors that do not show it. Keep `restart_every` finite (the robust",
      "preset's default) and every observation (`reservoir_size = Inf`), or use `sgais()`,",
      "`ais()` or `nested_sampling()`."), name), call, "sgais_warning_unreliable")
  }
  if (method == "sgais" && components >= 2 && bounded_reservoir(settings)) {
    warn(paste(
      "SGAIS with a bounded `reservoir_size` neither restarts nor moves on all the data so far:",
      "the chunks of a mixture whose data show fewer clusters than components, or whose",
      "clusters appear over time, move on mini-batches that cannot follow its posterior, and",
      "its estimates can be far off, with standard errors that do not show it. Keep every",
      "observation (`reservoir_size = Inf`), or use `ais()` or `nested_sampling()`."),
      call, "sgais_warning_unreliable")
  }
  invisible()
}

# The field saying where a run restarted (NULL without restarts): annealed from the data so far
# (SGAIS's sampler, sgais_restart()), or with `grid` (online nested sampling) its restarts on
# the grid of ratio grid$every from grid$base observations (NULL with an infinite ratio).
format_restarts <- function(tr, grid = NULL) {
  if (!is.null(grid)) {
    if (!is.finite(grid$every)) return(NULL)
    return(sprintf("%d, on a grid of ratio %s from %s observations", sum(restarted(tr)),
                   format(grid$every), format_count(grid$base)))
  }
  at <- tr$n[restarted(tr)]
  if (!length(at)) return(NULL)
  shown <- format_count(utils::head(at, 6))
  sprintf("%d, annealed at n = %s%s", length(at), paste(shown, collapse = ", "),
          if (length(at) > 6) ", ..." else "")
}

# The scores' inputs `steps` and `lp` (log predictive) of trace `tr` with NA where
# detect_shifts() leaves a row out (shift_scores()): a restart's row counts the steps of the
# whole shuffled run it made, not the chunk's effort, and its log predictive is mostly the
# restart's correction of the estimate (the sampler's, not the data's), scored only where the
# particles had predicted the chunk far worse than the observations before it
# (`shift_restarts`), whatever called for the restart.
restart_unscored <- function(tr, steps, lp) {
  shifted <- if (is.null(tr$shift_restarts)) logical(nrow(tr)) else tr$shift_restarts > 0
  steps[restarted(tr)] <- NA_real_
  lp[restarted(tr) & !shifted] <- NA_real_
  list(steps = steps, lp = lp)
}

# The rows of the restart settings in the settings schema (R/settings.R, whose table ends with
# them; a function, as that file is collated after this one), with their defaults for each
# estimator. `restart_threshold`: the shift trigger (5 SEs under the robust preset; none for the
# sequential estimator, whose particles, never resampled, lag after a restart: inst/design.md);
# `restart_every`: the grid's ratio, NULL by the model (restart_ratio()); `restart_ess`: the
# one-step ESS trigger of SIR and the sequential estimator. SIR's paper preset never restarts.
restart_settings <- function() {
  threshold <- preset(Inf, 5, sir = list(paper = Inf), sequential = list(robust = Inf))
  list(
    restart_threshold = setting("custom", sgais_methods, threshold,
                                check = function(x, s, call) check_restart_threshold(x, call)),
    restart_every = setting("custom", c(sgais_methods, "online_nested_sampling"),
                            preset(Inf, NULL, sir = list(paper = Inf)), nullable = TRUE,
                            check = function(x, s, call) check_restart_ratio(x, call)),
    restart_ess = setting("custom", sgais_methods, preset(0, 0, sequential = list(robust = 0.5)),
                          check = function(x, s, call) {
                            check_step_ess(x, "restart_ess", s$update, call)
                          })
  )
}

# The restart settings of a fit of SGAIS's sampler saved before they existed (upgrade_settings(),
# R/upgrade.R), as its runs did: no restart after a poor step, and none at all before
# `restart_threshold` (filled with it only: a current fit's NULL `restart_every` is by the model).
restart_upgrade <- function(settings) {
  c(list(restart_ess = 0),
    if (is.null(settings$restart_threshold)) list(restart_threshold = Inf, restart_every = Inf))
}

# NULL (by the model), a number above 1, or Inf (never): the setting of SGAIS, SIR, the
# sequential estimator (whose restarts anneal too: restart_policy()) and online nested sampling.
check_restart_ratio <- function(x, call) {
  if (is.null(x)) return(NULL)
  if (!is_number(x) || x <= 1) {
    abort(sprintf("`restart_every` must be NULL, a number above 1 or Inf, not %s.", describe(x)),
          call)
  }
  as.double(x)
}

# A positive number or Inf (never).
check_restart_threshold <- function(x, call) {
  if (!is_number(x) || x <= 0) {
    abort(sprintf("`restart_threshold` must be a positive number or Inf (never), not %s.",
                  describe(x)), call)
  }
  as.double(x)
}
