/* The data's clusters behind the Gaussian mixture's jump proposals and reference distribution
 * (model.h, jump_prepare). gm_jump_prepare clusters the points by k-means into k = 1, ..., K
 * clusters (standardised dimensions; GM_KMEANS_STARTS k-means++ starts from a fixed stream and
 * one from the k - 1 clusters, the best by the within-cluster sum of squares unless the model
 * scores it below fewer clusters: gm_partition), refines each by classification EM under the
 * model's own family (gm_cem), keeps each cluster's share f_c,
 * mean m_c and variance v_c, and of these K clusterings the one whose allocation the model
 * itself finds most probable (gm_clusters_log_marginal): a guess at where the posterior puts
 * its components, the others left empty. Always taking k = K misleads when the data hold
 * fewer clusters than components: k-means then splits a real cluster, and the proposal pulls
 * particles into a configuration of low posterior mass at lambda = 1 (inst/design.md,
 * Mixtures: Jump proposals). gm_cluster_nig and gm_cluster_alpha give the conjugate posterior
 * of a component that held exactly one cluster's observations, the part Q of the jump proposal
 * (gaussian_mixture_jump.c) and of the reference (gaussian_mixture_reference.c). */
#include "gaussian_mixture.h"
#include <float.h>
#include <math.h>
#include <Rmath.h>
#include <string.h>

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

/* Lloyd's iterations of k-means from the C centres (C x D) to convergence: labels in label,
 * the final centres in centre; returns the within-cluster sum of squares. count: C. */
static double gm_lloyd(const double *x, int n_pts, int D, int C, double *centre, int *label,
                       int *count) {
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
  return sse;
}

/* The squared distance of each point to the centres 0..c-1 (dist; c = 0: +Inf) lowered by
 * centre c. */
static void gm_nearest_update(const double *x, int n_pts, int D, const double *centre, int c,
                              double *dist) {
  for (int p = 0; p < n_pts; p++) {
    double q = 0.0;
    for (int j = 0; j < D; j++) {
      const double e = x[(size_t) p * D + j] - centre[(size_t) c * D + j];
      q += e * e;
    }
    if (c == 0 || q < dist[p]) dist[p] = q;
  }
}

/* k-means of the n_pts standardised points x (n_pts x D) into C clusters from GM_KMEANS_STARTS
 * k-means++ starts and, with `split` (the labels of C - 1 clusters), one more from those clusters'
 * means and the point farthest from them: start s's labels in cand + s n_pts, its within-cluster
 * sum of squares in sse[s]. Returns the number of starts. k-means++ can miss a small cluster far
 * from the others (a cluster that has just appeared in a stream, a few per cent of the points):
 * its one more centre then often lands in a large cluster, in every start, and the clustering
 * merges the small one with its neighbour; from the C - 1 clusters, the farthest point is in it.
 * centre: C x D; dist: n_pts; count: C; cand: GM_KMEANS_STARTS + 1 times n_pts. */
static int gm_kmeans(const double *x, int n_pts, int D, int C, sg_rng *rng, double *centre,
                     double *dist, int *count, const int *split, int *cand, double *sse) {
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
      gm_nearest_update(x, n_pts, D, centre, c, dist);
    }
    sse[start] = gm_lloyd(x, n_pts, D, C, centre, cand + (size_t) start * n_pts, count);
  }
  if (!split) return GM_KMEANS_STARTS;
  /* the C - 1 clusters' means (those left with points), then farthest points to C centres */
  gm_label_means(x, n_pts, D, C - 1, split, centre, count);
  int c = 0;
  for (int k = 0; k < C - 1; k++)
    if (count[k] > 0) {
      memmove(centre + (size_t) c * D, centre + (size_t) k * D, D * sizeof(double));
      gm_nearest_update(x, n_pts, D, centre, c++, dist);
    }
  for (; c < C; c++) {
    int far = 0;
    for (int p = 1; c > 0 && p < n_pts; p++)
      if (dist[p] > dist[far]) far = p;
    memcpy(centre + (size_t) c * D, x + (size_t) far * D, D * sizeof(double));
    gm_nearest_update(x, n_pts, D, centre, c, dist);
  }
  sse[GM_KMEANS_STARTS] =
      gm_lloyd(x, n_pts, D, C, centre, cand + (size_t) GM_KMEANS_STARTS * n_pts, count);
  return GM_KMEANS_STARTS + 1;
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

/* Cluster c's conjugate posterior in dimension j (a NIG: mu | sigma2 ~ N(mean, sigma2 / kappa),
 * sigma2 ~ InvGamma(a, b)) from its n_c = n f_c observations of mean m_cj and variance v_cj:
 *   kappa_c = 1 / r + n_c,  mean = n_c m_cj / kappa_c,  a_c = a + n_c / 2,
 *   b_cj = b + n_c v_cj / 2 + (n_c / r) m_cj^2 / (2 kappa_c);
 * c >= C (no cluster) or n_c = 0: the prior. */
