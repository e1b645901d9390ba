/* Moves measured in units of the target's width: the preconditioner of the SGHMC kernel
 * estimated from the weighted particles, and the move settings every estimator shares.
 *
 * Why: with the paper's eta = lr / n (Section 6.1) a step is a fixed length in the units of the
 * parameters, so how well the kernel mixes, and how much mini-batch noise heats the sampled
 * posterior, depend on how the user scaled the data and on the noise level (inst/design.md,
 * "Presets and defaults"). SMC samplers instead tune the kernel to the current particle
 * population (Buchholz, Chopin & Jacob 2021; Chopin & Papaspiliopoulos 2020, ch. 17): here the
 * inverse mass matrix is the weighted particle covariance, and eta = h^2 makes each step about h
 * target widths long, whatever the units, the model's size or the temperature lambda. */
#include "kernel.h"
#include <math.h>
#include <string.h>

void sg_precond_alloc(sg_precond *p, int kind, int dim) {
  p->kind = kind;
  p->dim = dim;
  p->factor = NULL;
  p->work = NULL;
  p->acc = NULL;
  p->acc_n = p->acc_ess = 0.0;
  p->n = 1.0;
  p->smoothing = 1.0;
  p->loo_w = p->loo_mean = p->loo_cov = p->loo_prev = p->loo_work = NULL;
  p->loo_sum_w2 = 0.0;
  p->loo_r = 1.0;
  p->loo_M = p->loo_cap = 0;
  p->has_mean = 0;
  p->free = NULL;
  p->free_work = NULL;
  if (kind == SG_PRECOND_NONE) return;
  size_t len = (kind == SG_PRECOND_DENSE) ? (size_t) dim * dim : (size_t) dim;
  p->factor = (double *) R_alloc(len, sizeof(double));
  p->acc = (double *) R_alloc(len, sizeof(double));
  p->loo_mean = (double *) R_alloc(dim, sizeof(double));
  p->loo_cov = (double *) R_alloc(len, sizeof(double));
  p->loo_prev = (double *) R_alloc(len, sizeof(double));
  p->loo_work = (double *) R_alloc(len + 2 * (size_t) dim, sizeof(double));
  p->work = (double *) R_alloc(3 * (size_t) dim, sizeof(double));
  /* identity until the first estimate */
  memset(p->factor, 0, len * sizeof(double));
  for (int j = 0; j < dim; j++) p->factor[(kind == SG_PRECOND_DENSE) ? (size_t) j * (dim + 1) : (size_t) j] = 1.0;
}

void sg_precond_set_free(sg_precond *p, const sg_model *m) {
  if (p->kind == SG_PRECOND_NONE || !m || !m->free_project) return;
  p->free = m;
  p->free_work = (double *) R_alloc(p->dim, sizeof(double));
}

/* x <- P x: x without its component along the free directions (none: unchanged). */
static inline void project(const sg_precond *p, double *x) {
  if (p->free) p->free->free_project(p->free, x);
}

void sg_precond_redraw_free(const sg_precond *p, double *theta, sg_rng *rng) {
  if (!p || !p->free) return;
  /* z ~ N(0, sd^2 I) has free part z - P z ~ N(0, sd^2 (I - P)), the prior's along them, and
   * theta's free part theta - P theta is replaced by it (with a mean and sd per coordinate that
   * each free direction's coordinates share, likewise) */
  const int dim = p->dim;
  const double sd = p->free->free_sd;
  const double *mean = p->free->free_mean, *sds = p->free->free_sd_each;
  double *z = p->free_work;
  if (sds) /* a mean and sd per coordinate (model.h) */
    for (int j = 0; j < dim; j++) z[j] = mean[j] + sds[j] * sg_rng_norm(rng);
  else
    for (int j = 0; j < dim; j++) z[j] = sd * sg_rng_norm(rng);
  for (int j = 0; j < dim; j++) theta[j] -= z[j];
  project(p, theta); /* P theta - P z */
  for (int j = 0; j < dim; j++) theta[j] += z[j];
}

/* cov (dense, lower triangle) += c (I - P), c its mean diagonal: the covariance of the
 * particles' projections is singular along the free directions, and P (cov + c (I - P)) P =
 * cov, so the metric is the same whatever c. col: scratch of dim. */
