/* Random-walk Metropolis-Hastings whose acceptance test reads a random subset of the data
 * (slides "Adaptive subsampling for Metropolis-Hastings"). With the target split as
 *   log f(theta) = rest(theta) + factor * sum_{k < n} log p(y_k | theta)       (kernel.h)
 * a proposal theta' = theta + h L xi (symmetric) is accepted when log u < log f(theta') -
 * log f(theta), that is when
 *   Lambda = (1/n) sum_k ell_k  >  psi = (log u - rest(theta') + rest(theta)) / (factor n),
 *   ell_k = log p(y_k | theta') - log p(y_k | theta).
 * Lambda is estimated by the mean of ell over a subset drawn without replacement, of size
 * batch, 2 batch, 4 batch, ..., until a stopping rule says the decision would be the same with
 * all the data:
 *   AUSTERITY (Korattikara, Chen & Welling 2014): the t-test. With the sample sd s_m and the
 *     finite population correction, t = (mean - psi) / (s_m / sqrt(m) sqrt((n - m) / (n - 1)));
 *     stop when P(|T_{m-1}| > |t|) / 2 < epsilon.
 *   CONFIDENCE (Bardenet, Doucet & Holmes 2014): a concentration bound c_m with
 *     P(|mean - Lambda| > c_m) <= delta_m, delta_m = (p - 1) / (p m^p) epsilon with p = 2, so
 *     that the bounds hold at every m with probability 1 - epsilon; stop when |mean - psi| > c_m.
 *     Hoeffding (without replacement): c_m = C sqrt((2 / m) (1 - (m - 1) / n) log(2 / delta_m));
 *     empirical Bernstein: c_m = s_m sqrt(2 log(3 / delta_m) / m) + 6 C log(3 / delta_m) / m;
 *     C = max_k |ell_k| bounded by the model (sg_model.log_lik_range).
 * Once the subset would pass half the data the test reads all n observations and is exact.
 * The tests and the observations they read are counted in k->mh (tests, items). */
#include "kernel.h"
#include <Rmath.h>
#include <math.h>
#include <string.h>

/* ---- a uniformly random order of 0..n-1, drawn lazily (sparse Fisher-Yates): position i holds
 * i unless the table says otherwise, so a subset of m costs O(m) whatever n, and depends only
 * on the particle's stream (not on earlier tests or threads). */
static int table_slot(const sg_mh_test *t, int key) {
  unsigned h = ((unsigned) key * 2654435761u) & (unsigned) (t->cap - 1);
  while (t->key[h] != -1 && t->key[h] != key) h = (h + 1) & (unsigned) (t->cap - 1);
  return (int) h;
}

static int order_get(const sg_mh_test *t, int i) {
  int h = table_slot(t, i);
  return t->key[h] == -1 ? i : t->value[h];
}

static void order_set(sg_mh_test *t, int i, int v) {
  int h = table_slot(t, i);
  if (t->key[h] == -1) {
    t->key[h] = i;
    t->used[t->n_used++] = h;
  }
  t->value[h] = v;
}

static void order_reset(sg_mh_test *t) {
  for (int u = 0; u < t->n_used; u++) t->key[t->used[u]] = -1;
  t->n_used = 0;
}

/* The buffer position of population member k. */
static inline int member(const sg_potential *pot, int k) {
  return pot->data.slot ? pot->data.slot[k] : pot->data.start + k;
}

/* ell for population member k: two single-observation likelihood evaluations. */
static double ratio(const sg_potential *pot, const double *from, const double *to, int k) {
  const sg_model *m = pot->data.m;
  int i = member(pot, k);
  return sg_model_log_lik(m, pot->data.ws, to, &i, 0, 1, 1.0, NULL) -
         sg_model_log_lik(m, pot->data.ws, from, &i, 0, 1, 1.0, NULL);
}

/* The whole sum of ell over the population (the exact test). */
static double ratio_sum(const sg_potential *pot, const double *from, const double *to) {
  const sg_model *m = pot->data.m;
  return sg_model_log_lik(m, pot->data.ws, to, pot->data.slot, pot->data.start, pot->data.n, 1.0,
                          NULL) -
         sg_model_log_lik(m, pot->data.ws, from, pot->data.slot, pot->data.start, pot->data.n, 1.0,
                          NULL);
}

