#' Online nested sampling: an evidence trajectory from nested sampling on chunks of the data
#'
#' Estimates the log evidence \eqn{\log p(y_1, \dots, y_n)}{log p(y_1..n)} at the end of every
#' chunk of `chunk_size` observations by nested sampling on one chunk at a time, with the
#' posterior of the earlier chunks as its prior (Cameron 2020, thesis Section 4.3). Chunk
#' \eqn{c} holds observations \eqn{b_{c-1} + 1, \dots, b_c}{b_(c-1) + 1, ..., b_c}; its prior
#' is \eqn{\pi_c(\theta) \propto p(\theta) \prod_{k \le b_{c-1}} p(y_k \mid \theta)}{pi_c(theta)
#' = p(theta) prod_(k <= b_(c-1)) p(y_k | theta)} and its likelihood
#' \eqn{L_c = \prod_{b_{c-1} < k \le b_c} p(y_k \mid \theta)}{L_c = prod over the chunk}, so its
#' nested-sampling estimate is of \eqn{\log Z_c = \log p(\text{chunk} \mid \text{earlier
#' data})}{log Z_c = log p(chunk | earlier data)}, the chunk's log predictive, and
#' \eqn{\log \hat Z(y_{1..b_c}) = \sum_{c' \le c} \log \hat Z_{c'}}{log Z(y_1..b_c) = the sum
#' of the log Z_c so far}. The first chunk's prior is the model's prior: with `chunk_size` at
#' least the number of observations the method is [nested_sampling()] exactly (the same draws,
#' the same estimate).
#'
#' @section Carrying the live points over:
#' Chunk \eqn{c}'s removed and final live points, weighted by their posterior weights (thesis
#' eq. 4.16), represent \eqn{\pi_{c+1}}{pi_(c+1)}. As the run goes each point is offered to a
#' reservoir of `live_points` points by Chao's (1982) weighted reservoir sampling, so memory does
#' not grow with the iterations, and the reservoir at the chunk's end is the next chunk's live
#' points. That is a sample without replacement with inclusion probabilities \eqn{\min(1, w_i /
#' \tau)}{min(1, w_i / tau)}, summing to `live_points`: distinct points, not independent draws,
#' which is the method's approximation. It matters little while the chunk's weighted points
#' have an effective sample size well above `live_points` (trajectory column `ess`).
#'
#' @section Moves:
#' A removed point is replaced, as in [nested_sampling()], by a copy of another live point
#' moved within the contour \eqn{L_c > L^*}{L_c > L*} by a move that leaves \eqn{\pi_c}{pi_c}
#' restricted to it invariant:
#' \describe{
#'   \item{`move = "walk"` (the robust preset)}{the Metropolis random walk of [nested_sampling()]
#'     on \eqn{\pi_c}{pi_c}, in the metric of the live points. It is exact, but each proposal
#'     evaluates \eqn{\pi_c}{pi_c}, which holds every earlier observation: its cost per proposal
#'     grows with the data, as plain nested sampling's does.}
#'   \item{`move = "sghmc"` (the thesis's)}{SGHMC steps on the mini-batch potential of
#'     `batch_size` earlier observations (all of them while there are at most `batch_size`),
#'     reflecting off the contour. Its cost per step does not grow with the data, but it
#'     inherits the reflected move's bias (see [nested_sampling()]) and the mini-batch gradient
#'     noise, and the bias adds up over the chunks to many nats: use it to see the thesis's
#'     method, not for numbers.}
#' }
#'
#' @section Restarts:
#' A mixture's posterior can change its mode as observations arrive, which a chunk whose prior is
#' the reservoir of the earlier posterior cannot follow; on a grid the run starts again from all
#' the observations so far (see [restarts]).
#'
#' @section Accuracy and cost:
#' Each chunk has its own run from its prior to its posterior, so on a fixed data set the
#' iterations add up to more than one plain run's; the method's value is the trajectory, the
#' evidence of every prefix \eqn{y_{1..b_c}}{y_1..b_c} in one pass, and the log predictive of
#' each chunk. Each chunk's \eqn{\log \hat Z_c}{log Z_c} has the standard error
#' \eqn{\sqrt{H_c / M}}{sqrt(H_c / M)}, with \eqn{H_c} the information the chunk adds; the
#' trajectory's `log_evidence_sd` adds them up, as if independent. With `replicates` > 1 the
#' trajectories are averaged in the log, with standard error sd / \eqn{\sqrt R}{sqrt(R)}, as
#' [nested_sampling()] combines its replicates. The benchmark `inst/bench/online-ns.R` compares
#' it with [nested_sampling()] on the same data.
#'
#' @inheritParams nested_sampling
#' @param ... Settings that replace those of `control`, by name (e.g. `live_points = 200`,
#'   `move = "sghmc"` or `chunk_size = 100`); see [online_nested_control()].
#' @param control The tuning, from [online_nested_control()]: [nested_control()]'s settings and
#'   `chunk_size` (observations per chunk; chunks end at its multiples and at the last
#'   observation; `NULL`, the default: a tenth of the observations, rounded up), `batch_size`
#'   (the mini-batch of earlier observations for `move = "sghmc"`, 500) and `restart_every`
#'   (the grid's ratio, see [restarts]).
#' @return An object of class `c("sgais_online_ns_fit", "sgais_evidence")`, a list with
#'   \describe{
#'   \item{`log_evidence`, `log_evidence_sd`, `information`}{\eqn{\log \hat Z} of all the data,
#'     its standard error \eqn{\sqrt{\sum_c H_c / M}} and the information \eqn{\sum_c H_c}
#'     (over the chunks since the last restart, which counts its own information);}
#'   \item{`trajectory`}{one row per chunk: `n`, `log_evidence`, `log_evidence_se` (from
#'     replicates, at least `log_evidence_sd`), `log_evidence_sd` (cumulative since the last
#'     restart), `log_evidence_per_obs`, `log_predictive` (the chunk's \eqn{\log \hat Z_c}),
#'     `log_predictive_per_obs`, `iterations`, `information` (\eqn{H_c}), `restarts`,
#'     `live_points`, `converged`, `ess` (of the chunk's posterior weights), `steps`,
#'     `rejected_steps`, and the cumulative costs `seconds`, `gradient_evaluations` and
#'     `likelihood_evaluations`; summed over replicates where they are costs, else averaged;}
#'   \item{`dead`}{the last chunk's removed points and final live points: a matrix of the
#'     parameters, `log_likelihood` (of the chunk) and `log_weight` (unnormalised posterior
#'     weight); see [posterior_samples()];}
#'   \item{`iterations`, `converged`, `settings` (with `chunk_size`, `batch_size` and
#'     `restart_every`), `call`, `seed`, `initial_seed`, `final_seed`, `seconds`,
#'     `gradient_evaluations`, `likelihood_evaluations`, `model`}{as for [nested_sampling()].}
#'   }
#' @references Cameron, S. A. (2020). *Efficient Bayesian Model Selection with Stochastic
#'   Gradient Methods* (MSc thesis, Stellenbosch University), Section 4.3.
#'
#'   Chao, M. T. (1982). A general purpose unequal probability sampling plan. *Biometrika*
#'   69(3), 653-656. \doi{10.1093/biomet/69.3.653}
#'
#'   Skilling, J. (2006). Nested sampling for general Bayesian computation. *Bayesian Analysis*
#'   1(4), 833-859.
#' @seealso [nested_sampling()], [sgais()] (the other estimator with a trajectory),
#'   [posterior_samples()], [sgais_plots]
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(400, seed = 1))
#' fit <- online_nested_sampling(model, chunk_size = 100, live_points = 30, seed = 1)
#' fit
#' fit$trajectory[c("n", "log_evidence", "log_predictive", "iterations")]
#' exact_log_evidence(model, n = fit$trajectory$n)
online_nested_sampling <- function(model, ..., control = online_nested_control(), replicates = 1,
                                   progress = default_progress(), seed = NULL) {
  call <- sys.call()
  settings <- ns_settings(model, control, list(...), "online_nested_sampling", call)
  settings$chunk_size <- settings$chunk_size %||% as.integer(ceiling(model$n / 10))
  policy <- restart_policy(model, settings)
  settings$restart_every <- policy$every
  replicates <- check_whole_number(replicates, "replicates", 1, call)
  check_run_size(replicates, settings, model, "online_nested_sampling", call)
  progress <- check_flag(progress, "progress", call)
  seed <- check_seed(seed, call)
  cs <- c_settings(settings)
  ends <- chunk_ends(model$n, settings$chunk_size)

  runs <- run_replicates(replicates, seed, progress, function(progress, label, r) {
    run_in_slices(
      function(state, budget) online_slice(model, state, cs, settings, ends, budget, policy),
      ons_chunk_state(model, settings, ends, 0L, model_prior_draw(model, settings$live_points),
                      rng_key()),
      finished = function(state) is.null(state$ns),
      progress = progress,
      format = paste0("Online nested sampling ", label,
                      "{cli::pb_bar} {cli::pb_percent} | ETA {cli::pb_eta} | {label}"),
      total = 1000,
      position = function(state) floor(1000 * ons_progress(state, settings, ends, model$dim)),
      status = function(state) ons_status(state, ends)
    )
  })
  fit <- new_sgais_online_ns_fit(model, runs, settings, call, seed)
  if (!fit$converged) {
    warning(sprintf(paste(
      "online nested sampling reached `max_iterations` = %s in %d of its chunks before the",
      "remaining evidence fell below `tolerance`; the estimate adds the live points but may be",
      "inaccurate."), format_count(settings$max_iterations), sum(!fit$trajectory$converged)),
      call. = FALSE)
  }
  warn_if_unreliable(fit, what = "live_points")
}

