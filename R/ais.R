#' Annealed importance sampling on the full data
#'
#' Estimates the log evidence \eqn{\log p(y)} of a model by annealed importance sampling (Neal
#' 2001) along the geometric path \eqn{f_\lambda(\theta) = p(y \mid \theta)^\lambda
#' p(\theta)}{f(theta) = p(y | theta)^lambda p(theta)} from the prior (\eqn{\lambda = 0}) to the
#' posterior (\eqn{\lambda = 1}), the reference method of Cameron, Eggers and Kroon (2019,
#' Section 6.1). Each step \eqn{\Delta\lambda} is chosen, as in [sgais()], so that the effective
#' sample size of the incremental weights \eqn{p(y \mid \theta_i)^{\Delta\lambda}} is
#' `target_ess`; the log-weights grow by \eqn{\Delta\lambda \log p(y \mid \theta_i)}, and each
#' particle then takes `sghmc_steps` steps of SGHMC on the exact full-data potential
#' \eqn{\nabla \log f_\lambda = \nabla \log p(\theta) + \lambda \nabla \log p(y \mid \theta)}
#' with step \eqn{\eta} = `learning_rate` / n. The defaults are the paper's.
#'
#' Every step uses all n observations, so the cost grows with n times the number of annealing
#' steps; [sgais()] is the fast choice for large data, `ais()` the accurate one for small data
#' and a check of [sgais()] on your own model.
#'
#' @inheritParams sgais
#' @param learning_rate Per-observation SGHMC learning rate; the step is `learning_rate` / n.
#' @return An object of class `c("ais_fit", "evidence_fit")`, a list with
#'   \describe{
#'   \item{`log_evidence`}{the log evidence;}
#'   \item{`schedule`}{a data frame with one row per annealing step: `step`, `lambda` (after the
#'     step), `ess` (of the incremental weights), `log_evidence` (the estimate
#'     \eqn{\log \frac1M \sum_i w_i}{log mean(w)} with the weights so far, the log normalising
#'     constant of \eqn{f_\lambda}), and the cumulative cost: `seconds`,
#'     `gradient_evaluations` and `likelihood_evaluations` (per observation and particle);}
#'   \item{`state`}{the final `particles` (a `particles` x parameters matrix, approximately
#'     posterior draws with weights) and `log_weights`;}
#'   \item{`settings`, `call`, `seed`, `initial_seed`, `final_seed`}{how it was run;}
#'   \item{`seconds`, `gradient_evaluations`, `likelihood_evaluations`}{the total cost;}
#'   \item{`model`}{the model.}
#'   }
#'   Use [log_evidence()], [as.data.frame()] (the schedule), `print()` and `summary()`.
#' @references Neal, R. M. (2001). Annealed importance sampling. *Statistics and Computing*
#'   11, 125-139.
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
ais <- function(model, particles = 10, target_ess = 5, sghmc_steps = 20, learning_rate = 0.1,
                momentum_decay = 0.2, resample = FALSE, progress = default_progress(),
                seed = NULL) {
  call <- sys.call()
  check_model(model, call)
  settings <- check_anneal_settings(particles, target_ess, sghmc_steps, learning_rate,
                                    momentum_decay, resample, call)
  particles <- settings$particles
  progress <- check_flag(progress, "progress", call)
  check_seed(seed, call)

  run <- seeded_run(seed, {
    state <- list(theta = model_prior_draw(model, particles), logw = numeric(particles),
                  loglik = numeric(0), lambda = 0, steps = 0L, log_z = 0)
    run_in_slices(
      function(state, budget) ais_slice(model, state, settings, budget),
      state,
      finished = function(state) state$lambda >= 1,
      progress = progress,
      format = "AIS {cli::pb_bar} {cli::pb_percent} of lambda | {label} | ETA {cli::pb_eta}",
      total = 1000,
      position = function(state) floor(1000 * state$lambda),
      status = function(state) sprintf("step %d, log Z %.6g", state$steps, state$log_z)
    )
  })
  new_ais_fit(model, run, settings, call, seed)
}

ais_slice <- function(model, state, settings, budget) {
  res <- .Call(C_ffi_ais_run, model, state$theta, state$logw, state$loglik, state$lambda,
               settings, state$steps, budget)
  trace <- as.data.frame(res[c("lambda", "ess", "log_evidence", "seconds",
                               "gradient_evaluations", "likelihood_evaluations")])
  k <- nrow(trace)
  list(
    state = list(theta = res$theta, logw = res$logw, loglik = res$loglik,
                 lambda = res$lambda_end, steps = state$steps + k,
                 log_z = if (k > 0) trace$log_evidence[k] else state$log_z),
    trace = trace
  )
}

new_ais_fit <- function(model, run, settings, call, seed) {
  trace <- run$trace
  cost <- c("seconds", "gradient_evaluations", "likelihood_evaluations")
  schedule <- data.frame(
    step = seq_len(nrow(trace)),
    trace[c("lambda", "ess", "log_evidence")],
    lapply(trace[cost], cumsum)
  )
  new_evidence_fit(
    method = "AIS",
    log_evidence = schedule$log_evidence[nrow(schedule)],
    model = model,
    run = run,
    settings = settings,
    call = call,
    seed = seed,
    schedule = schedule,
    state = list(particles = particle_matrix(run, model), log_weights = run$state$logw),
    class = "ais_fit"
  )
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

#' @export
format.ais_fit <- function(x, ...) {
  sc <- x$schedule
  s <- x$settings
  c(
    NextMethod(),
    sprintf("  settings:  %d particles, target ESS %s, %d SGHMC steps, learning rate %s, momentum decay %s%s",
            s$particles, format(s$target_ess), s$sghmc_steps, format(s$learning_rate),
            format(s$momentum_decay), if (s$resample) ", resampling" else ""),
    sprintf("  annealing: %s steps, lowest ESS %.2f, final weight ESS %.2f",
            format_count(nrow(sc)), min(sc$ess), weight_ess(x$state$log_weights))
  )
}

#' @export
as.data.frame.ais_fit <- function(x, ...) {
  x$schedule
}
