/* Firefly Monte Carlo (Maclaurin & Adams 2014, "Firefly Monte Carlo: exact MCMC with subsets of
 * data", UAI; slides "FlyMC"). With the target split as
 *   log f(theta) = rest(theta) + factor * sum_{k < n} log L_k(theta)               (kernel.h)
 * and a lower bound 0 < B_k(theta) <= L_k(theta) whose product over the population collapses
 * (model.h, lik_bound_collapse: log B_k is quadratic in theta), each observation gets a
 * brightness z_k in {0, 1} with
 *   p(z_k = 1 | theta) = 1 - (B_k / L_k)^factor,
 * so that the joint target of theta and z is
 *   log f(theta, z) = rest(theta) + factor * sum_all log B_k(theta)
 *                     + sum_{z_k = 1} [log(L_k^factor - B_k^factor) - factor log B_k]
 *                   = rest(theta) + factor (c + b' theta - theta' A theta)
 *                     + sum_{z_k = 1} log(expm1(factor (log L_k - log B_k))),
 * whose theta-marginal is f. A run of the kernel draws every z_k from its conditional given
 * theta (a Gibbs step: one pass over the population), then takes `steps` random-walk
 * Metropolis-Hastings steps on theta given z, each reading only the bright observations and the
 * collapsed bound (O(dim^2)). Both leave the joint invariant, so the run leaves f invariant
 * exactly; z is not carried between runs (particles are resampled and their moves are
 * independent), which is why each run pays the one pass. The tangent points are chosen at the
 * anchor (sg_flymc_bound), the particles' weighted mean, so few observations are bright near
 * it (MAP tuning, Maclaurin & Adams Section 3.1). The run is exact for any fixed anchor; the
 * anchor depends on the particle being moved only through its weight in the mean (1 / M), as
 * kernels tuned on the particle population do (unlike the metric, whose dependence on the
 * moved particle is systematic and is left out, precond.c).
 * Counted in k->mh: each MH step is a test, and the observations read are the population once
 * per run (the brightness pass) plus the bright ones at each step, so the trace's data_fraction
 * is about 1 / steps + (bright observations) / n. */
#include "kernel.h"
#include <math.h>
#include <string.h>

/* log(expm1(d)) for d > 0 (log(L^f - B^f) - f log B with d = f (log L - log B)); -Inf for d <= 0
 * (an observation cannot be bright where its bound is tight) and for NaN. */
static inline double log_expm1(double d) {
  if (!(d > 0.0)) return R_NegInf;
  return d > M_LN2 ? d + log1p(-exp(-d)) : log(expm1(d));
}

/* The buffer position of population member k (as subsample_mh.c). */
static inline int member(const sg_potential *pot, int k) {
  return pot->data.slot ? pot->data.slot[k] : pot->data.start + k;
}

void sg_flymc_bound_alloc(sg_flymc_bound *B, int dim) {
  B->dim = dim;
  B->anchor = (double *) R_alloc((size_t) dim * (dim + 2), sizeof(double));
  B->A = B->anchor + dim;
  B->b = B->A + (size_t) dim * dim;
  B->c = 0.0;
}

void sg_flymc_bound_set(sg_flymc_bound *B, const sg_potential *pot, const double *theta,
                        const double *logw, int M) {
  const int dim = B->dim;
  sg_weighted_mean(theta, logw, M, dim, B->anchor);
  memset(B->A, 0, (size_t) dim * dim * sizeof(double));
  memset(B->b, 0, dim * sizeof(double));
  B->c = 0.0;
  if (pot->data.n > 0)
    sg_model_lik_bound_collapse(pot->data.m, pot->data.ws, B->anchor, pot->data.slot,
                                pot->data.start, pot->data.n, B->A, B->b, &B->c);
}

/* sum_all log B_k(theta) = c + b' theta - theta' A theta. */
static double collapsed(const sg_flymc_bound *B, const double *theta) {
  const int dim = B->dim;
  double lin = B->c, quad = 0.0;
  for (int l = 0; l < dim; l++) {
    double Al = 0.0;
    for (int j = 0; j < dim; j++) Al += B->A[j + (size_t) l * dim] * theta[j];
    lin += B->b[l] * theta[l];
    quad += theta[l] * Al;
  }
  return lin - quad;
}

