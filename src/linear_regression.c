/* Bayesian linear regression (paper Appendix B.1):
 *   y_i = a_i' theta + e_i,  e_i ~ N(0, sigma^2),
 * where a_i is the i-th row of the design matrix (intercept column included). Three priors,
 * three families in the registry (src/model_r.c), one file, because they share the data and the
 * residual loop that dominates their cost:
 *   "linear_regression"      known noise sigma = noise_sd, theta by its sg_coef_prior (the paper's
 *                            N(0, prior_sd^2), or normal and Student-t blocks); the parameters
 *                            are unconstrained, so there is no transform;
 *   "linear_regression_nig"  unknown variance with the conjugate normal-inverse-gamma prior
 *                            sigma^2 ~ InvGamma(shape a, scale b), theta | sigma^2 ~ N(m, sigma^2
 *                            diag(s^2)) (m = 0, s_j = prior_sd without blocks), sampled as
 *                            (theta, s = log sigma^2);
 *   "linear_regression_zellner"  unknown variance with Zellner's g-prior or the Zellner-Siow
 *                            prior and BayesFactor's conventions (below), sampled likewise.
 * The data are packed rows (rows_r.c): observation i's covariates a_i and then y_i, at
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
  const sg_index stride = d->stride;
  for (int j = 0; j < p; j++) {
    th[j] = theta[j];
    g[j] = 0.0;
  }
  double ss = 0.0;
  if (idx) sg_rows_prefetch_start(rows, (int) stride, p + 1, idx, n);
  for (int k = 0; k < n; k++) {
    sg_index i;
    if (idx) {
      sg_rows_prefetch(rows, (int) stride, p + 1, idx, k, n);
      i = idx[k];
    } else {
      i = (sg_index) start + k;
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
    sg_index i;
    if (idx) {
      sg_rows_prefetch(d->rows, d->stride, p + 1, idx, k, n);
      i = idx[k];
    } else {
      i = (sg_index) start + k;
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

/* The control variate's difference (model.h, grad_log_lik_diff) over the rows idx[0..n-1], each
 * read once: adds sum_i (c1 r_i(t1) - c2 r_i(t2)) a_i to grad[0..p-1], r_i(t) = y_i - a_i' t,
 * and leaves the two residual sums of squares in ss[0] and ss[1]. */
static inline __attribute__((always_inline)) void
lr_diff_p(const lr_data *d, const double *t1, const double *t2, const int *idx, int n, double c1,
          double c2, double *grad, double *ss, const int p) {
  double u[LR_MAX_FIXED_P], v[LR_MAX_FIXED_P], g[LR_MAX_FIXED_P];
  const double *rows = d->rows;
  const sg_index stride = d->stride;
  for (int j = 0; j < p; j++) {
    u[j] = t1[j];
    v[j] = t2[j];
    g[j] = 0.0;
  }
  double s1 = 0.0, s2 = 0.0;
  sg_rows_prefetch_start(rows, (int) stride, p + 1, idx, n);
  for (int k = 0; k < n; k++) {
    sg_rows_prefetch(rows, (int) stride, p + 1, idx, k, n);
    const double *x = rows + (sg_index) idx[k] * stride;
    double mu1 = 0.0, mu2 = 0.0;
    LR_UNROLL
    for (int j = 0; j < p; j++) {
      mu1 += x[j] * u[j];
      mu2 += x[j] * v[j];
    }
    const double r1 = x[p] - mu1, r2 = x[p] - mu2, w = c1 * r1 - c2 * r2;
    s1 += r1 * r1;
    s2 += r2 * r2;
    LR_UNROLL
    for (int j = 0; j < p; j++) g[j] += w * x[j];
  }
  for (int j = 0; j < p; j++) grad[j] += g[j];
  ss[0] = s1;
  ss[1] = s2;
}

#define LR_DIFF_CASE(P)                                                                            \
  case P:                                                                                          \
    lr_diff_p(d, t1, t2, idx, n, c1, c2, grad, ss, P);                                             \
    return;
