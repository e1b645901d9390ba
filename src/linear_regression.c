/* Bayesian linear regression (paper Appendix B.1):
 *   y_i = a_i' theta + e_i,  e_i ~ N(0, sigma^2),
 * where a_i is the i-th row of the design matrix (intercept column included). Two priors, two
 * families in the registry (src/model.c), one file, because they share the data and the residual
 * loop that dominates their cost:
 *   "linear_regression"      known noise sigma = noise_sd, theta by its sg_coef_prior (the paper's
 *                            N(0, prior_sd^2), or normal and Student-t blocks); the parameters
 *                            are unconstrained, so there is no transform;
 *   "linear_regression_nig"  unknown variance with the conjugate normal-inverse-gamma prior
 *                            sigma^2 ~ InvGamma(shape a, scale b), theta | sigma^2 ~ N(m, sigma^2
 *                            diag(s^2)) (m = 0, s_j = prior_sd without blocks), sampled as
 *                            (theta, s = log sigma^2).
 * The data are packed rows (rows.c): observation i's covariates a_i and then y_i, at
 * rows + i * stride, so a mini-batch reads one cache line per observation up to p = 7. */
#include "model.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <Rmath.h>

#define LR_LOG_2PI 1.837877066409345483560659472811
/* design widths with a loop of their own (lr_sum_squares) */
#define LR_MAX_FIXED_P 8
/* Fully unroll the loops over j < p (p fixed, at most 8) so th[] and g[] live in registers: at
 * -O2 GCC keeps them in memory, and each observation's g[j] += ... then waits on the previous
 * observation's store. */
#if defined(__GNUC__) && !defined(__clang__)
#define LR_UNROLL _Pragma("GCC unroll 8")
#elif defined(__clang__)
#define LR_UNROLL _Pragma("clang loop unroll(full)")
#else
#define LR_UNROLL
#endif

typedef struct {
  sg_coef_prior prior; /* first: sg_coef_model_log_prior() reads it */
  const double *prior_mean, *prior_scale; /* unknown variance with blocks: m_j and s_j */
  const double *rows; /* observation i at rows + i * stride: a_i (p values), y_i */
  int p, stride;
  double inv_var;       /* known noise: 1 / noise_sd^2 */
  double lik_norm;      /* known noise: -log(2 pi noise_sd^2) / 2 */
  double shape, scale;  /* unknown variance: sigma^2 ~ InvGamma(shape, scale) */
  double prior_norm;    /* unknown variance: a log b - lgamma(a) - sum_j log(2 pi s_j^2) / 2 */
  double max_norm, max_y; /* known noise: max_i |a_i|, max_i |y_i| (lr_log_lik_range) */
} lr_data;

/* The residual sum of squares over the observations idx[0..n-1] (or start..start+n-1); with a
 * gradient, add c * sum_i r_i a_i to grad[0..p-1]. This loop is most of the run time of every
 * estimator on this model, so theta and the gradient sum stay in local arrays (registers once
 * the loop is specialised to a fixed p below) and grad is written once per call, not once per
 * observation; mini-batch rows are prefetched SG_ROWS_AHEAD places ahead (model.h). */
static inline __attribute__((always_inline)) double
lr_sum_squares_p(const lr_data *d, const double *theta, const int *idx, int start, int n, double c,
                 double *grad, const int p) {
  double th[LR_MAX_FIXED_P], g[LR_MAX_FIXED_P];
  const double *rows = d->rows;
  const R_xlen_t stride = d->stride;
  for (int j = 0; j < p; j++) {
    th[j] = theta[j];
    g[j] = 0.0;
  }
  double ss = 0.0;
  if (idx) sg_rows_prefetch_start(rows, (int) stride, p + 1, idx, n);
  for (int k = 0; k < n; k++) {
    R_xlen_t i;
    if (idx) {
      sg_rows_prefetch(rows, (int) stride, p + 1, idx, k, n);
      i = idx[k];
    } else {
      i = (R_xlen_t) start + k;
    }
    const double *x = rows + i * stride;
    double mu = 0.0;
    LR_UNROLL
    for (int j = 0; j < p; j++) mu += x[j] * th[j];
    const double r = x[p] - mu;
    ss += r * r;
    if (grad) {
      LR_UNROLL
      for (int j = 0; j < p; j++) g[j] += r * x[j];
    }
  }
  if (grad)
    for (int j = 0; j < p; j++) grad[j] += c * g[j];
  return ss;
}

/* The same for any p (no local copies). */
static double lr_sum_squares_any(const lr_data *d, const double *theta, const int *idx, int start,
                                 int n, double c, double *grad) {
  const int p = d->p;
  double ss = 0.0;
  for (int k = 0; k < n; k++) {
    R_xlen_t i;
    if (idx) {
      sg_rows_prefetch(d->rows, d->stride, p + 1, idx, k, n);
      i = idx[k];
    } else {
      i = (R_xlen_t) start + k;
    }
    const double *x = d->rows + i * d->stride;
    double mu = 0.0;
    for (int j = 0; j < p; j++) mu += x[j] * theta[j];
    const double r = x[p] - mu, cr = c * r;
    ss += r * r;
    if (grad)
      for (int j = 0; j < p; j++) grad[j] += cr * x[j];
  }
  return ss;
}