gm_nig gm_cluster_nig(const gm_data *d, const double *aux, int c, int j, double n) {
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

/* The Dirichlet parameter of component c's weight given cluster c's n_c = n f_c observations
 * (alpha + n_c; alpha for a component without a cluster). */
double gm_cluster_alpha(const gm_data *d, const double *aux, int c, double n) {
  return d->alpha + (c < (int) aux[0] ? aux[1 + (size_t) c * (2 * d->d + 1)] * n : 0.0);
}

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

/* x[c] = log(f_c N(y; m_c, v_c)) for the C clusters of aux, as normals (y: D values). */
static void gm_cluster_log_densities(int D, int C, const double *aux, const double *y, double *x) {
  for (int c = 0; c < C; c++) {
    const double *cl = aux + 1 + (size_t) c * (2 * D + 1);
    double lg = log(cl[0]);
    for (int j = 0; j < D; j++) {
      const double e = y[j] - cl[1 + j];
      lg -= 0.5 * (GM_LOG_2PI + cl[1 + D + j] + e * e * exp(-cl[1 + D + j]));
    }
    x[c] = lg;
  }
}

/* How many of the n_obs observations a component without a cluster would claim: E = sum over
 * the points of w0 p0(y) / (w0 p0(y) + g(y)), times n_obs / n_pts, with p0 the prior predictive
 * of one component (a Student t of 2 a degrees of freedom and scale^2 b (1 + ratio) / a in each
 * dimension), w0 = 1 / K its prior mean weight, and g the density of the chosen clusters as
 * normals. E near 0 (data far outside the prior's scale of a component, e.g. faithful in its
 * raw units) says the posterior of such a component is its prior, so a reference that leaves it
 * at the prior is close to the posterior there; a component drawn from a prior on the data's
 * scale could take points between the clusters instead (scale(faithful) with 3 components: a
 * small bridge component between its two clusters). The points are pts (x: scratch, n_pts). */
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
    gm_cluster_log_densities(D, C, aux, y, x);
    x[C] = lp0;
    total += exp(lp0 - sg_log_sum_exp(x, C + 1));
  }
  return total * n_obs / n_pts;
}

/* The share of the observations the chosen clusters leave in doubt: U = the mean over the points
 * of 1 - max_c r_c, r_c a point's responsibilities under the clusters as normals. The reference
 * is each cluster's conjugate posterior given its points as if their allocation were certain;
 * where the clusters overlap, the posterior weighs other partitions, and the classification's
 * may lie far from its mass (gm_ref_ok). Separated clusters give U near 0. The points are pts
 * (x: scratch, n_pts). */
static double gm_overlap(const gm_data *d, const int *pts, int n_pts, double *x,
                         const double *aux) {
  const int D = d->d, C = (int) aux[0];
  if (C < 2) return 0.0;
  double total = 0.0;
  for (int p = 0; p < n_pts; p++) {
    gm_cluster_log_densities(D, C, aux, d->yt + (sg_index) pts[p] * D, x);
    double top = x[0];
    for (int c = 1; c < C; c++)
      if (x[c] > top) top = x[c];
    total += -expm1(top - sg_log_sum_exp(x, C));
  }
  return total / n_pts;
}

#define GM_BRIDGE_ITERATIONS 200

/* The sets of clusters for a prior on the data's scale with fewer clusters than components
 * (gm_ref_sets): the C chosen clusters and one more component, fitted together by EM with soft
 * assignments under the model's prior (each M step the joint mode of a component's mean and
 * variance given its share of the points), then with one more, and so on up to K. Each extra
 * component starts at the points' mean and variance, so it settles where the components so far
 * leave points unexplained: on scale(faithful) with 3 components, a small bridge between the two
 * clusters, which is where tempering from the prior puts the third
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

/* gm_jump_prepare's scratch for one clustering: x, the n_pts x D standardised points; trial and
 * alt, room for K + 1 clusters each (aux's layout); label, the chosen partition's labels (the
 * next k's `split`); cand, each k-means start's; the rest as gm_kmeans and gm_cem take them. */
typedef struct {
  double *x, *centre, *var, *lf, *dist, *sd, *trial, *alt;
  int *label, *count, *cand;
} gm_cluster_work;

/* Start `start`'s labels refined by gm_cem, as clusters into `out` (aux's layout, data units);
 * returns their log marginal under `components` components (-Inf without clusters). */
