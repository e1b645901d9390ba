/* Annealed importance sampling on the full data (thesis Alg. 6, eq. 3.40-3.43; the paper's
 * reference method, Section 6.1).
 *
 * The geometric path f_lambda(theta) = p(D | theta)^lambda p(theta) runs from the prior
 * (lambda = 0) to the posterior (lambda = 1). Each step chooses Delta by the ESS of the
 * incremental weights p(D | theta_i)^Delta (the same adaptive rule and code as SGAIS), adds
 * Delta log p(D | theta_i) to the log-weights, optionally resamples, and moves every particle by
 * SGHMC on the exact full-data potential grad log f = grad log p(theta) + lambda grad log p(D |
 * theta): with the paper's eta = learning_rate / N (Section 6.1), or (robust preset) with steps
 * of a fixed fraction of the current target's width (precond.c): near lambda = 0 the target is
 * as wide as the prior, and steps sized for the posterior cannot cross it (inst/design.md, "Scale
 * and annealing far from the prior"). log Z = logsumexp(log w) - log M.
 *
 * ais_process() runs annealing steps until lambda = 1 or a time budget is spent; the particles,
 * log-weights, their log-likelihoods, lambda and the run's key are the whole state, and every
 * random draw comes from a stream keyed by (key, annealing step, particle) (rng.h), so the
 * result does not depend on how the run is split into calls. The full-data passes are split over
 * threads by observation blocks (model.h), which does not change them either. */
#include "estimators.h"
#include <math.h>
#include <string.h>

typedef struct {
  const sg_model *m;
  double lambda;
  sg_workspace *ws;
  sg_reference ref; /* the path's start (setting `reference`; anneal.h), or none: the prior */
} ais_target;

static void ais_grad_log_target(void *ctx, const double *theta, double *grad) {
  ais_target *t = ctx;
  const sg_model *m = t->m;
  memset(grad, 0, m->dim * sizeof(double));
  sg_path_log_base(m, t->ws, &t->ref, t->lambda, theta, grad);
  sg_model_grad_log_lik(m, t->ws, theta, NULL, 0, m->n_obs, t->lambda, grad);
}

/* The prior (or the reference path's base), the part of log f the subsampling MH kernels
 * evaluate exactly (their test subsamples the data, with factor lambda; kernel.h). */
static double ais_log_rest(void *ctx, const double *theta) {
  ais_target *t = ctx;
  return sg_path_log_base(t->m, t->ws, &t->ref, t->lambda, theta, NULL);
}

/* The same potential with its value, for the Metropolis-adjusted kernel. */
static double ais_log_target(void *ctx, const double *theta, double *grad) {
  ais_target *t = ctx;
  const sg_model *m = t->m;
  if (grad) memset(grad, 0, m->dim * sizeof(double));
  double lf = sg_path_log_base(m, t->ws, &t->ref, t->lambda, theta, grad);
  return lf + t->lambda * sg_model_log_lik(m, t->ws, theta, NULL, 0, m->n_obs, t->lambda, grad);
}

/* A model failure recorded already is the cause and is what st reports (sg_fail keeps it). After
 * SGHMC moves (moved), zero likelihood everywhere means the particles ran off: a divergence. */
int ais_check_loglik(const double *loglik, int M, double lambda, int moved, sg_status *st) {
  switch (sg_check_loglik(loglik, M)) {
  case SG_LOGLIK_NOT_FINITE:
    return sg_fail(st, SG_ERR_LIKELIHOOD, "the log-likelihood is not finite-valued for a particle (NaN or +Inf) at lambda = %g.", lambda);
  case SG_LOGLIK_ALL_ZERO:
    if (moved)
      return sg_fail(st, SG_ERR_DIVERGED, "SGHMC diverged (every particle has zero likelihood) "
                     "at lambda = %g; try a smaller step (`step_size`, or `learning_rate` in the "
                     "paper preset).", lambda);
    return sg_fail(st, SG_ERR_LIKELIHOOD, "every particle has zero likelihood at lambda = %g.", lambda);
  }
  return st->code;
}