static void add_free_block(const sg_precond *p, double *cov, double *col) {
  const int dim = p->dim;
  double c = 0.0;
  for (int k = 0; k < dim; k++) c += cov[k + (size_t) k * dim];
  c /= dim;
  for (int k = 0; k < dim; k++) {
    memset(col, 0, dim * sizeof(double));
    col[k] = 1.0;
    project(p, col); /* column k of P */
    for (int j = k; j < dim; j++) cov[j + (size_t) k * dim] += c * ((j == k) - col[j]);
  }
}

/* In-place Cholesky of the lower triangle of a (column-major, n x n); 0 on success. */
static int cholesky(double *a, int n) {
  for (int j = 0; j < n; j++) {
    double d = a[j + (size_t) j * n];
    for (int k = 0; k < j; k++) d -= a[j + (size_t) k * n] * a[j + (size_t) k * n];
    if (!(d > 0.0) || !R_FINITE(d)) return 1;
    d = sqrt(d);
    a[j + (size_t) j * n] = d;
    for (int i = j + 1; i < n; i++) {
      double s = a[i + (size_t) j * n];
      for (int k = 0; k < j; k++) s -= a[i + (size_t) k * n] * a[j + (size_t) k * n];
      a[i + (size_t) j * n] = s / d;
    }
    for (int i = 0; i < j; i++) a[i + (size_t) j * n] = 0.0; /* upper triangle unused: zero */
  }
  return 0;
}

/* Sets factor (kind's layout) from the covariance cov (lower triangle when dense; overwritten)
 * of an estimate from M particles; 1 when cov is not usable (factor then untouched). dg is
 * scratch of dim. */
static int factor_from_cov(const sg_precond *p, double *cov, int M, double *factor, double *dg,
                           double *col) {
  const int dim = p->dim, dense = p->kind == SG_PRECOND_DENSE;
  for (int k = 0; k < dim; k++) {
    dg[k] = cov[dense ? k + (size_t) k * dim : (size_t) k];
    if (!(dg[k] > 0.0) || !R_FINITE(dg[k])) return 1;
  }
  if (!dense) {
    for (int j = 0; j < dim; j++) factor[j] = sqrt(dg[j]);
    return 0;
  }
  /* The full covariance needs several particles per dimension. With few, the directions it
   * underestimates are ones the particles barely move along, their spread there stays small and
   * the next estimate inherits it: they collapse and log Z comes out too high. Shrinking the
   * correlations instead, by a fixed, a data-driven (Schafer & Strimmer 2005) or a
   * per-correlation intensity, leaves a strongly correlated posterior ill-conditioned, and
   * switching on the fluctuating ESS flips between the two. So: the full covariance when there
   * are at least 6 particles per dimension, else its diagonal (the threshold's calibration is in
   * inst/design.md, "Measurements behind the defaults"). */
  if (M < 6 * dim) {
    for (int k = 0; k < dim; k++)
      for (int j = k + 1; j < dim; j++) cov[j + (size_t) k * dim] = 0.0;
  } else if (p->free) {
    add_free_block(p, cov, col);
  }
  if (cholesky(cov, dim)) {
    /* numerically not positive definite: the diagonal */
    memset(cov, 0, (size_t) dim * dim * sizeof(double));
    for (int k = 0; k < dim; k++) cov[k + (size_t) k * dim] = sqrt(dg[k]);
  }
  memcpy(factor, cov, (size_t) dim * dim * sizeof(double));
  return 0;
}