static double gm_refined(const gm_data *d, const int *pts, int n_pts, int k, int components,
                         double n_obs, gm_cluster_work *w, int start, double *out) {
  int *lab = w->cand + (size_t) start * n_pts;
  gm_cem(w->x, n_pts, d->d, k, lab, w->centre, w->var, w->lf, w->count);
  gm_cluster_summary(d, pts, n_pts, lab, k, w->sd, out);
  return out[0] > 0 ? gm_clusters_log_marginal(d, out, n_obs, components) : R_NegInf;
}

/* The partition of the points pts into k clusters, in w->trial (data units) and w->label; returns
 * its log marginal under `components` components (gm_clusters_log_marginal; -Inf without
 * clusters). It is k-means' start of least sum of squares refined by gm_cem, unless gm_cem drops
 * one of its clusters or the model scores it no higher than `fewer` (the best partition into
 * fewer clusters): k-means' k-th centre then went where the model puts none. Two small clusters
 * far apart (a stream's newest, a few dozen points each) cost k-means more merged than a large
 * cluster split in two does, so every start may split and merge so. The other starts that keep
 * their k clusters through gm_cem then compete with it by the model's log marginal, as k* is
 * chosen. Not otherwise: on overlapping clusters the model can score a partition that sets a few
 * points apart above k-means', and a reference from it misleads nested sampling (inst/design.md,
 * Mixtures). */
static double gm_partition(const gm_data *d, const int *pts, int n_pts, int k, int components,
                           double n_obs, double fewer, sg_rng *rng, gm_cluster_work *w) {
  double sse[GM_KMEANS_STARTS + 1];
  const int starts = gm_kmeans(w->x, n_pts, d->d, k, rng, w->centre, w->dist, w->count,
                               k > 1 ? w->label : NULL, w->cand, sse);
  int chosen = 0;
  for (int s = 1; s < starts; s++)
    if (sse[s] < sse[chosen]) chosen = s;
  double lm = gm_refined(d, pts, n_pts, k, components, n_obs, w, chosen, w->trial);
  if ((int) w->trial[0] < k || lm <= fewer) {
    const int merged = chosen;
    for (int s = 0; s < starts; s++) {
      if (s == merged) continue;
      const double l = gm_refined(d, pts, n_pts, k, components, n_obs, w, s, w->alt);
      if ((int) w->alt[0] == k && l > lm) {
        lm = l;
        chosen = s;
        memcpy(w->trial, w->alt, (1 + (size_t) k * (2 * d->d + 1)) * sizeof(double));
      }
    }
  }
  memcpy(w->label, w->cand + (size_t) chosen * n_pts, (size_t) n_pts * sizeof(int));
  return lm;
}

/* The doubles of aux (gaussian_mixture.h): the chosen clusters (C, then 1 + 2 d each), the head
 * (k*, E, the flag of more clusters and U), the K sets of k-means clusters and K - 1 bridge sets,
 * then gm_jump_prepare's scratch (gm_cluster_work): two sets of trial clusters (K + 1 of them),
 * the standardised points, centres, variances and log-shares, distances, sd and mean, and the
 * int arrays: labels, counts and each k-means start's labels. */
size_t gm_aux_size(const gm_data *d) {
  const size_t K = d->K, D = d->d, cl = gm_set_len(d);
  const size_t ints = (size_t) (GM_KMEANS_STARTS + 2) * SG_JUMP_POINTS + K + 2;
  return (2 * K + 2) * cl + GM_HEAD_LEN + 2 * (2 * D + 1) + (size_t) SG_JUMP_POINTS * (D + 1) +
         (K + 1) * (2 * D + 1) + 2 * D + ints / 2 + 1;
}

/* model.h, jump_prepare: the clusters of the points pts[0..n_pts-1] into aux, as described at
 * the top of this file, for a target of n_obs observations. */