static void lr_diff(const lr_data *d, const double *t1, const double *t2, const int *idx, int n,
                    double c1, double c2, double *grad, double *ss) {
  switch (d->p) {
    LR_DIFF_CASE(1) LR_DIFF_CASE(2) LR_DIFF_CASE(3) LR_DIFF_CASE(4) LR_DIFF_CASE(5) LR_DIFF_CASE(6)
    LR_DIFF_CASE(7) LR_DIFF_CASE(8)
  default: /* wider designs: a pass for each point */
    ss[0] = lr_sum_squares_any(d, t1, idx, 0, n, c1, grad);
    ss[1] = lr_sum_squares_any(d, t2, idx, 0, n, -c2, grad);
  }
}
#undef LR_DIFF_CASE

static void lr_grad_log_lik_diff(const sg_model *m, sg_workspace *ws, const double *theta,
                                 const double *a, const int *idx, int n, double scale,
                                 double *grad) {
  (void) ws;
  const lr_data *d = m->data;
  const double c = scale * d->inv_var;
  double ss[2];
  lr_diff(d, theta, a, idx, n, c, c, grad, ss);
}

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

  sg_model_define(m, p, n, d, sg_coef_model_prior_draw, sg_coef_model_log_prior);
  m->log_lik = lr_log_lik;
  m->grad_log_lik_diff = lr_grad_log_lik_diff;
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
  double g = Rf_rgamma(d->shape, 1.0 / d->scale);
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

/* Its difference at theta = (beta, s) and a = (beta_a, s_a), in one pass (lr_diff). */
static void nig_grad_log_lik_diff(const sg_model *m, sg_workspace *ws, const double *theta,
                                  const double *a, const int *idx, int n, double scale,
                                  double *grad) {
  (void) ws;
  const lr_data *d = m->data;
  const double e1 = exp(-theta[d->p]), e2 = exp(-a[d->p]);
  double ss[2];
  lr_diff(d, theta, a, idx, n, scale * e1, scale * e2, grad, ss);
  grad[d->p] += 0.5 * scale * (e1 * ss[0] - e2 * ss[1]);
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

  sg_model_define(m, p + 1, n, d, nig_prior_draw, nig_log_prior);
  m->log_lik = nig_log_lik;
  m->grad_log_lik_diff = nig_grad_log_lik_diff;
  return SG_OK;
}

/* ---------------------------------------------------------------- Zellner's g and Zellner-Siow */

/* The priors of the Bayes-factor literature (family "linear_regression_zellner"), with the
 * conventions of BayesFactor's regressionBF() and lmBF() (Liang et al. 2008, JASA 103, Section
 * 2; Rouder and Morey 2012, Multivariate Behavioral Research 47): theta = (mu, beta_1..
 * beta_k, s), the intercept mu first, on covariates centred at their means in the data the model
 * is built with, and s = log sigma^2;
 *   g-prior         beta | sigma^2 ~ N(0, g sigma^2 M^-1),                     M = X_c'X_c / n;
 *   Zellner-Siow    beta | sigma^2 ~ multivariate Cauchy(0, r^2 sigma^2 M^-1)
 *                   (the g-prior with g ~ InvGamma(1/2, r^2 / 2));
 * here g is Liang et al.'s g divided by n. The literature puts the improper p(mu, sigma^2) propto
 * 1 / sigma^2 on the rest, flat in (mu, s); the estimators need a proper prior, so mu and s each
 * get a flat-top density: constant on [lo, hi] and falling as a normal of sd t outside,
 * normalised by (hi - lo) + sqrt(2 pi) t. R (linear_regression_zellner()) puts the flat parts so
 * far out that the posterior has no measurable mass beyond them; the log evidence is then the
 * literature's, less log((hi - lo) + sqrt(2 pi) t) for each of mu and s, the same for every model
 * of the same response, so Bayes factors are the literature's. */
