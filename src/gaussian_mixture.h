/* The Gaussian mixture's parts (internal to its files). The model, its prior and likelihood and
 * its constructor are in gaussian_mixture.c; the constructor plugs in the parts of the other
 * files, each built on this header only:
 *   gaussian_mixture_relabel.c    canonical labelling of the particles (model.h, canonicalize)
 *   gaussian_mixture_cluster.c    the data's clusters behind the jump proposals and the
 *                                 reference (model.h, jump_prepare) and their conjugate
 *                                 posteriors
 *   gaussian_mixture_jump.c       the jump proposal (model.h, jump_propose and jump_log_q)
 *   gaussian_mixture_reference.c  the reference distribution q0 (model.h, ref_log_density)
 * (relabel and cluster use no other part, jump uses cluster, reference uses jump and cluster,
 * and gaussian_mixture.c uses them all.)
 *
 * theta = (z_1..z_{K-1}, mu (K x d, component after component), s (K x d, likewise)), with
 * z_k = log(beta_k / beta_K) and s_kj = log sigma2_kj (gaussian_mixture.c). */
#ifndef SG_GAUSSIAN_MIXTURE_H
#define SG_GAUSSIAN_MIXTURE_H

#include "model.h"
#include <math.h>

typedef struct {
  const double *yt; /* d x n, column i = observation i */
  int K, d;
  double alpha, shape, scale, ratio; /* prior: Dirichlet(alpha), InvGamma(shape, scale), N(0, ratio sigma2) */
} gm_data;

#define GM_LOG_2PI 1.837877066409345483560659472811

/* ---------------------------------------------------------------- the workspace's scratch */

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

/* The doubles of the jump proposal's and the reference's scratch (none without jumps). */
static inline size_t gm_jump_doubles(int K, int D) {
  return K > 1 && K <= GM_JUMP_MAX_K
             ? (size_t) 2 * K * K + ((size_t) 2 << K) + (size_t) K + (size_t) 4 * K * D
             : 0;
}

/* The doubles of gm_canonicalize's scratch. */
static inline size_t gm_align_doubles(int K, int D) {
  return (size_t) 4 * K * D + (size_t) 2 * D + (size_t) K * K + (size_t) 3 * (K + 1);
}

