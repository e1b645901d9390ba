#' Nested sampling with constrained SGHMC
#'
#' Estimates the log evidence \eqn{\log p(y)} of a model by nested sampling (Skilling 2006), the
#' reference method of Cameron, Eggers and Kroon (2019, Section 6.1 and Appendix A.1).
#' `live_points` points are drawn from the prior. Each iteration \eqn{i} removes the live point of
#' lowest likelihood \eqn{L^*_i}, gives it the prior volume \eqn{X_i = e^{-i/M}} and weight
#' \eqn{X_{i-1} - X_i}, and adds \eqn{L^*_i (X_{i-1} - X_i)} to \eqn{\hat Z} (in log space, with
#' the information \eqn{H} by Skilling's update). The point is replaced by a copy of another
#' live point moved on the prior within the constraint \eqn{L(\theta) > L^*_i}{L(theta) > L*}.
#'
#' The tuning is set by `control` ([nested_control()]). The default preset, `"robust"`, moves the
#' copy by a Metropolis random walk on the prior restricted to \eqn{L > L^*} (exactly invariant
#' for it), with proposals in the metric of the live points' covariance and a scale adapted
#' towards 50% acceptance, as long as it takes to travel a fixed distance in live-point widths
#' (the trace's `steps`); for models that provide them (Gaussian mixtures) `jumps` proposals
#' between modes follow the walk. `nested_control("paper")` is the paper's move, exactly:
#' `sghmc_steps` SGHMC steps with a fixed step `learning_rate`, the velocity reflected off the
#' contour. Its step becomes as large as the constrained region late in the run, and its
#' \eqn{\log \hat Z}{log Z-hat} comes out too high: use it to reproduce the paper.
#'
#' The run stops when the largest possible remaining contribution, \eqn{\max L_{live} X_i}, is
#' below `tolerance` times \eqn{\hat Z}; the live points then add \eqn{L_j X_i / M} each. The
#' standard error of \eqn{\log \hat Z} is \eqn{\sqrt{H / M}} (`log_evidence_sd`, and a single
#' run's `log_evidence_se`). With `replicates` > 1 the replicates' \eqn{\log \hat Z} are
#' averaged (not their \eqn{\hat Z}, as [sgais()] and [ais()] average theirs: a run's
#' \eqn{\log \hat Z} is unbiased in the log, to first order), with standard error
#' \eqn{sd / \sqrt R}{sd / sqrt(R)} (`log_evidence_se`), or
#' \eqn{\sqrt{\bar H / (M R)}}{sqrt(mean(H) / (M R))} where that is larger.
#'
#' Each likelihood evaluation reads all the data, on [sgais_threads()] threads in a fixed order,
#' so the estimate is the same on any number of threads; random numbers are drawn as in
#' [sgais()] (section "Random numbers and threads"). Measurements: `vignette("validation")`.
#'
#' @inheritParams sgais
#' @param model A model: a built-in one such as [linear_regression()], or your own from
#'   [custom_model()] or [compiled_model()].
#' @param ... Settings that replace those of `control`, by name (e.g. `live_points = 200`); see
#'   [nested_control()].
#' @param control The tuning: [nested_control()] (`"robust"`, the default) or
#'   `nested_control("paper")`.
#' @param progress Show a progress bar with an ETA. Defaults to the option `sgais.progress`, or
#'   else [interactive()]. The bar counts iterations out of a predicted total; its label shows
#'   `dlogz`, by how much the live points could still raise \eqn{\log \hat Z}{log Z-hat} (as
#'   dynesty reports it), against its target \eqn{\log(1 + }{log(1 + }`tolerance`\eqn{)}{)}.
#'   With `replicates` > 1 each replicate has its bar, under the sequential [future::plan()] only.
#' @return An object of class `c("sgais_ns_fit", "sgais_evidence")`, a list with
#'   \describe{
#'   \item{`log_evidence`, `log_evidence_sd`, `information`}{\eqn{\log \hat Z}, its standard
#'     error \eqn{\sqrt{H/M}} and the information \eqn{H} (nats);}
#'   \item{`log_evidence_se`, `replicate_log_evidence`, `replicate_sd`,
#'     `diagnostics`}{the standard error of the estimate (see above), each replicate's
#'     \eqn{\log \hat Z} and their sd, and per-replicate diagnostics;}
#'   \item{`iterations`, `converged`}{the number of iterations and whether `tolerance` was
#'     reached (rather than `max_iterations`);}
#'   \item{`trace`}{a data frame with one row per iteration: `iteration`, `log_likelihood`
#'     (\eqn{\log L^*_i}), `log_volume` (\eqn{\log X_i}), `log_evidence` (so far), `ess` (of
#'     the posterior weights of the points removed so far), `steps` (SGHMC steps or random-walk
#'     proposals made for the new point), `rejected_steps` (steps that would have left the
#'     constrained region), `jumps_accepted` (of the `jumps` proposals after the move) and the
#'     cumulative `seconds`, `gradient_evaluations` and `likelihood_evaluations` (per
#'     observation); [as.data.frame()] gives it with the columns every fit shares first (see
#'     [sgais_evidence]);}
#'   \item{`dead`}{a matrix with one row per removed point and then the final live points: the
#'     parameters, `log_likelihood` and `log_weight` (\eqn{\log(L_i w_i)}, unnormalised posterior
#'     weight); see [posterior_samples()];}
#'   \item{`method`, `n`, `settings`, `call`, `seed`, `initial_seed`, `final_seed`, `seconds`,
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
#' fit <- nested_sampling(model, seed = 2)
#' fit
#' exact_log_evidence(model)
#' head(posterior_samples(fit, 5))
#' nested_sampling(model, control = nested_control("paper", live_points = 10), seed = 2)
nested_sampling <- function(model, ..., control = nested_control(), replicates = 1,
                            progress = default_progress(), seed = NULL) {
  call <- sys.call()
  settings <- ns_settings(model, control, list(...), "nested_sampling", call)
  replicates <- check_whole_number(replicates, "replicates", 1, call)
  check_run_size(replicates, settings, model, "nested_sampling", call)
  check_metric_size(settings, model, call)
  progress <- check_flag(progress, "progress", call)
  seed <- check_seed(seed, call)
  cs <- c_settings(settings)
  M <- settings$live_points

  runs <- run_replicates(replicates, seed, progress, function(progress, label, r) {
    state <- ns_start_state(model, M)
    run_in_slices(
      function(state, budget) nested_slice(model, state, cs, budget),
      state,
      finished = function(state) state$status != 0L,
      progress = progress,
      format = paste0("Nested sampling ", label,
                      "{cli::pb_bar} {cli::pb_percent} | ETA {cli::pb_eta} | {label}"),
      total = 1000,
      position = function(state) floor(1000 * ns_progress(state, settings, model$dim)),
      status = function(state) ns_status(state, settings, model$dim)
    )
  })
  fit <- new_sgais_ns_fit(model, runs, settings, call, seed)
  if (!fit$converged) {
    warning(sprintf(paste(
      "nested sampling reached `max_iterations` = %s before the remaining evidence fell below",
      "`tolerance`; the estimate adds the live points but may be inaccurate."),
      format_count(settings$max_iterations)), call. = FALSE)
  }
  warn_if_unreliable(fit, what = "live_points")
}

