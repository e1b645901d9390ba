/* The move layer: the kernels (SGHMC, SGLD, subsampling Metropolis-Hastings, Firefly Monte
 * Carlo) on any potential,
 * their preconditioner, and the move settings every estimator shares. */
#ifndef SG_KERNEL_H
#define SG_KERNEL_H

#include "model.h"

struct sg_flymc_bound;

/* A target density f known through the gradient of log f (possibly a stochastic, unbiased
 * estimate). The kernel simulates the potential U = -log f. */
typedef struct {
  void (*grad_log_target)(void *ctx, const double *theta, double *grad); /* overwrites grad */
  void *ctx;
  /* When the potential is exact (no mini-batch): log f at theta up to a constant, with its
   * gradient written to grad (grad NULL: none); NULL otherwise. The robust kernel then
   * Metropolis-adjusts. */
  double (*log_target)(void *ctx, const double *theta, double *grad);
  /* For the subsampling Metropolis-Hastings kernels (subsample_mh.c): the same target split as
   *   log f(theta) = log_rest(theta) + factor * sum_{k < n} log p(y_{obs(k)} | theta),
   * where log_rest is evaluated exactly (the prior, and SGAIS's current chunk at lambda) and the
   * sum over the population of n observations (buffer positions slot[k], or start + k when slot
   * is NULL) is what the MH test subsamples; factor is lambda in AIS and n_prev / n in SGAIS
   * (1 unless a bounded reservoir holds only some of the earlier observations). log_rest NULL:
   * not available (nested sampling). The FlyMC kernel also needs `bound`, the collapsed
   * likelihood bound over the same population (sg_flymc_bound_set), which the estimator sets in
   * the main thread before the moves and the kernel only reads. */
  double (*log_rest)(void *ctx, const double *theta);
  struct {
    const sg_model *m;
    sg_workspace *ws;
    const int *slot;
    int start, n;
    double factor;
    const struct sg_flymc_bound *bound;
  } data;
  /* The model's jump proposals' summary of the data (model.h, jump_prepare; NULL: no jumps),
   * set by the estimator (sg_jump_set), and the observations in the target (lambda N in AIS);
   * jumps also need log_target. */
  struct {
    const double *aux;
    double n;
  } jump;
  /* The region C the estimator's canonicalize put the particles in (model.h, to_region; NULL:
   * none), set in the main thread before the moves; the kernels only read it. */
  const double *region;
  /* The observations the target holds at weight lambda besides the population (SGAIS's chunk:
   * buffer positions start..start+n-1; n = 0: none), for the data-augmentation moves (model.h,
   * gibbs_propose), set by the estimator. */
  struct {
    int start, n;
    double lambda;
  } tempered;
} sg_potential;

/* 1 if theta has left the potential's region C (theta is then mapped into C: the caller restores
 * it or keeps the mapped point), else 0. The Metropolis-adjusted kernels reject such a move, so
 * that they leave the target restricted to C invariant (model.h, to_region). */
static inline int sg_left_region(const sg_potential *pot, double *theta) {
  return pot->region && pot->data.m
             ? sg_model_to_region(pot->data.m, pot->data.ws, pot->region, theta)
             : 0;
}

/* Prepares the model's jump proposals (model.h) from n observations, whose element e is slot[e]
 * (slot NULL: start + e) for e < n_first and start2 + (e - n_first) after (an estimator's
 * earlier observations, then its current chunk), or from min(SG_JUMP_POINTS, n) of them evenly
 * spread; pts is scratch of SG_JUMP_POINTS and aux has m->jump_aux doubles. Returns aux, or NULL
 * (no jumps) when n is 0. */
const double *sg_jump_set(const sg_model *m, int n, const int *slot, int start, int n_first,
                          int start2, int *pts, double *aux);

/* An optional hard constraint log L(theta) > threshold for the kernel (nested sampling).
 * log_lik returns log L at theta and, if grad is not NULL, overwrites grad with its gradient.
 * The kernel keeps `value` = log L at the current position; the caller sets it to log L at the
 * starting point. prev is scratch of length dim. */
typedef struct {
  double (*log_lik)(void *ctx, const double *theta, double *grad);
  void *ctx;
  double threshold;
  double value;
  double *prev;
} sg_constraint;

