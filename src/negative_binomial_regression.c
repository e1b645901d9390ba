/* Bayesian negative binomial regression with a log link and an optional offset: overdispersed
 * counts, a Poisson whose mean is multiplied by gamma noise of mean 1 and coefficient of
 * variation omega,
 *   y_i ~ NB(mu_i, size phi),  log mu_i = o_i + a_i' beta,  phi = omega^-2,
 *   E y_i = mu_i,  Var y_i = mu_i + omega^2 mu_i^2,
 * with beta by its sg_coef_prior (model.h) and omega ~ N+(0, omega_sd^2) (half-normal: the
 * Poisson model, omega = 0, at the prior's mode). theta = (beta_1..beta_p, t = log omega); the
 * prior is blocks of prior.c (the coefficients', then HALF_NORMAL on omega = e^t with its
 * log-Jacobian), as in robust_regression.c. The data are packed rows (rows_r.c, model.h): a_i, y_i
 * and o_i (0 without an offset), as in poisson_regression.c.
 *
 * The response term and its derivatives in eta and phi are sg_nb_term's (glm_family.h), with
 * its Poisson limit for huge phi; d phi / dt = -2 phi. */
#include "glm_family.h"
#include <Rmath.h>
#include <limits.h>
#include <math.h>

typedef struct {
  sg_prior prior; /* first (sg_blocks_model_log_prior()): the coefficients' blocks, then
                   * half-normal(omega_sd) on omega = e^t */
  const double *rows; /* observation i at rows + i * stride: a_i, y_i (a count), the offset */
  int p, stride;
  double *log_factorial; /* sg_log_factorial_table() */
} nb_data;

/* log p(y_i | theta) with phi = e^{-2t}, log_phi = -2t. With a gradient, add
 * scale * d/d eta * a_i to grad[0..p-1] and d/d phi to *dphi. */
static inline double nb_obs(const nb_data *d, const double *theta, sg_index i, double phi,
                            double log_phi, double scale, double *grad, double *dphi) {
  const double *x = d->rows + i * d->stride;
  double eta = x[d->p + 1];
  for (int j = 0; j < d->p; j++) eta += x[j] * theta[j];
  const double y = x[d->p];
  double deta;
  const double lp = sg_nb_term(y, eta, sg_log_factorial(d->log_factorial, y), phi, log_phi,
                               grad ? &deta : NULL, dphi);
  if (grad) {
    const double c = scale * deta;
    for (int j = 0; j < d->p; j++) grad[j] += c * x[j];
  }
  return lp;
}

static double nb_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                         int start, int n, double scale, double *grad) {
  (void) ws;
  const nb_data *d = m->data;
  const double t = theta[d->p], log_phi = -2.0 * t, phi = exp(log_phi);
  double ll = 0.0, dphi = 0.0;
  if (idx) {
    sg_rows_prefetch_start(d->rows, d->stride, d->p + 2, idx, n);
    for (int k = 0; k < n; k++) {
      sg_rows_prefetch(d->rows, d->stride, d->p + 2, idx, k, n);
      ll += nb_obs(d, theta, idx[k], phi, log_phi, scale, grad, &dphi);
    }
  } else {
    for (int k = 0; k < n; k++)
      ll += nb_obs(d, theta, (sg_index) start + k, phi, log_phi, scale, grad, &dphi);
  }
  if (grad) grad[d->p] += scale * dphi * (-2.0 * phi);
  return ll;
}

int sg_negative_binomial_regression_init(sg_model *m, const double *rows, int p, int n,
                                         sg_coef_prior prior, double omega_sd, sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  if (p > INT_MAX - 1) return sg_fail(st, SG_ERR_INPUT, "`model` has too many design columns.");
  if (!(omega_sd > 0) || !R_FINITE(omega_sd))
    return sg_fail(st, SG_ERR_INPUT, "`overdispersion_prior` must be positive and finite.");
  const int stride = sg_rows_stride(p + 2);
  /* nb_obs indexes a table and loops with y */
  if (sg_count_rows_check(rows, p, n, stride, st)) return st->code;
  if (sg_coef_prior_check(&prior, p, st)) return st->code;

  nb_data *d = (nb_data *) R_alloc(1, sizeof(nb_data));
  if (sg_coef_prior_with_scale(prior, p, SG_PRIOR_HALF_NORMAL, omega_sd, &d->prior, st))
    return st->code;
  d->rows = rows;
  d->p = p;
  d->stride = stride;
  d->log_factorial = sg_log_factorial_table();

  sg_model_define(m, p + 1, n, d, sg_blocks_model_prior_draw, sg_blocks_model_log_prior);
  m->log_lik = nb_log_lik;
  return SG_OK;
}
