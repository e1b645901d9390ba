# Independent replicate runs of an estimator, their combination and the diagnostics that
# predict an unreliable estimate. Shared by sgais(), ais() and nested_sampling().

# Runs `run(progress, label)` `replicates` times. One replicate runs in the caller's random stream
# (seeded by `seed` if given), exactly as a plain call. Several run through the future framework
# (future.apply): each replicate gets its own L'Ecuyer-CMRG stream, derived from one integer
# drawn from the caller's (seeded) stream, so the results are the same under every
# future::plan() -- sequential, multisession on this machine's cores, or a cluster -- and
# set.seed() before the call makes them reproducible. future.apply switches the session to the
# L'Ecuyer-CMRG generator; the caller's generator and its state are restored afterwards, or every
# later set.seed() in the session would give other streams. Returns a list of runs, each with its
# RNG states (seeded_run()), and the elapsed seconds as attribute "seconds".
# `run` is called as run(progress, label, r) for replicate r.
# With `streams` (a list of one saved `.Random.seed` per replicate, as a continued fit has), each
# replicate instead runs from its own saved state, under every plan, and the caller's random
# stream is left as it was: a continuation is determined by the fit alone.
run_replicates <- function(replicates, seed, progress, run, streams = NULL) {
  started <- proc.time()[["elapsed"]]
  if (!is.null(streams)) replicates <- length(streams)
  one <- function(r, progress, label) {
    if (!is.null(streams)) assign(".Random.seed", streams[[r]], envir = globalenv())
    seeded_run(NULL, run(progress, label, r))
  }
  # Several replicates run through future.apply; `future_seed` seeds their streams (or, with
  # saved streams, only keeps future from warning about random numbers: they replace it).
  # Progress bars only where they can be seen: replicates running in this R session. There
  # future's conditions are not captured: captured, they would be relayed only once every
  # replicate has finished (future_lapply() resolves them all before it returns), and so would
  # the bars, which cli draws by signalling conditions. They then reach the caller as the
  # replicates run, as in a plain loop; errors are relayed either way.
  # Replicates running in parallel share this machine's cores with each other: each then uses
  # its share of this session's threads (sgais_threads(); results do not depend on it).
  several <- function(future_seed) {
    sequential <- inherits(future::plan(), "sequential")
    shown <- progress && sequential
    threads <- if (sequential) sgais_threads() else max(1L, sgais_threads() %/% future::nbrOfWorkers())
    with_rng_restored(future.apply::future_lapply(
      seq_len(replicates), function(r) {
        old <- sgais_threads(threads)
        on.exit(sgais_threads(old))
        one(r, shown, sprintf("%d/%d ", r, replicates))
      },
      future.seed = future_seed, future.packages = "sgais",
      future.conditions = if (sequential) NULL else "condition"
    ))
  }
  runs <- if (!is.null(streams)) {
    if (replicates == 1L) with_rng_restored(list(one(1L, progress, ""))) else several(1L)
  } else if (replicates == 1L) {
    list(seeded_run(seed, run(progress, "", 1L)))
  } else {
    # the draw advances the caller's (seeded) stream, before several() restores the RNG state
    with_seed(seed, {
      base <- sample.int(.Machine$integer.max, 1L)
      several(base)
    })
  }
  structure(runs, seconds = proc.time()[["elapsed"]] - started)
}

# The `schedule` argument of ais() and sgais(): "adaptive" or "pilot", or with `lambdas` (AIS)
# a vector of increasing lambdas in (0, 1] ending at 1; NULL means "pilot" for several
# replicates and "adaptive" for one.
check_schedule <- function(schedule, replicates, call, lambdas = FALSE) {
  if (is.null(schedule)) return(if (replicates > 1L) "pilot" else "adaptive")
  if (is.character(schedule) && length(schedule) == 1L && !is.na(schedule) &&
      schedule %in% c("adaptive", "pilot")) {
    return(schedule)
  }
  if (lambdas && is.numeric(schedule) && length(schedule) >= 1L && !is.object(schedule)) {
    schedule <- as.double(schedule)
    if (all(is.finite(schedule)) && all(schedule > 0 & schedule <= 1) &&
        all(diff(schedule) > 0) && schedule[length(schedule)] == 1) {
      return(schedule)
    }
    abort(paste("`schedule` must be increasing values of lambda in (0, 1] ending at 1,",
                "such as one replicate's `lambda` column of an AIS fit's `schedule`."), call)
  }
  abort(sprintf("`schedule` must be NULL, \"adaptive\", \"pilot\"%s, not %s.",
                if (lambdas) " or a vector of lambdas" else "", describe(schedule)), call)
}

