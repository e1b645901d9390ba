/* Bayesian logistic regression for a binary response:
 *   p(y_i = 1 | a_i, theta) = plogis(a_i' theta),  theta by its sg_coef_prior (model.h),
 * where a_i is the i-th row of the design (intercept column included). The parameters are
 * unconstrained, so there is no transform. The data are packed rows (rows_r.c, model.h): a_i then
 * y_i, one cache line per observation up to p = 7.
 *
 * With trials, each row is a binomial count instead: y_i successes of m_i trials,
 *   log p(y_i | m_i, theta) = y_i log plogis(eta_i) + (m_i - y_i) log plogis(-eta_i)
 *                             + log choose(m_i, y_i),
 * the likelihood of the count (glm's and lme4's convention), which is that of its m_i Bernoulli
 * trials plus the constant log choose(m_i, y_i); a row costs one evaluation however many trials
 * it has. Its rows are a_i, y_i, m_i; the 0/1 rows keep their layout and their own loops. */
#include "glm_family.h"
#include <math.h>

typedef struct {
  sg_coef_prior prior; /* first: sg_coef_model_log_prior() reads it */
  const double *rows; /* observation i at rows + i * stride: a_i, y_i (0 or 1) [, m_i] */
  int p, stride;
  double max_norm; /* max_i |a_i| (m_i |a_i| with trials; lg_log_lik_range); NaN until asked for */
  const double *log_factorial; /* with trials (sg_log_choose) */
} lg_data;

/* log p(y_i | a_i, theta) (sg_logit_term, glm_family.h); with a gradient, add scale times its
 * derivative in eta times a_i. */
static inline double lg_obs(const lg_data *d, const double *theta, sg_index i, double scale,
                            double *grad) {
  const double *x = d->rows + i * d->stride;
  double eta = 0.0;
  for (int j = 0; j < d->p; j++) eta += x[j] * theta[j];
  double deta;
  const double lp = sg_logit_term(x[d->p], eta, grad ? &deta : NULL);
  if (grad) {
    const double c = scale * deta;
    for (int j = 0; j < d->p; j++) grad[j] += c * x[j];
  }
  return lp;
}

static double lg_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                         int start, int n, double scale, double *grad) {
  (void) ws;
  const lg_data *d = m->data;
  double ll = 0.0;
  if (idx) {
    sg_rows_prefetch_start(d->rows, d->stride, d->p + 1, idx, n);
    for (int k = 0; k < n; k++) {
      sg_rows_prefetch(d->rows, d->stride, d->p + 1, idx, k, n);
      ll += lg_obs(d, theta, idx[k], scale, grad);
    }
  } else {
    for (int k = 0; k < n; k++) ll += lg_obs(d, theta, (sg_index) start + k, scale, grad);
  }
  return ll;
}

/* log p(y_i | m_i, a_i, theta) of a binomial row (sg_binomial_term, sg_log_choose); with a
 * gradient, add scale times its derivative in eta times a_i. */
static inline double lg_binomial_obs(const lg_data *d, const double *theta, sg_index i,
                                     double scale, double *grad) {
  const double *x = d->rows + i * d->stride;
  double eta = 0.0;
  for (int j = 0; j < d->p; j++) eta += x[j] * theta[j];
  const double s = x[d->p], m = x[d->p + 1];
  double deta;
  const double lp = sg_binomial_term(s, m, eta, grad ? &deta : NULL) +
                    sg_log_choose(d->log_factorial, m, s);
  if (grad) {
    const double c = scale * deta;
    for (int j = 0; j < d->p; j++) grad[j] += c * x[j];
  }
  return lp;
}

static double lg_binomial_log_lik(const sg_model *m, sg_workspace *ws, const double *theta,
                                  const int *idx, int start, int n, double scale, double *grad) {
  (void) ws;
  const lg_data *d = m->data;
  double ll = 0.0;
  if (idx) {
    sg_rows_prefetch_start(d->rows, d->stride, d->p + 2, idx, n);
    for (int k = 0; k < n; k++) {
      sg_rows_prefetch(d->rows, d->stride, d->p + 2, idx, k, n);
      ll += lg_binomial_obs(d, theta, idx[k], scale, grad);
    }
  } else {
    for (int k = 0; k < n; k++) ll += lg_binomial_obs(d, theta, (sg_index) start + k, scale, grad);
  }
  return ll;
}

/* log plogis is 1-Lipschitz, so |log p(y_i | theta') - log p(y_i | theta)| <= |a_i' (theta' -
 * theta)| <= |a_i| |theta' - theta| (Bardenet, Doucet & Holmes 2014 use the same bound). */
static double lg_log_lik_range(const sg_model *m, const double *theta, const double *theta_new) {
  lg_data *d = (lg_data *) m->data;
  if (!theta) {
    d->max_norm = sg_rows_max_norm(d->rows, d->stride, d->p, m->n_obs);
    return 0.0;
  }
  return d->max_norm * sg_distance(theta, theta_new, d->p);
}

