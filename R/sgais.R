#' Stochastic gradient annealed importance sampling
#'
#' Estimates the log evidence \eqn{\log p(y_1, \dots, y_n)} of a model for every prefix of its
#' data in one pass (Cameron, Eggers and Kroon 2019, Algorithm 1). The data are added in chunks
#' of `chunk_size` observations. For each chunk, the particles are annealed from the posterior
#' of the earlier data to the posterior including the chunk, through
#' \eqn{f_\lambda(\theta) = p(C \mid \theta)^\lambda p(y_{<C} \mid \theta) p(\theta)}{f(theta) =
#' p(C | theta)^lambda p(earlier data | theta) p(theta)} (paper eq. 2), with each step
#' \eqn{\Delta\lambda} chosen so that the effective sample size of the incremental weights is
#' `target_ess`. Between steps each particle takes `sghmc_steps` steps of stochastic gradient
#' Hamiltonian Monte Carlo (paper eq. 3) on a potential that uses the chunk exactly and a
#' mini-batch of `batch_size` earlier observations drawn with replacement (paper eq. 4). The cost
#' of a chunk does not grow with the data seen before it.
#'
#' The SGHMC learning rate is \eqn{\eta} = `learning_rate` / n, with n the number of observations
#' in the current target, and the friction is `momentum_decay`; the defaults are the paper's
#' (Section 6.1). While there are no more earlier observations than `batch_size`, they are used
#' exactly instead of through a mini-batch. Log-weights and evidence are kept in log space
#' throughout. The estimate is unbiased for the evidence (not its log) in the limit of exact
#' SGHMC moves; with the paper's settings the log evidence is underestimated by about 0.1% at a
#' million observations, because mini-batch gradient noise grows relative to the injected noise
#' as n grows.
#'
#' @param model A model: [linear_regression()], [softmax_regression()] or [gaussian_mixture()].
#' @param particles Number of particles \eqn{M} (at least 2).
#' @param batch_size Mini-batch size \eqn{|B|} for the gradient over earlier observations.
#' @param target_ess Target effective sample size of the incremental weights for the adaptive
#'   annealing schedule, in (1, `particles`].
#' @param sghmc_steps SGHMC steps per particle after each annealing step.
#' @param learning_rate Per-observation SGHMC learning rate; the step is `learning_rate` / n.
#' @param momentum_decay SGHMC friction \eqn{\alpha} in (0, 1].
#' @param resample Resample the particles in proportion to their weights before each move
#'   (systematic resampling); the weights are then set to their mean.
#' @param progress Show a progress bar with an ETA. Defaults to the option `sgais.progress`, or
#'   else [interactive()].
#' @param seed Optional seed for a reproducible run; the caller's random stream is then left as
#'   it was. Without it the run draws from (and advances) R's random stream, so
#'   [set.seed()] before the call also makes it reproducible.
#' @param chunk_size Observations added per Bayesian update, and so the spacing of the
#'   trajectory. The paper uses the mini-batch size.
#' @return An object of class `c("sgais_fit", "evidence_fit")`, a list with
#'   \describe{
#'   \item{`log_evidence`}{the log evidence of all the data;}
#'   \item{`trajectory`}{a data frame with one row per chunk: `n` (observations so far),
#'     `log_evidence`, `log_evidence_per_obs`, `annealing_steps` (in this chunk), `min_ess`
#'     (the lowest incremental ESS of this chunk's steps), `ess` (ESS of the particle weights after
#'     the chunk), and the cumulative cost so far: `seconds`, `gradient_evaluations` and
#'     `likelihood_evaluations` (per observation and particle);}
#'   \item{`state`}{the sampler state for continuing on new data: `particles` (a `particles` x
#'     parameters matrix), `log_weights` and `n`;}
#'   \item{`settings`, `call`, `seed`, `initial_seed`, `final_seed`}{how it was run, with R's RNG
#'     state (`.Random.seed`) before and after;}
#'   \item{`seconds`, `gradient_evaluations`, `likelihood_evaluations`}{the total cost;}
#'   \item{`model`}{the model.}
#'   }
#'   Use [log_evidence()], [as.data.frame()] (the trajectory), `print()` and `summary()`.
#' @references Cameron, S. A., Eggers, H. C. and Kroon, S. (2019). Stochastic Gradient Annealed
#'   Importance Sampling for Efficient Online Marginal Likelihood Estimation. *Entropy* 21(11),
#'   1109. \doi{10.3390/e21111109}
#' @export
#' @examples
#' data <- simulate_linear_regression(5000, seed = 1)
#' model <- linear_regression(y ~ ., data)
#' fit <- sgais(model, seed = 2)
#' fit
#' exact_log_evidence(model)
#' tail(as.data.frame(fit))
sgais <- function(model, particles = 10, batch_size = 500, target_ess = 5, sghmc_steps = 20,
                  learning_rate = 0.1, momentum_decay = 0.2, resample = FALSE,
                  progress = default_progress(), seed = NULL, chunk_size = batch_size) {
  call <- sys.call()
  check_model(model, call)
  settings <- c(
    check_anneal_settings(particles, target_ess, sghmc_steps, learning_rate, momentum_decay,
                          resample, call),
    list(
      batch_size = check_whole_number(batch_size, "batch_size", 1, call),
      chunk_size = check_whole_number(chunk_size, "chunk_size", 1, call)
    )
  )
  particles <- settings$particles
  progress <- check_flag(progress, "progress", call)
  check_seed(seed, call)

  run <- seeded_run(seed, {
    state <- list(theta = model_prior_draw(model, particles), logw = numeric(particles), n = 0L)
    sgais_advance(model, state, model$n, settings, progress)
  })
  new_sgais_fit(model, run, settings, call, seed)
}

