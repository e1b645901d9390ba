/* Linear regression with random effects per group, integrated out:
 *   y_i = a_i' beta + z_i' b_g(i) + e_i,  b_g ~ N(0, T),  e_i ~ N(0, sigma^2),
 * z_i the row's q random-effect covariates (1 for a random intercept, then the covariates of
 * random slopes), T = D R D with D = diag(tau_1..tau_q) the group sds and R their correlation
 * matrix: the identity for independent effects (`||`), known, or a parameter with an LKJ prior
 * (`|`). beta, sigma, the tau_k and R have the independent prior blocks of prior.c (sigma, the
 * taus and R each known or parameters, theta = (beta_1..beta_p, [log sigma], [log tau_1..log
 * tau_q], [atanh of R's q (q - 1) / 2 canonical partial correlations, sg_lkj_cholesky()])).
 *
 * Why integrated out rather than sampled: given (beta, sigma, T) the group effects are
 * conjugate, so the model keeps p + 1 + q (+ q (q - 1) / 2) parameters however many groups
 * there are (5,000 groups would otherwise be thousands of parameters whose posterior widths
 * differ by the groups' sizes, for the samplers' metric to learn), and the evidence is that of
 * the same model. The collapsed likelihood does not factor over rows, but it factors
 * sequentially: in the order the rows arrived,
 *   p(y | theta) = prod_i p(y_i | theta, the earlier rows of i's group),
 * and each factor is a normal whose mean and variance depend on those earlier rows only through
 * their sums S = sum z_j z_j', c_y = sum z_j y_j and C = sum z_j a_j' (per-group sufficient
 * statistics: Gelman et al., Bayesian Data Analysis, 3rd ed., Sections 5.4 and 15.4). With
 * c = c_y - C beta, the group effect's posterior from them has precision P = T^-1 + S / sigma^2
 * and mean m = P^-1 c / sigma^2, and
 *   y_i | theta, earlier ~ N(a_i' beta + z_i' m, V),  V = sigma^2 + z_i' P^-1 z_i.
 * So every row is an observation of its own with a log-likelihood that costs O(q^3 + q p), and
 * the estimators' mini-batches, chunks and annealing work unchanged: the sum over all rows is
 * the log marginal likelihood of the data in any order, and the sum over the first n rows that
 * of those n rows. Each row's (S, c_y, C) is computed once, when the rows are added
 * (sg_group_prefix below; R/linear_mixed.R keeps them with the rows), so a row keeps its factor
 * when the rows are shuffled or subsampled: the sum over all of them is the same.
 *
 * Gradients, with w = P^-1 z_i, e = y_i - a_i' beta - z_i' m, h_m = e / V and
 * h_V = (e^2 / V - 1) / (2 V) (from d(z'm) and dV, with d P^-1 = -P^-1 dP P^-1):
 *   d/d beta      = h_m (a_i - C' w / sigma^2),
 *   d/d log sigma = 2 h_m (w'S m / sigma^2 - z_i'm) + 2 h_V (sigma^2 + w'S w / sigma^2),
 * and through Lambda = T^-1 (dP = dLambda) the row's log-density changes by -<G_i, dLambda>,
 * G_i = h_m (m w' + w m') / 2 + h_V w w'. Lambda is the same for every row, so the G_i are
 * summed over the rows and, with dLambda = -Lambda dT Lambda and H = Lambda (sum G_i) Lambda,
 *   d/d log tau_k = 2 sum_l H_kl T_kl,   d/d R = D H D (then through R = L L' and L's CPCs,
 * sg_lkj_cholesky_grad()); for independent effects this is d/d log tau_k =
 * 2 (h_m w_k m_k + h_V w_k^2) / tau_k^2 summed over the rows, computed so.
 * The data are packed rows (rows_r.c, model.h): a_i, y_i, z_i, then S (its lower triangle by
 * rows: S_11, S_21, S_22, S_31, ...), c_y and C (q x p, by rows). */
