#' Stochastic gradient annealed importance sampling
#'
#' Estimates the log evidence \eqn{\log p(y_1, \dots, y_n)} of a model for every prefix of its
#' data in one pass (Cameron, Eggers and Kroon 2019, Algorithm 1). Chunks of `chunk_size`
#' observations are annealed in one after another, in steps that keep the effective sample
#' size of the incremental weights at `target_ess`, with stochastic gradient HMC moves on
#' mini-batches of the earlier data; a chunk costs the same however many came before it.
#'
#' The default preset, `"robust"` ([sgais_control()]), is the one to rely on. The `"paper"`
#' preset reproduces the paper; it underestimates the log evidence, the more so the more
#' observations and parameters and the less noise. Measurements: `vignette("validation")`;
#' reasons for the defaults: `system.file("design.md", package = "sgais")`.
#'
#' @section Continuing a fit on new data:
#' `sgais(fit, new_data)` (or `update(fit, new_data)`), in any number of pieces, also after
#' [saveRDS()], gives bit for bit the fit of all the data at once, with the fit's settings. A
#' chunk the data end inside is marked `partial`; a continuation starts before it.
#'
#' @section Scaling of the data:
#' The robust presets are invariant to linear changes of the parameters, so covariates are not
#' standardised (the prior still depends on their units); the `"paper"` presets assume
#' parameters and covariates of about unit scale. A posterior too far from the prior to anneal
#' to is an error (`sgais_error_prior_conflict`, `sgais_error_annealing`), as is a non-finite
#' result (`sgais_error_numerical`). Hyperparameters must lie in \eqn{[10^{-100}, 10^{100}]}
#' and data in \eqn{[-10^{100}, 10^{100}]}.
#'
#' @section Random numbers and threads:
#' A run takes one draw from R's random stream (`seed` or [set.seed()]); every later random
#' number comes from streams keyed by the run, the position in the data and the particle, so
#' the estimate is the same on any number of [sgais_threads()] threads.
#'
#' @section Interrupts:
#' Interrupted, a run with one replicate returns the fit up to its last whole chunk (warning
#' `sgais_warning_interrupted`), which continues exactly. With replicates nothing is returned:
#' use [sgais_stream()] with `checkpoint =`.
#'
#' @section A bounded reservoir:
#' With `reservoir_size = r` (at least `exact_until`) mini-batches come from a uniform sample of
#' r earlier observations, so memory stays bounded on an unbounded stream, at little cost in
#' accuracy with the robust preset (about \eqn{p (N - r) / (2 r)}{p (N - r) / (2 r)} nats with
#' the paper's). [ais()] and other methods that need every row refuse such a fit. There are
#' no [restarts]: a mixture's run warns ([gaussian_mixture()]).
#'
#' @section Standard error and how far to trust it:
#' With `replicates = R > 1` the estimate is the log-mean-exp of the replicates' log evidences,
#' and `log_evidence_se` its jackknife standard error, or the replicates' predicted sd
#' \eqn{\sqrt{\mathrm{mean}(p_r^2) / R}}{sqrt(mean(p_r^2) / R)} if larger. It has R - 1 degrees
#' of freedom: [confint()] uses the \eqn{t_{R-1}} quantile. Replicates run under
#' [future::plan()] with the same result on any plan. A single run reports the sd it predicts
#' for itself (`predicted_sd`, from its weights and its particles' genealogy; `NA` under the
#' paper preset, and for [sir()] and [sequential_sgmcmc()] from a step whose weights collapsed
#' onto one particle, with a warning). It cannot see a mode the run missed, nor the small extra
#' spread of choosing the annealing steps from the particles themselves (see "Schedule" in
#' [ais()]). **For a decision, use replicates**; where they spread by more than a nat, or on
#' mixtures, use more and compare with [ais()] and [nested_sampling()]. A `predicted_sd` above 1
#' nat warns (`sgais_warning_unreliable`): use more particles.
#'
#' @param model A model: a built-in one such as [linear_regression()], or your own from
#'   [custom_model()] or [compiled_model()]; or a fit from `sgais()` to continue on `new_data`.
#' @param ... Settings that replace those of `control`, by name (e.g. `particles = 50`); see
#'   [sgais_control()].
#' @param control The tuning: [sgais_control()] (`"robust"`, the default) or
#'   `sgais_control("paper")`.
#' @param replicates Number of independent runs, combined for the estimate and its standard
#'   error.
#' @param schedule `"adaptive"` (each run chooses its annealing steps) or `"pilot"` (replicates
#'   take the steps of one adaptive pilot run, counted in the cost, in the chunks before the
#'   score control variate starts: this removes a small bias the SE cannot see). `NULL`
#'   (default): `"pilot"` with `replicates` > 1, else `"adaptive"`.
#' @param progress Show a progress bar with an ETA. Defaults to the option `sgais.progress`, or
#'   else [interactive()].
#' @param seed Optional seed for a reproducible run; the caller's random stream is then left as
#'   it was. Without it the run draws from (and advances) R's random stream, so
#'   [set.seed()] before the call also makes it reproducible.
#' @return An object of class `c("sgais_fit", "sgais_evidence")`, a list with
#'   \describe{
#'   \item{`log_evidence`, `log_evidence_se`, `replicate_log_evidence`, `replicate_sd`}{log Z
#'     of all the data, its standard error, each replicate's log Z and their sd;}
#'   \item{`trajectory`}{one row per chunk: `n`, `log_evidence`, `log_evidence_se`,
#'     `log_evidence_per_obs`, `log_predictive` and `log_predictive_per_obs` (of the chunk
#'     given the earlier data); diagnostics (replicates' means) `annealing_steps`, `min_ess`,
#'     `ess`, `resamples`, `sghmc_steps`, `acceptance`, `step_size`, `divergent`,
#'     `step_halvings`, `reanchors`, `data_fraction`, `jump_acceptance`, `exact_fallback`
#'     and, summed over replicates, `restarts` and `shift_restarts` (see [restarts]);
#'     costs `chunk_seconds`,
#'     `chunk_gradient_evaluations` and, so far, `seconds`, `gradient_evaluations`,
#'     `likelihood_evaluations`; and `partial`;}
#'   \item{`diagnostics`}{per replicate: `log_evidence`, `predicted_sd`, `lowest_ess`,
#'     `final_log_weight_var`, `many_steps_fraction`;}
#'   \item{`state`, `annealing`, `pilot`}{the final `particles` and `log_weights` (and what a
#'     continuation needs), `"adaptive"` or `"pilot"`, and the pilot run's result;}
#'   \item{`method`, `n`, `model`, `settings`, `call`, `seed`, `initial_seed`, `final_seed`,
#'     `seconds`, `gradient_evaluations`, `likelihood_evaluations`}{what was run, how, and
#'     the total cost.}
#'   }
#'   Use [log_evidence()], [confint()], [as.data.frame()] (see [sgais_evidence]), `print()`,
#'   `summary()` and `plot()`.
#' @references Cameron, S. A., Eggers, H. C. and Kroon, S. (2019). Stochastic Gradient Annealed
#'   Importance Sampling for Efficient Online Marginal Likelihood Estimation. *Entropy* 21(11),
#'   1109. \doi{10.3390/e21111109}
#' @seealso [sgais_control()] (tuning), [ais()] and [nested_sampling()] (reference estimates).
#' @export
#' @examples
#' data <- simulate_linear_regression(5000, seed = 1)
#' model <- linear_regression(y ~ ., data)
#' fit <- sgais(model, seed = 2)
#' fit
#' exact_log_evidence(model)
#' tail(as.data.frame(fit))
#'
#' # the paper's algorithm and settings
#' sgais(model, control = sgais_control("paper"), seed = 2)
#'
#' # continue on 3000 new observations: exactly the fit of all 8000 at once
#' more <- simulate_linear_regression(8000, seed = 1)[5001:8000, ]
#' fit <- sgais(fit, more)
#' tail(as.data.frame(fit), 3)
#' \donttest{
#' # a standard error from 4 replicates
#' sgais(model, replicates = 4, seed = 2)
#' }
sgais <- function(model, ...) {
  UseMethod("sgais")
}

