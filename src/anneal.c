/* One adaptive annealing step, shared by SGAIS (per chunk) and AIS (on the full data):
 * choose Delta by the ESS of the incremental weights exp(Delta * loglik) (paper Algorithm 1
 * lines 6-8; thesis Alg. 6), update the log-weights by Delta * loglik, estimate the kernel's
 * preconditioner from the reweighted particles, and resample the particles systematically when
 * their weights have degenerated, setting the weights to their mean. */
#include "anneal.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void sg_anneal_scratch_alloc(sg_anneal_scratch *s, int M, int dim) {
  /* work also serves sg_precond_estimate: M + dim (dim + 1) */
  s->work = (double *) R_alloc((size_t) M + (size_t) dim * (dim + 1), sizeof(double));
  s->ancestors = (int *) R_alloc(M, sizeof(int));
  s->copy = (double *) R_alloc((size_t) M * (dim + 1), sizeof(double));
  s->rng = NULL;
  s->genealogy = NULL;
}

void sg_genealogy_reset(sg_genealogy *g, int M) {
  for (int i = 0; i < g->cap; i++) {
    g->eve[i] = i < M ? i : 0;
    g->influence[i] = 0.0;
  }
}

double sg_genealogy_var(const sg_genealogy *g) {
  double v = g->closed;
  for (int k = 0; k < g->cap; k++) v += g->influence[k] * g->influence[k];
  return v;
}

void sg_genealogy_resampled(sg_genealogy *g, const int *ancestors, int M) {
  memcpy(g->marks, g->eve, g->cap * sizeof(int));
  for (int i = 0; i < M; i++) g->eve[i] = g->marks[ancestors[i]];
}

void sg_genealogy_close_if_few(sg_genealogy *g, int M) {
  memset(g->marks, 0, g->cap * sizeof(int));
  int eves = 0;
  for (int i = 0; i < M; i++)
    if (!g->marks[g->eve[i]]++) eves++;
  double least = SG_GENEALOGY_MIN_EVE_SHARE * M;
  if (least < SG_GENEALOGY_MIN_EVES) least = SG_GENEALOGY_MIN_EVES;
  if (eves >= least || eves >= M) return;
  g->closed = sg_genealogy_var(g);
  sg_genealogy_reset(g, M);
}

/* The step's first-order terms W_i (g_i / g - 1) added to the influences of the particles'
 * Eves (see sg_genealogy), with g_i = exp(Delta loglik_i), less beta h_i with the score control
 * variate (cv not NULL); before logw takes the step. work: M. */
static void genealogy_step(sg_genealogy *g, const double *logw, const double *loglik,
                           double delta, const double *cv, double beta, int M, double *work) {
  const double lse = sg_log_sum_exp(logw, M);
  double top = R_NegInf;
  for (int i = 0; i < M; i++)
    if (delta * loglik[i] > top) top = delta * loglik[i];
  if (!R_FINITE(top) || !R_FINITE(lse)) return;
  double gbar = 0.0;
  for (int i = 0; i < M; i++) {
    work[i] = exp(delta * loglik[i] - top) - (cv ? beta * cv[i] : 0.0);
    gbar += exp(logw[i] - lse) * work[i];
  }
  if (!(gbar > 0.0)) return;
  for (int i = 0; i < M; i++)
    g->influence[g->eve[i]] += exp(logw[i] - lse) * (work[i] / gbar - 1.0);
}

static void resample(double *theta, double *logw, double *loglik, int M, int dim,
                     sg_anneal_scratch *s) {
  sg_resample_systematic(logw, M, s->ancestors, s->work, s->rng);
  double *theta_copy = s->copy, *loglik_copy = s->copy + (size_t) M * dim;
  memcpy(theta_copy, theta, (size_t) M * dim * sizeof(double));
  memcpy(loglik_copy, loglik, M * sizeof(double));
  for (int i = 0; i < M; i++) {
    memcpy(theta + (size_t) i * dim, theta_copy + (size_t) s->ancestors[i] * dim, dim * sizeof(double));
    loglik[i] = loglik_copy[s->ancestors[i]];
  }
  if (s->genealogy) sg_genealogy_resampled(s->genealogy, s->ancestors, M);
  double mean = sg_log_sum_exp(logw, M) - log((double) M);
  for (int i = 0; i < M; i++) logw[i] = mean;
}