# The settings of nested_sampling() and online_nested_sampling() (`method`) for `model`, which
# must hold all its rows and no conflicting prior: the control's with those given in `...`, and
# a walk's most proposals, when NULL, 100 per parameter (at least 250).
ns_settings <- function(model, control, dots, method, call) {
  check_all_rows(model, call)
  check_prior_conflict(model, call)
  settings <- control_settings(control, dots, method, call)
  settings$max_walk_steps <- settings$max_walk_steps %||% max(250L, 100L * model$dim)
  settings
}

# The state of a nested-sampling run before its first iteration: M live points from the prior
# (their log-likelihoods are computed by the first slice).
ns_start_state <- function(model, M) {
  list(theta = model_prior_draw(model, M), loglik = numeric(0), iteration = 0, log_z = -Inf,
       information = 0, status = 0L, walk_scale = 0, walk_jump = 0, key = rng_key())
}

# Where a nested-sampling run stands against its stopping rule, for its progress bar. The run
# stops when the most the live points can still add, L_max X_i, falls below `tolerance` times
# Z-hat (src/nested_sampling.c), i.e. when r = log(L_max X_i / Z-hat) < log(tolerance).
# Returns `dlogz` = log(1 + L_max X_i / Z-hat), by how much log Z-hat could still grow (as
# dynesty reports it), against its `target` log(1 + tolerance); and `total`, the number of
# iterations the run is predicted to take: those done plus M times the log volume still to
# shrink, as follows. Late in a run Z-hat and L_max have settled and r falls by 1 per unit of
# -log X. Before that, while the constrained region is still wider than the posterior, r is
# about the spread of log L over the region, which for a likelihood about Gaussian in d
# parameters is proportional to X^(2/d): r falls by the factor e^(2/d) per unit of -log X, until
# its rate 2 r / d slows to 1, at r = d / 2. So the log volume still to shrink is
# (d / 2) log(2 r / d) + d / 2 - log(tolerance) while r > d / 2, and r - log(tolerance) after.
# The total is capped by `max_iterations`, where the run stops too. The first prediction is
# high and settles as the run goes on.
ns_outlook <- function(state, settings, dim) {
  M <- settings$live_points
  tol <- settings$tolerance
  i <- state$iteration
  r <- if (length(state$loglik) && i > 0) max(state$loglik) - i / M - state$log_z else Inf
  if (is.na(r)) r <- Inf
  half <- dim / 2
  togo <- if (r > half) half * log(r / half) + half - log(tol) else max(0, r - log(tol))
  list(dlogz = if (r > 0) r + log1p(exp(-r)) else log1p(exp(r)), target = log1p(tol),
       total = min(i + M * togo, settings$max_iterations))
}

