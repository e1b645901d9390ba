/* Log-space weight utilities shared by every estimator and model. */
#include "weights.h"
#include <math.h>
#include <string.h>

/* log(sum(exp(x))) without overflow; -Inf entries (zero weights) are allowed. */
double sg_log_sum_exp(const double *x, int n) {
  double mx = R_NegInf;
  for (int i = 0; i < n; i++)
    if (x[i] > mx) mx = x[i];
  if (!R_FINITE(mx)) return mx; /* all -Inf (zero), +Inf or NaN propagate */
  double s = 0.0;
  for (int i = 0; i < n; i++) s += exp(x[i] - mx);
  return mx + log(s);
}

void sg_weighted_mean(const double *theta, const double *logw, int M, int dim, double *mean) {
  double lse = sg_log_sum_exp(logw, M);
  memset(mean, 0, dim * sizeof(double));
  for (int i = 0; i < M; i++) {
    double w = exp(logw[i] - lse);
    for (int j = 0; j < dim; j++) mean[j] += w * theta[(size_t) i * dim + j];
  }
}

/* The ESS is unchanged when every log weight moves by one constant, and 2 l1 - l2 below cancels
 * two numbers of the size of the largest log weight: at -1e20 (a prior draw's log-likelihood
 * for a covariate in seconds since 1970) the difference is lost to rounding and the "ESS" comes
 * out far above the number of particles, so annealing would take lambda = 1 in one step. Log
 * weights beyond SG_ESS_SHIFT_FROM in size are therefore measured from their largest; smaller
 * ones, whose rounding error is below 1e-9 of the ESS, are left as they are, so that the
 * annealing steps of runs that never met such weights are reproduced bit for bit. */
#define SG_ESS_SHIFT_FROM 1048576.0

static double largest(const double *a, int n) {
  double mx = R_NegInf;
  for (int i = 0; i < n; i++)
    if (a[i] > mx) mx = a[i];
  return mx;
}

/* The shift for log weights scale * a whose largest is mx: mx itself, or 0 (see above). For
 * scale > 0, rounding keeps order, so mx = scale * max(a) exactly: the maximum is taken once
 * per set of log weights, not at every scale the annealing step tries. */
static double ess_shift(double mx) {
  return R_FINITE(mx) && fabs(mx) > SG_ESS_SHIFT_FROM ? mx : 0.0;
}

/* sg_ess with the shift given */
static double ess_shifted(const double *logw, int n, double scale, double shift, double *work) {
  for (int i = 0; i < n; i++) work[i] = scale * logw[i] - shift;
  double l1 = sg_log_sum_exp(work, n);
  for (int i = 0; i < n; i++) work[i] *= 2.0;
  double l2 = sg_log_sum_exp(work, n);
  return exp(2.0 * l1 - l2);
}

/* ESS of weights w_i = exp(scale * logw_i) computed in log space:
 * log ESS = 2 logsumexp(a) - logsumexp(2a), a = scale * logw (paper Section 3). */
double sg_ess(const double *logw, int n, double scale, double *work) {
  return ess_shifted(logw, n, scale, ess_shift(scale * largest(logw, n)), work);
}

/* The ESS criterion of an annealing step Delta: with logw NULL, the ESS of the incremental
 * weights w_i = p(C | theta_i)^Delta (paper Section 3); else the conditional ESS of Zhou,
 * Johansen and Aston (2016, J. Comput. Graph. Stat. 25(3), Section 3.1),
 *   CESS = n (sum_i W_i w_i)^2 / sum_i W_i w_i^2,  W = exp(logw) normalised,
 * the ESS the increment of log Z is estimated with: particles the current weights have
 * already dropped do not count. Both equal (sum w)^2 / sum w^2 when the W are equal. */
typedef struct {
  const double *loglik, *logw;
  double lse_logw;    /* log sum exp(logw) */
  double loglik_max;  /* the largest loglik (ess_shift) */
  int n;
  double *work;
} step_ess;

