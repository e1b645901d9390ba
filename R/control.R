# Tuning of the estimators: presets and the one settings parser shared by sgais(), ais() and
# nested_sampling(). A control object holds the preset, the values the user gave and the
# resolved settings the C core reads by name (src/ffi.c, sg_move_settings_from_r(), and
# each estimator's settings_from_r() in src/*_r.c).

# The presets. "paper" is the paper's Section 6.1 (and Appendix A) exactly; "robust" moves in
# units of the target's width, with control-variate gradients, an exact early phase and
# adaptive resampling (ALGORITHM-NOTES, "Why the defaults fail off the paper's model").
# A function of a field is evaluated on the other resolved values (e.g. target_ess).
control_presets <- list(
  sgais = list(
    paper = list(
      particles = 10, target_ess = 5, annealing_ess = "incremental", resample = FALSE,
      sghmc_steps = 20, min_sghmc_steps = NULL, step_scale = "per_observation",
      learning_rate = 0.1, step_size = 0.1, momentum_decay = 0.2, preconditioner = "none",
      integrator = "euler", batch_size = 500, chunk_size = NULL, control_variates = FALSE,
      exact_until = NULL, early_particles = NULL, reservoir_size = Inf, kernel = "sghmc",
      mh_tolerance = 0.05, mh_batch_size = 100, mh_bound = "bernstein", update = "annealed",
      first_chunk_size = NULL, score_control_variate = FALSE, jumps = 0, max_rounds = 1,
      max_correlation = 1, restart_threshold = Inf, restart_every = Inf
    ),
    robust = list(
      particles = 50, target_ess = NULL, annealing_ess = "conditional", resample = 0.5,
      sghmc_steps = 20, min_sghmc_steps = 5, step_scale = "width", learning_rate = 0.1,
      step_size = 0.3, momentum_decay = 0.6,
      preconditioner = "dense", integrator = "baoab", batch_size = 500, chunk_size = NULL,
      control_variates = TRUE, exact_until = NULL, early_particles = 100, reservoir_size = Inf,
      kernel = "sghmc", mh_tolerance = 0.05, mh_batch_size = 100, mh_bound = "bernstein",
      update = "annealed", first_chunk_size = NULL, score_control_variate = TRUE, jumps = 10,
      max_rounds = 4, max_correlation = 0.5, restart_threshold = 5, restart_every = NULL
    )
  ),
  ais = list(
    paper = list(
      particles = 10, target_ess = 5, annealing_ess = "incremental", resample = FALSE,
      sghmc_steps = 20, min_sghmc_steps = NULL, step_scale = "per_observation",
      learning_rate = 0.1, step_size = 0.1, momentum_decay = 0.2, preconditioner = "none",
      integrator = "euler", kernel = "sghmc", mh_tolerance = 0.05, mh_batch_size = 100,
      mh_bound = "bernstein", jumps = 0, max_rounds = 1, max_correlation = 1
    ),
    robust = list(
      particles = 100, target_ess = NULL, annealing_ess = "conditional", resample = 0.5,
      sghmc_steps = 20, min_sghmc_steps = NULL, step_scale = "width", learning_rate = 0.1,
      step_size = 0.3, momentum_decay = 0.6, preconditioner = "dense", integrator = "baoab",
      kernel = "sghmc", mh_tolerance = 0.05, mh_batch_size = 100, mh_bound = "bernstein",
      jumps = 10, max_rounds = 4, max_correlation = 0.5
    )
  ),
  nested_sampling = list(
    paper = list(
      live_points = 2, move = "sghmc", sghmc_steps = 20, walk_steps = NULL,
      max_walk_steps = NULL, step_scale = "per_observation", learning_rate = 1e-3,
      step_size = 0.1, momentum_decay = 0.1, preconditioner = "none", integrator = "euler", tolerance = 0.01,
      max_iterations = 1e6, jumps = 0
    ),
    robust = list(
      live_points = 100, move = "walk", sghmc_steps = 20, walk_steps = NULL,
      max_walk_steps = NULL, step_scale = "width", learning_rate = 1e-3,
      step_size = 0.3, momentum_decay = 0.1, preconditioner = "dense", integrator = "euler", tolerance = 0.01,
      max_iterations = 1e6, jumps = 80
    )
  )
)

# The estimators that share SGAIS's sampler (src/sgais.c) with another `update`: SIR with data
# tempering (thesis Alg. 7) and the sequential SG-MCMC estimator (thesis Section 4.1). "paper"
# is the thesis's version: Alg. 7 literally (one observation at a time, resampled every time,
# moved by Metropolis-adjusted HMC on the exact potential: its cost grows as N^2), and the
# estimator of Cameron et al. (2019a) with the paper's SGHMC and their chunk schedule (20
# observations, growing by 20 up to 500). "robust" takes the robust SGAIS moves and chunks of 1,
# 2, 3, ... observations up to 500 (about sqrt(2 n) at n observations, so that a chunk's share of
# the information shrinks as n grows): measured on 2,000 simulated regression observations
# (seeds 1-3), SIR with chunks from 20 was -300 to +7 nats off, from 1 within 1.4.
control_presets$sir <- list(
  paper = utils::modifyList(control_presets$sgais$robust, list(
    particles = 10, early_particles = NULL, update = "importance", resample = TRUE,
    chunk_size = 1, batch_size = 1, exact_until = .Machine$integer.max, control_variates = FALSE,
    score_control_variate = FALSE, jumps = 0, restart_threshold = Inf, restart_every = Inf
  )),
  robust = utils::modifyList(control_presets$sgais$robust, list(
    update = "importance", first_chunk_size = 1, restart_threshold = Inf, restart_every = Inf
  ))
)
control_presets$sequential <- list(
  paper = utils::modifyList(control_presets$sgais$paper, list(
    update = "averaged", chunk_size = 500, first_chunk_size = 20
  )),
  robust = utils::modifyList(control_presets$sgais$robust, list(
    update = "averaged", resample = FALSE, first_chunk_size = 1, restart_threshold = Inf,
    restart_every = Inf
  ))
)

# The types, ranges, codes and derived values of the settings: settings_schema (R/settings.R).