# The last observation of every chunk: multiples of chunk_size, and n.
chunk_ends <- function(n, chunk_size) {
  ends <- seq(chunk_size, n, by = chunk_size)
  if (!length(ends) || ends[length(ends)] != n) ends <- c(ends, n)
  as.double(ends)
}

# The state of an online run at the start of chunk c (0-based) of `ends`, from the live points
# `theta` (dim x M: prior draws for the first chunk and for a restart, the previous chunk's
# reservoir after): `ns`, the nested-sampling state of the chunk (nested_slice()), with a
# reservoir of M points, its prior the model's (`from_prior`: all the observations to the
# chunk's end) or the earlier chunks' posterior; `tally`, the chunk's running cost and weight
# sums; `run`, the trajectory's ledger at the chunk's start (restart_ledger()). walk_scale and
# walk_jump, adapted by the previous chunk, carry over (0: the C core's start values).
ons_chunk_state <- function(model, settings, ends, c, theta, key, walk = c(0, 0),
                            run = restart_ledger(), from_prior = c == 0L) {
  M <- settings$live_points
  ns <- c(
    list(theta = theta, loglik = numeric(0), iteration = 0, log_z = -Inf, information = 0,
         status = 0L, walk_scale = walk[1], walk_jump = walk[2], key = key),
    ns_chunk_fields(model, prior_n = if (from_prior) 0 else ends[c], n_end = ends[c + 1L],
                    batch_size = settings$batch_size, chunk = c, reservoir_size = M)
  )
  list(ns = ns, chunk = c, run = run,
       tally = list(seconds = 0, gradient_evaluations = 0, likelihood_evaluations = 0,
                    steps = 0, rejected_steps = 0, log_w = -Inf, log_w2 = -Inf, dead = NULL))
}