/* One call's run (ais_process): the state it updates (the caller's), its scratch, the kernel
 * and the target. target and pot point into the struct, so it stays where ais_run_init() built
 * it. */
typedef struct {
  const sg_model *m;
  const ais_settings *s;
  const sg_move_settings *mv;
  int M, dim, N, width, flymc;
  double *theta, *logw, *loglik, *step_size;
  uint64_t key;
  ais_trace *tr;
  sg_workspace *ws;
  sg_status *st;
  double *v, *grad, *before, *acc, *accepted, *work;
  double *region; /* the particles' region (model.h, canonicalize), or NULL */
  sg_anneal_scratch scratch;
  sg_precond pc, own, *pcp;
  sg_kernel kernel;
  sg_rng rng, shared; /* each step's streams: one per particle, one for resampling (rng.h) */
  ais_target target;
  sg_potential pot;
  sg_flymc_bound bound;
} ais_run;

/* One annealing step: its lambda, ESS and resampling, and what its moves did. */
typedef struct {
  uint64_t id; /* steps since the run began: the key of the step's streams */
  double time, ess, lambda;
  int resampled, k, metropolis, rounds, diverged, halvings;
  double acc_target;
} ais_step;

static void ais_run_init(ais_run *r, const sg_model *m, const ais_settings *s, double *theta,
                         double *logw, double *loglik, double lambda, double *step_size,
                         uint64_t key, ais_trace *tr, sg_workspace *ws) {
  const int M = s->particles, dim = m->dim, N = m->n_obs;
  const sg_move_settings *mv = &s->move;
  *r = (ais_run){.m = m, .s = s, .mv = mv, .M = M, .dim = dim, .N = N,
                 .width = mv->scale == SG_STEP_WIDTH, .flymc = mv->kernel == SG_KERNEL_FLYMC,
                 .theta = theta, .logw = logw, .loglik = loglik, .step_size = step_size,
                 .key = key, .tr = tr, .ws = ws, .st = ws->status};
  r->v = (double *) R_alloc(dim, sizeof(double));
  r->grad = (double *) R_alloc(dim, sizeof(double));
  r->before = (double *) R_alloc(dim, sizeof(double));
  r->acc = (double *) R_alloc(M, sizeof(double));
  r->accepted = (double *) R_alloc(M, sizeof(double));
  r->work = (double *) R_alloc(7 * (size_t) dim, sizeof(double));
  sg_anneal_scratch_alloc(&r->scratch, M, dim);
  sg_precond_alloc(&r->pc, mv->preconditioner, dim);
  r->pcp = (mv->preconditioner == SG_PRECOND_NONE) ? NULL : &r->pc;
  /* each particle moves in the metric estimated without it (sg_precond_leave_out) */
  sg_precond_alloc(&r->own, mv->preconditioner, dim);
  sg_precond_set_free(&r->pc, m);
  sg_precond_set_free(&r->own, m);
  sg_kernel_init(&r->kernel, mv, r->pcp ? &r->own : NULL, dim, N);
  r->kernel.rng = &r->rng;
  r->scratch.rng = &r->shared;
  r->target = (ais_target){.m = m, .lambda = lambda, .ws = ws};
  r->pot = (sg_potential){ais_grad_log_target, &r->target, ais_log_target, ais_log_rest,
                          {m, ws, NULL, 0, N, 0.0, NULL}};
  /* the FlyMC kernel's collapsed bound (kernel.h), anchored at the particles' weighted mean and
   * collapsed over all the data before each step's moves */
  if (r->flymc) {
    sg_flymc_bound_alloc(&r->bound, dim);
    r->pot.data.bound = &r->bound;
  }
  /* the region the particles are relabelled into (model.h, canonicalize), which the exact
   * kernels keep them in */
  if (r->pcp && m->canonicalize)
    r->pot.region = (const double *) (r->region = (double *) R_alloc(m->region_size, sizeof(double)));
  /* the jump proposals (kernel.h), built from all the data or an evenly spread subset, and
   * the reference the path may start from (anneal.h), built from the same summary refitted on
   * all the data */
  double *aux = NULL;
  if (mv->jumps > 0 && m->jump_propose) {
    aux = (double *) R_alloc(m->jump_aux, sizeof(double));
    r->pot.jump.aux = sg_jump_set(m, N, NULL, 0, N, 0,
                                  (int *) R_alloc(SG_JUMP_POINTS, sizeof(int)), aux);
  }
  r->target.ref = sg_reference_for(m, s->reference, aux, 0, N);
}

