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
#' The tuning is set by `control` ([sgais_control()]). Its default preset, `"robust"`, moves the
#' particles in units of the current target's width (preconditioned by the weighted particle
#' covariance), uses control-variate mini-batch gradients, the exact gradient while the earlier
#' data are few, and adaptive resampling; `sgais_control("paper")` is the paper's Algorithm 1 with
#' its Section 6.1 settings, exactly. With the paper's settings the log evidence is
#' underestimated in proportion to \eqn{N p / \sigma^2}: about 0.1% at a million observations on
#' the paper's own model, but tens to thousands of nats with more parameters or less noise. See
#' [sgais_control()] for what the robust preset changes and why. Log-weights and evidence are kept
#' in log space throughout.
#'
#' @section Continuing a fit on new data:
#' `sgais(fit, new_data)` (or `update(fit, new_data)`) adds observations to a fit: the particles
#' carry on from the posterior of the data seen, so a new chunk costs the same however many came
#' before it (paper Section 5). `new_data` is turned into the model's design by the model's own
#' specification, so a factor level, class label or column the model was not built with is an
#' error (of class `sgais_error_data_mismatch`), never a silently different model. The fit keeps
#' every observation it has seen, for the mini-batches, unless its `reservoir_size` is finite
#' (see "A bounded reservoir").
#'
#' Chunks end at multiples of `chunk_size` from the first observation whatever pieces the data
#' came in, and each replicate keeps the key of its random streams in the fit. So a fit continued
#' in any number of pieces, split anywhere, also after [saveRDS()] and [readRDS()], is exactly
#' (bit for bit) the fit of all the data at once with the same seed. When the data end inside a
#' chunk, that last partial chunk is added to a copy of the sampler state: the estimate reports
#' all observations (the trajectory's last row, marked `partial`), and a continuation starts from
#' the last whole chunk. A continuation neither uses nor advances the session's random stream, and
#' keeps the fit's settings: start a new fit to change them.
#'
#' @section Scaling of the data:
#' The robust presets (the defaults of `sgais()`, [ais()] and [nested_sampling()]) assume nothing
#' about the scale of the data: their moves are preconditioned by the particles' (or live
#' points') covariance and their steps are in units of the target's width, so a linear change
#' of the parameters changes neither their cost nor their accuracy. Measured on the
#' linear regression of `simulate_linear_regression(300, seed = 1)` with two covariates
#' multiplied by \eqn{10^4}: exact \eqn{\log Z = -466.68}; SGAIS -466.34, AIS -466.55, nested
#' sampling -466.28. The covariates are therefore not standardised internally: with the same
#' prior the evidence would be the same, and a different prior is a different model. The
#' `"paper"` presets step in units of the parameters (a learning rate per observation) and
#' assume parameters and covariates of about unit scale, as in the paper.
#'
#' What the scale of the data does change is the model: the regressions' prior \eqn{N(0,
#' \mathrm{prior\_sd}^2)} on every coefficient means something different for covariates in
#' metres and in millimetres, and the evidence says so. When the data lie far outside what the
#' prior allows, the posterior is far from the prior, and annealing needs about four steps
#' for every prior standard deviation the posterior mean lies away (nested sampling longer).
#' For linear regression with known noise this distance is computed before sampling, and a
#' model that would need more steps than the estimators take (\eqn{10^5}) is refused with an
#' error of class `sgais_error_prior_conflict` (its exact evidence is in the message); other
#' models stop with an error of class `sgais_error_annealing` when annealing does not finish.
#' Results that cannot be right are errors, not values: a log evidence that is not finite, or
#' a nested-sampling sum outside the range of its points' likelihoods (class
#' `sgais_error_numerical`). Hyperparameters must lie in \eqn{[10^{-100}, 10^{100}]} and data
#' values in \eqn{[-10^{100}, 10^{100}]}, where squares and reciprocals keep the closed forms
#' precise.
#'
#' @section Random numbers and threads:
#' A run depends on [set.seed()] (or `seed`) but not on [RNGkind()] beyond one draw: when a run
#' starts, the prior draws of its particles and a 64-bit key for the run come from R's random
#' stream; every later random number (SGHMC noise and momenta, mini-batch indices, resampling,
#' the reservoir) comes from a fast generator (xoshiro256++) in streams keyed by the run's key,
#' the number of observations before the chunk and the particle. So a particle's draws are the
#' same whichever thread moves it, and a run split into calls or continued on new data is bit
#' for bit the run of all the data at once. Mini-batch indices are exactly uniform (Lemire's
#' method). The particles move on [sgais_threads()] threads (models written in R, and compiled
#' models, on one); the estimate is the same on any number of threads.
#'
#' @section Interrupts:
#' An interrupt (Ctrl-C, Esc) during a run with one replicate loses at most the last quarter of a
#' second of work: `sgais()` returns the fit of the observations up to its last whole chunk, with
#' a warning of class `sgais_warning_interrupted` that says how many, and that fit continues
#' exactly (bit for bit, as above) with `sgais(fit, new_data)` on the observations after them.
#' Interrupted before its first chunk was done, a run has nothing to return and the interrupt
#' goes on as usual. With several replicates (or a pilot run, `schedule = "pilot"`) an interrupt
#' stops the call and nothing is returned
#' (the replicates may be in other processes, each at its own point); for long runs with
#' replicates use [sgais_stream()], which keeps the fit of each block read, with `checkpoint =`.
#'
#' @section A bounded reservoir:
#' The mini-batches are drawn from the earlier observations, so by default a fit keeps all of
#' them and its memory grows with the stream. With `reservoir_size = r` each replicate keeps
#' instead a uniform random sample of r of them (Vitter's Algorithm R, drawn from the run's keyed
#' streams, so a continued fit is still exactly the fit of all the data at once), and draws its
#' mini-batches from that sample, scaled to all n earlier observations: memory stays bounded on
#' an unbounded stream (paper Section 5). The fit then holds its replicates' reservoirs and the
#' observations after its last whole chunk; its `model` holds only those (its `n` still counts
#' all), so [exact_log_evidence()], [ais()] and [nested_sampling()], which need every
#' observation, refuse it with an error of class `sgais_error_rows_dropped`. Counts of
#' observations are kept in doubles, so a stream may run past \eqn{2^{31}} observations.
#'
#' What it costs: given the reservoir the mini-batch gradient is unbiased for its sum over the
#' reservoir scaled up to n, which is itself a random estimate of the sum over all earlier
#' observations, so the particles sample the posterior of a sample of the past. With control
#' variates (the robust preset) the reservoir estimates only how the gradient changes between
#' the anchor and a particle: the gradient sum at the anchor is kept exactly, chunk by chunk (the
#' first anchor is set while the reservoir still holds every observation; later ones add the
#' reservoir's estimate of the change), so the error stays small. Measured on the paper's linear
#' regression at \eqn{N = 10^6} by `inst/bench/online.R` (seeds 1-3, error against the exact
#' log evidence): robust preset, -1.10 to +0.11 nats with every observation, -0.19 to +0.14 with
#' `reservoir_size = 1e5` and -1.43 to +0.91 with `1e4`, at the same number of gradient
#' evaluations and 10-20% less time (the reservoir stays in cache). The paper's preset, without
#' control variates, samples the posterior of the reservoir alone, whose mean is off by about
#' \eqn{\sqrt{n / r}}{sqrt(n / r)} posterior widths in each of the p parameters, which costs
#' about \eqn{p (N - r) / (2 r)}{p (N - r) / (2 r)} nats more: 27 with `1e5` (measured -1,492
#' against -1,497 with every observation, within the seeds' spread), 297 with `1e4` (measured
#' -1,796, 299 more). A stream of \eqn{10^6} rows read in blocks with
#' `reservoir_size = 1e4` gives a fit of 1 Mb instead of 54 Mb. The exact early phase needs every
#' earlier observation, so `reservoir_size` must be at least `exact_until`.
#'
#' @section Standard error and how far to trust it:
#' A single run (`replicates = 1`) reports as `log_evidence_se` the sd it predicts for its own
#' \eqn{\log \hat Z}{log Z-hat} (`predicted_sd`, below; for [nested_sampling()] \eqn{\sqrt{H /
#' M}}{sqrt(H / M)}), along the trajectory too, and prints it as "SE predicted by the run
#' itself". It sees the spread of the run's weights but not a mode the run missed nor a bias
#' all runs share, so it covers less than a replicate SE: on the validation suite's stored runs
#' (`inst/validation/single-run-se.R`, 600 SGAIS, 500 AIS and 440 nested-sampling runs) a single
#' run was within 2 of its SEs of the reference in 83% of SGAIS runs (89% without mixtures, 72%
#' on mixtures), 80% of AIS runs (85%, 73%) and 94% of nested-sampling runs. SGAIS's paper
#' preset reports none (NA): its single runs were within 2 predicted sds in 6%, the weights
#' being blind to the bias of its mini-batch gradients. For a decision, use replicates.
#'
#' With `replicates = R > 1`, R independent runs are combined by the mean of their evidence
#' estimates (log-mean-exp of the log evidences), which is unbiased for \eqn{Z}, and
#' `log_evidence_se` is the jackknife standard error of that log-mean-exp over the replicates,
#' along the whole trajectory too. When the replicates agree it equals the delta-method
#' \eqn{sd(\hat Z_r) / (\sqrt R \, mean(\hat Z_r))}{sd(Z_r) / (sqrt(R) mean(Z_r))}; unlike
#' it, it grows with their disagreement when one replicate dominates the mean (as when only some
#' runs found a posterior mode), where the delta method stays near 1 nat. The
#' replicates run through the future framework (\pkg{future.apply}, `future.seed = TRUE`), so
#' `future::plan(future::multisession)` runs them on the cores of this machine and a cluster plan
#' on a cluster, with the same result under every plan.
#'
#' The SE is never below \eqn{\sqrt{\mathrm{mean}(p_r^2) / R}}{sqrt(mean(p_r^2) / R)}, where
#' \eqn{p_r} is replicate r's own `predicted_sd` (see below; along the trajectory, its value at
#' that n). A spread measured from a few replicates is itself uncertain: two or three can agree
#' by chance, and with 10 the replicates' SE falls below 0.65 times the true one in one fit of
#' ten. The predictions come from the weights of every particle and are far steadier, but
#' cannot see a mode that a run missed, which only the replicates' disagreement shows; so the
#' SE is the larger of the two.
#'
#' The estimate of \eqn{\log Z} is biased low by about half the variance of one replicate's
#' \eqn{\log \hat Z} divided by R, and a replicate SE cannot see the part of the error that all
#' replicates share (thesis Section 6.2). Each replicate therefore also reports diagnostics that
#' predict its error without replicates (`diagnostics`): `predicted_sd`, the square root of the
#' summed chi-square divergences of the incremental weights over the number of particles, less
#' the share the score control variate removes (see [sgais_control()]; about the sd of
#' \eqn{\log \hat Z}: on the paper's softmax regression at n = 100,000 it predicted 0.63 where
#' the 7 seeds of `inst/bench/score-cv.R` spread by 0.66, and 1.17 against 2.0 without the
#' control variate); the lowest incremental ESS; the variance of the final
#' log-weights; and the fraction of chunks that needed more than 10 annealing steps. A
#' `predicted_sd` above 1 nat gives a warning of class `sgais_warning_unreliable`: use more
#' particles.
#'
#' With R replicates the standard error has R - 1 degrees of freedom: [confint()] uses the
#' \eqn{t_{R-1}} quantile (estimate \eqn{\pm} 3.18 SE for 95% with 4 replicates), while
#' \eqn{\pm} 2 SE covers only about 86% (92% with 10).
#'
#' An adaptive annealing step \eqn{\Delta\lambda} is chosen from the same particles whose
#' weights it sets, which biases \eqn{\hat Z} by \eqn{O(1 / M)} alike in every replicate, where
#' the SE cannot see it. On a linear regression whose intercept lies 20 prior sds from the prior
#' mean (100 particles), AIS's log-mean-exp over 160 runs was 0.24 nats low with adaptive steps
#' and 0.04 low with steps fixed in advance. So with `replicates` > 1, `sgais()` and [ais()] by
#' default first make one adaptive pilot run and then run every replicate on its steps
#' (`schedule`; for SGAIS in the chunks before the score control variate starts, where a chunk
#' takes most of its steps), at the cost of one run more. `inst/validation/schedule-bias.R`
#' measures it: over 100 runs on that case the log-mean-exp went from -0.18 to +0.03 nats
#' for AIS and from -0.10 to +0.06 for SGAIS (`inst/validation/schedule-bias-2026-11-24.csv`).
#'
#' Measured by `inst/validation/run.R` with 10 replicates (SGAIS and AIS on pilot schedules in
#' `inst/validation/results-2026-11-24b.csv`, nested sampling and the paper preset in
#' `results-2026-11-24.csv`) on 19 cases with an exact evidence (48 estimates): the largest error
#' of SGAIS was 0.24 nats, of AIS 0.23 and of nested sampling 0.38 (with adaptive steps SGAIS 0.45
#' and AIS 0.58, both on the far intercept), and the mean error of AIS over all cases -0.03 (with
#' adaptive steps -0.13). The exact value lay within \eqn{\pm} 2 SE in 88% (SGAIS 95%, AIS 80%,
#' nested sampling 86%) and within the 95% `confint()` in 94%; the median of |error| / SE was
#' 0.56, below the 0.70 of an honest SE. With the 11 cases whose references come from Stan +
#' bridge sampling or importance sampling (77 estimates in all), \eqn{\pm} 2 SE covered 86% and
#' `confint()` 91% (median |error| / SE 0.77). Of the 11 misses, 8 are at 2 to 2.8 SE, of both
#' signs, where the SE of 10 replicates is itself uncertain (its relative sd is about 24%): the
#' three of AIS were checked with 100 runs each, and two were noise (their log-mean-exp within
#' 0.03 of the reference) while one, a one-component mixture on the raw `faithful` data, was
#' 0.13 low on the pilot's steps (0.01 with adaptive steps); SGAIS at \eqn{10^6} was 0.24 low
#' (SE 0.09). Two come from a heavy right tail of \eqn{\hat Z}: on standardised `faithful`
#' with 3 components one run's \eqn{\log \hat Z} spreads by 1.5 nats, and the log-mean-exp
#' of 10 runs, which rarely sees the high ones, fell 1.2 (AIS, 2.7 SE) and 1.7 (SGAIS, 6 SE)
#' nats low: where the replicates spread by more than a nat, use more of them. One is nested
#' sampling on standardised `faithful` with 2 components, +0.55 at 3.8 SE, where 20 other seeds
#' gave +0.07 (SE 0.16). On the second seed (`--seed=2`,
#' `results-2026-11-24-seed2.csv`, with the SE floor above, which was chosen on the first) the
#' largest error on the exact cases was 0.32 (SGAIS), 0.24 (AIS) and 0.60 (nested sampling);
#' \eqn{\pm} 2 SE covered 88% of 77 (92% of the exact cases; 87% without the floor) and
#' `confint()` 94%, with a median |error| / SE of 0.90: seven misses at 2.0 to 2.6 SE, and two
#' mixture errors of 1.5 nats that recurred on both seeds: SGAIS on standardised `faithful`
#' with 3 components (-1.46, 5 SE) and nested sampling on raw `faithful` with 2 (-1.59, 2.5
#' SE). With 3 components every AIS run ends with two components on the clusters and a third
#' of about 5% weight between them, so the error arises on the way, where the third
#' component's weight switches on, not in a mode missed at the end. One move of 20 steps per
#' annealing step did not mix the directions that cross between modes; the moves are now
#' repeated until the particles decorrelate (see [sgais_control()]), which took SGAIS's mean
#' error over seeds 3-6 from -0.98 to -0.30 nats at twice the gradients (80 steps per move:
#' +0.04 at 4 times; `inst/validation/mixture-moves.R`). Nested sampling's runs on raw
#' `faithful` with 2 components are bimodal; 80 jump proposals per new point instead of 20 took
#' the mean error of single runs (seeds 3-14) from -1.91 to -0.18 nats
#' (`inst/validation/ns-jumps.R`).
#'
#' Re-validated on both seeds with these changes (SGAIS and AIS in
#' `results-2026-11-24-rounds-seed1.csv` and `-seed2.csv`, nested sampling in
#' `results-2026-11-24-ns-seed1.csv` and `-ns-seed2.csv`), every accuracy target held, and
#' \eqn{\pm} 2 SE covered 96% of the 77 fits on seed 1 and 89.6% on seed 2: 92.9% of the 154
#' together (binomial 95% interval 88-96%), `confint()` 96%, with a median |error| / SE of
#' 0.80 against 0.70 for an honest SE. Of the 11 misses 7 are on mixtures (5 of them SGAIS's),
#' where the SE of 10 replicates can be a third too small: use more replicates there, and
#' compare with [ais()] and [nested_sampling()]. Part of it is the pilot's schedule, which all
#' replicates share. SGAIS on `quakes` with 2 components erred -0.28 and +0.34 nats (2.9 and
#' 3.5 SE) on the two seeds; over 20 seeds its errors spread 1.6 times its SE (with adaptive
#' steps 0.8 times), and its pilots of seeds 1-3, each with 100 replicates, put the mean that
#' their replicates estimate at -0.08, +0.05 and -0.03 (SE 0.04). Given its pilot the SE is
#' honest; the pilots' means differ by an sd of 0.05 to 0.15 nats (from these three and from
#' the spread over 20 seeds), which it cannot see. On standardised
#' `faithful` with 2 components (SGAIS) and `quakes` with 1 (AIS) the errors over 20 seeds
#' spread as the SE said with either schedule, and adaptive steps were 0.15 nats low on the far
#' intercept, so the pilot stays the default (`inst/validation/pilot-spread.R`). Nested
#' sampling's replicates are averaged in the log, not in \eqn{Z} (see [nested_sampling()]);
#' averaged in \eqn{Z} they covered only 77%. A mode that no replicate reaches is invisible to
#' the SE; one that some reach and others do not makes the replicates disagree, which gives a
#' warning (see [gaussian_mixture()] for a measured case).
#'
#' @param model A model: a built-in one such as [linear_regression()], or your own from
#'   [custom_model()] or [compiled_model()]; or a fit from `sgais()` to continue on `new_data`.
#' @param ... Settings that replace those of `control`, by name (e.g. `particles = 50`); see
#'   [sgais_control()].
#' @param control The tuning: [sgais_control()] (`"robust"`, the default) or
#'   `sgais_control("paper")`.
#' @param replicates Number of independent runs, combined for the estimate and its standard
#'   error.
#' @param schedule How each chunk's annealing steps are chosen: `"adaptive"`, every run by
#'   `target_ess` as it goes; or `"pilot"`, one adaptive pilot run first, whose steps every
#'   replicate then takes in the chunks before the score control variate starts (its estimate
#'   is not used; its cost is counted), where a chunk takes most of its annealing steps; the
#'   later chunks adapt their steps (with the control variate, fixed steps biased the estimate
#'   upwards: +1.3 nats on a 21-parameter regression at n = 50,000). `NULL`, the default, is
#'   `"pilot"` with `replicates` > 1 and `"adaptive"` for one run. Adaptive steps bias the
#'   estimate by \eqn{O(1/M)} in a way replicates cannot see; see "Standard error and how far
#'   to trust it" and [ais()], "Schedule". A fit continued on new data continues its
#'   pilot first, and its replicates take the pilot's steps on the new chunks: the result is
#'   the fit of all the data at once.
#' @param progress Show a progress bar with an ETA. Defaults to the option `sgais.progress`, or
#'   else [interactive()].
#' @param seed Optional seed for a reproducible run; the caller's random stream is then left as
#'   it was. Without it the run draws from (and advances) R's random stream, so
#'   [set.seed()] before the call also makes it reproducible.
#' @return An object of class `c("sgais_fit", "sgais_evidence")`, a list with
#'   \describe{
#'   \item{`log_evidence`, `log_evidence_se`}{the log evidence of all the data and its standard
#'     error (for one replicate, the run's predicted sd; `NA` under the paper preset);}
#'   \item{`replicate_log_evidence`, `replicate_sd`}{each replicate's log evidence and their sd;}
#'   \item{`trajectory`}{a data frame with one row per chunk: `n` (observations so far),
#'     `log_evidence`, `log_evidence_se`, `log_evidence_per_obs`, `log_predictive` and
#'     `log_predictive_per_obs` (the chunk's log predictive density given the earlier data,
#'     \eqn{\log \hat p(C \mid y_{<C})}{log p(C | earlier data)}, the change in log evidence,
#'     and per observation), `annealing_steps` (in this
#'     chunk), `min_ess` (the lowest incremental ESS of this chunk's steps), `ess` (ESS of the
#'     particle weights after the chunk), `resamples`, `sghmc_steps` (per particle in this chunk),
#'     `acceptance` (the median acceptance rate of the Metropolis-adjusted moves, `NA` where
#'     the moves use mini-batches or the paper's kernel), `step_size` (the step in target widths,
#'     or the paper's \eqn{\sqrt\eta}), `divergent` (moves undone because they ran off to
#'     non-finite values), `step_halvings` (times the moves without a Metropolis test spread
#'     the particles more than 4 times wider than their target and were redone with half the
#'     step, which then stays halved; any gives a warning, see [sgais_control()]),
#'     `jump_acceptance` (the fraction of the chunk's jump proposals accepted, `NA` where none
#'     were made; see [sgais_control()]), `restarts` (1 where the run restarted at the chunk's
#'     end from all the observations so far shuffled, after a shift or periodically, so that
#'     its particles could leave a mode the posterior had left; the row's costs and annealing
#'     steps are the restart's; see `restart_threshold` in [sgais_control()]), `reanchors`
#'     (times the control-variate anchor moved in this chunk:
#'     when the earlier data have doubled, or after a shift that moved the posterior more than
#'     two target widths; each costs a gradient pass over the earlier data), and the cumulative
#'     cost so far: `seconds`, `gradient_evaluations` and
#'     `likelihood_evaluations` (per observation and particle, all replicates), and the cost of
#'     this chunk alone, `chunk_seconds` and `chunk_gradient_evaluations` (flat as n grows: a
#'     chunk costs the same however many came before it); with several
#'     replicates the diagnostics are their means (`min_ess` their minimum); and `partial`,
#'     `TRUE` for a last chunk that the data ended inside (see "Continuing a fit on new data");}
#'   \item{`diagnostics`}{one row per replicate: `log_evidence`, `predicted_sd`, `lowest_ess`,
#'     `final_log_weight_var`, `many_steps_fraction`;}
#'   \item{`state`}{the sampler state, of class `sgais_state`: `particles` (a particles x
#'     parameters matrix, all replicates' particles stacked) and `log_weights` after all `n`
#'     observations, and what a continuation starts from (each replicate's sampler state after
#'     the last whole chunk, with its random stream, and its trace);}
#'   \item{`annealing`, `pilot`}{`"adaptive"` or `"pilot"` (see `schedule`); for `"pilot"` a
#'     one-row data frame of the pilot run's `log_evidence` (not used in the estimate), its
#'     annealing `steps` and its cost, else `NULL`;}
#'   \item{`settings`, `call`, `seed`, `initial_seed`, `final_seed`}{how it was run, with R's RNG
#'     state (`.Random.seed`) before and after (of the first run, the pilot if there is one);}
#'   \item{`seconds`, `gradient_evaluations`, `likelihood_evaluations`}{the total cost, the
#'     pilot's included (the trajectory's cost columns are the replicates');}
#'   \item{`model`}{the model.}
#'   }
#'   Use [log_evidence()], [as.data.frame()] (the trajectory, with the columns every fit
#'   shares first: see [sgais_evidence]), `print()` and `summary()`.
#' @references Cameron, S. A., Eggers, H. C. and Kroon, S. (2019). Stochastic Gradient Annealed
#'   Importance Sampling for Efficient Online Marginal Likelihood Estimation. *Entropy* 21(11),
#'   1109. \doi{10.3390/e21111109}
#' @seealso [sgais_control()] for the tuning, [ais()] and [nested_sampling()] for reference
#'   estimates, [detect_shifts()] for changes in the data read from the trajectory.
#' @export
#' @examples
#' data <- simulate_linear_regression(5000, seed = 1)
#' model <- linear_regression(y ~ ., data)
#' fit <- sgais(model, seed = 2)
#' fit
#' exact_log_evidence(model)
#' tail(as.data.frame(fit))
#'
#' # the paper's algorithm and settings, and a standard error from 4 replicates
#' sgais(model, control = sgais_control("paper"), seed = 2)
#'
#' # continue on 3000 new observations: exactly the fit of all 8000 at once
#' more <- simulate_linear_regression(8000, seed = 1)[5001:8000, ]
#' fit <- sgais(fit, more)
#' tail(as.data.frame(fit), 3)
#' \donttest{
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
  check_prior_conflict(model, call)
  settings <- check_kernel_model(control_settings(control, dots, method, call), model, call)
  replicates <- check_whole_number(replicates, "replicates", 1, call)
  progress <- check_flag(progress, "progress", call)
  check_seed(seed, call)
  schedule <- sgais_schedule_kind(schedule, replicates, settings, call)
  if (!is.null(hybrid)) settings$hybrid <- hybrid
  fit <- sgais_start(model, settings, replicates, progress, seed, call, schedule)
  warn_if_unreliable(warn_if_interrupted(fit, model$n, call))
}