# Whether the current chunk of `state` is a restart: a chunk after the first whose prior is the
# model's.
ons_restarted <- function(state) state$chunk > 0L && state$ns$prior_n == 0

# The state for chunk c after the previous chunk's nested-sampling state `ns`: from its
# reservoir, or where the grid of `policy` calls for it, a restart (restart_on_grid()): nested
# sampling of all the observations so far from the model's prior.
ons_next_state <- function(model, settings, policy, ends, c, ns, run) {
  restart_on_grid(model, policy, run, ends[c + 1L], ns$key, settings$live_points,
    carry_on = function() {
      ons_chunk_state(model, settings, ends, c, ns$reservoir, ns$key,
                      c(ns$walk_scale, ns$walk_jump), run)
    },
    rerun = function(model, drawn) {
      ons_chunk_state(model, settings, ends, c, drawn$theta, drawn$key, run = run,
                      from_prior = TRUE)
    })
}

# One slice of an online run: continues the current chunk's nested sampling (nested_slice());
# when the chunk stops, returns its row of the trajectory as the trace and starts the next chunk
# (ons_next_state(); after the last chunk, sets `ns` to NULL and keeps the last chunk's removed
# points and final state in `last`). A chunk adds its log Z_c to the trajectory; a restart
# replaces the trajectory's log Z with its own estimate of all the observations so far, and its
# row's log predictive is the difference.
online_slice <- function(model, state, cs, settings, ends, budget,
                         policy = restart_policy(model, settings)) {
  res <- nested_slice(model, state$ns, cs, budget)
  tr <- res$trace
  t <- state$tally
  for (col in c("seconds", "gradient_evaluations", "likelihood_evaluations", "steps",
                "rejected_steps")) {
    t[[col]] <- t[[col]] + sum(tr[[col]])
  }
  t$log_w <- log_sum_exp(c(t$log_w, tr$log_weight))
  t$log_w2 <- log_sum_exp(c(t$log_w2, 2 * tr$log_weight))
  c <- state$chunk
  last <- c + 1L == length(ends)
  if (last) {
    t$dead <- rbind(t$dead, cbind(tr$theta, log_likelihood = tr$log_likelihood,
                                  log_weight = tr$log_weight))
  }
  ns <- res$state
  if (ns$status == 0L) {
    state$ns <- ns
    state$tally <- t
    return(list(state = state, trace = NULL))
  }
  was <- state$run
  restarted <- ons_restarted(state)
  run <- restart_ledger_add(was, ns$log_z, ns$information, ends[c + 1L], restarted)
  row <- data.frame(
    chunk = c + 1L, n = ends[c + 1L], log_evidence = run$log_z,
    log_predictive = run$log_z - was$log_z, information = ns$information,
    information_total = run$information, restarts = as.integer(restarted),
    iterations = ns$iteration, converged = ns$status == 1L,
    ess = if (t$log_w > -Inf) exp(2 * t$log_w - t$log_w2) else 0,
    steps = t$steps, rejected_steps = t$rejected_steps, seconds = t$seconds,
    gradient_evaluations = t$gradient_evaluations,
    likelihood_evaluations = t$likelihood_evaluations
  )
  next_state <- if (last) {
    list(ns = NULL, chunk = c, tally = t, last = ns, run = run)
  } else {
    ons_next_state(model, settings, policy, ends, c + 1L, ns, run)
  }
  list(state = next_state, trace = row)
}

