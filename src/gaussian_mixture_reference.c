/* The Gaussian mixture's reference distribution (model.h, ref_log_density, ref_ok and ref_draw;
 * the setting `reference`): the cluster part Q of the jump proposal (gaussian_mixture_jump.c)
 * at the n observations of the target,
 *   q0 = (1 / K!) sum over the K! relabellings sigma of Q(sigma theta),
 * normalised and symmetric (so the particles may still be relabelled), Q the conjugate
 * posterior of each component given one k-means cluster (gm_jump_prepare; the prior for a
 * component without one). For separated clusters Q is nearly the posterior of the mode that
 * puts one component on each cluster, so the path from q0 never meets the first-order
 * transition that tempering from the prior crosses (broad components over several clusters
 * give way to one per cluster: inst/design.md, Mixtures). q0 has no defensive part (the jump
 * proposal's prior): particles drawn from both an O(1)-wide prior and a narrow Q would share
 * one metric, fitted to the wide ones, and the moves of the narrow ones would be refused.
 *
 * The gradient of log Q's permanent is sum_kc P_kc grad T_kc, P its marginals
 * (gm_permanent_marginals); T_kc = a_c log beta_k + the NIG log densities of component k under
 * cluster c, so d/dz_j = sum_c P_jc a_c - beta_j sum_c a_c (sum_k P_kc = 1), and per dimension
 * d/dmu = -kappa (mu - m) / sigma2, d/ds = -a - 1/2 + (b + kappa (mu - m)^2 / 2) / sigma2.
 *
 * With fewer clusters than components q0 is the sum for the chosen clusters, or the equal
 * mixture of such sums for each of several sets of clusters (gm_ref_sets: the bridge sets of
 * gm_bridge, or from k* (the chosen number) to K k-means clusters), and its gradient the mixture
 * of theirs weighted by each one's share of q0 at theta. */
#include "gaussian_mixture.h"
#include <math.h>
#include <Rmath.h>
#include <string.h>

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
 * allocation is more certain than the posterior's, and a q0 as narrow as that misses the
 * posterior's tails (inst/design.md, Mixtures). */
#define GM_BRIDGE_COUNTS 0.5

/* The first bridge set (one component more than the chosen clusters), or NULL where there is
 * none: q0 is then built from the k-means sets (gm_ref_sets, gm_ref_ok). */
static const double *gm_first_bridge(const gm_data *d, const double *aux) {
  const int C = (int) aux[0];
  if (C < 1 || C >= d->K) return NULL;
  const double *x = gm_bridge_set(d, aux, C + 1);
  return x[0] > 0 ? x : NULL;
}

/* The sets of clusters q0 mixes (gm_jump_prepare's layout): the bridge sets of C + 1 to K
 * components where there are any (a prior on the data's scale); the chosen clusters alone where
 * there are fewer than K and the others are left at their prior (a component drawn from it would
 * claim next to none of the observations, or EM emptied it: GM_HEAD_SPARE), where the posterior
 * leaves them (the sets that split clusters among them drew most particles where it has next to
 * no mass, and AIS and the restarts annealed from there in several steps: inst/design.md,
 * Mixtures); else (a stream's first chunk, where EM fills a bridge component that is not kept)
 * the k-means sets from k* clusters to K. Returns their number J; set[0..J-1] point at them,
 * and *count_scale is the share of the observations their Q is built on. */
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
  if ((int) aux[0] < d->K && gm_head(d, aux)[GM_HEAD_SPARE] != 0.0) {
    set[0] = aux;
    return 1;
  }
  for (int k = (int) gm_head(d, aux)[GM_HEAD_KSTAR]; k <= d->K; k++) {
    const double *x = gm_clusters_set(d, aux, k);
    if (x[0] > 0) set[J++] = x;
  }
  if (J == 0) set[J++] = aux;
  return J;
}

/* model.h, ref_log_density: log q0(theta) at n observations, and its gradient added to grad
 * (NULL: none). */
