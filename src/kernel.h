/* The move layer: the SGHMC kernel on any potential, its preconditioner, and the move settings
 * every estimator shares. */
#ifndef SG_KERNEL_H
#define SG_KERNEL_H

#include "model.h"


/* A target density f known through the gradient of log f (possibly a stochastic, unbiased
 * estimate). The kernel simulates the potential U = -log f. */
typedef struct {
  void (*grad_log_target)(void *ctx, const double *theta, double *grad); /* overwrites grad */
  void *ctx;
  /* When the potential is exact (no mini-batch): log f at theta up to a constant, with its
   * gradient written to grad; NULL otherwise. The robust kernel then Metropolis-adjusts. */
  double (*log_target)(void *ctx, const double *theta, double *grad);
} sg_potential;

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
} sg_precond;
void sg_precond_alloc(sg_precond *p, int kind, int dim);
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
/* The weighted mean squared distance of the particles from their weighted mean in the metric
 * Sigma^-1, per coordinate (about 1 for particles from a target whose covariance is Sigma).
 * work is scratch of 2 dim. */
double sg_precond_spread(const sg_precond *p, const double *theta, const double *logw, int M,
                         double *work);
/* The squared distance between x and y in the metric Sigma^-1, per coordinate. work: dim. */
double sg_precond_distance2(const sg_precond *p, const double *x, const double *y, double *work);
/* out = Sigma g; x = L x in place; out = L' g. */
void sg_precond_apply(const sg_precond *p, const double *g, double *out);
void sg_precond_factor_apply(const sg_precond *p, double *x);
void sg_precond_factor_transpose_apply(const sg_precond *p, const double *g, double *out);

/* The kernel's tuning and scratch for one run of moves. integrator: SG_INTEGRATOR_EULER (the
 * paper's update, eq. 3) or SG_INTEGRATOR_BAOAB (see sghmc.c): with an exact potential
 * (pot->log_target) and no constraint BAOAB becomes generalised HMC with a Metropolis test at
 * every step, and `accepted` counts the accepted steps of the last run. work: 4 dim doubles. */
enum { SG_INTEGRATOR_EULER = 0, SG_INTEGRATOR_BAOAB = 1 };
typedef struct {
  double eta, alpha;
  int integrator;
  const sg_precond *pc; /* NULL or kind NONE: unpreconditioned */
  double *work;
  int accepted;
  sg_rng *rng; /* the stream of the particle being moved (set by the caller) */
} sg_kernel;
void sg_kernel_init(sg_kernel *k, int integrator, const sg_precond *pc, int dim);

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
typedef struct {
  int steps, min_steps, scale, preconditioner, integrator;
  double learning_rate, step_size, momentum_decay;
} sg_move_settings;
/* With steps of the adapted size step_size (target widths) instead of the configured one, the
 * number of steps that travels the same distance: steps * configured / step_size, within
 * [1, 5 steps] (the "until a target fraction of the posterior sd is travelled"; a
 * posterior that forces small steps gets more of them, one that allows large steps fewer). */
int sg_move_distance_steps(const sg_move_settings *s, int steps, double step_size);
/* The kernel's eta for a target holding n observations. */
double sg_move_eta(const sg_move_settings *s, double n);
/* SGHMC steps for a move after a reweighting whose incremental ESS was `ess` of M with target
 * `target`: steps in proportion to the chi-square distance M / ess - 1 the target moved, relative
 * to that of a full annealing step, within [min_steps, steps]. */
int sg_move_steps(const sg_move_settings *s, double ess, double target, int M);
/* After Metropolis-adjusted moves with per-particle acceptance rates acceptance[0..M-1]
 * (reordered): the step towards a median acceptance of 0.8, by a factor in [1/2, 2] and at most
 * twice the configured step_size (Buchholz, Chopin & Jacob 2021 adapt between SMC steps; the
 * median ignores a few particles stuck in a funnel). Returns the median. */
double sg_move_adapt(const sg_move_settings *s, double *step_size, double *acceptance, int M);

#endif
