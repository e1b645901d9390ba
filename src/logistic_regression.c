/* Bayesian logistic regression for a binary response:
 *   p(y_i = 1 | a_i, theta) = plogis(a_i' theta),  theta_j ~ N(0, prior_sd^2),
 * where a_i is the i-th row of the design (intercept column included). The parameters are
 * unconstrained, so there is no transform. The data are packed rows (rows.c, model.h): a_i then
 * y_i, one cache line per observation up to p = 7. */
#include "model.h"
#include <math.h>

typedef struct {
  double prior_sd;    /* first: sg_normal_model_log_prior() reads it */
  const double *rows; /* observation i at rows + i * stride: a_i, y_i (0 or 1) */
  int p, stride;
  double max_norm; /* max_i |a_i| (lg_log_lik_range); NaN until it is asked for */
} lg_data;

/* log p(y_i | a_i, theta). With s = 2 y_i - 1 and z = s eta, log p = log plogis(z)
 * = -(log1p(exp(-|z|)) + max(-z, 0)): exp() is only taken of a non-positive number, so nothing
 * overflows for any |eta|, and log1p keeps tiny tail probabilities accurate; this is R's
 * plogis(log.p = TRUE) (src/nmath/plogis.c, log1pexp(); Maechler 2012, "Accurately computing
 * log(1 - exp(-|a|))", Rmpfr vignette) without its branches. d log p / d eta = y - plogis(eta)
 * = s plogis(-z), from the same exp(-|z|); with a gradient, add scale times that times a_i. */
static inline double lg_obs(const lg_data *d, const double *theta, R_xlen_t i, double scale,
                            double *grad) {
  const double *x = d->rows + i * d->stride;
  double eta = 0.0;
  for (int j = 0; j < d->p; j++) eta += x[j] * theta[j];
  int success = x[d->p] != 0.0;
  double z = success ? eta : -eta;
  double e = exp(-fabs(z));
  double lp = -(log1p(e) + (z < 0.0 ? -z : 0.0));
  if (grad) {
    double q = (z >= 0.0 ? e : 1.0) / (1.0 + e); /* plogis(-z) */
    double c = scale * (success ? q : -q);
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
    for (int k = 0; k < n; k++) ll += lg_obs(d, theta, (R_xlen_t) start + k, scale, grad);
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

int sg_logistic_regression_init(sg_model *m, const double *rows, int p, int n, double prior_sd,
                                sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  const int stride = sg_rows_stride(p + 1);
  /* lg_obs reads any non-zero y as a success: check that the responses are 0 or 1 (one pass,
   * cheap next to any estimator's work), so a corrupt object is an error, not another model. */
  for (R_xlen_t i = 0; i < n; i++)
    if (!(rows[i * stride + p] == 0.0 || rows[i * stride + p] == 1.0))
      return sg_fail(st, SG_ERR_INPUT,
                     "`model` data are corrupt: the response is not 0 or 1 at observation %d.",
                     (int) i + 1);
  if (!(prior_sd > 0) || !R_FINITE(prior_sd))
    return sg_fail(st, SG_ERR_INPUT, "`prior_sd` must be positive and finite.");

  lg_data *d = (lg_data *) R_alloc(1, sizeof(lg_data));
  d->rows = rows;
  d->p = p;
  d->stride = stride;
  d->prior_sd = prior_sd;
  d->max_norm = NA_REAL;

  m->dim = p;
  m->n_obs = n;
  m->data = d;
  m->prior_draw = sg_normal_model_prior_draw;
  m->log_prior = sg_normal_model_log_prior;
  m->log_lik = lg_log_lik;
  m->log_lik_range = lg_log_lik_range;
  return SG_OK;
}