#' @export
sgais.default <- function(model, ...) {
  check_model(model, sys.call(-1L))
}

#' @rdname sgais
#' @export
sgais.sgais_model <- function(model, ..., control = sgais_control(), replicates = 1,
                              schedule = NULL, progress = default_progress(), seed = NULL) {
  sgais_estimate(model, list(...), control, "sgais", replicates, progress, seed, sys.call(-1L),
                 schedule = schedule)
}

# The work of sgais(), sir() and sequential_sgmcmc(): the estimators that share SGAIS's sampler,
# told apart by their settings (`update`, src/sgais.c). `hybrid` is NULL, or the number of first
# observations nested sampling takes before the sampler starts (hybrid_start()).
sgais_estimate <- function(model, dots, control, method, replicates, progress, seed, call,
                           hybrid = NULL, schedule = NULL) {
  check_all_rows(model, call)
  settings <- check_kernel_model(control_settings(control, dots, method, call, model), model,
                                 call)
  warn_unrestarted(model, method, settings, call)
  replicates <- check_whole_number(replicates, "replicates", 1, call)
  check_run_size(replicates, settings, model, method, call)
  check_metric_size(settings, model, call)
  progress <- check_flag(progress, "progress", call)
  seed <- check_seed(seed, call)
  schedule <- sgais_schedule_kind(schedule, replicates, settings, call)
  if (!is.null(hybrid)) settings$hybrid <- hybrid
  fit <- sgais_start(model, settings, replicates, progress, seed, call, schedule)
  warn_if_unreliable(warn_if_interrupted(fit, model$n, call))
}