#' Tuning of the estimators: presets and settings
#'
#' `sgais_control()`, `ais_control()` and `nested_control()` hold the tuning of [sgais()],
#' [ais()] and [nested_sampling()]. Start from a preset and change what you need:
#' `sgais_control("paper")` is Algorithm 1 of Cameron, Eggers and Kroon (2019) with the settings
#' of their Section 6.1, exactly as published; `sgais_control()` (preset `"robust"`, the
#' default) is the version of the package that is accurate off the paper's simulated model.
#'
#' The paper's SGHMC step is \eqn{\eta} = `learning_rate` / n in the units of the parameters.
#' Its accuracy then depends on how the data are scaled, on the noise level and on the number of
#' parameters: with mini-batch gradient noise the particles sample a heated posterior, and the
#' log evidence is underestimated by about \eqn{N p \cdot lr / (4 \alpha |B| \sigma^2)}{N p lr /
#' (4 alpha |B| sigma^2)} nats (p parameters, noise variance \eqn{\sigma^2}) -- tens to thousands
#' of nats on real data. The robust preset changes five things:
#' \describe{
#'   \item{Moves in units of the target's width.}{The SGHMC kernel is preconditioned by the
#'     weighted covariance of the particles (`preconditioner = "dense"`, which uses only its
#'     diagonal when there are fewer than 6 particles per parameter: a full covariance from
#'     fewer lets the particles collapse; or `"diagonal"`), re-estimated at every annealing step (and averaged over chunks in SGAIS's
#'     mini-batch phase), as SMC samplers tune their kernels to the particle population (Buchholz,
#'     Chopin and Jacob 2021). Each particle moves in the covariance of the others: a metric that
#'     includes the particle it moves is stretched along that particle's own offset, so particles
#'     in the tails leave them faster than they enter, the population contracts and \eqn{\log
#'     \hat Z}{log Z} comes out too high (measured on a 14-parameter real regression with 100
#'     particles: +0.38 nats against -0.15 with the exact covariance). Directions the
#'     likelihood does not depend on, with the prior's posterior along them, are kept out of the
#'     metric: in [softmax_regression()] adding the same number to a covariate's coefficient in
#'     every class changes no probability. The particles' spread along those directions stays
#'     as wide as the prior, so a metric estimated from it is far too wide along the identified
#'     directions, whose width falls as \eqn{1/\sqrt n}{1 / sqrt(n)}: on the paper's
#'     44-parameter model SGAIS's mini-batch moves became unstable near n = 16,000 and stalled,
#'     and AIS took an hour at n = 100,000. The kernels now move the identified part in a
#'     metric estimated from it, and draw the free part from the prior after each move, which
#'     is exact (a Gibbs step). Each step moves about `step_size` target widths (\eqn{\eta =}
#'     `step_size`\eqn{^2} in the whitened coordinates), whatever the units of the data, the
#'     temperature \eqn{\lambda} or n; `momentum_decay` = 2 `step_size` is close to critical
#'     damping. The number of steps adapts to how far the target moved: `sghmc_steps` after a
#'     full annealing step (incremental ESS at `target_ess`), fewer, down to `min_sghmc_steps`,
#'     when a chunk barely changed the posterior, in proportion to the chi-square distance
#'     \eqn{M / ESS - 1}. Where the moves are Metropolis-adjusted (AIS; SGAIS while the
#'     potential is exact) the particles then move again, up to `max_rounds` (4) moves in all,
#'     while they have not decorrelated from where they began: the largest, over the
#'     whitened coordinates, of the weighted correlation between each particle's position
#'     before and after is above `max_correlation` (0.5), a criterion of the kind PyMC's SMC
#'     kernels use to stop their MCMC steps. The largest and not the mean: on a mixture most
#'     directions decorrelate within 20 steps (mean 0.05) while those that cross between
#'     modes do not (on 3 components over `scale(faithful)` the largest was above 0.8 in a
#'     tenth of the annealing steps); on regressions and softmax regressions it stays at 0.15
#'     to 0.4, about its noise with 100 particles, and moves are rarely repeated. On that
#'     mixture one move per step left SGAIS 1.0 nats low on average (seeds 3-6, 10
#'     replicates each; -1.5 to -1.7 at the validation suite's seeds), repeated moves 0.3, at
#'     twice the gradients (`inst/validation/mixture-moves.R`). Mini-batch moves have no Metropolis test, so SGAIS checks them (and
#'     AIS checks moves without one, with `integrator = "euler"`): moves that leave the
#'     particles more than 4 times as spread (in the metric) as before are undone and redone
#'     with half the step, which then stays halved (trajectory columns `step_size` and
#'     `step_halvings`); after 4 halvings in one annealing step it stops with an error. A run
#'     whose step was halved warns (class `sgais_warning_unreliable`): the moves broke down
#'     once, and the particles may have been heated before the check saw it (measured: SGLD
#'     on the paper's softmax regression at N = 10,000 with `step_size = 0.1` went on after 2
#'     halvings to a log evidence 350 nats low).}
#'   \item{Control-variate gradients (SGAIS).}{The mini-batch estimate of the gradient over the
#'     earlier observations is centred at an anchor \eqn{\hat\theta}{a} (the weighted particle
#'     mean): \eqn{G(\hat\theta) + (n_{prev}/|B|) \sum_B [\nabla \log p(y \mid \theta) - \nabla
#'     \log p(y \mid \hat\theta)]}{G(a) + (n_prev / |B|) sum_B [grad log p(y | theta) - grad log
#'     p(y | a)]}, where \eqn{G} is the exact gradient sum over all earlier observations at the
#'     anchor, updated chunk by chunk. The anchor is renewed whenever the earlier data have
#'     doubled since it was set, at a cost of one gradient evaluation per earlier observation
#'     (about 2N in all, counted in `gradient_evaluations`), and also whenever the particles'
#'     mean has moved more than two target widths from it, which happens after a shift in the
#'     data (trajectory column `reanchors`). The gradient noise then shrinks with
#'     the posterior instead of growing with n; each mini-batch costs two gradient evaluations
#'     per observation instead of one.}
#'   \item{An exact early phase (SGAIS).}{While there are at most `exact_until` earlier
#'     observations their gradient is computed exactly (the paper does this up to one
#'     mini-batch), with `early_particles` particles and Metropolis-adjusted moves: the first
#'     chunks make most of the error (thesis Section 4.1).}
#'   \item{Resampling.}{When the weight ESS falls below `resample` times the number of particles,
#'     the particles are resampled (systematically) before they move, so their effort goes to
#'     the particles that matter and a multimodal posterior keeps its dominant mode.}
#'   \item{A score control variate for each evidence increment (SGAIS).}{Each chunk's
#'     predictive density \eqn{\hat p(C \mid \textrm{earlier})}{p-hat(C | earlier)} is a weighted
#'     mean over the particles, whose Monte Carlo error is dominated by the sampling error of
#'     their mean in the direction the new chunk pulls: it adds about \eqn{p/M \cdot c/n}{p / M
#'     * c / n} to the variance of \eqn{\log \hat Z}{log Z-hat} for a chunk of c observations
#'     after n, so over a stream about \eqn{p \log(N) / M}{p log(N) / M}, and \eqn{\log \hat
#'     Z}{log Z-hat}, the log of an unbiased estimate, comes out low by half its variance.
#'     Measured on the paper's 44-parameter softmax regression with 50 particles, without it
#'     the error was -0.9 nats at n = 10,000 and -3.3 (sd 2.0, 7 seeds) at 100,000. The score
#'     of the particles' target has mean zero, so \eqn{h(\theta) = v' \nabla \log
#'     f(\theta)}{h(theta) = v' grad log f(theta)} is a control variate (Mira, Solgi and Imparato
#'     2013; South, Oates, Mira and Drovandi 2023): with \eqn{v = A g}{v = A g}, \eqn{A} the
#'     particles' covariance and \eqn{g} the chunk's log-likelihood gradient at their mean, it
#'     is (minus) the linear term of the chunk's log-likelihood, and each annealing step's
#'     ratio \eqn{\sum_i W_i w_i}{sum W_i w_i} becomes \eqn{\sum_i W_i w_i - \beta \sum_i W_i
#'     h_i}{sum W_i w_i - beta sum W_i h_i}, \eqn{\beta}{beta} the weighted regression slope.
#'     The particles' weights, and so the moves and resampling, are unchanged. The scores are
#'     the gradients the last SGHMC step computed anyway (a mini-batch estimate, unbiased), so
#'     the cost is one gradient of the chunk per annealing step (other kernels compute the
#'     scores, one gradient per particle per annealing step). With it the errors were -0.3 at
#'     10,000 and -1.0 (sd 0.7, the same 7 seeds) at 100,000, with the same gradient
#'     evaluations (`inst/bench/score-cv.R`). It is used once the
#'     earlier observations number at least 4 times the chunk's: annealing a first chunk away
#'     from the prior, where the posterior changes the most within a chunk, it biased the
#'     estimate upwards (+2 nats on the same model), so at the defaults it starts with the
#'     mini-batch phase.}
#'   \item{Jump proposals between separated modes (AIS, SGAIS while the potential is exact,
#'     and nested sampling).}{Local moves cannot carry a particle between modes separated by a
#'     region of low density, and tempering from the prior can leave every particle in the
#'     wrong one: on `faithful` in its raw units a 2-component [gaussian_mixture()] settles
#'     with one component over both clusters and the other empty near 0, 306 nats below the
#'     evidence, in most runs of AIS, SGAIS and nested sampling. After each move a model that
#'     provides them (Gaussian mixtures with up to 12 components) makes `jumps` independence
#'     Metropolis-Hastings proposals for the whole parameter vector, each exactly invariant for
#'     the current target. The proposal mixes the particles' weighted means and variances,
#'     component by component (without the particle that jumps), which keeps the mode the particles occupy
#'     reachable so they may leave it (South, Pettitt and Drovandi 2019), with the model's
#'     guess at the other modes: for a mixture, the conjugate posterior of each component given
#'     one cluster of the data, tempered like the target. The clusters are k-means refined by
#'     classification EM, their number (at most the components) the one whose allocation the
#'     model finds most probable: always as many clusters as components split real clusters,
#'     and one AIS run with 4 components on `scale(faithful)` (2 clusters) ended 23.7 nats low.
#'     Nested sampling makes them within the contour, from a proposal that mixes the widths of
#'     posteriors of \eqn{N, N/4, N/16, \ldots} observations, since the constrained prior
#'     shrinks from the prior to the posterior in the course of a run. On raw `faithful` with 2
#'     components, single runs at the defaults (seeds 1-8): AIS -0.45 nats (sd 1.1), SGAIS -0.43
#'     (sd 1.1), nested sampling -1.5 (sd 1.8), all -306 or -307 without them in most runs; on
#'     a subset small enough for the exact evidence (11 observations, 3 components) AIS was
#'     +0.03 (sd 0.14, 12 seeds) with them and +0.32 (sd 0.33) without. They cost a
#'     likelihood evaluation each, no gradient. Nested sampling makes 80 per new live point:
#'     its runs on raw `faithful` with 2 components are bimodal, those whose live points reach
#'     the second cluster late ending 3 to 4 nats low, and with 20 they erred by -1.9 nats on
#'     average (sd 1.6, seeds 3-14, 7 of 12 runs below -1), with 80 by -0.2 (sd 1.0, 3 of 12),
#'     at 12% more time (`inst/validation/ns-jumps.R`).}
#' }
#' For nested sampling the robust preset makes new live points by a Metropolis random walk within
#' the contour in the metric of the live points' covariance (as dynesty and ernest scale their
#' proposals to the live points; estimated without the point the walk starts from, for the same
#' reason), exactly invariant for the constrained prior, with 100 live
#' points; so its evidence no longer drifts upwards when the constrained region becomes smaller
#' than the paper's fixed step (see [nested_sampling()]).
#'
#' @section Kernels:
#' One `kernel` setting chooses the move of SGAIS, AIS, SIR and the sequential estimator; the
#' estimators build the potential and the kernel only moves (src/kernel.c). The step
#' conventions are shared: `step_size` target widths with `step_scale = "width"`, or the
#' paper's `learning_rate` / n.
#' \describe{
#'   \item{`"sghmc"`}{stochastic gradient HMC (paper eq. 3), generalised HMC with a Metropolis
#'     test where the potential is exact (AIS; SGAIS's early phase) in the robust presets.}
#'   \item{`"sgld"`}{stochastic gradient Langevin dynamics (Welling and Teh 2011; thesis Alg.
#'     3): \eqn{\theta \leftarrow \theta + (\eta/2) \Sigma \nabla \log f + N(0, \eta
#'     \Sigma)}{theta <- theta + (eta / 2) Sigma grad log f + N(0, eta Sigma)}, on the same
#'     (mini-batch) gradient. With `integrator = "baoab"` (the robust presets) the moves are
#'     Metropolis-adjusted where the potential is exact (AIS, SGAIS's early phase): that is
#'     MALA (Roberts and Tweedie 1996), its step adapted towards 57.4\% acceptance. Unadjusted
#'     (mini-batches, `integrator = "euler"`, the paper presets), its stationary variance on a
#'     Gaussian target is too wide by \eqn{1 / (1 - \eta \kappa / 4)}{1 / (1 - eta k / 4)} along a
#'     whitened direction of curvature \eqn{\kappa}{k}, without bound as the step nears the
#'     stability limit: where the metric misses the posterior's stiffest directions the
#'     particles heat. The spread guard (above) then halves the step and the fit warns, but the
#'     estimate can be far off: measured at N = 10,000 (inst/bench/seed-methods.R, seed 1),
#'     SGAIS with SGLD was 7 nats low on the paper's mixture, and 1.3 to 1.7 nats low on its
#'     44-parameter softmax regression (18,600 nats low, after 6 halvings, before that model's
#'     free directions were kept out of the metric); at N = 100,000 4.7 nats below AIS there.
#'     Use it to compare kernels, not for evidence you rely on.}
#'   \item{`"austerity"`}{random-walk Metropolis-Hastings (proposals in the particles'
#'     metric, scale starting at \eqn{2.38 / \sqrt p}{2.38 / sqrt(p)} widths and adapted
#'     towards 23.4% acceptance) whose test reads a random subset of the data, drawn without
#'     replacement and doubled until a t-test with finite population correction says the
#'     decision would be the same with all the data at level `mh_tolerance` (Korattikara, Chen
#'     and Welling 2014). Approximate: a decision can go the wrong way with probability about
#'     `mh_tolerance`.}
#'   \item{`"confidence"`}{the same random walk with the confidence sampler's stopping rule
#'     (Bardenet, Doucet and Holmes 2014): a Hoeffding or empirical-Bernstein bound \eqn{c_m}
#'     with \eqn{\delta_m = \epsilon / (2 m^2)}{delta_m = epsilon / (2 m^2)}, so the decision
#'     is the exact one with probability at least \eqn{1 - \epsilon}{1 - epsilon}. It needs a
#'     bound \eqn{C_{\theta,\theta'}}{C} on \eqn{|\log p(y_i \mid \theta') - \log p(y_i
#'     \mid \theta)|}{|log p(y_i | theta') - log p(y_i | theta)|} over the data, which
#'     [logistic_regression()] (\eqn{\max_i |a_i| \, |\theta' - \theta|}{max |a_i|
#'     |theta' - theta|}: the log-logistic function is 1-Lipschitz), [softmax_regression()]
#'     (\eqn{\sqrt 2}{sqrt(2)} times that) and [linear_regression()] with known noise (from
#'     the largest \eqn{|a_i|}{|a_i|} and \eqn{|y_i|}{|y_i|}; loose far from the data, so the
#'     sampler then reads most of them) supply; other models give an error of class
#'     `sgais_error_kernel`.}
#' }
#' In both MH kernels the part of the target that is not a sum over the data (the prior, and in
#' SGAIS the current chunk at \eqn{\lambda}) is evaluated exactly; the subsample is of the
#' earlier observations (SGAIS) or of all of them (AIS); a test whose subset would pass half the
#' data reads all of it and is exact. The trajectory (SGAIS) and schedule (AIS) report
#' `data_fraction`, the mean fraction of the data each test read. These kernels make every move
#' Metropolis-corrected, also in SGAIS's mini-batch phase where SGHMC has no test.
#'
#' \describe{
#'   \item{`"flymc"`}{Firefly Monte Carlo (Maclaurin and Adams 2014), for
#'     [logistic_regression()] and [softmax_regression()]: each observation's likelihood
#'     \eqn{L_i}{L_i} has a lower bound \eqn{B_i}{B_i} that is quadratic in
#'     \eqn{\theta}{theta} and tight at tangent points taken at the particles' weighted mean
#'     \eqn{\theta^*}{theta*} before each annealing step's moves (Maclaurin and Adams's MAP
#'     tuning). Logistic regression uses the Jaakkola-Jordan bound (Jaakkola and Jordan 2000)
#'     \eqn{\log B_i = \log\sigma(\xi_i) + (s_i - \xi_i)/2 - g(\xi_i)(s_i^2 -
#'     \xi_i^2)}{log B_i = log sigma(xi_i) + (s_i - xi_i) / 2 - g(xi_i) (s_i^2 - xi_i^2)},
#'     \eqn{s_i = (2 y_i - 1) a_i' \theta}{s_i = (2 y_i - 1) a_i' theta},
#'     \eqn{g(\xi) = \tanh(\xi/2) / (4\xi)}{g(xi) = tanh(xi / 2) / (4 xi)},
#'     \eqn{\xi_i = |a_i' \theta^*|}{xi_i = |a_i' theta*|}. Softmax regression uses Böhning's
#'     bound (Böhning 1992): the log-sum-exp of the logits \eqn{\eta_i}{eta_i}
#'     (\eqn{\eta_{ik} = a_i' \theta_k}{eta_ik = a_i' theta_k}) has curvature at most
#'     \eqn{H = (I_K - 1 1'/K) / 2}{H = (I_K - 1 1' / K) / 2}, so with
#'     \eqn{\psi_i}{psi_i} the logits at \eqn{\theta^*}{theta*}, \eqn{g_i}{g_i} their softmax
#'     and \eqn{\delta = \eta_i - \psi_i}{delta = eta_i - psi_i},
#'     \eqn{\log B_i = \eta_{i y_i} - \mathrm{lse}(\psi_i) - g_i' \delta - \delta' H \delta /
#'     2}{log B_i = eta_i[y_i] - lse(psi_i) - g_i' delta - delta' H delta / 2} (every class has its
#'     own coefficients, so \eqn{H} is over all \eqn{K} logits). Its fixed curvature makes it
#'     looser than Jaakkola-Jordan's away from the tangent point, so more observations are
#'     bright per step. Either bound's product over all the observations collapses to
#'     \eqn{O(d^2)}{O(d^2)} numbers for \eqn{d} parameters (one pass, counted in the likelihood
#'     evaluations).
#'     Each move draws every observation's brightness \eqn{z_i \sim}{z_i ~}
#'     Bernoulli\eqn{(1 - (B_i / L_i)^f)}{(1 - (B_i / L_i)^f)} (\eqn{f} the target's power of
#'     the likelihood: \eqn{\lambda}{lambda} in AIS), then takes random-walk
#'     Metropolis-Hastings steps (proposals and step adaptation as `"austerity"`) on the joint
#'     target of \eqn{\theta}{theta} and \eqn{z}, reading only the bright observations. Exact:
#'     its stationary distribution is the target's, whatever the anchor. A move costs one pass
#'     over the data (the brightness draw) plus, per step, the bright observations, which are
#'     few near the anchor: `data_fraction` is about 1 / steps plus the bright fraction. Other
#'     models give an error of class `sgais_error_kernel`. A random walk needs more steps as
#'     the dimension grows: on the paper's 44-parameter softmax regression SGAIS with FlyMC and
#'     20 steps was 2.3 nats low at N = 2,000 (0.3 with `sghmc_steps = 80`), 8 to 10 nats low at
#'     N = 10,000 and 9.7 below AIS at N = 100,000 (inst/bench/flymc.R, seed-methods.R).}
#' }
#'
#' @param preset `"robust"` (the default) or `"paper"`.
#' @param ... Settings that replace the preset's, by name:
#'   \describe{
#'   \item{`particles`}{number of particles \eqn{M} (at least 2);}
#'   \item{`target_ess`}{target ESS of the incremental weights, in (1, `particles`) (at
#'     `particles` no annealing step would be small enough); `NULL` means 0.8 `particles` (the
#'     paper uses half: each annealing step then moves the target further than the moves can
#'     follow on hard posteriors);}
#'   \item{`annealing_ess`}{which ESS each annealing step keeps at `target_ess`:
#'     `"incremental"`, that of the incremental weights \eqn{p(C \mid \theta_i)^\Delta} (the
#'     paper's, Section 3), or `"conditional"` (robust presets), the conditional ESS of Zhou,
#'     Johansen and Aston (2016), \eqn{M (\sum_i W_i w_i)^2 / \sum_i W_i w_i^2} with the
#'     current normalised weights \eqn{W_i}: particles the weights have already dropped do not
#'     hold the step back. With the incremental ESS, a fifth of the particles stuck where the
#'     likelihood is vanishingly small (Poisson regression under a wide prior) kept every step
#'     tiny and a run of 2,000 observations did not finish in two minutes; the two agree when
#'     the weights are equal (after resampling);}
#'   \item{`resample`}{`FALSE` (never), `TRUE` (before every move), or a number in (0, 1):
#'     resample when the weight ESS is below that fraction of `particles`;}
#'   \item{`sghmc_steps`, `min_sghmc_steps`}{most and fewest SGHMC steps per move
#'     (`min_sghmc_steps = NULL` means always `sghmc_steps`);}
#'   \item{`max_rounds`, `max_correlation`}{(Metropolis-adjusted moves: AIS, SGAIS while the
#'     potential is exact) the particles move again, up to `max_rounds` moves per annealing
#'     step, while their positions still correlate with where the first move began by more
#'     than `max_correlation` along some whitened coordinate (see above; robust presets 4 and
#'     0.5, paper presets 1: one move);}
#'   \item{`step_scale`}{`"width"` (steps of `step_size` target widths, preconditioned) or
#'     `"per_observation"` (the paper's \eqn{\eta} = `learning_rate` / n, or `learning_rate` for
#'     nested sampling, unpreconditioned);}
#'   \item{`step_size`}{the step in target widths, for `step_scale = "width"`;}
#'   \item{`learning_rate`}{the paper's per-observation learning rate, for
#'     `step_scale = "per_observation"`;}
#'   \item{`momentum_decay`}{SGHMC friction \eqn{\alpha} in (0, 1];}
#'   \item{`preconditioner`}{`"dense"`, `"diagonal"` or `"none"` (only with `"width"`);}
#'   \item{`integrator`}{`"baoab"` (the splitting of Leimkuhler and Matthews 2013, whose
#'     position marginal is exact on Gaussian targets at any stable step) or `"euler"` (the
#'     paper's SGHMC update, eq. 3, whose position variance is too large by a fraction of about
#'     `step_size`^2 / 3 per direction); for `kernel = "sgld"`, `"baoab"` makes the moves
#'     Metropolis-adjusted (MALA) where the potential is exact and `"euler"` leaves them
#'     unadjusted everywhere;}
#'   \item{`batch_size`, `chunk_size`}{(SGAIS) mini-batch size \eqn{|B|}, and observations
#'     added per Bayesian update (`NULL`: `batch_size`);}
#'   \item{`control_variates`}{(SGAIS) use control-variate mini-batch gradients;}
#'   \item{`score_control_variate`}{(SGAIS, and SIR and the sequential estimator, which run on
#'     its sampler) correct each evidence increment by the score control variate (see above;
#'     needs `step_scale = "width"`, whose preconditioner is the particles' covariance);}
#'   \item{`jumps`}{jump proposals after each move, for models that provide them (see above;
#'     robust presets 10, and 80 for nested sampling, whose proposals are mostly refused before
#'     the likelihood is evaluated; paper presets 0, so their runs are unchanged). SGAIS makes
#'     them while the potential is exact;}
#'   \item{`exact_until`}{(SGAIS) use the exact gradient while there are at most this many
#'     earlier observations (`NULL`: `batch_size` for the paper, `4 * batch_size` for the
#'     robust preset);}
#'   \item{`early_particles`}{(SGAIS) particles while the earlier data are used exactly; they
#'     are resampled down to `particles` when the mini-batch phase begins (`NULL`: `particles`;
#'     robust preset 100). The early phase anneals away from the prior, the hardest part, and is
#'     cheap; a dense covariance estimated from 50 particles in 14 dimensions let the particles
#'     collapse on a real regression (+5 nats), from 100 it did not;}
#'   \item{`restart_threshold`, `restart_every`}{(SGAIS) restarts, the recovery of an online
#'     run whose particles sit in a mode that no longer holds the posterior: a cluster that
#'     appears where no mixture component is, which no local move reaches through the earlier
#'     data's likelihood, or a misspecified mixture whose best allocation of components changes
#'     as data accumulate. A restart replaces the particles by those of a run, from the prior,
#'     on every observation so far in a random order, and the run goes on from there with the
#'     data in order; log Z up to there is that run's estimate, which does not depend on the
#'     order. It costs about what the run cost so far on shuffled data. Before each chunk the
#'     particles' log predictive density of its observations is compared with that of the chunk
#'     before it (a two-sample z statistic, the surprise of [detect_shifts()] computed online,
#'     on 8 of the particles: a few per cent of a chunk's cost); a chunk predicted worse by more
#'     than `restart_threshold` standard errors calls for a restart, once the data have grown
#'     by half since the last. A restart is also due whenever the data have grown
#'     `restart_every` times since the last (or since `exact_until` or the first chunk), so
#'     that all restarts
#'     together cost about `1 / (restart_every - 1)` runs on all the data. Restarts need every
#'     observation in memory (`reservoir_size = Inf`, and not [sgais_stream()], which reads
#'     blocks). Robust preset: `restart_threshold = 5`, and `restart_every` `NULL`: 2 for
#'     models with jump proposals ([gaussian_mixture()]), `Inf` (never) for the others, whose
#'     posteriors have one mode; paper preset `Inf` for both. The trajectory's `restarts` column
#'     says where they happened;}
#'   \item{`reservoir_size`}{(SGAIS) how many earlier observations the mini-batches are drawn
#'     from: `Inf` (the default), all of them, kept in the fit; or a whole number at least
#'     `exact_until`, a uniform sample of that many (Vitter's Algorithm R), so that memory stays
#'     bounded on an unbounded stream (paper Section 5). See "A bounded reservoir" in [sgais()]
#'     for what it costs in accuracy;}
#'   \item{`update`, `first_chunk_size`}{(SGAIS, SIR, sequential) how a chunk enters the
#'     weights: `"annealed"` (SGAIS), `"importance"` (SIR, one importance step per chunk) or
#'     `"averaged"` (the sequential SG-MCMC estimator, weights averaged after each chunk); set by
#'     [sir_control()] and [sequential_control()], see [sir()]. Chunks of `first_chunk_size`,
#'     twice that, three times that, ... observations while below `chunk_size`, then of
#'     `chunk_size` (`NULL`: `chunk_size` throughout);}
#'   \item{`kernel`}{(SGAIS, AIS and the estimators on SGAIS's sampler) how particles move, see
#'     "Kernels" below: `"sghmc"` (the default), `"sgld"`, `"austerity"`, `"confidence"` or
#'     `"flymc"`;}
#'   \item{`mh_tolerance`, `mh_batch_size`, `mh_bound`}{(the MH kernels) the tolerance
#'     \eqn{\epsilon} of the subsampled test (default 0.05), the size of its first subset (100;
#'     doubled until the test is settled), and the confidence sampler's bound,
#'     `"bernstein"` (empirical Bernstein, the default) or `"hoeffding"`;}
#'   \item{`live_points`, `tolerance`, `max_iterations`}{(nested sampling) number of live
#'     points, the stopping tolerance (remaining evidence as a fraction of \eqn{\hat Z}), and
#'     the most iterations;}
#'   \item{`move`, `walk_steps`, `max_walk_steps`}{(nested sampling) how a new live point is
#'     made from a copy of another: `"walk"`, `walk_steps` Metropolis proposals on the prior
#'     within the contour in the metric of the live points' covariance (its scale adapts towards
#'     50% acceptance), or `"sghmc"`, the paper's `sghmc_steps` SGHMC steps reflected off the
#'     contour. `walk_steps = NULL` adapts the number of proposals so that each walk travels
#'     the same distance in live-point widths (see [nested_sampling()]), between 25 and
#'     `max_walk_steps` (`NULL`: 100 per parameter, at least 250). Too short a walk biases
#'     \eqn{\log \hat Z}: measured on a 21-parameter regression with fixed lengths, 25
#'     proposals +14 nats, 100 proposals +1.7, 200 proposals -0.8.}
#'   }
#' @return A list of class `sgais_control`: `method`, `preset`, the values given and the
#'   resolved `settings`. Print it to see them.
#' @seealso [sgais()], [ais()], [nested_sampling()]
#' @references Cameron, S. A., Eggers, H. C. and Kroon, S. (2019). Stochastic Gradient Annealed
#'   Importance Sampling for Efficient Online Marginal Likelihood Estimation. *Entropy* 21(11),
#'   1109. \doi{10.3390/e21111109}
#'
#'   Buchholz, A., Chopin, N. and Jacob, P. E. (2021). Adaptive tuning of Hamiltonian Monte
#'   Carlo within sequential Monte Carlo. *Bayesian Analysis* 16(3), 745-771.
#'
#'   Welling, M. and Teh, Y. W. (2011). Bayesian learning via stochastic gradient Langevin
#'   dynamics. *ICML 2011*, 681-688.
#'
#'   Korattikara, A., Chen, Y. and Welling, M. (2014). Austerity in MCMC land: cutting the
#'   Metropolis-Hastings budget. *ICML 2014*, 181-189.
#'
#'   Bardenet, R., Doucet, A. and Holmes, C. (2014). Towards scaling up Markov chain Monte Carlo:
#'   an adaptive subsampling approach. *ICML 2014*, 405-413.
#'
#'   Maclaurin, D. and Adams, R. P. (2014). Firefly Monte Carlo: exact MCMC with subsets of
#'   data. *UAI 2014*, 543-552.
#'
#'   Jaakkola, T. S. and Jordan, M. I. (2000). Bayesian parameter estimation via variational
#'   methods. *Statistics and Computing* 10(1), 25-37.
#'
#'   Mira, A., Solgi, R. and Imparato, D. (2013). Zero variance Markov chain Monte Carlo for
#'   Bayesian estimators. *Statistics and Computing* 23(5), 653-662.
#'   \doi{10.1007/s11222-012-9344-6}
#'
#'   South, L. F., Oates, C. J., Mira, A. and Drovandi, C. (2023). Regularized zero-variance
#'   control variates. *Bayesian Analysis* 18(3), 865-888. \doi{10.1214/22-BA1328}
#'
#'   South, L. F., Pettitt, A. N. and Drovandi, C. C. (2019). Sequential Monte Carlo samplers
#'   with independent Markov chain Monte Carlo proposals. *Bayesian Analysis* 14(3).
#'   \doi{10.1214/18-BA1129}
#'
#'   Böhning, D. (1992). Multinomial logistic regression algorithm. *Annals of the Institute of
#'   Statistical Mathematics* 44(1), 197-200.
#' @export
#' @examples
#' sgais_control()
#' sgais_control("paper")
#' sgais_control(particles = 50, step_size = 0.05)
#' nested_control(live_points = 200)
#' ais_control(kernel = "austerity", mh_tolerance = 0.01)
#' sir_control()
#' sequential_control("paper")
sgais_control <- function(preset = c("robust", "paper"), ...) {
  new_control("sgais", preset, list(...), sys.call())
}