/* The Gibbs step: z_k for every population member at theta, the bright ones' buffer positions
 * into k->bright; returns their number and sets *sum to their terms log expm1(d_k). */
static int brighten(const sg_potential *pot, const double *theta, int n, sg_kernel *k,
                    double *sum) {
  const sg_flymc_bound *B = pot->data.bound;
  const double f = pot->data.factor;
  int nb = 0;
  double s = 0.0;
  for (int k0 = 0; k0 < n; k0 += SG_BLOCK) {
    const int len = n - k0 < SG_BLOCK ? n - k0 : SG_BLOCK;
    sg_model_lik_bound_gap(pot->data.m, pot->data.ws, B->anchor, theta,
                           pot->data.slot ? pot->data.slot + k0 : NULL, pot->data.start + k0,
                           len, k->gap);
    for (int j = 0; j < len; j++) {
      const double d = f * k->gap[j];
      if (!(d > 0.0)) continue; /* tight (or NaN): dark */
      if (sg_rng_unif(k->rng) < -expm1(-d)) {
        k->bright[nb++] = member(pot, k0 + j);
        s += log_expm1(d);
      }
    }
  }
  k->mh.items += n;
  *sum = s;
  return nb;
}

/* The bright observations' terms at theta, stopping at the first block whose sum is -Inf or NaN
 * (the proposal is then rejected); adds the observations read to k->mh.items. */
static double bright_sum(const sg_potential *pot, const double *theta, int nb, sg_kernel *k) {
  const double f = pot->data.factor;
  double s = 0.0;
  for (int k0 = 0; k0 < nb; k0 += SG_BLOCK) {
    const int len = nb - k0 < SG_BLOCK ? nb - k0 : SG_BLOCK;
    sg_model_lik_bound_gap(pot->data.m, pot->data.ws, pot->data.bound->anchor, theta,
                           k->bright + k0, 0, len, k->gap);
    k->mh.items += len;
    for (int j = 0; j < len; j++) s += log_expm1(f * k->gap[j]);
    if (!(s > R_NegInf)) break;
  }
  return s;
}

void sg_flymc_run(const sg_potential *pot, int dim, double *theta, int steps, sg_kernel *k) {
  double *prop = k->work;
  k->accepted = 0;
  if (steps == 0) return;
  const double f = pot->data.factor;
  /* no population (SGAIS's first chunk) or factor 0: the exact MH test on rest alone */
  const int n = (pot->data.n > 0 && f > 0.0) ? pot->data.n : 0;
  double bright = 0.0;
  const int nb = n ? brighten(pot, theta, n, k, &bright) : 0;
  double cur = pot->log_rest(pot->ctx, theta);
  if (n) cur += f * collapsed(pot->data.bound, theta) + bright;
  for (int s = 0; s < steps && !sg_interrupt_poll(); s++) {
    sg_random_walk_propose(k, dim, theta, prop);
    const double log_u = log(sg_rng_unif(k->rng));
    k->mh.tests += 1.0;
    double next = pot->log_rest(pot->ctx, prop);
    if (!(next > R_NegInf) || ISNAN(next)) continue;
    if (n) next += f * collapsed(pot->data.bound, prop) + bright_sum(pot, prop, nb, k);
    if (log_u < next - cur) {
      memcpy(theta, prop, dim * sizeof(double));
      cur = next;
      k->accepted++;
    }
  }
}

/* A probe for the tests (hooks_r.c): the bound with tangent points at `anchor`, collapsed over
 * all of m's observations, at theta (c + b' theta - theta' A theta), and each observation's gap
 * log p(y_i | theta) - log B_i(theta) (n_obs values). */
double sg_flymc_probe(const sg_model *m, const double *anchor, const double *theta, double *gap) {
  sg_flymc_bound B;
  sg_flymc_bound_alloc(&B, m->dim);
  memcpy(B.anchor, anchor, m->dim * sizeof(double));
  memset(B.A, 0, (size_t) m->dim * m->dim * sizeof(double));
  memset(B.b, 0, m->dim * sizeof(double));
  m->lik_bound_collapse(m, B.anchor, NULL, 0, m->n_obs, B.A, B.b, &B.c);
  m->lik_bound_gap(m, B.anchor, theta, NULL, 0, m->n_obs, gap);
  return collapsed(&B, theta);
}
