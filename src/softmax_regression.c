/* Bayesian softmax ("multinomial logistic") regression (paper Appendix B.2):
 *   p(y_i = k | a_i, theta) = exp(a_i' theta_k) / sum_l exp(a_i' theta_l),  k = 1..K,
 * where a_i is the i-th row of the design (intercept column included, so theta_k holds the class's
 * bias b_k and weights w_k) and every element of theta ~ N(0, prior_sd^2). theta is stored class
 * after class: theta[k * p + j]. The parameters are unconstrained, so there is no transform.
 * The design is stored transposed (xt, p x n) so one observation's covariates are contiguous. */
#include "model.h"
#include <limits.h>
#include <math.h>
#include <string.h>

typedef struct {
  double prior_sd;  /* first: sg_normal_model_log_prior() reads it */
  const double *xt; /* p x n, column i = observation i */
  const int *y;     /* class codes 1..K (R's factor codes) */
  int p, K;
  double max_norm; /* max_i |x_i| (sm_log_lik_range); NaN until it is asked for */
} sm_data;

/* The workspace scratch (sm_scratch_bytes() of it): theta transposed (p x K, tht[j * K + k] =
 * theta_kj), the gradient summed over a call's observations (K x p, theta's layout), and the K
 * linear predictors and K exponentials of one observation. */
static size_t sm_scratch_bytes(int p, int K) {
  return ((size_t) 2 * K * p + (size_t) 2 * K) * sizeof(double);
}

/* log p(y_i | a_i, theta) by the stable log-softmax (the largest predictor is subtracted before
 * exponentiating, so no class overflows or all underflow for any |a_i' theta_k|). With a
 * gradient, add (1[k = y_i] - softmax_k) * a_i to the block of class k of gsum.
 * Speed:
 * - exp is most of the cost, so each exp(eta_k - max) is computed once and serves both the
 *   log-sum-exp and the gradient weights softmax_k = exp(eta_k - max) / sum (the old code took a
 *   second exp(eta_k - lse) per class).
 * - The linear predictors of four classes at a time are summed in registers over the
 *   transposed theta, where their four coefficients of covariate j are contiguous: the
 *   compiler makes two-wide vector operations of them, and four independent sums replace one
 *   long chain of dependent additions. Each eta_k is still summed over j in order, so it is
 *   the same number as before. The classes left over are summed one at a time.
 * - The gradient loop runs over covariate pairs (R's default flags vectorise straight-line
 *   pairs, not loops that leave a remainder) into gsum, the call's own scratch rather than
 *   `grad`: restrict-qualified, so known not to alias the data, and scale multiplies it once per
 *   call instead of once per observation and class. */
static inline double sm_obs(const sm_data *d, const double *restrict theta,
                            const double *restrict tht, R_xlen_t i, double *restrict gsum,
                            double *restrict eta, double *restrict ex) {
  const int p = d->p, K = d->K;
  const double *restrict x = d->xt + i * p;
  int k = 0;
  for (; k + 4 <= K; k += 4) {
    const double *restrict t = tht + k;
    double e0 = 0.0, e1 = 0.0, e2 = 0.0, e3 = 0.0;
    for (int j = 0; j < p; j++, t += K) {
      const double xj = x[j];
      e0 += xj * t[0];
      e1 += xj * t[1];
      e2 += xj * t[2];
      e3 += xj * t[3];
    }
    eta[k] = e0;
    eta[k + 1] = e1;
    eta[k + 2] = e2;
    eta[k + 3] = e3;
  }
  for (; k < K; k++) {
    const double *restrict th = theta + (R_xlen_t) k * p;
    double e = 0.0;
    for (int j = 0; j < p; j++) e += x[j] * th[j];
    eta[k] = e;
  }
  double mx = R_NegInf;
  int top = 0;
  for (k = 0; k < K; k++)
    if (eta[k] > mx) {
      mx = eta[k];
      top = k;
    }
  /* the largest class's exp(mx - mx) is 1 (NaN if mx is infinite), no call needed */
  const double one = isfinite(mx) ? 1.0 : NAN;
  double s = 0.0;
  for (k = 0; k < K; k++) {
    ex[k] = k == top ? one : exp(eta[k] - mx);
    s += ex[k];
  }
  const int yk = d->y[i] - 1;
  if (gsum) {
    const double inv = 1.0 / s;
    for (k = 0; k < K; k++) {
      const double c = (k == yk) - ex[k] * inv;
      double *restrict g = gsum + (R_xlen_t) k * p;
      int j = 0;
      for (; j + 2 <= p; j += 2) {
        g[j] += c * x[j];
        g[j + 1] += c * x[j + 1];
      }
      if (j < p) g[j] += c * x[j];
    }
  }
  return eta[yk] - mx - log(s);
}

