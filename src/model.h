/* The model layer: the interface every estimator evaluates models through, the prior building
 * blocks, and the constructors of the built-in models. Plain C: a model is built from arrays and
 * numbers (the entry points unpack R objects, ffi.h), and everything it writes while it is
 * evaluated lives in a workspace the caller owns, so one model can be evaluated by several
 * workspaces (threads) at once. */
#ifndef SG_MODEL_H
#define SG_MODEL_H

#include "weights.h"
#include "threads.h"
#include <stddef.h>

typedef struct sg_model sg_model;
struct sg_gaussian;

/* Evaluation counts: per-observation log-likelihood evaluations without and with gradient.
 * Every estimator counts through sg_model_log_lik(), so their costs compare. */
typedef struct {
  double likelihood;
  double gradient;
} sg_counter;

/* Observations are summed in blocks of SG_BLOCK: sg_model_log_lik() evaluates a range or index
 * set of more than SG_BLOCK observations block by block, SG_BLOCK_GROUP blocks at a time shared
 * among the workspace's threads, and adds the blocks' values and gradients in block order. The
 * result is the same for any number of threads (the blocks and the order of the sums are fixed);
 * a model that cannot run on threads (R callbacks) is evaluated in one call instead. */
#define SG_BLOCK 1024
#define SG_BLOCK_GROUP 64
/* Fewer blocks than this are summed on one thread (still block by block): a parallel region
 * costs microseconds on an idle machine and can cost milliseconds on a busy one, far more than
 * a few blocks of work. */
#define SG_PARALLEL_MIN_BLOCKS 16
/* `threads` when a parallel region would evaluate at least that many blocks' worth of
 * observations in all, else 1. */
static inline int sg_threads_for(int threads, double observations) {
  return observations >= (double) SG_PARALLEL_MIN_BLOCKS * SG_BLOCK ? threads : 1;
}

/* What a model may write while it is evaluated: `scratch` (m->scratch_bytes bytes, aligned for
 * doubles), the evaluation counts, and `status`, where a model whose evaluation fails (an R
 * callback that errs or returns the wrong length, sg_fail(SG_ERR_MODEL)) says why; it then
 * returns NaN, and the estimator stops with that message rather than its own. A workspace is
 * used by one thread at a time; with threads > 1 (sg_workspace_threads) its blocked passes use
 * the per-thread workspaces `pool`. */
typedef struct sg_workspace {
  void *scratch;
  sg_counter count;
  sg_status *status;
  int threads;
  struct sg_workspace *pool;
  double *block_value, *block_grad; /* SG_BLOCK_GROUP values and gradients (dim each) */
} sg_workspace;

/* A model: a prior on an unconstrained parameter vector theta in R^dim and a likelihood that
 * factorises over n_obs observations. Models that need constrained parameters (variances,
 * mixture weights) work with a transform of them and include its log-Jacobian in log_prior,
 * so that every estimator sees a proper density on R^dim. The model itself is read-only. */
struct sg_model {
  const char *name;
  int dim;
  int n_obs;
  const void *data;     /* model-specific, read-only; memory owned by R (R_alloc or R objects) */
  size_t scratch_bytes; /* the workspace scratch the functions below need */

  /* Draw theta from the prior (unconstrained space) with R's RNG. */
  void (*prior_draw)(const sg_model *m, sg_workspace *ws, double *theta);

  /* log p(theta) in the unconstrained space, log-Jacobian included. If grad is not NULL,
   * add the gradient of log p(theta) to grad. */
  double (*log_prior)(const sg_model *m, sg_workspace *ws, const double *theta, double *grad);

  /* sum_i log p(y_i | theta) over the observations idx[0..n-1], or start..start+n-1 when idx is
   * NULL (0-based). If grad is not NULL, add scale * (gradient of that sum) to grad. */
  double (*log_lik)(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                    int start, int n, double scale, double *grad);

  /* Optional (NULL: log_lik with a gradient is used): the same gradient without the value, for
   * models where the value costs extra (R callbacks). */
  void (*grad_log_lik)(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                       int start, int n, double scale, double *grad);

  /* Optional (NULL: grad_log_lik at each point): adds scale * sum_i [grad log p(y_i | theta) -
   * grad log p(y_i | a)] over the observations idx[0..n-1] to grad, reading each once: the
   * difference a control-variate mini-batch gradient needs (sgais.c). */
  void (*grad_log_lik_diff)(const sg_model *m, sg_workspace *ws, const double *theta,
                            const double *a, const int *idx, int n, double scale, double *grad);