double sg_anneal_reweight(double *theta, double *logw, double *loglik, int M, int dim,
                          double max_delta, double target_ess, double resample_ess,
                          int conditional_ess, double *ess, int *resampled, sg_precond *pc,
                          const double *cv, double *cv_r2, sg_anneal_scratch *s) {
  double delta = sg_annealing_step(loglik, conditional_ess ? logw : NULL, M, max_delta, target_ess,
                                   ess, s->work);
  /* the correction multiplies every weight alike: the particles' normalised weights, and so
   * the moves and resampling, are those of the plain step; only the evidence changes */
  double shift = 0.0, r2 = 0.0, beta = 0.0;
  if (cv) shift = sg_anneal_score_correction(logw, loglik, delta, cv, M, s->work, &r2, &beta);
  if (cv_r2) *cv_r2 = r2;
  if (s->genealogy) genealogy_step(s->genealogy, logw, loglik, delta, cv, beta, M, s->work);
  for (int i = 0; i < M; i++) logw[i] += delta * loglik[i] + shift;
  /* The kernel's metric from the particles weighted for the new target (before resampling,
   * which would only add duplicates); kept as it was if the particles are degenerate. */
  if (pc) sg_precond_estimate(pc, theta, logw, M, s->work);
  /* Resample when the weights have degenerated (paper Section 3; thesis Alg. 8 line 9), so
   * the moves spend their effort on particles that matter and multimodal posteriors keep their
   * dominant mode. The estimator of Z stays unbiased. */
  *resampled = resample_ess >= 1.0 ||
               (resample_ess > 0.0 && sg_ess(logw, M, 1.0, s->work) < resample_ess * M);
  if (*resampled) resample(theta, logw, loglik, M, dim, s);
  if (s->genealogy) sg_genealogy_close_if_few(s->genealogy, M);
  return delta;
}

double sg_anneal_score_correction(const double *logw, const double *loglik, double delta,
                                  const double *cv, int M, double *work, double *r2,
                                  double *beta) {
  *r2 = 0.0;
  *beta = 0.0;
  /* normalised weights W (in work) and incremental weights exp(Delta loglik - top) */
  const double lse = sg_log_sum_exp(logw, M);
  double top = R_NegInf;
  for (int i = 0; i < M; i++) {
    if (!R_FINITE(cv[i])) return 0.0;
    if (delta * loglik[i] > top) top = delta * loglik[i];
  }
  if (!R_FINITE(top)) return 0.0;
  double r = 0.0, hbar = 0.0;
  for (int i = 0; i < M; i++) {
    work[i] = exp(logw[i] - lse);
    r += work[i] * exp(delta * loglik[i] - top);
    hbar += work[i] * cv[i];
  }
  double sxy = 0.0, sxx = 0.0, syy = 0.0;
  for (int i = 0; i < M; i++) {
    const double dx = cv[i] - hbar, dy = exp(delta * loglik[i] - top) - r;
    sxx += work[i] * dx * dx;
    sxy += work[i] * dx * dy;
    syy += work[i] * dy * dy;
  }
  if (!(sxx > 0.0) || !(syy > 0.0)) return 0.0;
  const double r_cv = r - sxy / sxx * hbar;
  if (!(r_cv > 0.0)) return 0.0;
  *r2 = sxy * sxy / (sxx * syy);
  *beta = sxy / sxx;
  return log(r_cv / r);
}

void sg_spread_guard_begin(sg_spread_guard *g, const sg_precond *pc, const double *theta,
                           const double *logw, const double *loglik, int M, int dim,
                           double *copy, double *work) {
  g->pc = pc;
  g->M = M;
  g->dim = dim;
  g->copy = copy;
  /* the spread is about 1 for particles that sample the metric's target; after resampling
   * from degenerate weights (SIR's one-step updates) the particles can be a few copies of
   * one point, whose spread of about 0 no move could keep, so growth is measured from 1 */
  g->before = sg_precond_spread(pc, theta, logw, M, work);
  if (!(g->before >= 1.0)) g->before = 1.0;
  memcpy(copy, theta, (size_t) M * dim * sizeof(double));
  memcpy(copy + (size_t) M * dim, loglik, M * sizeof(double));
}

/* The spread's growth since sg_spread_guard_begin (NaN for non-finite particles). */
static double spread_growth(const sg_spread_guard *g, const double *theta, const double *logw,
                            double *work) {
  return sg_precond_spread(g->pc, theta, logw, g->M, work) / g->before;
}

static void spread_undo(const sg_spread_guard *g, double *theta, double *loglik) {
  memcpy(theta, g->copy, (size_t) g->M * g->dim * sizeof(double));
  memcpy(loglik, g->copy + (size_t) g->M * g->dim, g->M * sizeof(double));
}

int sg_spread_guard_check(const sg_spread_guard *g, double *theta, const double *logw,
                          double *loglik, double *work, int can_halve, int *halvings,
                          double *growth, char *smaller) {
  *growth = spread_growth(g, theta, logw, work);
  smaller[0] = '\0';
  if (*growth <= SG_MAX_SPREAD_GROWTH) return SG_GUARD_OK; /* not NaN either */
  if (can_halve && *halvings < SG_MAX_STEP_HALVINGS) {
    spread_undo(g, theta, loglik);
    (*halvings)++;
    return SG_GUARD_REDO;
  }
  if (*halvings) snprintf(smaller, 64, ", even with steps %d times smaller", 1 << *halvings);
  return SG_GUARD_FAIL;
}