# The NS hybrid of the sequential estimator (thesis Sections 4.1 and 5.3): nested sampling on
# the first settings$hybrid observations replaces the sequential estimator's first, most
# variable terms. Returns the state after them (particles drawn from the nested-sampling
# posterior, each weighted by its evidence) and the trace row that records them.
hybrid_start <- function(model, state, settings) {
  n0 <- settings$hybrid
  ns <- nested_sampling(model_keep_first(model, n0), progress = FALSE)
  M <- settings$early_particles
  state$theta <- t(suppressWarnings(posterior_samples(ns, M)))
  dimnames(state$theta) <- NULL
  state$logw <- rep(ns$log_evidence, M)
  state$n <- n0
  trace <- data.frame(
    n = as_count(n0), log_evidence = ns$log_evidence, annealing_steps = 0L, resamples = 0L,
    sghmc_steps = 0L, divergent = 0L, step_halvings = 0L, reanchors = 0L, min_ess = as.double(M),
    ess = as.double(M), predicted_var = 0, acceptance = NA_real_, step_size = NA_real_,
    seconds = ns$seconds, gradient_evaluations = ns$gradient_evaluations,
    likelihood_evaluations = ns$likelihood_evaluations, data_fraction = NA_real_,
    jump_acceptance = NA_real_, restarts = 0L,
    partial = FALSE
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

# The state of a run before its first observation: particles `theta` (dim x M, prior draws)
# with equal weights, the run's random-stream `key`, and the observations at its last restart
# (sgais_restart()).
sgais_initial_state <- function(theta, key, restart_n = 0) {
  list(theta = theta, logw = numeric(ncol(theta)), n = 0, anchor = numeric(0),
       anchor_grad = numeric(0), anchor_n = 0, step_size = 0, precond_cov = numeric(0),
       precond_n = 0, precond_ess = 0, reservoir = NULL, score = numeric(0), key = key,
       lambdas = numeric(0), restart_n = restart_n, shift_restart_n = 0)
}

# A new fit of `model` (the work of sgais.sgais_model(), with its arguments checked); one
# replicate recovers from an interrupt (see sgais_fit_of()).
# With `schedule` "pilot" an adaptive pilot run comes first and the replicates anneal each of
# its chunks on its lambdas (see ?sgais, "Standard error and how far to trust it").
sgais_start <- function(model, settings, replicates, progress, seed, call,
                        schedule = sgais_schedule_kind(NULL, replicates, settings, call)) {
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
#' @param new_data Observations to add to a fit, as its model's constructor took its data: a data
#'   frame for a model built from a formula, a list with `x` and `y` for one built from `x` and
#'   `y`, a matrix or data frame for [gaussian_mixture()]. They are turned into the model's design
#'   by its specification (its factor levels, class labels and columns); rows that do not fit it
#'   are an error of class `sgais_error_data_mismatch`.
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
    new <- state
    if (k > 0L) {
      new <- list(theta = res$theta, logw = res$logw, n = trace$n[k], anchor = res$anchor,
                  anchor_grad = res$anchor_grad, anchor_n = res$anchor_n,
                  step_size = res$step_size_end, precond_cov = res$precond_cov,
                  precond_n = res$precond_n, precond_ess = res$precond_ess,
                  slots = res$slots, score = res$score, buffer_start = state$buffer_start,
                  key = state$key, log_z = trace$log_evidence[k],
                  lambdas = c(state$lambdas, res$lambdas), restart_n = state$restart_n,
                  shift_restart_n = state$shift_restart_n)
    }
    trace$n <- as_count(trace$n)
    trace$restarts <- integer(nrow(trace))
    list(state = new, trace = trace, restart_at = attr(res, "restart_at"))
  }
  # periodic restarts (sgais_restart()): by default (restart_every NULL) only for models whose
  # posteriors have separated modes that local moves cannot travel between (those with jump
  # proposals)
  every <- settings$restart_every %||% (if (model_has_jumps(model)) 2 else Inf)
  slice <- function(state, budget) {
    # after a shift only once the data have grown by half since the last such restart (so
    # that a drift flagged in every chunk does not restart every chunk), and periodically once
    # they have grown `every` times since the last restart (src/sgais.c)
    cs$restart_after <- 1.5 * state$shift_restart_n
    cs$restart_due <- if (is.finite(every)) {
      every * max(state$restart_n, settings$exact_until, settings$chunk_size)
    } else {
      Inf
    }
    out <- run(model, state, n_end, cs, schedule, budget)
    if (out$restart_at > 0) {
      shifted <- out$restart_at < cs$restart_due
      again <- sgais_restart(model, out$state, out$restart_at, cs, run)
      again$state$shift_restart_n <- if (shifted) out$restart_at else state$shift_restart_n
      out$state <- again$state
      out$trace <- rbind(out$trace, again$trace)
    }
    out[c("state", "trace")]
  }
  run_in_slices(
    slice, state,
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

# Recovery after a shift (src/sgais.c, shift_score()): the chunk ending at `at` observations was
# predicted far worse than the one before it, so the particles, which may sit in a mode that no
# longer holds the posterior (a new cluster with no component near it: no local move reaches
# it through the earlier data's likelihood), are replaced by those of a run on the same `at`
# observations in a random order, from the prior: the order of the data no longer matters, and
# log Z of the first `at` observations is that run's estimate, as valid as any (each later
# chunk's increment then builds on it). Nothing in a state with every observation held depends
# on their order (the anchor's gradient sums over all of them, the mini-batches draw from all
# of them), so the run goes on from that state with the data in order. The shuffle, the prior
# draws and the run's new key come from R's generator seeded from the old key and `at`, so a
# run split into pieces restarts identically. `state` is the run's state after the chunks
# before the flagged one; returns the state after the restart and one trace row for it
# (`restarts` = 1; its costs the whole run's, its annealing steps all of the run's chunks').
sgais_restart <- function(model, state, at, cs, run) {
  seed <- as.integer((sum(state$key * c(1, 65536)) + at) %% .Machine$integer.max)
  M <- cs$early_particles
  drawn <- with_seed(seed, list(order = sample.int(at), theta = model_prior_draw(model, M),
                                key = rng_key()))
  shuffled <- model
  shuffled$data <- data_columns(model$data, drawn$order)
  shuffled$n <- as_count(at)
  again <- cs
  again$restart_threshold <- again$restart_due <- Inf
  # every observation is held, from the first (the C side allows restarts only then)
  start <- sgais_initial_state(drawn$theta, drawn$key, restart_n = at)
  start$slots <- integer(0)
  start$buffer_start <- 0
  out <- run(shuffled, start, at, again, no_schedule, Inf)
  stopifnot(out$state$n == at)
  # the shuffled run's lambdas are not a schedule for this chunk (pilot_schedule() skips it)
  out$state$lambdas <- state$lambdas
  tr <- out$trace
  k <- nrow(tr)
  mean_or_na <- function(x) if (all(is.na(x))) NA_real_ else mean(x, na.rm = TRUE)
  out$trace <- data.frame(
    n = tr$n[k], log_evidence = tr$log_evidence[k],
    annealing_steps = sum(tr$annealing_steps), resamples = sum(tr$resamples),
    sghmc_steps = sum(tr$sghmc_steps), divergent = sum(tr$divergent),
    reanchors = sum(tr$reanchors), min_ess = min(tr$min_ess), ess = tr$ess[k],
    predicted_var = sum(tr$predicted_var), acceptance = mean_or_na(tr$acceptance),
    step_size = tr$step_size[k], seconds = sum(tr$seconds),
    gradient_evaluations = sum(tr$gradient_evaluations),
    likelihood_evaluations = sum(tr$likelihood_evaluations),
    data_fraction = mean_or_na(tr$data_fraction), step_halvings = sum(tr$step_halvings),
    jump_acceptance = mean_or_na(tr$jump_acceptance), restarts = 1L
  )[names(tr)]
  out
}

# A replicate's annealing schedule (src/sgais.c): for each chunk ending at n[j], steps[j]
# lambdas, one chunk after another in `lambda`; chunks not in it anneal adaptively.
no_schedule <- list(n = numeric(0), steps = integer(0), lambda = numeric(0))

# The schedule a pilot run (run_piloted()) took, for the replicates to follow: the lambdas of
# each of its chunks, the last partial one included (the replicates end there too).
pilot_schedule <- function(pilot) {
  # a restart's chunk (sgais_restart()) anneals adaptively
  keep <- pilot$trace$restarts == 0L
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
  each_of <- function(col) matrix(vapply(traces, `[[`, numeric(length(n)), col), nrow = length(n))
  mean_of <- function(col) rowMeans(each_of(col))
  sum_of <- function(col) rowSums(each_of(col))
  le <- apply(log_z, 1, log_mean_exp)
  # the SE at every n by the rule of the whole fit's (replicate_se()), with the replicates'
  # predicted sds there
  predicted_sd <- sqrt(matrix(apply(each_of("predicted_var"), 2, cumsum), nrow = length(n)))
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
    annealing_steps = mean_of("annealing_steps"),
    min_ess = do.call(pmin, lapply(traces, `[[`, "min_ess")),
    ess = mean_of("ess"),
    resamples = mean_of("resamples"),
    sghmc_steps = mean_of("sghmc_steps"),
    acceptance = mean_of("acceptance"),
    step_size = mean_of("step_size"),
    divergent = mean_of("divergent"),
    step_halvings = mean_of("step_halvings"),
    reanchors = mean_of("reanchors"),
    data_fraction = mean_of("data_fraction"),
    jump_acceptance = mean_of("jump_acceptance"),
    restarts = sum_of("restarts"),
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
      anneal_diagnostics(r$trace, r$state$logw)
    }))
  )
  do.call(new_sgais_evidence, quote = TRUE, c(
    list(
      method = estimator_label(settings),
      model = model,
      run = combine_runs(runs),
      settings = settings,
      call = call,
      seed = seed,
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
      pilot = pilot_summary(pilot),
      class = "sgais_fit"
    ),
    replicate_summary(last, predicted_sd = diagnostics$predicted_sd, single = single)
  ))
}

