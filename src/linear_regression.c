/* Bayesian linear regression with known noise (paper Appendix B.1):
 *   y_i = a_i' theta + e_i,  e_i ~ N(0, noise_sd^2),  theta_j ~ N(0, prior_sd^2),
 * where a_i is the i-th row of the design matrix (intercept column included). The parameters are
 * unconstrained, so there is no transform. The design is stored transposed (xt, p x n) so one
 * observation's covariates are contiguous: mini-batches touch one cache line per observation. */
#include "model.h"
#include <math.h>

typedef struct {
  const double *xt; /* p x n, column i = observation i */
  const double *y;
  int p;
  double inv_var;       /* 1 / noise_sd^2 */
  double lik_norm;      /* -log(2 pi noise_sd^2) / 2 */
  double prior_sd;
} lr_data;

static void lr_prior_draw(const sg_model *m, sg_workspace *ws, double *theta) {
  (void) ws;
  sg_normal_prior_draw(theta, m->dim, ((const lr_data *) m->data)->prior_sd);
}

static double lr_log_prior(const sg_model *m, sg_workspace *ws, const double *theta, double *grad) {
  (void) ws;
  return sg_normal_log_prior(theta, m->dim, ((const lr_data *) m->data)->prior_sd, grad);
}

/* Residual of observation i; with a gradient, add c * r * a_i to grad where c = scale / sigma^2. */
static inline double lr_residual(const lr_data *d, const double *theta, R_xlen_t i, double c,
                                 double *grad) {
  const double *x = d->xt + i * d->p;
  double mu = 0.0;
  for (int j = 0; j < d->p; j++) mu += x[j] * theta[j];
  double r = d->y[i] - mu;
  if (grad) {
    double cr = c * r;
    for (int j = 0; j < d->p; j++) grad[j] += cr * x[j];
  }
  return r;
}

static double lr_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                         int start, int n, double scale, double *grad) {
  (void) ws;
  const lr_data *d = m->data;
  double c = scale * d->inv_var, ss = 0.0;
  if (idx) {
    for (int k = 0; k < n; k++) {
      if (k + SG_PREFETCH_AHEAD < n) {
        R_xlen_t ahead = idx[k + SG_PREFETCH_AHEAD];
        sg_prefetch_row(d->xt + ahead * d->p, d->p);
        sg_prefetch_row(d->y + ahead, 1);
      }
      double r = lr_residual(d, theta, idx[k], c, grad);
      ss += r * r;
    }
  } else {
    for (int k = 0; k < n; k++) {
      double r = lr_residual(d, theta, (R_xlen_t) start + k, c, grad);
      ss += r * r;
    }
  }
  return n * d->lik_norm - 0.5 * d->inv_var * ss;
}

int sg_linear_regression_init(sg_model *m, const double *xt, const double *y, int p, int n,
                              double noise_sd, double prior_sd, sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  if (!(noise_sd > 0) || !(prior_sd > 0) || !R_FINITE(noise_sd) || !R_FINITE(prior_sd))
    return sg_fail(st, SG_ERR_INPUT, "`noise_sd` and `prior_sd` must be positive and finite.");

  lr_data *d = (lr_data *) R_alloc(1, sizeof(lr_data));
  d->xt = xt;
  d->y = y;
  d->p = p;
  d->inv_var = 1.0 / (noise_sd * noise_sd);
  d->lik_norm = -0.5 * log(2.0 * M_PI * noise_sd * noise_sd);
  d->prior_sd = prior_sd;

  m->dim = p;
  m->n_obs = n;
  m->data = d;
  m->prior_draw = lr_prior_draw;
  m->log_prior = lr_log_prior;
  m->log_lik = lr_log_lik;
  return SG_OK;
}