typedef struct {
  lr_data lr;         /* first: nig_log_lik reads the data through it */
  int kind, k;        /* SG_ZELLNER_G or SG_ZELLNER_SIOW; k = p - 1 slopes */
  const double *chol; /* R, k x k upper triangular (column-major) with R'R = M */
  double g;           /* g-prior: g; Zellner-Siow: r^2 */
  double norm;        /* the constant of log p */
  double flat[2][3];  /* mu, s: lo, hi, t of the flat-top densities */
} lz_data;

#define SG_ZELLNER_G 1
#define SG_ZELLNER_SIOW 2

/* log of the flat-top density of x without its constant (0 on [lo, hi]); add its gradient. */
static double flat_top_log(double x, const double *f, double *grad) {
  const double d = x < f[0] ? x - f[0] : x > f[1] ? x - f[1] : 0.0, v = f[2] * f[2];
  if (grad) *grad -= d / v;
  return -0.5 * d * d / v;
}

static double flat_top_log_norm(const double *f) {
  return log((f[1] - f[0]) + sqrt(2.0 * M_PI) * f[2]);
}

/* A draw: uniform on [lo, hi] with probability (hi - lo) / ((hi - lo) + sqrt(2 pi) t), else a
 * half-normal distance beyond one end or the other. */
static double flat_top_draw(const double *f) {
  const double w = f[1] - f[0], tail = sqrt(2.0 * M_PI) * f[2];
  if (unif_rand() * (w + tail) < w) return f[0] + w * unif_rand();
  const double d = fabs(norm_rand()) * f[2];
  return unif_rand() < 0.5 ? f[0] - d : f[1] + d;
}

/* v = R beta (R upper triangular); returns |v|^2 = beta' M beta. */
static double lz_quad(const lz_data *d, const double *beta, double *v) {
  const int k = d->k;
  double q = 0.0;
  for (int i = 0; i < k; i++) {
    double s = 0.0;
    for (int j = i; j < k; j++) s += d->chol[i + (size_t) j * k] * beta[j];
    v[i] = s;
    q += s * s;
  }
  return q;
}

static void lz_prior_draw(const sg_model *m, sg_workspace *ws, double *theta) {
  const lz_data *d = m->data;
  const int k = d->k;
  theta[0] = flat_top_draw(d->flat[0]);
  const double s = flat_top_draw(d->flat[1]);
  theta[k + 1] = s;
  /* g ~ InvGamma(1/2, r^2 / 2): (r^2 / 2) / Gamma(1/2, 1); rgamma can return 0 */
  double g = d->g;
  if (d->kind == SG_ZELLNER_SIOW) {
    const double x = Rf_rgamma(0.5, 1.0);
    g = 0.5 * d->g / (x > DBL_MIN ? x : DBL_MIN);
  }
  /* beta = sqrt(g sigma^2) R^-1 z, so that beta' M beta = g sigma^2 z'z */
  double *z = ws->scratch;
  const double sd = sqrt(g * exp(s));
  for (int i = 0; i < k; i++) z[i] = sd * norm_rand();
  for (int i = k - 1; i >= 0; i--) {
    double r = z[i];
    for (int j = i + 1; j < k; j++) r -= d->chol[i + (size_t) j * k] * theta[1 + j];
    theta[1 + i] = r / d->chol[i + (size_t) i * k];
  }
}

/* With q = beta' M beta, u = e^-s q:
 *   g-prior       log p(beta | s) = -k/2 log(2 pi g) + log det(M) / 2 - k s / 2 - u / (2 g),
 *   Zellner-Siow  log p(beta | s) = lgamma((k + 1) / 2) - lgamma(1/2) - k/2 log(pi) - k log r
 *                                   + log det(M) / 2 - k s / 2 - (k + 1)/2 log(1 + u / r^2)
 * (the constants in d->norm, with the flat-tops'); d/d beta = -c e^-s M beta and
 * d/ds = -k/2 + c u / 2, c = 1 / g or (k + 1) / (r^2 + u). */