  /* Optional (NULL: log_lik one observation at a time): out[k] = log p(y_{start+k} | theta) for
   * k < n, for predictive densities. */
  void (*log_lik_pointwise)(const sg_model *m, sg_workspace *ws, const double *theta, int start,
                            int n, double *out);

  /* Nonzero when the functions above may run on several threads at once, each with its own
   * workspace (built-in models; not R callbacks). */
  int thread_safe;

  /* Optional (NULL if none): maps each of the M particles (rows of theta) in place to an
   * equivalent point, for models whose posterior is symmetric under relabelling (mixtures), so
   * that the particles gather in one mode; the point chosen may depend on the whole population
   * and its log-weights logw (NULL: equal). It must leave the prior and every likelihood
   * unchanged and have |Jacobian| 1, and depend on nothing but its arguments. The robust
   * samplers apply it before estimating their preconditioner, so that it describes one mode.
   * The particles then lie in a region C that holds exactly one point of each equivalence class
   * (a fundamental domain); its description is written to region (region_size doubles; NULL:
   * not wanted) for to_region. */
  void (*canonicalize)(const sg_model *m, sg_workspace *ws, double *theta, int M,
                       const double *logw, double *region);
  /* With canonicalize: maps theta in place to its equivalent point in the region C described by
   * region, and returns 1 if that is another point (theta was outside C), else 0. A metric
   * estimated from particles gathered in C does not commute with relabelling, so a kernel using
   * it is invariant for the symmetric target but not for the target restricted to C, where the
   * particles are; the exact kernels therefore reject a move that leaves C, and a jump's
   * accepted proposal is mapped into C (kernel.c, sghmc.c). A uniform region_size[0] of 0 means
   * C is the whole space (fewer than 2 particles or components): to_region returns 0. */
  int (*to_region)(const sg_model *m, sg_workspace *ws, const double *region, double *theta);
  size_t region_size;

  /* Optional (NULL if none): directions along which no likelihood changes and the prior is
   * N(0, free_sd^2) on every coordinate (isotropic) and independent of the rest, so that the
   * posterior along them is exactly the prior's whatever the data (softmax regression with a
   * coefficient vector for every class: adding the same number to a covariate's coefficient in
   * every class changes no probability). free_project maps x in place to its orthogonal
   * projection onto the complement (x minus its component along those directions); it is
   * linear, needs no workspace and is thread-safe. The robust samplers (precond.c) then move
   * only the identified part, with a metric estimated from it, and draw the free part exactly
   * from the prior after each move (a Gibbs step): a metric estimated from particles whose
   * spread is the prior's along those directions is far too wide along the identified ones,
   * whose width falls as 1/sqrt(n), and a fixed step becomes unstable as n grows. */
  void (*free_project)(const sg_model *m, double *x);
  double free_sd;
  /* Optional (NULL: N(0, free_sd^2) on every coordinate): the prior's mean and sd of each
   * coordinate, when they differ between coordinates (softmax regression with a prior per
   * covariate; each covariate's coordinates share theirs, so that the class mean is still
   * independent of the rest). */
  const double *free_mean, *free_sd_each;

  /* Optional (NULL if none): a bound C >= max_i |log p(y_i | theta_new) - log p(y_i | theta)|
   * over all the model's observations, for the confidence sampler's concentration bounds
   * (Bardenet, Doucet & Holmes 2014; kernel.h), O(dim) from summaries of the data. Called once
   * with theta NULL first, in the main thread, it computes those summaries (one pass over the
   * data, which runs that need no bound do not pay) and returns 0. */
  double (*log_lik_range)(const sg_model *m, const double *theta, const double *theta_new);

  /* Optional (both or neither; NULL if none): a lower bound on each observation's likelihood
   * that is quadratic in theta, for Firefly Monte Carlo (Maclaurin & Adams 2014; flymc.c),
   *   log B_i(theta; t) = c_i(t) + b_i(t)' theta - theta' A_i(t) theta <= log p(y_i | theta),
   * with tangent points chosen at the anchor t so that it is tight at theta = t.
   * lik_bound_collapse adds the sums of A_i (dim x dim, column-major, symmetric), b_i and c_i
   * over the observations idx[0..n-1] (or start..start+n-1 when idx is NULL) to A, b and *c;
   * lik_bound_gap writes gap[k] = log p(y_k | theta) - log B_k(theta; t) >= 0 for the same
   * kind of index set. Read-only, thread-safe (they get no workspace: any scratch must be
   * small and on the stack). Logistic regression supplies the Jaakkola-Jordan bound, softmax
   * regression Bohning's. */
  void (*lik_bound_collapse)(const sg_model *m, const double *t, const int *idx, int start,
                             int n, double *A, double *b, double *c);
  void (*lik_bound_gap)(const sg_model *m, const double *t, const double *theta, const int *idx,
                        int start, int n, double *gap);

