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
#include "gaussian_mixture.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <Rmath.h>
#include <string.h>

/* The bytes of the workspace scratch (gm_scratch, gaussian_mixture.h). */
static size_t gm_scratch_bytes(int K, int D) {
  return ((size_t) K * (4 + D) + (size_t) 2 * K * (2 * D + 1) + gm_jump_doubles(K, D) +
          gm_align_doubles(K, D)) * sizeof(double) + (size_t) (K + 3 * (K + 1)) * sizeof(int);
}

/* A positive gamma draw: rgamma can return 0 for shape << 1, whose log would be -Inf. */
static double gm_rgamma(double shape, double scale) {
  double g = Rf_rgamma(shape, scale);
  return g > DBL_MIN ? g : DBL_MIN;
}

/* A draw from the prior (model.h, prior_draw) with R's generator, in the transformed
 * parameters. */
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

/* The log prior density of theta, the log-Jacobians above included, and its gradient added to
 * grad (NULL: none). */
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
 * exp is most of the cost, so each exp(c_k - max) is computed once and serves both the
 * log-sum-exp and w_k = exp(c_k - max) / sum. The sums go to the call's own restrict-qualified
 * scratch, and scale and 1/2 multiply them once per call. D is a parameter so that gm_log_lik()
 * can pass the constant 2 (the usual case), which unrolls the j loops. */
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
    /* exp of less than GM_EXP_ZERO is 0 exactly, but takes libm's slow underflow path, which
     * a component hundreds of sds from an observation (an empty one, data in raw units) would
     * take at every observation */
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

/* A call's constants at theta: log weights, precisions and each component's normalising term. */
static void gm_constants(const gm_data *d, gm_scratch *g, const double *theta) {
  const int K = d->K, D = d->d;
  const double *s = theta + (K - 1) + K * D;
  gm_log_weights(d, theta, g->log_beta);
  for (int k = 0; k < K; k++) {
    double ls = 0.0;
    for (int j = 0; j < D; j++) {
      g->inv_var[k * D + j] = exp(-s[k * D + j]);
      ls += s[k * D + j];
    }
    g->norm[k] = g->log_beta[k] - 0.5 * (D * GM_LOG_2PI + ls);
  }
}

/* The log-likelihood of the observations idx[0..n-1] (or start..start+n-1 when idx is NULL),
 * and scale times its gradient added to grad (NULL: none). */