# The NS hybrid of the sequential estimator (thesis Sections 4.1 and 5.3): nested sampling on
# the first settings$hybrid observations replaces the sequential estimator's first, most
# variable terms. Returns the state after them (particles drawn from the nested-sampling
# posterior, each weighted by its evidence) and the trace row that records them, whose
# predicted variance is nested sampling's own, H / M: the run's log Z-hat carries that error,
# and on data not much larger than `hybrid` it is most of it.
hybrid_start <- function(model, state, settings) {
  n0 <- settings$hybrid
  ns <- nested_sampling(model_keep_first(model, n0), progress = FALSE)
  M <- settings$early_particles
  # in the sampler's own parameters (posterior_samples() gives the data's: a centred design's
  # intercept at x = 0)
  p <- weighted_particles(ns)
  state$theta <- t(draw_weighted(p$theta, p$logw, M))
  dimnames(state$theta) <- NULL
  state$logw <- rep(ns$log_evidence, M)
  state$n <- n0
  # the particles' genealogy starts here, with nested sampling's variance as the part before
  cap <- max(M, settings$particles)
  ns_var <- ns$diagnostics$predicted_sd^2
  state$genealogy <- list(eve = seq_len(cap) - 1L, influence = numeric(cap), closed = ns_var)
  trace <- trace_row(
    n = as_count(n0), log_evidence = ns$log_evidence, min_ess = as.double(M), ess = as.double(M),
    predicted_var = ns_var, genealogy_var = ns_var, seconds = ns$seconds,
    gradient_evaluations = ns$gradient_evaluations,
    likelihood_evaluations = ns$likelihood_evaluations
  )
  list(state = state, trace = trace)
}

# The estimator a fit of SGAIS's sampler is, by its settings.
estimator_label <- function(settings) {
  switch(settings$update,
    annealed = "SGAIS",
    importance = "SIR",
    averaged = if (is.null(settings$hybrid)) "sequential SG-MCMC" else "sequential SG-MCMC + NS"
  )
}

# The last chunk boundary at or before n observations (src/sgais.c, chunk_end(): chunks of
# first_chunk_size, twice that, ... while below chunk_size, then of chunk_size).
chunk_floor <- function(n, settings) {
  size <- settings$chunk_size
  first <- settings$first_chunk_size
  b <- 0
  k <- 1
  while (first * k < size) {
    if (b + first * k > n) return(b)
    b <- b + first * k
    k <- k + 1
  }
  b + (n - b) %/% size * size
}