int sg_precond_estimate(sg_precond *p, const double *theta, const double *logw, int M,
                        double *work) {
  if (p->kind == SG_PRECOND_NONE) return 0;
  const int dim = p->dim, dense = p->kind == SG_PRECOND_DENSE;
  const size_t len = dense ? (size_t) dim * dim : (size_t) dim;
  double *w = work, *mean = work + M, *cov = work + M + dim;
  p->loo_M = 0;
  /* normalised weights and their ESS */
  double lse = 0.0, sum_w2 = 0.0;
  if (logw) {
    lse = sg_log_sum_exp(logw, M);
    if (!R_FINITE(lse)) return 1;
  }
  for (int i = 0; i < M; i++) {
    w[i] = logw ? exp(logw[i] - lse) : 1.0 / M;
    sum_w2 += w[i] * w[i];
  }
  double ess = 1.0 / sum_w2;
  if (!(ess > 1.0 + 1e-9)) return 1; /* one particle carries all the weight: no spread */
  memset(mean, 0, dim * sizeof(double));
  for (int i = 0; i < M; i++)
    for (int j = 0; j < dim; j++) mean[j] += w[i] * theta[(size_t) i * dim + j];
  /* unbiased weighted covariance (divided by 1 - sum w^2); lower triangle when dense */
  const double norm = 1.0 / (1.0 - sum_w2);
  memset(cov, 0, len * sizeof(double));
  for (int i = 0; i < M; i++) {
    const double *th = theta + (size_t) i * dim;
    const double *dv = th; /* the deviation from the mean, projected (free directions) */
    if (p->free) {
      for (int k = 0; k < dim; k++) p->free_work[k] = th[k] - mean[k];
      project(p, p->free_work);
      dv = p->free_work;
    }
    for (int k = 0; k < dim; k++) {
      const double ek = p->free ? dv[k] : th[k] - mean[k];
      const double dk = w[i] * norm * ek;
      if (!dense) {
        cov[k] += dk * ek;
        continue;
      }
      for (int j = k; j < dim; j++)
        cov[j + (size_t) k * dim] += dk * (p->free ? dv[j] : th[j] - mean[j]);
    }
  }
  for (int k = 0; k < dim; k++) {
    double d = cov[dense ? k + (size_t) k * dim : (size_t) k];
    if (!(d > 0.0) || !R_FINITE(d)) return 1;
  }
  /* kept for sg_precond_leave_out() */
  if (p->loo_cap < M) {
    p->loo_w = (double *) R_alloc(M, sizeof(double));
    p->loo_cap = M;
  }
  memcpy(p->loo_w, w, M * sizeof(double));
  memcpy(p->loo_mean, mean, dim * sizeof(double));
  p->has_mean = 1;
  memcpy(p->loo_cov, cov, len * sizeof(double));
  p->loo_sum_w2 = sum_w2;
  p->loo_r = 1.0;
  /* Average with the earlier estimates, rescaled to the current n (a posterior covariance
   * scales as 1/n), with weight `smoothing` for the new one: an estimate from a few dozen
   * particles is noisy, and a direction it underestimates is one the particles barely move
   * along. The effective number of particles behind the average grows to ESS / smoothing. */
  if (p->smoothing < 1.0 && p->acc_n > 0.0) {
    const double r = p->smoothing, c = (1.0 - r) * p->acc_n / p->n;
    for (size_t l = 0; l < len; l++) {
      p->loo_prev[l] = c * p->acc[l];
      cov[l] = r * cov[l] + p->loo_prev[l];
    }
    p->loo_r = r;
    ess += (1.0 - r) * p->acc_ess;
  }
  memcpy(p->acc, cov, len * sizeof(double));
  p->acc_n = p->n;
  p->acc_ess = ess;
  if (factor_from_cov(p, cov, M, p->factor, mean, p->free_work)) return 1; /* mean: in loo_mean */
  p->loo_M = M;
  return 0;
}

const sg_gaussian *sg_precond_gaussian(const sg_precond *p, sg_gaussian *g) {
  if (!p || !p->has_mean || p->free) return NULL;
  sg_gaussian_set(g, p->loo_mean, p->factor, p->kind == SG_PRECOND_DIAGONAL, p->dim);
  return g;
}

/* Leaving particle a (normalised weight w_a, at theta_a, d = theta_a - mean) out of the estimate:
 * with C = sum_i w_i (theta_i - mean)(theta_i - mean)' = (1 - S2) Sigma, the other particles'
 * weights renormalised to sum to one give
 *   C' = (C - w_a / (1 - w_a) d d') / (1 - w_a),   S2' = (S2 - w_a^2) / (1 - w_a)^2,
 * and Sigma' = C' / (1 - S2'), averaged with the earlier estimates as Sigma was. Why: the metric
 * of the move must not depend on the particle it moves. A particle in the tail of the target
 * stretches the metric along its own offset from the mean, so it takes longer steps out there
 * than it would on its way back; the kernel's Metropolis test assumes a fixed metric, and the
 * particles contract towards the centre, which biases log Z upwards (inst/design.md). */