# Runs a pilot run, `pilot(progress)`, and then `replicates` runs, `run(progress, label, r, pilot)`,
# that follow what the pilot chose (run_replicates()). The pilot runs first, in the caller's
# (seeded) random stream, so the replicates' streams, drawn after it, are the same under every
# future::plan(). It is returned as attribute "pilot" of the runs, and its time is in their
# "seconds". Its estimate is not one of the replicates: the pilot chose its steps from its own
# particles, which biases it as the replicates are not (see ?ais, "Schedule").
run_piloted <- function(replicates, seed, progress, pilot, run) {
  started <- proc.time()[["elapsed"]]
  with_seed(seed, {
    first <- seeded_run(NULL, pilot(progress))
    if (progress) tell_predicted_time(proc.time()[["elapsed"]] - started, replicates)
    runs <- run_replicates(replicates, NULL, progress,
                           function(progress, label, r) run(progress, label, r, first))
    attr(runs, "pilot") <- first
    attr(runs, "seconds") <- proc.time()[["elapsed"]] - started
    runs
  })
}

# Says, when it is long, how much longer the replicates will take: each costs about what the
# pilot did (it anneals on the pilot's schedule), and they run `workers` at a time. A message of
# class `sgais_message_long_run`, shown at once (a warning would be shown only after the run),
# with progress bars only: `progress = FALSE` asks for silence. The threshold is
# options(sgais.long_run) seconds (60 by default).
tell_predicted_time <- function(pilot_seconds, replicates) {
  workers <- if (inherits(future::plan(), "sequential")) 1L else
    min(replicates, future::nbrOfWorkers())
  predicted <- pilot_seconds * ceiling(replicates / workers)
  if (!is.finite(predicted) || predicted < getOption("sgais.long_run", 60)) return(invisible())
  text <- sprintf(paste("The %d replicates will take about %s more (each about %s, as the pilot",
                        "run did, %d at a time). Interrupt (Ctrl-C) to stop; set",
                        "`future::plan()` to run them on more cores."),
                  replicates, format_seconds(predicted), format_seconds(pilot_seconds), workers)
  message(structure(class = c("sgais_message_long_run", "message", "condition"),
                    list(message = paste0(text, "\n"), call = NULL,
                         seconds = predicted)))
}

# "0.4 s", "45 s", "3.2 min", "1.5 h"
format_seconds <- function(s) {
  if (s < 10) sprintf("%.1f s", s) else if (s < 90) sprintf("%.0f s", s) else
    if (s < 5400) sprintf("%.1f min", s / 60) else sprintf("%.1f h", s / 3600)
}

# The pilot run of a fit (run_piloted()) as one row: its log evidence, its number of annealing
# steps and its cost; NULL without one.
pilot_summary <- function(pilot) {
  if (is.null(pilot)) return(NULL)
  tr <- pilot$trace
  data.frame(log_evidence = pilot$state$log_z,
             steps = if (is.null(tr$annealing_steps)) nrow(tr) else sum(tr$annealing_steps),
             seconds = sum(tr$seconds),
             gradient_evaluations = sum(tr$gradient_evaluations),
             likelihood_evaluations = sum(tr$likelihood_evaluations))
}

# log(mean(exp(x))) without overflow.
log_mean_exp <- function(x) {
  log_sum_exp(x) - log(length(x))
}