# A new fit of `model` (the work of sgais.sgais_model(), with its arguments checked); one
# replicate recovers from an interrupt (see sgais_fit_of()).
# With `schedule` "pilot" an adaptive pilot run comes first and the replicates anneal each of
# its chunks on its lambdas (see ?sgais, "Standard error and how far to trust it").
sgais_start <- function(model, settings, replicates, progress, seed, call,
                        schedule = sgais_schedule_kind(NULL, replicates, settings, call)) {
  # here, so that streams and comparisons, which start from their first block, check it too
  check_prior_conflict(model, call)
  # (not with a pilot, which would then have seen more data than the replicate)
  recover <- replicates == 1L && schedule != "pilot"
  one <- function(progress, label, recover, schedule = no_schedule) {
    state <- sgais_initial_state(model_prior_draw(model, settings$early_particles), rng_key())
    trace <- NULL
    if (!is.null(settings$hybrid)) {
      start <- hybrid_start(model, state, settings)
      state <- start$state
      trace <- start$trace
    }
    sgais_replicate(model, state, trace, settings, progress, label, recover, schedule)
  }
  runs <- if (schedule == "pilot") {
    run_piloted(replicates, seed, progress,
                pilot = function(progress) one(progress, "pilot ", FALSE),
                run = function(progress, label, r, pilot) {
                  one(progress, label, recover, pilot_schedule(pilot))
                })
  } else {
    run_replicates(replicates, seed, progress, function(progress, label, r) {
      one(progress, label, recover)
    })
  }
  sgais_fit_of(model, runs, settings, call, seed)
}

# The `schedule` of sgais(): "adaptive" or "pilot"; NULL is "pilot" for several replicates of
# SGAIS. The estimators without annealing steps (sir(), sequential_sgmcmc()) have no schedule.
sgais_schedule_kind <- function(schedule, replicates, settings, call) {
  if (!identical(settings$update, "annealed")) return("adaptive")
  check_schedule(schedule, replicates, call)
}

#' @rdname sgais
#' @param new_data Observations to add, in the form the model's constructor took its data; rows
#'   that do not fit the model's specification (factor levels, class labels, columns) are an
#'   error of class `sgais_error_data_mismatch`.
#' @export
sgais.sgais_fit <- function(model, new_data, ..., progress = default_progress()) {
  call <- sys.call(-1L)
  fit <- validate_continuable(model, call)
  given <- list(...)
  if (length(given)) {
    abort(sprintf(paste(
      "A fit is continued with the settings it was made with; %s cannot be changed.",
      "Start a new fit with `sgais(model, ...)` to change them."),
      backticked(if (is.null(names(given))) "..." else names(given))), call)
  }
  if (missing(new_data)) abort("`new_data` is missing: give the observations to add.", call)
  progress <- check_flag(progress, "progress", call)
  model <- model_add_rows(fit$model, new_data, call)
  out <- sgais_more(fit, model, progress)
  warn_if_unreliable(warn_if_interrupted(out, model$n, call))
}

# `fit` (validated by validate_continuable()) continued on `model`, its model with the new rows
# added (the work of sgais.sgais_fit()); one replicate recovers from an interrupt (see
# sgais_fit_of()).
sgais_more <- function(fit, model, progress) {
  settings <- fit$settings
  state <- fit$state
  recover <- length(state$resume) == 1L && is.null(state$pilot)
  # A pilot run (sgais_start()) is continued first, from its own stream, and the replicates
  # take its steps on the new chunks: the continued fit is the fit of all the data at once.
  started <- proc.time()[["elapsed"]]
  pilot <- if (!is.null(state$pilot)) {
    run_replicates(1L, NULL, progress, function(progress, label, r) {
      sgais_replicate(model, state$pilot$resume, state$pilot$trace, settings, progress,
                      "pilot ", FALSE)
    }, streams = list(state$pilot$resume$seed))[[1]]
  }
  schedule <- if (is.null(pilot)) no_schedule else pilot_schedule(pilot)
  runs <- run_replicates(length(state$resume), NULL, progress, function(progress, label, r) {
    sgais_replicate(model, state$resume[[r]], state$traces[[r]], settings, progress, label,
                    recover, schedule)
  }, streams = lapply(state$resume, `[[`, "seed"))
  if (!is.null(pilot)) {
    attr(runs, "pilot") <- pilot
    attr(runs, "seconds") <- proc.time()[["elapsed"]] - started
  }
  if (runs[[1]]$interrupted && runs[[1]]$resume$n <= fit$n) {
    # interrupted before a chunk of the new rows was done: the fit as it was
    attr(fit, "interrupted") <- TRUE
    return(fit)
  }
  out <- sgais_fit_of(model, runs, settings, fit$call, fit$seed, before = fit)
  # a continuation starts where the fit's random streams were left, not from a seed of its own
  out$initial_seed <- fit$initial_seed
  out$seconds <- fit$seconds + out$seconds
  out
}

