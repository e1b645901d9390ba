/* Bayesian Gaussian mixture with diagonal covariances (paper Appendix B.3), latent assignments
 * summed out:
 *   p(y_i | theta) = sum_k beta_k prod_j N(y_ij; mu_kj, sigma2_kj),  k = 1..K, j = 1..d,
 *   beta ~ Dirichlet(alpha), sigma2_kj ~ InvGamma(shape a, scale b), mu_kj | sigma2_kj ~ N(0, r sigma2_kj)
 * (the paper: alpha = 1, a = b = 1, r = 4).
 *
 * The samplers need a density on R^dim, so the constrained parameters are transformed:
 *   z_k = log(beta_k / beta_K), k < K   (additive log-ratio; beta = softmax(z_1, ..., z_{K-1}, 0))
 *   s_kj = log sigma2_kj
 * and log_prior includes the log-Jacobians. theta = (z_1..z_{K-1}, mu (K x d, component after
 * component), s (K x d, likewise)): (K - 1) + 2 K d parameters, 24 for the paper's K = 5, d = 2.
 *
 * Log-Jacobians. Dirichlet: the density of beta_1..beta_{K-1} is Gamma(K alpha) / Gamma(alpha)^K
 * prod_k beta_k^(alpha - 1) and |d beta_{1:K-1} / d z| = prod_k beta_k (all K), so
 *   log p(z) = lgamma(K alpha) - K lgamma(alpha) + alpha sum_k log beta_k,
 *   d/dz_j = alpha (1 - K beta_j).
 * Inverse gamma: d sigma2 / ds = sigma2, so log p(s) = a log b - lgamma(a) - a s - b exp(-s). */
#include "model.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <Rmath.h>
#include <string.h>

typedef struct {
  const double *yt; /* d x n, column i = observation i */
  int K, d;
  double alpha, shape, scale, ratio; /* prior: Dirichlet(alpha), InvGamma(shape, scale), N(0, ratio sigma2) */
} gm_data;

/* The workspace scratch, filled from theta at every call (gm_scratch_bytes() of it). */
typedef struct {
  double *log_beta; /* K */
  double *inv_var;  /* K x d: exp(-s_kj) */
  double *norm;     /* K: log beta_k - sum_j (log(2 pi) + s_kj) / 2 */
  double *c;        /* K: log beta_k + log N(y_i; mu_k, sigma2_k) of one observation */
  double *ex;       /* K: exp(c_k - max_l c_l) of one observation */
  double *gsum;     /* K + 2 K d: the gradient summed over a call's observations (gm_log_lik) */
  double *copy;     /* K (2 d + 1): theta's blocks while they are permuted */
  /* the jump proposal's (gm_jump_log_q; K <= GM_JUMP_MAX_K, else none): its table T (K^2),
   * sums over subsets (2^K), and the population's factors (gm_pop_factors: K + 4 K d) */
  double *jump_T, *jump_f, *jump_pop;
  /* the reference's gradient (gm_ref_log_density): the permanent's backward sums (2^K) and
   * marginals (K^2) */
  double *jump_b, *jump_P;
  /* gm_canonicalize's: the reference and its precisions (2 K d each), the spreads (2 d), the
   * costs (K^2) and the assignment's potentials (3 (K + 1)) */
  double *ref, *prec, *scale, *cost, *hung;
  int *order;       /* K: canonical order of the components (gm_canonicalize) */
  int *hung_int;    /* 3 (K + 1): the assignment's matching, path and marks */
} gm_scratch;

static size_t gm_jump_doubles(int K, int D) {
  return K > 1 && K <= GM_JUMP_MAX_K
             ? (size_t) 2 * K * K + ((size_t) 2 << K) + (size_t) K + (size_t) 4 * K * D
             : 0;
}

static size_t gm_align_doubles(int K, int D) {
  return (size_t) 4 * K * D + (size_t) 2 * D + (size_t) K * K + (size_t) 3 * (K + 1);
}

static size_t gm_scratch_bytes(int K, int D) {
  return ((size_t) K * (4 + D) + (size_t) 2 * K * (2 * D + 1) + gm_jump_doubles(K, D) +
          gm_align_doubles(K, D)) * sizeof(double) + (size_t) (K + 3 * (K + 1)) * sizeof(int);
}

static gm_scratch gm_scratch_of(const gm_data *d, sg_workspace *ws) {
  const size_t K = d->K, D = d->d;
  gm_scratch g;
  g.log_beta = ws->scratch;
  g.inv_var = g.log_beta + K;
  g.norm = g.inv_var + K * D;
  g.c = g.norm + K;
  g.ex = g.c + K;
  g.gsum = g.ex + K;
  g.copy = g.gsum + K * (2 * D + 1);
  g.jump_T = g.jump_f = g.jump_pop = g.jump_b = g.jump_P = NULL;
  if (gm_jump_doubles(d->K, d->d)) {
    g.jump_T = g.copy + K * (2 * D + 1);
    g.jump_f = g.jump_T + K * K;
    g.jump_pop = g.jump_f + ((size_t) 1 << K);
    g.jump_b = g.jump_pop + K + 4 * K * D;
    g.jump_P = g.jump_b + ((size_t) 1 << K);
  }
  g.ref = g.copy + K * (2 * D + 1) + gm_jump_doubles(d->K, d->d);
  g.prec = g.ref + 2 * K * D;
  g.scale = g.prec + 2 * K * D;
  g.cost = g.scale + 2 * D;
  g.hung = g.cost + K * K;
  g.order = (int *) (g.ref + gm_align_doubles(d->K, d->d));
  g.hung_int = g.order + K;
  return g;
}

#define GM_LOG_2PI 1.837877066409345483560659472811

/* log beta_k for k = 1..K from z (z_K = 0): log beta_k = z_k - log(1 + sum_{l<K} exp(z_l)). */
static void gm_log_weights(const gm_data *d, const double *z, double *log_beta) {
  for (int k = 0; k < d->K - 1; k++) log_beta[k] = z[k];
  log_beta[d->K - 1] = 0.0;
  double lse = sg_log_sum_exp(log_beta, d->K);
  for (int k = 0; k < d->K; k++) log_beta[k] -= lse;
}

/* A positive gamma draw: rgamma can return 0 for shape << 1, whose log would be -Inf. */
static double gm_rgamma(double shape, double scale) {
  double g = Rf_rgamma(shape, scale);
  return g > DBL_MIN ? g : DBL_MIN;
}

static void gm_prior_draw(const sg_model *m, sg_workspace *ws, double *theta) {
  (void) ws;
  const gm_data *d = m->data;
  int K = d->K, Kd = K * d->d;
  double *z = theta, *mu = theta + (K - 1), *s = mu + Kd;
  /* Dirichlet as normalised gammas; z only needs their log-ratios */
  double last = log(gm_rgamma(d->alpha, 1.0));
  for (int k = 0; k < K - 1; k++) z[k] = log(gm_rgamma(d->alpha, 1.0)) - last;
  for (int kj = 0; kj < Kd; kj++) {
    /* 1 / sigma2 ~ Gamma(shape, rate = scale) */
    s[kj] = -log(gm_rgamma(d->shape, 1.0 / d->scale));
    mu[kj] = sqrt(d->ratio * exp(s[kj])) * norm_rand();
  }
}

static double gm_log_prior(const sg_model *m, sg_workspace *ws, const double *theta, double *grad) {
  const gm_data *d = m->data;
  gm_scratch g = gm_scratch_of(d, ws);
  int K = d->K, Kd = K * d->d;
  const double *z = theta, *mu = theta + (K - 1), *s = mu + Kd;
  double lp = 0.0;
  if (K > 1) {
    double *lb = g.log_beta, sum = 0.0;
    gm_log_weights(d, z, lb);
    for (int k = 0; k < K; k++) sum += lb[k];
    lp += lgammafn(K * d->alpha) - K * lgammafn(d->alpha) + d->alpha * sum;
    if (grad)
      for (int k = 0; k < K - 1; k++) grad[k] += d->alpha * (1.0 - K * exp(lb[k]));
  }
  double a = d->shape, b = d->scale, r = d->ratio;
  double ig_norm = a * log(b) - lgammafn(a), n_norm = -0.5 * log(2.0 * M_PI * r);
  for (int kj = 0; kj < Kd; kj++) {
    double e = exp(-s[kj]), q = mu[kj] * mu[kj] * e / r;
    lp += ig_norm - a * s[kj] - b * e      /* log sigma2 ~ log-InvGamma */
        + n_norm - 0.5 * s[kj] - 0.5 * q;  /* mu | sigma2 ~ N(0, r sigma2) */
    if (grad) {
      grad[K - 1 + kj] -= mu[kj] * e / r;
      grad[K - 1 + Kd + kj] += -a + b * e - 0.5 + 0.5 * q;
    }
  }
  return lp;
}

/* log p(y_i | theta) by log-sum-exp over the components; with a gradient, the responsibilities
 * w_k = p(component k | y_i, theta) give
 *   d/d mu_kj = w_k (y_ij - mu_kj) / sigma2_kj,  d/d s_kj = w_k ((y_ij - mu_kj)^2 / sigma2_kj - 1) / 2,
 *   d/d z_k = w_k - beta_k.
 * gsum (K + 2 K d: w_k, then the mu and s blocks without the 1/2) receives these sums, unscaled.
 * Speed: exp is most of the cost, so each exp(c_k - max) is computed once and serves both the
 * log-sum-exp and w_k = exp(c_k - max) / sum (the old code took a second exp(c_k - ll) per
 * component). The sums go to the call's own restrict-qualified scratch, and scale and 1/2
 * multiply them once per call. D is a parameter so that gm_log_lik() can pass the constant 2
 * (the usual case), which unrolls the j loops: measured 3-6% faster than the general loop at
 * d = 2 (forcing the general case inline as well measured no gain). */
/* below about -745.13, exp(x) rounds to 0 */
#define GM_EXP_ZERO (-746.0)

