/* Bayesian Poisson regression with a log link and an optional offset (log exposure):
 *   y_i ~ Poisson(mu_i),  log mu_i = o_i + a_i' theta,  theta by its sg_coef_prior (model.h),
 * where a_i is the i-th row of the design (intercept column included) and o_i the offset.
 * log p(y_i | theta) = y_i eta_i - exp(eta_i) - log(y_i!), eta_i = log mu_i; the last term does
 * not depend on theta but is part of the evidence, so it is included. The parameters are
 * unconstrained, so there is no transform. The data are packed rows (rows_r.c, model.h): a_i, y_i
 * and o_i (0 without an offset), one cache line per observation up to p = 6. */
#include "glm_family.h"
#include <Rmath.h>
#include <math.h>

typedef struct {
  sg_coef_prior prior; /* first: sg_coef_model_log_prior() reads it */
  const double *rows; /* observation i at rows + i * stride: a_i, y_i (a count), the offset */
  int p, stride;
  double *log_factorial; /* sg_log_factorial_table() */
} po_data;

/* log p(y_i | theta) (sg_poisson_term, glm_family.h); with a gradient, add scale * (y_i - mu_i)
 * * a_i to grad. */
static inline double po_obs(const po_data *d, const double *theta, sg_index i, double scale,
                            double *grad) {
  const double *x = d->rows + i * d->stride;
  double eta = x[d->p + 1];
  for (int j = 0; j < d->p; j++) eta += x[j] * theta[j];
  double deta;
  const double lp = sg_poisson_term(x[d->p], eta, sg_log_factorial(d->log_factorial, x[d->p]),
                                    grad ? &deta : NULL);
  if (grad) {
    const double c = scale * deta;
    for (int j = 0; j < d->p; j++) grad[j] += c * x[j];
  }
  return lp;
}

static double po_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                         int start, int n, double scale, double *grad) {
  (void) ws;
  const po_data *d = m->data;
  double ll = 0.0;
  if (idx) {
    sg_rows_prefetch_start(d->rows, d->stride, d->p + 2, idx, n);
    for (int k = 0; k < n; k++) {
      sg_rows_prefetch(d->rows, d->stride, d->p + 2, idx, k, n);
      ll += po_obs(d, theta, idx[k], scale, grad);
    }
  } else {
    for (int k = 0; k < n; k++) ll += po_obs(d, theta, (sg_index) start + k, scale, grad);
  }
  return ll;
}

/* One pass, cheap next to any estimator's work. */
int sg_count_rows_check(const double *rows, int p, int n, int stride, sg_status *st) {
  for (sg_index i = 0; i < n; i++) {
    const double y = rows[i * stride + p], offset = rows[i * stride + p + 1];
    if (!(y >= 0.0) || !R_FINITE(y) || y != floor(y))
      return sg_fail(st, SG_ERR_INPUT,
                     "`model` data are corrupt: the count is not a whole number >= 0 at observation %d.",
                     (int) i + 1);
    if (!R_FINITE(offset))
      return sg_fail(st, SG_ERR_INPUT,
                     "`model` data are corrupt: the offset is not finite at observation %d.",
                     (int) i + 1);
  }
  return SG_OK;
}

int sg_poisson_regression_init(sg_model *m, const double *rows, int p, int n,
                               sg_coef_prior prior, sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  const int stride = sg_rows_stride(p + 2);
  /* po_obs indexes the log-factorial table with y */
  if (sg_count_rows_check(rows, p, n, stride, st)) return st->code;
  if (sg_coef_prior_check(&prior, p, st)) return st->code;

  po_data *d = (po_data *) R_alloc(1, sizeof(po_data));
  d->rows = rows;
  d->p = p;
  d->stride = stride;
  d->prior = prior;
  d->log_factorial = sg_log_factorial_table();

  sg_model_define(m, p, n, d, sg_coef_model_prior_draw, sg_coef_model_log_prior);
  m->log_lik = po_log_lik;
  return SG_OK;
}