# The fit made by `runs` on `model`. Only a run with one replicate in this R session recovers
# from an interrupt (sgais_replicate()): then the fit ends at the run's last whole chunk, its
# model keeps the observations up to there only, and it carries the attribute "interrupted"
# (TRUE), which warn_if_interrupted() turns into a warning. Interrupted before any chunk was
# done, there is no fit and the interrupt goes on to the caller.
#
# The fit's `data_digest` identifies the responses of its observations (extend_digest()); a
# continuation extends that of the fit it continues (`before`) over the new observations.
sgais_fit_of <- function(model, runs, settings, call, seed, before = NULL) {
  interrupted <- runs[[1]]$interrupted
  if (interrupted) {
    if (runs[[1]]$resume$n == 0) resignal_interrupt()
    model <- model_keep_first(model, runs[[1]]$resume$n)
  }
  digest <- if (is.null(before)) extend_digest("", model, 0, model$n) else
    extend_digest(before$data_digest, model, before$n, model$n)
  fit <- new_sgais_fit(model, runs, settings, call, seed, digest)
  if (interrupted) attr(fit, "interrupted") <- TRUE
  fit
}

# Turns the attribute "interrupted" of a fit (sgais_fit_of()) into a warning of class
# `sgais_warning_interrupted` saying how far the fit got of the `wanted` observations.
warn_if_interrupted <- function(fit, wanted, call) {
  if (is.null(attr(fit, "interrupted"))) return(fit)
  attr(fit, "interrupted") <- NULL
  warn(sprintf(paste(
    "Interrupted: the fit returned is that of the first %s of the %s observations (its last",
    "whole chunk). Continue it with `sgais(fit, new_data)` on observations %s to %s."),
    format_count(fit$n), format_count(wanted), format_count(fit$n + 1), format_count(wanted)),
    call, "sgais_warning_interrupted")
  fit
}

#' @rdname sgais
#' @param object A fit from [sgais()], to continue on `new_data`.
#' @importFrom stats update
#' @export
update.sgais_fit <- function(object, new_data, ..., progress = default_progress()) {
  sgais(object, new_data, ..., progress = progress)
}

