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
 * log p(y | mu, phi) = lgamma(y + phi) - lgamma(phi) - log(y!) - phi log(1 + mu / phi)
 *                      + y (eta - log(phi + mu)),
 * with eta = log mu. Near the Poisson limit phi is huge (omega = 1e-4: phi = 1e8) and the
 * lgamma difference is a small difference of large numbers; for the small counts that are
 * typical it is summed exactly instead, lgamma(y + phi) - lgamma(phi) = sum_{k<y} log(phi + k),
 * and so is its derivative, digamma(y + phi) - digamma(phi) = sum_{k<y} 1 / (phi + k).
 * Derivatives: d/d eta = phi (y - mu) / (phi + mu);
 *   d/d phi = [digamma(y + phi) - digamma(phi)] - log(1 + mu / phi) + (mu - y) / (phi + mu),
 * and d phi / dt = -2 phi. */
#include "model.h"
#include <Rmath.h>
#include <limits.h>
#include <math.h>

/* Counts below this are summed exactly (see above); larger ones use lgamma() and digamma(). */
#define NB_SUM_MAX 64
/* log(y!) from a table for small counts, as poisson_regression.c. */
#define NB_TABLE 256
/* Beyond phi = e^36 (omega below 1.5e-8) the relative corrections to the Poisson likelihood,
 * O(mu / phi) and O(y / phi), are below the doubles' precision: the Poisson limit is used, which
 * also keeps phi = e^{-2t} from overflowing for the smallest omega a prior draw can make. */
#define NB_POISSON 36.0

typedef struct {
  sg_prior prior; /* first (sg_blocks_model_log_prior()): the coefficients' blocks, then
                   * half-normal(omega_sd) on omega = e^t */
  const double *rows; /* observation i at rows + i * stride: a_i, y_i (a count), the offset */
  int p, stride;
  double *log_factorial; /* NB_TABLE: log(k!) for k < NB_TABLE */
} nb_data;

/* log p(y_i | theta) with phi = e^{-2t}, log_phi = -2t. With a gradient, add
 * scale * d/d eta * a_i to grad[0..p-1] and return d/d phi in *dphi. */
static inline double nb_obs(const nb_data *d, const double *theta, sg_index i, double phi,
                            double log_phi, double scale, double *grad, double *dphi) {
  const double *x = d->rows + i * d->stride;
  double eta = x[d->p + 1];
  for (int j = 0; j < d->p; j++) eta += x[j] * theta[j];
  const double y = x[d->p];
  const double lf = y < NB_TABLE ? d->log_factorial[(int) y] : lgammafn(y + 1.0);
  if (log_phi > NB_POISSON) {
    /* the Poisson limit, to double precision; d/d phi is O(1 / phi^2) */
    const double mu = exp(eta);
    if (grad) {
      const double c = scale * (y - mu);
      for (int j = 0; j < d->p; j++) grad[j] += c * x[j];
    }
    return y * eta - mu - lf;
  }
  /* log(phi + mu) and mu / phi without overflow: mu = e^eta may be huge or tiny */
  const double log_sum = (eta > log_phi) ? eta + log1p(exp(log_phi - eta))
                                         : log_phi + log1p(exp(eta - log_phi));
  const double ratio = exp(eta - log_phi); /* mu / phi */
  double lg, dg = 0.0;
  if (y < NB_SUM_MAX) {
    lg = 0.0;
    for (int k = 0; k < (int) y; k++) {
      lg += log(phi + k);
      if (grad) dg += 1.0 / (phi + k);
    }
  } else {
    lg = lgammafn(y + phi) - lgammafn(phi);
    if (grad) dg = Rf_digamma(y + phi) - Rf_digamma(phi);
  }
  if (grad) {
    /* phi (y - mu) / (phi + mu) = (y - mu) / (1 + mu / phi) */
    const double mu = exp(eta);
    const double c = scale * (y - mu) / (1.0 + ratio);
    for (int j = 0; j < d->p; j++) grad[j] += c * x[j];
    /* (mu - y) / (phi + mu) = (mu / phi - y / phi) / (1 + mu / phi) */
    *dphi += dg - log1p(ratio) + (ratio - y / phi) / (1.0 + ratio);
  }
  return lg - lf - phi * log1p(ratio) + y * (eta - log_sum);
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
  d->log_factorial = (double *) R_alloc(NB_TABLE, sizeof(double));
  for (int k = 0; k < NB_TABLE; k++) d->log_factorial[k] = lgammafn(k + 1.0);

  m->dim = p + 1;
  m->n_obs = n;
  m->data = d;
  m->prior_draw = sg_blocks_model_prior_draw;
  m->log_prior = sg_blocks_model_log_prior;
  m->log_lik = nb_log_lik;
  return SG_OK;
}