static double sm_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                         int start, int n, double scale, double *grad) {
  const sm_data *d = m->data;
  const int p = d->p, K = d->K, dim = m->dim;
  double *tht = ws->scratch, *gsum = tht + dim, *eta = gsum + dim, *ex = eta + K;
  for (int j = 0; j < p; j++)
    for (int k = 0; k < K; k++) tht[(R_xlen_t) j * K + k] = theta[(R_xlen_t) k * p + j];
  if (grad) memset(gsum, 0, (size_t) dim * sizeof(double));
  else gsum = NULL;
  double ll = 0.0;
  if (idx) {
    for (int k = 0; k < n; k++) {
      if (k + SG_PREFETCH_AHEAD < n) {
        R_xlen_t ahead = idx[k + SG_PREFETCH_AHEAD];
        sg_prefetch_row(d->xt + ahead * p, p);
      }
      ll += sm_obs(d, theta, tht, idx[k], gsum, eta, ex);
    }
  } else {
    for (int k = 0; k < n; k++) ll += sm_obs(d, theta, tht, (R_xlen_t) start + k, gsum, eta, ex);
  }
  if (grad)
    for (int j = 0; j < dim; j++) grad[j] += scale * gsum[j];
  return ll;
}

/* log softmax_y(eta) has gradient e_y - pi in eta, of norm at most sqrt(2), and eta_k = x'
 * theta_k, so |log p(y_i | theta') - log p(y_i | theta)| <= sqrt(2) |x_i| |theta' - theta|
 * (Frobenius norm over the K coefficient vectors). */
static double sm_log_lik_range(const sg_model *m, const double *theta, const double *theta_new) {
  sm_data *d = (sm_data *) m->data;
  if (!theta) {
    d->max_norm = sg_rows_max_norm(d->xt, d->p, d->p, m->n_obs);
    return 0.0;
  }
  return M_SQRT2 * d->max_norm * sg_distance(theta, theta_new, m->dim);
}

int sg_softmax_regression_init(sg_model *m, const double *xt, const int *y, int p, int n, int K,
                               double prior_sd, sg_status *st) {
  if (p < 1 || n < 0 || K < 2)
    return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns or classes.");
  if ((double) K * p > INT_MAX / 2)
    return sg_fail(st, SG_ERR_INPUT, "`model` has too many parameters (classes x design columns).");
  /* A code out of range would read outside theta: check them all (one pass, cheap next to any
   * estimator's work). */
  for (R_xlen_t i = 0; i < n; i++)
    if (y[i] < 1 || y[i] > K)
      return sg_fail(st, SG_ERR_INPUT,
                     "`model` data are corrupt: class code out of range at observation %d.",
                     (int) i + 1);
  if (!(prior_sd > 0) || !R_FINITE(prior_sd))
    return sg_fail(st, SG_ERR_INPUT, "`prior_sd` must be positive and finite.");

  sm_data *d = (sm_data *) R_alloc(1, sizeof(sm_data));
  d->xt = xt;
  d->y = y;
  d->p = p;
  d->K = K;
  d->prior_sd = prior_sd;
  d->max_norm = NA_REAL;

  m->dim = K * p;
  m->n_obs = n;
  m->data = d;
  m->scratch_bytes = sm_scratch_bytes(p, K);
  m->prior_draw = sg_normal_model_prior_draw;
  m->log_prior = sg_normal_model_log_prior;
  m->log_lik = sm_log_lik;
  m->log_lik_range = sm_log_lik_range;
  return SG_OK;
}