int ais_start(const sg_model *m, const ais_settings *s, double *theta, int M, double lambda,
              uint64_t key, double *loglik, sg_workspace *ws) {
  ais_run r;
  double step = s->move.base_step;
  ais_run_init(&r, m, s, theta, NULL, loglik, lambda, &step, key, NULL, ws);
  const sg_reference *ref = &r.target.ref;
  for (int i = 0; i < M && !ws->status->code; i++) {
    double *th = theta + (size_t) i * m->dim;
    /* drawn from q0 instead, from a stream of its own */
    if (ref->aux && lambda == 0.0) sg_reference_start_draw(m, ref, key, i, th);
    loglik[i] = sg_path_log_lik(m, ws, ref, th, 0, m->n_obs, NULL, NULL);
  }
  return ws->status->code;
}

/* A step's reweighting: the next lambda by the ESS of the incremental weights, or exactly the
 * fixed schedule's next one (a pilot run's lambdas, R/ais.R; a target ESS of 0 accepts
 * max_delta). The adaptive step, chosen from the particles it then reweights, biases Z-hat by
 * O(1/M); a schedule fixed in advance keeps Z-hat unbiased (Neal 2001). */
static void ais_reweight(ais_run *r, ais_step *p, const double *schedule, int n_schedule) {
  double max_delta = 1.0 - p->lambda;
  sg_rng_init(&r->shared, r->key, p->id, SG_RNG_SHARED);
  if (r->pcp) sg_model_canonicalize(r->m, r->ws, r->theta, r->M, r->logw, r->region);
  const int fixed = n_schedule > 0;
  const double next = fixed ? schedule[p->id] : 1.0;
  if (fixed) max_delta = next - p->lambda;
  double delta = sg_anneal_reweight(r->theta, r->logw, r->loglik, r->M, r->dim, max_delta,
                                    fixed ? 0.0 : r->s->target_ess, r->s->resample_ess,
                                    r->s->conditional_ess, &p->ess, &p->resampled, r->pcp, NULL,
                                    NULL, &r->scratch);
  if (fixed) p->lambda = next;
  else p->lambda = (delta >= max_delta) ? 1.0 : p->lambda + delta;
}

/* One round of moves of every particle (k steps each), then their new log-likelihoods. Each
 * particle's move reads all the data (on the workspace's threads, model.h), so an interrupt is
 * checked after each. Returns -1 after a failure, else 0. */