#' @export
format.sgais_fit <- function(x, ...) {
  x <- validate_sgais_evidence(x, sys.call())
  tr <- x$trajectory
  s <- x$settings
  c(
    NextMethod(),
    sprintf("  settings:  %d particles%s, batch %s, chunk %s, target ESS %s, %s%s%s%s",
            s$particles,
            if (s$early_particles > s$particles) sprintf(" (%d early)", s$early_particles) else "",
            format_count(s$batch_size), format_count(s$chunk_size),
            format(s$target_ess), format_settings(s),
            if (s$control_variates) ", control variates" else "",
            if (bounded_reservoir(s)) sprintf(", reservoir of %s", format_count(s$reservoir_size)) else "",
            if (s$resample >= 1) ", resampling" else if (s$resample > 0) sprintf(", resampling below ESS %s", format(s$resample * s$particles)) else ""),
    sprintf("  annealing: %s chunks, %s steps (at most %s in a chunk)%s, lowest ESS %.2f, final weight ESS %.2f",
            format_count(nrow(tr)), format_count(round(sum(tr$annealing_steps))),
            format(max(tr$annealing_steps)),
            if (identical(x$annealing, "pilot")) " on a pilot run's schedule" else "",
            min(tr$min_ess), tr$ess[nrow(tr)])
  )
}

#' @export
as.data.frame.sgais_fit <- function(x, ...) {
  contract_frame(x, x$trajectory)
}

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
    sprintf("Annealing: %s chunks, %s steps (mean %.1f, most %s, in the chunk ending at n = %s);",
            format_count(a[["chunks"]]), format_count(round(a[["steps"]])), a[["mean_steps"]],
            format(a[["max_steps"]]), format_count(a[["max_steps_at"]])),
    sprintf("  lowest incremental ESS %.2f, final weight ESS %.2f of %d particles.",
            a[["lowest_ess"]], a[["final_ess"]], as.integer(a[["final_particles"]])),
    "",
    "Trajectory:",
    utils::capture.output(print(x$trajectory, digits = 8, row.names = FALSE))
  )
}