# How far a nested-sampling run is, in [0, 1]: iterations done out of the predicted total
# (ns_outlook()); 0 before the first iteration, 1 once the run has stopped.
ns_progress <- function(state, settings, dim) {
  if (state$status != 0L) return(1)
  total <- ns_outlook(state, settings, dim)$total
  if (!(state$iteration > 0) || !is.finite(total)) return(0)
  min(1, state$iteration / total)
}

# The label of a nested-sampling progress bar: the iteration out of the predicted total, dlogz
# against its target and log Z-hat so far.
ns_status <- function(state, settings, dim) {
  o <- ns_outlook(state, settings, dim)
  running <- state$status == 0L && is.finite(o$total)
  total <- if (running) sprintf("/~%s", format_count(o$total)) else ""
  sprintf("iteration %s%s, dlogz %.3g %s %.3g, log Z %.6g", format_count(state$iteration), total,
          o$dlogz, if (o$dlogz > o$target) ">" else "<=", o$target, state$log_z)
}

# The chunk and reservoir parts of a nested-sampling state (src/nested_sampling.c,
# chunk_from_r()): the prior holds observations 1..prior_n, the likelihood prior_n + 1..n_end,
# the SGHMC move's mini-batches are of `batch_size` earlier observations, `chunk` numbers the
# chunk's random streams, and a reservoir of `reservoir_size` points (0: none) keeps a weighted
# sample of the removed points. Plain nested sampling is one chunk of every observation, without
# a reservoir; online_nested_sampling() runs one per chunk of the data.
ns_chunk_fields <- function(model, prior_n = 0, n_end = model$n, batch_size = 0L, chunk = 0L,
                            reservoir_size = 0L) {
  list(prior_n = prior_n, n_end = n_end, batch_size = as.integer(batch_size),
       chunk = as.integer(chunk), reservoir = matrix(0, model$dim, reservoir_size),
       reservoir_log_weight = numeric(reservoir_size), reservoir_certain = logical(reservoir_size),
       reservoir_filled = 0L, reservoir_log_ordinary = -Inf)
}

nested_slice <- function(model, state, settings, budget) {
  chunk <- ns_chunk_fields(model)
  state[setdiff(names(chunk), names(state))] <- chunk[setdiff(names(chunk), names(state))]
  res <- with_model_errors(.Call(C_ffi_nested_sampling_run, model, state, settings, budget))
  trace <- as.data.frame(res$trace)
  trace$theta <- t(res$dead_theta)
  list(
    state = list(theta = res$theta, loglik = res$loglik, iteration = res$iteration_end,
                 log_z = res$log_z, information = res$information, status = res$status,
                 walk_scale = res$walk_scale, walk_jump = res$walk_jump, key = state$key,
                 prior_n = state$prior_n, n_end = state$n_end, batch_size = state$batch_size,
                 chunk = state$chunk, reservoir = res$reservoir,
                 reservoir_log_weight = res$reservoir_log_weight,
                 reservoir_certain = res$reservoir_certain, reservoir_filled = res$reservoir_filled,
                 reservoir_log_ordinary = res$reservoir_log_ordinary),
    trace = trace
  )
}

