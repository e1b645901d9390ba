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
};

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

/* `steps` SGHMC steps from theta (updated in place); v and grad are scratch of length dim.
 * With a constraint (NULL for none), a step that would leave the region is undone and the
 * velocity reflected off the contour (see sghmc.c). Returns the number of such reflections. */
int sg_sghmc_run(const sg_potential *pot, sg_constraint *con, int dim, double *theta,
                 double *v, double *grad, int steps, double eta, double alpha);

/* ---------------------------------------------------------------- log-space utilities */

double sg_log_sum_exp(const double *x, int n);
/* ESS of the weights exp(scale * logw): (sum w)^2 / sum w^2. */
double sg_ess(const double *logw, int n, double scale, double *work);
/* Largest step in (0, max_delta] whose incremental ESS reaches target (paper Section 3). */
double sg_annealing_step(const double *loglik, int n, double max_delta, double target,
                         double *ess, double *work);
/* Systematic resampling: ancestors[i] drawn in proportion to exp(logw). */
void sg_resample_systematic(const double *logw, int n, int *ancestors, double *work);
/* The tuning values of the annealing samplers (SGAIS, AIS), read from the R settings list by
 * name and re-checked; the messages name the argument. */
typedef struct {
  int particles, sghmc_steps, resample;
  double target_ess, learning_rate, momentum_decay;
} sg_anneal_settings;
sg_anneal_settings sg_anneal_settings_from_r(SEXP x);

/* Scratch for sg_anneal_reweight (R_alloc'ed). */
typedef struct {
  double *work, *copy;
  int *ancestors;
} sg_anneal_scratch;
void sg_anneal_scratch_alloc(sg_anneal_scratch *s, int M, int dim, int resample);
/* One adaptive annealing step shared by SGAIS and AIS: Delta in (0, max_delta] by the ESS of the
 * incremental weights (reported in *ess), logw += Delta * loglik, then, if resample, systematic
 * resampling of the particles theta (M rows of dim) and of loglik with the weights set to their
 * mean. Returns Delta. */
double sg_anneal_reweight(double *theta, double *logw, double *loglik, int M, int dim,
                          double max_delta, double target_ess, int resample, double *ess,
                          sg_anneal_scratch *s);
/* Particle sanity checks shared by the annealing samplers; callers word the error. */
enum { SG_LOGLIK_OK = 0, SG_LOGLIK_NOT_FINITE = 1, SG_LOGLIK_ALL_ZERO = 2 };
int sg_check_loglik(const double *loglik, int M); /* NaN or +Inf; or all -Inf */
int sg_all_finite(const double *x, int n);
/* Wall-clock seconds from an arbitrary origin. */
double sg_now(void);

/* Argument checks for entry points; errors name the argument. */
int sg_scalar_int(SEXP x, const char *what, int lower);
double sg_scalar_double(SEXP x, const char *what);
SEXP sg_list_get(SEXP list, const char *name);
SEXP sg_new_column(SEXP out, SEXP names, int i, const char *name, SEXPTYPE type, R_xlen_t n);

/* ---------------------------------------------------------------- entry points */

SEXP ffi_model_evaluate(SEXP model, SEXP theta, SEXP start, SEXP n);
SEXP ffi_model_prior_draw(SEXP model, SEXP n);
SEXP ffi_sgais_run(SEXP model, SEXP theta, SEXP logw, SEXP n_done, SEXP n_end, SEXP settings,
                   SEXP time_budget);
SEXP ffi_ais_run(SEXP model, SEXP theta, SEXP logw, SEXP loglik, SEXP lambda, SEXP settings,
                 SEXP steps_done, SEXP time_budget);
SEXP ffi_nested_sampling_run(SEXP model, SEXP state, SEXP settings, SEXP time_budget);

#endif