static double gm_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                         int start, int n, double scale, double *grad) {
  const gm_data *d = m->data;
  gm_scratch g = gm_scratch_of(d, ws);
  int K = d->K, D = d->d, Kd = K * D;
  const double *mu = theta + (K - 1);
  gm_constants(d, &g, theta);
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

/* Draws observation y's component from its responsibilities at the constants in g (gm_obs,
 * which leaves c_k = log p(y, k | theta) in g->c and exp(c_k - max) in g->ex), using
 * u ~ U(0, 1), and returns it; *lse gets log p(y | theta). */
static inline int gm_draw(const gm_scratch *g, const double *mu, const double *y, int K, int D,
                          double u, double *lse) {
  *lse = gm_obs(g, mu, y, K, D, NULL);
  double tot = 0.0;
  for (int k = 0; k < K; k++) tot += g->ex[k];
  u *= tot;
  int a = 0;
  while (a < K - 1 && u >= g->ex[a]) u -= g->ex[a++];
  return a;
}

static inline void gm_add(const double *y, int a, int D, double w, double *cnt, double *sum,
                          double *sq) {
  cnt[a] += w;
  for (int j = 0; j < D; j++) {
    sum[a * D + j] += w * y[j];
    sq[a * D + j] += w * y[j] * y[j];
  }
}

/* The data-augmentation proposal (model.h, gibbs_propose). Every observation's component a_i is
 * drawn from its responsibilities at theta; theta' then from the conjugate posteriors given
 * them, the population's observations at weight 1 and the tempered ones at lambda (p(y, a |
 * theta)^lambda is conjugate too): beta ~ Dirichlet(alpha + n_k), sigma2_kj ~ InvGamma(a +
 * n_k / 2, b + (Q_kj - S_kj^2 / kappa_k) / 2), mu_kj | sigma2_kj ~ N(S_kj / kappa_k, sigma2_kj /
 * kappa_k), kappa_k = 1 / r + n_k, with n, S and Q the weighted counts, sums and sums of
 * squares. A component allocated nothing is drawn from its prior. Returns F(theta') - F(theta),
 * F(t) = sum over the tempered observations of (1 - lambda) c_a(t) - log sum_k exp(c_k(t)),
 * c_k(t) = log p(y, k | t): the tempered observations' part of the Metropolis-Hastings ratio
 * (kernel.c). The tempered allocations are drawn again from a copy of rng's state to evaluate it
 * at theta'. */
static double gm_gibbs_propose(const sg_model *m, sg_workspace *ws, const double *theta,
                               const int *idx, int start, int n, int t_start, int t_n,
                               double lambda, double *prop, sg_rng *rng) {
  const gm_data *d = m->data;
  gm_scratch g = gm_scratch_of(d, ws);
  const int K = d->K, D = d->d, Kd = K * D;
  const double *mu = theta + (K - 1);
  gm_constants(d, &g, theta);
  double *cnt = g.gsum, *sum = cnt + K, *sq = sum + Kd, lse;
  memset(cnt, 0, (size_t) K * (2 * D + 1) * sizeof(double));
  for (int i = 0; i < n; i++) {
    const double *y = d->yt + (sg_index) (idx ? idx[i] : start + i) * D;
    const int a = gm_draw(&g, mu, y, K, D, sg_rng_unif(rng), &lse);
    gm_add(y, a, D, 1.0, cnt, sum, sq);
  }
  /* theta's constants kept in `copy` for the replay below */
  gm_scratch g0 = g;
  g0.inv_var = g.copy;
  g0.norm = g.copy + Kd;
  memcpy(g0.inv_var, g.inv_var, (size_t) Kd * sizeof(double));
  memcpy(g0.norm, g.norm, (size_t) K * sizeof(double));
  const sg_rng replay = *rng;
  double f0 = 0.0;
  for (int i = 0; i < t_n; i++) {
    const double *y = d->yt + ((sg_index) t_start + i) * D;
    const int a = gm_draw(&g, mu, y, K, D, sg_rng_unif(rng), &lse);
    gm_add(y, a, D, lambda, cnt, sum, sq);
    f0 += (1.0 - lambda) * g.c[a] - lse;
  }
  double *z = prop, *pmu = prop + (K - 1), *ps = pmu + Kd;
  const double last = sg_rng_log_gamma(rng, d->alpha + cnt[K - 1]);
  for (int k = 0; k < K - 1; k++) z[k] = sg_rng_log_gamma(rng, d->alpha + cnt[k]) - last;
  for (int k = 0; k < K; k++) {
    const double kappa = 1.0 / d->ratio + cnt[k];
    for (int j = 0; j < D; j++) {
      const int kj = k * D + j;
      /* at least b: the sum of squares is at least S^2 / n_k > S^2 / kappa (rounding aside) */
      const double b = fmax(d->scale, d->scale + 0.5 * (sq[kj] - sum[kj] * sum[kj] / kappa));
      ps[kj] = log(b) - sg_rng_log_gamma(rng, d->shape + 0.5 * cnt[k]);
      pmu[kj] = sum[kj] / kappa + sqrt(exp(ps[kj]) / kappa) * sg_rng_norm(rng);
    }
  }
  if (t_n == 0) return 0.0;
  /* F(theta'): the same allocations (the same uniforms at theta's responsibilities, from its
   * constants in g0), with g's now prop's */
  sg_rng again = replay;
  gm_constants(d, &g, prop);
  double f1 = 0.0;
  for (int i = 0; i < t_n; i++) {
    const double *y = d->yt + ((sg_index) t_start + i) * D;
    const int a = gm_draw(&g0, mu, y, K, D, sg_rng_unif(&again), &lse);
    lse = gm_obs(&g, pmu, y, K, D, NULL);
    f1 += (1.0 - lambda) * g.c[a] - lse;
  }
  return f1 - f0;
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

  sg_model_define(m, (K - 1) + 2 * K * D, n, d, gm_prior_draw, gm_log_prior);
  m->scratch_bytes = gm_scratch_bytes(K, D);
  m->log_lik = gm_log_lik;
  m->canonicalize = gm_canonicalize;
  m->to_region = gm_to_region;
  m->region_size = gm_region_size(K, D);
  m->gibbs_propose = gm_gibbs_propose;
  /* one component has one mode: nothing to jump between; beyond GM_JUMP_MAX_K the sums over
   * relabellings (2^K K) cost too much */
  if (K > 1 && K <= GM_JUMP_MAX_K) {
    m->jump_prepare = gm_jump_prepare;
    m->jump_propose = gm_jump_propose;
    m->jump_log_q = gm_jump_log_q;
    m->ref_log_density = gm_ref_log_density;
    m->ref_draw = gm_ref_draw;
    m->ref_ok = gm_ref_ok;
    m->ref_refit = gm_ref_refit;
    m->strata = gm_strata;
    m->jump_aux = gm_aux_size(d);
  }
  return SG_OK;
}

/* Probe for the tests (model.h; hooks_r.c): whether m is a mixture with jump proposals. */
int sg_gaussian_mixture_has_jumps(const sg_model *m, int *K, int *D) {
  if (m->jump_prepare != gm_jump_prepare) return 0;
  const gm_data *d = m->data;
  *K = d->K;
  *D = d->d;
  return 1;
}