  /* Optional (all or none; NULL if none): jump proposals, for posteriors with separated modes
   * that local moves cannot travel between while annealing from the prior (a mixture
   * component that settled away from the data must cross a region of low density to reach a
   * cluster). jump_prepare summarises the observations at buffer positions pts[0..n_pts-1]
   * (1 <= n_pts <= SG_JUMP_POINTS: the data the current target holds, or an evenly spread
   * subset of its n_obs observations) into aux (jump_aux doubles), once for every set of
   * points. jump_propose writes to prop a draw from an independence proposal q (one that does
   * not depend on the current point), built from the prior, aux, the observations in the
   * target and pop (NULL: none), a Gaussian fitted to the particles, with the draws from rng;
   * jump_log_q returns log q at theta, up to a constant, for the Hastings term
   * log q(theta) - log q(prop). The observations in the target set how wide q may be: n_obs
   * (lambda N while annealing) with rungs = 1; with rungs > 1 (nested sampling, whose
   * constrained prior is as wide as no single posterior) q mixes equally the widths of n_obs,
   * n_obs / SG_JUMP_RUNG_RATIO, ..., n_obs / SG_JUMP_RUNG_RATIO^(rungs - 1) observations. For a
   * model with canonicalize, q is the density of the proposal's canonical point (summed over
   * the equivalent points). jump_log_q uses ws's scratch; both are thread-safe. */
  void (*jump_prepare)(const sg_model *m, const int *pts, int n_pts, double n_obs, double *aux);
  void (*jump_propose)(const sg_model *m, double *prop, const double *aux, double n_obs,
                       int rungs, const struct sg_gaussian *pop, sg_rng *rng);
  double (*jump_log_q)(const sg_model *m, sg_workspace *ws, const double *theta,
                       const double *aux, double n_obs, int rungs,
                       const struct sg_gaussian *pop);
  size_t jump_aux;
  /* Optional (NULL if none): a data-augmentation proposal, for a likelihood that is a sum over
   * latent allocations under a conjugate prior (a mixture). Writes to prop a draw from
   * q(theta | a), a the allocations of the observations idx[0..n-1] (or start..start+n-1 when
   * idx is NULL), held at full weight, and of t_start..t_start+t_n-1, held at weight lambda,
   * each drawn from its responsibilities p(a | y, theta); q(theta | a) is proportional to the
   * prior times prod_i p(y_i, a_i | theta)^w_i, w_i the observation's weight. Returns
   * F(prop) - F(theta), F(t) = sum over the tempered observations of
   * (1 - lambda) log p(y, a | t) - log p(y | t), their part of the Metropolis-Hastings ratio
   * (kernel.c, gibbs_run). Draws from rng. */
  double (*gibbs_propose)(const sg_model *m, sg_workspace *ws, const double *theta,
                          const int *idx, int start, int n, int t_start, int t_n, double lambda,
                          double *prop, sg_rng *rng);
  /* Optional, with the jump proposals (NULL if none): a reference distribution q0 for the first
   * chunk's annealing (setting `reference`), built from aux (jump_prepare's summary of the
   * data) for a target of n observations: the path q0^(1 - lambda) (prior x likelihood)^lambda
   * then starts near the posterior instead of at the prior (Fan et al. 2011's generalized
   * stepping stone; see sgais.c). ref_log_density returns log q0(theta), normalised, and adds
   * its gradient to grad (NULL: none); ref_draw draws theta from q0 with rng. q0 must be
   * positive wherever the prior is, and symmetric like the target when the model has
   * canonicalize. */
  double (*ref_log_density)(const sg_model *m, sg_workspace *ws, const double *theta,
                            const double *aux, double n, double *grad);
  /* Whether aux supports a reference worth starting from (NULL: always, and complete): 0 not,
   * SG_REF_USABLE, or SG_REF_COMPLETE when the data also show every part of the model (a
   * mixture: a cluster for each component), which a stream's restart waits for (restart.c,
   * sg_restart_due). A mixture has none when the data show more clusters than components (q0
   * would pick one merge of them) or clusters that overlap, is complete when the data show as
   * many clusters as it has components, and usable with fewer (gaussian_mixture_reference.c,
   * gm_ref_ok). */
  int (*ref_ok)(const sg_model *m, const double *aux);
  void (*ref_draw)(const sg_model *m, const double *aux, double n, double *theta, sg_rng *rng);
  /* Optional (NULL: none): re-estimates in aux the summary q0 is built from, with all n
   * observations at buffer positions start..start+n-1 (one pass over them), so that q0 may be
   * as narrow as their posterior (anneal.h, sg_reference_for). */
  void (*ref_refit)(const sg_model *m, int start, int n, double *aux);
  /* Optional, with the jump proposals (NULL if none): strata for mini-batches (sgais.c, which
   * draws each mini-batch within them). Writes to label[i] the stratum, 0..C-1, of the
   * observation at buffer position rows[i] (rows NULL: i) for i < n, from aux; returns C, 0 for
   * none (C <= SG_STRATA_MAX). */
  int (*strata)(const sg_model *m, const double *aux, const int *rows, int n, int *label);
};
#define SG_STRATA_MAX 16
#define SG_REF_USABLE 1
#define SG_REF_COMPLETE 2
/* The most observations jump proposals are built from (n_pts): preparing them costs
 * O(SG_JUMP_POINTS) per parameter or so (a k-means clustering), not a pass over the data. */