/* Dispatch to a loop specialised to p (the compiler unrolls it and keeps th and g in registers),
 * and to separate copies for mini-batches and ranges, with and without a gradient. */
#define LR_CASE(P)                                                                                 \
  case P:                                                                                          \
    if (idx) return grad ? lr_sum_squares_p(d, theta, idx, 0, n, c, grad, P)                       \
                         : lr_sum_squares_p(d, theta, idx, 0, n, c, NULL, P);                      \
    return grad ? lr_sum_squares_p(d, theta, NULL, start, n, c, grad, P)                           \
                : lr_sum_squares_p(d, theta, NULL, start, n, c, NULL, P);
static double lr_sum_squares(const lr_data *d, const double *theta, const int *idx, int start,
                             int n, double c, double *grad) {
  switch (d->p) {
    LR_CASE(1) LR_CASE(2) LR_CASE(3) LR_CASE(4) LR_CASE(5) LR_CASE(6) LR_CASE(7) LR_CASE(8)
  default:
    return lr_sum_squares_any(d, theta, idx, start, n, c, grad);
  }
}
#undef LR_CASE

static double lr_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                         int start, int n, double scale, double *grad) {
  (void) ws;
  const lr_data *d = m->data;
  double ss = lr_sum_squares(d, theta, idx, start, n, scale * d->inv_var, grad);
  return n * d->lik_norm - 0.5 * d->inv_var * ss;
}

/* With delta = theta' - theta, log p(y_i | theta') - log p(y_i | theta) = a_i' delta (2 y_i -
 * a_i' (theta + theta')) / (2 noise_sd^2), at most |a_i| |delta| (2 |y_i| + |a_i| |theta +
 * theta'|) / (2 noise_sd^2) in size. Loose far from the data's scale: the confidence sampler then
 * reads most of the data (Bardenet, Doucet & Holmes 2014, Section 5, tighten it with a Taylor
 * control variate, not done here). */
static double lr_log_lik_range(const sg_model *m, const double *theta, const double *theta_new) {
  lr_data *d = (lr_data *) m->data;
  if (!theta) {
    d->max_norm = sg_rows_max_norm(d->rows, d->stride, d->p, m->n_obs);
    d->max_y = sg_rows_max_abs(d->rows, d->stride, d->p, m->n_obs);
    return 0.0;
  }
  return 0.5 * d->inv_var * d->max_norm * sg_distance(theta, theta_new, d->p) *
         (2.0 * d->max_y + d->max_norm * sg_sum_norm(theta, theta_new, d->p));
}

int sg_linear_regression_init(sg_model *m, const double *rows, int p, int n, double noise_sd,
                              sg_coef_prior prior, sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  if (!(noise_sd > 0) || !R_FINITE(noise_sd))
    return sg_fail(st, SG_ERR_INPUT, "`noise_sd` must be positive and finite.");
  if (sg_coef_prior_check(&prior, p, st)) return st->code;

  lr_data *d = (lr_data *) R_alloc(1, sizeof(lr_data));
  d->rows = rows;
  d->p = p;
  d->stride = sg_rows_stride(p + 1);
  d->inv_var = 1.0 / (noise_sd * noise_sd);
  d->lik_norm = -0.5 * log(2.0 * M_PI * noise_sd * noise_sd);
  d->prior = prior;
  d->prior_mean = d->prior_scale = NULL;
  d->shape = d->scale = d->prior_norm = NA_REAL; /* the unknown-variance fields are not used */
  d->max_norm = d->max_y = NA_REAL;

  m->dim = p;
  m->n_obs = n;
  m->data = d;
  m->prior_draw = sg_coef_model_prior_draw;
  m->log_prior = sg_coef_model_log_prior;
  m->log_lik = lr_log_lik;
  m->log_lik_range = lr_log_lik_range;
  return SG_OK;
}

/* ---------------------------------------------------------------- unknown noise variance */

/* theta = (beta_1..beta_p, s), s = log sigma^2. The prior density of (beta, s) is the
 * normal-inverse-gamma density of (beta, sigma^2) times d sigma^2 / ds = e^s:
 *   log p = a log b - lgamma(a) - (a + 1) s - b e^-s + s               (log-InvGamma + Jacobian)
 *         - sum_j log(2 pi s_j^2) / 2 - p s / 2 - e^-s sum_j (beta_j - m_j)^2 / (2 s_j^2)
 *         = prior_norm - (a + p/2) s - e^-s (b + sum_j (beta_j - m_j)^2 / (2 s_j^2))
 * (the conjugate prior of Murphy, Machine Learning: A Probabilistic Perspective, 2012, Section
 * 7.6.3, with prior mean m and covariance sigma^2 diag(s^2); the log-variance transform of
 * gaussian_mixture.c). Without blocks m = 0 and s_j = prior_sd, with the code of the paper's
 * model. */