/* Jump proposals (model.h, jump_propose): `jumps` independence Metropolis-Hastings proposals
 * from the model's q, each accepted with probability min(1, f(prop) q(theta) / (f(theta)
 * q(prop))) on the exact density f (log_f(ctx, theta, NULL)) and, with a constraint con (nested
 * sampling: f the constrained prior), only where log L > con->threshold, con->value following
 * the chain; so every jump leaves f (restricted to the constraint) exactly invariant. They let a
 * point cross between separated modes, which local moves cannot (a mixture component moved onto
 * a cluster of the data). q mixes pop, a Gaussian of the population (NULL: the prior), which
 * must not depend on the point it moves, with the model's guess at the modes built by
 * sg_jump_set (aux, n observations, `rungs` widths: model.h). For an independence sampler
 * f / q must not be much larger where the point is than where q proposes, so q must cover the
 * mode the population occupies as well as the ones it has not found (South, Pettitt & Drovandi
 * 2019). prop is scratch of dim; made (if not NULL) counts the proposals. Returns the number
 * accepted. Used by the kernels after their moves (sg_kernel_run) and by nested sampling after
 * its walk. */
int sg_jump_chain(const sg_model *m, sg_workspace *ws,
                  double (*log_f)(void *ctx, const double *theta, double *grad), void *ctx,
                  sg_constraint *con, const double *aux, double n, int rungs,
                  const sg_gaussian *pop, double *theta, int jumps, double *prop, sg_rng *rng,
                  double *made);

/* A preconditioner (inverse mass matrix) Sigma = L L' for the kernel, estimated from the particles
 * (or live points) so that steps are measured in units of the target's width rather than of the
 * parameters (Buchholz, Chopin & Jacob 2021, "Adaptive tuning of Hamiltonian Monte Carlo within
 * sequential Monte Carlo"). kind NONE is the paper's unpreconditioned kernel. */
enum { SG_PRECOND_NONE = 0, SG_PRECOND_DIAGONAL = 1, SG_PRECOND_DENSE = 2 };
typedef struct {
  int kind, dim;
  double *factor; /* DIAGONAL: the sd of each coordinate (dim); DENSE: L, lower, column-major */
  double *work;   /* scratch of 3 dim: the kernel's noise and Sigma g, then sg_precond_apply's */
  /* The running covariance estimate (same layout as factor, unshrunk), the n it is for and its
   * effective number of particles (acc_n = 0: none yet). Set n (observations in the current
   * target) and smoothing (weight of a new estimate, 1 = none) before each estimate. */
  double *acc, acc_n, acc_ess, n, smoothing;
  /* What sg_precond_leave_out() needs of the last estimate: its M normalised weights (room for
   * loo_cap), weighted mean, unbiased covariance before averaging (layout of acc), sum of squared
   * weights, and the averaging (loo_r times the new estimate plus loo_prev); loo_M = 0: none.
   * loo_work is the scratch of sg_precond_leave_out() when this is its `out`. */
  double *loo_w, *loo_mean, *loo_cov, *loo_prev, *loo_work, loo_sum_w2, loo_r;
  int loo_M, loo_cap;
  /* Nonzero once loo_mean holds a weighted mean of the particles: the last estimate's, or in the
   * `out` of sg_precond_leave_out() the mean without the particle left out. */
  int has_mean;
  /* The model's free directions (model.h; NULL: none) and scratch of dim for them. With them the
   * metric is P Sigma P, P the projection onto their complement, Sigma estimated from the
   * particles' projections, so the kernels move only the identified part, and sg_kernel_run
   * then draws the free part from the prior. */
  const struct sg_model *free;
  double *free_work;
} sg_precond;
void sg_precond_alloc(sg_precond *p, int kind, int dim);
/* Gives p the free directions of model m, if m has any and p is a preconditioner (robust
 * presets); the paper's unpreconditioned kernel is left as it is. */