#define SG_JUMP_POINTS 2048
/* The ratio of successive widths of a jump proposal with rungs > 1, and the most rungs. */
#define SG_JUMP_RUNG_RATIO 4.0
#define SG_JUMP_MAX_RUNGS 16

/* A Gaussian N(mean, L L') on a model's parameters, e.g. the particles' weighted mean and
 * covariance (kernel.h, the preconditioner) for a jump proposal's defensive part. diagonal:
 * factor holds the sd of each coordinate, else L (lower triangular, column-major). */
typedef struct sg_gaussian {
  const double *mean, *factor;
  int diagonal;
  double log_det; /* log |L|, set by sg_gaussian_set */
} sg_gaussian;
/* g = N(mean, L L') (the arrays are not copied), its log-determinant computed once. */
void sg_gaussian_set(sg_gaussian *g, const double *mean, const double *factor, int diagonal,
                     int dim);
/* x = mean + L e, e a standard normal vector from rng. */
void sg_gaussian_draw(const sg_gaussian *g, int dim, sg_rng *rng, double *x);
/* log N(x; mean, L L'); work: scratch of dim. */
double sg_gaussian_log_density(const sg_gaussian *g, int dim, const double *x, double *work);

/* A workspace for m (scratch R_alloc'ed, counts zero, one thread) reporting to st. */
void sg_workspace_init(sg_workspace *ws, const sg_model *m, sg_status *st);
/* Lets ws's full-data passes use `threads` threads (1 when the model is not thread-safe). Call
 * in the main thread, outside parallel regions (it allocates). */
void sg_workspace_threads(sg_workspace *ws, const sg_model *m, int threads);

/* What every built-in model's constructor sets first: its dimension, its observations, its data
 * and its prior's functions (the model's own, or the shared ones of a coefficient prior or of
 * prior blocks); the likelihood's functions are the constructor's to set. */
void sg_model_define(sg_model *m, int dim, int n_obs, const void *data,
                     void (*prior_draw)(const sg_model *, sg_workspace *, double *),
                     double (*log_prior)(const sg_model *, sg_workspace *, const double *,
                                         double *));

/* The model's log-likelihood and gradient, counted in ws->count. */
double sg_model_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                        int start, int n, double scale, double *grad);
/* Only the gradient (added, times scale, to grad), counted as gradient evaluations. */
void sg_model_grad_log_lik(const sg_model *m, sg_workspace *ws, const double *theta,
                           const int *idx, int start, int n, double scale, double *grad);
/* The model's grad_log_lik_diff, counted as 2 n gradient evaluations; the model must have it. */
void sg_model_grad_log_lik_diff(const sg_model *m, sg_workspace *ws, const double *theta,
                                const double *a, const int *idx, int n, double scale,
                                double *grad);
/* out[k] = log p(y_{start+k} | theta), k < n, counted as likelihood evaluations. */
void sg_model_log_lik_pointwise(const sg_model *m, sg_workspace *ws, const double *theta,
                                int start, int n, double *out);
/* The model's likelihood bound (lik_bound_collapse, lik_bound_gap), counted as likelihood
 * evaluations (n each: a pass over the observations). */
void sg_model_lik_bound_collapse(const sg_model *m, sg_workspace *ws, const double *t,
                                 const int *idx, int start, int n, double *A, double *b,
                                 double *c);
void sg_model_lik_bound_gap(const sg_model *m, sg_workspace *ws, const double *t,
                            const double *theta, const int *idx, int start, int n, double *gap);
/* Applies the model's canonicalize (if any) to the M particles (rows of dim), log-weights logw,
 * writing the region they are put in to region (NULL: not wanted; else m->region_size). */
void sg_model_canonicalize(const sg_model *m, sg_workspace *ws, double *theta, int M,
                           const double *logw, double *region);