/* Whether the stopping rule says mean > psi is settled, after m of n with sum and sum of
 * squares of ell; range: the model's bound C (confidence sampler). */
static int settled(const sg_mh_test *t, int kind, double psi, double sum, double sumsq, int m,
                   int n, double range) {
  const double mean = sum / m;
  double var = (sumsq - m * mean * mean) / (m - 1);
  const double sd = var > 0.0 ? sqrt(var) : 0.0;
  if (kind == SG_KERNEL_AUSTERITY) {
    const double se = sd / sqrt((double) m) * sqrt((double) (n - m) / (n - 1));
    if (!(se > 0.0)) return mean != psi;
    const double tstat = fabs(mean - psi) / se;
    return Rf_pt(-tstat, m - 1.0, 1, 0) < t->tolerance;
  }
  const double delta = t->tolerance / (2.0 * (double) m * m);
  double c;
  if (t->bound == SG_BOUND_HOEFFDING) {
    c = range * sqrt(2.0 / m * (1.0 - (m - 1.0) / n) * log(2.0 / delta));
  } else {
    const double l3 = log(3.0 / delta);
    c = sd * sqrt(2.0 * l3 / m) + 6.0 * range * l3 / m;
  }
  return fabs(mean - psi) > c;
}

/* The subsampled decision whether log u < log f(to) - log f(from), given d_rest = rest(to) -
 * rest(from). */
static int mh_accept(const sg_potential *pot, sg_kernel *k, const double *from, const double *to,
                     double d_rest, double log_u) {
  sg_mh_test *t = &k->mh;
  const int n = pot->data.n;
  const double factor = pot->data.factor;
  t->tests += 1.0;
  if (n == 0 || factor == 0.0) return log_u < d_rest;
  const double psi = (log_u - d_rest) / (factor * n);
  const double range = (k->kind == SG_KERNEL_CONFIDENCE)
                           ? pot->data.m->log_lik_range(pot->data.m, from, to) : 0.0;
  double sum = 0.0, sumsq = 0.0;
  int m = 0, want = t->batch < n ? t->batch : n, decision = -1;
  while (decision < 0) {
    if (want > n / 2) {
      /* the exact test on all the data */
      double total = ratio_sum(pot, from, to);
      t->items += n; /* the subset read before is in the likelihood evaluations */
      decision = total / n > psi;
      break;
    }
    for (; m < want; m++) {
      /* position m of the random order: swap it with a uniform later position */
      int j = m + (int) sg_rng_index(k->rng, (uint32_t) (n - m));
      int vm = order_get(t, m), vj = order_get(t, j);
      order_set(t, j, vm);
      order_set(t, m, vj);
      double l = ratio(pot, from, to, vj);
      sum += l;
      sumsq += l * l;
    }
    if (!R_FINITE(sum)) {
      /* a ratio of -Inf (theta' impossible for an observation) settles it; +Inf or NaN
       * (theta impossible, or a failed evaluation) rejects */
      t->items += m;
      decision = sum == R_PosInf;
      break;
    }
    if (settled(t, k->kind, psi, sum, sumsq, m, n, range)) {
      t->items += m;
      decision = sum / m > psi;
      break;
    }
    want = 2 * m;
  }
  order_reset(t);
  return decision;
}

void sg_subsample_mh_run(const sg_potential *pot, int dim, double *theta, int steps,
                         sg_kernel *k) {
  double *prop = k->work;
  k->accepted = 0;
  if (steps == 0) return;
  double rest = pot->log_rest(pot->ctx, theta);
  for (int s = 0; s < steps && !sg_interrupt_poll(); s++) {
    sg_random_walk_propose(k, dim, theta, prop);
    const double log_u = log(sg_rng_unif(k->rng));
    const double rest_new = pot->log_rest(pot->ctx, prop);
    if (!(rest_new > R_NegInf) || ISNAN(rest_new)) continue;
    if (mh_accept(pot, k, theta, prop, rest_new - rest, log_u)) {
      memcpy(theta, prop, dim * sizeof(double));
      rest = rest_new;
      k->accepted++;
    }
  }
}
