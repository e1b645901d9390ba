#' Nested sampling with constrained SGHMC
#'
#' Estimates the log evidence \eqn{\log p(y)} of a model by nested sampling (Skilling 2006), the
#' reference method of Cameron, Eggers and Kroon (2019, Section 6.1 and Appendix A.1).
#' `live_points` points are drawn from the prior. Each iteration \eqn{i} removes the live point of
#' lowest likelihood \eqn{L^*_i}, gives it the prior volume \eqn{X_i = e^{-i/M}} and weight
#' \eqn{X_{i-1} - X_i}, and adds \eqn{L^*_i (X_{i-1} - X_i)} to \eqn{\hat Z} (in log space, with
#' the information \eqn{H} by Skilling's update). The point is replaced by a copy of another
#' random live point (itself when `live_points` = 1) moved by `sghmc_steps` SGHMC steps on the
#' prior, with step `learning_rate` and friction `momentum_decay`, under the constraint
#' \eqn{L(\theta) > L^*_i}{L(theta) > L*}: the exact full-data likelihood is checked after every
#' step, and a step that would leave the constrained region is undone and the velocity reflected
#' off the contour, \eqn{v \leftarrow v - 2 (v \cdot \hat n) \hat n}{v <- v - 2 (v.n) n} with
#' \eqn{\hat n}{n} the unit gradient of the log-likelihood (as in Galilean Monte Carlo).
#'
#' The run stops when the largest possible remaining contribution, \eqn{\max L_{live} X_i}, is
#' below `tolerance` times \eqn{\hat Z}; the live points then add \eqn{L_j X_i / M} each. The
#' standard error of \eqn{\log \hat Z} is \eqn{\sqrt{H / M}}. The defaults are the paper's (2 live
#' points for speed); more live points reduce the error in proportion to \eqn{1/\sqrt M}. The
#' discretisation of SGHMC slightly undersamples near the contour (paper Appendix A.1), so new
#' points lie at too high a likelihood and \eqn{\log \hat Z} is overestimated. The bias grows with
#' `learning_rate` relative to the posterior width: on the paper's linear regression with the
#' default settings it is about +5 to +10 nats at 1,000 observations and +20 to +30 nats at
#' 10,000 to 100,000, larger than \eqn{\sqrt{H / M}}. For an accurate reference on a data set
#' of size n, use more live points and a smaller `learning_rate` (e.g. 20 live points, 200 steps,
#' `learning_rate = 0.04 / n`).
#'
#' @inheritParams sgais
#' @param live_points Number of live points \eqn{M} (at least 1).
#' @param sghmc_steps SGHMC steps for each new live point.
#' @param learning_rate SGHMC step \eqn{\eta} on the prior (not divided by n: the prior
#'   potential does not grow with the data).
#' @param momentum_decay SGHMC friction \eqn{\alpha} in (0, 1].
#' @param tolerance Stop when the remaining contribution is below this fraction of \eqn{\hat Z}.
#' @param max_iterations Stop (with a warning) after this many iterations.
#' @return An object of class `c("nested_fit", "evidence_fit")`, a list with
#'   \describe{
#'   \item{`log_evidence`, `log_evidence_sd`, `information`}{\eqn{\log \hat Z}, its standard
#'     error \eqn{\sqrt{H/M}} and the information \eqn{H} (nats);}
#'   \item{`iterations`, `converged`}{the number of iterations and whether `tolerance` was
#'     reached (rather than `max_iterations`);}
#'   \item{`trace`}{a data frame with one row per iteration: `iteration`, `log_likelihood`
#'     (\eqn{\log L^*_i}), `log_volume` (\eqn{\log X_i}), `log_evidence` (so far),
#'     `reflections` (off the contour while making the new point) and the cumulative
#'     `gradient_evaluations` and `likelihood_evaluations` (per observation);}
#'   \item{`dead`}{a matrix with one row per removed point and then the final live points: the
#'     parameters, `log_likelihood` and `log_weight` (\eqn{\log(L_i w_i)}, unnormalised posterior
#'     weight); see [posterior_samples()];}
#'   \item{`settings`, `call`, `seed`, `initial_seed`, `final_seed`, `seconds`,
#'     `gradient_evaluations`, `likelihood_evaluations`, `model`}{as for [sgais()].}
#'   }
#' @references Skilling, J. (2006). Nested sampling for general Bayesian computation.
#'   *Bayesian Analysis* 1(4), 833-859.
#'
#'   Cameron, S. A., Eggers, H. C. and Kroon, S. (2019). Stochastic Gradient Annealed
#'   Importance Sampling for Efficient Online Marginal Likelihood Estimation. *Entropy* 21(11),
#'   1109. \doi{10.3390/e21111109}
#' @seealso [sgais()], [ais()], [posterior_samples()]
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(500, seed = 1))
#' fit <- nested_sampling(model, live_points = 10, seed = 2)
#' fit
#' exact_log_evidence(model)
#' head(posterior_samples(fit, 5))
nested_sampling <- function(model, live_points = 2, sghmc_steps = 20, learning_rate = 1e-3,
                            momentum_decay = 0.1, tolerance = 0.01, max_iterations = 1e6,
                            progress = default_progress(), seed = NULL) {
  call <- sys.call()
  check_model(model, call)
  settings <- list(
    live_points = check_whole_number(live_points, "live_points", 1, call),
    sghmc_steps = check_whole_number(sghmc_steps, "sghmc_steps", 0, call),
    learning_rate = check_positive(learning_rate, "learning_rate", call),
    momentum_decay = check_half_open(momentum_decay, "momentum_decay", 0, 1, call),
    tolerance = check_positive(tolerance, "tolerance", call),
    max_iterations = check_whole_number(max_iterations, "max_iterations", 1, call)
  )
  progress <- check_flag(progress, "progress", call)
  check_seed(seed, call)
  M <- settings$live_points

  run <- seeded_run(seed, {
    state <- list(theta = model_prior_draw(model, M), loglik = numeric(0), iteration = 0,
                  log_z = -Inf, information = 0, status = 0L)
    run_in_slices(
      function(state, budget) nested_slice(model, state, settings, budget),
      state,
      finished = function(state) state$status != 0L,
      progress = progress,
      format = "Nested sampling {cli::pb_spin} {label} | {cli::pb_elapsed}",
      total = NA,
      position = function(state) state$iteration,
      status = function(state) sprintf("iteration %s, log Z %.6g",
                                       format_count(state$iteration), state$log_z)
    )
  })
  fit <- new_nested_fit(model, run, settings, call, seed)
  if (!fit$converged) {
    warning(sprintf(paste(
      "nested sampling reached `max_iterations` = %s before the remaining evidence fell below",
      "`tolerance`; the estimate adds the live points but may be inaccurate."),
      format_count(settings$max_iterations)), call. = FALSE)
  }
  fit
}