static inline double gm_obs(const gm_scratch *g, const double *restrict mu, const double *restrict y,
                            int K, int D, double *restrict gsum) {
  const double *restrict iv = g->inv_var, *restrict norm = g->norm;
  double *restrict c = g->c, *restrict ex = g->ex;
  double mx = R_NegInf;
  int top = 0;
  for (int k = 0; k < K; k++) {
    double q = 0.0;
    for (int j = 0; j < D; j++) {
      double e = y[j] - mu[k * D + j];
      q += e * e * iv[k * D + j];
    }
    c[k] = norm[k] - 0.5 * q;
    if (c[k] > mx) {
      mx = c[k];
      top = k;
    }
  }
  /* An infinite max (densities that overflow or all underflow) is the value, as in
   * sg_log_sum_exp, and the weights are exp(c_k - max) as they were: NaN or 0. The largest
   * component's exp(mx - mx) is 1 (NaN if mx is infinite), no call needed. */
  const int finite = isfinite(mx);
  const double one = finite ? 1.0 : NAN;
  double s = 0.0;
  for (int k = 0; k < K; k++) {
    /* exp of less than GM_EXP_ZERO is 0 exactly, but takes libm's slow underflow path: a
     * component hundreds of sds away (an empty one, data in raw units) cost a third of the
     * time of a mixture with such components */
    const double e = c[k] - mx;
    ex[k] = k == top ? one : (e < GM_EXP_ZERO ? 0.0 : exp(e));
    s += ex[k];
  }
  if (gsum) {
    const double inv = finite ? 1.0 / s : 1.0;
    double *restrict gw = gsum, *restrict gmu = gsum + K, *restrict gs = gmu + K * D;
    for (int k = 0; k < K; k++) {
      double w = ex[k] * inv;
      gw[k] += w;
      for (int j = 0; j < D; j++) {
        double r = y[j] - mu[k * D + j], e = r * iv[k * D + j];
        gmu[k * D + j] += w * e;
        gs[k * D + j] += w * (e * r - 1.0);
      }
    }
  }
  return finite ? mx + log(s) : mx;
}

/* The sum over the observations (idx or start..start+n-1) of gm_obs. */
static inline double gm_sum(const gm_data *d, const gm_scratch *g, const double *mu, const int *idx,
                            int start, int n, int K, int D, double *gsum) {
  double ll = 0.0;
  if (idx) {
    for (int i = 0; i < n; i++) {
      if (i + SG_PREFETCH_AHEAD < n) sg_prefetch_row(d->yt + (sg_index) idx[i + SG_PREFETCH_AHEAD] * D, D);
      ll += gm_obs(g, mu, d->yt + (sg_index) idx[i] * D, K, D, gsum);
    }
  } else {
    for (int i = 0; i < n; i++) ll += gm_obs(g, mu, d->yt + ((sg_index) start + i) * D, K, D, gsum);
  }
  return ll;
}

static double gm_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                         int start, int n, double scale, double *grad) {
  const gm_data *d = m->data;
  gm_scratch g = gm_scratch_of(d, ws);
  int K = d->K, D = d->d, Kd = K * D;
  const double *mu = theta + (K - 1), *s = mu + Kd;
  /* per-call constants: log weights, precisions and each component's normalising term */
  gm_log_weights(d, theta, g.log_beta);
  for (int k = 0; k < K; k++) {
    double ls = 0.0;
    for (int j = 0; j < D; j++) {
      g.inv_var[k * D + j] = exp(-s[k * D + j]);
      ls += s[k * D + j];
    }
    g.norm[k] = g.log_beta[k] - 0.5 * (D * GM_LOG_2PI + ls);
  }
  double *gsum = NULL;
  if (grad) {
    gsum = g.gsum;
    memset(gsum, 0, (size_t) K * (2 * D + 1) * sizeof(double));
  }
  double ll = D == 2 ? gm_sum(d, &g, mu, idx, start, n, K, 2, gsum)
                     : gm_sum(d, &g, mu, idx, start, n, K, D, gsum);
  if (grad) {
    /* d/dz_k: sum_i w_ik - n beta_k (the -beta_k part summed over the observations at once) */
    for (int k = 0; k < K - 1; k++) grad[k] += scale * gsum[k] - scale * n * exp(g.log_beta[k]);
    for (int kj = 0; kj < Kd; kj++) {
      grad[K - 1 + kj] += scale * gsum[K + kj];
      grad[K - 1 + Kd + kj] += 0.5 * scale * gsum[K + Kd + kj];
    }
  }
  return ll;
}

/* Relabels theta: component k of the result is component ord[k] of theta. The posterior is
 * symmetric under relabelling and the likelihood of any data unchanged, so this moves a
 * particle to the same point of another, equivalent mode and its weights stay valid. The map
 * permutes the mean and log-variance blocks and takes the log-ratios z_k = log(beta_k / beta_K)
 * to the new reference component, a linear map with integer entries and |det| = 1, so densities
 * are unchanged. */
static void gm_relabel(const gm_data *d, gm_scratch *g, double *theta, const int *ord) {
  const int K = d->K, D = d->d;
  int same = 1;
  for (int k = 0; k < K; k++) same &= ord[k] == k;
  if (same) return;
  double *z = theta, *mu = theta + (K - 1), *s = mu + (size_t) K * D;
  double *zf = g->copy, *mu0 = g->copy + K, *s0 = mu0 + (size_t) K * D;
  for (int k = 0; k < K - 1; k++) zf[k] = z[k];
  zf[K - 1] = 0.0;
  memcpy(mu0, mu, (size_t) K * D * sizeof(double));
  memcpy(s0, s, (size_t) K * D * sizeof(double));
  for (int k = 0; k < K; k++) {
    memcpy(mu + (size_t) k * D, mu0 + (size_t) ord[k] * D, D * sizeof(double));
    memcpy(s + (size_t) k * D, s0 + (size_t) ord[k] * D, D * sizeof(double));
  }
  const double ref = zf[ord[K - 1]];
  for (int k = 0; k < K - 1; k++) z[k] = zf[ord[k]] - ref;
}

/* Orders the components by the key u'mu_k, u_j = phi^-j (phi the golden ratio: 1, 0.618,
 * 0.382, ...): a labelling that depends on theta alone, gm_canonicalize's start. */
#define GM_KEY_RATIO 0.6180339887498948482
static void gm_key_order(const gm_data *d, gm_scratch *g, double *theta) {
  const int K = d->K, D = d->d;
  const double *mu = theta + (K - 1);
  int *ord = g->order;
  double *key = g->c; /* K, free between likelihood calls */
  for (int k = 0; k < K; k++) {
    double u = 1.0;
    ord[k] = k;
    key[k] = 0.0;
    for (int j = 0; j < D; j++, u *= GM_KEY_RATIO) key[k] += u * mu[(size_t) k * D + j];
  }
  for (int i = 1; i < K; i++) { /* insertion sort: K is small */
    int v = ord[i], j = i - 1;
    while (j >= 0 && key[ord[j]] > key[v]) {
      ord[j + 1] = ord[j];
      j--;
    }
    ord[j + 1] = v;
  }
  gm_relabel(d, g, theta, ord);
}

/* The assignment of the K components (rows of cost, K x K) to the K reference slots (columns)
 * of least total cost, by the Hungarian algorithm with potentials (O(K^3); ties go to the lower
 * index): ord[c] = the component put in slot c. */
static void gm_assign(const double *cost, int K, double *hung, int *hung_int, int *ord) {
  double *u = hung, *v = u + K + 1, *minv = v + K + 1;
  int *p = hung_int, *way = p + K + 1, *used = way + K + 1;
  for (int j = 0; j <= K; j++) u[j] = v[j] = 0.0, p[j] = way[j] = 0;
  for (int i = 1; i <= K; i++) {
    int j0 = 0;
    p[0] = i;
    for (int j = 0; j <= K; j++) minv[j] = R_PosInf, used[j] = 0;
    do {
      int i0 = p[j0], j1 = 0;
      double delta = R_PosInf;
      used[j0] = 1;
      for (int j = 1; j <= K; j++)
        if (!used[j]) {
          const double cur = cost[(size_t) (i0 - 1) * K + (j - 1)] - u[i0] - v[j];
          if (cur < minv[j]) minv[j] = cur, way[j] = j0;
          if (minv[j] < delta) delta = minv[j], j1 = j;
        }
      for (int j = 0; j <= K; j++)
        if (used[j]) u[p[j]] += delta, v[j] -= delta;
        else minv[j] -= delta;
      j0 = j1;
    } while (p[j0] != 0);
    do {
      const int j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0);
  }
  for (int c = 0; c < K; c++) ord[c] = p[c + 1] - 1;
}

/* Puts the M particles (rows of theta) in one labelling, so that they gather in one mode whose
 * covariance is then the preconditioner's rather than the spread between modes (measured: with
 * particles in label-switched modes the adapted step fell to 0.01 widths and SGAIS was 9-12 nats
 * low on 3 to 5 components). Any fixed rule (order by a key) has a boundary between labellings,
 * and where it cuts through the posterior's mode the particles of that one mode straddle it
 * and the preconditioner again sees two: ordering by the first mean coordinate did so whenever
 * clusters differ only in other coordinates (4 clusters on a square: 13 nats low, 45 s; rotated
 * by 0.3 rad, 0.2 nats, 6 s), and any other key ties on other data. So the labels follow the
 * population (pivotal relabelling, as in Marin, Mengersen and Robert 2005, and Stephens 2000):
 * each particle is first put in the key order of gm_key_order, then relabelled to match the
 * components of a reference at least cost (gm_assign), GM_ALIGN_ROUNDS times or until no label
 * changes: first the particle of largest weight (logw; NULL: the first), by the squared
 * differences of the means, each dimension in units of its spread over the components and
 * particles; then the particles' weighted mean, by the squared differences of the means and
 * log-variances in units of each component's spread over the particles (the log-density of a
 * Gaussian fitted to each component, so that a coordinate the components share, whose
 * differences are noise, does not decide). Each particle only moves to an equivalent point, so
 * the weights and every density stay valid; the labelling depends on the population, not on
 * the particles' order or on threads. */