void sg_precond_leave_out(const sg_precond *p, int a, const double *theta_a, sg_precond *out) {
  const int dim = p->dim, dense = p->kind == SG_PRECOND_DENSE;
  if (p->kind == SG_PRECOND_NONE) return;
  const size_t len = dense ? (size_t) dim * dim : (size_t) dim;
  double *cov = out->loo_work, *d = cov + len, *dg = cov + len + dim;
  const double wa = (p->loo_M > 0 && a >= 0 && a < p->loo_M) ? p->loo_w[a] : 1.0;
  const double s2 = (p->loo_sum_w2 - wa * wa) / ((1.0 - wa) * (1.0 - wa));
  out->has_mean = p->has_mean;
  if (p->has_mean) memcpy(out->loo_mean, p->loo_mean, dim * sizeof(double));
  if (!(wa < 1.0 - 1e-9) || !(s2 < 1.0 - 1e-9)) {
    memcpy(out->factor, p->factor, len * sizeof(double));
    return;
  }
  /* the mean without particle a (jump proposals use it, kernel.c) */
  for (int j = 0; j < dim; j++) out->loo_mean[j] -= wa / (1.0 - wa) * (theta_a[j] - p->loo_mean[j]);
  const double keep = (1.0 - p->loo_sum_w2) / ((1.0 - wa) * (1.0 - s2));
  const double drop = wa / ((1.0 - wa) * (1.0 - wa) * (1.0 - s2));
  const double r = p->loo_r;
  for (int j = 0; j < dim; j++) d[j] = theta_a[j] - p->loo_mean[j];
  project(p, d);
  for (int k = 0; k < dim; k++) {
    if (!dense) {
      cov[k] = r * (keep * p->loo_cov[k] - drop * d[k] * d[k]);
      continue;
    }
    for (int j = k; j < dim; j++) {
      const size_t l = j + (size_t) k * dim;
      cov[l] = r * (keep * p->loo_cov[l] - drop * d[j] * d[k]);
    }
  }
  if (r < 1.0)
    for (size_t l = 0; l < len; l++) cov[l] += p->loo_prev[l];
  /* the same rule as the estimate's (particles per dimension), so the two never differ in kind */
  if (factor_from_cov(p, cov, p->loo_M, out->factor, dg, out->free_work))
    memcpy(out->factor, p->factor, len * sizeof(double));
}

/* With free directions the factor is P L (kernel.h): Sigma g is P L L' P g, L x is P L x and
 * L' g is L' P g, each projection on a copy or in place. */
void sg_precond_apply(const sg_precond *p, const double *g, double *out) {
  const int dim = p->dim;
  const double *L = p->factor;
  if (p->free) {
    if (out != g) memcpy(out, g, dim * sizeof(double));
    project(p, out);
    g = out; /* read in full (into t) before out is written, or elementwise */
  }
  if (p->kind == SG_PRECOND_NONE) {
    if (out != g) memcpy(out, g, dim * sizeof(double));
  } else if (p->kind == SG_PRECOND_DIAGONAL) {
    for (int j = 0; j < dim; j++) out[j] = L[j] * L[j] * g[j];
  } else {
    /* out = L (L' g) through t = L' g in the last third of p->work (the kernel uses the rest) */
    double *t = p->work + 2 * (size_t) dim;
    for (int k = 0; k < dim; k++) {
      double s = 0.0;
      for (int j = k; j < dim; j++) s += L[j + (size_t) k * dim] * g[j];
      t[k] = s;
    }
    for (int j = 0; j < dim; j++) {
      double s = 0.0;
      for (int k = 0; k <= j; k++) s += L[j + (size_t) k * dim] * t[k];
      out[j] = s;
    }
  }
  project(p, out);
}

void sg_precond_cov_apply(const sg_precond *p, const double *g, double *out) {
  const int dim = p->dim;
  const double *A = p->acc;
  if (p->kind == SG_PRECOND_NONE || p->acc_n == 0.0) {
    memcpy(out, g, dim * sizeof(double));
  } else if (p->kind == SG_PRECOND_DIAGONAL) {
    for (int j = 0; j < dim; j++) out[j] = A[j] * g[j];
  } else {
    /* the lower triangle of the symmetric A */
    for (int j = 0; j < dim; j++) {
      double s = 0.0;
      for (int k = 0; k < j; k++) s += A[j + (size_t) k * dim] * g[k];
      for (int k = j; k < dim; k++) s += A[k + (size_t) j * dim] * g[k];
      out[j] = s;
    }
  }
}