/* The model's to_region (0 without one, or with region NULL). */
int sg_model_to_region(const sg_model *m, sg_workspace *ws, const double *region, double *theta);

/* ------------------------------------------------------------------ prior building blocks */

/* An independent prior on consecutive parameters theta[start..start+n-1], each with the same
 * distribution (R/prior.R builds them; prior.c evaluates them):
 *   NORMAL        theta_j ~ N(location, scale^2)
 *   STUDENT_T     theta_j ~ location + scale t_df
 *   HALF_NORMAL   theta_j = log sigma_j, sigma_j ~ N+(0, scale^2)        (Jacobian included)
 *   EXPONENTIAL   theta_j = log sigma_j, sigma_j ~ Exp(rate = 1 / scale)  (Jacobian included)
 *   HALF_T        theta_j = log sigma_j, sigma_j ~ scale |t_dof|            (Jacobian included)
 *   INV_GAMMA     theta_j = log sigma_j, sigma_j^2 ~ InvGamma(shape = dof, scale = scale)
 *                                                                         (Jacobian included)
 *   LKJ           n = q (q - 1) / 2 parameters theta_j = atanh of the canonical partial
 *                 correlations of a q x q correlation matrix R ~ LKJ(eta = dof), R = L L' with
 *                 sg_lkj_cholesky() below (location 0 and scale 1, unused; Jacobian included)
 * (a log-normal prior on sigma is NORMAL on theta = log sigma). */
enum { SG_PRIOR_NORMAL = 1, SG_PRIOR_STUDENT_T = 2, SG_PRIOR_HALF_NORMAL = 3,
       SG_PRIOR_EXPONENTIAL = 4, SG_PRIOR_HALF_T = 5, SG_PRIOR_INV_GAMMA = 6, SG_PRIOR_LKJ = 7 };
typedef struct {
  int kind, start, n;
  double location, scale, dof; /* dof: Student-t degrees of freedom */
} sg_prior_block;
typedef struct {
  int n_blocks;
  const sg_prior_block *block;
} sg_prior;
/* SG_OK when the blocks are known, cover 0..dim-1 in order, and have finite location,
 * positive finite scale and (Student-t, half-t, inverse gamma) positive df; else SG_ERR_INPUT
 * with the reason. */
int sg_prior_check(const sg_prior *p, int dim, sg_status *st);
void sg_prior_draw(const sg_prior *p, double *theta);
/* log p(theta), with its gradient added to grad when grad is not NULL. */
double sg_prior_log_density(const sg_prior *p, const double *theta, double *grad);
/* The q of an LKJ block of n parameters (n = q (q - 1) / 2), or 0 when n is not of that form. */
int sg_lkj_dim(int n);
/* The lower Cholesky factor L (q x q, row-major; its upper triangle set to 0) of the correlation
 * matrix whose canonical partial correlations are tanh(u), u the q (q - 1) / 2 parameters of an
 * LKJ block in the order of the lower triangle by rows, (2,1), (3,1), (3,2), (4,1), ...: the
 * partial correlation of effects i and j given effects 1..j-1, so (i,1) is the correlation.
 * Row i: L_ij = z_ij s_ij for j < i and L_ii = s_ii, s_ij = prod_{k<j} sqrt(1 - z_ik^2)
 * (Lewandowski, Kurowicka & Joe 2009, the C-vine; Stan's "CPCs"). */
void sg_lkj_cholesky(const double *u, int q, double *L);
/* Adds to grad (q (q - 1) / 2) the gradient in u of a function whose gradient in the entries of
 * L = sg_lkj_cholesky(u) is dL (q x q, row-major, lower triangle read). */
void sg_lkj_cholesky_grad(const double *u, int q, const double *dL, double *grad);
/* The lower Cholesky factor L (q x q, row-major) of a known correlation matrix cor (q x q);
 * SG_ERR_INPUT, naming `group_cor`, when it is not symmetric, finite, of unit diagonal and
 * positive definite. */
int sg_correlation_cholesky(const double *cor, int q, double *L, sg_status *st);

/* The independent N(0, sd^2) prior on every parameter that the paper's regression models share:
 * a draw, and log p(theta) with its gradient added to grad (when not NULL). */
void sg_normal_prior_draw(double *theta, int dim, double sd);
double sg_normal_log_prior(const double *theta, int dim, double sd, double *grad);

/* The prior of a regression's coefficients: N(0, sd^2) on every one (the paper's) when blocks is
 * NULL, else the blocks (normal, Student-t or Cauchy, each coefficient with its own location and
 * scale; R/prior.R regression_prior()). The default keeps its own code, so that its runs are
 * the same bit for bit as before blocks existed. */
