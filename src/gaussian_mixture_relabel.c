/* The Gaussian mixture's labelling (model.h, canonicalize and to_region). The posterior is
 * symmetric under the K! relabellings of the components, so each mode has K! copies; the
 * particles are put in one of them before every annealing step, so that the preconditioner
 * sees the spread within one mode rather than the distance between copies (inst/design.md,
 * Mixtures: Labelling, Labelling regions). */
#include "gaussian_mixture.h"
#include <math.h>
#include <string.h>

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
 * covariance is then the preconditioner's rather than the spread between modes (particles in
 * label-switched modes shrink the adapted step and bias the estimate low). Any fixed rule
 * (order by a key) has a boundary between labellings, and where it cuts through the
 * posterior's mode the particles of that one mode straddle it and the preconditioner again
 * sees two: ordering by the first mean coordinate does so whenever clusters differ only in
 * other coordinates, and any other key ties on other data. So the labels follow the
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
size_t gm_region_size(int K, int D) {
  return 1 + (size_t) 4 * K * D;
}

/* model.h, canonicalize: the population alignment above, with the last reference and its
 * precisions written to region (NULL: not kept). */
void gm_canonicalize(const sg_model *m, sg_workspace *ws, double *theta, int M,
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

/* model.h, to_region: relabels theta into the region C of region; 1 if its labels changed. */
int gm_to_region(const sg_model *m, sg_workspace *ws, const double *region, double *theta) {
  const gm_data *d = m->data;
  if (!(region[0] > 0.0)) return 0;
  gm_scratch g = gm_scratch_of(d, ws);
  const size_t Kd = (size_t) d->K * d->d;
  return gm_align(d, &g, theta, region + 1, region + 1 + 2 * Kd);
}