#' @rdname sgais_control
#' @export
ais_control <- function(preset = c("robust", "paper"), ...) {
  new_control("ais", preset, list(...), sys.call())
}

#' @rdname sgais_control
#' @export
nested_control <- function(preset = c("robust", "paper"), ...) {
  new_control("nested_sampling", preset, list(...), sys.call())
}

#' @rdname sgais_control
#' @export
sir_control <- function(preset = c("robust", "paper"), ...) {
  new_control("sir", preset, list(...), sys.call())
}

#' @rdname sgais_control
#' @export
sequential_control <- function(preset = c("robust", "paper"), ...) {
  new_control("sequential", preset, list(...), sys.call())
}

new_control <- function(method, preset, given, call) {
  if (!is.character(preset) || length(preset) < 1L || anyNA(preset)) {
    abort(sprintf("`preset` must be \"robust\" or \"paper\", not %s.", describe(preset)), call)
  }
  preset <- preset[1]
  defaults <- control_presets[[method]][[preset]]
  if (is.null(defaults)) {
    abort(sprintf("`preset` must be \"robust\" or \"paper\", not \"%s\".", preset), call)
  }
  if (length(given) && (is.null(names(given)) || any(names(given) == ""))) {
    abort("Settings in `...` must be named, e.g. `particles = 50`.", call)
  }
  unknown <- setdiff(names(given), names(defaults))
  if (length(unknown)) {
    abort(sprintf("Unknown setting%s %s for %s(); the settings are: %s.",
                  if (length(unknown) > 1) "s" else "",
                  paste0("`", unknown, "`", collapse = ", "), method,
                  paste0("`", names(defaults), "`", collapse = ", ")), call)
  }
  values <- utils::modifyList(defaults, given, keep.null = TRUE)
  # a smaller sghmc_steps than the preset's fewest lowers the fewest too, unless that is given
  if (!is.null(given$sghmc_steps) && is.null(given$min_sghmc_steps) &&
      !is.null(values$min_sghmc_steps) && is_number(given$sghmc_steps) &&
      values$min_sghmc_steps > given$sghmc_steps) {
    values$min_sghmc_steps <- given$sghmc_steps
  }
  structure(
    list(method = method, preset = preset, given = given,
         settings = resolve_settings(method, values, call)),
    class = "sgais_control"
  )
}