void sg_precond_factor_apply(const sg_precond *p, double *x) {
  const int dim = p->dim;
  const double *L = p->factor;
  if (p->kind == SG_PRECOND_DIAGONAL) {
    for (int j = 0; j < dim; j++) x[j] *= L[j];
  } else if (p->kind == SG_PRECOND_DENSE) {
    /* x <- L x from the last row up, so each x[k] is read before it is overwritten */
    for (int j = dim - 1; j >= 0; j--) {
      double s = 0.0;
      for (int k = 0; k <= j; k++) s += L[j + (size_t) k * dim] * x[k];
      x[j] = s;
    }
  }
  project(p, x);
}

void sg_precond_factor_transpose_apply(const sg_precond *p, const double *g, double *out) {
  const int dim = p->dim;
  const double *L = p->factor;
  if (p->free) {
    if (out != g) memcpy(out, g, dim * sizeof(double));
    project(p, out);
    g = out; /* in place: out[k] reads g[j], j >= k, not yet overwritten */
  }
  if (p->kind == SG_PRECOND_NONE) {
    if (out != g) memcpy(out, g, dim * sizeof(double));
  } else if (p->kind == SG_PRECOND_DIAGONAL) {
    for (int j = 0; j < dim; j++) out[j] = L[j] * g[j];
  } else {
    for (int k = 0; k < dim; k++) {
      double s = 0.0;
      for (int j = k; j < dim; j++) s += L[j + (size_t) k * dim] * g[j];
      out[k] = s;
    }
  }
}

/* z <- L^-1 P (x - y): the difference in whitened coordinates. */
static void whiten(const sg_precond *p, const double *x, const double *y, double *z) {
  const int dim = p->dim;
  for (int j = 0; j < dim; j++) z[j] = x[j] - y[j];
  project(p, z); /* the metric's own subspace */
  if (p->kind == SG_PRECOND_DIAGONAL) {
    for (int j = 0; j < dim; j++) z[j] /= p->factor[j];
  } else if (p->kind == SG_PRECOND_DENSE) {
    /* forward substitution: z <- L^-1 z */
    for (int j = 0; j < dim; j++) {
      double v = z[j];
      for (int k = 0; k < j; k++) v -= p->factor[j + (size_t) k * dim] * z[k];
      z[j] = v / p->factor[j + (size_t) j * dim];
    }
  }
}

/* ||L^-1 z||^2 for z = x - y: squared distance in the metric Sigma^-1. z is dim scratch. */
static double whitened_norm2(const sg_precond *p, const double *x, const double *y, double *z) {
  double ss = 0.0;
  whiten(p, x, y, z);
  for (int j = 0; j < p->dim; j++) ss += z[j] * z[j];
  return ss;
}

double sg_precond_distance2(const sg_precond *p, const double *x, const double *y, double *work) {
  return whitened_norm2(p, x, y, work) / p->dim;
}

double sg_precond_spread(const sg_precond *p, const double *theta, const double *logw, int M,
                         double *work) {
  const int dim = p->dim;
  double *mean = work, *z = work + dim;
  double lse = sg_log_sum_exp(logw, M), total = 0.0;
  sg_weighted_mean(theta, logw, M, dim, mean);
  for (int i = 0; i < M; i++)
    total += exp(logw[i] - lse) * whitened_norm2(p, theta + (size_t) i * dim, mean, z);
  return total / dim;
}

double sg_precond_jump_correlation(const sg_precond *p, const double *before, const double *after,
                                   const double *logw, int M, double *work) {
  const int dim = p->dim;
  double *mb = work, *ma = work + dim, *za = work + 2 * dim, *zb = work + 3 * dim;
  double *saa = work + 4 * dim, *sbb = work + 5 * dim, *sab = work + 6 * dim;
  const double lse = sg_log_sum_exp(logw, M);
  sg_weighted_mean(before, logw, M, dim, mb);
  sg_weighted_mean(after, logw, M, dim, ma);
  memset(saa, 0, 3 * (size_t) dim * sizeof(double));
  for (int i = 0; i < M; i++) {
    const double W = exp(logw[i] - lse);
    whiten(p, after + (size_t) i * dim, ma, za);
    whiten(p, before + (size_t) i * dim, mb, zb);
    for (int j = 0; j < dim; j++) {
      saa[j] += W * za[j] * za[j];
      sbb[j] += W * zb[j] * zb[j];
      sab[j] += W * za[j] * zb[j];
    }
  }
  /* coordinates with (next to) no spread, e.g. along free directions projected out, say
   * nothing: their correlation would be one of rounding errors */
  double total = 0.0, worst = -1.0;
  for (int j = 0; j < dim; j++) total += saa[j] + sbb[j];
  const double tiny = 1e-10 * total / dim;
  for (int j = 0; j < dim; j++) {
    if (saa[j] > tiny && sbb[j] > tiny) {
      const double c = sab[j] / sqrt(saa[j] * sbb[j]);
      if (c > worst) worst = c;
    }
  }
  return worst;
}