/* A binomial row's log-likelihood has |d/d eta| = |y_i - m_i plogis(eta)| <= m_i: the bound
 * above times the trials (the constant log choose(m_i, y_i) cancels in the difference). */
static double lg_binomial_log_lik_range(const sg_model *m, const double *theta,
                                        const double *theta_new) {
  lg_data *d = (lg_data *) m->data;
  if (!theta) {
    d->max_norm = sg_rows_max_scaled_norm(d->rows, d->stride, d->p, d->p + 1, m->n_obs);
    return 0.0;
  }
  return d->max_norm * sg_distance(theta, theta_new, d->p);
}

/* The Jaakkola-Jordan bound (Jaakkola & Jordan 2000; Maclaurin & Adams 2014, Section 4) for
 * Firefly Monte Carlo (model.h, flymc.c): with s = (2 y_i - 1) a_i' theta and a tangent point
 * xi >= 0,
 *   log plogis(s) >= log plogis(xi) + (s - xi) / 2 - g(xi) (s^2 - xi^2),
 *   g(xi) = tanh(xi / 2) / (4 xi)  (g(0) = 1/8),
 * tight at s = +/- xi; quadratic in theta since s^2 = (a_i' theta)^2. The tangent point is
 * xi_i = |a_i' t| at the anchor t (MAP tuning, Maclaurin & Adams Section 3.1), so that
 *   log B_i = c_i + s / 2 - g(xi_i) (a_i' theta)^2,  c_i = log plogis(xi_i) - xi_i / 2 + g xi_i^2.
 * jj_terms returns c_i and sets *g; jj_obs the gap log plogis(s) - log B_i >= 0. */
static inline double jj_terms(const lg_data *d, const double *x, const double *t, double *g) {
  double xi = 0.0;
  for (int j = 0; j < d->p; j++) xi += x[j] * t[j];
  xi = fabs(xi);
  /* tanh(u) / u = 1 - u^2 / 3 + O(u^4): below 1e-4 the series is exact to double precision */
  *g = xi < 1e-4 ? 0.125 - xi * xi / 96.0 : tanh(0.5 * xi) / (4.0 * xi);
  return -log1p(exp(-xi)) - 0.5 * xi + *g * xi * xi;
}

static inline double jj_gap(const lg_data *d, const double *t, const double *theta, sg_index i) {
  const double *x = d->rows + i * d->stride;
  double g, c = jj_terms(d, x, t, &g);
  double eta = 0.0;
  for (int j = 0; j < d->p; j++) eta += x[j] * theta[j];
  double s = x[d->p] != 0.0 ? eta : -eta;
  double lp = -(log1p(exp(-fabs(s))) + (s < 0.0 ? -s : 0.0)); /* log plogis(s), as lg_obs */
  return lp - (c + 0.5 * s - g * eta * eta);
}

static void lg_lik_bound_gap(const sg_model *m, const double *t, const double *theta,
                             const int *idx, int start, int n, double *gap) {
  const lg_data *d = m->data;
  if (idx) {
    sg_rows_prefetch_start(d->rows, d->stride, d->p + 1, idx, n);
    for (int k = 0; k < n; k++) {
      sg_rows_prefetch(d->rows, d->stride, d->p + 1, idx, k, n);
      gap[k] = jj_gap(d, t, theta, idx[k]);
    }
  } else {
    for (int k = 0; k < n; k++) gap[k] = jj_gap(d, t, theta, (sg_index) start + k);
  }
}

/* Sum of the bounds: A += sum g_i a_i a_i' (lower triangle, mirrored at the end: A stays
 * symmetric), b += sum (2 y_i - 1) a_i / 2, c += sum c_i. */
static void lg_lik_bound_collapse(const sg_model *m, const double *t, const int *idx, int start,
                                  int n, double *A, double *b, double *c) {
  const lg_data *d = m->data;
  const int p = d->p;
  double csum = 0.0;
  for (int k = 0; k < n; k++) {
    const double *x = d->rows + (idx ? (sg_index) idx[k] : (sg_index) start + k) * d->stride;
    double g;
    csum += jj_terms(d, x, t, &g);
    const double half = x[p] != 0.0 ? 0.5 : -0.5;
    for (int l = 0; l < p; l++) {
      const double gx = g * x[l];
      b[l] += half * x[l];
      for (int j = l; j < p; j++) A[j + (sg_index) l * p] += gx * x[j];
    }
  }
  *c += csum;
  for (int l = 0; l < p; l++)
    for (int j = l + 1; j < p; j++) A[l + (sg_index) j * p] = A[j + (sg_index) l * p];
}

/* The bound for a binomial row: each of its m_i trials is a Bernoulli term bounded as above
 * with the same tangent point (the bound of log plogis(x) depends on x only through x and x^2,
 * and is tight at x = +/- xi), so with eta = a_i' theta
 *   log B_i = m_i c_i + (y_i - m_i / 2) eta - m_i g(xi_i) eta^2 + log choose(m_i, y_i),
 * tight at the anchor as before; a row of no trials has B_i = 1 = its likelihood. */
