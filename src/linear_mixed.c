/* Linear regression with a random intercept per group, the group effects integrated out:
 *   y_i = a_i' beta + u_g(i) + e_i,  u_g ~ N(0, tau^2),  e_i ~ N(0, sigma^2),
 * beta, sigma and tau with the independent prior blocks of prior.c (sigma and tau each either
 * known or a parameter, theta = (beta_1..beta_p, [log sigma], [log tau])).
 *
 * Why integrated out rather than sampled: given (beta, sigma, tau) the group effects are
 * conjugate, so the model keeps p + 2 parameters however many groups there are (5,000 groups
 * would otherwise be 5,000 parameters whose posterior widths differ by the groups' sizes, for
 * the samplers' metric to learn), and the evidence is that of the same model. The collapsed
 * likelihood does not factor over rows, but it factors sequentially: in the order the rows
 * arrived,
 *   p(y | theta) = prod_i p(y_i | theta, the earlier rows of i's group),
 * and each factor is a normal whose mean and variance depend on those earlier rows only
 * through their count n' and sums S_y' = sum y_j and S_a' = sum a_j (a per-group sufficient
 * statistic: Gelman et al., Bayesian Data Analysis, 3rd ed., Section 5.4). With R' = S_y' - S_a'
 * beta (the earlier rows' summed residual), D = sigma^2 + n' tau^2, the group effect's posterior
 * from them is N(m, v), m = tau^2 R' / D, v = sigma^2 tau^2 / D, and
 *   y_i | theta, earlier ~ N(a_i' beta + m, V),  V = sigma^2 + v.
 * So every row is an observation of its own with a log-likelihood that is O(p) to evaluate, and
 * the estimators' mini-batches, chunks and annealing work unchanged: the sum over all rows is
 * the log marginal likelihood of the data in any order, and the sum over the first n rows that
 * of those n rows. Each row's (n', S_y', S_a') is computed once, when the rows are added
 * (sg_group_prefix below; R/linear_mixed.R keeps them with the rows), so a row keeps its factor
 * when the rows are shuffled or subsampled: the sum over all of them is the same.
 *
 * Gradients, with e = y_i - a_i' beta - m, h_V = (e^2 / V - 1) / (2 V), h_m = e / V:
 *   d/d beta      = h_m (a_i - tau^2 S_a' / D),
 *   d/d log sigma = 2 sigma^2 [h_V (1 + n' tau^4 / D^2) - h_m m / D],
 *   d/d log tau   = 2 tau^2 sigma^2 [h_V sigma^2 + h_m R'] / D^2.
 * The data are packed rows (rows_r.c, model.h): a_i, y_i, n', S_y', S_a'. */
#include "model.h"
#include <limits.h>
#include <math.h>
#include <Rmath.h>

#define LOG_2PI 1.837877066409345483560659472811

typedef struct {
  sg_prior prior;       /* first (sg_blocks_model_log_prior()): over all dim parameters */
  const double *rows;   /* observation i at rows + i * stride: a_i, y_i, n', S_y', S_a' */
  int p, stride;
  int sigma_at, tau_at; /* the index of log sigma / log tau in theta, or -1 when known */
  double sigma, tau;    /* the known values (NA when a parameter) */
} lm_data;

/* log p(y_i | theta, earlier rows) with s2 = sigma^2, t2 = tau^2; with a gradient, adds
 * scale times its gradient in beta to grad and its derivatives in log sigma and log tau
 * (without the scale) to *gs and *gt. */
static inline double lm_obs(const lm_data *d, const double *beta, sg_index i, double s2,
                            double t2, double scale, double *grad, double *gs, double *gt) {
  const int p = d->p;
  const double *x = d->rows + i * d->stride, *sx = x + p + 3;
  const double y = x[p], np = x[p + 1], sy = x[p + 2];
  double xb = 0.0, sxb = 0.0;
  for (int j = 0; j < p; j++) {
    xb += x[j] * beta[j];
    sxb += sx[j] * beta[j];
  }
  const double R = sy - sxb, D = s2 + np * t2, m = t2 * R / D, V = s2 + s2 * t2 / D;
  const double e = y - xb - m;
  if (grad) {
    const double hm = e / V, hV = 0.5 * (e * e / V - 1.0) / V, c = t2 / D;
    for (int j = 0; j < p; j++) grad[j] += scale * hm * (x[j] - c * sx[j]);
    *gs += 2.0 * s2 * (hV * (1.0 + np * c * c) - hm * m / D);
    *gt += 2.0 * t2 * s2 * (hV * s2 + hm * R) / (D * D);
  }
  return -0.5 * (LOG_2PI + log(V) + e * e / V);
}