new_sgais_ns_fit <- function(model, runs, settings, call, seed) {
  M <- settings$live_points
  last <- vapply(runs, function(r) r$state$log_z, numeric(1))
  info <- vapply(runs, function(r) r$state$information, numeric(1))
  combined <- replicate_summary(last, unbiased = "log", predicted_sd = information_sd(info, M))
  # one replicate's trace; all replicates' dead points, each replicate's weights rescaled to sum
  # to the combined Z-hat, so that each replicate's posterior has the same share (their Z-hat_r
  # differ by the noise of the volumes, not by what they say about the posterior)
  pieces <- lapply(seq_along(runs), function(r) {
    all <- runs[[r]]$trace
    it <- !is.na(all$iteration)
    trace <- data.frame(
      all[it, c("iteration", "log_likelihood", "log_volume", "log_evidence")],
      ess = running_ess(all$log_weight)[it],
      all[it, c("steps", "rejected_steps", "jumps_accepted")],
      lapply(all[c("seconds", "gradient_evaluations", "likelihood_evaluations")],
             function(x) cumsum(x)[it])
    )
    rownames(trace) <- NULL
    dead <- cbind(all$theta, log_likelihood = all$log_likelihood,
                  log_weight = all$log_weight - (if (length(runs) > 1L) last[r] - combined$log_evidence else 0))
    colnames(dead) <- c(model$parameter_names, "log_likelihood", "log_weight")
    list(trace = trace, dead = dead)
  })
  new_sgais_evidence("Nested sampling", model, combine_runs(runs), settings, call, seed, c(
    list(
      log_evidence_sd = information_sd(mean(info), M * length(runs)),
      information = mean(info),
      iterations = sum(vapply(runs, function(r) r$state$iteration, numeric(1))),
      converged = all(vapply(runs, function(r) r$state$status == 1L, logical(1))),
      trace = pieces[[1]]$trace,
      dead = do.call(rbind, lapply(pieces, `[[`, "dead")),
      diagnostics = ns_diagnostics(last, info, M)
    ),
    combined
  ), "sgais_ns_fit")
}

fit_fields.sgais_ns_fit <- function(x) {
  s <- x$settings
  c(settings = sprintf("%d live points, %s, tolerance %s", s$live_points,
                       format_ns_move(s, x$trace$steps), format(s$tolerance)),
    sampling = format_ns_sampling(x, "stopped at max_iterations"))
}

# The replicates' diagnostics of a nested-sampling fit (plain or online), from their log
# evidence and information: the standard error sqrt(H / M) each predicts (warn_if_unreliable()).
ns_diagnostics <- function(log_evidence, information, M) {
  data.frame(replicate = seq_along(log_evidence), log_evidence = log_evidence,
             predicted_sd = information_sd(information, M), information = information)
}

# The standard error sqrt(H / M) of log Z-hat from the information H and M live points. H is a
# Kullback-Leibler divergence, so at least 0; Skilling's update can round it below 0 where the
# likelihood is flat over the prior (a mixture's reference on separated clusters, which the
# likelihood reweighted by prior / q0 makes nearly constant).
information_sd <- function(information, M) sqrt(pmax(information, 0) / M)

# The field of print() on a nested-sampling fit's iterations and information (plain or online).
format_ns_sampling <- function(x, unconverged) {
  sprintf("%s iterations%s, information H = %.2f nats, sd(log Z) = sqrt(H / M) = %.4f",
          format_count(x$iterations), if (x$converged) "" else sprintf(" (%s)", unconverged),
          x$information, x$log_evidence_sd)
}

# A summary of a nested-sampling fit (plain or online): the parent's, with the standard error,
# the information and the iterations, and the class `summary.<class>` first.
summary_ns <- function(summary, object, class) {
  summary$log_evidence_sd <- object$log_evidence_sd
  summary$information <- object$information
  summary$iterations <- object$iterations
  class(summary) <- c(class, class(summary))
  summary
}

# The effective sample size (sum w)^2 / sum w^2 of the first k weights exp(lw), for every k,
# accumulated with a running maximum so that nothing overflows or underflows to 0 / 0.
running_ess <- function(lw) {
  out <- numeric(length(lw))
  m <- -Inf
  s1 <- s2 <- 0
  for (i in seq_along(lw)) {
    if (!(lw[i] > -Inf)) { # a point of zero likelihood adds no weight
      out[i] <- if (s2 > 0) s1^2 / s2 else 0
      next
    }
    if (lw[i] > m) {
      s1 <- s1 * exp(m - lw[i])
      s2 <- s2 * exp(2 * (m - lw[i]))
      m <- lw[i]
    }
    s1 <- s1 + exp(lw[i] - m)
    s2 <- s2 + exp(2 * (lw[i] - m))
    out[i] <- s1^2 / s2
  }
  out
}

# How new live points were made, for print(): the random walk's proposals (with the range used
# when their number adapted), or the SGHMC move's settings.
format_ns_move <- function(s, steps) {
  if (s$move != "walk") return(format_settings(s))
  n <- if (!is.null(s$walk_steps)) {
    sprintf("%d proposals", s$walk_steps)
  } else if (length(steps)) {
    sprintf("%s proposals (median %s, adapted to travel a fixed distance)",
            paste(unique(range(steps)), collapse = "-"), format(stats::median(steps)))
  } else {
    "proposals adapted to travel a fixed distance"
  }
  sprintf("preset \"%s\": random walk in the live points' metric, %s", s$preset, n)
}