#define GM_ALIGN_ROUNDS 4

/* Relabels th so that its components match the slots of the reference ref (means, then
 * log-variances: 2 K d) at least cost, the squared differences weighted by prec (gm_assign).
 * Returns 1 if the labels changed, 0 if not or if th cannot be compared (a non-finite cost:
 * it keeps its labels). */
static int gm_align(const gm_data *d, gm_scratch *g, double *th, const double *ref,
                    const double *prec) {
  const int K = d->K, D = d->d;
  const size_t Kd = (size_t) K * D;
  int finite = 1, changed = 0;
  for (int k = 0; k < K; k++)
    for (int c = 0; c < K; c++) {
      double q = 0.0;
      for (int b = 0; b < 2 * D; b++) {
        const size_t off = (b / D) * Kd + (size_t) (b % D);
        const double e = th[(K - 1) + off + (size_t) k * D] - ref[off + (size_t) c * D];
        q += e * e * prec[off + (size_t) c * D];
      }
      g->cost[(size_t) k * K + c] = q;
      finite &= R_FINITE(q);
    }
  if (!finite) return 0;
  gm_assign(g->cost, K, g->hung, g->hung_int, g->order);
  for (int c = 0; c < K; c++) changed |= g->order[c] != c;
  gm_relabel(d, g, th, g->order);
  return changed;
}

/* region (model.h): a flag (1: C is defined), then the reference and precisions of the last
 * assignment of gm_canonicalize (2 K d each). C is the set of points whose least-cost matching
 * to the reference (gm_align) is the identity: almost every point has exactly one relabelling
 * there, since relabelling a point permutes the rows of its cost matrix. */
static size_t gm_region_size(int K, int D) {
  return 1 + (size_t) 4 * K * D;
}

static void gm_canonicalize(const sg_model *m, sg_workspace *ws, double *theta, int M,
                            const double *logw, double *region) {
  const gm_data *d = m->data;
  gm_scratch g = gm_scratch_of(d, ws);
  const int K = d->K, D = d->d, dim = m->dim;
  const size_t Kd = (size_t) K * D;
  if (region) region[0] = 0.0;
  if (K < 2) return;
  for (int i = 0; i < M; i++) gm_key_order(d, &g, theta + (size_t) i * dim);
  if (M < 2) return;
  int pivot = 0;
  double top = R_NegInf;
  for (int i = 0; i < M; i++)
    if (logw && logw[i] > top) top = logw[i], pivot = i;
  /* each dimension's spread over the components and particles (a floor for the precisions) */
  for (int b = 0; b < 2 * D; b++) {
    double s1 = 0.0, s2 = 0.0;
    for (int i = 0; i < M; i++)
      for (int k = 0; k < K; k++) {
        const double x = theta[(size_t) i * dim + (K - 1) + (b / D) * Kd + (size_t) k * D + b % D];
        s1 += x;
        s2 += x * x;
      }
    const double n = (double) M * K, v = (s2 - s1 * s1 / n) / n;
    g.scale[b] = v > 0.0 && R_FINITE(v) ? v : 1.0;
  }
  memcpy(g.ref, theta + (size_t) pivot * dim + (K - 1), 2 * Kd * sizeof(double));
  for (size_t t = 0; t < 2 * Kd; t++) g.prec[t] = t < Kd ? 1.0 / g.scale[t % D] : 0.0;
  for (int round = 0; round < GM_ALIGN_ROUNDS; round++) {
    int changed = 0;
    for (int i = 0; i < M; i++) changed |= gm_align(d, &g, theta + (size_t) i * dim, g.ref, g.prec);
    if (region) { /* the reference every particle was just matched to */
      region[0] = 1.0;
      memcpy(region + 1, g.ref, 2 * Kd * sizeof(double));
      memcpy(region + 1 + 2 * Kd, g.prec, 2 * Kd * sizeof(double));
    }
    if (round > 0 && !changed) break;
    /* the new reference: the particles' weighted mean and, per component, spread */
    double wsum = 0.0;
    memset(g.ref, 0, 2 * Kd * sizeof(double));
    memset(g.prec, 0, 2 * Kd * sizeof(double));
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < M; i++) {
        const double *th = theta + (size_t) i * dim + (K - 1);
        const double w = logw ? exp(logw[i] - top) : 1.0;
        if (!(w > 0.0) || !sg_all_finite(th, (int) (2 * Kd))) continue;
        if (pass == 0) wsum += w;
        for (size_t t = 0; t < 2 * Kd; t++) {
          if (pass == 0) {
            g.ref[t] += w * th[t];
          } else {
            const double e = th[t] - g.ref[t] / wsum;
            g.prec[t] += w * e * e;
          }
        }
      }
    if (!(wsum > 0.0)) break;
    for (size_t t = 0; t < 2 * Kd; t++) {
      const double floor_v = 1e-6 * g.scale[(t / Kd) * D + t % D], v = g.prec[t] / wsum;
      g.ref[t] /= wsum;
      g.prec[t] = 1.0 / (v > floor_v ? v : floor_v);
    }
  }
}

static int gm_to_region(const sg_model *m, sg_workspace *ws, const double *region,
                        double *theta) {
  const gm_data *d = m->data;
  if (!(region[0] > 0.0)) return 0;
  gm_scratch g = gm_scratch_of(d, ws);
  const size_t Kd = (size_t) d->K * d->d;
  return gm_align(d, &g, theta, region + 1, region + 1 + 2 * Kd);
}

/* Jump proposals (model.h). jump_prepare clusters the points by k-means into k = 1, ..., K
 * clusters (standardised dimensions; k-means++ starts from a fixed stream, the best of
 * GM_KMEANS_STARTS by the within-cluster sum of squares), keeps each cluster's share f_c,
 * mean m_c and variance v_c, and of these K clusterings the one whose allocation the model
 * itself finds most probable (gm_clusters_log_marginal): a guess at where the posterior puts
 * its components, the others left empty. Always taking k = K misleads when the data hold
 * fewer clusters than components: k-means then splits a real cluster, and the proposal pulls
 * particles into a configuration of low posterior mass at lambda = 1 (scale(faithful), K = 4:
 * one AIS run 23.7 nats low, the population spread over two modes and the step size a tenth
 * of that of runs without jumps).
 *
 * jump_propose redraws all of theta from the mixture
 *   q = p P + (1 - p) Q,  p = GM_JUMP_POP (with pop; without it the prior takes its place),
 * where P is the particles' Gaussian pop factored by component (gm_pop_factors: it keeps the
 * proposal able to return to the mode the particles are in, so that they may leave it) and Q is the posterior of the
 * tempered target if component k held exactly the observations of cluster k, n_c = n f_c of
 * them, n the observations in the target (n_obs: lambda N in AIS): the conjugate update of the
 * prior with each cluster's count, mean and variance,
 *   beta ~ Dirichlet(alpha + n_c),  sigma2_kj ~ InvGamma(a + n_c / 2, b_cj),
 *   mu_kj | sigma2_kj ~ N(n_c m_cj / kappa_c, sigma2_kj / kappa_c),  kappa_c = 1 / r + n_c,
 *   b_cj = b + n_c v_cj / 2 + (n_c / r) m_cj^2 / (2 kappa_c),
 * the prior itself for a component without a cluster. When the clusters are separated the
 * likelihood's responsibilities are nearly hard and Q is close to the tempered posterior of
 * the mode that puts one component on each cluster, whatever lambda: where tempering from the
 * prior leaves a component empty beside one that covers two clusters (`faithful` in its raw
 * units), Q proposes the other mode with the widths it has. The posterior is symmetric under
 * relabelling and the particles are kept canonical (gm_canonicalize), so q is the density of
 * the canonical point: q summed over the K! relabellings of its argument. P and Q are both
 * products over components of a density of that component's block times a Dirichlet on the
 * weights, so each sum is a permanent, computed by a sum over subsets in O(2^K K): jumps need
 * K <= GM_JUMP_MAX_K. All draws come from rng (the particle's stream: results do not depend
 * on threads). */
#define GM_JUMP_POP 0.5
#define GM_KMEANS_STARTS 5
#define GM_KMEANS_ITERATIONS 50
#define GM_CEM_ITERATIONS 50

/* The count and mean (C x D) of the points x (n_pts x D) with each label 0..C-1 (a mean of 0
 * for a label without points), for k-means and classification EM. */
static void gm_label_means(const double *x, int n_pts, int D, int C, const int *label,
                           double *mean, int *count) {
  for (int c = 0; c < C; c++) count[c] = 0;
  memset(mean, 0, (size_t) C * D * sizeof(double));
  for (int p = 0; p < n_pts; p++) {
    count[label[p]]++;
    for (int j = 0; j < D; j++) mean[(size_t) label[p] * D + j] += x[(size_t) p * D + j];
  }
  for (int c = 0; c < C; c++)
    for (int j = 0; j < D; j++)
      if (count[c] > 0) mean[(size_t) c * D + j] /= count[c];
}

/* k-means of the n_pts standardised points x (n_pts x D) into C clusters: the labels of the
 * best of GM_KMEANS_STARTS k-means++ starts in best_label. centre: C x D; dist: n_pts; label:
 * n_pts; count: C. */