# NULL (by the model), a number above 1, or Inf (never).
check_restart_every <- function(x, update, call) {
  if (is.null(x) || (is_number(x) && x == Inf)) return(x)
  if (!is_number(x) || !is.finite(x) || x <= 1) {
    abort(sprintf("`restart_every` must be NULL, a number above 1 or Inf, not %s.", describe(x)),
          call)
  }
  check_restarts_anneal(as.double(x), "restart_every", update, call)
}

# A positive number or Inf (never).
check_restart_threshold <- function(x, update, call) {
  if (is_number(x) && x == Inf) return(Inf)
  check_restarts_anneal(check_positive(x, "restart_threshold", call), "restart_threshold",
                        update, call)
}

# x, a finite restart setting, where restarts can happen: they are SGAIS's ("annealed" update).
check_restarts_anneal <- function(x, arg, update, call) {
  if (update != "annealed") {
    abort(sprintf("`%s` must be Inf with `update = \"%s\"`: restarts re-anneal, and only SGAIS anneals.",
                  arg, update), call)
  }
  x
}

# Inf, or a whole number: the exact early phase needs every earlier observation, so at least
# exact_until of them.
check_reservoir_size <- function(x, exact_until, call) {
  if (is_number(x) && x == Inf) return(Inf)
  if (!is_number(x) || !is.finite(x) || x != round(x) || x < 1 || x > .Machine$integer.max) {
    abort(sprintf("`reservoir_size` must be Inf or a whole number, not %s.", describe(x)), call)
  }
  if (x < exact_until) {
    abort(sprintf(paste(
      "`reservoir_size` (%s) must be at least `exact_until` (%s): the exact early phase uses",
      "every earlier observation. Lower `exact_until` or enlarge the reservoir."),
      format_count(x), format_count(exact_until)), call)
  }
  as.integer(x)
}