# The standard error of log(mean(Z_r)) from replicate log evidences x: the jackknife over
# replicates, sqrt((R - 1) / R * sum_r (L_(r) - mean L_(.))^2) with L_(r) the log-mean-exp
# without replicate r. NA for one replicate. For replicates that agree it is the delta method's
# sd(Z_r) / (sqrt(R) mean(Z_r)); unlike the delta method it is not bounded when one replicate
# dominates the mean (the delta method's SE is then about 1 nat however far the others are:
# two replicates d nats apart get tanh(d / 2), the jackknife d / 2), so an estimate that rests
# on one replicate shows an SE as large as the replicates' disagreement.
# The mean of R replicates is unbiased for Z, its log is not: for a spread s of the replicates'
# log Z, log mean(Z) is low by about s^2 / (2 R), and with a heavy right tail of Z_r the
# replicates seldom show it, so the SE understates the error when s is large (see ?sgais).
log_mean_exp_se <- function(x) {
  r <- length(x)
  if (r < 2L || !all(is.finite(x))) return(NA_real_)
  # leave-one-out log-mean-exp, relative to max(x) so that no sum overflows or cancels badly
  z <- exp(x - max(x))
  loo <- log(sum(z) - z) - log(r - 1)
  # sum(z) - z can cancel to a tiny or zero value when one replicate dominates: recompute those
  # directly from the other replicates
  bad <- !(sum(z) - z > 1e-8 * sum(z))
  loo[bad] <- vapply(which(bad), function(i) log_mean_exp(x[-i]) - max(x), numeric(1))
  sqrt((r - 1) / r * sum((loo - mean(loo))^2))
}

# Per-replicate diagnostics of an annealing run (SGAIS or AIS) from its trace: the predicted sd
# of log Z-hat, `predicted_sd`; the lowest incremental ESS; the variance of the final
# log-weights (a degenerate final particle set); and the fraction of chunks or steps needing
# many annealing steps (where the target moved far). The predicted variance is the larger of
# two estimates: the chi-square divergences of the incremental weights over M, summed over the
# steps of the estimate (estimate_cumsum(); the trace's `predicted_var`: Var log Z ~ sum_t (M /
# ESS_t - 1) / M, right for weights resampled at every step and moves that draw afresh from
# each target), and the run's genealogy's (`genealogy_var`, src/anneal.h: the squared
# influences of the particles' ancestors, which also counts weights accumulated between
# resamplings and moves that leave the particles correlated from step to step); the first is
# the floor where the genealogy has few ancestors left to measure with. NA where a step's
# weights collapsed (`collapsed`, see weights_collapsed()): the run cannot predict its error.
anneal_diagnostics <- function(trace, logw, steps = trace$annealing_steps,
                               genealogy_var = NULL, collapsed = FALSE) {
  genealogy_var <- genealogy_var[is.finite(genealogy_var)]
  data.frame(
    predicted_sd = if (collapsed) NA_real_ else
      sqrt(max(estimate_cumsum(trace$predicted_var, trace)[nrow(trace)], genealogy_var)),
    lowest_ess = min(trace$min_ess),
    final_log_weight_var = if (length(unique(logw)) > 1L) stats::var(logw) else 0,
    many_steps_fraction = if (is.null(steps)) NA_real_ else mean(steps > 10)
  )
}

# The predicted variance of log Z-hat at the end of each chunk of an SGAIS sampler's trace (SGAIS,
# SIR, the sequential estimator): the larger of the chunks' `predicted_var` summed over the
# estimate's steps (estimate_cumsum()) and the genealogy's estimate there (`genealogy_var`; see
# anneal_diagnostics()), which traces made before genealogies were kept lack (NA); NA from a
# collapsed step on (weights_collapsed()).
predicted_var_path <- function(trace) {
  summed <- estimate_cumsum(trace$predicted_var, trace)
  genealogy <- trace$genealogy_var
  v <- if (is.null(genealogy)) summed else pmax(summed, genealogy, na.rm = TRUE)
  v[weights_collapsed(trace)] <- NA_real_
  v
}

# Whether, at the end of each chunk of an SGAIS sampler's trace, a step of the estimate there
# (estimate_cumsum()) left an ESS below 2, so that one particle held more than half the weight:
# the chunk's estimate then rests on that particle, and the particles cannot estimate its error,
# since the sample chi-square divergence of the weights, M / ESS - 1, cannot exceed M - 1
# however far the step moved the target (a one-step update of data in an order that moves the
# posterior, or of a chunk drawn from the prior). SGAIS's annealing steps hold their ESS at the
# target; SIR's robust preset splits such a chunk.
weights_collapsed <- function(trace) {
  if (is.null(trace$min_ess)) return(logical(nrow(trace)))
  estimate_cumsum(as.numeric(trace$min_ess < collapsed_ess), trace) > 0
}
collapsed_ess <- 2

