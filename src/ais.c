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
 * as wide as the prior, and steps sized for the posterior cannot cross it (ALGORITHM-NOTES, "Tiny
 * steps on wide targets"). log Z = logsumexp(log w) - log M.
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
} ais_target;

static void ais_grad_log_target(void *ctx, const double *theta, double *grad) {
  ais_target *t = ctx;
  const sg_model *m = t->m;
  memset(grad, 0, m->dim * sizeof(double));
  m->log_prior(m, t->ws, theta, grad);
  sg_model_grad_log_lik(m, t->ws, theta, NULL, 0, m->n_obs, t->lambda, grad);
}

/* The prior, the part of log f the subsampling MH kernels evaluate exactly (their test
 * subsamples the data, with factor lambda; kernel.h). */
static double ais_log_rest(void *ctx, const double *theta) {
  ais_target *t = ctx;
  return t->m->log_prior(t->m, t->ws, theta, NULL);
}

/* The same potential with its value, for the Metropolis-adjusted kernel. */
static double ais_log_target(void *ctx, const double *theta, double *grad) {
  ais_target *t = ctx;
  const sg_model *m = t->m;
  if (grad) memset(grad, 0, m->dim * sizeof(double));
  double lf = m->log_prior(m, t->ws, theta, grad);
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

/* Runs annealing steps from *lambda; returns their number, or -1 after a failure described in st
 * (its workspace reports to st). theta holds the particles (M rows of
 * dim), logw their log-weights and loglik their full-data log-likelihoods. */
int ais_process(const sg_model *m, const ais_settings *s, double *theta, double *logw,
                       double *loglik, double *lambda_io, double *step_size, int steps_done,
                       const double *schedule, int n_schedule, double time_budget, uint64_t key,
                       ais_trace *tr, sg_workspace *ws) {
  const int M = s->particles, dim = m->dim, N = m->n_obs;
  const sg_move_settings *mv = &s->move;
  double *v = (double *) R_alloc(dim, sizeof(double));
  double *grad = (double *) R_alloc(dim, sizeof(double));
  double *before = (double *) R_alloc(dim, sizeof(double));
  double *acc = (double *) R_alloc(M, sizeof(double));
  double *accepted = (double *) R_alloc(M, sizeof(double));
  double *work = (double *) R_alloc(7 * (size_t) dim, sizeof(double));
  sg_anneal_scratch scratch;
  sg_anneal_scratch_alloc(&scratch, M, dim);
  sg_precond pc;
  sg_precond_alloc(&pc, mv->preconditioner, dim);
  sg_precond *pcp = (mv->preconditioner == SG_PRECOND_NONE) ? NULL : &pc;
  /* each particle moves in the metric estimated without it (sg_precond_leave_out) */
  sg_precond own;
  sg_precond_alloc(&own, mv->preconditioner, dim);
  sg_precond_set_free(&pc, m);
  sg_precond_set_free(&own, m);
  sg_kernel kernel;
  sg_kernel_init(&kernel, mv, pcp ? &own : NULL, dim, N);
  /* each annealing step's streams: one per particle, one for resampling (rng.h) */
  sg_rng rng, shared;
  kernel.rng = &rng;
  scratch.rng = &shared;
  const int width = mv->scale == SG_STEP_WIDTH;

  sg_status *st = ws->status;
  ais_target target = {m, *lambda_io, ws};
  sg_potential pot = {ais_grad_log_target, &target, ais_log_target, ais_log_rest,
                      {m, ws, NULL, 0, N, 0.0, NULL}};
  /* the FlyMC kernel's collapsed bound (kernel.h), anchored at the particles' weighted mean and
   * collapsed over all the data before each step's moves */
  sg_flymc_bound bound;
  const int flymc = mv->kernel == SG_KERNEL_FLYMC;
  if (flymc) {
    sg_flymc_bound_alloc(&bound, dim);
    pot.data.bound = &bound;
  }
  /* the jump proposals (kernel.h), built from all the data or an evenly spread subset */
  if (mv->jumps > 0 && m->jump_propose)
    pot.jump.aux = sg_jump_set(m, N, NULL, 0, N, 0, (int *) R_alloc(SG_JUMP_POINTS, sizeof(int)),
                               (double *) R_alloc(m->jump_aux, sizeof(double)));
  const double start_time = sg_now();
  double lambda = *lambda_io;
  int steps = 0;

  while (lambda < 1.0 && steps < AIS_SLICE_STEPS) {
    if (steps_done + steps == AIS_MAX_STEPS) {
      sg_fail(st, SG_ERR_ANNEALING, "annealing did not finish in %d steps; try a smaller `target_ess`.",
              AIS_MAX_STEPS);
      return -1;
    }
    const double step_time = sg_now();
    ws->count.likelihood = ws->count.gradient = 0.0;
    double ess, max_delta = 1.0 - lambda;
    int resampled;
    const uint64_t step_id = (uint64_t) (steps_done + steps);
    sg_rng_init(&shared, key, step_id, SG_RNG_SHARED);
    if (pcp) sg_model_canonicalize(m, ws, theta, M, logw);
    /* A fixed schedule (a pilot run's lambdas, R/ais.R) takes exactly its next step: a target
     * ESS of 0 accepts max_delta. The adaptive step, chosen from the particles it then
     * reweights, biases Z-hat by O(1/M) (measured: -0.2 nats with 100 particles on the far
     * intercept case); a schedule fixed in advance keeps Z-hat unbiased (Neal 2001). */
    const int fixed = n_schedule > 0;
    const double next = fixed ? schedule[steps_done + steps] : 1.0;
    if (fixed) max_delta = next - lambda;
    double delta = sg_anneal_reweight(theta, logw, loglik, M, dim, max_delta,
                                      fixed ? 0.0 : s->target_ess, s->resample_ess,
                                      s->conditional_ess, &ess, &resampled, pcp, NULL, NULL,
                                      &scratch);
    if (fixed) lambda = next;
    else lambda = (delta >= max_delta) ? 1.0 : lambda + delta;

    /* SGHMC moves leaving f at the new lambda invariant, then the new log-likelihoods. Each
     * particle's move reads all the data (on the workspace's threads, model.h), so check for an
     * interrupt after each. */
    target.lambda = lambda;
    pot.jump.n = lambda * N;
    pot.data.factor = lambda;
    kernel.mh.tests = kernel.mh.items = 0.0;
    kernel.jumps_made = kernel.jumps_accepted = 0.0;
    const double acc_target = sg_kernel_target_acceptance(&kernel, &pot);
    const int metropolis = acc_target > 0.0;
    const int k0 = sg_move_steps(mv, ess, s->target_ess, M);
    const int k = metropolis ? sg_move_distance_steps(mv, k0, *step_size) : k0;
    kernel.eta = width ? (*step_size) * (*step_size) : sg_move_eta(mv, N);
    if (flymc && k > 0) sg_flymc_bound_set(&bound, &pot, theta, logw, M);
    /* moves without a Metropolis test (the paper's kernel, SGLD with the Euler setting) are
     * checked by the spread guard and redone with half the step (anneal.h) */
    const int check_spread = pcp && !metropolis && k > 0;
    sg_spread_guard guard;
    if (check_spread)
      sg_spread_guard_begin(&guard, pcp, theta, logw, loglik, M, dim, scratch.copy, scratch.work);
    /* Metropolis-adjusted gradient moves are repeated while the particles still correlate with
     * where they began (sg_move_again; the random-walk kernels' steps and reads are tuned on
     * their own); the start is kept for that and for each particle's metric, estimated without
     * the particle where it was (sg_precond_leave_out) */
    const int decorrelate = metropolis && pcp && k > 0 && mv->max_rounds > 1 &&
                            !sg_kernel_random_walk(mv->kernel);
    const double *start = decorrelate ? scratch.copy : theta;
    if (decorrelate) memcpy(scratch.copy, theta, (size_t) M * dim * sizeof(double));
    int diverged, diverged_all, halvings = 0, rounds;
  redo_moves:
    rounds = diverged_all = 0;
    if (metropolis) memset(accepted, 0, M * sizeof(double));
  move_again:
    diverged = 0;
    for (int i = 0; i < M; i++) {
      double *th = theta + (size_t) i * dim;
      memcpy(before, th, dim * sizeof(double));
      if (pcp) sg_precond_leave_out(pcp, resampled ? scratch.ancestors[i] : i,
                                    start + (size_t) i * dim, &own);
      /* the first move's streams are those of a run without repeated moves */
      sg_rng_init(&rng, key, step_id, (uint64_t) i + ((uint64_t) rounds << 32));
      sg_kernel_run(&pot, dim, th, v, grad, k, &kernel);
      if (metropolis && k > 0) {
        accepted[i] += kernel.accepted;
        acc[i] = accepted[i] / ((double) k * (rounds + 1));
      }
      /* a move that ran off to non-finite values is undone (see sgais.c) */
      if (!sg_all_finite(th, dim)) {
        memcpy(th, before, dim * sizeof(double));
        diverged++;
      }
      if (lambda < 1.0) loglik[i] = sg_model_log_lik(m, ws, th, NULL, 0, N, 1.0, NULL);
      if (st->code) return -1; /* a model failed: its message, not the NaN it caused */
      sg_interrupt_check();
    }
    rounds++;
    diverged_all += diverged;
    if (decorrelate && diverged < M &&
        sg_move_again(mv, rounds, sg_precond_jump_correlation(pcp, start, theta, logw, M, work)))
      goto move_again;
    if (check_spread) {
      double growth;
      char smaller[64];
      switch (sg_spread_guard_check(&guard, theta, logw, loglik, scratch.work, width, &halvings,
                                    &growth, smaller)) {
      case SG_GUARD_FAIL:
        sg_fail(st, SG_ERR_DIVERGED, "%s moves spread the particles %.3g times wider than their "
                "target at lambda = %g%s; try a smaller `step_size` or the Metropolis-adjusted "
                "moves (`integrator = \"baoab\"`).", sg_kernel_name(kernel.kind), growth,
                lambda, smaller);
        return -1;
      case SG_GUARD_REDO:
        *step_size *= 0.5;
        kernel.eta = (*step_size) * (*step_size);
        goto redo_moves;
      }
    }
    if (diverged == M) {
      sg_fail(st, SG_ERR_DIVERGED, "SGHMC diverged (non-finite parameters) at lambda = %g; "
              "try a smaller step (`step_size`, or `learning_rate` in the paper preset).", lambda);
      return -1;
    }
    tr->divergent[steps] = diverged_all;
    tr->step_halvings[steps] = halvings;
    tr->acceptance[steps] = (metropolis && k > 0) ? sg_move_adapt(mv, acc_target, step_size, acc, M) : NA_REAL;
    tr->data_fraction[steps] = kernel.mh.tests > 0.0 ? kernel.mh.items / (kernel.mh.tests * N) : NA_REAL;
    tr->jump_acceptance[steps] =
        kernel.jumps_made > 0.0 ? kernel.jumps_accepted / kernel.jumps_made : NA_REAL;
    tr->step_size[steps] = width ? *step_size : sqrt(kernel.eta);
    if (lambda < 1.0 && ais_check_loglik(loglik, M, lambda, 1, st)) return -1;

    tr->lambda[steps] = lambda;
    tr->ess[steps] = ess;
    tr->resampled[steps] = resampled;
    tr->sghmc_steps[steps] = k * rounds;
    tr->log_evidence[steps] = sg_log_sum_exp(logw, M) - log((double) M);
    tr->gradient_evaluations[steps] = ws->count.gradient;
    tr->likelihood_evaluations[steps] = ws->count.likelihood;
    tr->seconds[steps] = sg_now() - step_time;
    steps++;
    sg_interrupt_check();
    if (sg_now() - start_time > time_budget) break;
  }
  *lambda_io = lambda;
  return steps;
}