# The reservoir size of SGAIS's settings (the other estimators keep every observation).
reservoir_cap <- function(settings) {
  if (is.null(settings$reservoir_size)) Inf else settings$reservoir_size
}
bounded_reservoir <- function(settings) is.finite(reservoir_cap(settings))

check_target_ess <- function(x, particles, call) {
  if (!is_number(x) || !(x > 1 && x < particles)) {
    abort(sprintf(paste(
      "`target_ess` must be a number in (1, particles) = (1, %d), not %s: the annealing steps",
      "are chosen to keep the weights' effective sample size at `target_ess`, and at the number",
      "of particles no step is small enough."), particles, describe(x)), call)
  }
  as.double(x)
}

check_resample <- function(x, call) {
  if (is.logical(x) && length(x) == 1L && !is.na(x)) return(as.double(x))
  if (!is_number(x) || !(x >= 0 && x <= 1)) {
    abort(sprintf("`resample` must be TRUE, FALSE or a number in [0, 1], not %s.", describe(x)), call)
  }
  as.double(x)
}

check_control <- function(control, method, call) {
  if (!inherits(control, "sgais_control") || !identical(control$method, method)) {
    maker <- c(sgais = "sgais_control()", ais = "ais_control()",
               nested_sampling = "nested_control()", sir = "sir_control()",
               sequential = "sequential_control()")[[method]]
    abort(sprintf("`control` must come from `%s`, not %s.", maker, describe(control)), call)
  }
  control
}