# A classed warning when the diagnostics say the estimate is unreliable. For the annealing
# samplers a predicted sd of log Z-hat over 1 nat means an expected bias of about -sd^2 / 2
# (Jensen: log of an unbiased estimate of Z) and a replicate SE that may understate the error;
# for nested sampling sqrt(H / M) over 1 nat is a standard error too large to rank models whose
# evidence differs by a few nats. Replicates that disagree far more than each one's predicted sd
# say so too: the weights cannot see a mode that a run never reached (a mixture whose particles
# all settled in a minor mode is far off with a small predicted sd), but another replicate that
# reached it can. Returns the fit, visibly: the estimators end with this call,
# and their result must print at the top level.
warn_if_unreliable <- function(fit, what = "particles") {
  check_plausible(fit)
  warn_if_stuck(fit)
  warn_if_halved(fit)
  warn_if_small_steps(fit)
  # (a closed form and importance sampling have no such diagnostics)
  sd <- max(fit$diagnostics$predicted_sd, -Inf, na.rm = TRUE)
  spread <- replicate_disagreement(fit)
  if (!is.null(spread)) {
    message <- sprintf(paste(
      "The %d replicates of %s disagree: their log evidences span %.3g nats, while %s. Some",
      "runs probably missed a mode of the posterior, and the estimate and its standard error",
      "cannot be trusted. Use more `%s`, or check with `nested_sampling()`; for a mixture,",
      "standardise the data (see ?gaussian_mixture)."),
      length(fit$replicate_log_evidence), fit$method, spread,
      if (is.finite(sd)) sprintf("each one's weights predict an sd of about %.2g", sd) else
        "their weights collapsed", what)
  } else if (anyNA(fit$diagnostics$predicted_sd)) {
    message <- sprintf(paste(
      "%s estimate is unreliable: the weights of a step collapsed onto one particle (lowest",
      "ESS %.2g), so the estimate rests on it, is probably many nats low, and cannot say by how",
      "much (standard error NA). Data in an order that moves the posterior (sorted by an",
      "outcome) do this to one-step updates: use %s, or check with `audit_evidence()`."),
      fit$method, min(fit$diagnostics$lowest_ess),
      if (identical(fit$method, "SIR")) "`sgais()`" else "`sir()` or `sgais()`")
  } else if (is.finite(sd) && sd > 1) {
    message <- if (inherits(fit, c("sgais_ns_fit", "sgais_online_ns_fit"))) {
      sprintf(paste(
        "%s estimate is imprecise: its standard error sqrt(H / M) is %.1f nats,",
        "more than 1. Use more `live_points` (or `replicates`)."), fit$method, sd)
    } else {
      sprintf(paste(
        "%s estimate may be unreliable: the weights predict a spread of %.1f nats in log Z",
        "(a bias of about %.1f nats), more than 1. Use more `%s` (or `replicates`)."),
        fit$method, sd, -sd^2 / 2, what)
    }
  } else {
    return(fit)
  }
  warn(message, NULL, "sgais_warning_unreliable")
  fit
}

# An error instead of a result that cannot be right: a log evidence that is not finite (an
# overflow, or every weight vanished), or, for nested sampling, one outside the range its own
# points allow. Z is the prior mean of the likelihood, so it lies between the smallest
# likelihood of the points it sums (times the prior volume they cover, at least half of it
# after the first iteration) and the largest.
check_plausible <- function(fit) {
  advice <- paste("Scale the covariates and the response to about unit scale (see ?sgais,",
                  "\"Scaling of the data\"), or use a smaller `step_size`.")
  if (!is.finite(fit$log_evidence)) {
    abort(sprintf("%s gave a log evidence of %s: the computation overflowed or every weight vanished. %s",
                  fit$method, format(fit$log_evidence), advice),
          class = "sgais_error_numerical")
  }
  if (inherits(fit, "sgais_ns_fit")) {
    loglik <- fit$dead[, "log_likelihood"]
    range <- range(loglik[is.finite(loglik)])
    slack <- 1e-8 * max(abs(range)) + log(2)
    if (fit$log_evidence > range[2] + slack || fit$log_evidence < range[1] - slack) {
      abort(sprintf(paste("Nested sampling gave log Z = %.6g, outside [%.6g, %.6g], the range of its",
                          "points' log-likelihoods: the sum went wrong numerically. %s"),
                    fit$log_evidence, range[1], range[2], advice),
            class = "sgais_error_numerical")
    }
  }
  fit
}