static void gm_kmeans(const double *x, int n_pts, int D, int C, sg_rng *rng, double *centre,
                      double *dist, int *label, int *count, int *best_label) {
  double best_sse = R_PosInf;
  for (int start = 0; start < GM_KMEANS_STARTS; start++) {
    /* k-means++: each new centre a point drawn with probability proportional to its squared
     * distance from the nearest centre so far */
    for (int c = 0; c < C; c++) {
      int pick = 0;
      if (c == 0) {
        pick = (int) sg_rng_index(rng, (uint32_t) n_pts);
      } else {
        double total = 0.0;
        for (int p = 0; p < n_pts; p++) total += dist[p];
        double u = sg_rng_unif(rng) * total;
        for (pick = 0; pick < n_pts - 1; pick++) {
          u -= dist[pick];
          if (u < 0.0) break;
        }
      }
      memcpy(centre + (size_t) c * D, x + (size_t) pick * D, D * sizeof(double));
      for (int p = 0; p < n_pts; p++) {
        double q = 0.0;
        for (int j = 0; j < D; j++) {
          const double e = x[(size_t) p * D + j] - centre[(size_t) c * D + j];
          q += e * e;
        }
        if (c == 0 || q < dist[p]) dist[p] = q;
      }
    }
    double sse = 0.0;
    for (int it = 0; it < GM_KMEANS_ITERATIONS; it++) {
      int changed = 0;
      sse = 0.0;
      for (int p = 0; p < n_pts; p++) {
        int lab = 0;
        double dmin = R_PosInf;
        for (int c = 0; c < C; c++) {
          double q = 0.0;
          for (int j = 0; j < D; j++) {
            const double e = x[(size_t) p * D + j] - centre[(size_t) c * D + j];
            q += e * e;
          }
          if (q < dmin) {
            dmin = q;
            lab = c;
          }
        }
        changed |= it == 0 || label[p] != lab;
        label[p] = lab;
        sse += dmin;
      }
      if (!changed) break;
      gm_label_means(x, n_pts, D, C, label, centre, count);
    }
    if (sse < best_sse) {
      best_sse = sse;
      memcpy(best_label, label, (size_t) n_pts * sizeof(int));
    }
  }
}

/* Refines the labels (0..C-1) of the n_pts standardised points x by classification EM under
 * the model's own family, a mixture of diagonal Gaussians: each point goes to the cluster c
 * that maximises log f_c + log N(x; m_c, diag v_c), then each cluster's share, mean and
 * variance are recomputed, until no label changes. k-means measures spherical distance, so
 * where a cluster is tilted (`faithful`) it cuts it where the model would not, and the
 * allocation it scores is not the one the posterior puts its mass near. Clusters of fewer than
 * 2 points are dropped (their points go elsewhere). mean, var: C x D; lf: C; count: C. */
static void gm_cem(const double *x, int n_pts, int D, int C, int *label, double *mean,
                   double *var, double *lf, int *count) {
  for (int it = 0; it < GM_CEM_ITERATIONS; it++) {
    gm_label_means(x, n_pts, D, C, label, mean, count);
    memset(var, 0, (size_t) C * D * sizeof(double));
    for (int p = 0; p < n_pts; p++)
      for (int j = 0; j < D; j++) {
        const double e = x[(size_t) p * D + j] - mean[(size_t) label[p] * D + j];
        var[(size_t) label[p] * D + j] += e * e;
      }
    for (int c = 0; c < C; c++) {
      lf[c] = count[c] >= 2 ? log((double) count[c] / n_pts) : R_NegInf;
      for (int j = 0; j < D; j++) {
        /* standardised units: a thousandth of the data's variance at least */
        const double v = count[c] >= 2 ? var[(size_t) c * D + j] / (count[c] - 1) : 1.0;
        var[(size_t) c * D + j] = v > 1e-3 ? v : 1e-3;
        lf[c] -= 0.5 * log(var[(size_t) c * D + j]);
      }
    }
    int changed = 0;
    for (int p = 0; p < n_pts; p++) {
      int lab = label[p];
      double best = R_NegInf;
      for (int c = 0; c < C; c++) {
        if (lf[c] == R_NegInf) continue;
        double v = lf[c];
        for (int j = 0; j < D; j++) {
          const double e = x[(size_t) p * D + j] - mean[(size_t) c * D + j];
          v -= 0.5 * e * e / var[(size_t) c * D + j];
        }
        if (v > best) {
          best = v;
          lab = c;
        }
      }
      changed |= lab != label[p];
      label[p] = lab;
    }
    if (!changed) break;
  }
}

/* The clusters of labels 0..C-1 in aux's layout (C, then f_c, m_c (D), log v_c (D) for each),
 * in the data's units; clusters of fewer than 2 points are dropped. sd: the points' sd. */
static void gm_cluster_summary(const gm_data *d, const int *pts, int n_pts, const int *label,
                               int C, const double *sd, double *out) {
  const int D = d->d;
  int kept = 0;
  for (int c = 0; c < C; c++) {
    double *fc = out + 1 + (size_t) kept * (2 * D + 1), *mc = fc + 1, *lv = mc + D;
    int nc = 0;
    for (int p = 0; p < n_pts; p++) nc += label[p] == c;
    if (nc < 2) continue;
    *fc = (double) nc / n_pts;
    for (int j = 0; j < D; j++) {
      double mu = 0.0, ss = 0.0;
      for (int p = 0; p < n_pts; p++)
        if (label[p] == c) mu += d->yt[(sg_index) pts[p] * D + j];
      mu /= nc;
      for (int p = 0; p < n_pts; p++)
        if (label[p] == c) {
          const double e = d->yt[(sg_index) pts[p] * D + j] - mu;
          ss += e * e;
        }
      /* at least a millionth of the points' variance: duplicates have none */
      const double v = ss / (nc - 1), floor_v = 1e-6 * sd[j] * sd[j];
      mc[j] = mu;
      lv[j] = log(v > floor_v ? v : floor_v);
    }
    kept++;
  }
  out[0] = kept;
}

typedef struct {
  double kappa, mean, a, b;
} gm_nig;
static gm_nig gm_cluster_nig(const gm_data *d, const double *aux, int c, int j, double n);

/* log p(y, allocation) of the model, y and the allocation summarised by the clusters (aux's
 * layout) with n f_c observations each: the allocation of n observations that puts cluster c's
 * on component c and leaves the other K - C empty, times the K! / (K - C)! relabellings that
 * give the same partition. The prior is conjugate given the allocation, so this is the
 * Dirichlet-multinomial times a normal-inverse-gamma marginal per cluster and dimension:
 *   lgamma(K alpha) - lgamma(K alpha + n) + sum_c [lgamma(alpha + n_c) - lgamma(alpha)]
 *   + sum_cj [a log b - a_c log b_cj + lgamma(a_c) - lgamma(a) + log(kappa_0 / kappa_c) / 2
 *             - n_c log(2 pi) / 2],
 * with gm_cluster_nig's kappa_c, a_c, b_cj (the posterior mass of the mode of that partition,
 * as the collapsed Gibbs sampler would score it). */
static double gm_clusters_log_marginal(const gm_data *d, const double *aux, double n, int K) {
  const int D = d->d, C = (int) aux[0];
  double lm = lgammafn(K + 1.0) - lgammafn(K - C + 1.0) + lgammafn(K * d->alpha) -
              lgammafn(K * d->alpha + n);
  for (int c = 0; c < C; c++) {
    const double nc = aux[1 + (size_t) c * (2 * D + 1)] * n;
    lm += lgammafn(d->alpha + nc) - lgammafn(d->alpha);
    for (int j = 0; j < D; j++) {
      const gm_nig q = gm_cluster_nig(d, aux, c, j, n);
      lm += d->shape * log(d->scale) - q.a * log(q.b) + lgammafn(q.a) - lgammafn(d->shape) +
            0.5 * (log(1.0 / (d->ratio * q.kappa)) - nc * GM_LOG_2PI);
    }
  }
  return lm;
}

/* aux = the chosen clusters (C, then for each cluster: f_c, m_c (d), log v_c (d)); then k*, the
 * number of k-means clusters they came from, E (gm_empty_claim), whether the data show more
 * clusters than components (gm_jump_prepare), the clusters from k = 1..K k-means clusters
 * (C = 0 where k-means did not run: k > n_pts) and the bridge sets of 2..K components
 * (gm_bridge; C = 0 where there is none), for the reference of an overfitted mixture
 * (gm_ref_log_density); then scratch. */
enum { GM_HEAD_KSTAR, GM_HEAD_CLAIM, GM_HEAD_MORE, GM_HEAD_LEN };
static size_t gm_set_len(const gm_data *d) {
  return 1 + (size_t) d->K * (2 * d->d + 1);
}
/* k*, E and the flag, after the chosen clusters */
static double *gm_head(const gm_data *d, const double *aux) {
  return (double *) aux + gm_set_len(d);
}
static double *gm_clusters_set(const gm_data *d, const double *aux, int k) {
  return gm_head(d, aux) + GM_HEAD_LEN + (size_t) (k - 1) * gm_set_len(d);
}
/* gm_bridge's set of k components (k = 2..K; C = 0 where there is none), after the K k-means
 * sets */
static double *gm_bridge_set(const gm_data *d, const double *aux, int k) {
  return gm_clusters_set(d, aux, d->K + k - 1);
}
/* The first bridge set (one component more than the chosen clusters), or NULL where there is
 * none: q0 is then built from the k-means sets (gm_ref_sets, gm_ref_ok). */
static const double *gm_first_bridge(const gm_data *d, const double *aux) {
  const int C = (int) aux[0];
  if (C < 1 || C >= d->K) return NULL;
  const double *x = gm_bridge_set(d, aux, C + 1);
  return x[0] > 0 ? x : NULL;
}

/* How many of the n_obs observations a component without a cluster would claim: E = sum over
 * the points of w0 p0(y) / (w0 p0(y) + g(y)), times n_obs / n_pts, with p0 the prior predictive
 * of one component (a Student t of 2 a degrees of freedom and scale^2 b (1 + ratio) / a in each
 * dimension), w0 = 1 / K its prior mean weight, and g the density of the chosen clusters as
 * normals. E near 0 (data far outside the prior's scale of a component: raw faithful, 0.025)
 * says the posterior of such a component is its prior, so a reference that leaves it at the
 * prior is close to the posterior there; a component drawn from a prior on the data's scale
 * could take points between the clusters instead (scale(faithful), 3 components: a bridge
 * component of 5% weight; E = 14.7). The points are pts (x: scratch, n_pts). */