int sg_check_loglik(const double *loglik, int M) {
  int all_zero = 1;
  for (int i = 0; i < M; i++) {
    if (ISNAN(loglik[i]) || loglik[i] == R_PosInf) return SG_LOGLIK_NOT_FINITE;
    if (loglik[i] > R_NegInf) all_zero = 0;
  }
  return all_zero ? SG_LOGLIK_ALL_ZERO : SG_LOGLIK_OK;
}

double sg_path_log_base(const sg_model *m, sg_workspace *ws, const sg_reference *ref,
                        double lambda, const double *theta, double *grad) {
  if (!ref || !ref->aux) return m->log_prior(m, ws, theta, grad);
  /* grad takes grad log q0, scaled by (1 - lambda) / lambda, then grad log prior, and all of it
   * is scaled by lambda: no second buffer */
  const double lq = m->ref_log_density(m, ws, theta, ref->aux, ref->n, grad);
  if (lambda <= 0.0) return lq;
  if (grad)
    for (int j = 0; j < m->dim; j++) grad[j] *= (1.0 - lambda) / lambda;
  const double lp = m->log_prior(m, ws, theta, grad);
  if (grad)
    for (int j = 0; j < m->dim; j++) grad[j] *= lambda;
  return (1.0 - lambda) * lq + lambda * lp;
}

double sg_path_log_lik(const sg_model *m, sg_workspace *ws, const sg_reference *ref,
                       const double *theta, int start, int n, double *grad, double *work) {
  double ll = sg_model_log_lik(m, ws, theta, NULL, start, n, 1.0, grad);
  if (ref && ref->aux) {
    const double lp = m->log_prior(m, ws, theta, grad);
    if (grad) memset(work, 0, m->dim * sizeof(double));
    ll += lp - m->ref_log_density(m, ws, theta, ref->aux, ref->n, grad ? work : NULL);
    if (grad)
      for (int j = 0; j < m->dim; j++) grad[j] -= work[j];
  }
  return ll;
}

/* aux summarises at most SG_JUMP_POINTS observations (sg_jump_set): a q0 built from it for more
 * would be narrower than the error of its own centre (for a mixture, of the clusters' means),
 * and the path from it would have to travel many of its widths. So q0 is built for that many,
 * wider than the posterior of n, unless the model refits the summary on all n (ref_refit): a q0
 * centred on their posterior and as narrow, from which the path is short. */
sg_reference sg_reference_for(const sg_model *m, int reference, double *aux, int start, double n) {
  if (!reference || sg_reference_level(m, aux) == 0) return (sg_reference){NULL, 0.0};
  if (n <= SG_JUMP_POINTS) return (sg_reference){aux, n};
  if (!m->ref_refit) return (sg_reference){aux, SG_JUMP_POINTS};
  m->ref_refit(m, start, (int) n, aux);
  return (sg_reference){aux, n};
}

void sg_reference_start_draw(const sg_model *m, const sg_reference *ref, uint64_t key, int i,
                             double *theta) {
  sg_rng rng;
  sg_rng_init(&rng, key, SG_REF_START_STREAM, (uint64_t) i);
  m->ref_draw(m, ref->aux, ref->n, theta, &rng);
}

int sg_reference_level(const sg_model *m, const double *aux) {
  if (!aux || !m->ref_log_density || !m->ref_draw) return 0;
  return m->ref_ok ? m->ref_ok(m, aux) : SG_REF_COMPLETE;
}

/* Whether a mixture's data, summarised in jump_aux, show fewer clusters than it has components
 * (its reference usable, not complete): the moves' rule below, sg_move_augment's and
 * sg_move_jumps'. */
static int spare_components(const sg_model *m, const double *jump_aux) {
  return jump_aux && sg_reference_level(m, jump_aux) == SG_REF_USABLE;
}

int sg_moves_decorrelate(const sg_move_settings *mv, int metropolis, int preconditioned,
                         const sg_model *m, const double *jump_aux) {
  return metropolis && preconditioned && mv->max_rounds > 1 &&
         !sg_kernel_random_walk(mv->kernel) && !spare_components(m, jump_aux);
}

int sg_move_augment(const sg_move_settings *mv, const sg_model *m, const double *jump_aux,
                    int held) {
  return mv->jumps > 0 && held > 0 && m->gibbs_propose && spare_components(m, jump_aux)
             ? SG_AUGMENT_MOVES
             : 0;
}

int sg_move_jumps(const sg_move_settings *mv, const sg_model *m, const double *jump_aux) {
  const double jumps =
      spare_components(m, jump_aux) ? (double) mv->jumps * mv->max_rounds : mv->jumps;
  return jumps < INT_MAX ? (int) jumps : INT_MAX;
}