int sg_move_again(const sg_move_settings *s, int rounds, double correlation) {
  return rounds < s->max_rounds && correlation > s->max_correlation;
}

int sg_move_distance_steps(const sg_move_settings *s, int steps, double step_size) {
  if (s->scale != SG_STEP_WIDTH || steps == 0) return steps;
  double k = ceil(steps * s->base_step / step_size);
  if (!(k >= 1.0)) return 1;
  return (k > 5.0 * steps) ? 5 * steps : (int) k;
}

double sg_move_eta(const sg_move_settings *s, double n) {
  if (s->scale == SG_STEP_PER_OBSERVATION) return s->learning_rate / n;
  return s->step_size * s->step_size;
}

int sg_move_steps(const sg_move_settings *s, double ess, double target, int M) {
  if (s->min_steps >= s->steps) return s->steps;
  double moved = (double) M / ess - 1.0, full = (double) M / target - 1.0;
  double k = ceil(s->steps * moved / full);
  if (!(k >= s->min_steps)) return s->min_steps; /* also catches NaN */
  return (k > s->steps) ? s->steps : (int) k;
}

/* The median of x[0..n-1] (x is reordered; n is the number of particles, so a sort will do). */
static double median(double *x, int n) {
  for (int i = 1; i < n; i++) {
    double v = x[i];
    int j = i - 1;
    while (j >= 0 && x[j] > v) {
      x[j + 1] = x[j];
      j--;
    }
    x[j + 1] = v;
  }
  return (n % 2) ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double sg_move_adapt(const sg_move_settings *s, double target, double *step_size,
                     double *acceptance, int M) {
  double a = median(acceptance, M);
  double f = exp(2.0 * (a - target));
  *step_size *= (f < 0.5) ? 0.5 : (f > 2.0 ? 2.0 : f);
  if (*step_size > 2.0 * s->base_step) *step_size = 2.0 * s->base_step;
  return a;
}

int sg_kernel_suits_model(int kernel, const sg_model *m, sg_status *st) {
  if (kernel == SG_KERNEL_CONFIDENCE && !m->log_lik_range)
    return sg_fail(st, SG_ERR_INPUT, "`kernel = \"confidence\"` needs a bound on the log-likelihood "
                   "ratios, which %s models do not supply; use `kernel = \"austerity\"`.", m->name);
  if (kernel == SG_KERNEL_FLYMC && !(m->lik_bound_collapse && m->lik_bound_gap))
    return sg_fail(st, SG_ERR_INPUT, "`kernel = \"flymc\"` needs a collapsible lower bound on the "
                   "likelihood, which %s models do not supply; use `kernel = \"austerity\"` or "
                   "`\"confidence\"`.", m->name);
  return SG_OK;
}

int sg_move_settings_for(sg_move_settings *s, const sg_model *m, sg_status *st) {
  s->base_step = sg_kernel_random_walk(s->kernel) ? 2.38 / sqrt((double) m->dim) : s->step_size;
  if (s->kernel == SG_KERNEL_CONFIDENCE && m->log_lik_range) m->log_lik_range(m, NULL, NULL);
  return sg_kernel_suits_model(s->kernel, m, st);
}

/* The random-walk MH kernels' proposal (kernel.h): a step of sqrt(eta) target widths. */
void sg_random_walk_propose(sg_kernel *k, int dim, const double *theta, double *prop) {
  const double h = sqrt(k->eta);
  double *xi = k->work + dim;
  for (int j = 0; j < dim; j++) xi[j] = sg_rng_norm(k->rng);
  const sg_precond *pc = sg_kernel_metric(k);
  if (pc) sg_precond_factor_apply(pc, xi);
  for (int j = 0; j < dim; j++) prop[j] = theta[j] + h * xi[j];
}