#include "model.h"
#include <limits.h>
#include <math.h>
#include <Rmath.h>

#define LOG_2PI 1.837877066409345483560659472811

typedef struct {
  sg_prior prior;       /* first (sg_blocks_model_log_prior()): over all dim parameters */
  const double *rows;   /* observation i at rows + i * stride (see above) */
  int p, q, stride;
  int sigma_at, tau_at; /* the index of log sigma / log tau_1 in theta, or -1 when known */
  int cor_at;           /* the index of R's first CPC in theta, or -1 when R is known */
  int full;             /* 0: R = I (independent effects), T diagonal */
  double sigma;         /* the known noise sd (NA when a parameter) */
  double tau[SG_MIXED_MAX_Q]; /* the known group sds (NA when parameters) */
  double cor_chol[SG_MIXED_MAX_Q * SG_MIXED_MAX_Q]; /* a known R's lower Cholesky factor */
} lm_data;

#define LM_QQ (SG_MIXED_MAX_Q * SG_MIXED_MAX_Q)

/* The random effects' covariance at theta: t2 = the tau_k^2; with full, also Lambda = T^-1
 * (q x q, row-major), and the tau_k and R's Cholesky factor Lc for the gradients. */
typedef struct {
  double s2, t2[SG_MIXED_MAX_Q], tau[SG_MIXED_MAX_Q], lam[LM_QQ], Lc[LM_QQ];
} lm_cov;

/* The offset in a row of the statistics: S (q (q + 1) / 2), c_y (q), C (q p). */
static inline int lm_stats_at(int p, int q) {
  return p + 1 + q;
}

/* log p(y_i | theta, earlier rows) with s2 = sigma^2 and t2 = the tau_k^2, or lam = T^-1 when
 * not NULL; with a gradient, adds scale times its gradient in beta to grad and its derivative in
 * log sigma (without the scale) to *gs, and to gt (without the scale) the derivatives in the
 * log tau_k (lam NULL) or the lower triangle of G_i (q x q, row-major; see above). */
