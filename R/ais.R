#' Annealed importance sampling on the full data
#'
#' Estimates the log evidence \eqn{\log p(y)} of a model by annealed importance sampling (Neal
#' 2001) along the geometric path \eqn{f_\lambda(\theta) = p(y \mid \theta)^\lambda
#' p(\theta)}{f(theta) = p(y | theta)^lambda p(theta)} from the prior (\eqn{\lambda = 0}) to the
#' posterior (\eqn{\lambda = 1}), the reference method of Cameron, Eggers and Kroon (2019,
#' Section 6.1). Each step \eqn{\Delta\lambda} is chosen, as in [sgais()], so that the effective
#' sample size of the incremental weights \eqn{p(y \mid \theta_i)^{\Delta\lambda}} is
#' `target_ess`; the particles then move on the exact full-data potential.
#'
#' The tuning is set by `control` ([ais_control()]). The default preset, `"robust"`, moves the
#' particles in units of the current target's width, which is what makes AIS accurate where the
#' target is as wide as the prior; `ais_control("paper")` is the paper's reference AIS exactly,
#' for reproducing the paper.
#'
#' Every step uses all n observations, so the cost grows with n times the number of annealing
#' steps: [sgais()] is the fast choice for large data, `ais()` the accurate one for small data
#' and a check of [sgais()] on your own model. The passes over the data run on
#' [sgais_threads()] threads in a fixed order, so the estimate is the same on any number of
#' threads; random numbers are drawn as in [sgais()] (section "Random numbers and threads").
#'
#' @inheritParams sgais
#' @section Schedule:
#' An adaptive step is chosen from the particles it then reweights, which biases
#' \eqn{\hat Z}{Z-hat} by \eqn{O(1/M)} with M particles (adaptive SMC is consistent, not
#' unbiased: Beskos, Jasra, Kantas and Thiery 2016). The bias is shared by every replicate, so
#' the replicates' standard error cannot see it. So with `replicates` > 1 the default makes one
#' adaptive pilot run first and runs every replicate on its schedule, at the cost of one more
#' run; the pilot's estimate is reported (`pilot`) but not combined. A fixed schedule removes
#' this bias only: the moves still adapt to the particles, and resampling to their ESS. Give
#' `schedule` to reuse a schedule, or `schedule = "adaptive"` for replicates that choose their
#' own steps. Measurements: `vignette("validation")`.
#'
#' @param model A model: a built-in one such as [linear_regression()], or your own from
#'   [custom_model()] or [compiled_model()].
#' @param ... Settings that replace those of `control`, by name; see [ais_control()].
#' @param control The tuning: [ais_control()] (`"robust"`, the default) or
#'   `ais_control("paper")`.
#' @param schedule How the annealing steps are chosen (see "Schedule"): `"adaptive"`, each run
#'   choosing its own by `target_ess`; `"pilot"`, one adaptive pilot run first, whose
#'   \eqn{\lambda}'s every replicate then follows (its estimate is not used, its cost is
#'   counted); or a vector of increasing \eqn{\lambda}'s in (0, 1] ending at 1, such as the
#'   `lambda` column of an earlier fit's `schedule`. `NULL`, the default, is `"pilot"` with
#'   `replicates` > 1 and `"adaptive"` for one run.
#' @param progress Show a progress bar with an ETA. Defaults to the option `sgais.progress`, or
#'   else [interactive()]. The bar shows how far \eqn{\log \lambda}{log(lambda)} has come
#'   towards 0 (about the fraction of the steps done), and its label the step, the predicted
#'   number of steps (`step 12/~30`), \eqn{\lambda} and \eqn{\log \hat Z}{log Z-hat} so far. With
#'   `replicates` > 1 each replicate has its bar, under the sequential [future::plan()] only.
#' @return An object of class `c("sgais_ais_fit", "sgais_evidence")`, a list with
#'   \describe{
#'   \item{`log_evidence`, `log_evidence_se`, `replicate_log_evidence`, `replicate_sd`,
#'     `diagnostics`}{the log evidence and, as for [sgais()], its standard error (from
#'     replicates, or one run's predicted sd) and the per-replicate diagnostics;}
#'   \item{`schedule`}{one row per annealing step (of every replicate, in column `replicate`):
#'     `step`, `lambda` (after the step), `ess` (of the incremental weights), `resampled`,
#'     `sghmc_steps`, `acceptance` (`NA` for the paper's kernel), `step_size`, `divergent`,
#'     `step_halvings`, `data_fraction`, `jump_acceptance` (see [sgais_control()]),
#'     `log_evidence` (the log normalising constant of \eqn{f_\lambda} so far), and the
#'     cumulative `seconds`, `gradient_evaluations` and `likelihood_evaluations` (per
#'     observation and particle);}
#'   \item{`state`}{the final `particles` (all replicates' stacked; weighted posterior draws)
#'     and `log_weights`;}
#'   \item{`annealing`, `pilot`}{`"adaptive"`, `"pilot"` or `"fixed"` (a given schedule); for
#'     `"pilot"` the pilot run's `log_evidence` (not used), `steps` and cost, else `NULL`;}
#'   \item{`method`, `n`, `model`, `settings`, `call`, `seed`, `initial_seed`, `final_seed`,
#'     `seconds`, `gradient_evaluations`, `likelihood_evaluations`}{as for [sgais()].}
#'   }
#'   Use [log_evidence()], [confint()], [as.data.frame()] (the schedule, with the columns every
#'   fit shares first: see [sgais_evidence]), `print()` and `summary()`.
#' @references Neal, R. M. (2001). Annealed importance sampling. *Statistics and Computing*
#'   11, 125-139.
#'
#'   Beskos, A., Jasra, A., Kantas, N. and Thiery, A. (2016). On the convergence of adaptive
#'   sequential Monte Carlo methods. *Annals of Applied Probability* 26(2), 1111-1146.
#'
#'   Cameron, S. A., Eggers, H. C. and Kroon, S. (2019). Stochastic Gradient Annealed
#'   Importance Sampling for Efficient Online Marginal Likelihood Estimation. *Entropy* 21(11),
#'   1109. \doi{10.3390/e21111109}
#' @seealso [sgais()], [nested_sampling()]
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(500, seed = 1))
#' fit <- ais(model, seed = 2)
#' fit
#' exact_log_evidence(model)
#' tail(as.data.frame(fit))
#' ais(model, control = ais_control("paper"), seed = 2)
#' # replicates on the schedule of a pilot run, with a standard error
#' fit3 <- ais(model, replicates = 3, seed = 2)
#' fit3$pilot
#' confint(fit3)
ais <- function(model, ..., control = ais_control(), replicates = 1, schedule = NULL,
                progress = default_progress(), seed = NULL) {
  call <- sys.call()
  check_all_rows(model, call)
  check_prior_conflict(model, call)
  settings <- check_kernel_model(control_settings(control, list(...), "ais", call, model), model,
                                 call)
  replicates <- check_whole_number(replicates, "replicates", 1, call)
  check_run_size(replicates, settings, model, "ais", call)
  check_metric_size(settings, model, call)
  schedule <- check_schedule(schedule, replicates, call, lambdas = TRUE)
  progress <- check_flag(progress, "progress", call)
  seed <- check_seed(seed, call)
  cs <- c_settings(settings)

  one <- function(progress, label, lambdas) {
    state <- ais_start_state(model, settings$particles)
    run_in_slices(
      function(state, budget) ais_slice(model, state, cs, budget, lambdas),
      state,
      finished = function(state) state$lambda >= 1,
      progress = progress,
      format = paste0("AIS ", label,
                      "{cli::pb_bar} {cli::pb_percent} | ETA {cli::pb_eta} | {label}"),
      total = 1000,
      position = function(state) floor(1000 * ais_progress(state)),
      status = ais_status
    )
  }
  runs <- if (identical(schedule, "pilot")) {
    run_piloted(replicates, seed, progress,
                pilot = function(progress) one(progress, "pilot ", numeric(0)),
                run = function(progress, label, r, pilot) one(progress, label, pilot$trace$lambda))
  } else {
    lambdas <- if (is.numeric(schedule)) schedule else numeric(0)
    run_replicates(replicates, seed, progress, function(progress, label, r) one(progress, label, lambdas))
  }
  warn_if_unreliable(new_sgais_ais_fit(model, runs, settings, call, seed, schedule))
}