static double step_ess_at(const step_ess *c, double delta) {
  const double shift = ess_shift(delta * c->loglik_max);
  if (!c->logw) return ess_shifted(c->loglik, c->n, delta, shift, c->work);
  const int n = c->n;
  double *a = c->work;
  /* as in sg_ess, the w_i are measured from the largest, which leaves the CESS as it is; the
   * difference is taken before log W_i is added, which it would swallow */
  for (int i = 0; i < n; i++) a[i] = c->logw[i] - c->lse_logw + (delta * c->loglik[i] - shift);
  const double l1 = sg_log_sum_exp(a, n);
  for (int i = 0; i < n; i++) a[i] += delta * c->loglik[i] - shift;
  const double l2 = sg_log_sum_exp(a, n);
  return n * exp(2.0 * l1 - l2);
}

/* The adaptive annealing step of Algorithm 1 line 6: Delta in (0, max_delta] with ESS(Delta) =
 * target (the criterion above). ESS(Delta) falls monotonically from its value at Delta = 0, so
 * take max_delta when it already meets the target and bisect otherwise. The result is always
 * > 0, so annealing always progresses. */
double sg_annealing_step(const double *loglik, const double *logw, int n, double max_delta,
                         double target, double *ess, double *work) {
  step_ess c = {loglik, logw, logw ? sg_log_sum_exp(logw, n) : 0.0, largest(loglik, n), n, work};
  double e = step_ess_at(&c, max_delta);
  if (e >= target) {
    *ess = e;
    return max_delta;
  }
  double lo = 0.0, hi = max_delta;
  for (int it = 0; it < 200 && hi - lo > 1e-15 * max_delta; it++) {
    double mid = 0.5 * (lo + hi);
    e = step_ess_at(&c, mid);
    if (e >= target) {
      lo = mid;
      if (e - target < 1e-9 * target) break;
    } else {
      hi = mid;
    }
  }
  if (lo > 0.0) {
    *ess = step_ess_at(&c, lo);
    return lo;
  }
  /* The search above resolves steps down to 1e-15 max_delta. Far smaller ones are needed when
   * the particles' log-likelihoods differ by more than about 1e15 nats (a wide prior under a
   * likelihood that grows exponentially: Poisson regression with covariates of sd 3 gives
   * -5e22 at prior draws), and no step keeps the target when particles of zero likelihood
   * carry more than 1 - target / n of the weight. Annealing then crawled by 1e-15 a step.
   * Search log Delta instead, down to e^-700 max_delta, for the target scaled by the share of
   * particles (by weight, for the conditional ESS) with positive likelihood: the others get
   * weight zero at any step and go at the next resampling. Only where the search above found
   * nothing, so the runs it served are unchanged. */
  double live = 0.0;
  for (int i = 0; i < n; i++)
    if (loglik[i] > R_NegInf) live += logw ? exp(logw[i] - c.lse_logw) : 1.0 / n;
  const double goal = target * live;
  e = step_ess_at(&c, max_delta);
  if (e >= goal) {
    *ess = e;
    return max_delta;
  }
  double llo = log(max_delta) - 700.0, lhi = log(max_delta);
  e = step_ess_at(&c, exp(llo));
  if (e >= goal) {
    for (int it = 0; it < 100 && lhi - llo > 1e-9; it++) {
      double mid = 0.5 * (llo + lhi);
      if (step_ess_at(&c, exp(mid)) >= goal) llo = mid;
      else lhi = mid;
    }
  }
  *ess = step_ess_at(&c, exp(llo));
  return exp(llo);
}

/* Systematic resampling (one uniform draw): n_out ancestors among the n_in particles, in
 * proportion to exp(logw); lower variance than multinomial resampling. */
void sg_resample_systematic_n(const double *logw, int n_in, int *ancestors, int n_out,
                              double *work, sg_rng *rng) {
  double lse = sg_log_sum_exp(logw, n_in);
  double u = sg_rng_unif(rng) / n_out, cum = 0.0;
  int j = 0;
  for (int i = 0; i < n_in; i++) work[i] = exp(logw[i] - lse);
  for (int i = 0; i < n_out; i++) {
    double point = u + (double) i / n_out;
    while (j < n_in - 1 && cum + work[j] < point) cum += work[j++];
    ancestors[i] = j;
  }
}

void sg_resample_systematic(const double *logw, int n, int *ancestors, double *work, sg_rng *rng) {
  sg_resample_systematic_n(logw, n, ancestors, n, work, rng);
}