static inline double lm_obs(const lm_data *d, const double *beta, sg_index i, double s2,
                            const double *t2, const double *lam, double scale, double *grad,
                            double *gs, double *gt) {
  const int p = d->p, q = d->q;
  const double *x = d->rows + i * d->stride, *z = x + p + 1, *S = x + lm_stats_at(p, q);
  const double *cy = S + q * (q + 1) / 2, *C = cy + q;
  double L[SG_MIXED_MAX_Q * SG_MIXED_MAX_Q], c[SG_MIXED_MAX_Q], m[SG_MIXED_MAX_Q],
      w[SG_MIXED_MAX_Q];
  double xb = 0.0;
  for (int j = 0; j < p; j++) xb += x[j] * beta[j];
  /* c = c_y - C beta; P = T^-1 + S / s2 = L L' (Cholesky, lower, row-major q x q) */
  for (int k = 0, at = 0; k < q; k++) {
    double ck = cy[k];
    for (int j = 0; j < p; j++) ck -= C[k * p + j] * beta[j];
    c[k] = ck;
    for (int l = 0; l <= k; l++, at++)
      L[k * q + l] = S[at] / s2 + (lam ? lam[k * q + l] : k == l ? 1.0 / t2[k] : 0.0);
  }
  for (int k = 0; k < q; k++) {
    for (int l = 0; l < k; l++) {
      double v = L[k * q + l];
      for (int r = 0; r < l; r++) v -= L[k * q + r] * L[l * q + r];
      L[k * q + l] = v / L[l * q + l];
    }
    double v = L[k * q + k];
    for (int r = 0; r < k; r++) v -= L[k * q + r] * L[k * q + r];
    L[k * q + k] = sqrt(v);
  }
  /* m = P^-1 c / s2, w = P^-1 z: forward then back substitution */
  for (int k = 0; k < q; k++) {
    double a = c[k] / s2, b = z[k];
    for (int r = 0; r < k; r++) {
      a -= L[k * q + r] * m[r];
      b -= L[k * q + r] * w[r];
    }
    m[k] = a / L[k * q + k];
    w[k] = b / L[k * q + k];
  }
  for (int k = q - 1; k >= 0; k--) {
    double a = m[k], b = w[k];
    for (int r = k + 1; r < q; r++) {
      a -= L[r * q + k] * m[r];
      b -= L[r * q + k] * w[r];
    }
    m[k] = a / L[k * q + k];
    w[k] = b / L[k * q + k];
  }
  double zm = 0.0, zw = 0.0;
  for (int k = 0; k < q; k++) {
    zm += z[k] * m[k];
    zw += z[k] * w[k];
  }
  const double V = s2 + zw, e = x[p] - xb - zm;
  if (grad) {
    const double hm = e / V, hV = 0.5 * (e * e / V - 1.0) / V;
    for (int j = 0; j < p; j++) {
      double cw = 0.0;
      for (int k = 0; k < q; k++) cw += C[k * p + j] * w[k];
      grad[j] += scale * hm * (x[j] - cw / s2);
    }
    double wSm = 0.0, wSw = 0.0;
    for (int k = 0, at = 0; k < q; k++)
      for (int l = 0; l <= k; l++, at++) {
        const double f = k == l ? 1.0 : 2.0; /* S is symmetric: the lower triangle twice */
        wSm += 0.5 * f * S[at] * (w[k] * m[l] + w[l] * m[k]);
        wSw += f * S[at] * w[k] * w[l];
      }
    *gs += 2.0 * hm * (wSm / s2 - zm) + 2.0 * hV * (s2 + wSw / s2);
    if (lam) {
      for (int k = 0; k < q; k++)
        for (int l = 0; l <= k; l++)
          gt[k * q + l] += 0.5 * hm * (m[k] * w[l] + w[k] * m[l]) + hV * w[k] * w[l];
    } else {
      for (int k = 0; k < q; k++) gt[k] += 2.0 * (hm * w[k] * m[k] + hV * w[k] * w[k]) / t2[k];
    }
  }
  return -0.5 * (LOG_2PI + log(V) + e * e / V);
}

static void lm_variances(const lm_data *d, const double *theta, lm_cov *v) {
  const int q = d->q;
  const double s = d->sigma_at >= 0 ? exp(theta[d->sigma_at]) : d->sigma;
  v->s2 = s * s;
  for (int k = 0; k < q; k++) {
    const double t = d->tau_at >= 0 ? exp(theta[d->tau_at + k]) : d->tau[k];
    v->tau[k] = t;
    v->t2[k] = t * t;
  }
  if (!d->full) return;
  if (d->cor_at >= 0) {
    sg_lkj_cholesky(theta + d->cor_at, q, v->Lc);
  } else {
    for (int k = 0; k < q * q; k++) v->Lc[k] = d->cor_chol[k];
  }
  /* T = B B', B = D Lc lower triangular; Lambda = B^-T B^-1 from Bi = B^-1 (lower) */
  double Bi[LM_QQ] = {0.0};
  for (int k = 0; k < q; k++) {
    Bi[k * q + k] = 1.0 / (v->tau[k] * v->Lc[k * q + k]);
    for (int j = 0; j < k; j++) {
      double a = 0.0;
      for (int r = j; r < k; r++) a += v->tau[k] * v->Lc[k * q + r] * Bi[r * q + j];
      Bi[k * q + j] = -a * Bi[k * q + k];
    }
  }
  for (int k = 0; k < q; k++)
    for (int l = 0; l <= k; l++) {
      double a = 0.0;
      for (int r = k; r < q; r++) a += Bi[r * q + k] * Bi[r * q + l];
      v->lam[k * q + l] = v->lam[l * q + k] = a;
    }
}