static double gm_empty_claim(const gm_data *d, const int *pts, int n_pts, double *x,
                             const double *aux, double n_obs) {
  const int D = d->d, C = (int) aux[0];
  const double nu = 2.0 * d->shape, s2 = d->scale * (1.0 + d->ratio) / d->shape;
  const double t_norm = lgammafn(0.5 * (nu + 1.0)) - lgammafn(0.5 * nu) - 0.5 * log(nu * M_PI * s2);
  double total = 0.0;
  for (int p = 0; p < n_pts; p++) {
    const double *y = d->yt + (sg_index) pts[p] * D;
    double lp0 = -log((double) d->K);
    for (int j = 0; j < D; j++) lp0 += t_norm - 0.5 * (nu + 1.0) * log1p(y[j] * y[j] / (nu * s2));
    for (int c = 0; c < C; c++) {
      const double *cl = aux + 1 + (size_t) c * (2 * D + 1);
      double lg = log(cl[0]);
      for (int j = 0; j < D; j++) {
        const double e = y[j] - cl[1 + j];
        lg -= 0.5 * (GM_LOG_2PI + cl[1 + D + j] + e * e * exp(-cl[1 + D + j]));
      }
      x[c] = lg;
    }
    x[C] = lp0;
    total += exp(lp0 - sg_log_sum_exp(x, C + 1));
  }
  return total * n_obs / n_pts;
}

/* A component without a cluster claims next to no observations when E (gm_empty_claim) is at
 * most this: gm_ref_ok, gm_ref_sets. */
#define GM_EMPTY_CLAIM 0.1
#define GM_BRIDGE_ITERATIONS 200

/* The sets of clusters for a prior on the data's scale with fewer clusters than components
 * (gm_ref_sets): the C chosen clusters and one more component, fitted together by EM with soft
 * assignments under the model's prior (each M step the joint mode of a component's mean and
 * variance given its share of the points), then with one more, and so on up to K. Each extra
 * component starts at the points' mean and variance, so it settles where the components so far
 * leave points unexplained: on scale(faithful) with 3 components, a bridge between the two
 * clusters of about 5% weight, which is where tempering from the prior puts the third
 * component and where none of the k-means sets does. One call fits the components of aux
 * (C' clusters) and one more, in aux's layout into out (shares, weighted means and variances,
 * whose conjugate posteriors gm_cluster_nig takes as if allocated), or C = 0 when a component
 * ends with fewer than 2 points' worth. Data units; mean, sd: the points'; sum_y, sum_yy,
 * inv_var (C' + 1) x D and count (C' + 1): scratch. */
static void gm_bridge(const gm_data *d, const int *pts, int n_pts, const double *aux,
                      const double *mean, const double *sd, double *sum_y, double *sum_yy,
                      double *count, double *inv_var, double *out) {
  const int D = d->d, C = (int) aux[0] + 1;
  const size_t stride = 2 * (size_t) D + 1;
  double *par = out + 1; /* C x (log f, m (D), log v (D)) while fitting */
  for (int c = 0; c < C; c++) {
    double *pc = par + c * stride;
    if (c < C - 1) {
      const double *cl = aux + 1 + c * stride;
      pc[0] = log(cl[0] * (C - 1) / C);
      for (int j = 0; j < D; j++) {
        pc[1 + j] = cl[1 + j];
        pc[1 + D + j] = cl[1 + D + j];
      }
    } else {
      pc[0] = -log((double) C);
      for (int j = 0; j < D; j++) {
        pc[1 + j] = mean[j];
        pc[1 + D + j] = 2.0 * log(sd[j]);
      }
    }
  }
  double lc[GM_JUMP_MAX_K + 1], last = R_NegInf;
  for (int it = 0; it < GM_BRIDGE_ITERATIONS; it++) {
    memset(sum_y, 0, (size_t) C * D * sizeof(double));
    memset(sum_yy, 0, (size_t) C * D * sizeof(double));
    memset(count, 0, (size_t) C * sizeof(double));
    /* the precisions, once per iteration rather than per point */
    for (size_t cj = 0; cj < (size_t) C * D; cj++)
      inv_var[cj] = exp(-par[(cj / D) * stride + 1 + D + cj % D]);
    double ll = 0.0;
    for (int p = 0; p < n_pts; p++) {
      const double *y = d->yt + (sg_index) pts[p] * D;
      for (int c = 0; c < C; c++) {
        const double *pc = par + c * stride, *iv = inv_var + (size_t) c * D;
        double v = pc[0];
        for (int j = 0; j < D; j++) {
          const double e = y[j] - pc[1 + j];
          v -= 0.5 * (GM_LOG_2PI + pc[1 + D + j] + e * e * iv[j]);
        }
        lc[c] = v;
      }
      const double lse = sg_log_sum_exp(lc, C);
      ll += lse;
      for (int c = 0; c < C; c++) {
        const double r = exp(lc[c] - lse);
        count[c] += r;
        for (int j = 0; j < D; j++) {
          sum_y[(size_t) c * D + j] += r * y[j];
          sum_yy[(size_t) c * D + j] += r * y[j] * y[j];
        }
      }
    }
    /* M step: the conjugate posterior's joint mode given the soft counts (weights by their
     * share: the Dirichlet's alpha - 1 would empty components for alpha < 1) */
    for (int c = 0; c < C; c++) {
      double *pc = par + c * stride;
      const double nc = count[c];
      pc[0] = log(nc > 0.0 ? nc / n_pts : DBL_MIN);
      for (int j = 0; j < D; j++) {
        const double ybar = nc > 0.0 ? sum_y[(size_t) c * D + j] / nc : 0.0;
        double ss = sum_yy[(size_t) c * D + j] - nc * ybar * ybar;
        if (ss < 0.0) ss = 0.0;
        const double k0 = 1.0 / d->ratio, kappa = k0 + nc;
        const double b = d->scale + 0.5 * ss + 0.5 * nc * k0 * ybar * ybar / kappa;
        pc[1 + j] = nc * ybar / kappa;
        pc[1 + D + j] = log(b / (d->shape + 0.5 * nc + 1.5));
      }
    }
    if (fabs(ll - last) <= 1e-9 * n_pts) break;
    last = ll;
  }
  /* the clusters: each component's share of the points, weighted mean and variance */
  out[0] = 0.0;
  for (int c = 0; c < C; c++) {
    if (count[c] < 2.0) return;
    double *pc = par + c * stride;
    pc[0] = count[c] / n_pts;
    for (int j = 0; j < D; j++) {
      const double ybar = sum_y[(size_t) c * D + j] / count[c];
      const double v = sum_yy[(size_t) c * D + j] / count[c] - ybar * ybar,
                   floor_v = 1e-6 * sd[j] * sd[j];
      pc[1 + j] = ybar;
      pc[1 + D + j] = log(v > floor_v ? v : floor_v);
    }
  }
  out[0] = C;
}

static void gm_jump_prepare(const sg_model *m, const int *pts, int n_pts, double n_obs,
                            double *aux) {
  const gm_data *d = m->data;
  const int D = d->d, K = d->K;
  const size_t cl = gm_set_len(d); /* one set of clusters */
  double *head = gm_head(d, aux);
  /* trial clusters (room for K + 1); n_pts x D standardised points */
  double *trial = gm_clusters_set(d, aux, 2 * K), *x = trial + cl + 2 * D + 1;
  double *centre = x + (size_t) n_pts * D, *var = centre + (size_t) (K + 1) * D,
         *lf = var + (size_t) (K + 1) * D;
  double *dist = lf + K + 1, *sd = dist + n_pts, *mean = sd + D;
  int *label = (int *) (mean + D), *best_label = label + n_pts, *count = best_label + n_pts;
  for (int j = 0; j < D; j++) {
    double mu = 0.0, ss = 0.0;
    for (int p = 0; p < n_pts; p++) mu += d->yt[(sg_index) pts[p] * D + j];
    mu /= n_pts;
    for (int p = 0; p < n_pts; p++) {
      const double e = d->yt[(sg_index) pts[p] * D + j] - mu;
      ss += e * e;
    }
    mean[j] = mu;
    sd[j] = n_pts > 1 ? sqrt(ss / (n_pts - 1)) : 0.0;
    if (!(sd[j] > 0.0) || !R_FINITE(sd[j])) sd[j] = 1.0; /* one point, or all equal */
    for (int p = 0; p < n_pts; p++) x[(size_t) p * D + j] = (d->yt[(sg_index) pts[p] * D + j] - mu) / sd[j];
  }
  const int C = K < n_pts ? K : n_pts;
  sg_rng rng;
  sg_rng_init(&rng, 0x6d69787475726531ULL, (uint64_t) n_pts, (uint64_t) K);
  /* n_obs: the observations of the target the proposal serves (all N in AIS; those up to the
   * chunk's end in SGAIS), whose posterior decides between the clusterings */
  double best = R_NegInf;
  aux[0] = 0.0;
  head[GM_HEAD_KSTAR] = 1.0;
  for (int k = 1; k <= K; k++) gm_clusters_set(d, aux, k)[0] = 0.0;
  for (int k = 1; k <= C; k++) {
    gm_kmeans(x, n_pts, D, k, &rng, centre, dist, label, count, best_label);
    gm_cem(x, n_pts, D, k, best_label, centre, var, lf, count);
    gm_cluster_summary(d, pts, n_pts, best_label, k, sd, trial);
    memcpy(gm_clusters_set(d, aux, k), trial, cl * sizeof(double));
    const double lm = trial[0] > 0 ? gm_clusters_log_marginal(d, trial, n_obs, K) : R_NegInf;
    if (lm > best) {
      best = lm;
      memcpy(aux, trial, cl * sizeof(double));
      head[GM_HEAD_KSTAR] = k;
    }
  }
  /* more clusters than components: K + 1 clusters, scored under a model of K + 1 components,
   * beat the best of up to K under this one. (Splitting one of K well-separated Gaussian
   * clusters scores close to them: two clusters of 1,000 points, -8.7 nats; so a margin over
   * every alternative would refuse such data, and it would still not see two partitions into
   * the same number of clusters that score alike: see gm_ref_ok.) */
  head[GM_HEAD_MORE] = 0.0;
  if (K + 1 <= n_pts) {
    gm_kmeans(x, n_pts, D, K + 1, &rng, centre, dist, label, count, best_label);
    gm_cem(x, n_pts, D, K + 1, best_label, centre, var, lf, count);
    gm_cluster_summary(d, pts, n_pts, best_label, K + 1, sd, trial);
    if ((int) trial[0] == K + 1 && gm_clusters_log_marginal(d, trial, n_obs, K + 1) > best)
      head[GM_HEAD_MORE] = 1.0;
  }
  head[GM_HEAD_CLAIM] = gm_empty_claim(d, pts, n_pts, x, aux, n_obs);
  /* Bridge sets only for a target of all the model's observations: for the first chunk of a
   * longer run, components left at the prior stay free for clusters that later observations
   * show. (The paper's shifting stream in order, 7 components: with bridge sets from its first
   * 500 points the trajectory fell 228 nats below the run from the prior at 3,500 points, where
   * a cluster appears, and up to 45,000 below it until the restart at 23,000.) */
  const double *from = aux;
  for (int k = 2; k <= K; k++) gm_bridge_set(d, aux, k)[0] = 0.0;
  if (n_obs >= m->n_obs && aux[0] >= 1 && head[GM_HEAD_MORE] == 0.0 &&
      head[GM_HEAD_CLAIM] > GM_EMPTY_CLAIM)
    for (int k = (int) aux[0] + 1; k <= K; k++) {
      double *to = gm_bridge_set(d, aux, k);
      /* x (the standardised points, n_pts x D) is free after gm_empty_claim, and C' + 1 <=
       * n_pts / 2 + 1 <= n_pts (each cluster holds 2 points' worth at least) */
      gm_bridge(d, pts, n_pts, from, mean, sd, centre, var, lf, x, to);
      if (to[0] == 0.0) break;
      from = to;
    }
}