void gm_jump_prepare(const sg_model *m, const int *pts, int n_pts, double n_obs, double *aux) {
  const gm_data *d = m->data;
  const int D = d->d, K = d->K;
  const size_t cl = gm_set_len(d); /* one set of clusters */
  double *head = gm_head(d, aux);
  gm_cluster_work w;
  w.trial = gm_clusters_set(d, aux, 2 * K);
  w.alt = w.trial + cl + 2 * D + 1;
  w.x = w.alt + cl + 2 * D + 1;
  w.centre = w.x + (size_t) n_pts * D;
  w.var = w.centre + (size_t) (K + 1) * D;
  w.lf = w.var + (size_t) (K + 1) * D;
  w.dist = w.lf + K + 1;
  w.sd = w.dist + n_pts;
  double *trial = w.trial, *x = w.x, *sd = w.sd, *mean = sd + D;
  w.label = (int *) (mean + D);
  w.count = w.label + n_pts;
  w.cand = w.count + K + 2;
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
    const double lm = gm_partition(d, pts, n_pts, k, K, n_obs, best, &rng, &w);
    memcpy(gm_clusters_set(d, aux, k), trial, cl * sizeof(double));
    if (lm > best) {
      best = lm;
      memcpy(aux, trial, cl * sizeof(double));
      head[GM_HEAD_KSTAR] = k;
    }
  }
  /* more clusters than components: K + 1 clusters, scored under a model of K + 1 components,
   * beat the best of up to K under this one. (Splitting one of K well-separated Gaussian
   * clusters scores close to them, so a margin over every alternative would refuse
   * such data, and it would still not see two partitions into the same number of clusters that
   * score alike: see gm_ref_ok.) */
  head[GM_HEAD_MORE] = 0.0;
  if (K + 1 <= n_pts) {
    const double lm = gm_partition(d, pts, n_pts, K + 1, K + 1, n_obs, best, &rng, &w);
    if ((int) trial[0] == K + 1 && lm > best) head[GM_HEAD_MORE] = 1.0;
  }
  head[GM_HEAD_CLAIM] = gm_empty_claim(d, pts, n_pts, x, aux, n_obs);
  head[GM_HEAD_OVERLAP] = gm_overlap(d, pts, n_pts, x, aux);
  /* The components beyond the chosen clusters are left at their prior where one drawn from it
   * would claim next to none of the observations, or where EM empties the first of them (no
   * bridge): q0 is then the chosen clusters alone (gm_ref_sets). Bridge sets are kept only for
   * a target of all the model's observations: for the first chunk of a longer run, components
   * left at the prior stay free for clusters that later observations show (bridge sets fitted to
   * a stream's first points use up the components a cluster appearing later needs:
   * inst/design.md, Mixtures). */
  const double *from = aux;
  for (int k = 2; k <= K; k++) gm_bridge_set(d, aux, k)[0] = 0.0;
  head[GM_HEAD_SPARE] = head[GM_HEAD_CLAIM] <= GM_EMPTY_CLAIM;
  if (aux[0] >= 1 && aux[0] < K && head[GM_HEAD_MORE] == 0.0 && !head[GM_HEAD_SPARE]) {
    const int all = n_obs >= m->n_obs;
    for (int k = (int) aux[0] + 1; k <= K; k++) {
      double *to = gm_bridge_set(d, aux, k);
      /* x (the standardised points, n_pts x D) is free after gm_empty_claim, and C' + 1 <=
       * n_pts / 2 + 1 <= n_pts (each cluster holds 2 points' worth at least) */
      gm_bridge(d, pts, n_pts, from, mean, sd, w.centre, w.var, w.lf, x, to);
      if (to[0] == 0.0) break;
      from = to;
      if (!all) break;
    }
    head[GM_HEAD_SPARE] = from == aux;
    if (!all) gm_bridge_set(d, aux, (int) aux[0] + 1)[0] = 0.0;
  }
}

void gm_cluster_precisions(int D, const double *set, double *iv) {
  const size_t stride = 2 * (size_t) D + 1, C = (size_t) set[0];
  for (size_t cj = 0; cj < C * D; cj++) iv[cj] = exp(-set[1 + (cj / D) * stride + 1 + D + cj % D]);
}

int gm_cluster_scores(int D, const double *set, const double *iv, const double *y, double *lc) {
  const int C = (int) set[0];
  int top = 0;
  for (int c = 0; c < C; c++) {
    const double *cl = set + 1 + (size_t) c * (2 * D + 1);
    double v = log(cl[0]);
    for (int j = 0; j < D; j++) {
      const double e = y[j] - cl[1 + j];
      v -= 0.5 * (cl[1 + D + j] + e * e * iv[(size_t) c * D + j]);
    }
    lc[c] = v;
    if (v > lc[top]) top = c;
  }
  return top;
}

/* model.h, strata: each observation's most probable of the chosen clusters of aux, as normals. */
int gm_strata(const sg_model *m, const double *aux, const int *rows, int n, int *label) {
  const gm_data *d = m->data;
  const int D = d->d, C = (int) aux[0];
  if (C < 2 || C > SG_STRATA_MAX) return 0;
  double *iv = (double *) R_alloc((size_t) C * D, sizeof(double)), lc[SG_STRATA_MAX];
  gm_cluster_precisions(D, aux, iv);
  for (int i = 0; i < n; i++)
    label[i] = gm_cluster_scores(D, aux, iv, d->yt + (sg_index) (rows ? rows[i] : i) * D, lc);
  return C;
}

/* Probe for the tests (model.h; hooks_r.c): the chosen clusters of aux. */
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
