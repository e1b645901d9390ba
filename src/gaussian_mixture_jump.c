/* The Gaussian mixture's jump proposal (model.h, jump_propose and jump_log_q). jump_propose
 * redraws all of theta from the mixture
 *   q = p P + (1 - p) Q,  p = GM_JUMP_POP (with pop; without it the prior takes its place),
 * where P is the particles' Gaussian pop factored by component (gm_pop_factors: it keeps the
 * proposal able to return to the mode the particles are in, so that they may leave it) and Q
 * is the posterior of the tempered target if component k held exactly the observations of
 * cluster k (gaussian_mixture_cluster.c), n_c = n f_c of them, n the observations in the target
 * (n_obs: lambda N in AIS): the conjugate update of the prior with each cluster's count, mean
 * and variance (gm_cluster_nig, gm_cluster_alpha),
 *   beta ~ Dirichlet(alpha + n_c),  sigma2_kj ~ InvGamma(a + n_c / 2, b_cj),
 *   mu_kj | sigma2_kj ~ N(n_c m_cj / kappa_c, sigma2_kj / kappa_c),  kappa_c = 1 / r + n_c,
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
#include "gaussian_mixture.h"
#include <math.h>
#include <Rmath.h>

#define GM_JUMP_POP 0.5

/* log density of (mu, s = log sigma2) under a NIG, the log-Jacobian of s included */
static double gm_nig_log_density(const gm_nig *q, double mu, double s) {
  const double e = exp(-s), dm = mu - q->mean;
  return q->a * log(q->b) - lgammafn(q->a) - q->a * s - q->b * e +
         0.5 * (log(q->kappa) - GM_LOG_2PI - s - q->kappa * dm * dm * e);
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

/* log sum over the K! relabellings of theta of Q at n observations, T[k][c] the log density of
 * component k's block and weight term under cluster c. lb: log beta (gm_log_weights); mu, s:
 * theta's blocks; written: T (K^2), the permanent's forward sums f (2^K) and the Dirichlet
 * parameters a (K), which the reference's gradient reuses (gm_ref_one). */
double gm_log_q_clusters(const gm_data *d, const double *aux, double n, const double *lb,
                         const double *mu, const double *s, double *T, double *f, double *a) {
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
 * summed over the K! relabellings one by one would cost K! terms per proposal.) */
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
double gm_jump_log_q(const sg_model *m, sg_workspace *ws, const double *theta, const double *aux,
                     double n, int rungs, const sg_gaussian *pop) {
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
  } else { /* the model's prior, summed over the relabellings (all equal) */
    part[1] = log(GM_JUMP_POP) + lgammafn(K + 1.0) + m->log_prior(m, ws, theta, NULL);
  }
  return sg_log_sum_exp(part, 2);
}

/* A draw from a NIG: 1 / sigma2 ~ Gamma(a, rate b), then mu. */
static void gm_nig_draw(const gm_nig *q, double *mu, double *s, sg_rng *rng) {
  *s = log(q->b) - sg_rng_log_gamma(rng, q->a);
  *mu = q->mean + sqrt(exp(*s) / q->kappa) * sg_rng_norm(rng);
}

/* theta from Q, component k from cluster k; with n = 0 from the prior. */
void gm_draw_clusters(const gm_data *d, const double *aux, double n, double *theta, sg_rng *rng) {
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

/* model.h, jump_propose: a draw from q into prop; with rungs > 1, Q at the n of a rung drawn
 * uniformly. */
void gm_jump_propose(const sg_model *m, double *prop, const double *aux, double n, int rungs,
                     const sg_gaussian *pop, sg_rng *rng) {
  const gm_data *d = m->data;
  if (sg_rng_unif(rng) >= GM_JUMP_POP) {
    if (rungs > 1) n *= pow(SG_JUMP_RUNG_RATIO, -(double) sg_rng_index(rng, (uint32_t) rungs));
    gm_draw_clusters(d, aux, n, prop, rng);
  }
  else if (pop) gm_draw_pop(m, pop, prop, rng);
  else gm_draw_clusters(d, aux, 0.0, prop, rng);
}

/* Probe for the tests (model.h; hooks_r.c): the parts of q at the points theta, the population
 * factors and draws from P. */
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