static void lm_variances(const lm_data *d, const double *theta, double *s2, double *t2) {
  const double s = d->sigma_at >= 0 ? exp(theta[d->sigma_at]) : d->sigma;
  const double t = d->tau_at >= 0 ? exp(theta[d->tau_at]) : d->tau;
  *s2 = s * s;
  *t2 = t * t;
}

static double lm_log_lik(const sg_model *m, sg_workspace *ws, const double *theta,
                         const int *idx, int start, int n, double scale, double *grad) {
  (void) ws;
  const lm_data *d = m->data;
  const int width = 2 * d->p + 3;
  double s2, t2, sum = 0.0, gs = 0.0, gt = 0.0;
  lm_variances(d, theta, &s2, &t2);
  if (idx) {
    sg_rows_prefetch_start(d->rows, d->stride, width, idx, n);
    for (int k = 0; k < n; k++) {
      sg_rows_prefetch(d->rows, d->stride, width, idx, k, n);
      sum += lm_obs(d, theta, idx[k], s2, t2, scale, grad, &gs, &gt);
    }
  } else {
    for (int k = 0; k < n; k++)
      sum += lm_obs(d, theta, (sg_index) start + k, s2, t2, scale, grad, &gs, &gt);
  }
  if (grad) {
    if (d->sigma_at >= 0) grad[d->sigma_at] += scale * gs;
    if (d->tau_at >= 0) grad[d->tau_at] += scale * gt;
  }
  return sum;
}

static void lm_log_lik_pointwise(const sg_model *m, sg_workspace *ws, const double *theta,
                                 int start, int n, double *out) {
  (void) ws;
  const lm_data *d = m->data;
  double s2, t2;
  lm_variances(d, theta, &s2, &t2);
  for (int k = 0; k < n; k++)
    out[k] = lm_obs(d, theta, (sg_index) start + k, s2, t2, 0.0, NULL, NULL, NULL);
}

int sg_linear_mixed_init(sg_model *m, const double *rows, int p, int n, double sigma,
                         double tau, sg_prior prior, sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  if (p > INT_MAX / 2 - 3) return sg_fail(st, SG_ERR_INPUT, "`model` has too many design columns.");
  const double known[] = {sigma, tau};
  const char *names[] = {"noise_sd", "group_sd"};
  for (int i = 0; i < 2; i++)
    if (!ISNAN(known[i]) && (!(known[i] > 0) || !R_FINITE(known[i])))
      return sg_fail(st, SG_ERR_INPUT, "`%s` must be positive and finite.", names[i]);
  lm_data *d = (lm_data *) R_alloc(1, sizeof(lm_data));
  d->rows = rows;
  d->p = p;
  d->stride = sg_rows_stride(2 * p + 3);
  d->sigma = sigma;
  d->tau = tau;
  int dim = p;
  d->sigma_at = ISNAN(sigma) ? dim++ : -1;
  d->tau_at = ISNAN(tau) ? dim++ : -1;
  d->prior = prior;
  if (sg_prior_check(&d->prior, dim, st)) return st->code;

  m->dim = dim;
  m->n_obs = n;
  m->data = d;
  m->prior_draw = sg_blocks_model_prior_draw;
  m->log_prior = sg_blocks_model_log_prior;
  m->log_lik = lm_log_lik;
  m->log_lik_pointwise = lm_log_lik_pointwise;
  return SG_OK;
}

void sg_group_prefix(const double *xt, const double *y, const int *group, int p, int n,
                     double *sums, double *st) {
  const int w = p + 2;
  for (sg_index i = 0; i < n; i++) {
    double *s = sums + (sg_index) group[i] * w, *out = st + i * w;
    for (int j = 0; j < w; j++) out[j] = s[j];
    s[0] += 1.0;
    s[1] += y[i];
    for (int j = 0; j < p; j++) s[2 + j] += xt[i * p + j];
  }
}
