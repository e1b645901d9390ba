/* Internal header of the sgais C core.
 *
 * Three layers, each used by every estimator (SGAIS now, AIS and nested sampling later):
 *   - the model interface (sg_model): everything an estimator may ask of a model;
 *   - the SGHMC kernel (sg_sghmc_run) on any potential (sg_potential);
 *   - log-space weight utilities (log-sum-exp, ESS, adaptive annealing step, resampling).
 * Entry points called from R through .Call are named ffi_<topic>_<verb>; they unpack SEXPs and
 * call core functions that take plain C types.
 */
#ifndef SGAIS_H
#define SGAIS_H

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Random.h>

/* ---------------------------------------------------------------- model interface */

typedef struct sg_model sg_model;

/* A model: a prior on an unconstrained parameter vector theta in R^dim and a likelihood that
 * factorises over n_obs observations. Models that need constrained parameters (variances,
 * mixture weights) work with a transform of them and include its log-Jacobian in log_prior,
 * so that every estimator sees a proper density on R^dim. */
struct sg_model {
  const char *name;
  int dim;
  int n_obs;
  const void *data; /* model-specific; memory owned by R (R_alloc or the model object) */

  /* Draw theta from the prior (unconstrained space) with R's RNG. */
  void (*prior_draw)(const sg_model *m, double *theta);

  /* log p(theta) in the unconstrained space, log-Jacobian included. If grad is not NULL,
   * add the gradient of log p(theta) to grad. */
  double (*log_prior)(const sg_model *m, const double *theta, double *grad);

  /* sum_i log p(y_i | theta) over the observations idx[0..n-1], or start..start+n-1 when idx is
   * NULL (0-based). If grad is not NULL, add scale * (gradient of that sum) to grad. */
  double (*log_lik)(const sg_model *m, const double *theta, const int *idx, int start, int n,
                    double scale, double *grad);

  /* Optional (NULL if none): maps theta in place to an equivalent point of a canonical mode, for
   * models whose posterior is symmetric under relabelling (mixtures). It must leave the prior
   * and every likelihood unchanged and have |Jacobian| 1. The robust samplers apply it before
   * estimating their preconditioner, so that it describes one mode. */
  void (*canonicalize)(const sg_model *m, double *theta);
};

/* Applies the model's canonicalize (if any) to M particles (rows of dim). */
void sg_model_canonicalize(const sg_model *m, double *theta, int M);

/* Evaluation counts: per-observation log-likelihood evaluations without and with gradient.
 * Every estimator counts through sg_model_log_lik, so their costs compare. */
typedef struct {
  double likelihood;
  double gradient;
} sg_counter;

/* Build a model from its R object (class sgais_model); memory is R_alloc'ed. */
void sg_model_from_r(SEXP model, sg_model *m);

/* The model's log-likelihood, counted in `count` (which may be NULL). */
double sg_model_log_lik(const sg_model *m, const double *theta, const int *idx, int start, int n,
                        double scale, double *grad, sg_counter *count);

/* Constructors of the built-in models, one per source file. They read their data from the
 * list `data` and their hyperparameters from the named list `hyper`. */
void sg_linear_regression_init(SEXP data, SEXP hyper, sg_model *m);
void sg_softmax_regression_init(SEXP data, SEXP hyper, sg_model *m);
void sg_gaussian_mixture_init(SEXP data, SEXP hyper, sg_model *m);

/* The independent N(0, sd^2) prior on every parameter that the regression models share:
 * a draw, and log p(theta) with its gradient added to grad (when not NULL). */
void sg_normal_prior_draw(double *theta, int dim, double sd);
double sg_normal_log_prior(const double *theta, int dim, double sd, double *grad);

/* Mini-batch rows are random reads from data that do not fit in cache, so models fetch the row
 * of the observation SG_PREFETCH_AHEAD places ahead in idx (the loop is otherwise bound by
 * memory latency). A row is `len` contiguous doubles. */
#define SG_PREFETCH_AHEAD 8
static inline void sg_prefetch_row(const double *row, int len) {
#if defined(__GNUC__)
  __builtin_prefetch(row);
  __builtin_prefetch(row + len - 1);
#else
  (void) row;
  (void) len;
#endif
}

/* ---------------------------------------------------------------- SGHMC kernel */

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