# The state of an AIS run before its first step: particles from the prior at lambda = 0.
# `first_lambda` is the lambda of the first step, once taken (for ais_progress()); `genealogy`
# the particles' (src/anneal.h), NULL before the first step.
ais_start_state <- function(model, particles) {
  list(theta = model_prior_draw(model, particles), logw = numeric(particles),
       loglik = numeric(0), lambda = 0, first_lambda = NA_real_, steps = 0L, log_z = 0,
       step_size = 0, key = rng_key(), genealogy = NULL)
}

# How far an AIS run is, in [0, 1], for its progress bar: the fraction of the way from the first
# step's lambda_1 to 1 travelled on a log scale, 1 - log(lambda) / log(lambda_1); 0 before the
# first step. A bar linear in lambda is useless: lambda is about 0.01 halfway through a run. The
# steps keep the ESS of the incremental weights p(y | theta)^Delta at `target_ess`, which makes
# Delta times the sd of log p(y | theta) under f_lambda about constant; once the likelihood
# outweighs the prior that sd is about sqrt(d / 2) / lambda (d parameters), so lambda grows by
# a constant factor per step and log lambda moves in equal strides: the position is then the
# fraction of steps done, and of the time (the steps cost about the same). It runs a little
# ahead of that fraction: the first steps, where the prior dominates, add about the same Delta
# each, so lambda grows faster than geometrically there; the paper preset's lambda grows more
# slowly in mid-run, and its position falls behind.
ais_progress <- function(state) {
  lambda <- state$lambda
  first <- state$first_lambda
  if (lambda >= 1) return(1)
  if (!(lambda > 0) || is.null(first) || !(first > 0 && first < 1)) return(0)
  min(1, max(0, 1 - log(lambda) / log(first)))
}