static void nig_prior_draw(const sg_model *m, sg_workspace *ws, double *theta) {
  (void) ws;
  const lr_data *d = m->data;
  /* 1 / sigma^2 ~ Gamma(shape a, rate b); rgamma can return 0 for a << 1, whose log is -Inf */
  double g = rgamma(d->shape, 1.0 / d->scale);
  double s = -log(g > DBL_MIN ? g : DBL_MIN);
  if (d->prior_mean) {
    const double sigma = exp(0.5 * s);
    for (int j = 0; j < d->p; j++) theta[j] = d->prior_mean[j] + d->prior_scale[j] * sigma * norm_rand();
  } else {
    const double sd = d->prior.sd * exp(0.5 * s);
    for (int j = 0; j < d->p; j++) theta[j] = sd * norm_rand();
  }
  theta[d->p] = s;
}

static double nig_log_prior(const sg_model *m, sg_workspace *ws, const double *theta,
                            double *grad) {
  (void) ws;
  const lr_data *d = m->data;
  const int p = d->p;
  const double s = theta[p], e = exp(-s);
  double bq;
  if (d->prior_mean) {
    double q = 0.0;
    for (int j = 0; j < p; j++) {
      const double z = (theta[j] - d->prior_mean[j]) / d->prior_scale[j];
      q += z * z;
      if (grad) grad[j] -= e * z / d->prior_scale[j];
    }
    bq = d->scale + 0.5 * q;
  } else {
    const double t2 = d->prior.sd * d->prior.sd;
    double q = 0.0;
    for (int j = 0; j < p; j++) {
      q += theta[j] * theta[j];
      if (grad) grad[j] -= e * theta[j] / t2;
    }
    bq = d->scale + 0.5 * q / t2;
  }
  if (grad) grad[p] += -(d->shape + 0.5 * p) + e * bq;
  return d->prior_norm - (d->shape + 0.5 * p) * s - e * bq;
}

/* sum_i log N(y_i; a_i' beta, e^s) = -n (log(2 pi) + s) / 2 - e^-s RSS / 2, whose derivative in
 * s is (e^-s RSS - n) / 2. */
static double nig_log_lik(const sg_model *m, sg_workspace *ws, const double *theta,
                          const int *idx, int start, int n, double scale, double *grad) {
  (void) ws;
  const lr_data *d = m->data;
  const double s = theta[d->p], e = exp(-s);
  double ss = lr_sum_squares(d, theta, idx, start, n, scale * e, grad);
  if (grad) grad[d->p] += 0.5 * scale * (e * ss - n);
  return -0.5 * n * (LR_LOG_2PI + s) - 0.5 * e * ss;
}

int sg_linear_regression_nig_init(sg_model *m, const double *rows, int p, int n,
                                  sg_coef_prior prior, double shape, double scale, sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  if (p > INT_MAX - 1) return sg_fail(st, SG_ERR_INPUT, "`model` has too many design columns.");
  const double h[] = {shape, scale};
  const char *names[] = {"variance_shape", "variance_scale"};
  for (int i = 0; i < 2; i++)
    if (!(h[i] > 0) || !R_FINITE(h[i]))
      return sg_fail(st, SG_ERR_INPUT, "`%s` must be positive and finite.", names[i]);
  if (sg_coef_prior_check(&prior, p, st)) return st->code;

  lr_data *d = (lr_data *) R_alloc(1, sizeof(lr_data));
  d->rows = rows;
  d->p = p;
  d->stride = sg_rows_stride(p + 1);
  d->inv_var = d->lik_norm = NA_REAL; /* the known-noise fields are not used */
  d->prior = prior;
  d->prior_mean = d->prior_scale = NULL;
  d->shape = shape;
  d->scale = scale;
  d->prior_norm = shape * log(scale) - lgammafn(shape);
  if (prior.blocks) {
    /* conjugate: normal blocks only; each coefficient's mean and scale (in units of sigma) */
    double *mean = (double *) R_alloc(p, sizeof(double)), *sd = (double *) R_alloc(p, sizeof(double));
    for (int b = 0; b < prior.blocks->n_blocks; b++) {
      const sg_prior_block *k = &prior.blocks->block[b];
      if (k->kind != SG_PRIOR_NORMAL)
        return sg_fail(st, SG_ERR_INPUT, "with an unknown noise variance the coefficients' prior must be normal.");
      for (int j = k->start; j < k->start + k->n; j++) {
        mean[j] = k->location;
        sd[j] = k->scale;
        d->prior_norm -= 0.5 * log(2.0 * M_PI * k->scale * k->scale);
      }
    }
    d->prior_mean = mean;
    d->prior_scale = sd;
  } else {
    d->prior_norm -= 0.5 * p * log(2.0 * M_PI * prior.sd * prior.sd);
  }

  m->dim = p + 1;
  m->n_obs = n;
  m->data = d;
  m->prior_draw = nig_prior_draw;
  m->log_prior = nig_log_prior;
  m->log_lik = nig_log_lik;
  return SG_OK;
}