# The control with the settings given in an estimator's `...` replacing its own (so that
# `sgais(model, particles = 50)` works), checked by the same parser; then the settings as the C
# core reads them.
control_settings <- function(control, overrides, method, call) {
  control <- check_control(control, method, call)
  if (length(overrides) && (is.null(names(overrides)) || any(names(overrides) == ""))) {
    abort("Settings in `...` must be named, e.g. `particles = 50`.", call)
  }
  if (length(overrides)) {
    control <- new_control(method, control$preset, utils::modifyList(control$given, overrides,
                                                                      keep.null = TRUE), call)
  }
  s <- control$settings
  s$preset <- control$preset
  s
}

# The kernels whose moves are random-walk Metropolis-Hastings with a subsampled test, and all
# the kernels whose moves are random-walk MH steps (src/kernel.h, sg_kernel_random_walk).
mh_kernels <- c("austerity", "confidence")
random_walk_kernels <- c(mh_kernels, "flymc")

# The kernel must suit the model: an error of class `sgais_error_kernel` when it does not. The
# rule and its message are the C core's (src/precond.c, sg_kernel_suits_model), which reads what
# the model supplies (model_capabilities()).
check_kernel_model <- function(settings, model, call) {
  kernel <- settings$kernel %||% "sghmc"
  if (kernel %in% c("confidence", "flymc")) {
    why <- with_model_errors(.Call(C_ffi_kernel_suits_model, model,
                                   setting_codes("kernel")[[kernel]]))
    if (!is.null(why)) abort(why, call, "sgais_error_kernel")
  }
  invisible(settings)
}