void sg_precond_set_free(sg_precond *p, const struct sg_model *m);
/* theta's free part replaced by a draw from the prior (an exact Gibbs step), from rng. */
void sg_precond_redraw_free(const sg_precond *p, double *theta, sg_rng *rng);
/* Sets Sigma to the weighted covariance of the M particles theta (M rows of dim) with log-weights
 * logw (NULL: equal weights), averaged with the running estimate when p->smoothing < 1; DENSE
 * uses only its diagonal when there are fewer than 6 particles per dimension (see precond.c).
 * Returns 0, or 1 when the particles are degenerate (Sigma is then left as it was). work is
 * scratch of M + dim * (dim + 1). */
int sg_precond_estimate(sg_precond *p, const double *theta, const double *logw, int M,
                        double *work);
/* The metric for moving particle a of the last estimate, which sits at theta_a, estimated
 * without it: out's factor becomes that of the same estimate with particle a left out (Sigma's
 * own factor when that is not possible: one particle, degenerate weights). A kernel whose metric
 * depends on the particle it moves is not invariant: a particle far out widens the metric along
 * its own direction, leaves the tails faster than it enters them, and the particles contract
 * (see precond.c). out is allocated like p (sg_precond_alloc). */
void sg_precond_leave_out(const sg_precond *p, int a, const double *theta_a, sg_precond *out);
/* The Gaussian of the particles' weighted mean and covariance that p holds (for an `out` of
 * sg_precond_leave_out(), without the particle left out), set in g and returned; NULL when p is
 * NULL, has no mean yet or has free directions (its covariance then spans only part of the
 * space). The population part of the jump proposals (sg_jump_chain). */
const sg_gaussian *sg_precond_gaussian(const sg_precond *p, sg_gaussian *g);
/* The weighted mean squared distance of the particles from their weighted mean in the metric
 * Sigma^-1, per coordinate (about 1 for particles from a target whose covariance is Sigma).
 * work is scratch of 2 dim. */
double sg_precond_spread(const sg_precond *p, const double *theta, const double *logw, int M,
                         double *work);
/* The squared distance between x and y in the metric Sigma^-1, per coordinate. work: dim. */
double sg_precond_distance2(const sg_precond *p, const double *x, const double *y, double *work);
/* How much the particles' positions after a move (after, M rows of dim) still correlate with
 * their positions before it (before): the largest over the whitened coordinates z = L^-1 P
 * (theta - mean) of the weighted correlation of z before and after, with weights logw. Near 0
 * for independent draws (up to noise of about 1 / sqrt(M) per coordinate), 1 for particles that
 * did not move. The largest, not the mean: a mixture's particles decorrelate along most
 * directions within a few steps, and stay correlated along the few that cross between modes.
 * work: 7 dim. */
double sg_precond_jump_correlation(const sg_precond *p, const double *before, const double *after,
                                   const double *logw, int M, double *work);
/* out = A g, A the running covariance estimate p->acc (for p->acc_n observations; out = g before
 * there is one): unlike Sigma, which is rebuilt at the next estimate, A is part of SGAIS's state,
 * so what depends on it is the same in a run continued in pieces. */
void sg_precond_cov_apply(const sg_precond *p, const double *g, double *out);
/* out = Sigma g; x = L x in place; out = L' g. */
void sg_precond_apply(const sg_precond *p, const double *g, double *out);
void sg_precond_factor_apply(const sg_precond *p, double *x);
void sg_precond_factor_transpose_apply(const sg_precond *p, const double *g, double *out);

/* The kernels (kernel.c dispatches):
 *   SGHMC       the paper's (sghmc.c), and generalised HMC on an exact potential;
 *   SGLD        first-order Langevin with the same (possibly mini-batch) gradient (sgld.c);
 *   AUSTERITY   random-walk Metropolis-Hastings whose test reads a growing random subset of the
 *               data until a t-test says the decision is settled (Korattikara, Chen & Welling
 *               2014; subsample_mh.c);
 *   CONFIDENCE  the same with a concentration bound instead of the t-test (Bardenet, Doucet &
 *               Holmes 2014; subsample_mh.c), needing the model's range bound;
 *   FLYMC       Firefly Monte Carlo (Maclaurin & Adams 2014; flymc.c): random-walk MH on theta
 *               given brightness variables drawn afresh at the start of each run, reading only
 *               the bright observations, exact; needs the model's likelihood bound. */