/* Adds scale times the gradient in the log tau_k and R's CPCs (those that are parameters) from
 * G = the sum of the rows' G_i (its lower triangle; see above). */
static void lm_cov_grad(const lm_data *d, const double *theta, const lm_cov *v, double *G,
                        double scale, double *grad) {
  const int q = d->q;
  double H[LM_QQ], A[LM_QQ], T[LM_QQ];
  for (int k = 0; k < q; k++)
    for (int l = 0; l < k; l++) G[l * q + k] = G[k * q + l];
  /* H = Lambda G Lambda */
  for (int k = 0; k < q; k++)
    for (int l = 0; l < q; l++) {
      double a = 0.0;
      for (int r = 0; r < q; r++) a += G[k * q + r] * v->lam[r * q + l];
      A[k * q + l] = a;
    }
  for (int k = 0; k < q; k++)
    for (int l = 0; l < q; l++) {
      double a = 0.0;
      for (int r = 0; r < q; r++) a += v->lam[k * q + r] * A[r * q + l];
      H[k * q + l] = a;
    }
  if (d->tau_at >= 0) {
    for (int k = 0; k < q; k++)
      for (int l = 0; l < q; l++) {
        double r = 0.0; /* R_kl = (Lc Lc')_kl */
        for (int c = 0; c <= (k < l ? k : l); c++) r += v->Lc[k * q + c] * v->Lc[l * q + c];
        T[k * q + l] = v->tau[k] * v->tau[l] * r;
      }
    for (int k = 0; k < q; k++) {
      double a = 0.0;
      for (int l = 0; l < q; l++) a += H[k * q + l] * T[k * q + l];
      grad[d->tau_at + k] += scale * 2.0 * a;
    }
  }
  if (d->cor_at >= 0) {
    /* d/dR = D H D; d/dLc = 2 (D H D) Lc (R = Lc Lc', the derivative symmetric) */
    double dL[LM_QQ], g[LM_QQ] = {0.0};
    for (int k = 0; k < q; k++)
      for (int l = 0; l < q; l++) {
        double a = 0.0;
        for (int r = l; r < q; r++) a += v->tau[k] * H[k * q + r] * v->tau[r] * v->Lc[r * q + l];
        dL[k * q + l] = 2.0 * a;
      }
    sg_lkj_cholesky_grad(theta + d->cor_at, q, dL, g);
    for (int j = 0; j < q * (q - 1) / 2; j++) grad[d->cor_at + j] += scale * g[j];
  }
}

static double lm_log_lik(const sg_model *m, sg_workspace *ws, const double *theta,
                         const int *idx, int start, int n, double scale, double *grad) {
  (void) ws;
  const lm_data *d = m->data;
  const int width = lm_stats_at(d->p, d->q) + sg_mixed_stats_width(d->p, d->q);
  lm_cov v;
  double sum = 0.0, gs = 0.0, gt[LM_QQ] = {0.0};
  lm_variances(d, theta, &v);
  const double *lam = d->full ? v.lam : NULL;
  if (idx) {
    sg_rows_prefetch_start(d->rows, d->stride, width, idx, n);
    for (int k = 0; k < n; k++) {
      sg_rows_prefetch(d->rows, d->stride, width, idx, k, n);
      sum += lm_obs(d, theta, idx[k], v.s2, v.t2, lam, scale, grad, &gs, gt);
    }
  } else {
    for (int k = 0; k < n; k++)
      sum += lm_obs(d, theta, (sg_index) start + k, v.s2, v.t2, lam, scale, grad, &gs, gt);
  }
  if (grad) {
    if (d->sigma_at >= 0) grad[d->sigma_at] += scale * gs;
    if (d->full) {
      lm_cov_grad(d, theta, &v, gt, scale, grad);
    } else if (d->tau_at >= 0) {
      for (int k = 0; k < d->q; k++) grad[d->tau_at + k] += scale * gt[k];
    }
  }
  return sum;
}