# One replicate: adds observations state$n + 1, ..., model$n to `state`, whose past trace is
# `trace` (NULL for a new run). Chunks end at multiples of chunk_size from the first
# observation, whatever pieces the data came in, so a fit continued in pieces is the fit of all
# the data at once. Only whole chunks go into the state that a continuation starts from
# (`resume`, with R's RNG state after them as `seed`); observations after the last whole chunk
# are added to a copy of it, and that copy is the fit reported (its particles, its last trace
# row, marked `partial`). The random numbers the copy used are not the continuation's.
#
# With `recover = TRUE` (one replicate, running in this R session) an interrupt ends the run at
# the last whole chunk done: the run is returned with `interrupted = TRUE` and its state, resume
# state and trace at that chunk, as if the data had ended there (see sgais_interrupted()).
# The chunks in `schedule` (no_schedule: none) take its annealing steps (see pilot_schedule()).
sgais_replicate <- function(model, state, trace, settings, progress, label, recover = FALSE,
                            schedule = no_schedule) {
  whole <- max(state$n, chunk_floor(model$n, settings))
  # fits saved before runs had keys continue with a key from the continuation's stream
  state$key <- state$key %||% rng_key()
  buffer <- sgais_buffer(model, state, settings)
  done <- sgais_advance(buffer$model, buffer$state, whole, settings, progress, label, recover,
                        schedule = schedule)
  resume <- done$state
  resume$seed <- rng_state()
  if (!is.null(trace)) {
    trace <- trace[!trace$partial, , drop = FALSE]
  }
  trace <- rbind(trace, mark_partial(done$trace, FALSE))
  final <- resume
  interrupted <- done$interrupted
  if (!interrupted && whole < model$n) {
    part <- sgais_advance(buffer$model, resume, model$n, settings, FALSE, label, recover,
                          schedule = schedule)
    if (part$interrupted) {
      # the whole chunks are done; the partial one is dropped (run_in_slices() put the RNG
      # stream back to where the whole chunks left it)
      interrupted <- TRUE
    } else {
      trace <- rbind(trace, mark_partial(part$trace, TRUE))
      final <- part$state
    }
  }
  list(state = final, resume = keep_reservoir(resume, buffer$model, settings), trace = trace,
       seconds = done$seconds, interrupted = interrupted)
}

# The data the C sampler reads for a replicate continuing from `state` (src/sgais.c,
# ffi_sgais_run()): without a reservoir, the model as it is (every observation from the first,
# buffer_start = 0); with a bounded one, the replicate's reservoir of earlier observations
# (state$reservoir, a data list in slot order) followed by the model's observations after
# state$n, so that observation k + 1 of the stream is at column k - buffer_start, and the
# reservoir's are at the 0-based columns `slots`. Returns the model and the state to run.
sgais_buffer <- function(model, state, settings) {
  if (!bounded_reservoir(settings)) {
    state$slots <- integer(0)
    state$buffer_start <- 0
    return(list(model = model, state = state))
  }
  held <- if (is.null(state$reservoir)) 0L else data_rows(state$reservoir)
  model <- model_drop_rows(model, state$n)
  if (held > 0L) model$data <- data_bind(state$reservoir, model$data)
  state$reservoir <- NULL
  state$slots <- seq_len(held) - 1L
  state$buffer_start <- state$n - held
  model$dropped <- state$buffer_start
  list(model = model, state = state)
}

# The state a continuation starts from: with a bounded reservoir, the observations it holds,
# copied out of the buffer in slot order.
keep_reservoir <- function(state, buffer, settings) {
  if (bounded_reservoir(settings)) {
    state$reservoir <- data_columns(buffer$data, state$slots + 1L)
  }
  state$slots <- NULL
  state$buffer_start <- NULL
  state
}

mark_partial <- function(trace, partial) {
  if (!is.null(trace)) trace$partial <- rep(partial, nrow(trace))
  trace
}

# Adds observations state$n + 1, ..., n_end to a run, in slices of about `budget` seconds (see
# run_in_slices()), the chunks in `schedule` on its steps. Returns the new state (with every
# annealing step's lambda so far, `lambdas`) and the trace of the chunks added.
sgais_advance <- function(model, state, n_end, settings, progress, label = "", recover = FALSE,
                          budget = if (progress || recover) 0.25 else Inf,
                          schedule = no_schedule) {
  cs <- c_settings(settings)
  run <- function(model, state, n_end, cs, schedule, budget) {
    res <- with_model_errors(.Call(C_ffi_sgais_run, model, state, n_end, cs, schedule, budget))
    trace <- as.data.frame(res$trace)
    k <- nrow(trace)
    new <- if (k > 0L) run_state("after", list(res = res, tr = trace, k = k, state = state)) else
      state
    trace$n <- as_count(trace$n)
    list(state = new, trace = trace, stop = attr(res, "restart"))
  }
  run_in_slices(
    restart_slices(model, settings, cs, n_end, schedule, run), state,
    finished = function(state) state$n >= n_end,
    progress = progress,
    recover = recover,
    budget = budget,
    format = paste0("SGAIS ", label, "{cli::pb_bar} {cli::pb_current}/{cli::pb_total} observations",
                    " | log Z {label} | ETA {cli::pb_eta}"),
    total = n_end,
    position = function(state) state$n,
    status = function(state) sprintf("%.6g", state$log_z)
  )
}