/* The scratch of workspace ws, laid out as gm_scratch_bytes() counts it. */
static inline gm_scratch gm_scratch_of(const gm_data *d, sg_workspace *ws) {
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

/* ---------------------------------------------------------------- small shared helpers */

/* log beta_k for k = 1..K from z (z_K = 0): log beta_k = z_k - log(1 + sum_{l<K} exp(z_l)). */
static inline void gm_log_weights(const gm_data *d, const double *z, double *log_beta) {
  for (int k = 0; k < d->K - 1; k++) log_beta[k] = z[k];
  log_beta[d->K - 1] = 0.0;
  double lse = sg_log_sum_exp(log_beta, d->K);
  for (int k = 0; k < d->K; k++) log_beta[k] -= lse;
}

/* Adds the term v to a log-sum-exp kept as mx + log(acc) while it is summed (one pass, no buffer
 * of the terms: the permanent's subset sums, gm_log_permanent and gm_permanent_marginals). */
static inline void gm_lse_add(double v, double *mx, double *acc) {
  if (v > *mx) {
    *acc = *acc * exp(*mx - v) + 1.0;
    *mx = v;
  } else {
    *acc += exp(v - *mx);
  }
}

/* ---------------------------------------------------------------- the clusters (aux) */

/* aux (m->jump_aux doubles, filled by gm_jump_prepare) = the chosen clusters (C, then for each
 * cluster: f_c, m_c (d), log v_c (d)); then the head: k*, the number of k-means clusters they
 * came from, E (gm_empty_claim), whether the data show more clusters than components, U
 * (gm_overlap) and whether the components beyond the chosen clusters are left at their prior
 * (gm_ref_sets); then the clusters from k = 1..K k-means clusters (C = 0 where k-means did not
 * run: k > n_pts) and the
 * bridge sets of 2..K components (gm_bridge; C = 0 where there is none), for the reference of
 * an overfitted mixture (gm_ref_log_density); then gm_jump_prepare's scratch. */
enum { GM_HEAD_KSTAR, GM_HEAD_CLAIM, GM_HEAD_MORE, GM_HEAD_OVERLAP, GM_HEAD_SPARE, GM_HEAD_LEN };
/* The doubles of one set of clusters. */
static inline size_t gm_set_len(const gm_data *d) {
  return 1 + (size_t) d->K * (2 * d->d + 1);
}
/* k*, E, the flag, U and the spare flag, after the chosen clusters */
static inline double *gm_head(const gm_data *d, const double *aux) {
  return (double *) aux + gm_set_len(d);
}
/* The set of k k-means clusters (k = 1..K). */
static inline double *gm_clusters_set(const gm_data *d, const double *aux, int k) {
  return gm_head(d, aux) + GM_HEAD_LEN + (size_t) (k - 1) * gm_set_len(d);
}
/* gm_bridge's set of k components (k = 2..K; C = 0 where there is none), after the K k-means
 * sets */
static inline double *gm_bridge_set(const gm_data *d, const double *aux, int k) {
  return gm_clusters_set(d, aux, d->K + k - 1);
}

/* A component without a cluster claims next to no observations when E (gm_empty_claim) is at
 * most this: no bridge sets are then fitted (gm_jump_prepare), and the reference mixes the
 * k-means sets, whose spare components stay at the prior (gm_ref_sets). */
#define GM_EMPTY_CLAIM 0.1

/* The chosen clusters overlap when the share of the observations a classification by them
 * leaves in doubt, U (gm_overlap), is above this: no reference then (gm_ref_ok; its calibration
 * in inst/design.md, Mixtures). */
#define GM_OVERLAP_MAX 0.02

/* A normal-inverse-gamma distribution of one component's mean and variance in one dimension:
 * mu | sigma2 ~ N(mean, sigma2 / kappa), sigma2 ~ InvGamma(a, b). */
typedef struct {
  double kappa, mean, a, b;
} gm_nig;

/* ---------------------------------------------------------------- the parts */

/* gaussian_mixture_relabel.c */
size_t gm_region_size(int K, int D);
void gm_canonicalize(const sg_model *m, sg_workspace *ws, double *theta, int M,
                     const double *logw, double *region);
int gm_to_region(const sg_model *m, sg_workspace *ws, const double *region, double *theta);

/* gaussian_mixture_cluster.c */
size_t gm_aux_size(const gm_data *d);
void gm_jump_prepare(const sg_model *m, const int *pts, int n_pts, double n_obs, double *aux);
int gm_strata(const sg_model *m, const double *aux, const int *rows, int n, int *label);
gm_nig gm_cluster_nig(const gm_data *d, const double *aux, int c, int j, double n);
double gm_cluster_alpha(const gm_data *d, const double *aux, int c, double n);
/* The precisions of the clusters of a set (aux's layout: C, then f_c, m_c, log v_c), C x D into
 * iv, once per pass over the points; then each cluster's log f_c N(y; m_c, v_c) for a point y, up
 * to D log(2 pi) / 2, into lc, and the most probable cluster (the first of equals). */
void gm_cluster_precisions(int D, const double *set, double *iv);
int gm_cluster_scores(int D, const double *set, const double *iv, const double *y, double *lc);

/* gaussian_mixture_jump.c */
double gm_log_q_clusters(const gm_data *d, const double *aux, double n, const double *lb,
                         const double *mu, const double *s, double *T, double *f, double *a);
void gm_draw_clusters(const gm_data *d, const double *aux, double n, double *theta, sg_rng *rng);
void gm_jump_propose(const sg_model *m, double *prop, const double *aux, double n, int rungs,
                     const sg_gaussian *pop, sg_rng *rng);
double gm_jump_log_q(const sg_model *m, sg_workspace *ws, const double *theta, const double *aux,
                     double n, int rungs, const sg_gaussian *pop);

/* gaussian_mixture_reference.c */
double gm_ref_log_density(const sg_model *m, sg_workspace *ws, const double *theta,
                          const double *aux, double n, double *grad);
int gm_ref_ok(const sg_model *m, const double *aux);
void gm_ref_draw(const sg_model *m, const double *aux, double n, double *theta, sg_rng *rng);
void gm_ref_refit(const sg_model *m, int start, int n, double *aux);

#endif