static double lz_log_prior(const sg_model *m, sg_workspace *ws, const double *theta, double *grad) {
  const lz_data *d = m->data;
  const int k = d->k;
  const double s = theta[k + 1], e = exp(-s);
  double lp = d->norm + flat_top_log(theta[0], d->flat[0], grad) +
              flat_top_log(s, d->flat[1], grad ? grad + k + 1 : NULL) - 0.5 * k * s;
  if (k == 0) return lp;
  double *v = ws->scratch;
  const double u = e * lz_quad(d, theta + 1, v);
  double c;
  if (d->kind == SG_ZELLNER_G) {
    c = 1.0 / d->g;
    lp -= 0.5 * u * c;
  } else {
    c = (k + 1.0) / (d->g + u);
    lp -= 0.5 * (k + 1.0) * log1p(u / d->g);
  }
  if (grad) {
    grad[k + 1] += -0.5 * k + 0.5 * c * u;
    /* M beta = R'v */
    for (int j = 0; j < k; j++) {
      double mb = 0.0;
      for (int i = 0; i <= j; i++) mb += d->chol[i + (size_t) j * k] * v[i];
      grad[1 + j] -= c * e * mb;
    }
  }
  return lp;
}

int sg_linear_regression_zellner_init(sg_model *m, const double *rows, int p, int n, int kind,
                                      double g, const double *chol, const double *flat,
                                      sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  if (p > INT_MAX - 1) return sg_fail(st, SG_ERR_INPUT, "`model` has too many design columns.");
  if (kind != SG_ZELLNER_G && kind != SG_ZELLNER_SIOW)
    return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: unknown Zellner prior.");
  if (!(g > 0) || !R_FINITE(g))
    return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: its g or scale must be positive and finite.");
  const int k = p - 1;
  double log_det = 0.0;
  for (int i = 0; i < k; i++) {
    const double r = chol[i + (size_t) i * k];
    if (!(r > 0) || !R_FINITE(r))
      return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: its Gram factor must have a positive diagonal.");
    log_det += 2.0 * log(r);
  }
  for (int i = 0; i < 2; i++) {
    const double *f = flat + 3 * i;
    if (!R_FINITE(f[0]) || !R_FINITE(f[1]) || !(f[1] > f[0]) || !(f[2] > 0) || !R_FINITE(f[2]))
      return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: its flat-top priors must have lo < hi and t > 0.");
  }

  lz_data *d = (lz_data *) R_alloc(1, sizeof(lz_data));
  lr_data *lr = &d->lr;
  lr->rows = rows;
  lr->p = p;
  lr->stride = sg_rows_stride(p + 1);
  lr->inv_var = lr->lik_norm = lr->shape = lr->scale = lr->prior_norm = NA_REAL;
  lr->max_norm = lr->max_y = NA_REAL;
  lr->prior.sd = NA_REAL;
  lr->prior.blocks = NULL;
  lr->prior_mean = lr->prior_scale = NULL;
  d->kind = kind;
  d->k = k;
  d->chol = chol;
  d->g = g;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) d->flat[i][j] = flat[3 * i + j];
  d->norm = -flat_top_log_norm(d->flat[0]) - flat_top_log_norm(d->flat[1]) + 0.5 * log_det;
  if (kind == SG_ZELLNER_G) d->norm -= 0.5 * k * log(2.0 * M_PI * g);
  else d->norm += lgammafn(0.5 * (k + 1.0)) - lgammafn(0.5) - 0.5 * k * log(M_PI) - 0.5 * k * log(g);

  sg_model_define(m, p + 1, n, d, lz_prior_draw, lz_log_prior);
  m->scratch_bytes = (size_t) (k > 0 ? k : 1) * sizeof(double);
  m->log_lik = nig_log_lik;
  m->grad_log_lik_diff = nig_grad_log_lik_diff;
  return SG_OK;
}