# The settings list passed to .Call (encode_settings(): codes instead of names). Settings of fits
# saved by earlier versions are completed first (upgrade_settings()).
c_settings <- function(settings) {
  settings <- upgrade_settings(settings)
  if (is.null(settings$particles)) {
    # nested sampling moves by SGHMC or its walk, once per iteration; the C core reads the number
    # of moves of either kind from sghmc_steps (the most) and min_sghmc_steps (the fewest; the
    # walk's length adapts in between)
    settings[c("kernel", "mh_bound", "mh_tolerance", "mh_batch_size", "max_rounds",
               "max_correlation")] <- list("sghmc", "bernstein", 0.05, 100L, 1L, 1)
    if (identical(settings$move, "walk")) {
      if (is.null(settings$walk_steps)) {
        settings$sghmc_steps <- settings$max_walk_steps
        settings$min_sghmc_steps <- min(25L, settings$max_walk_steps)
      } else {
        settings$sghmc_steps <- settings$min_sghmc_steps <- settings$walk_steps
      }
    }
  } else {
    # AIS has no score control variate
    settings$score_control_variate <- isTRUE(settings$score_control_variate)
  }
  encode_settings(settings)
}

#' @export
format.sgais_control <- function(x, ...) {
  s <- x$settings
  shown <- vapply(s, function(v) paste(format(v), collapse = " "), character(1))
  width <- max(17L, nchar(names(s)))
  c(sprintf("<%s control, preset \"%s\">", x$method, x$preset),
    sprintf("  %-*s %s%s", width, names(s), shown,
            ifelse(names(s) %in% names(x$given), "  (set)", "")))
}