enum { SG_KERNEL_SGHMC = 0, SG_KERNEL_SGLD = 1, SG_KERNEL_AUSTERITY = 2, SG_KERNEL_CONFIDENCE = 3,
       SG_KERNEL_FLYMC = 4 };
/* The kernels whose moves are random-walk Metropolis-Hastings steps (step 2.38 / sqrt(dim)
 * widths, adapted towards 23.4% acceptance) whose tests are counted in sg_kernel.mh. */
static inline int sg_kernel_random_walk(int kind) {
  return kind == SG_KERNEL_AUSTERITY || kind == SG_KERNEL_CONFIDENCE || kind == SG_KERNEL_FLYMC;
}
enum { SG_BOUND_BERNSTEIN = 0, SG_BOUND_HOEFFDING = 1 };

/* The subsampling MH test's tuning and its scratch (subsample_mh.c): tolerance epsilon, first
 * subset size batch (doubled until settled), the concentration bound; the subset is drawn without
 * replacement by a sparse Fisher-Yates shuffle in the hash table `key`/`value` (cap entries, a
 * power of 2). tests and items count the tests and the observations they read (whole numbers,
 * so sums over threads are exact), for the trace's data fraction; the caller resets them. */
typedef struct {
  double tolerance;
  int batch, bound;
  int *key, *value, *used, cap, n_used;
  double tests, items;
} sg_mh_test;

/* The kernel's tuning and scratch for one run of moves. integrator: SG_INTEGRATOR_EULER (the
 * paper's update, eq. 3) or SG_INTEGRATOR_BAOAB (see sghmc.c): with an exact potential
 * (pot->log_target) and no constraint BAOAB makes SGHMC generalised HMC and SGLD MALA, with a
 * Metropolis test at every step, and `accepted` counts the accepted steps of the last run (also
 * the MH kernels').
 * work: 4 dim doubles. */
enum { SG_INTEGRATOR_EULER = 0, SG_INTEGRATOR_BAOAB = 1 };
typedef struct {
  int kind;
  double eta, alpha;
  int integrator;
  const sg_precond *pc; /* NULL or kind NONE: unpreconditioned */
  double *work;
  int accepted;
  sg_rng *rng; /* the stream of the particle being moved (set by the caller) */
  sg_mh_test mh;
  /* FLYMC's scratch: the bright observations' buffer positions (n_max) and their gaps
   * (SG_BLOCK); its MH steps and the observations they read are counted in mh */
  int *bright;
  double *gap;
  /* jump proposals per run of moves (0: none; sg_move_settings.jumps), and the proposals made
   * and accepted since the estimator last reset them (for its trace) */
  int jumps;
  double jumps_made, jumps_accepted;
  /* data-augmentation moves per run of moves (0: none; model.h, gibbs_propose), counted with
   * the jumps in jumps_made and jumps_accepted */
  int gibbs;
} sg_kernel;
struct sg_move_settings;
/* The metric kernel k moves in: its preconditioner, or NULL for the paper's unpreconditioned
 * kernel (no preconditioner, or kind NONE). */
static inline const sg_precond *sg_kernel_metric(const sg_kernel *k) {
  return (k->pc && k->pc->kind != SG_PRECOND_NONE) ? k->pc : NULL;
}
/* Whether a run of kernel k with steps > 0 leaves in its `grad` scratch the gradient of log f at
 * the final theta (up to the free part sg_kernel_run redraws, which the gradient's identified part
 * does not depend on): SGHMC with the BAOAB integrator, both as generalised HMC (the gradient of
 * the state kept) and on a mini-batch potential (an unbiased estimate from a mini-batch drawn
 * after theta was reached). SGAIS reuses it as the score of its control variate (anneal.h). */
static inline int sg_kernel_leaves_gradient(const sg_kernel *k) {
  return k->kind == SG_KERNEL_SGHMC && k->integrator == SG_INTEGRATOR_BAOAB;
}
/* A kernel of the settings' kind for a model of dimension dim with at most n_max observations in
 * the population of an MH test. */
void sg_kernel_init(sg_kernel *k, const struct sg_move_settings *s, const sg_precond *pc, int dim,
                    int n_max);

