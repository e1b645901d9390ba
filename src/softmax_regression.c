/* Bayesian softmax ("multinomial logistic") regression (paper Appendix B.2):
 *   p(y_i = k | a_i, theta) = exp(a_i' theta_k) / sum_l exp(a_i' theta_l),  k = 1..K,
 * where a_i is the i-th row of the design (intercept column included, so theta_k holds the class's
 * bias b_k and weights w_k) and theta has its sg_coef_prior (model.h: the paper's N(0, prior_sd^2)
 * on every element, or blocks, the same in every class). theta is stored class
 * after class: theta[k * p + j]. The parameters are unconstrained, so there is no transform.
 * The design is stored transposed (xt, p x n) so one observation's covariates are contiguous. */
#include "model.h"
#include <limits.h>
#include <math.h>
#include <string.h>

typedef struct {
  sg_coef_prior prior; /* first: sg_coef_model_log_prior() reads it */
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
 *   log-sum-exp and the gradient weights softmax_k = exp(eta_k - max) / sum.
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
                            const double *restrict tht, sg_index i, double *restrict gsum,
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
    const double *restrict th = theta + (sg_index) k * p;
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
      double *restrict g = gsum + (sg_index) k * p;
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
    for (int k = 0; k < K; k++) tht[(sg_index) j * K + k] = theta[(sg_index) k * p + j];
  if (grad) memset(gsum, 0, (size_t) dim * sizeof(double));
  else gsum = NULL;
  double ll = 0.0;
  if (idx) {
    for (int k = 0; k < n; k++) {
      if (k + SG_PREFETCH_AHEAD < n) {
        sg_index ahead = idx[k + SG_PREFETCH_AHEAD];
        sg_prefetch_row(d->xt + ahead * p, p);
      }
      ll += sm_obs(d, theta, tht, idx[k], gsum, eta, ex);
    }
  } else {
    for (int k = 0; k < n; k++) ll += sm_obs(d, theta, tht, (sg_index) start + k, gsum, eta, ex);
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

/* Bohning's bound (Bohning 1992, "Multinomial logistic regression algorithm", Ann. Inst. Statist.
 * Math. 44:197-200) for Firefly Monte Carlo (model.h, flymc.c; Maclaurin & Adams 2014 and the
 * slides "FlyMC" need a lower bound on each L_i whose product collapses; the Jaakkola-Jordan
 * bound of logistic_regression.c covers two classes only). The log-sum-exp of the K logits
 * eta_k = a_i' theta_k has Hessian diag(pi) - pi pi' <= H = (I_K - 1 1' / K) / 2 (Loewner order)
 * everywhere, so by Taylor's theorem about the tangent point psi_k = a_i' t_k at the anchor t,
 *   lse(eta) <= lse(psi) + g' delta + delta' H delta / 2,  g = softmax(psi), delta = eta - psi,
 * and log p(y_i | theta) = eta_y - lse(eta) >= log B_i, equal at theta = t. Every class has its
 * own coefficients (no reference class fixed at 0, which would need (I_{K-1} - 1 1' / K) / 2
 * instead), so H is over all K logits. delta' H delta / 2 = (sum delta_k^2 - (sum delta_k)^2 / K)
 * / 4 is quadratic in theta, and summed over the observations (theta class after class, S = sum
 * a_i a_i')
 *   sum log B_i = c + b' theta - theta' A theta,   A = (I_K - 1 1' / K) / 4 (x) S,
 *   b = sum (e_{y_i} - g_i) (x) a_i + 2 A t,       c = sum_i sum_k g_ik log g_ik - t' A t,
 * since sum g_ik (psi_ik - lse(psi_i)) = sum g log g. Its fixed curvature makes it looser than
 * Jaakkola-Jordan's far from t (more observations bright), but it needs no per-observation
 * curvature: A depends on the anchor not at all, and S is one pass over the population. */

/* One step of the online log-sum-exp: lse = *mx + log(*s) after adding v. */
static inline void sm_lse_add(double v, double *mx, double *s) {
  if (v > *mx) {
    *s = *s * exp(*mx - v) + 1.0;
    *mx = v;
  } else {
    *s += exp(v - *mx);
  }
}

/* log p(y_i | theta) - log B_i(theta; t) = lse(psi) + g' delta + delta' H delta / 2 - lse(eta)
 * (eta_y cancels), in one pass over the classes without scratch (the hooks have no workspace
 * and run in the kernel's threads): both log-sum-exps online, and g' delta = sum exp(psi_k - mx)
 * delta_k / sum exp(psi_k - mx) rescaled with them. At theta = t every delta_k is 0 and both
 * log-sum-exps are the same operations on the same numbers, so the gap is exactly 0 there;
 * elsewhere it is >= 0 up to rounding (about 1e-16 times the logits), which flymc.c reads as a
 * tight bound (a dark observation). */
static inline double sm_gap(const sm_data *d, const double *t, const double *theta, sg_index i) {
  const int p = d->p, K = d->K;
  const double *x = d->xt + i * p;
  double me = R_NegInf, se = 0.0;          /* lse(eta) = me + log(se) */
  double mp = R_NegInf, sp = 0.0, w = 0.0; /* lse(psi) = mp + log(sp), g' delta = w / sp */
  double s1 = 0.0, s2 = 0.0;               /* sum delta_k, sum delta_k^2 */
  for (int k = 0; k < K; k++) {
    const double *th = theta + (sg_index) k * p, *tk = t + (sg_index) k * p;
    double e = 0.0, q = 0.0;
    for (int j = 0; j < p; j++) {
      e += x[j] * th[j];
      q += x[j] * tk[j];
    }
    const double dl = e - q;
    s1 += dl;
    s2 += dl * dl;
    sm_lse_add(e, &me, &se);
    if (q > mp) {
      const double r = exp(mp - q);
      sp = sp * r + 1.0;
      w = w * r + dl;
      mp = q;
    } else {
      const double ex = exp(q - mp);
      sp += ex;
      w += ex * dl;
    }
  }
  return (mp + log(sp)) + w / sp + 0.25 * (s2 - s1 * s1 / K) - (me + log(se));
}

static void sm_lik_bound_gap(const sg_model *m, const double *t, const double *theta,
                             const int *idx, int start, int n, double *gap) {
  const sm_data *d = m->data;
  if (idx) {
    for (int k = 0; k < n; k++) {
      if (k + SG_PREFETCH_AHEAD < n)
        sg_prefetch_row(d->xt + (sg_index) idx[k + SG_PREFETCH_AHEAD] * d->p, d->p);
      gap[k] = sm_gap(d, t, theta, idx[k]);
    }
  } else {
    for (int k = 0; k < n; k++) gap[k] = sm_gap(d, t, theta, (sg_index) start + k);
  }
}

/* Observation i's terms of b and c that depend on its tangent point: b += (e_y - g) (x) a_i,
 * returns sum_k g_k log g_k. Two passes over the classes (the log-sum-exp first, then g from
 * the recomputed psi_k), so no K-vector is stored. */
static inline double sm_tangent(const sm_data *d, const double *t, sg_index i, double *b) {
  const int p = d->p, K = d->K;
  const double *x = d->xt + i * p;
  double mx = R_NegInf, s = 0.0;
  for (int k = 0; k < K; k++) {
    const double *tk = t + (sg_index) k * p;
    double q = 0.0;
    for (int j = 0; j < p; j++) q += x[j] * tk[j];
    sm_lse_add(q, &mx, &s);
  }
  const double lse = mx + log(s);
  const int yk = d->y[i] - 1;
  double c = 0.0;
  for (int k = 0; k < K; k++) {
    const double *tk = t + (sg_index) k * p;
    double q = 0.0;
    for (int j = 0; j < p; j++) q += x[j] * tk[j];
    const double lg = q - lse, g = exp(lg);
    c += g * lg; /* g underflows to 0 only with lg finite: no 0 * Inf */
    const double coef = (k == yk) - g;
    double *bk = b + (sg_index) k * p;
    for (int j = 0; j < p; j++) bk[j] += coef * x[j];
  }
  return c;
}

/* The collapse: one pass over the population for S = sum a_i a_i' (in tiles of SM_TILE x
 * SM_TILE on the stack, since the hook has no workspace: one pass when p <= SM_TILE, as in the
 * paper's p = 11) and, in the first tile's pass, the tangent terms; then A += (I - 1 1'/K)/4 (x) S
 * (O(K^2 p^2)), b += 2 A t, c -= t' A t, with u_k = t_k - mean_l t_l:
 *   (2 A t)_{kj} = sum_m S_jm u_km / 2,  t' A t = sum_k u_k' S u_k / 4.
 * O(n (p^2 + K p) + K^2 p^2), against O(n (K p)^2) for the blocks summed one by one. */
#define SM_TILE 32
static void sm_lik_bound_collapse(const sg_model *m, const double *t, const int *idx, int start,
                                  int n, double *A, double *b, double *c) {
  const sm_data *d = m->data;
  const int p = d->p, K = d->K;
  const sg_index dim = m->dim;
  double S[SM_TILE * SM_TILE], tj[SM_TILE], tm[SM_TILE]; /* class means of t over the tile */
  double csum = 0.0;
  for (int j0 = 0; j0 < p; j0 += SM_TILE) {
    const int nj = p - j0 < SM_TILE ? p - j0 : SM_TILE;
    for (int m0 = 0; m0 < p; m0 += SM_TILE) {
      const int nm = p - m0 < SM_TILE ? p - m0 : SM_TILE;
      const int first = j0 == 0 && m0 == 0;
      memset(S, 0, sizeof S);
      for (int r = 0; r < n; r++) {
        const sg_index i = idx ? (sg_index) idx[r] : (sg_index) start + r;
        if (idx && r + SG_PREFETCH_AHEAD < n)
          sg_prefetch_row(d->xt + (sg_index) idx[r + SG_PREFETCH_AHEAD] * p, p);
        const double *x = d->xt + i * p;
        for (int jj = 0; jj < nj; jj++) {
          const double xj = x[j0 + jj];
          double *Sj = S + jj * SM_TILE;
          for (int mm = 0; mm < nm; mm++) Sj[mm] += xj * x[m0 + mm];
        }
        if (first) csum += sm_tangent(d, t, i, b);
      }
      for (int jj = 0; jj < nj; jj++) {
        double s = 0.0;
        for (int k = 0; k < K; k++) s += t[(sg_index) k * p + j0 + jj];
        tj[jj] = s / K;
      }
      for (int mm = 0; mm < nm; mm++) {
        double s = 0.0;
        for (int k = 0; k < K; k++) s += t[(sg_index) k * p + m0 + mm];
        tm[mm] = s / K;
      }
      const double diag = 0.25 * (1.0 - 1.0 / K), off = -0.25 / K;
      for (int jj = 0; jj < nj; jj++) {
        const int j = j0 + jj;
        for (int mm = 0; mm < nm; mm++) {
          const int mc = m0 + mm;
          const double s = S[jj * SM_TILE + mm];
          for (int l = 0; l < K; l++) {
            double *col = A + ((sg_index) l * p + mc) * dim + j; /* row k p + j below */
            for (int k = 0; k < K; k++) col[(sg_index) k * p] += (k == l ? diag : off) * s;
          }
          for (int k = 0; k < K; k++) {
            const double ukj = t[(sg_index) k * p + j] - tj[jj];
            const double ukm = t[(sg_index) k * p + mc] - tm[mm];
            b[(sg_index) k * p + j] += 0.5 * s * ukm;
            csum -= 0.25 * ukj * s * ukm;
          }
        }
      }
    }
  }
  *c += csum;
}
#undef SM_TILE

/* The likelihood depends on the coefficients only through the differences between classes
 * (adding a vector c to every class's coefficients adds a' c to every logit, and the softmax
 * is unchanged), and the prior is N(0, prior_sd^2) on every coefficient (or normal with each
 * covariate's mean and sd shared by the classes, sm_free_normal()): the class mean of each
 * covariate's coefficients is a free direction (model.h), whose posterior is its prior. The
 * projection subtracts, for every covariate j, the mean over the classes of theta_kj. Without it
 * the particles' diagonal metric spans the free directions (about prior_sd^2 / K per
 * coordinate) while the identified widths fall as 1/sqrt(n), and the moves become unstable or
 * tiny on large data (inst/design.md). */
static void sm_free_project(const sg_model *m, double *x) {
  const sm_data *d = m->data;
  const int p = d->p, K = d->K;
  for (int j = 0; j < p; j++) {
    double s = 0.0;
    for (int k = 0; k < K; k++) s += x[(sg_index) k * p + j];
    s /= K;
    for (int k = 0; k < K; k++) x[(sg_index) k * p + j] -= s;
  }
}

/* With blocks, the free directions keep their exact Gibbs step (model.h) when every
 * coefficient's prior is normal and each covariate's coefficients share their mean and sd in
 * every class: the class mean of covariate j is then N(m_j, s_j^2 / K) and independent of the
 * differences. Returns 1 and sets the per-coordinate means and sds if so, 0 otherwise (a
 * Student-t prior: the free directions are then sampled like the others). */
static int sm_free_normal(sg_model *m, const sg_prior *blocks, int p, int K) {
  const int dim = K * p;
  double *mean = (double *) R_alloc(dim, sizeof(double)), *sd = (double *) R_alloc(dim, sizeof(double));
  for (int b = 0; b < blocks->n_blocks; b++) {
    const sg_prior_block *k = &blocks->block[b];
    if (k->kind != SG_PRIOR_NORMAL) return 0;
    for (int j = k->start; j < k->start + k->n; j++) {
      mean[j] = k->location;
      sd[j] = k->scale;
    }
  }
  for (int k = 1; k < K; k++)
    for (int j = 0; j < p; j++)
      if (mean[(sg_index) k * p + j] != mean[j] || sd[(sg_index) k * p + j] != sd[j]) return 0;
  m->free_mean = mean;
  m->free_sd_each = sd;
  return 1;
}

int sg_softmax_regression_init(sg_model *m, const double *xt, const int *y, int p, int n, int K,
                               sg_coef_prior prior, sg_status *st) {
  if (p < 1 || n < 0 || K < 2)
    return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns or classes.");
  if ((double) K * p > INT_MAX / 2)
    return sg_fail(st, SG_ERR_INPUT, "`model` has too many parameters (classes x design columns).");
  /* A code out of range would read outside theta: check them all (one pass, cheap next to any
   * estimator's work). */
  for (sg_index i = 0; i < n; i++)
    if (y[i] < 1 || y[i] > K)
      return sg_fail(st, SG_ERR_INPUT,
                     "`model` data are corrupt: class code out of range at observation %d.",
                     (int) i + 1);
  if (sg_coef_prior_check(&prior, K * p, st)) return st->code;

  sm_data *d = (sm_data *) R_alloc(1, sizeof(sm_data));
  d->xt = xt;
  d->y = y;
  d->p = p;
  d->K = K;
  d->prior = prior;
  d->max_norm = NA_REAL;

  sg_model_define(m, K * p, n, d, sg_coef_model_prior_draw, sg_coef_model_log_prior);
  m->scratch_bytes = sm_scratch_bytes(p, K);
  m->log_lik = sm_log_lik;
  m->log_lik_range = sm_log_lik_range;
  m->lik_bound_collapse = sm_lik_bound_collapse;
  m->lik_bound_gap = sm_lik_bound_gap;
  if (K > 1 && (!prior.blocks || sm_free_normal(m, prior.blocks, p, K))) {
    /* one class: no likelihood at all, nothing identified */
    m->free_project = sm_free_project;
    m->free_sd = prior.sd;
  }
  return SG_OK;
}
