/* Bayesian robust regression: Student-t errors with fixed degrees of freedom nu and unknown scale,
 *   y_i = a_i' beta + sigma e_i,  e_i ~ t_nu,
 *   beta by its sg_coef_prior (model.h),  sigma ~ N+(0, scale_sd^2) (half-normal),
 * where a_i is the i-th row of the design (intercept column included). theta = (beta_1..beta_p,
 * t = log sigma). The prior is blocks of prior.c (the coefficients': NORMAL with prior_sd, or
 * normal and Student-t blocks from R; then HALF_NORMAL on sigma, which is defined on log sigma
 * and includes its log-Jacobian), so it is the prior users get from the same blocks in R. Half-normal rather than half-t: prior.c has it for a scale (its STUDENT_T
 * block is on theta itself, not on log sigma), so a half-t would mean a new kind of block in a
 * shared file; the price is a lighter tail, which penalises sigma >> scale_sd more than a half-t
 * would (?robust_regression says so).
 *
 * The t density (Lange, Little and Taylor, "Robust statistical modeling using the t
 * distribution", JASA 84, 1989), with u_i = r_i^2 / (nu sigma^2) and r_i = y_i - a_i' beta:
 *   log p(y_i | theta) = lgamma((nu+1)/2) - lgamma(nu/2) - log(nu pi)/2 - t - (nu+1)/2 log(1 + u_i),
 *   d/d beta = (nu+1) r_i / (nu sigma^2 + r_i^2) a_i,   d/dt = -1 + (nu+1) u_i / (1 + u_i).
 * The data are packed rows (rows_r.c, model.h): a_i then y_i, as in linear_regression.c. */
#include "model.h"
#include <limits.h>
#include <math.h>
#include <Rmath.h>

typedef struct {
  sg_prior prior;  /* first (sg_blocks_model_log_prior()): the coefficients' prior on beta, then
                    * half-normal(scale_sd) on sigma = e^t */
  const double *rows; /* observation i at rows + i * stride: a_i, y_i */
  int p, stride;
  double df;       /* nu */
  double log_norm; /* lgamma((nu+1)/2) - lgamma(nu/2) - log(nu pi)/2 */
} rr_data;

/* log(1 + u_i) of observation i, with c = 1 / (nu sigma^2). With a gradient, add
 * scale (nu+1) c r_i / (1 + u_i) a_i to grad[0..p-1] and u_i / (1 + u_i) to *w. */
static inline double rr_obs(const rr_data *d, const double *theta, sg_index i, double c,
                            double scale, double *grad, double *w) {
  const double *x = d->rows + i * d->stride;
  double mu = 0.0;
  for (int j = 0; j < d->p; j++) mu += x[j] * theta[j];
  double r = x[d->p] - mu, u = r * r * c;
  if (grad) {
    double g = scale * (d->df + 1.0) * c * r / (1.0 + u);
    for (int j = 0; j < d->p; j++) grad[j] += g * x[j];
    *w += u / (1.0 + u);
  }
  return log1p(u);
}

static double rr_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                         int start, int n, double scale, double *grad) {
  (void) ws;
  const rr_data *d = m->data;
  const double t = theta[d->p], c = exp(-2.0 * t) / d->df;
  double sum = 0.0, w = 0.0;
  if (idx) {
    sg_rows_prefetch_start(d->rows, d->stride, d->p + 1, idx, n);
    for (int k = 0; k < n; k++) {
      sg_rows_prefetch(d->rows, d->stride, d->p + 1, idx, k, n);
      sum += rr_obs(d, theta, idx[k], c, scale, grad, &w);
    }
  } else {
    for (int k = 0; k < n; k++) sum += rr_obs(d, theta, (sg_index) start + k, c, scale, grad, &w);
  }
  if (grad) grad[d->p] += scale * ((d->df + 1.0) * w - n);
  return n * (d->log_norm - t) - 0.5 * (d->df + 1.0) * sum;
}

int sg_robust_regression_init(sg_model *m, const double *rows, int p, int n, double df,
                              sg_coef_prior prior, double scale_sd, sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  if (p > INT_MAX - 1) return sg_fail(st, SG_ERR_INPUT, "`model` has too many design columns.");
  const double h[] = {df, scale_sd};
  const char *names[] = {"df", "scale_prior"};
  for (int i = 0; i < 2; i++)
    if (!(h[i] > 0) || !R_FINITE(h[i]))
      return sg_fail(st, SG_ERR_INPUT, "`%s` must be positive and finite.", names[i]);
  if (sg_coef_prior_check(&prior, p, st)) return st->code;

  rr_data *d = (rr_data *) R_alloc(1, sizeof(rr_data));
  if (sg_coef_prior_with_scale(prior, p, SG_PRIOR_HALF_NORMAL, scale_sd, &d->prior, st))
    return st->code;
  d->rows = rows;
  d->p = p;
  d->stride = sg_rows_stride(p + 1);
  d->df = df;
  d->log_norm = lgammafn(0.5 * (df + 1.0)) - lgammafn(0.5 * df) - 0.5 * log(df * M_PI);

  sg_model_define(m, p + 1, n, d, sg_blocks_model_prior_draw, sg_blocks_model_log_prior);
  m->log_lik = rr_log_lik;
  return SG_OK;
}