/* Cluster c's conjugate posterior in dimension j (a NIG: mu | sigma2 ~ N(mean, sigma2 / kappa),
 * sigma2 ~ InvGamma(a, b)) from n_c observations; c >= C (no cluster) or n_c = 0: the prior. */
static gm_nig gm_cluster_nig(const gm_data *d, const double *aux, int c, int j, double n) {
  const int C = (int) aux[0], D = d->d;
  gm_nig q = {1.0 / d->ratio, 0.0, d->shape, d->scale};
  if (c >= C) return q;
  const double *cl = aux + 1 + (size_t) c * (2 * D + 1);
  const double nc = cl[0] * n, m = cl[1 + j], v = exp(cl[1 + D + j]);
  q.kappa += nc;
  q.mean = nc * m / q.kappa;
  q.a += 0.5 * nc;
  q.b += 0.5 * nc * v + 0.5 * (nc / d->ratio) * m * m / q.kappa;
  return q;
}

/* The Dirichlet parameter of component c's weight under Q. */
static double gm_cluster_alpha(const gm_data *d, const double *aux, int c, double n) {
  return d->alpha + (c < (int) aux[0] ? aux[1 + (size_t) c * (2 * d->d + 1)] * n : 0.0);
}

/* log density of (mu, s = log sigma2) under a NIG, the log-Jacobian of s included */
static double gm_nig_log_density(const gm_nig *q, double mu, double s) {
  const double e = exp(-s), dm = mu - q->mean;
  return q->a * log(q->b) - lgammafn(q->a) - q->a * s - q->b * e +
         0.5 * (log(q->kappa) - GM_LOG_2PI - s - q->kappa * dm * dm * e);
}

/* Adds the term v to a log-sum-exp kept as mx + log(acc) while it is summed (one pass, no buffer
 * of the terms: the permanent's subset sums, below). */
static inline void gm_lse_add(double v, double *mx, double *acc) {
  if (v > *mx) {
    *acc = *acc * exp(*mx - v) + 1.0;
    *mx = v;
  } else {
    *acc += exp(v - *mx);
  }
}

/* log perm(exp(T)) = log sum over the K! relabellings sigma of exp(sum_k T[k][sigma(k)]), by the
 * sum over subsets: f(S) = log sum_{c in S} exp(f(S - c) + T[|S| - 1][c]). T: K^2, f: 2^K. */
static double gm_log_permanent(const double *T, double *f, int K) {
  f[0] = 0.0;
  for (unsigned S = 1; S < (1u << K); S++) {
    const int k = __builtin_popcount(S) - 1;
    double mx = R_NegInf, acc = 0.0;
    for (int c = 0; c < K; c++)
      if (S & (1u << c)) gm_lse_add(f[S & ~(1u << c)] + T[k * K + c], &mx, &acc);
    f[S] = mx + log(acc);
  }
  return f[(1u << K) - 1];
}

/* The Dirichlet part of a factored proposal, in z (the Jacobian included): with weights
 * Dirichlet(a_1..a_K) on the components, T[k][c] += a_c log beta_k, and the normaliser is
 * returned. */
static double gm_dirichlet_terms(const double *a, const double *lb, int K, double *T) {
  double sum_a = 0.0, norm = 0.0;
  for (int c = 0; c < K; c++) {
    sum_a += a[c];
    norm -= lgammafn(a[c]);
    for (int k = 0; k < K; k++) T[k * K + c] = a[c] * lb[k];
  }
  return norm + lgammafn(sum_a);
}

/* log sum over the K! relabellings of theta of Q, T[k][c] the log density of component k's
 * block and weight term under cluster c. */
static double gm_log_q_clusters(const gm_data *d, const double *aux, double n, const double *lb,
                                const double *mu, const double *s, double *T, double *f,
                                double *a) {
  const int K = d->K, D = d->d;
  for (int c = 0; c < K; c++) a[c] = gm_cluster_alpha(d, aux, c, n);
  const double norm = gm_dirichlet_terms(a, lb, K, T);
  for (int c = 0; c < K; c++)
    for (int j = 0; j < D; j++) {
      const gm_nig q = gm_cluster_nig(d, aux, c, j, n);
      for (int k = 0; k < K; k++)
        T[k * K + c] += gm_nig_log_density(&q, mu[(size_t) k * D + j], s[(size_t) k * D + j]);
    }
  return norm + gm_log_permanent(T, f, K);
}

/* The population part of the jump proposal, factored by component so that its sum over
 * relabellings is a permanent too: the population's Gaussian pop (the particles' mean and
 * covariance) reduced to independent normals for every mean and log-variance (its marginal sds,
 * gm_pop_sd) and a Dirichlet(a) on the weights, a_k = c beta-bar_k with beta-bar =
 * softmax(mean of z) and the concentration c matched to the spread of z (var(z_k) =
 * trigamma(a_k) + trigamma(a_K), about 1 / a_k + 1 / a_K; gm_pop_alpha). (The full Gaussian
 * summed over the K! relabellings, as before, cost K! per proposal: 0.7 ms at K = 6.) */
static double gm_pop_sd(const sg_gaussian *pop, int dim, int i) {
  double v = 0.0;
  if (pop->diagonal) {
    v = pop->factor[i] * pop->factor[i];
  } else {
    for (int j = 0; j <= i; j++) v += pop->factor[i + (size_t) j * dim] * pop->factor[i + (size_t) j * dim];
  }
  return sqrt(v) > 1e-10 ? sqrt(v) : 1e-10;
}

/* a (K): gm_pop_sd's Dirichlet parameters */
static void gm_pop_alpha(const sg_model *m, const sg_gaussian *pop, double *a) {
  const int K = ((const gm_data *) m->data)->K;
  double sum_inv = 0.0, sum_var = 0.0;
  for (int k = 0; k < K - 1; k++) {
    const double sd = gm_pop_sd(pop, m->dim, k);
    sum_var += sd * sd;
    a[k] = pop->mean[k];
  }
  a[K - 1] = 0.0;
  const double lse = sg_log_sum_exp(a, K);
  for (int k = 0; k < K; k++) a[k] = exp(a[k] - lse);
  for (int k = 0; k < K - 1; k++) sum_inv += 1.0 / a[k] + 1.0 / a[K - 1];
  double conc = sum_inv / sum_var;
  if (!(conc < 1e9)) conc = 1e9;
  for (int k = 0; k < K; k++) a[k] = conc * a[k] > 1e-2 ? conc * a[k] : 1e-2;
}

/* a (K), then the means (2 K d) and the sds (2 K d) of the mean and log-variance blocks. */
static void gm_pop_factors(const sg_model *m, const sg_gaussian *pop, double *out) {
  const int K = ((const gm_data *) m->data)->K, len = m->dim - (K - 1);
  gm_pop_alpha(m, pop, out);
  for (int i = 0; i < len; i++) {
    out[K + i] = pop->mean[K - 1 + i];
    out[K + len + i] = gm_pop_sd(pop, m->dim, K - 1 + i);
  }
}

/* A draw from the population part: component k from factor k. */
static void gm_draw_pop(const sg_model *m, const sg_gaussian *pop, double *theta, sg_rng *rng) {
  const int K = ((const gm_data *) m->data)->K;
  double *lg = theta; /* the log gammas, then z */
  gm_pop_alpha(m, pop, lg);
  for (int k = 0; k < K; k++) lg[k] = sg_rng_log_gamma(rng, lg[k]);
  /* lg[K - 1] sits where the first mean is: drawn before it is overwritten */
  const double last = lg[K - 1];
  for (int k = 0; k < K - 1; k++) theta[k] = lg[k] - last;
  for (int i = K - 1; i < m->dim; i++)
    theta[i] = pop->mean[i] + gm_pop_sd(pop, m->dim, i) * sg_rng_norm(rng);
}