# A replicate's annealing schedule (src/sgais.c): for each chunk ending at n[j], steps[j]
# lambdas, one chunk after another in `lambda`; chunks not in it anneal adaptively.
no_schedule <- list(n = numeric(0), steps = integer(0), lambda = numeric(0))

# The schedule a pilot run (run_piloted()) took, for the replicates to follow: the lambdas of
# each of its chunks, the last partial one included (the replicates end there too).
pilot_schedule <- function(pilot) {
  keep <- !restarted(pilot$trace) # a restart's chunk anneals adaptively
  list(n = as.double(pilot$trace$n[keep]), steps = as.integer(pilot$trace$annealing_steps[keep]),
       lambda = as.double(pilot$state$lambdas))
}

new_sgais_fit <- function(model, runs, settings, call, seed, data_digest) {
  pilot <- attr(runs, "pilot")
  # with a bounded reservoir the fit keeps only the observations after its last whole chunk
  # (the replicates' reservoirs are in their states)
  if (bounded_reservoir(settings)) model <- model_drop_rows(model, runs[[1]]$resume$n)
  traces <- lapply(runs, `[[`, "trace")
  n <- traces[[1]]$n
  log_z <- vapply(traces, `[[`, numeric(length(n)), "log_evidence")
  log_z <- matrix(log_z, nrow = length(n))
  sum_of <- function(col) trace_join(traces, col, "sum")
  le <- apply(log_z, 1, log_mean_exp)
  # the SE at every n by the rule of the whole fit's (replicate_se()), with the replicates'
  # predicted sds there
  predicted_sd <- sqrt(matrix(vapply(traces, predicted_var_path, numeric(length(n))),
                              nrow = length(n)))
  single <- settings$preset != "paper"
  se <- vapply(seq_along(n), function(i) replicate_se(log_z[i, ], "z", predicted_sd[i, ], single),
               numeric(1))
  # each chunk's sequential log predictive log p(C | earlier data) = the change in log Z
  # (paper Section 5; a jump flags data the model did not expect)
  lp <- diff(c(0, le))
  trajectory <- data.frame(
    n = n,
    log_evidence = le,
    log_evidence_se = se,
    log_evidence_per_obs = le / n,
    log_predictive = lp,
    log_predictive_per_obs = lp / diff(c(0L, n)),
    trace_join_replicates(traces),
    chunk_seconds = sum_of("seconds"),
    chunk_gradient_evaluations = sum_of("gradient_evaluations"),
    seconds = cumsum(sum_of("seconds")),
    gradient_evaluations = cumsum(sum_of("gradient_evaluations")),
    likelihood_evaluations = cumsum(sum_of("likelihood_evaluations")),
    partial = traces[[1]]$partial
  )
  if (length(runs) == 1L) trajectory$annealing_steps <- as.integer(trajectory$annealing_steps)
  last <- log_z[length(n), ]
  diagnostics <- data.frame(
    replicate = seq_along(runs), log_evidence = last,
    do.call(rbind, lapply(runs, function(r) {
      anneal_diagnostics(r$trace, r$state$logw,
                         genealogy_var = predicted_var_path(r$trace)[nrow(r$trace)],
                         collapsed = weights_collapsed(r$trace)[nrow(r$trace)])
    }))
  )
  new_sgais_evidence(estimator_label(settings), model, combine_runs(runs), settings, call, seed, c(
    list(
      data_digest = data_digest,
      trajectory = trajectory,
      diagnostics = diagnostics,
      state = new_sgais_state(
        particles = do.call(rbind, lapply(runs, particle_matrix, model = model)),
        log_weights = unlist(lapply(runs, function(r) r$state$logw)),
        n = model$n,
        resume = lapply(runs, `[[`, "resume"),
        traces = lapply(runs, `[[`, "trace"),
        pilot = if (!is.null(pilot)) list(resume = pilot$resume, trace = pilot$trace)
      ),
      annealing = if (is.null(pilot)) "adaptive" else "pilot",
      pilot = pilot_summary(pilot)
    ),
    replicate_summary(last, predicted_sd = diagnostics$predicted_sd, single = single)
  ), "sgais_fit")
}