# A warning when the moves were almost all rejected, so the particles (or live points) barely
# moved from where they were drawn or copied: the Metropolis-adjusted moves' median acceptance
# over the steps (SGAIS chunks, AIS steps), or the jump proposals' where they were made and
# accepted more often (a mixture whose spare components sit in their prior's funnel, where the
# local moves are refused and the jumps carry the particles), or nested sampling's accepted
# fraction of walk proposals, below 5%. The unadjusted moves of the paper presets report no
# acceptance.
warn_if_stuck <- function(fit) {
  median_of <- function(x) if (is.null(x) || all(is.na(x))) NA else stats::median(x, na.rm = TRUE)
  acceptance <- if (inherits(fit, c("sgais_ns_fit", "sgais_online_ns_fit"))) {
    tr <- if (inherits(fit, "sgais_ns_fit")) fit$trace else fit$trajectory
    if (sum(tr$steps) > 0) 1 - sum(tr$rejected_steps) / sum(tr$steps) else NA
  } else {
    rows <- if (inherits(fit, "sgais_fit")) fit$trajectory else fit$schedule
    both <- c(median_of(rows$acceptance), median_of(rows$jump_acceptance))
    if (all(is.na(both))) NA else max(both, na.rm = TRUE)
  }
  if (is.finite(acceptance) && acceptance < 0.05) {
    warn(sprintf(paste(
      "%s's moves were almost all rejected (acceptance %.1f%%): the points barely moved, and",
      "the estimate rests on where they were drawn. Use a smaller `step_size`, or scale the data",
      "(see ?sgais, \"Scaling of the data\")."), fit$method, 100 * acceptance),
      NULL, "sgais_warning_unreliable")
  }
  invisible(fit)
}

# A warning when moves without a Metropolis test had to be redone with half the step (SGAIS's
# mini-batch moves, AIS with the Euler setting; the spread guard of src/anneal.h): the
# discretisation broke down at least once, and it may have heated the particles for a while
# before the guard saw it. The fit goes on with the smaller step; its evidence may be biased
# (inst/design.md, "Measurements behind the defaults").
warn_if_halved <- function(fit) {
  rows <- if (inherits(fit, "sgais_fit")) fit$trajectory else if (inherits(fit, "sgais_ais_fit"))
    fit$schedule
  halvings <- if (is.null(rows$step_halvings)) 0 else sum(rows$step_halvings)
  if (halvings > 0) {
    step <- rows$step_size[length(rows$step_size)]
    advice <- if (inherits(fit, "sgais_ais_fit")) {
      "Use a smaller `step_size` or Metropolis-adjusted moves (`integrator = \"baoab\"`)."
    } else {
      "Use a smaller `step_size` or the default kernel, or check it with `ais()`."
    }
    warn(sprintf(paste(
      "%s's moves without a Metropolis test spread the particles more than 4 times wider than",
      "their target and were redone with half the step (%s in all, down to %.3g target widths;",
      "column `step_halvings`): the evidence may be biased. %s"), fit$method,
      format(halvings), step, advice), NULL, "sgais_warning_unreliable")
  }
  invisible(fit)
}

# Moves too short to move the particles. With steps in target widths (the robust presets) the
# step adapts to the Metropolis acceptance, but to at most twice the configured `step_size`: a
# step that stays below 0.05 widths while nearly every move is accepted is a small `step_size`,
# not a hard posterior, and the particles barely leave where the reweighting put them, which
# biases log Z low (inst/design.md, "Measurements behind the defaults").
warn_if_small_steps <- function(fit) {
  if (!identical(fit$settings$step_scale, "width")) return(invisible(fit))
  rows <- if (inherits(fit, "sgais_fit")) fit$trajectory else if (inherits(fit, "sgais_ais_fit"))
    fit$schedule
  ok <- !is.na(rows$acceptance) & !is.na(rows$step_size)
  if (!any(ok)) return(invisible(fit))
  step <- stats::median(rows$step_size[ok])
  if (step < 0.05 && stats::median(rows$acceptance[ok]) > 0.9) {
    warn(sprintf(paste(
      "%s's moves took steps of %.2g target widths while accepting nearly every one: the",
      "particles barely moved, and the evidence is probably biased low. Use a larger `step_size`",
      "(the default is 0.3)."), fit$method, step), NULL, "sgais_warning_small_steps")
  }
  invisible(fit)
}