# The label of an AIS progress bar: the step, with the number of steps the position predicts
# (ais_progress() is (step - 1) / (steps - 1) when lambda grows geometrically), lambda and the
# current log Z-hat.
ais_status <- function(state) {
  p <- ais_progress(state)
  total <- if (p > 0 && p < 1) sprintf("/~%s", format_count(1 + (state$steps - 1) / p)) else ""
  sprintf("step %d%s, lambda %.3g, log Z %.6g", state$steps, total, state$lambda, state$log_z)
}

# One slice of an AIS run: annealing steps from `state` for about `budget` seconds, adaptive, or
# along `schedule` (the lambdas after each step; numeric(0) for adaptive steps).
ais_slice <- function(model, state, settings, budget, schedule = numeric(0)) {
  res <- with_model_errors(.Call(C_ffi_ais_run, model, state$theta, state$logw, state$loglik,
                                 state$lambda, settings, state$steps, state$step_size, state$key,
                                 as.double(schedule), budget, state$genealogy))
  trace <- as.data.frame(res$trace)
  k <- nrow(trace)
  list(
    state = list(theta = res$theta, logw = res$logw, loglik = res$loglik,
                 lambda = res$lambda_end,
                 first_lambda = if (state$steps == 0 && k > 0) trace$lambda[1]
                                else state$first_lambda,
                 steps = state$steps + k, step_size = res$step_size_end,
                 genealogy = res$genealogy,
                 key = state$key,
                 log_z = if (k > 0) trace$log_evidence[k] else state$log_z),
    trace = trace
  )
}

new_sgais_ais_fit <- function(model, runs, settings, call, seed, annealing = "adaptive") {
  cost <- c("seconds", "gradient_evaluations", "likelihood_evaluations")
  schedule <- do.call(rbind, lapply(seq_along(runs), function(r) {
    trace <- runs[[r]]$trace
    data.frame(
      replicate = r,
      step = seq_len(nrow(trace)),
      trace[c("lambda", "ess", "resampled", "sghmc_steps", "acceptance", "step_size", "divergent",
              "step_halvings", "data_fraction", "jump_acceptance", "log_evidence")],
      lapply(trace[cost], cumsum)
    )
  }))
  if (length(runs) == 1L) schedule$replicate <- NULL
  last <- vapply(runs, function(r) r$state$log_z, numeric(1))
  diagnostics <- data.frame(
    replicate = seq_along(runs), log_evidence = last,
    do.call(rbind, lapply(runs, function(r) {
      trace <- r$trace
      trace$predicted_var <- (settings$particles / trace$ess - 1) / settings$particles
      trace$min_ess <- trace$ess
      anneal_diagnostics(trace, r$state$logw, steps = NULL,
                         genealogy_var = r$state$genealogy$closed +
                           sum(r$state$genealogy$influence^2))
    }))
  )
  new_sgais_evidence("AIS", model, combine_runs(runs), settings, call, seed, c(
    list(
      schedule = schedule,
      diagnostics = diagnostics,
      state = list(particles = do.call(rbind, lapply(runs, particle_matrix, model = model)),
                   log_weights = unlist(lapply(runs, function(r) r$state$logw))),
      annealing = if (is.numeric(annealing)) "fixed" else annealing,
      pilot = pilot_summary(attr(runs, "pilot"))
    ),
    replicate_summary(last, predicted_sd = diagnostics$predicted_sd)
  ), "sgais_ais_fit")
}

# ESS of normalised weights exp(logw): (sum w)^2 / sum w^2, in log space.
weight_ess <- function(logw) {
  exp(2 * log_sum_exp(logw) - log_sum_exp(2 * logw))
}

log_sum_exp <- function(x) {
  m <- max(x)
  if (!is.finite(m)) return(m)
  m + log(sum(exp(x - m)))
}

fit_fields.sgais_ais_fit <- function(x) {
  sc <- x$schedule
  s <- x$settings
  c(
    settings = sprintf("%d particles, target ESS %s, %s%s",
                       s$particles, format(s$target_ess), format_settings(s),
                       if (s$resample >= 1) ", resampling" else if (s$resample > 0) sprintf(", resampling below ESS %s", format(s$resample * s$particles)) else ""),
    annealing = sprintf("%s steps%s%s, lowest ESS %.2f, final weight ESS %.2f",
                        format_count(nrow(sc)), if (length(x$replicate_log_evidence) > 1) " (all replicates)" else "",
                        switch(x$annealing, adaptive = "",
                               pilot = " on a pilot run's schedule",
                               fixed = " on a given schedule"),
                        min(sc$ess), weight_ess(x$state$log_weights))
  )
}

fit_rows.sgais_ais_fit <- function(x) data.frame(n = rep(x$n, nrow(x$schedule)), x$schedule)