static void lm_log_lik_pointwise(const sg_model *m, sg_workspace *ws, const double *theta,
                                 int start, int n, double *out) {
  (void) ws;
  const lm_data *d = m->data;
  lm_cov v;
  lm_variances(d, theta, &v);
  for (int k = 0; k < n; k++)
    out[k] = lm_obs(d, theta, (sg_index) start + k, v.s2, v.t2, d->full ? v.lam : NULL, 0.0, NULL,
                    NULL, NULL);
}

int sg_linear_mixed_init(sg_model *m, const double *rows, int p, int q, int n, double sigma,
                         const double *tau, const double *cor, sg_prior prior, sg_status *st) {
  if (p < 1 || n < 0) return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  if (q < 1 || q > SG_MIXED_MAX_Q)
    return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: it has %d random effects per group (1 to %d).",
                   q, SG_MIXED_MAX_Q);
  if (p > INT_MAX / (2 * SG_MIXED_MAX_Q) - 64)
    return sg_fail(st, SG_ERR_INPUT, "`model` has too many design columns.");
  if (!ISNAN(sigma) && (!(sigma > 0) || !R_FINITE(sigma)))
    return sg_fail(st, SG_ERR_INPUT, "`noise_sd` must be positive and finite.");
  const int known_tau = !ISNAN(tau[0]);
  for (int k = 0; k < q; k++)
    if (ISNAN(tau[k]) != !known_tau || (known_tau && (!(tau[k] > 0) || !R_FINITE(tau[k]))))
      return sg_fail(st, SG_ERR_INPUT, "`group_sd` must be positive and finite, or all unknown.");
  lm_data *d = (lm_data *) R_alloc(1, sizeof(lm_data));
  d->rows = rows;
  d->p = p;
  d->q = q;
  d->stride = sg_rows_stride(lm_stats_at(p, q) + sg_mixed_stats_width(p, q));
  d->sigma = sigma;
  for (int k = 0; k < q; k++) d->tau[k] = tau[k];
  /* R: the identity (cor NULL), a parameter (cor[0] NaN) or known (cor a q x q matrix) */
  d->full = cor != NULL;
  const int known_cor = cor != NULL && !ISNAN(cor[0]);
  if (cor && q < 2)
    return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: a correlation needs 2 random effects.");
  if (known_cor && sg_correlation_cholesky(cor, q, d->cor_chol, st)) return st->code;
  int dim = p;
  d->sigma_at = ISNAN(sigma) ? dim++ : -1;
  d->tau_at = known_tau ? -1 : dim;
  if (!known_tau) dim += q;
  d->cor_at = cor != NULL && !known_cor ? dim : -1;
  if (d->cor_at >= 0) dim += q * (q - 1) / 2;
  d->prior = prior;
  if (sg_prior_check(&d->prior, dim, st)) return st->code;

  sg_model_define(m, dim, n, d, sg_blocks_model_prior_draw, sg_blocks_model_log_prior);
  m->log_lik = lm_log_lik;
  m->log_lik_pointwise = lm_log_lik_pointwise;
  return SG_OK;
}

void sg_group_prefix(const double *xt, const double *y, const double *zt, const int *group,
                     int p, int q, int n, double *sums, double *st) {
  const int w = sg_mixed_stats_width(p, q);
  for (sg_index i = 0; i < n; i++) {
    double *s = sums + (sg_index) group[i] * w, *out = st + i * w;
    const double *x = xt + i * p, *z = zt + i * q;
    for (int j = 0; j < w; j++) out[j] = s[j];
    int at = 0;
    for (int k = 0; k < q; k++)
      for (int l = 0; l <= k; l++) s[at++] += z[k] * z[l];
    for (int k = 0; k < q; k++) s[at++] += z[k] * y[i];
    for (int k = 0; k < q; k++)
      for (int j = 0; j < p; j++) s[at++] += z[k] * x[j];
  }
}