# How far an online run is, in [0, 1]: chunks done plus the current chunk's progress
# (ns_progress()), out of the chunks.
ons_progress <- function(state, settings, ends, dim) {
  if (is.null(state$ns)) return(1)
  (state$chunk + ns_progress(state$ns, settings, dim)) / length(ends)
}

ons_status <- function(state, ends) {
  if (is.null(state$ns)) return(sprintf("%d chunks done", length(ends)))
  sprintf("chunk %d/%d (observations %s to %s%s), iteration %s", state$chunk + 1L, length(ends),
          format_count(state$ns$prior_n + 1), format_count(ends[state$chunk + 1L]),
          if (ons_restarted(state)) ", a restart" else "",
          format_count(state$ns$iteration))
}

new_sgais_online_ns_fit <- function(model, runs, settings, call, seed) {
  M <- settings$live_points
  R <- length(runs)
  traces <- lapply(runs, `[[`, "trace")
  n <- traces[[1]]$n
  each <- function(col) matrix(vapply(traces, `[[`, numeric(length(n)), col), nrow = length(n))
  log_z <- each("log_evidence")
  le <- rowMeans(log_z)
  info <- rowMeans(each("information"))
  lp <- rowMeans(each("log_predictive"))
  # each run's sqrt(H / M), H its information so far (since its last restart), and that of the
  # mean of R runs (se_floor()); the SE from the replicates, by the whole fit's rule
  # (replicate_se()), is never below it
  run_sd <- information_sd(each("information_total"), M)
  sd_h <- if (R > 1L) apply(run_sd, 1, se_floor, r = R) else run_sd[, 1]
  se <- vapply(seq_along(n), function(i) replicate_se(log_z[i, ], "log", run_sd[i, ]), numeric(1))
  trajectory <- data.frame(
    n = n,
    log_evidence = le,
    log_evidence_se = se,
    log_evidence_sd = sd_h,
    log_evidence_per_obs = le / n,
    log_predictive = lp,
    log_predictive_per_obs = lp / diff(c(0, n)),
    iterations = rowMeans(each("iterations")),
    information = info,
    restarts = as.integer(rowSums(each("restarts"))),
    live_points = M,
    converged = Reduce(`&`, lapply(traces, `[[`, "converged")),
    ess = rowMeans(each("ess")),
    steps = rowSums(each("steps")),
    rejected_steps = rowSums(each("rejected_steps")),
    seconds = cumsum(rowSums(each("seconds"))),
    gradient_evaluations = cumsum(rowSums(each("gradient_evaluations"))),
    likelihood_evaluations = cumsum(rowSums(each("likelihood_evaluations")))
  )
  last <- log_z[length(n), ]
  total_info <- each("information_total")[length(n), ]
  combined <- replicate_summary(last, unbiased = "log", predicted_sd = information_sd(total_info, M))
  # every replicate's last-chunk points, each replicate's weights rescaled to the combined
  # estimate of the last chunk's log Z_c (as new_sgais_ns_fit() does)
  last_z <- vapply(runs, function(r) r$state$last$log_z, numeric(1))
  dead <- do.call(rbind, lapply(seq_len(R), function(r) {
    d <- runs[[r]]$state$tally$dead
    d[, "log_weight"] <- d[, "log_weight"] - (last_z[r] - mean(last_z))
    d
  }))
  colnames(dead) <- c(model$parameter_names, "log_likelihood", "log_weight")
  rownames(dead) <- NULL
  new_sgais_evidence("Online NS", model, combine_runs(runs), settings, call, seed, c(
    list(
      log_evidence_sd = trajectory$log_evidence_sd[length(n)],
      information = mean(total_info),
      iterations = sum(trajectory$iterations) * R,
      converged = all(trajectory$converged),
      trajectory = trajectory,
      dead = dead,
      diagnostics = ns_diagnostics(last, total_info, M)
    ),
    combined
  ), "sgais_online_ns_fit")
}