#' @export
print.sgais_control <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}

# One line describing the settings of a fit, for print().
format_settings <- function(s) {
  kernel <- s$kernel %||% "sghmc" # nested sampling's settings name none
  unit <- switch(kernel, sghmc = "SGHMC steps", sgld = "SGLD steps",
                 "random-walk proposals")
  steps <- if (s$min_sghmc_steps < s$sghmc_steps) {
    sprintf("%d-%d %s", s$min_sghmc_steps, s$sghmc_steps, unit)
  } else {
    sprintf("%d %s", s$sghmc_steps, unit)
  }
  if (kernel == "flymc") {
    return(paste0(sprintf("preset \"%s\": ", s$preset), steps,
                  sprintf(" (%s preconditioner), FlyMC with the model's quadratic likelihood bound",
                          s$preconditioner)))
  }
  if (kernel %in% mh_kernels) {
    test <- if (kernel == "austerity") "t-test" else sprintf("%s bound", s$mh_bound)
    return(paste0(sprintf("preset \"%s\": ", s$preset), steps,
                  sprintf(" (%s preconditioner), %s MH test with tolerance %s on subsets from %s",
                          s$preconditioner, test, format(s$mh_tolerance),
                          format_count(s$mh_batch_size))))
  }
  move <- if (s$step_scale == "width") {
    sprintf("steps of %s widths (%s preconditioner)", format(s$step_size), s$preconditioner)
  } else {
    sprintf("learning rate %s", format(s$learning_rate))
  }
  rounds <- s$max_rounds %||% 1L
  if (rounds > 1L) {
    # SGAIS's mini-batch moves have no Metropolis test and are not repeated
    steps <- sprintf("%s (up to %d moves%s, until correlation <= %s)", steps, rounds,
                     if (is.null(s$exact_until)) "" else " in the exact phase",
                     format(s$max_correlation))
  }
  paste0(sprintf("preset \"%s\": ", s$preset), steps, ", ", move,
         if (kernel == "sghmc") sprintf(", momentum decay %s", format(s$momentum_decay)))
}

# The kernels' metric (inverse mass matrix) for particles `theta` (dim x M) with log-weights
# `logw`, as src/precond.c estimates it: from all the particles, or with particle `leave_out`
# left out, as each particle is moved (sg_precond_leave_out()). Internal: it lets the tests
# check the C estimate against a covariance computed in R.
precond_metric <- function(theta, logw = numeric(ncol(theta)), kind = c("dense", "diagonal"),
                           leave_out = 0L) {
  kind <- match.arg(kind)
  stopifnot(is.matrix(theta), is.double(theta), ncol(theta) >= 2L, all(is.finite(theta)),
            is.double(logw), length(logw) == ncol(theta), !anyNA(logw),
            length(leave_out) == 1L, leave_out %in% 0:ncol(theta))
  .Call(C_ffi_precond_metric, theta, logw, setting_codes("preconditioner")[[kind]],
        as.integer(leave_out))
}