# The range of the replicates' log evidences when their sd is more than 3 times the largest sd
# the replicates predict for themselves and more than 1 nat; NULL otherwise (or for one
# replicate). With honest predictions the sd of R replicates exceeds 3 times the true sd with
# probability about 0.3% for R = 2, far less for more.
replicate_disagreement <- function(fit) {
  x <- fit$replicate_log_evidence
  if (length(x) < 2L || !all(is.finite(x))) return(NULL)
  predicted <- max(fit$diagnostics$predicted_sd, -Inf, na.rm = TRUE)
  if (stats::sd(x) > max(1, 3 * predicted)) diff(range(x)) else NULL
}

# The replicate part of a fit: the combined log evidence, its SE, the replicates' values and
# their spread. `unbiased` says in which scale one replicate's estimate is unbiased:
# - "z" (SGAIS, AIS): Z-hat_r is unbiased for Z, so the replicates are combined by the mean of
#   the Z-hat_r (log-mean-exp), with the jackknife SE above;
# - "log" (nested sampling): Skilling's volumes log X_i = -i/M are the expectation of log X_i (the
#   shrinkages are Beta(M, 1), E log t = -1/M; thesis eq. 3.23), so a run's log Z-hat is unbiased
#   in log to first order and its Z-hat is not unbiased in Z: the mean of the Z-hat_r would be high
#   by about Var(log Z-hat_r) / 2 = H / (2M). They are combined by the mean of their log Z-hat,
#   with SE sd / sqrt(R) (inst/design.md, "Standard errors").
# The SE is never below se_floor() of the replicates' own predicted sds (replicate_se()); a
# single run's SE is its predicted sd (`single`: FALSE where that is known to mislead).
replicate_summary <- function(log_z, unbiased = c("z", "log"), predicted_sd = NULL,
                              single = TRUE) {
  unbiased <- match.arg(unbiased)
  list(
    log_evidence = if (unbiased == "z") log_mean_exp(log_z) else mean(log_z),
    log_evidence_se = replicate_se(log_z, unbiased, predicted_sd, single),
    replicate_log_evidence = log_z,
    replicate_sd = if (length(log_z) > 1L) stats::sd(log_z) else NA_real_
  )
}

# The SE of the log evidence combined from the replicates' log_z (see replicate_summary()):
# the jackknife SE of their log-mean-exp ("z") or sd / sqrt(R) ("log"), never below se_floor()
# of their predicted sds. The whole fit's and, row by row, the trajectories' (sgais(),
# online_nested_sampling()).
# One run (r = 1) has no spread to measure: its SE is its own predicted sd, the best single-run
# estimate there is (for SGAIS and AIS the weights' chi-square divergences, for nested sampling
# sqrt(H / M)); inst/validation/coverage.R measures how often a single run is within 2 of
# them of the reference (?sgais, "Standard error and how far to trust it"). NA when there is
# none, or when `single` is FALSE: SGAIS's paper preset, whose bias from the mini-batch gradient
# noise the weights cannot see.
replicate_se <- function(log_z, unbiased = c("z", "log"), predicted_sd = NULL, single = TRUE) {
  unbiased <- match.arg(unbiased)
  r <- length(log_z)
  if (r == 1L) {
    ok <- single && length(predicted_sd) == 1L && is.finite(predicted_sd) && is.finite(log_z)
    return(if (ok) predicted_sd else NA_real_)
  }
  se <- if (unbiased == "z") log_mean_exp_se(log_z)
        else if (r > 1L && all(is.finite(log_z))) stats::sd(log_z) / sqrt(r) else NA_real_
  pmax(se, se_floor(predicted_sd, r))
}