fit_fields.sgais_online_ns_fit <- function(x) {
  s <- x$settings
  tr <- x$trajectory
  c(
    settings = sprintf("%d live points, chunks of %s observations (%d), %s, tolerance %s",
                       s$live_points, format_count(s$chunk_size), nrow(tr),
                       if (s$move == "walk") format_ns_move(s, NULL) else
                         sprintf("%s, mini-batches of %s", format_settings(s), format_count(s$batch_size)),
                       format(s$tolerance)),
    restarts = format_restarts(tr, list(every = s$restart_every %||% Inf, base = s$chunk_size)),
    sampling = format_ns_sampling(x, "some chunks stopped at max_iterations")
  )
}

fit_rows.sgais_online_ns_fit <- function(x) x$trajectory

#' @export
summary.sgais_online_ns_fit <- function(object, ...) {
  object <- validate_sgais_evidence(object, sys.call())
  out <- summary_ns(NextMethod(), object, "summary.sgais_online_ns_fit")
  out$chunks <- nrow(object$trajectory)
  out$chunk_size <- object$settings$chunk_size
  out
}

#' @export
format.summary.sgais_online_ns_fit <- function(x, ...) {
  c(
    NextMethod(),
    sprintf("Online nested sampling: %d chunks of %s observations, %s iterations, information H = %.2f nats, sd(log Z) = %.4f.",
            x$chunks, format_count(x$chunk_size), format_count(x$iterations), x$information,
            x$log_evidence_sd)
  )
}

#' @export
weighted_particles.sgais_online_ns_fit <- function(x) weighted_particles.sgais_ns_fit(x)