static inline double jj_binomial_gap(const lg_data *d, const double *t, const double *theta,
                                     sg_index i) {
  const double *x = d->rows + i * d->stride;
  double g, c = jj_terms(d, x, t, &g);
  double eta = 0.0;
  for (int j = 0; j < d->p; j++) eta += x[j] * theta[j];
  const double s = x[d->p], m = x[d->p + 1];
  /* both sides without log choose(m_i, y_i), which they share */
  return sg_binomial_term(s, m, eta, NULL) - (m * c + (s - 0.5 * m) * eta - m * g * eta * eta);
}

static void lg_binomial_bound_gap(const sg_model *m, const double *t, const double *theta,
                                  const int *idx, int start, int n, double *gap) {
  const lg_data *d = m->data;
  if (idx) {
    sg_rows_prefetch_start(d->rows, d->stride, d->p + 2, idx, n);
    for (int k = 0; k < n; k++) {
      sg_rows_prefetch(d->rows, d->stride, d->p + 2, idx, k, n);
      gap[k] = jj_binomial_gap(d, t, theta, idx[k]);
    }
  } else {
    for (int k = 0; k < n; k++) gap[k] = jj_binomial_gap(d, t, theta, (sg_index) start + k);
  }
}

static void lg_binomial_bound_collapse(const sg_model *m, const double *t, const int *idx,
                                       int start, int n, double *A, double *b, double *c) {
  const lg_data *d = m->data;
  const int p = d->p;
  double csum = 0.0;
  for (int k = 0; k < n; k++) {
    const double *x = d->rows + (idx ? (sg_index) idx[k] : (sg_index) start + k) * d->stride;
    const double s = x[p], mt = x[p + 1];
    double g;
    csum += mt * jj_terms(d, x, t, &g) + sg_log_choose(d->log_factorial, mt, s);
    const double lin = s - 0.5 * mt, mg = mt * g;
    for (int l = 0; l < p; l++) {
      const double gx = mg * x[l];
      b[l] += lin * x[l];
      for (int j = l; j < p; j++) A[j + (sg_index) l * p] += gx * x[j];
    }
  }
  *c += csum;
  for (int l = 0; l < p; l++)
    for (int j = l + 1; j < p; j++) A[l + (sg_index) j * p] = A[j + (sg_index) l * p];
}

int sg_binomial_rows_check(const double *rows, int n, int stride, int s_col, int m_col,
                           sg_status *st) {
  for (sg_index i = 0; i < n; i++) {
    const double s = rows[i * stride + s_col], m = rows[i * stride + m_col];
    /* whole numbers below 2^53, where every whole number is a double; sg_log_choose indexes
     * its table with them */
    if (!(s >= 0.0 && s <= m && m < 9007199254740992.0) || s != floor(s) || m != floor(m))
      return sg_fail(st, SG_ERR_INPUT,
                     "`model` data are corrupt: the successes and trials are not whole numbers "
                     "with 0 <= successes <= trials at observation %d.", (int) i + 1);
  }
  return SG_OK;
}

int sg_logistic_regression_init(sg_model *m, const double *rows, int p, int n, int trials,
                                sg_coef_prior prior, sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  const int stride = sg_rows_stride(p + 1 + (trials != 0));
  /* lg_obs reads any non-zero y as a success: check that the responses are 0 or 1 (one pass,
   * cheap next to any estimator's work), so a corrupt object is an error, not another model;
   * binomial rows, that they are counts the log-factorial table can index */
  if (trials) {
    if (sg_binomial_rows_check(rows, n, stride, p, p + 1, st)) return st->code;
  } else {
    for (sg_index i = 0; i < n; i++)
      if (!(rows[i * stride + p] == 0.0 || rows[i * stride + p] == 1.0))
        return sg_fail(st, SG_ERR_INPUT,
                       "`model` data are corrupt: the response is not 0 or 1 at observation %d.",
                       (int) i + 1);
  }
  if (sg_coef_prior_check(&prior, p, st)) return st->code;

  lg_data *d = (lg_data *) R_alloc(1, sizeof(lg_data));
  d->rows = rows;
  d->p = p;
  d->stride = stride;
  d->prior = prior;
  d->max_norm = NA_REAL;
  d->log_factorial = trials ? sg_log_factorial_table() : NULL;

  sg_model_define(m, p, n, d, sg_coef_model_prior_draw, sg_coef_model_log_prior);
  if (trials) {
    m->log_lik = lg_binomial_log_lik;
    m->log_lik_range = lg_binomial_log_lik_range;
    m->lik_bound_collapse = lg_binomial_bound_collapse;
    m->lik_bound_gap = lg_binomial_bound_gap;
    return SG_OK;
  }
  m->log_lik = lg_log_lik;
  m->log_lik_range = lg_log_lik_range;
  m->lik_bound_collapse = lg_lik_bound_collapse;
  m->lik_bound_gap = lg_lik_bound_gap;
  return SG_OK;
}