static int ais_move_round(ais_run *r, ais_step *p, const double *start) {
  const int dim = r->dim;
  p->diverged = 0;
  for (int i = 0; i < r->M; i++) {
    double *th = r->theta + (size_t) i * dim;
    memcpy(r->before, th, dim * sizeof(double));
    if (r->pcp) sg_precond_leave_out(r->pcp, p->resampled ? r->scratch.ancestors[i] : i,
                                     start + (size_t) i * dim, &r->own);
    /* the first move's streams are those of a run without repeated moves */
    sg_rng_init(&r->rng, r->key, p->id, (uint64_t) i + ((uint64_t) p->rounds << 32));
    sg_kernel_run(&r->pot, dim, th, r->v, r->grad, p->k, &r->kernel);
    if (p->metropolis && p->k > 0) {
      r->accepted[i] += r->kernel.accepted;
      r->acc[i] = r->accepted[i] / ((double) p->k * (p->rounds + 1));
    }
    /* a move that ran off to non-finite values is undone (see sgais.c) */
    if (!sg_all_finite(th, dim)) {
      memcpy(th, r->before, dim * sizeof(double));
      p->diverged++;
    }
    if (p->lambda < 1.0)
      r->loglik[i] = sg_path_log_lik(r->m, r->ws, &r->target.ref, th, 0, r->N, NULL, NULL);
    if (r->st->code) return -1; /* a model failed: its message, not the NaN it caused */
    sg_interrupt_check();
  }
  p->rounds++;
  return 0;
}

/* A step's moves, leaving the target at the new lambda invariant: Metropolis-adjusted gradient
 * moves repeated while the particles still correlate with where they began
 * (sg_moves_decorrelate; the random-walk kernels' steps and reads are tuned on their own), the
 * start kept for that and for each particle's metric (sg_precond_leave_out); moves without a
 * Metropolis test (the paper's kernel, SGLD with the Euler setting) checked by the spread guard
 * and redone with half the step (anneal.h). Returns -1 after a failure, else 0. */
static int ais_move(ais_run *r, ais_step *p) {
  const sg_move_settings *mv = r->mv;
  const int M = r->M, dim = r->dim;
  r->target.lambda = p->lambda;
  r->pot.jump.n = p->lambda * r->N;
  r->pot.data.factor = p->lambda;
  r->kernel.mh.tests = r->kernel.mh.items = 0.0;
  r->kernel.jumps_made = r->kernel.jumps_accepted = 0.0;
  p->acc_target = sg_kernel_target_acceptance(&r->kernel, &r->pot);
  p->metropolis = p->acc_target > 0.0;
  const int k0 = sg_move_steps(mv, p->ess, r->s->target_ess, M);
  p->k = p->metropolis ? sg_move_distance_steps(mv, k0, *r->step_size) : k0;
  r->kernel.eta = r->width ? (*r->step_size) * (*r->step_size) : sg_move_eta(mv, r->N);
  if (r->flymc && p->k > 0) sg_flymc_bound_set(&r->bound, &r->pot, r->theta, r->logw, M);
  const int check_spread = r->pcp && !p->metropolis && p->k > 0;
  sg_spread_guard guard;
  if (check_spread)
    sg_spread_guard_begin(&guard, r->pcp, r->theta, r->logw, r->loglik, M, dim, r->scratch.copy,
                          r->scratch.work);
  const int decorrelate =
      p->k > 0 && sg_moves_decorrelate(mv, p->metropolis, r->pcp != NULL, r->m, r->pot.jump.aux);
  const double *start = decorrelate ? r->scratch.copy : r->theta;
  if (decorrelate) memcpy(r->scratch.copy, r->theta, (size_t) M * dim * sizeof(double));
  r->kernel.jumps = sg_move_jumps(mv, r->m, r->pot.jump.aux);
  int diverged_all;
redo_moves:
  p->rounds = diverged_all = 0;
  if (p->metropolis) memset(r->accepted, 0, M * sizeof(double));
  do {
    if (ais_move_round(r, p, start)) return -1;
    diverged_all += p->diverged;
  } while (decorrelate && p->diverged < M &&
           sg_move_again(mv, p->rounds, sg_precond_jump_correlation(r->pcp, start, r->theta,
                                                                    r->logw, M, r->work)));
  if (check_spread) {
    double growth;
    char smaller[64];
    switch (sg_spread_guard_check(&guard, r->theta, r->logw, r->loglik, r->scratch.work,
                                  r->width, &p->halvings, &growth, smaller)) {
    case SG_GUARD_FAIL:
      sg_fail(r->st, SG_ERR_DIVERGED, "%s moves spread the particles %.3g times wider than their "
              "target at lambda = %g%s; try a smaller `step_size` or the Metropolis-adjusted "
              "moves (`integrator = \"baoab\"`).", sg_kernel_name(r->kernel.kind), growth,
              p->lambda, smaller);
      return -1;
    case SG_GUARD_REDO:
      *r->step_size *= 0.5;
      r->kernel.eta = (*r->step_size) * (*r->step_size);
      goto redo_moves;
    }
  }
  if (p->diverged == M) {
    sg_fail(r->st, SG_ERR_DIVERGED, "SGHMC diverged (non-finite parameters) at lambda = %g; "
            "try a smaller step (`step_size`, or `learning_rate` in the paper preset).", p->lambda);
    return -1;
  }
  p->diverged = diverged_all;
  return 0;
}