/* `steps` steps of the kernel k->kind from theta (updated in place) on the potential pot, then
 * (steps > 0) k->jumps jump proposals where the model has them, pot->jump holds points and the
 * potential is exact (pot->log_target), each accepted by the Metropolis-Hastings test, then
 * k->gibbs data-augmentation moves where the model has them and the potential is exact with its
 * population at full weight (kernel.c, gibbs_run); v and grad are scratch of length dim.
 * Nested sampling, which needs a constraint, calls sg_sghmc_run() itself. */
void sg_kernel_run(const sg_potential *pot, int dim, double *theta, double *v, double *grad,
                  int steps, sg_kernel *k);
/* The kernel's name for messages ("SGHMC", "SGLD", ...). */
const char *sg_kernel_name(int kind);
/* The target acceptance rate the step adapts to after a run of kernel k on pot (sg_move_adapt),
 * or 0 when the kernel has no Metropolis test there (no adaptation). */
double sg_kernel_target_acceptance(const sg_kernel *k, const sg_potential *pot);
/* The SGLD kernel (sgld.c): theta <- theta + (eta / 2) Sigma grad log f + N(0, eta Sigma);
 * Metropolis-adjusted (MALA, counting k->accepted) on an exact potential with the BAOAB
 * integrator setting. v and grad: scratch of dim. */
void sg_sgld_run(const sg_potential *pot, int dim, double *theta, double *v, double *grad,
                 int steps, sg_kernel *k);
/* The random-walk kernels' proposal: prop = theta + h L xi, h = sqrt(k->eta), xi ~ N(0, I) from
 * the particle's stream and L the factor of the metric k->pc (none: L = I). k->work + dim holds
 * xi afterwards (prop may be k->work). */
void sg_random_walk_propose(sg_kernel *k, int dim, const double *theta, double *prop);
/* The subsampling MH kernels (subsample_mh.c): `steps` random-walk proposals theta + h L xi,
 * h = sqrt(eta), each accepted by the subsampled test; counts k->accepted. */
void sg_subsample_mh_run(const sg_potential *pot, int dim, double *theta, int steps, sg_kernel *k);

/* The collapsed likelihood bound of the FlyMC kernel (flymc.c): with the model's tangent points
 * chosen at `anchor` (model.h, lik_bound_collapse), the sum over the potential's population of
 *   log B_k(theta) = c + b' theta - theta' A theta        (A: dim x dim, column-major).
 * The estimator sets it in the main thread before the moves (one pass over the population,
 * O(n dim^2)); the kernels only read it, so threads share it. */
typedef struct sg_flymc_bound {
  int dim;
  double *anchor, *A, *b, c;
} sg_flymc_bound;
void sg_flymc_bound_alloc(sg_flymc_bound *B, int dim);
/* A probe for the tests (hooks_r.c): the bound with tangent points at anchor, collapsed over all
 * of m's observations, at theta; gap gets each observation's log p(y_i | theta) - log B_i(theta). */
double sg_flymc_probe(const sg_model *m, const double *anchor, const double *theta, double *gap);
/* Anchors B at the weighted mean of the M particles theta (rows of dim, log-weights logw) and
 * collapses the bound over pot's population (pot->data.n likelihood evaluations, counted in
 * pot->data.ws). */
void sg_flymc_bound_set(sg_flymc_bound *B, const sg_potential *pot, const double *theta,
                        const double *logw, int M);
/* The FlyMC kernel (flymc.c): brightness variables z_k ~ Bernoulli(1 - (B_k / L_k)^factor) for
 * the population, then `steps` random-walk proposals theta + h L xi, h = sqrt(eta), accepted by
 * the exact MH test on the joint target of theta and z; counts k->accepted. */
void sg_flymc_run(const sg_potential *pot, int dim, double *theta, int steps, sg_kernel *k);

/* `steps` SGHMC steps from theta (updated in place); v and grad are scratch of length dim.
 * With a preconditioner the kernel simulates the dynamics with inverse mass Sigma: v ~ N(0, eta
 * Sigma), v <- (1 - alpha) v + eta Sigma grad log f + N(0, 2 alpha eta Sigma), so eta = h^2
 * moves about h target widths per step.
 * With a constraint (NULL for none), a step that would leave the region is undone and the
 * velocity reflected off the contour (see sghmc.c). Returns the number of such reflections. */