fit_fields.sgais_fit <- function(x) {
  tr <- x$trajectory
  s <- x$settings
  c(
    settings = sprintf("%d particles%s, batch %s, chunk %s, target ESS %s, %s%s%s%s",
                       s$particles,
                       if (s$early_particles > s$particles) sprintf(" (%d early)", s$early_particles) else "",
                       format_count(s$batch_size), format_count(s$chunk_size),
                       format(s$target_ess), format_settings(s),
                       if (s$control_variates) ", control variates" else "",
                       if (bounded_reservoir(s)) sprintf(", reservoir of %s", format_count(s$reservoir_size)) else "",
                       if (s$resample >= 1) ", resampling" else if (s$resample > 0) sprintf(", resampling below ESS %s", format(s$resample * s$particles)) else ""),
    annealing = sprintf("%s, %s steps (at most %s in a chunk)%s, lowest ESS %.2f, final weight ESS %.2f",
                        format_chunks(nrow(tr)), format_count(round(sum(tr$annealing_steps))),
                        format_steps(max(tr$annealing_steps)),
                        if (identical(x$annealing, "pilot")) " on a pilot run's schedule" else "",
                        min(tr$min_ess), tr$ess[nrow(tr)]),
    restarts = format_restarts(tr)
  )
}

# "1 chunk", "12 chunks"; and a chunk's annealing steps, a mean over replicates that anneal
# adaptively, with at most one decimal.
format_chunks <- function(n) ngettext(n, "1 chunk", paste(format_count(n), "chunks"))
format_steps <- function(x) format(round(x, 1))

fit_rows.sgais_fit <- function(x) x$trajectory

#' @export
summary.sgais_fit <- function(object, ...) {
  object <- validate_sgais_evidence(object, sys.call())
  tr <- object$trajectory
  out <- NextMethod()
  # the trajectory at up to 8 roughly log-spaced points, always including the last
  at <- unique(c(round(exp(seq(0, log(nrow(tr)), length.out = 8))), nrow(tr)))
  shown <- tr[at, c("n", "log_evidence", "log_evidence_se", "log_evidence_per_obs",
                    "annealing_steps", "min_ess", "seconds")]
  if (all(is.na(shown$log_evidence_se))) shown$log_evidence_se <- NULL
  exact <- exact_or_null(object$model, shown$n)
  if (!is.null(exact)) shown$exact <- exact
  rownames(shown) <- NULL
  out$trajectory <- shown
  out$annealing <- c(
    chunks = nrow(tr),
    steps = sum(tr$annealing_steps),
    mean_steps = mean(tr$annealing_steps),
    max_steps = max(tr$annealing_steps),
    max_steps_at = tr$n[which.max(tr$annealing_steps)],
    lowest_ess = min(tr$min_ess),
    final_ess = tr$ess[nrow(tr)],
    # early_particles while the run is in its exact early phase, particles after
    final_particles = nrow(object$state$particles)
  )
  class(out) <- c("summary.sgais_fit", class(out))
  out
}

#' @export
format.summary.sgais_fit <- function(x, ...) {
  a <- x$annealing
  c(
    NextMethod(),
    "",
    sprintf("Annealing: %s, %s steps (mean %.1f, most %s, in the chunk ending at n = %s);",
            format_chunks(a[["chunks"]]), format_count(round(a[["steps"]])), a[["mean_steps"]],
            format_steps(a[["max_steps"]]), format_count(a[["max_steps_at"]])),
    sprintf("  lowest incremental ESS %.2f, final weight ESS %.2f of %d particles.",
            a[["lowest_ess"]], a[["final_ess"]], as.integer(a[["final_particles"]])),
    "",
    "Trajectory:",
    utils::capture.output(print(x$trajectory, digits = 8, row.names = FALSE))
  )
}