# Adds observations state$n + 1, ..., n_end to a run, in slices of about `budget` seconds (see
# run_in_slices()). Returns the new state and the trace of the chunks added.
sgais_advance <- function(model, state, n_end, settings, progress,
                          budget = if (progress) 0.25 else Inf) {
  slice <- function(state, budget) {
    res <- .Call(C_ffi_sgais_run, model, state$theta, state$logw, state$n, n_end, settings, budget)
    k <- length(res$n)
    new <- list(theta = res$theta, logw = res$logw, n = res$n[k], log_z = res$log_evidence[k])
    res$theta <- res$logw <- NULL
    list(state = new, trace = as.data.frame(res))
  }
  run_in_slices(
    slice, state,
    finished = function(state) state$n >= n_end,
    progress = progress,
    budget = budget,
    format = paste("SGAIS {cli::pb_bar} {cli::pb_current}/{cli::pb_total} observations",
                   "| log Z {label} | ETA {cli::pb_eta}"),
    total = n_end,
    position = function(state) state$n,
    status = function(state) sprintf("%.6g", state$log_z)
  )
}

new_sgais_fit <- function(model, run, settings, call, seed) {
  trace <- run$trace
  cost <- c("seconds", "gradient_evaluations", "likelihood_evaluations")
  trajectory <- data.frame(
    n = trace$n,
    log_evidence = trace$log_evidence,
    log_evidence_per_obs = trace$log_evidence / trace$n,
    annealing_steps = trace$annealing_steps,
    min_ess = trace$min_ess,
    ess = trace$ess,
    lapply(trace[cost], cumsum)
  )
  new_evidence_fit(
    method = "SGAIS",
    log_evidence = trajectory$log_evidence[nrow(trajectory)],
    model = model,
    run = run,
    settings = settings,
    call = call,
    seed = seed,
    trajectory = trajectory,
    state = list(particles = particle_matrix(run, model), log_weights = run$state$logw, n = run$state$n),
    class = "sgais_fit"
  )
}

#' @export
format.sgais_fit <- function(x, ...) {
  tr <- x$trajectory
  s <- x$settings
  c(
    NextMethod(),
    sprintf("  settings:  %d particles, batch %s, chunk %s, target ESS %s, %d SGHMC steps, learning rate %s, momentum decay %s%s",
            s$particles, format_count(s$batch_size), format_count(s$chunk_size), format(s$target_ess),
            s$sghmc_steps, format(s$learning_rate), format(s$momentum_decay),
            if (s$resample) ", resampling" else ""),
    sprintf("  annealing: %s chunks, %s steps (at most %d in a chunk), lowest ESS %.2f, final weight ESS %.2f",
            format_count(nrow(tr)), format_count(sum(tr$annealing_steps)), max(tr$annealing_steps),
            min(tr$min_ess), tr$ess[nrow(tr)])
  )
}

#' @export
as.data.frame.sgais_fit <- function(x, ...) {
  x$trajectory
}

#' @export
summary.sgais_fit <- function(object, ...) {
  tr <- object$trajectory
  out <- NextMethod()
  # the trajectory at up to 8 roughly log-spaced points, always including the last
  at <- unique(c(round(exp(seq(0, log(nrow(tr)), length.out = 8))), nrow(tr)))
  shown <- tr[at, c("n", "log_evidence", "log_evidence_per_obs", "annealing_steps", "min_ess",
                    "seconds")]
  exact <- tryCatch(exact_log_evidence(object$model, n = shown$n), sgais_error = function(e) NULL)
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
    final_ess = tr$ess[nrow(tr)]
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
    sprintf("Annealing: %s chunks, %s steps (mean %.1f, most %d, in the chunk ending at n = %s);",
            format_count(a[["chunks"]]), format_count(a[["steps"]]), a[["mean_steps"]],
            as.integer(a[["max_steps"]]), format_count(a[["max_steps_at"]])),
    sprintf("  lowest incremental ESS %.2f, final weight ESS %.2f of %d particles.",
            a[["lowest_ess"]], a[["final_ess"]], x$settings$particles),
    "",
    "Trajectory:",
    utils::capture.output(print(x$trajectory, digits = 8, row.names = FALSE))
  )
}