/* How particles move, shared by every estimator (one parser, sg_move_settings_from_r):
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
sg_move_settings sg_move_settings_from_r(SEXP x);
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

/* ---------------------------------------------------------------- log-space utilities */

double sg_log_sum_exp(const double *x, int n);
/* mean = the mean of the M rows of dim in theta, weighted by exp(logw) (normalised in log
 * space). */
void sg_weighted_mean(const double *theta, const double *logw, int M, int dim, double *mean);
/* ESS of the weights exp(scale * logw): (sum w)^2 / sum w^2. */
double sg_ess(const double *logw, int n, double scale, double *work);
/* Largest step in (0, max_delta] whose incremental ESS reaches target (paper Section 3). */
double sg_annealing_step(const double *loglik, int n, double max_delta, double target,
                         double *ess, double *work);
/* Systematic resampling: ancestors[i] drawn in proportion to exp(logw); the _n form draws n_out
 * ancestors among n_in particles. */
void sg_resample_systematic(const double *logw, int n, int *ancestors, double *work);
void sg_resample_systematic_n(const double *logw, int n_in, int *ancestors, int n_out,
                              double *work);
/* The tuning values of the annealing samplers (SGAIS, AIS), read from the R settings list by
 * name and re-checked; the messages name the argument. resample_ess: resample before the moves
 * when the weight ESS falls below resample_ess * particles (0 never, 1 at every step). */
typedef struct {
  int particles;
  double target_ess, resample_ess;
  sg_move_settings move;
} sg_anneal_settings;
sg_anneal_settings sg_anneal_settings_from_r(SEXP x);

/* Scratch for sg_anneal_reweight (R_alloc'ed). */
typedef struct {
  double *work, *copy;
  int *ancestors;
} sg_anneal_scratch;
void sg_anneal_scratch_alloc(sg_anneal_scratch *s, int M, int dim);
/* One adaptive annealing step shared by SGAIS and AIS: Delta in (0, max_delta] by the ESS of the
 * incremental weights (reported in *ess), logw += Delta * loglik; then, when pc is not NULL,
 * the preconditioner from the reweighted particles; then, if the weight ESS is below
 * resample_ess * M (or resample_ess >= 1), systematic resampling of the particles theta (M rows
 * of dim) and of loglik with the weights set to their mean (*resampled = 1). Returns Delta. */
double sg_anneal_reweight(double *theta, double *logw, double *loglik, int M, int dim,
                          double max_delta, double target_ess, double resample_ess, double *ess,
                          int *resampled, sg_precond *pc, sg_anneal_scratch *s);
/* Particle sanity checks shared by the annealing samplers; callers word the error. */
enum { SG_LOGLIK_OK = 0, SG_LOGLIK_NOT_FINITE = 1, SG_LOGLIK_ALL_ZERO = 2 };
int sg_check_loglik(const double *loglik, int M); /* NaN or +Inf; or all -Inf */
int sg_all_finite(const double *x, int n);
/* Wall-clock seconds from an arbitrary origin. */
double sg_now(void);

/* Argument checks for entry points; errors name the argument. */
int sg_scalar_int(SEXP x, const char *what, int lower);
double sg_scalar_double(SEXP x, const char *what);
double sg_scalar_count(SEXP x, const char *what);
SEXP sg_list_get(SEXP list, const char *name);
SEXP sg_new_column(SEXP out, SEXP names, int i, const char *name, SEXPTYPE type, R_xlen_t n);

/* ---------------------------------------------------------------- entry points */

SEXP ffi_model_evaluate(SEXP model, SEXP theta, SEXP start, SEXP n);
SEXP ffi_model_prior_draw(SEXP model, SEXP n);
SEXP ffi_model_pointwise_log_lik(SEXP model, SEXP theta);
SEXP ffi_data_digest(SEXP digest, SEXP values);
SEXP ffi_precond_metric(SEXP theta, SEXP logw, SEXP kind, SEXP leave_out);
SEXP ffi_sgais_run(SEXP model, SEXP state, SEXP n_end, SEXP settings, SEXP time_budget);
SEXP ffi_ais_run(SEXP model, SEXP theta, SEXP logw, SEXP loglik, SEXP lambda, SEXP settings,
                 SEXP steps_done, SEXP step_size, SEXP time_budget);
SEXP ffi_nested_sampling_run(SEXP model, SEXP state, SEXP settings, SEXP time_budget);

#endif