/* log sum over the K! relabellings of theta of the population part (gm_pop_factors). */
static double gm_log_q_pop(const gm_data *d, const double *pf, const double *lb, const double *mu,
                           const double *s, double *T, double *f) {
  const int K = d->K, D = d->d;
  const size_t Kd = (size_t) K * D;
  const double *mean = pf + K, *sd = mean + 2 * Kd;
  const double norm = gm_dirichlet_terms(pf, lb, K, T);
  for (int c = 0; c < K; c++)
    for (int j = 0; j < D; j++) {
      const size_t cj = (size_t) c * D + j;
      for (int k = 0; k < K; k++) {
        const double em = (mu[(size_t) k * D + j] - mean[cj]) / sd[cj],
                     es = (s[(size_t) k * D + j] - mean[Kd + cj]) / sd[Kd + cj];
        T[k * K + c] += -GM_LOG_2PI - log(sd[cj]) - log(sd[Kd + cj]) - 0.5 * (em * em + es * es);
      }
    }
  return norm + gm_log_permanent(T, f, K);
}

/* log q(theta) up to a constant common to all theta (model.h, jump_log_q): with rungs > 1 the
 * cluster part is the equal mixture of Q at each rung's n (the Gaussian part, which does not
 * depend on n, is evaluated once). */
static double gm_jump_log_q(const sg_model *m, sg_workspace *ws, const double *theta,
                            const double *aux, double n, int rungs, const sg_gaussian *pop) {
  const gm_data *d = m->data;
  gm_scratch g = gm_scratch_of(d, ws);
  const int K = d->K;
  const size_t Kd = (size_t) K * d->d;
  const double *mu = theta + (K - 1), *s = mu + Kd;
  gm_log_weights(d, theta, g.log_beta);
  double part[2], rung[SG_JUMP_MAX_RUNGS];
  for (int l = 0; l < rungs; l++)
    rung[l] = gm_log_q_clusters(d, aux, n * pow(SG_JUMP_RUNG_RATIO, -l), g.log_beta, mu, s,
                                g.jump_T, g.jump_f, g.jump_pop);
  part[0] = log1p(-GM_JUMP_POP) +
            (rungs > 1 ? sg_log_sum_exp(rung, rungs) - log((double) rungs) : rung[0]);
  if (pop) {
    gm_pop_factors(m, pop, g.jump_pop);
    part[1] = log(GM_JUMP_POP) + gm_log_q_pop(d, g.jump_pop, g.log_beta, mu, s, g.jump_T, g.jump_f);
  } else { /* the prior, summed over the relabellings (all equal) */
    part[1] = log(GM_JUMP_POP) + lgammafn(K + 1.0) + gm_log_prior(m, ws, theta, NULL);
  }
  return sg_log_sum_exp(part, 2);
}

/* A draw from a NIG: 1 / sigma2 ~ Gamma(a, rate b), then mu. */
static void gm_nig_draw(const gm_nig *q, double *mu, double *s, sg_rng *rng) {
  *s = log(q->b) - sg_rng_log_gamma(rng, q->a);
  *mu = q->mean + sqrt(exp(*s) / q->kappa) * sg_rng_norm(rng);
}

/* theta from Q, component k from cluster k; with n = 0 from the prior. */
static void gm_draw_clusters(const gm_data *d, const double *aux, double n, double *theta,
                             sg_rng *rng) {
  const int K = d->K, D = d->d;
  const size_t Kd = (size_t) K * D;
  double *z = theta, *mu = theta + (K - 1), *s = mu + Kd;
  /* Dirichlet as normalised gammas; z only needs their log-ratios */
  const double last = sg_rng_log_gamma(rng, gm_cluster_alpha(d, aux, K - 1, n));
  for (int k = 0; k < K - 1; k++) z[k] = sg_rng_log_gamma(rng, gm_cluster_alpha(d, aux, k, n)) - last;
  for (int k = 0; k < K; k++)
    for (int j = 0; j < D; j++) {
      const gm_nig q = gm_cluster_nig(d, aux, k, j, n);
      gm_nig_draw(&q, mu + (size_t) k * D + j, s + (size_t) k * D + j, rng);
    }
}

static void gm_jump_propose(const sg_model *m, double *prop, const double *aux, double n,
                            int rungs, const sg_gaussian *pop, sg_rng *rng) {
  const gm_data *d = m->data;
  if (sg_rng_unif(rng) >= GM_JUMP_POP) {
    if (rungs > 1) n *= pow(SG_JUMP_RUNG_RATIO, -(double) sg_rng_index(rng, (uint32_t) rungs));
    gm_draw_clusters(d, aux, n, prop, rng);
  }
  else if (pop) gm_draw_pop(m, pop, prop, rng);
  else gm_draw_clusters(d, aux, 0.0, prop, rng);
}

/* The marginals of the permanent's distribution over relabellings: P[k][c] = the share of
 * perm(exp(T)) whose relabelling puts row k on column c, from the forward sums f of
 * gm_log_permanent (log perm = L) and the backward sums b(S) = log sum over assigning rows |S|..K-1
 * to the columns outside S: P[k][c] = sum over S of k columns without c of
 * exp(f(S) + T[k][c] + b(S + c) - L). O(2^K K), as the permanent. */
static void gm_permanent_marginals(const double *T, const double *f, double L, int K, double *b,
                                   double *P) {
  const unsigned full = (1u << K) - 1;
  b[full] = 0.0;
  for (unsigned S = full; S-- > 0;) {
    const int k = __builtin_popcount(S);
    double mx = R_NegInf, acc = 0.0;
    for (int c = 0; c < K; c++)
      if (!(S & (1u << c))) gm_lse_add(T[k * K + c] + b[S | (1u << c)], &mx, &acc);
    b[S] = mx + log(acc);
  }
  memset(P, 0, (size_t) K * K * sizeof(double));
  for (unsigned S = 0; S < full; S++) {
    const int k = __builtin_popcount(S);
    for (int c = 0; c < K; c++)
      if (!(S & (1u << c))) P[k * K + c] += exp(f[S] + T[k * K + c] + b[S | (1u << c)] - L);
  }
}

/* The reference distribution (model.h, setting `reference`): the cluster part Q of the jump
 * proposal at the n observations of the target,
 *   q0 = (1 / K!) sum over the K! relabellings sigma of Q(sigma theta),
 * normalised and symmetric (so the particles may still be relabelled), Q the conjugate
 * posterior of each component given one k-means cluster (gm_jump_prepare; the prior for a
 * component without one). For separated clusters Q is nearly the posterior of the mode that
 * puts one component on each cluster, so the path from q0 never meets the first-order
 * transition that tempering from the prior crosses (broad components over several clusters
 * give way to one per cluster: inst/design.md, Mixtures). Without the jump proposal's
 * defensive part (the prior): particles drawn from both an O(1)-wide prior and a narrow Q share
 * one metric, fitted to the wide ones, and every move of the narrow ones was refused (AIS on
 * ten clusters: acceptance 0 until lambda = 0.003). The gradient of log Q's permanent is
 * sum_kc P_kc grad T_kc, P its marginals (gm_permanent_marginals); T_kc = a_c log beta_k + the
 * NIG log densities of component k under cluster c, so d/dz_j = sum_c P_jc a_c - beta_j sum_c
 * a_c (sum_k P_kc = 1), and per dimension d/dmu = -kappa (mu - m) / sigma2,
 * d/ds = -a - 1/2 + (b + kappa (mu - m)^2 / 2) / sigma2. With fewer clusters than components
 * (where gm_ref_ok finds q0 usable) q0 is the equal mixture of such sums for each of several
 * sets of clusters (gm_ref_sets: from k* (the chosen number) to K k-means clusters, or the
 * bridge sets of gm_bridge), and its gradient the mixture of theirs weighted by each one's
 * share of q0 at theta. */

/* log Q(theta) of one set of clusters (gm_log_q_clusters, summed over the relabellings), and
 * weight times its gradient added to grad (NULL: none) */
static double gm_ref_one(const gm_data *d, gm_scratch *g, const double *aux, double n,
                         const double *mu, const double *s, double weight, double *grad) {
  const int K = d->K, D = d->d;
  const size_t Kd = (size_t) K * D;
  double *a = g->jump_pop;
  const double lq = gm_log_q_clusters(d, aux, n, g->log_beta, mu, s, g->jump_T, g->jump_f, a);
  if (grad && R_FINITE(lq)) {
    gm_permanent_marginals(g->jump_T, g->jump_f, g->jump_f[(1u << K) - 1], K, g->jump_b, g->jump_P);
    const double *P = g->jump_P;
    double sum_a = 0.0;
    for (int c = 0; c < K; c++) sum_a += a[c];
    for (int j = 0; j < K - 1; j++) {
      double acc = 0.0;
      for (int c = 0; c < K; c++) acc += P[j * K + c] * a[c];
      grad[j] += weight * (acc - exp(g->log_beta[j]) * sum_a);
    }
    for (int k = 0; k < K; k++)
      for (int j = 0; j < D; j++) {
        const size_t kj = (size_t) k * D + j;
        const double e = exp(-s[kj]);
        double dm = 0.0, ds = 0.0;
        for (int c = 0; c < K; c++) {
          const double w = P[k * K + c];
          if (w == 0.0) continue;
          const gm_nig q = gm_cluster_nig(d, aux, c, j, n);
          const double r = mu[kj] - q.mean;
          dm -= w * q.kappa * r * e;
          ds += w * (-q.a - 0.5 + (q.b + 0.5 * q.kappa * r * r) * e);
        }
        grad[K - 1 + kj] += weight * dm;
        grad[K - 1 + Kd + kj] += weight * ds;
      }
  }
  return lq;
}

/* Q of a bridge set (gm_bridge) takes its shares of half the observations: its soft
 * allocation is more certain than the posterior's, and a q0 as narrow as that missed the
 * posterior's tails (AIS on scale(faithful), 3 components, seeds 1-4: -0.08 to -0.28 nats at the
 * full counts, -0.18 to +0.17 at half). */
#define GM_BRIDGE_COUNTS 0.5