int sg_sghmc_run(const sg_potential *pot, sg_constraint *con, int dim, double *theta,
                 double *v, double *grad, int steps, sg_kernel *k);

/* How particles move, shared by every estimator (one parser, sg_move_settings_from_r() in ffi.h):
 *   scale PER_OBSERVATION: the paper's eta = learning_rate / n (Section 6.1), no preconditioner;
 *   scale WIDTH: eta = step_size^2 with the preconditioner estimated from the particles, so a
 *     step is a fixed fraction of the target's width whatever the data's units or size.
 * steps is the most SGHMC steps per move and min_steps the fewest (adaptive in between, see
 * sg_move_steps). */
enum { SG_STEP_PER_OBSERVATION = 0, SG_STEP_WIDTH = 1 };
typedef struct sg_move_settings {
  int steps, min_steps, scale, preconditioner, integrator;
  double learning_rate, step_size, momentum_decay;
  /* Metropolis-adjusted moves of the gradient kernels (SGHMC, SGLD) are repeated, up to
   * max_rounds moves in all, while the particles still correlate with where the move began by
   * more than max_correlation (sg_precond_jump_correlation; sg_move_again) */
  int max_rounds;
  double max_correlation;
  int kernel, mh_batch, mh_bound;
  double mh_tolerance;
  /* jump proposals per move (model.h, jump_propose; 0: none) */
  int jumps;
  /* the step a run starts from and the adaptation's cap is twice of (sg_move_settings_for):
   * step_size, or for the random-walk MH kernels 2.38 / sqrt(dim) target widths (Roberts,
   * Gelman & Gilks 1997) */
  double base_step;
} sg_move_settings;
/* The one rule of which kernels suit which models: SG_ERR_INPUT (in st) when the kernel needs
 * what m lacks (the confidence sampler needs m->log_lik_range, FlyMC m->lik_bound_collapse and
 * m->lik_bound_gap), else SG_OK. R asks it before a run (ffi_kernel_suits_model). */
int sg_kernel_suits_model(int kernel, const sg_model *m, sg_status *st);
/* Sets s->base_step for the model m; SG_ERR_INPUT (in st) when the kernel does not suit m
 * (sg_kernel_suits_model). */
int sg_move_settings_for(sg_move_settings *s, const sg_model *m, sg_status *st);
/* With steps of the adapted size step_size (target widths) instead of the configured one, the
 * number of steps that travels the same distance: steps * configured / step_size, within
 * [1, 5 steps] (until a target fraction of the posterior sd is travelled; a
 * posterior that forces small steps gets more of them, one that allows large steps fewer). */
int sg_move_distance_steps(const sg_move_settings *s, int steps, double step_size);
/* Whether the particles moved `rounds` times, now at `correlation` with where the first move
 * began (NaN: not measured), move again: the number of moves follows how well they decorrelate
 * (PyMC's SMC kernels stop their MCMC steps by the same kind of correlation). */
int sg_move_again(const sg_move_settings *s, int rounds, double correlation);
/* The kernel's eta for a target holding n observations. */
double sg_move_eta(const sg_move_settings *s, double n);
/* SGHMC steps for a move after a reweighting whose incremental ESS was `ess` of M with target
 * `target`: steps in proportion to the chi-square distance M / ess - 1 the target moved, relative
 * to that of a full annealing step, within [min_steps, steps]. */
int sg_move_steps(const sg_move_settings *s, double ess, double target, int M);
/* After Metropolis-adjusted moves with per-particle acceptance rates acceptance[0..M-1]
 * (reordered): the step towards a median acceptance of `target` (0.8 for generalised HMC, 0.234
 * for a random walk), by a factor in [1/2, 2] and at most twice base_step (Buchholz, Chopin &
 * Jacob 2021 adapt between SMC steps; the median ignores a few particles stuck in a funnel).
 * Returns the median. */
double sg_move_adapt(const sg_move_settings *s, double target, double *step_size,
                     double *acceptance, int M);

#endif