typedef struct {
  double sd;
  const sg_prior *blocks;
} sg_coef_prior;
/* SG_OK when sd is positive and finite and the blocks (if any) are normal or Student-t and
 * cover dim parameters; else SG_ERR_INPUT with the reason. */
int sg_coef_prior_check(const sg_coef_prior *c, int dim, sg_status *st);
/* The prior of a regression with p coefficients and one scale parameter theta[p] = log sigma:
 * the coefficients' blocks (or N(0, sd^2) on all), then one block of `kind` (HALF_NORMAL or
 * EXPONENTIAL, on sigma = e^theta[p]) with `scale`, in R_alloc memory; SG_OK, or SG_ERR_INPUT
 * with the reason. Robust and negative binomial regression. */
int sg_coef_prior_with_scale(sg_coef_prior prior, int p, int kind, double scale, sg_prior *out,
                             sg_status *st);
/* A model's prior_draw and log_prior for models whose data struct begins with an sg_prior over
 * all dim parameters (robust and negative binomial regression). */
void sg_blocks_model_prior_draw(const sg_model *m, sg_workspace *ws, double *theta);
double sg_blocks_model_log_prior(const sg_model *m, sg_workspace *ws, const double *theta,
                                 double *grad);
/* A model's prior_draw and log_prior for models whose data struct begins with an sg_coef_prior
 * over all dim parameters (linear, logistic, Poisson and softmax regression): a pointer to a
 * struct is a pointer to its first member. */
void sg_coef_model_prior_draw(const sg_model *m, sg_workspace *ws, double *theta);
double sg_coef_model_log_prior(const sg_model *m, sg_workspace *ws, const double *theta,
                               double *grad);

/* Mini-batch rows are random reads from data that do not fit in cache, so models fetch the row
 * of the observation SG_PREFETCH_AHEAD places ahead in idx (the loop is otherwise bound by
 * memory latency). A row is `len` contiguous doubles. Models on packed rows (below) use
 * sg_rows_prefetch() instead. */
#define SG_PREFETCH_AHEAD 8
/* The helpers below sit in the innermost loops of many specialised copies (linear_regression.c),
 * where GCC's inlining limits at -O2 would otherwise leave some as calls. */
#if defined(__GNUC__)
#define SG_HOT_INLINE static inline __attribute__((always_inline))
#else
#define SG_HOT_INLINE static inline
#endif
SG_HOT_INLINE void sg_prefetch_row(const double *row, int len) {
#if defined(__GNUC__)
  __builtin_prefetch(row);
  __builtin_prefetch(row + len - 1);
#else
  (void) row;
  (void) len;
#endif
}

/* Packed rows (packed by rows_r.c, norms in rows.c; the regressions): observation i's `width`
 * values at rows + i * stride, stride = sg_rows_stride(width), a multiple of 8 doubles, the rows
 * aligned to 64 bytes. A mini-batch loop over idx[0..n-1] calls sg_rows_prefetch_start() before it and
 * sg_rows_prefetch() at each k: a row is fetched SG_ROWS_AHEAD places before it is used, enough
 * requests in flight to hide most of the memory latency; much further ahead the prefetches
 * evict rows not yet used (inst/design.md, "Measurements behind the defaults"). */
#define SG_ROWS_AHEAD 64
/* For log_lik_range bounds: the largest Euclidean norm of the first p values of the n rows at
 * rows + i * stride, and the largest |rows[i * stride + col]|; the Euclidean distance of x and y
 * and the norm of x + y (n values). */
double sg_rows_max_norm(const double *rows, int stride, int p, int n);
/* The largest |rows[i * stride + col]| times the Euclidean norm of the first p values of row i. */
double sg_rows_max_scaled_norm(const double *rows, int stride, int p, int col, int n);
double sg_rows_max_abs(const double *rows, int stride, int col, int n);
double sg_distance(const double *x, const double *y, int n);
double sg_sum_norm(const double *x, const double *y, int n);
static inline int sg_rows_stride(int width) {
  return (width + 7) / 8 * 8;
}
SG_HOT_INLINE void sg_rows_prefetch_start(const double *rows, int stride, int width,
                                          const int *idx, int n) {
  for (int k = 0; k < n && k < SG_ROWS_AHEAD; k++)
    sg_prefetch_row(rows + (sg_index) idx[k] * stride, width);
}
SG_HOT_INLINE void sg_rows_prefetch(const double *rows, int stride, int width, const int *idx,
                                    int k, int n) {
  if (k + SG_ROWS_AHEAD < n) sg_prefetch_row(rows + (sg_index) idx[k + SG_ROWS_AHEAD] * stride, width);
}