double gm_ref_log_density(const sg_model *m, sg_workspace *ws, const double *theta,
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

/* model.h, ref_ok. None when the data show more clusters than the mixture has components: the
 * posterior then chooses which clusters to merge, and q0 would hold the particles on k-means'
 * merge. (Not seen: partitions into the same number of clusters that score alike, such as three
 * tight clusters in a row for 2 components, where two neighbours can merge left or right.)
 * None either when the chosen clusters overlap (gm_overlap): q0 then holds the particles near
 * the classification's partition, which need not be where the posterior's mass is (AIS and
 * SGAIS stay there; nested sampling, whose likelihood becomes L prior / q0, climbs out of q0's
 * tails over many iterations of capped walks: inst/design.md, Mixtures).
 * Complete when the data show as many clusters as the mixture has components: q0 is then one
 * set of clusters. Usable with fewer (gm_ref_sets): where gm_bridge found the bridge component
 * that a prior on the data's scale puts between clusters, q0 mixes the bridge sets; where the
 * spare components would claim next to no observations, or EM empties them, it is the chosen
 * clusters with the others at the prior (where their posterior is then); else it mixes the sets
 * from k* to K k-means clusters, each leaving the components beyond its clusters at the prior
 * or splitting the clusters among them. From the prior the path to such a posterior crosses late
 * to the configurations it splits between, at many times the cost (inst/design.md, Mixtures). */
int gm_ref_ok(const sg_model *m, const double *aux) {
  const gm_data *d = m->data;
  const double *head = gm_head(d, aux);
  if (head[GM_HEAD_MORE] != 0.0 || head[GM_HEAD_OVERLAP] > GM_OVERLAP_MAX) return 0;
  return (int) aux[0] == d->K ? SG_REF_COMPLETE : SG_REF_USABLE;
}

#define GM_REFIT_ITERATIONS 100

/* One set of clusters (aux's layout) re-estimated from the n observations at buffer positions
 * start..: each goes to its most probable cluster under the set's clusters as normals and each
 * cluster's share, mean and variance become those of its observations, once (`soft` 0: as
 * gm_cem labels the k-means sets); or, `soft`, EM to convergence, each observation shared by its
 * responsibilities (the maximum-likelihood fit of the clusters as normals, near which the
 * posterior of all n puts its mass however the clusters meet). A cluster left with fewer than 2
 * observations' worth keeps its summary. The sums are of deviations from the current means, so
 * that data far from 0 lose no precision. acc: 3 C D + C doubles of scratch. */
static void gm_refit_set(const gm_data *d, int start, int n, int soft, double *set, double *acc) {
  const int D = d->d, C = (int) set[0];
  const size_t stride = 2 * (size_t) D + 1;
  double *count = acc, *se = count + C, *see = se + (size_t) C * D, *iv = see + (size_t) C * D;
  double lc[GM_JUMP_MAX_K + 1], last = R_NegInf;
  for (int it = 0; it < (soft ? GM_REFIT_ITERATIONS : 1); it++) {
    memset(acc, 0, ((size_t) 2 * C * D + C) * sizeof(double));
    /* the precisions, once per pass rather than per point (as gm_bridge) */
    gm_cluster_precisions(D, set, iv);
    double ll = 0.0;
    for (int i = 0; i < n; i++) {
      const double *y = d->yt + (sg_index) (start + i) * D;
      const int top = gm_cluster_scores(D, set, iv, y, lc);
      const double lse = soft ? sg_log_sum_exp(lc, C) : 0.0;
      ll += lse;
      for (int c = 0; c < C; c++) {
        const double r = soft ? exp(lc[c] - lse) : c == top;
        if (r == 0.0) continue;
        const double *mc = set + 1 + c * stride + 1;
        count[c] += r;
        for (int j = 0; j < D; j++) {
          const double e = y[j] - mc[j];
          se[(size_t) c * D + j] += r * e;
          see[(size_t) c * D + j] += r * e * e;
        }
      }
    }
    for (int c = 0; c < C; c++) {
      const double nc = count[c];
      if (!(nc >= 2.0)) continue; /* also NaN */
      double *cl = set + 1 + c * stride;
      cl[0] = nc / n;
      for (int j = 0; j < D; j++) {
        const double shift = se[(size_t) c * D + j] / nc;
        /* gm_cluster_summary's (n_c - 1) for the labelled, gm_bridge's n_c for the shared */
        const double v = (see[(size_t) c * D + j] - nc * shift * shift) / (soft ? nc : nc - 1.0);
        cl[1 + j] += shift;
        if (v > 0.0 && R_FINITE(v)) cl[1 + D + j] = log(v);
      }
    }
    if (fabs(ll - last) <= 1e-9 * n) break;
    last = ll;
  }
}

/* model.h, ref_refit: the chosen clusters and the sets q0 mixes (gm_ref_sets), re-estimated
 * from all n observations (gm_refit_set): summarised from at most SG_JUMP_POINTS of them, a
 * cluster's mean is off by its sd over the root of its share of those, while its posterior
 * given all n is as narrow as its sd over the root of its share of n. By EM where q0 is one set
 * of K clusters (complete) or the bridge sets (fitted by EM); once, labelled, for the k-means
 * sets of fewer clusters than components, which EM would merge or spread. The chosen clusters
 * are a copy of the k*-cluster k-means set (gm_jump_prepare): where q0 mixes that set, they are
 * copied from it again rather than refitted twice. The scratch is gm_jump_prepare's
 * standardised points (SG_JUMP_POINTS x D doubles, free between calls). */
void gm_ref_refit(const sg_model *m, int start, int n, double *aux) {
  const gm_data *d = m->data;
  const int K = d->K;
  double *acc = gm_clusters_set(d, aux, 2 * K) + gm_set_len(d) + 2 * d->d + 1;
  const double *set[GM_JUMP_MAX_K];
  double scale;
  const int J = gm_ref_sets(d, aux, set, &scale);
  const int soft = gm_first_bridge(d, aux) != NULL || (int) aux[0] == K;
  const double *chosen = gm_clusters_set(d, aux, (int) gm_head(d, aux)[GM_HEAD_KSTAR]);
  int copied = 0;
  for (int j = 0; j < J; j++) {
    if (set[j] == aux) continue;
    gm_refit_set(d, start, n, soft, (double *) set[j], acc);
    if (set[j] == chosen) {
      memcpy(aux, chosen, gm_set_len(d) * sizeof(double));
      copied = 1;
    }
  }
  if (!copied) gm_refit_set(d, start, n, (int) aux[0] == K, aux, acc);
}

/* model.h, ref_draw: theta from q0, from one of its sets of clusters drawn uniformly. */
void gm_ref_draw(const sg_model *m, const double *aux, double n, double *theta, sg_rng *rng) {
  const double *set[GM_JUMP_MAX_K];
  double scale;
  const int J = gm_ref_sets(m->data, aux, set, &scale);
  gm_draw_clusters(m->data, set[J > 1 ? sg_rng_index(rng, (uint32_t) J) : 0], n * scale, theta,
                   rng);
}