fit_rows.sgais_ns_fit <- function(x) data.frame(n = rep(x$n, nrow(x$trace)), x$trace)

#' @export
summary.sgais_ns_fit <- function(object, ...) {
  object <- validate_sgais_evidence(object, sys.call())
  summary_ns(NextMethod(), object, "summary.sgais_ns_fit")
}

#' @export
format.summary.sgais_ns_fit <- function(x, ...) {
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
#' The draws can only be as varied as the weighted points they come from. When the weights'
#' effective sample size (Kish's, \eqn{(\sum w)^2 / \sum w^2}) is below
#' `min(n, 10)`, the draws repeat fewer than ten effectively distinct points and a warning of
#' class `sgais_warning_low_ess` says so: fit with more `particles` (and, for [ais()] and
#' [sgais()], resampling, as their robust presets do), or draw from [nested_sampling()], whose
#' dead points are many.
#'
#' The coefficients are on the data's scale, as [stats::glm()] reports them: where a model
#' centres its covariates (the regressions' default prior, `"autoscale"`, and [g_prior()]), it
#' samples the intercept at the covariates' means, and the draws give the intercept at
#' \eqn{x = 0}{x = 0} instead, \eqn{b - \sum_j \bar x_j w_j}{b - sum_j mean(x_j) w_j}.
#'
#' @param x A fit.
#' @param n Number of draws.
#' @param ... Unused.
#' @param seed Optional seed; the caller's random stream is left as it was.
#' @return A matrix with `n` rows and one column per parameter, with the attribute `ess`, the
#'   effective sample size of the weights it was drawn from.
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(200, seed = 1))
#' fit <- nested_sampling(model, live_points = 10, seed = 1)
#' colMeans(posterior_samples(fit, 1000, seed = 1))
posterior_samples <- function(x, n = 1000, ..., seed = NULL) {
  UseMethod("posterior_samples")
}

#' @export
posterior_samples.default <- function(x, n = 1000, ..., seed = NULL) {
  abort_wrong_object(x, "x", takes_fit, sys.call())
}

#' @rdname posterior_samples
#' @export
posterior_samples.sgais_evidence <- function(x, n = 1000, ..., seed = NULL) {
  call <- sys.call()
  check_dots_empty(call, c("x", "n", "seed"), ...)
  x <- validate_sgais_evidence(x, call)
  if (is_number(n) && is.finite(n) && n > 0) {
    check_request_size(8 * n * x$model$dim, sprintf("%s draws of %d parameters",
                                                    format_count(n), x$model$dim), call)
  }
  n <- check_whole_number(n, "n", 0, call)
  seed <- check_seed(seed, call)
  p <- weighted_particles(x)
  ess <- weight_ess(p$logw)
  if (n > 0 && ess < min(n, 10)) {
    warn(sprintf(paste(
      "The %d draws come from weighted points whose effective sample size is %.1f (of %d):",
      "they repeat few distinct points. Fit with more `particles` (with resampling, as the",
      "robust presets do), or draw from `nested_sampling()`."), n, ess, nrow(p$theta)),
      call, "sgais_warning_low_ess")
  }
  out <- uncentred_draws(x$model, with_seed(seed, draw_weighted(p$theta, p$logw, n)))
  attr(out, "ess") <- ess
  out
}

# Draws of a model's parameters with each intercept at x = 0: a model whose design is centred
# (`spec$center`, the column means of the covariates) samples it at the covariates' means, and
# b - sum_j center_j w_j is the intercept of the uncentred design. Softmax regression has a block
# of coefficients per class, each with its intercept.
uncentred_draws <- function(model, draws) {
  center <- model$spec$center
  if (is.null(center) || all(center == 0) || !nrow(draws)) return(draws)
  p <- length(center)
  starts <- which(startsWith(model$parameter_names, "(Intercept)"))
  for (s in starts) {
    block <- s - 1L + seq_len(p)
    draws[, s] <- draws[, s] - drop(draws[, block, drop = FALSE] %*% center)
  }
  draws
}

draw_weighted <- function(theta, logw, n) {
  w <- exp(logw - max(logw))
  rows <- sample.int(nrow(theta), n, replace = TRUE, prob = w)
  out <- theta[rows, , drop = FALSE]
  rownames(out) <- NULL
  out
}