/* The trace's entry j for step p (the step size adapted to the acceptance first). */
static void ais_record(ais_run *r, const ais_step *p, int j) {
  ais_trace *tr = r->tr;
  const sg_kernel *kn = &r->kernel;
  tr->divergent[j] = p->diverged;
  tr->step_halvings[j] = p->halvings;
  tr->acceptance[j] = (p->metropolis && p->k > 0)
                          ? sg_move_adapt(r->mv, p->acc_target, r->step_size, r->acc, r->M)
                          : NA_REAL;
  tr->data_fraction[j] = kn->mh.tests > 0.0 ? kn->mh.items / (kn->mh.tests * r->N) : NA_REAL;
  tr->jump_acceptance[j] = kn->jumps_made > 0.0 ? kn->jumps_accepted / kn->jumps_made : NA_REAL;
  tr->step_size[j] = r->width ? *r->step_size : sqrt(kn->eta);
}

/* Runs annealing steps from *lambda_io (see estimators.h). */
int ais_process(const sg_model *m, const ais_settings *s, double *theta, double *logw,
                double *loglik, double *lambda_io, double *step_size, int steps_done,
                const double *schedule, int n_schedule, double time_budget, uint64_t key,
                ais_trace *tr, sg_workspace *ws, sg_genealogy *genealogy) {
  ais_run r;
  ais_run_init(&r, m, s, theta, logw, loglik, *lambda_io, step_size, key, tr, ws);
  r.scratch.genealogy = genealogy;
  const double start_time = sg_now();
  ais_step p = {.lambda = *lambda_io};
  int steps = 0;
  while (p.lambda < 1.0 && steps < AIS_SLICE_STEPS) {
    if (steps_done + steps == AIS_MAX_STEPS) {
      sg_fail(r.st, SG_ERR_ANNEALING, "annealing did not finish in %d steps; try a smaller "
              "`target_ess`.", AIS_MAX_STEPS);
      return -1;
    }
    p = (ais_step){.id = (uint64_t) (steps_done + steps), .time = sg_now(), .lambda = p.lambda};
    ws->count.likelihood = ws->count.gradient = 0.0;
    ais_reweight(&r, &p, schedule, n_schedule);
    if (ais_move(&r, &p)) return -1;
    ais_record(&r, &p, steps);
    if (p.lambda < 1.0 && ais_check_loglik(loglik, r.M, p.lambda, 1, r.st)) return -1;
    tr->lambda[steps] = p.lambda;
    tr->ess[steps] = p.ess;
    tr->resampled[steps] = p.resampled;
    tr->sghmc_steps[steps] = p.k * p.rounds;
    tr->log_evidence[steps] = sg_log_sum_exp(logw, r.M) - log((double) r.M);
    tr->gradient_evaluations[steps] = ws->count.gradient;
    tr->likelihood_evaluations[steps] = ws->count.likelihood;
    tr->seconds[steps] = sg_now() - p.time;
    steps++;
    sg_interrupt_check();
    if (sg_now() - start_time > time_budget) break;
  }
  *lambda_io = p.lambda;
  return steps;
}
