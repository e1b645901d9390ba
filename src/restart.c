/* The restart decision of a streaming run (restart.h; R/restart.R runs the restart). */
#include "restart.h"
#include <math.h>

/* The surprise of a chunk (buffer positions base..base+cn-1) after the nx observations just
 * before it (cn of them, and at least SHIFT_EARLIER where there are: their variance must be
 * known well): with lp_o = log sum_j w_j p(y_o | theta_j) the log predictive density of each
 * observation under SHIFT_PARTICLES particles spread evenly through the population (their
 * weights normalised among them), the two-sample z statistic
 *   (mean lp over the earlier ones - mean lp over the chunk) / sqrt(var_e (1 / nx + 1 / cn)).
 * Stationary data give about N(0, 1) (the earlier ones, already in the posterior, are predicted
 * a little better: about p / n nats each); a chunk from a distribution the particles do not
 * cover is predicted worse by many sds. Both means' variances are the earlier ones': the chunk's
 * own would hide the shift that matters most, a fraction f of the chunk predicted d nats worse
 * (a new cluster's first observations), which moves its mean by f d and its sd to about
 * d sqrt(f (1 - f)), so that a statistic with var_c stays near sqrt(cn f / (1 - f)) however far
 * the new cluster is. Below SHIFT_POOLED_MIN observations on either side, or where the earlier
 * ones show no variance (a discrete outcome, all alike), each sample's own (Welch): a mean of a
 * few skewed lp is far from normal. This is the surprise of detect_shifts() computed online
 * from the particles, against the observations just before rather than a running baseline, so
 * that it needs no state; it costs SHIFT_PARTICLES (nx + cn) likelihood evaluations, a few per
 * cent of a chunk's moves. lp: scratch of SHIFT_PARTICLES (nx + cn). */
#define SHIFT_PARTICLES 8
#define SHIFT_POOLED_MIN 30
#define SHIFT_EARLIER 500
static double shift_score(const sg_model *m, sg_workspace *ws, const double *theta,
                          const double *logw, int M, int base, int nx, int cn, double *lp) {
  const int J = M < SHIFT_PARTICLES ? M : SHIFT_PARTICLES, n = nx + cn;
  double lw[SHIFT_PARTICLES], col[SHIFT_PARTICLES];
  for (int j = 0; j < J; j++) {
    const int i = (int) (((double) j * M) / J);
    lw[j] = logw[i];
    sg_model_log_lik_pointwise(m, ws, theta + (size_t) i * m->dim, base - nx, n, lp + (size_t) j * n);
  }
  const double norm = sg_log_sum_exp(lw, J);
  double sum[2] = {0.0, 0.0}, sum2[2] = {0.0, 0.0};
  for (int o = 0; o < n; o++) {
    for (int j = 0; j < J; j++) col[j] = lw[j] + lp[(size_t) j * n + o];
    const double v = sg_log_sum_exp(col, J) - norm;
    sum[o >= nx] += v;
    sum2[o >= nx] += v * v;
  }
  const double me = sum[0] / nx, mc = sum[1] / cn;
  const double ve = nx > 1 ? (sum2[0] - nx * me * me) / (nx - 1) : 0.0,
               vc = cn > 1 ? (sum2[1] - cn * mc * mc) / (cn - 1) : 0.0;
  const double se = nx >= SHIFT_POOLED_MIN && cn >= SHIFT_POOLED_MIN && ve > 0.0
                        ? sqrt(ve * (1.0 / nx + 1.0 / cn))
                        : sqrt(ve / nx + vc / cn);
  if (ISNAN(me) || ISNAN(mc)) return 0.0; /* the chunk's check (check_chunk_loglik) says why */
  if (!R_FINITE(me) || !R_FINITE(mc)) return me > mc ? R_PosInf : 0.0;
  return se > 0.0 ? (me - mc) / se : (me > mc ? R_PosInf : 0.0);
}

/* A restart re-runs every observation so far, so it needs all of them held from the first. */
void sg_restart_watch_init(sg_restart_watch *w, const sg_restart_triggers *t, int all_held,
                           int augments, int chunk_size, sg_restart_stop *stop) {
  w->t = t;
  w->on = (R_FINITE(t->threshold) || R_FINITE(t->due) || t->on_reference || t->ess > 0) &&
          all_held;
  w->augments = augments;
  const int earlier = chunk_size > SHIFT_EARLIER ? chunk_size : SHIFT_EARLIER;
  w->lp = w->on && R_FINITE(t->threshold)
              ? (double *) R_alloc((size_t) SHIFT_PARTICLES * (chunk_size + earlier), sizeof(double))
              : NULL;
  *stop = (sg_restart_stop){0.0, 0, 0};
}

/* Due at a chunk the particles predict far worse than the data before it (a shift they may not
 * follow: clusters where no component is, which local moves cannot reach), at the grid's next
 * point, or once the model's reference is complete (for a mixture, clusters that were merged
 * are told apart, and a restart from the reference built on them puts a component on each).
 * The grid waits while the data show fewer clusters than components and the moves augment: a
 * spare component, drawn to the observations it claims, follows a cluster that appears within
 * the chunk that shows it, where a restart would anneal the whole past again (inst/design.md). */
int sg_restart_due(const sg_restart_watch *w, const sg_model *m, sg_workspace *ws,
                   const double *theta, const double *logw, int M, double n_now, int base, int cn,
                   int level, sg_restart_stop *stop) {
  const sg_restart_triggers *t = w->t;
  if (!w->on) return 0;
  const int periodic = n_now >= t->due && !(w->augments && level == SG_REF_USABLE);
  const int reference = !periodic && t->on_reference && level == SG_REF_COMPLETE;
  /* a shift calls for one only `after` (1.5 times the data at the last shift's); it is also
   * checked for the others, to record whether their chunk was one (detect_shifts() scores the
   * surprise of such a chunk only then: the others' log predictive is mostly the correction) */
  const int earlier = cn > SHIFT_EARLIER ? cn : SHIFT_EARLIER, nx = base < earlier ? base : earlier;
  const int shift = (periodic || reference || n_now >= t->after) && R_FINITE(t->threshold) &&
                    nx >= 2 && cn >= 2 &&
                    shift_score(m, ws, theta, logw, M, base, nx, cn, w->lp) > t->threshold;
  stop->shift = shift;
  stop->reference = reference;
  if (!(periodic || reference || shift)) return 0;
  stop->at = n_now;
  return 1;
}

/* Due at a chunk whose one importance step would leave too few particles that matter: data in
 * an order that moves the posterior far within a chunk (sorted by an outcome). The sequential
 * estimator's particles, never resampled, cannot follow it by their moves; its estimate of the
 * chunk, the mean of p(C | theta_i) over particles that lag the posterior, is then low by more
 * than the weights show (thesis Section 4.1). The caller asks only while the data are few (one
 * mini-batch, in the exact phase: chunk_begin() in sgais.c), where a restart, which anneals
 * them, costs little. Not a shift (sg_restart_due). */
int sg_restart_step_ess(const sg_restart_watch *w, double n_now, double ess, int M,
                        sg_restart_stop *stop) {
  if (!w->on || !(ess < w->t->ess * M)) return 0;
  *stop = (sg_restart_stop){n_now, 0, 0};
  return 1;
}