# The smallest SE that R replicates can report: sqrt(mean(p_r^2) / R), the SE of the mean of their
# log Z-hat were each as far off as its own prediction p_r says (`predicted_sd`: the weights'
# chi-square divergences for SGAIS and AIS, sqrt(H / M) for nested sampling). A spread measured
# from few replicates is itself noisy (with 10 an sd below 0.65 times the true one in 10% of
# fits, with 2 or 3 near zero when they happen to agree), while the predictions, from every
# particle of every run, are far steadier; they cannot see modes a run missed, which only the
# replicates' disagreement shows, hence the larger of the two. 0 (no floor) when there are no
# predictions or one replicate (whose SE is NA). With 10 replicates it matters little, with 2 or
# 3 it keeps a chance agreement from passing as precision (inst/design.md, "Standard errors").
se_floor <- function(predicted_sd, r) {
  if (is.null(predicted_sd) || r < 2L) return(0)
  p2 <- mean(predicted_sd^2)
  if (is.finite(p2)) sqrt(p2 / r) else 0
}

format_se <- function(x) {
  se <- x$log_evidence_se
  if (is.null(se) || is.na(se)) return("")
  r <- length(x$replicate_log_evidence)
  if (r == 0L) return(sprintf(" +/- %.4f (SE from the importance weights)", se))
  if (r == 1L) return(sprintf(" +/- %.4f (SE predicted by the run itself)", se))
  sprintf(" +/- %.4f (SE from %d replicates)", se, r)
}

# The cost and RNG states of a set of replicate runs, as new_sgais_evidence() reads them from a run:
# every replicate's cost and a pilot's (run_piloted()), the elapsed time of them all, and the
# RNG states of the first run (the pilot, if any), the state the fit started from.
combine_runs <- function(runs) {
  cost <- c("seconds", "gradient_evaluations", "likelihood_evaluations")
  all <- c(if (!is.null(attr(runs, "pilot"))) list(attr(runs, "pilot")), runs)
  list(
    trace = do.call(rbind, lapply(all, function(r) r$trace[intersect(cost, names(r$trace))])),
    seconds = attr(runs, "seconds"),
    initial_seed = all[[1]]$initial_seed,
    final_seed = all[[1]]$final_seed
  )
}

#' Confidence interval for the log evidence
#'
#' An interval for \eqn{\log Z}: with `replicates` > 1, the estimate \eqn{\pm}
#' \eqn{t_{R-1}} quantile times `log_evidence_se`. With R replicates the standard error has
#' R - 1 degrees of freedom, so the t quantile, not the normal one, gives the stated coverage
#' (3.18 for 95% with 4 replicates; the normal 1.96 would cover about 86%). A single run's
#' standard error is the one it predicts for itself (see "Standard error and how far to trust
#' it" in [sgais()]), with the normal quantile; it cannot see a mode the run missed, so prefer
#' replicates for a decision. SGAIS's paper preset has no single-run SE. The coverage measured
#' against exact and reference evidence, of replicates and of single runs, is in
#' `vignette("validation")`.
#'
#' @param object A fit from [sgais()], [ais()] or [nested_sampling()].
#' @param parm Ignored (the only parameter is the log evidence).
#' @param level The confidence level.
#' @param ... Unused.
#' @return A 1 x 2 matrix with row `log_evidence` and the lower and upper limits as columns.
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(2000, seed = 1))
#' fit <- sgais(model, replicates = 3, seed = 1)
#' confint(fit)
#' exact_log_evidence(model)
#' @importFrom stats confint
confint.sgais_evidence <- function(object, parm, level = 0.95, ...) {
  call <- sys.call()
  check_dots_empty(call, c("object", "parm", "level"), ...)
  object <- validate_sgais_evidence(object, call)
  if (!is_number(level) || !(level > 0 && level < 1)) {
    abort(sprintf("`level` must be a number in (0, 1), not %s.", describe(level)), call)
  }
  R <- length(object$replicate_log_evidence)
  se <- object$log_evidence_se
  if (is.null(se) || is.na(se)) {
    abort("`object` has no standard error: fit it with `replicates` of 2 or more.", call)
  }
  q <- 1 - (1 - level) / 2
  half <- (if (R > 1L) stats::qt(q, df = R - 1) else stats::qnorm(q)) * se
  out <- matrix(object$log_evidence + c(-half, half), nrow = 1,
                dimnames = list("log_evidence", sprintf("%g %%", 100 * c((1 - level) / 2, 1 - (1 - level) / 2))))
  out
}
