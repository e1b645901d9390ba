#' Evidence by Bayesian updating without annealing: SIR and the sequential SG-MCMC estimator
#'
#' Two earlier estimators of the evidence trajectory, from the thesis behind [sgais()], on the
#' same sampler, kernels and fits as SGAIS, so that they can be compared with it honestly. Both
#' factor the evidence into predictive densities of chunks of new observations,
#' \eqn{Z = \prod_C p(C \mid y_{<C})}{Z = prod_C p(C | earlier data)} (thesis eq. 3.47 and 4.1),
#' and differ from SGAIS only in how a chunk enters the particles' weights: SGAIS anneals it in
#' adaptively, these two take it in one importance step.
#'
#' \describe{
#'   \item{`sir()`}{Sequential importance resampling with data tempering (thesis Alg. 7, eq.
#'     3.51-3.53): each particle's weight is multiplied by \eqn{p(C \mid \theta_i)}{p(C |
#'     theta_i)}, the particles are resampled when the weights' ESS falls below `resample`
#'     times their number, and then moved by the kernel on the posterior including the chunk.
#'     \eqn{\hat Z}{Z-hat} is the mean weight; it is unbiased (Naesseth et al. 2019) whatever the
#'     moves, but its variance explodes when a chunk carries much information relative to the
#'     particles' spread, which is what SGAIS's annealing prevents.}
#'   \item{`sequential_sgmcmc()`}{The estimator of Cameron, Eggers and Kroon (2019a; thesis
#'     Section 4.1, eq. 4.3-4.5): \eqn{\hat p(C \mid y_{<C}) = M^{-1} \sum_i p(C \mid
#'     \theta_i)}{p-hat(C | earlier) = mean_i p(C | theta_i)} with the particles refreshed by
#'     SG-MCMC on the mini-batch potential of eq. 4.5, no resampling and no annealing. The
#'     product of correlated estimates is biased for a finite number of particles (thesis
#'     Section 4.1), most in the first chunks; `hybrid = n0` replaces the first `n0` terms by a
#'     [nested_sampling()] estimate on the first `n0` observations and starts the particles from
#'     its posterior (the thesis's "seq-hybrid", Section 5.3, with `n0 = 100`).}
#' }
#'
#' Both use the settings of [sgais_control()] (through [sir_control()] and
#' [sequential_control()], whose presets set `update` and the chunk schedule), the same
#' `kernel` choices (SGHMC, SGLD and the subsampling Metropolis-Hastings kernels; see
#' [sgais_control()]), and return the same kind of fit as [sgais()], with method `"SIR"`,
#' `"sequential SG-MCMC"` or `"sequential SG-MCMC + NS"`: an evidence trajectory,
#' `print()`, `summary()`, `as.data.frame()`, `autoplot()`, continuation by `sgais(fit,
#' new_data)`, replicates and their standard error.
#'
#' The chunk schedule: with `first_chunk_size` below `chunk_size`, chunks hold
#' `first_chunk_size`, twice that, three times that, ... observations while that is below
#' `chunk_size`, then `chunk_size` (the thesis used 20 growing by 20 to 500: a one-step update
#' of 500 observations drawn from the prior leaves one particle with all the weight). The
#' `"paper"` preset of `sir_control()` is Alg. 7 literally, one observation at a time with
#' Metropolis-adjusted HMC on the exact potential: its cost grows as \eqn{N^2}, for small data
#' only. The `"paper"` preset of `sequential_control()` is the estimator as published (the
#' paper's SGHMC settings of Section 6.1).
#'
#' With the `"robust"` preset `sir()` **splits** a chunk whose one step would leave an ESS below
#' `split_ess` (0.5, where it resamples) times the particles: its observations enter in blocks,
#' each the longest that keeps the ESS there (at least one observation), with resampling and
#' moves between them:
#' data tempering as Alg. 7 has it, one observation a step where the posterior moves most. This
#' follows data whose order moves the posterior far within a chunk (a file sorted by an outcome,
#' a level shift), where one step is off by many nats with a standard error that does not show
#' it. The trajectory keeps its chunks; `annealing_steps` counts their blocks. Its steps let the
#' ESS fall further than [sgais()]'s annealing steps do, and the bias they leave in log Z
#' shrinks as 1 / particles: its robust preset takes 100 particles where [sgais()] takes 50. The
#' sequential estimator splits only when given `split_ess`: its particles, never resampled,
#' follow a moving posterior by moves alone and stay behind it, so split it is a nat or two low
#' without the warning its one-step version gives. The `"paper"` presets never split
#' (`split_ess = 0`).
#' Its robust preset instead restarts where a chunk's one step would leave an ESS below half
#' the particles, while the data so far fit in one mini-batch (`restart_ess`, [restarts]): it
#' anneals them as [sgais()] does and goes on from there.
#' A step that leaves an ESS below 2 (more than half the weight on one particle) leaves the run
#' without a standard error from there on (`NA`, also in the trajectory) and warns
#' (`sgais_warning_unreliable`): its estimate rests on one particle, and the weights cannot
#' measure how far off it is.
#'
#' A chunk enters in one step, so where the posterior changes its mode as observations arrive
#' (a mixture's clusters showing one by one) these estimators cannot follow it, and their
#' standard errors do not show it: with the `"robust"` presets both start again from all the data
#' so far, annealed as [sgais()] does, on mixtures, and `sir()` also on models of groups and
#' after a chunk it predicts far worse than the one before (a shift); see [restarts]. With that
#' preset `sir()` takes 400 particles in its exact early phase (`early_particles`, unless given)
#' on models where it never does: its first importance steps,
#' each observation a large share of what little the data say so far, make most of its error,
#' which with SGAIS's 100 grew with the number of parameters beyond what its standard error
#' showed (`vignette("validation")`, "Standard-error coverage on small data").
#' [audit_evidence()] checks an online estimate against the same data shuffled.
#'
#' @inheritParams sgais
#' @param control Settings: `sir_control()` or `sequential_control()` (see [sgais_control()]).
#' @param hybrid `TRUE` (the default: the first 100 observations, as in the thesis; all but the
#'   last of 100 or fewer, and none of one), a number of
#'   first observations whose evidence nested sampling estimates, or `FALSE` for the plain
#'   estimator of Cameron et al. (2019a), whose first terms can be far off (see Details).
#' @return A fit of class `sgais_fit` (see [sgais()]).
#' @references Cameron, S. A., Eggers, H. C. and Kroon, S. (2019a). A sequential marginal
#'   likelihood approximation using stochastic gradients. *Proceedings* 33(1), 18 (MaxEnt 2019).
#'   \doi{10.3390/proceedings2019033018}
#'
#'   Cameron, S. A. (2020). *Evidence Estimation Using Stochastic Likelihood Approximations*.
#'   MSc thesis, Stellenbosch University. Sections 3.4 and 4.1.
#'
#'   Naesseth, C. A., Lindsten, F. and Schön, T. B. (2019). Elements of sequential Monte Carlo.
#'   *Foundations and Trends in Machine Learning* 12(3), 307-392.
#' @seealso [sgais()], which anneals each chunk in; [sgais_control()] for the settings and
#'   kernels.
#' @export
#' @examples
#' model <- linear_regression(y ~ ., simulate_linear_regression(1000, seed = 1))
#' fit <- sir(model, seed = 1, progress = FALSE)
#' fit
#' seq_fit <- sequential_sgmcmc(model, hybrid = TRUE, seed = 1, progress = FALSE)
#' c(SIR = log_evidence(fit), sequential = log_evidence(seq_fit),
#'   exact = exact_log_evidence(model))
sir <- function(model, ..., control = sir_control(), replicates = 1,
                progress = default_progress(), seed = NULL) {
  sgais_estimate(model, list(...), control, "sir", replicates, progress, seed, sys.call())
}

#' @rdname sir
#' @export
sequential_sgmcmc <- function(model, ..., hybrid = TRUE, control = sequential_control(),
                              replicates = 1, progress = default_progress(), seed = NULL) {
  call <- sys.call()
  check_model(model, call)
  sgais_estimate(model, list(...), control, "sequential", replicates, progress, seed, call,
                 hybrid = check_hybrid(hybrid, model, call))
}

# NULL (no hybrid) or the number of first observations nested sampling takes.
check_hybrid <- function(hybrid, model, call) {
  if (isFALSE(hybrid)) return(NULL)
  if (isTRUE(hybrid)) {
    # data of 100 rows or fewer: all but the last, which the sequential estimator then adds
    hybrid <- min(100, model$n - 1)
    if (hybrid < 1) return(NULL)
  }
  if (!is_number(hybrid) || !is.finite(hybrid) || hybrid != round(hybrid) || hybrid < 1 ||
      hybrid >= model$n) {
    abort(sprintf(paste(
      "`hybrid` must be FALSE, TRUE (100) or a whole number of first observations below the",
      "model's %s, not %s."), format_count(model$n), describe(hybrid)), call)
  }
  as.integer(hybrid)
}