/* The sets of clusters q0 mixes (gm_jump_prepare's layout): the bridge sets of C + 1 to K
 * components where there are any (a prior on the data's scale), else the k-means sets from k*
 * clusters to K. Returns their number J; set[0..J-1] point at them, and *count_scale is the
 * share of the observations their Q is built on. */
static int gm_ref_sets(const gm_data *d, const double *aux, const double **set,
                       double *count_scale) {
  int J = 0;
  if (gm_first_bridge(d, aux)) {
    for (int k = (int) aux[0] + 1; k <= d->K && gm_bridge_set(d, aux, k)[0] > 0; k++)
      set[J++] = gm_bridge_set(d, aux, k);
    *count_scale = GM_BRIDGE_COUNTS;
    return J;
  }
  *count_scale = 1.0;
  for (int k = (int) gm_head(d, aux)[GM_HEAD_KSTAR]; k <= d->K; k++) {
    const double *x = gm_clusters_set(d, aux, k);
    if (x[0] > 0) set[J++] = x;
  }
  if (J == 0) set[J++] = aux;
  return J;
}

static double gm_ref_log_density(const sg_model *m, sg_workspace *ws, const double *theta,
                                 const double *aux, double n, double *grad) {
  const gm_data *d = m->data;
  gm_scratch g = gm_scratch_of(d, ws);
  const int K = d->K;
  const double *mu = theta + (K - 1), *s = mu + (size_t) K * d->d;
  const double *set[GM_JUMP_MAX_K];
  double scale;
  const int J = gm_ref_sets(d, aux, set, &scale);
  n *= scale;
  gm_log_weights(d, theta, g.log_beta);
  if (J == 1) return gm_ref_one(d, &g, set[0], n, mu, s, 1.0, grad) - lgammafn(K + 1.0);
  /* an equal mixture of the sets' Q; the gradient is the mixture of theirs, weighted by each
   * set's share of q0 at theta (a second pass: the scratch holds one set's permanent) */
  double lq[GM_JUMP_MAX_K];
  for (int j = 0; j < J; j++) lq[j] = gm_ref_one(d, &g, set[j], n, mu, s, 0.0, NULL);
  const double lse = sg_log_sum_exp(lq, J);
  if (grad && R_FINITE(lse))
    for (int j = 0; j < J; j++) {
      const double w = exp(lq[j] - lse);
      if (w > 0.0) gm_ref_one(d, &g, set[j], n, mu, s, w, grad);
    }
  return lse - log((double) J) - lgammafn(K + 1.0);
}

/* model.h, ref_ok: none when the data show more clusters than the mixture has components (the
 * posterior then chooses which clusters to merge, and q0 holds the particles on k-means'
 * merge: the paper's shifting stream, 3 components, 2,000 points shuffled, AIS -9289.61 from
 * q0 and -9202.09 from the prior; at 100,000 points SGAIS was 2,442 nats below its run from
 * the prior, in order and shuffled alike). Not seen: partitions into the same number of
 * clusters that score alike (three tight clusters in a row, standardised, 2 components: the
 * model's prior on the variances scores 3 clusters 17 nats below 2, and 2 of them can merge
 * left or right; AIS from q0 was 3 nats below AIS from the prior). Complete when they show as
 * many clusters as the mixture has components (q0 is then one set of clusters); usable with
 * fewer when a component without a cluster would claim next to no observations
 * (gm_empty_claim): q0 then mixes the sets from k* to K k-means clusters, each leaving the
 * components beyond its clusters at the prior. With fewer clusters and a prior on the data's
 * scale the path from such a q0 was biased (scale(faithful), 3 components, -1.43 nats, 4
 * replicates: the bridge component of gm_empty_claim is in none of the sets; with sets whose
 * extra components were broad clusters -0.69 to -2.26 at 3 and 4 components), and so was the
 * path from the prior (AIS at 3 components -1.37 to -2.10 nats on 3 of seeds 1-4: the bridge
 * forms late). There q0 is usable when gm_bridge found the bridge: q0 mixes the bridge sets
 * (AIS -0.18 to +0.17 nats on seeds 1-4, in 0.2 s against 3 s). */
static int gm_ref_ok(const sg_model *m, const double *aux) {
  const gm_data *d = m->data;
  const double *head = gm_head(d, aux);
  if (head[GM_HEAD_MORE] != 0.0) return 0;
  if ((int) aux[0] == d->K) return SG_REF_COMPLETE;
  return head[GM_HEAD_CLAIM] <= GM_EMPTY_CLAIM || gm_first_bridge(d, aux) ? SG_REF_USABLE : 0;
}

static void gm_ref_draw(const sg_model *m, const double *aux, double n, double *theta,
                        sg_rng *rng) {
  const double *set[GM_JUMP_MAX_K];
  double scale;
  const int J = gm_ref_sets(m->data, aux, set, &scale);
  gm_draw_clusters(m->data, set[J > 1 ? sg_rng_index(rng, (uint32_t) J) : 0], n * scale, theta,
                   rng);
}

int sg_gaussian_mixture_init(sg_model *m, const double *yt, int D, int n, int K, double alpha,
                             double shape, double scale, double ratio, sg_status *st) {
  if (D < 1 || n < 0 || K < 1)
    return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: the data have no columns.");
  if ((double) K * D * 2 + K > INT_MAX / 2)
    return sg_fail(st, SG_ERR_INPUT, "`model` has too many parameters (components x dimensions).");
  const double h[] = {alpha, shape, scale, ratio};
  const char *names[] = {"concentration", "variance_shape", "variance_scale", "mean_variance_ratio"};
  for (int i = 0; i < 4; i++)
    if (!(h[i] > 0) || !R_FINITE(h[i]))
      return sg_fail(st, SG_ERR_INPUT, "`%s` must be positive and finite.", names[i]);

  gm_data *d = (gm_data *) R_alloc(1, sizeof(gm_data));
  d->yt = yt;
  d->K = K;
  d->d = D;
  d->alpha = alpha;
  d->shape = shape;
  d->scale = scale;
  d->ratio = ratio;

  m->dim = (K - 1) + 2 * K * D;
  m->n_obs = n;
  m->data = d;
  m->scratch_bytes = gm_scratch_bytes(K, D);
  m->prior_draw = gm_prior_draw;
  m->log_prior = gm_log_prior;
  m->log_lik = gm_log_lik;
  m->canonicalize = gm_canonicalize;
  m->to_region = gm_to_region;
  m->region_size = gm_region_size(K, D);
  /* one component has one mode: nothing to jump between; beyond GM_JUMP_MAX_K the sums over
   * relabellings (2^K K) cost too much */
  if (K > 1 && K <= GM_JUMP_MAX_K) {
    m->jump_prepare = gm_jump_prepare;
    m->jump_propose = gm_jump_propose;
    m->jump_log_q = gm_jump_log_q;
    m->ref_log_density = gm_ref_log_density;
    m->ref_draw = gm_ref_draw;
    m->ref_ok = gm_ref_ok;
    /* the chosen clusters (C, then 1 + 2 d each), the head (k*, E and the flag of more
     * clusters), the K sets of k-means clusters and K - 1 bridge sets, then gm_jump_prepare's
     * scratch: trial clusters (K + 1 of them), the standardised points, centres, variances and
     * log-shares, distances, sd and mean, and three int arrays */
    const size_t cl = gm_set_len(d);
    m->jump_aux = (2 * (size_t) K + 1) * cl + GM_HEAD_LEN + (2 * (size_t) D + 1) +
                  (size_t) SG_JUMP_POINTS * (D + 1) + (size_t) (K + 1) * (2 * D + 1) + 2 * D +
                  ((size_t) 2 * SG_JUMP_POINTS + K + 2) / 2 + 1;
  }
  return SG_OK;
}

/* ---------------------------------------------------------------- probes for the tests
 * (hooks_r.c: plain C in and out, the glue unpacks and allocates) */

int sg_gaussian_mixture_has_jumps(const sg_model *m, int *K, int *D) {
  if (m->jump_prepare != gm_jump_prepare) return 0;
  const gm_data *d = m->data;
  *K = d->K;
  *D = d->d;
  return 1;
}

int sg_gaussian_mixture_clusters(const sg_model *m, const double *aux, double *share, double *mean,
                                 double *var) {
  const gm_data *d = m->data;
  const int D = d->d, C = (int) aux[0];
  if (share == NULL) return C;
  for (int c = 0; c < C; c++) {
    const double *cl = aux + 1 + (size_t) c * (2 * D + 1);
    share[c] = cl[0];
    for (int j = 0; j < D; j++) {
      mean[c + (size_t) j * C] = cl[1 + j];
      var[c + (size_t) j * C] = exp(cl[1 + D + j]);
    }
  }
  return C;
}

void sg_gaussian_mixture_jump_parts(const sg_model *m, sg_workspace *ws, const double *aux,
                                    const double *theta, int M, const sg_gaussian *pop,
                                    double n_obs, double *lq_c, double *lq_p, double *fac,
                                    double *draws) {
  const gm_data *d = m->data;
  const int dim = m->dim;
  gm_scratch g = gm_scratch_of(d, ws);
  const size_t Kd = (size_t) d->K * d->d;
  gm_pop_factors(m, pop, fac);
  for (int i = 0; i < M; i++) {
    const double *th = theta + (size_t) i * dim;
    gm_log_weights(d, th, g.log_beta);
    lq_c[i] = gm_log_q_clusters(d, aux, n_obs, g.log_beta, th + d->K - 1, th + d->K - 1 + Kd,
                                g.jump_T, g.jump_f, g.jump_pop);
    lq_p[i] = gm_log_q_pop(d, fac, g.log_beta, th + d->K - 1, th + d->K - 1 + Kd, g.jump_T,
                           g.jump_f);
  }
  sg_rng rng;
  sg_rng_init(&rng, 0x6a756d70ULL, (uint64_t) M, 0);
  for (int i = 0; i < M; i++) gm_draw_pop(m, pop, draws + (size_t) i * dim, &rng);
}