/* log(k!) for k < SG_LOG_FACTORIAL_TABLE (glm_family.h), in R_alloc memory. */
double *sg_log_factorial_table(void);

/* ------------------------------------------------------------------ built-in models */

/* Constructors, one per source file: from the data (the regressions: packed `rows` of their p
 * covariates, the response and (Poisson) the offset; the others one column of `xt`/`yt` per
 * observation, so an observation's values are contiguous) and the hyperparameters. They check what they
 * index with and return SG_OK, or SG_ERR_INPUT with the reason in st. Memory: R_alloc. */
int sg_linear_regression_init(sg_model *m, const double *rows, int p, int n, double noise_sd,
                              sg_coef_prior prior, sg_status *st);
/* Linear regression with unknown noise variance: sigma^2 ~ InvGamma(shape, scale), theta |
 * sigma^2 ~ N(m, sigma^2 diag(s^2)) (m = 0 and s = prior.sd without blocks; the blocks must be
 * normal: the conjugate prior); dim p + 1, the last parameter log sigma^2. */
int sg_linear_regression_nig_init(sg_model *m, const double *rows, int p, int n,
                                  sg_coef_prior prior, double shape, double scale, sg_status *st);
/* Linear regression with the g-prior (kind 1) or the Zellner-Siow prior (kind 2) of
 * BayesFactor's conventions: theta = (mu, beta_1..beta_{p-1}, log sigma^2), the intercept's
 * column first; g the g-prior's g (in units of sigma^2 M^-1) or the Zellner-Siow scale squared;
 * chol the (p-1) x (p-1) upper-triangular R with R'R = M; flat[6] the flat-top priors of mu and
 * log sigma^2 (lo, hi, t each). dim p + 1. */
int sg_linear_regression_zellner_init(sg_model *m, const double *rows, int p, int n, int kind,
                                      double g, const double *chol, const double *flat,
                                      sg_status *st);
/* Student-t errors with df degrees of freedom and scale sigma ~ N+(0, scale_sd^2), coefficients
 * by `prior`; dim p + 1, the last parameter log sigma. */
int sg_robust_regression_init(sg_model *m, const double *rows, int p, int n, double df,
                              sg_coef_prior prior, double scale_sd, sg_status *st);
/* `prior` covers the K p coefficients, class after class. */
int sg_softmax_regression_init(sg_model *m, const double *xt, const int *y, int p, int n, int K,
                               sg_coef_prior prior, sg_status *st);
/* rows: covariates, y (0 or 1); with `trials` nonzero, binomial counts: covariates, y successes
 * of m trials (whole numbers, 0 <= y <= m), the likelihood of each row that of its count,
 * log choose(m, y) included. */
int sg_logistic_regression_init(sg_model *m, const double *rows, int p, int n, int trials,
                                sg_coef_prior prior, sg_status *st);
/* SG_OK when the n rows (stride apart) hold whole numbers of successes at column s_col and of
 * trials at m_col with 0 <= successes <= trials, else SG_ERR_INPUT naming the observation
 * (logistic_regression.c). */
int sg_binomial_rows_check(const double *rows, int n, int stride, int s_col, int m_col,
                           sg_status *st);
/* rows: covariates, y (whole numbers >= 0), the offset (finite; added to the linear
 * predictor). */
int sg_poisson_regression_init(sg_model *m, const double *rows, int p, int n,
                               sg_coef_prior prior, sg_status *st);
/* SG_OK when every count of n count rows (p covariates, y, the offset; poisson_regression.c)
 * is a whole number >= 0 and every offset finite, else SG_ERR_INPUT naming the observation. */
int sg_count_rows_check(const double *rows, int p, int n, int stride, sg_status *st);
/* rows as Poisson regression's; dim p + 1, the last parameter t = log omega, omega the
 * overdispersion (Var y = mu + omega^2 mu^2) with a half-normal(omega_sd) prior. */
int sg_negative_binomial_regression_init(sg_model *m, const double *rows, int p, int n,
                                         sg_coef_prior prior, double omega_sd, sg_status *st);
/* Linear regression with q random effects per group, integrated out (linear_mixed.c): rows of
 * the p covariates, y, the q random-effect covariates z, and the group's sums over its earlier
 * rows (from sg_group_prefix); sigma the known noise sd or NaN for a parameter (log sigma,
 * after the p coefficients), tau the q known group sds or all NaN for parameters (log
 * tau_1..tau_q, next); cor the effects' correlation matrix: NULL for independent effects, a
 * known q x q matrix, or cor[0] NaN for q (q - 1) / 2 parameters (atanh of its canonical partial
 * correlations, last); `prior` covers them all. */