nested_slice <- function(model, state, settings, budget) {
  res <- .Call(C_ffi_nested_sampling_run, model, state, settings, budget)
  cols <- c("iteration", "log_likelihood", "log_volume", "log_weight", "log_evidence",
            "reflections", "gradient_evaluations", "likelihood_evaluations")
  trace <- as.data.frame(res[cols])
  trace$theta <- t(res$dead_theta)
  list(
    state = list(theta = res$theta, loglik = res$loglik, iteration = res$iteration_end,
                 log_z = res$log_z, information = res$information, status = res$status),
    trace = trace
  )
}

new_nested_fit <- function(model, run, settings, call, seed) {
  all <- run$trace
  st <- run$state
  it <- !is.na(all$iteration)
  trace <- data.frame(
    all[it, c("iteration", "log_likelihood", "log_volume", "log_evidence", "reflections")],
    lapply(all[c("gradient_evaluations", "likelihood_evaluations")], function(x) cumsum(x)[it])
  )
  rownames(trace) <- NULL
  dead <- cbind(all$theta, log_likelihood = all$log_likelihood, log_weight = all$log_weight)
  colnames(dead) <- c(model$parameter_names, "log_likelihood", "log_weight")
  new_evidence_fit(
    method = "Nested sampling",
    log_evidence = st$log_z,
    model = model,
    run = run,
    settings = settings,
    call = call,
    seed = seed,
    log_evidence_sd = sqrt(st$information / settings$live_points),
    information = st$information,
    iterations = st$iteration,
    converged = st$status == 1L,
    trace = trace,
    dead = dead,
    class = "nested_fit"
  )
}

#' @export
format.nested_fit <- function(x, ...) {
  s <- x$settings
  c(
    NextMethod(),
    sprintf("  settings:  %d live points, %d SGHMC steps, learning rate %s, momentum decay %s, tolerance %s",
            s$live_points, s$sghmc_steps, format(s$learning_rate), format(s$momentum_decay),
            format(s$tolerance)),
    sprintf("  sampling:  %s iterations%s, information H = %.2f nats, sd(log Z) = sqrt(H / M) = %.4f",
            format_count(x$iterations), if (x$converged) "" else " (stopped at max_iterations)",
            x$information, x$log_evidence_sd)
  )
}

#' @export
as.data.frame.nested_fit <- function(x, ...) {
  x$trace
}

#' @export
summary.nested_fit <- function(object, ...) {
  out <- NextMethod()
  out$log_evidence_sd <- object$log_evidence_sd
  out$information <- object$information
  out$iterations <- object$iterations
  class(out) <- c("summary.nested_fit", class(out))
  out
}

#' @export
format.summary.nested_fit <- function(x, ...) {
  c(
    NextMethod(),
    sprintf("Nested sampling: %s iterations, information H = %.2f nats, sd(log Z) = %.4f.",
            format_count(x$iterations), x$information, x$log_evidence_sd)
  )
}

#' Posterior samples from a fit
#'
#' Draws parameter vectors from the posterior approximation of a fit, with replacement in
#' proportion to their importance weights: the dead points (and final live points) of
#' [nested_sampling()], or the final weighted particles of [sgais()] and [ais()] (few, so the
#' draws repeat them).
#'
#' @param x A fit.
#' @param n Number of draws.
#' @param ... Unused.
#' @return A matrix with `n` rows and one column per parameter.
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(200, seed = 1))
#' fit <- nested_sampling(model, live_points = 10, seed = 1)
#' colMeans(posterior_samples(fit, 1000))
posterior_samples <- function(x, n = 1000, ...) {
  UseMethod("posterior_samples")
}

#' @rdname posterior_samples
#' @export
posterior_samples.nested_fit <- function(x, n = 1000, ...) {
  n <- check_whole_number(n, "n", 0, sys.call())
  d <- x$dead
  draw_weighted(d[, x$model$parameter_names, drop = FALSE], d[, "log_weight"], n)
}

#' @rdname posterior_samples
#' @export
posterior_samples.evidence_fit <- function(x, n = 1000, ...) {
  n <- check_whole_number(n, "n", 0, sys.call())
  draw_weighted(x$state$particles, x$state$log_weights, n)
}

draw_weighted <- function(theta, logw, n) {
  w <- exp(logw - max(logw))
  rows <- sample.int(nrow(theta), n, replace = TRUE, prob = w)
  out <- theta[rows, , drop = FALSE]
  rownames(out) <- NULL
  out
}