#define SG_MIXED_MAX_Q 8
/* The sums a row of that model carries (sg_group_prefix): sum z z' (its lower triangle),
 * sum z y and sum z x'. */
static inline int sg_mixed_stats_width(int p, int q) {
  return q * (q + 1) / 2 + q * (1 + p);
}
int sg_linear_mixed_init(sg_model *m, const double *rows, int p, int q, int n, double sigma,
                         const double *tau, const double *cor, sg_prior prior, sg_status *st);
/* For each of the n rows in order (covariates xt, p x n; response y; random-effect covariates
 * zt, q x n; group index group[i] in 0..G-1), writes to st (w x n, w = q (q + 1) / 2 + q + q p)
 * its group's sums over the rows before it: the lower triangle of sum z z' by rows, sum z y and
 * sum z x' (q x p by rows), starting from sums (w x G: those of rows before these), which it
 * then updates with the row. */
void sg_group_prefix(const double *xt, const double *y, const double *zt, const int *group,
                     int p, int q, int n, double *sums, double *st);
/* Logistic (0/1 or binomial counts), Poisson or negative binomial regression (family: SG_GLMM_*,
 * glm_family.h) with
 * random effects per group, integrated out group by group (glm_mixed.c). Its n_obs observations
 * are units: unit u is rows[start_u .. start_u + unit_rows[u] - 1] (start_u the sum of the units
 * before it), some rows of one group, the first context[u] of which (0 <= context[u] <
 * unit_rows[u]) are the group's earlier rows that the others are conditioned on. Rows: the p
 * covariates, y and the offset, and (SG_GLMM_BINOMIAL: y successes) the trials. The effects
 * (sg_glmm_effects): q of them, effect k multiplying design column zcol[k] (0-based), or 1 when
 * zcol[k] is -1 (an intercept); tau the q known group
 * sds, or tau[0] NaN for parameters (log tau_1..tau_q, after the coefficients and, negative
 * binomial, log omega); cor their correlation matrix as in sg_linear_mixed_init (NULL:
 * independent; cor[0] NaN: q (q - 1) / 2 parameters, last; else known, q x q). quad (3 x total,
 * column-major): the Gauss-Hermite rules for the weight e^(-x^2), a column per node: the fewest
 * rows of an integral its rule is for, the node x_k and its log weight (a rule's nodes together,
 * the rules by increasing rows, the first for 0); with q effects a rule's grid is the product of
 * q copies of it. `prior` covers all dim parameters. */
enum { SG_GLMM_LOGISTIC = 1, SG_GLMM_POISSON = 2, SG_GLMM_NEGATIVE_BINOMIAL = 3,
       SG_GLMM_BINOMIAL = 4 };
/* The most nodes of a grid of q effects (a rule's nodes to the power q). */
#define SG_GLMM_MAX_GRID 4096
typedef struct {
  int q;
  const int *zcol;
  const double *tau, *cor;
} sg_glmm_effects;
int sg_glm_mixed_init(sg_model *m, const double *rows, int p, int family, int n_units,
                      const int *unit_rows, const int *context, sg_glmm_effects effects,
                      const double *quad, int total, sg_prior prior, sg_status *st);
int sg_gaussian_mixture_init(sg_model *m, const double *yt, int d, int n, int K, double alpha,
                             double shape, double scale, double ratio, sg_status *st);
/* The most components with jump proposals: the sums over relabellings cost O(2^K K) per jump
 * proposal (gaussian_mixture_jump.c, gm_log_permanent). */
#define GM_JUMP_MAX_K 12
/* Probes of a mixture's jump proposals for the tests (hooks_r.c). has_jumps: 1 (and K, D) when
 * m is a mixture with jump proposals, else 0. clusters: the number C of clusters in aux (as
 * sg_jump_set filled it) and, unless share is NULL, their shares (C), means and variances (C x D,
 * column-major). jump_parts: at the points theta (dim x M), log Q (clusters, n_obs in the
 * target) and log P (the population part pop) summed over the relabellings, the population
 * factors (K + 4 K D) and M draws from P. */
int sg_gaussian_mixture_has_jumps(const sg_model *m, int *K, int *D);
int sg_gaussian_mixture_clusters(const sg_model *m, const double *aux, double *share, double *mean,
                                 double *var);
void sg_gaussian_mixture_jump_parts(const sg_model *m, sg_workspace *ws, const double *aux,
                                    const double *theta, int M, const sg_gaussian *pop,
                                    double n_obs, double *lq_c, double *lq_p, double *fac,
                                    double *draws);

#endif
