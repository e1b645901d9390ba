/* Stochastic gradient annealed importance sampling (paper Algorithm 1, eq. 2-4).
 *
 * Bayesian updating chunk by chunk: for each chunk C of new observations, anneal lambda from 0 to
 * 1 on f(theta) = p(C | theta)^lambda p(previous data | theta) p(theta) (eq. 2), choosing each
 * step by the ESS of the incremental weights, updating the log-weights by Delta log p(C | theta)
 * and moving the particles by SGHMC on the mini-batch potential of eq. 4. After each chunk,
 * log Z(y_1..n) = logsumexp(log w) - log M is the evidence of the data seen so far.
 *
 * Beyond the paper (the "robust" preset; the "paper" preset runs Algorithm 1 as published):
 *   - moves in units of the target's width (precond.c), adaptive in number (sg_move_steps);
 *   - control-variate gradients for the mini-batch term:
 *       grad U(theta) = ... + G(a) + (n_prev / |B|) sum_B [grad log p(y|theta) - grad log p(y|a)]
 *     with the anchor a the weighted particle mean and G(a) the exact gradient sum over all
 *     earlier observations at a, kept up to date chunk by chunk and recomputed (re-anchoring)
 *     whenever n_prev has doubled since, which costs O(N) gradient evaluations in all, or when
 *     the particles have moved more than SGAIS_REANCHOR_DISTANCE target widths from it. The
 *     mini-batch noise then shrinks with the posterior, instead of heating it in proportion to n;
 *   - for a model with strata (a mixture's clusters), mini-batches drawn within them
 *     (strata_grad) and moves repeated until the particles decorrelate, as exact moves are;
 *   - the exact potential while n_prev <= exact_until (thesis Section 4.1: the early terms
 *     dominate the error), with early_particles particles, resampled down to `particles` when
 *     the mini-batch phase begins (the early phase is cheap and hardest, annealing away from the
 *     prior), and resampling when the weight ESS degenerates.
 *
 * The work is done by sgais_process(), which runs whole chunks from n_done until n_end or until
 * a time budget is spent, so R can show progress between calls and continue a run later; the
 * particles, log-weights, the control-variate anchor, the preconditioner and the run's key carry
 * the whole state, and every random draw comes from a stream keyed by (key, observations before
 * the chunk, particle) (rng.h), so the result does not depend on how the run is split into calls
 * nor on the number of threads the particles move on. */
#include "estimators.h"
#include <math.h>
#include <string.h>

/* Stochastic (mini-batch) moves cannot be Metropolis-tested, so they are checked instead by the
 * spread guard (anneal.h). With SGHMC it fires where the exact phase's dense metric becomes the
 * mini-batch phase's diagonal one on a wide, correlated posterior (a mixture's smallest
 * component). */

/* Annealing steps allowed for one chunk before we give up rather than appear to hang. */
#define SGAIS_MAX_ANNEALING_STEPS 100000
/* In the mini-batch phase the posterior changes little from chunk to chunk, so the
 * preconditioner averages each new particle covariance with the earlier ones (rescaled to the
 * current n) with this weight, about ten chunks' worth (precond.c). */
#define SGAIS_PRECOND_SMOOTHING 0.1
/* The control variate's error grows with the distance between the particles and the anchor
 * (the difference grad log p(y|theta) - grad log p(y|a) is about the per-observation Hessian
 * times theta - a), so the anchor also moves when the weighted particle mean is more than this
 * many target widths (root mean square per coordinate, in the preconditioner's metric) from it.
 * In a stationary stream the mean drifts by about one width while n doubles, so the doubling
 * rule re-anchors first; after a shift in the data the posterior moves by many widths within
 * a chunk, and a distant anchor turns the gradient noise into a heated, exploding target. */
#define SGAIS_REANCHOR_DISTANCE 2.0

/* The score control variate of each annealing step's evidence ratio (anneal.h) is used once the
 * earlier observations number at least this many times the chunk's, the posterior then changing
 * little within a chunk. Annealing a first chunk away from the prior it biased log Z-hat upwards;
 * later it removes most of the plain estimator's drift (Var log Z-hat grows as p log(n) / M, and
 * log Z-hat is low by half its variance; inst/design.md). The weighted particles stand for
 * their target only approximately when it changes much within a step, and the correction then
 * adds the particles' lag to weights that already account for it. */
#define SGAIS_SCORE_CV_HISTORY 4.0

/* Where the chunk after n_done observations ends. Chunk boundaries are fixed from the first
 * observation (so a run continued in pieces is the run of all the data at once): chunks of
 * first, 2 first, 3 first, ... observations while those are below chunk_size (the thesis's
 * schedule for the sequential estimator, Section 4.1: 20 at a time, growing by 20 up to 500),
 * then of chunk_size. R's chunk_floor() (R/sgais.R) is the same rule. */
double sgais_chunk_end(const sgais_settings *s, double n_done) {
  const double c = s->chunk_size, f = s->first_chunk_size;
  double b = 0.0;
  for (int k = 1; f * k < c; k++) {
    b += f * k;
    if (b > n_done) return b;
  }
  return b + (floor((n_done - b) / c) + 1.0) * c;
}

/* Counts of observations seen are doubles: a stream may pass 2^31 observations (only the rows
 * held in memory, a reservoir and the current chunks, are indexed by int). */

/* The lambdas of the chunk ending at n_now (ending at 1: schedule_from_r), or NULL. */
static const double *schedule_for(const sgais_schedule *sc, double n_now) {
  size_t offset = 0;
  for (int j = 0; j < sc->chunks; j++) {
    if (sc->n[j] == n_now) return sc->steps[j] > 0 ? sc->lambda + offset : NULL;
    offset += sc->steps[j];
  }
  return NULL;
}

static void lambdas_push(sgais_lambdas *l, double lambda) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    double *x = (double *) R_alloc(cap, sizeof(double));
    if (l->n) memcpy(x, l->x, l->n * sizeof(double));
    l->x = x;
    l->cap = cap;
  }
  l->x[l->n++] = lambda;
}

/* The stochastic potential of eq. 4 at temperature lambda for the chunk at buffer positions
 * [chunk_start, chunk_start + chunk_n): the chunk exactly, the n_prev earlier observations
 * exactly when `exact`, else through a mini-batch drawn with replacement from the `past` earlier
 * observations held (slot: their buffer positions, NULL for 0, ..., past - 1) and scaled by
 * n_prev / |B|, with the control variate of the anchor when there is one. */
typedef struct {
  const sg_model *m;
  int chunk_start, chunk_n, past, batch_size, exact;
  double n_prev, lambda;
  const int *slot;
  int *idx;
  const sgais_anchor *anchor; /* NULL: plain mini-batch gradient (paper eq. 4) */
  /* 0, or the strata the mini-batch is drawn within (strata_set): stratum c is the positions
   * strata_rows[strata_start[c] .. strata_start[c + 1] - 1] */
  int strata;
  const int *strata_start, *strata_rows;
  /* the first chunk's reference (setting `reference`; anneal.h), or none */
  sg_reference ref;
  sg_workspace *ws;
  sg_rng *rng; /* the stream of the particle being moved: its mini-batches */
} sgais_target;

/* The mini-batch term drawn within the strata of t: every observation, at scale 1, of a stratum
 * of no more than batch_size / C, and from each of the others the same number b of the rest of
 * the batch, drawn with replacement at scale n_c / b; with the anchor, the control variate's
 * difference (paper eq. 4 with the anchor's full sum added). Unbiased for any strata, as the
 * uniform draw is. With a mixture's clusters for strata, a cluster of a few dozen observations
 * among thousands (a stream's newest) is in every mini-batch whole instead of one or none of
 * its points, and the noise on its component's parameters, otherwise as large as their pull,
 * vanishes (inst/design.md). */
static void strata_grad(sgais_target *t, const double *theta, double *grad) {
  const sg_model *m = t->m;
  const int fair = t->batch_size / t->strata;
  int rest = t->batch_size, drawn = 0;
  for (int c = 0; c < t->strata; c++) {
    const int nc = t->strata_start[c + 1] - t->strata_start[c];
    if (nc <= fair) rest -= nc;
    else drawn++;
  }
  const int per = drawn && rest / drawn > 0 ? rest / drawn : 1;
  sg_rng rng = *t->rng;
  for (int c = 0; c < t->strata; c++) {
    const int *rows = t->strata_rows + t->strata_start[c];
    const int nc = t->strata_start[c + 1] - t->strata_start[c];
    const int *idx = rows;
    int n = nc;
    double scale = 1.0;
    if (nc > fair && nc > per) {
      for (int k = 0; k < per; k++) t->idx[k] = rows[sg_rng_index(&rng, (uint32_t) nc)];
      idx = t->idx;
      n = per;
      scale = (double) nc / per;
    }
    if (n == 0) continue;
    if (t->anchor && m->grad_log_lik_diff) {
      sg_model_grad_log_lik_diff(m, t->ws, theta, t->anchor->theta, idx, n, scale, grad);
    } else {
      sg_model_grad_log_lik(m, t->ws, theta, idx, 0, n, scale, grad);
      if (t->anchor) sg_model_grad_log_lik(m, t->ws, t->anchor->theta, idx, 0, n, -scale, grad);
    }
  }
  *t->rng = rng;
  if (t->anchor)
    for (int j = 0; j < m->dim; j++) grad[j] += t->anchor->grad[j];
}

static void sgais_grad_log_target(void *ctx, const double *theta, double *grad) {
  sgais_target *t = ctx;
  const sg_model *m = t->m;
  memset(grad, 0, m->dim * sizeof(double));
  sg_path_log_base(m, t->ws, &t->ref, t->lambda, theta, grad);
  sg_model_grad_log_lik(m, t->ws, theta, NULL, t->chunk_start, t->chunk_n, t->lambda, grad);
  if (t->past == 0) return;
  if (t->exact) {
    sg_model_grad_log_lik(m, t->ws, theta, t->slot, 0, t->past, 1.0, grad);
    return;
  }
  if (t->strata) {
    strata_grad(t, theta, grad);
    return;
  }
  /* exactly uniform indices from the particle's own stream (rng.h), its state in locals for
   * the loop */
  sg_rng rng = *t->rng;
  for (int k = 0; k < t->batch_size; k++) {
    int i = (int) sg_rng_index(&rng, (uint32_t) t->past);
    t->idx[k] = t->slot ? t->slot[i] : i;
  }
  *t->rng = rng;
  /* with a bounded reservoir the mini-batch is unbiased for the sum over all n_prev earlier
   * observations given the reservoir, itself a uniform sample of them */
  const double scale = t->n_prev / t->batch_size;
  if (t->anchor && m->grad_log_lik_diff) {
    /* both gradients in one pass over the mini-batch's rows (model.h) */
    sg_model_grad_log_lik_diff(m, t->ws, theta, t->anchor->theta, t->idx, t->batch_size, scale,
                               grad);
    for (int j = 0; j < m->dim; j++) grad[j] += t->anchor->grad[j];
    return;
  }
  sg_model_grad_log_lik(m, t->ws, theta, t->idx, 0, t->batch_size, scale, grad);
  if (t->anchor) {
    for (int j = 0; j < m->dim; j++) grad[j] += t->anchor->grad[j];
    sg_model_grad_log_lik(m, t->ws, t->anchor->theta, t->idx, 0, t->batch_size, -scale, grad);
  }
}

/* The part of log f the subsampling MH kernels evaluate exactly: the prior and the chunk at
 * lambda (the earlier observations are the population their test subsamples; kernel.h). */
static double sgais_log_rest(void *ctx, const double *theta) {
  sgais_target *t = ctx;
  const sg_model *m = t->m;
  double lf = sg_path_log_base(m, t->ws, &t->ref, t->lambda, theta, NULL);
  if (t->lambda > 0.0)
    lf += t->lambda * sg_model_log_lik(m, t->ws, theta, NULL, t->chunk_start, t->chunk_n, 1.0, NULL);
  return lf;
}

/* The exact potential's log f (up to a constant) and gradient, for the Metropolis-adjusted
 * kernel while the earlier data are used exactly. */
static double sgais_log_target(void *ctx, const double *theta, double *grad) {
  sgais_target *t = ctx;
  const sg_model *m = t->m;
  if (grad) memset(grad, 0, m->dim * sizeof(double));
  double lf = sg_path_log_base(m, t->ws, &t->ref, t->lambda, theta, grad);
  lf += t->lambda * sg_model_log_lik(m, t->ws, theta, NULL, t->chunk_start, t->chunk_n, t->lambda,
                                     grad);
  if (t->past > 0) lf += sg_model_log_lik(m, t->ws, theta, t->slot, 0, t->past, 1.0, grad);
  return lf;
}

static int fail_diverged(sg_status *st, double n_obs) {
  return sg_fail(st, SG_ERR_DIVERGED,
               "SGHMC diverged (non-finite parameters) while adding observations up to %.0f; "
               "try a smaller step (`step_size`, or `learning_rate` in the paper preset).", n_obs);
}

/* After SGHMC moves, zero likelihood everywhere means the particles ran off: say so. A model
 * failure recorded already is the cause and is what st reports (sg_fail keeps the first). */
static int check_chunk_loglik(const double *loglik, int M, double from, double to, int moved,
                              sg_status *st) {
  switch (sg_check_loglik(loglik, M)) {
  case SG_LOGLIK_NOT_FINITE:
    return sg_fail(st, SG_ERR_LIKELIHOOD, "the log-likelihood of observations %.0f to %.0f is NaN or +Inf for a particle%s.",
                 from, to, moved ? "; try a smaller step (`step_size` or `learning_rate`)" : "");
  case SG_LOGLIK_ALL_ZERO:
    if (moved)
      return sg_fail(st, SG_ERR_DIVERGED, "SGHMC diverged (every particle has zero likelihood on observations %.0f to %.0f); "
                   "try a smaller step (`step_size` or `learning_rate`).", from, to);
    return sg_fail(st, SG_ERR_LIKELIHOOD, "every particle has zero likelihood on observations %.0f to %.0f.", from, to);
  }
  return st->code;
}

/* Sets the anchor at `at`, with G the exact gradient sum over the `past` earlier observations
 * held at the buffer positions slot (NULL: 0, ..., past - 1). */
static void anchor_exact(const sg_model *m, sgais_anchor *a, const double *at, const int *slot,
                         int past, sg_workspace *ws) {
  memcpy(a->theta, at, m->dim * sizeof(double));
  memset(a->grad, 0, m->dim * sizeof(double));
  sg_model_grad_log_lik(m, ws, a->theta, slot, 0, past, 1.0, a->grad);
}

/* A non-finite G would make every mini-batch gradient non-finite: say where instead. */
static int check_anchor_grad(const sgais_anchor *a, int dim, double n, sg_status *st) {
  if (sg_all_finite(a->grad, dim)) return st->code;
  return sg_fail(st, SG_ERR_LIKELIHOOD, "the log-likelihood gradient at the particles' mean is not finite "
                 "(observations 1 to %.0f).", n);
}

/* Re-anchor at the weighted particle mean when there is no anchor, when the earlier data have
 * doubled since the last one, or when the mean is more than SGAIS_REANCHOR_DISTANCE target
 * widths from it (needs the preconditioner), recomputing G over the earlier data of the target
 * t; otherwise G is already current. Adds 1 to *reanchors when it re-anchored; returns the
 * status (a non-finite G is an error). mean, work: dim scratch.
 * When a bounded reservoir holds only some of the earlier observations, G at the new anchor is
 * G at the old one plus the reservoir's estimate of the change,
 *   G(a') = G(a) + (n_prev / r) sum_reservoir [grad log p(y | a') - grad log p(y | a)],
 * whose error is about the per-observation Hessian's sampling error times a' - a: a shift of the
 * target's mean by about |a' - a| / sqrt(r) target widths (the exact part G(a) is kept). */
static int refresh_anchor(const sg_model *m, sgais_anchor *a, const sgais_target *t,
                          const double *theta, const double *logw, int M, const sg_precond *pcp,
                          double *mean, double *work, int *reanchors) {
  const int dim = m->dim;
  const double n_prev = t->n_prev;
  sg_weighted_mean(theta, logw, M, dim, mean);
  if (a->n_anchor > 0 && n_prev < 2 * a->n_anchor &&
      (!pcp || pcp->acc_n == 0.0 ||
       sg_precond_distance2(pcp, mean, a->theta, work) <=
           SGAIS_REANCHOR_DISTANCE * SGAIS_REANCHOR_DISTANCE))
    return SG_OK;
  if (t->past == n_prev) {
    anchor_exact(m, a, mean, t->slot, t->past, t->ws);
  } else {
    const double scale = n_prev / t->past;
    if (a->n_anchor > 0) sg_model_grad_log_lik(m, t->ws, a->theta, t->slot, 0, t->past, -scale, a->grad);
    else memset(a->grad, 0, dim * sizeof(double));
    memcpy(a->theta, mean, dim * sizeof(double));
    sg_model_grad_log_lik(m, t->ws, a->theta, t->slot, 0, t->past, scale, a->grad);
  }
  a->n_anchor = n_prev;
  a->n_grad = n_prev;
  (*reanchors)++;
  return check_anchor_grad(a, dim, n_prev, t->ws->status);
}

/* Vitter's Algorithm R for the chunk's cn observations, at buffer positions base, base + 1, ...,
 * the first of them the (n_done + 1)-th of the stream: the k-th observation seen is kept with
 * probability cap / k, in a uniformly chosen slot, so that the reservoir is a uniform sample of
 * every observation seen. sg_rng_index_large() is exact also past 2^32 observations. */
static void reservoir_add(sgais_reservoir *r, int base, int cn, double n_done, sg_rng *rng) {
  for (int k = 0; k < cn; k++) {
    if (r->size < r->cap) {
      r->slot[r->size++] = base + k;
      continue;
    }
    double j = sg_rng_index_large(rng, n_done + k + 1.0);
    if (j < r->cap) r->slot[(int) j] = base + k;
  }
}

/* Resamples the M_from particles (systematically, in proportion to their weights) down to M_to,
 * each with the mean weight: the mean weight, the estimate of Z, is unchanged. */
static void resample_down(double *theta, double *logw, int M_from, int M_to, int dim,
                          sg_anneal_scratch *scratch) {
  double mean = sg_log_sum_exp(logw, M_from) - log((double) M_from);
  sg_resample_systematic_n(logw, M_from, scratch->ancestors, M_to, scratch->work, scratch->rng);
  memcpy(scratch->copy, theta, (size_t) M_from * dim * sizeof(double));
  for (int i = 0; i < M_to; i++)
    memcpy(theta + (size_t) i * dim, scratch->copy + (size_t) scratch->ancestors[i] * dim,
           dim * sizeof(double));
  for (int i = 0; i < M_to; i++) logw[i] = mean;
  if (scratch->genealogy) {
    sg_genealogy_resampled(scratch->genealogy, scratch->ancestors, M_to);
    sg_genealogy_close_if_few(scratch->genealogy, M_to);
  }
}

/* What one thread needs to move particles: its own metric, kernel, potential, workspace and
 * scratch. Threads share only the read-only model, settings, preconditioner and anchor, and each
 * particle draws from its own stream, so the moves do not depend on the number of threads. */
typedef struct {
  sg_precond own; /* each particle moves in the metric estimated without it (sg_precond_leave_out) */
  sg_kernel kernel;
  sgais_target target;
  sg_potential pot;
  sg_workspace ws;
  double *v, *grad, *before;
} sgais_mover;

static void mover_init(sgais_mover *w, const sg_model *m, const sgais_settings *s,
                       int preconditioned, int n_max, sg_status *st) {
  const sg_move_settings *mv = &s->a.move;
  const int dim = m->dim;
  sg_precond_alloc(&w->own, mv->preconditioner, dim);
  sg_precond_set_free(&w->own, m);
  sg_kernel_init(&w->kernel, mv, preconditioned ? &w->own : NULL, dim, n_max);
  sg_workspace_init(&w->ws, m, st);
  w->v = (double *) R_alloc(3 * (size_t) dim, sizeof(double));
  w->grad = w->v + dim;
  w->before = w->v + 2 * dim;
  w->target.m = m;
  w->target.idx = (int *) R_alloc(s->batch_size, sizeof(int));
}

/* Gives every mover the potential of this annealing step (the fields of t and pot) with its own
 * mini-batch indices and workspace, and the kernel's step eta. */
static void movers_set(sgais_mover *movers, int threads, const sgais_target *t,
                       const sg_potential *pot, double eta) {
  for (int k = 0; k < threads; k++) {
    sgais_mover *w = &movers[k];
    int *idx = w->target.idx;
    w->target = *t;
    w->target.idx = idx;
    w->target.ws = &w->ws;
    w->pot = *pot;
    w->pot.ctx = &w->target;
    w->pot.data.ws = &w->ws;
    /* the chunk at lambda, for the data-augmentation moves (kernel.h) */
    w->pot.tempered.start = t->chunk_start;
    w->pot.tempered.n = t->chunk_n;
    w->pot.tempered.lambda = t->lambda;
    w->kernel.eta = eta;
  }
}

/* The movers' evaluation counts, added to ws's and reset, and their MH tests and the
 * observations those read, added to *tests and *items, and their jump proposals made and
 * accepted, added to jumps[0] and jumps[1] (sums of whole numbers: exact, so the totals do not
 * depend on which thread did what). */
static void movers_count(sgais_mover *movers, int threads, sg_workspace *ws, double *tests,
                         double *items, double *jumps) {
  for (int k = 0; k < threads; k++) {
    ws->count.likelihood += movers[k].ws.count.likelihood;
    ws->count.gradient += movers[k].ws.count.gradient;
    movers[k].ws.count.likelihood = movers[k].ws.count.gradient = 0.0;
    *tests += movers[k].kernel.mh.tests;
    *items += movers[k].kernel.mh.items;
    movers[k].kernel.mh.tests = movers[k].kernel.mh.items = 0.0;
    jumps[0] += movers[k].kernel.jumps_made;
    jumps[1] += movers[k].kernel.jumps_accepted;
    movers[k].kernel.jumps_made = movers[k].kernel.jumps_accepted = 0.0;
  }
}

/* Moves particle i (k steps of the kernel) with mover w from its stream rng: undoes a move that
 * ran off to non-finite values (the Metropolis-adjusted kernel rejects such steps itself) and
 * returns 1 for it; adds the steps accepted to *acc (acc not NULL) and records the chunk
 * log-likelihood after the move (loglik not NULL). a: the particle's index in the
 * preconditioner's estimate, start: where it was then (its metric leaves it out there). */
static int move_particle(sgais_mover *w, const sg_precond *pcp, int a, const double *start,
                         double *th, sg_rng *rng, int k, double *acc, double *loglik,
                         double *score) {
  const sg_model *m = w->target.m;
  const int dim = m->dim;
  int diverged = 0;
  memcpy(w->before, th, dim * sizeof(double));
  if (pcp) sg_precond_leave_out(pcp, a, start, &w->own);
  w->kernel.rng = w->target.rng = rng;
  sg_kernel_run(&w->pot, dim, th, w->v, w->grad, k, &w->kernel);
  if (acc) *acc += w->kernel.accepted;
  if (!sg_all_finite(th, dim)) {
    memcpy(th, w->before, dim * sizeof(double));
    diverged = 1;
  }
  /* the score at the new position, if the kernel left it (else computed when needed) */
  if (score) {
    if (!diverged && k > 0 && sg_kernel_leaves_gradient(&w->kernel) && sg_all_finite(w->grad, dim))
      memcpy(score, w->grad, dim * sizeof(double));
    else
      for (int j = 0; j < dim; j++) score[j] = NA_REAL;
  }
  if (loglik) *loglik = sg_path_log_lik(m, &w->ws, &w->target.ref, th, w->target.chunk_start,
                                        w->target.chunk_n, NULL, NULL);
  return diverged;
}

/* Moves the M particles, on `threads` threads when there are more than one (each particle with
 * its own stream, so the result is the same on any number of threads); returns the number of
 * moves undone. ancestors: the particles' indices in the preconditioner's estimate (NULL: i),
 * start: their positions then (M rows of dim).
 * score (NULL: not kept): each particle's score after its move (move_particle). */
static int move_particles(sgais_mover *movers, int threads, const sg_precond *pcp,
                          const int *ancestors, const double *start, double *theta, int M,
                          sg_rng *rngs, int k, double *acc, double *loglik, int *flags,
                          double *score) {
  const int dim = movers[0].target.m->dim;
#define SGAIS_MOVE(w, i)                                                                         \
  flags[i] = move_particle(w, pcp, ancestors ? ancestors[i] : i, start + (size_t) (i) * dim,    \
                           theta + (size_t) (i) * dim, &rngs[i], k, acc ? acc + (i) : NULL,     \
                           loglik ? loglik + (i) : NULL, score ? score + (size_t) (i) * dim : NULL)
  if (threads > 1) {
    SG_PARALLEL_FOR(threads)
    for (int i = 0; i < M; i++) SGAIS_MOVE(&movers[sg_thread_id()], i);
  } else {
    /* one thread (also every model that calls R): no parallel region, whose unwinding by an R
     * error or interrupt would be undefined */
    for (int i = 0; i < M; i++) {
      SGAIS_MOVE(&movers[0], i);
      sg_interrupt_check();
    }
  }
#undef SGAIS_MOVE
  int diverged = 0;
  for (int i = 0; i < M; i++) diverged += flags[i];
  return diverged;
}

/* The score of the current target f (the movers', movers_set) at each particle, for the score
 * control variate of the next annealing step (sg_anneal_score_correction): score holds a row of
 * dim per particle, from the last moves where the kernel leaves it (sg_kernel_leaves_gradient),
 * or NaN where it must be computed, which this does, on a mini-batch from the particle's stream.
 * A mini-batch estimate is unbiased given theta_i, so h keeps mean zero under f. Then
 * h[i] = v' score_i. */
static void particle_scores(sgais_mover *movers, int threads, const double *theta, int M,
                            sg_rng *rngs, double *score, const double *v, double *h) {
  const int dim = movers[0].target.m->dim;
#define SGAIS_SCORE(w, i)                                                                        \
  do {                                                                                           \
    double *g_ = score + (size_t) (i) * dim;                                                     \
    if (ISNAN(g_[0])) {                                                                          \
      (w)->target.rng = &rngs[i];                                                                \
      (w)->pot.grad_log_target((w)->pot.ctx, theta + (size_t) (i) * dim, g_);                    \
    }                                                                                            \
  } while (0)
  if (threads > 1) {
    SG_PARALLEL_FOR(threads)
    for (int i = 0; i < M; i++) SGAIS_SCORE(&movers[sg_thread_id()], i);
  } else {
    for (int i = 0; i < M; i++) SGAIS_SCORE(&movers[0], i);
  }
#undef SGAIS_SCORE
  for (int i = 0; i < M; i++) {
    double s = 0.0;
    for (int j = 0; j < dim; j++) s += v[j] * score[(size_t) i * dim + j];
    h[i] = s;
  }
}

/* Marks every particle's score as to be computed (particle_scores). */
void sgais_scores_unknown(double *score, int M, int dim) {
  if (score)
    for (size_t l = 0; l < (size_t) M * dim; l++) score[l] = NA_REAL;
}

/* loglik[i] = the log-likelihood of the chunk (buffer positions start..start+n-1) at particle i,
 * as the annealing weights it (sg_path_log_lik). */
static void chunk_log_lik(sgais_mover *movers, int threads, const double *theta, int M, int start,
                          int n, const sg_reference *ref, double *loglik) {
  const sg_model *m = movers[0].target.m;
  if (threads > 1) {
    SG_PARALLEL_FOR(threads)
    for (int i = 0; i < M; i++)
      loglik[i] = sg_path_log_lik(m, &movers[sg_thread_id()].ws, ref, theta + (size_t) i * m->dim,
                                  start, n, NULL, NULL);
  } else {
    for (int i = 0; i < M; i++)
      loglik[i] = sg_path_log_lik(m, &movers[0].ws, ref, theta + (size_t) i * m->dim, start, n,
                                  NULL, NULL);
  }
}

/* One call's run (sgais_process): the state it updates (the caller's), its scratch, and the
 * samplers. target and pot point into the struct, so it stays where run_init() built it. */
typedef struct {
  const sg_model *m;
  const sgais_settings *s;
  const sg_move_settings *mv;
  int dim, M, M_cap, threads;
  /* the caller's state */
  double *theta, *logw, *step_size, *score;
  int *M_io;
  sgais_anchor *anchor;
  sg_precond *pcp;
  sgais_reservoir *res;
  double buffer_start;
  uint64_t key;
  const sgais_schedule *schedule;
  sgais_lambdas *taken;
  sgais_trace *tr;
  sg_status *st;
  /* scratch and the samplers */
  double *loglik, *acc, *corr_work, *mean, *cv_dir, *cv, *work;
  int *flags;
  sg_anneal_scratch scratch;
  sg_rng *rngs, shared;
  sg_workspace ws;
  sgais_target target;
  sg_potential pot;
  sgais_mover *movers;
  sg_flymc_bound bound;
  int flymc, jumps, all_held; /* all_held: every observation held from the first */
  int *jump_pts;
  double *jump_aux;
  /* the mini-batches' strata (strata_set): each earlier observation's, and the positions by
   * stratum (room for strata_cap of each) */
  int *strata_label, *strata_rows, strata_cap, strata_start[SG_STRATA_MAX + 1];
  sg_restart_watch watch;
  double *region; /* the particles' region (model.h, canonicalize), or NULL */
} sgais_run;

/* One chunk: where it lies, its annealing so far and its counts for the trace. */
typedef struct {
  double n_done, n_now, chunk_time, target_ess, step_ess;
  int cn, base, width, cv_chunk;
  /* a split chunk (split_step): its first `taken` observations are in the target so far */
  int split, taken;
  const double *fixed; /* a fixed schedule's lambdas for the chunk, or NULL: adaptive */
  double lambda, min_ess, predicted_var, acc_sum, mh_tests, mh_items, jump_counts[2];
  int steps, resamples, moves, divergent, acc_steps, step_halvings, reanchors;
  int exact_moves; /* mini-batch moves gave way to exact ones (chunk_go_exact) */
} sgais_chunk;

int sgais_particle_cap(const sgais_settings *s, int M) {
  const int cap = s->early_particles > s->a.particles ? s->early_particles : s->a.particles;
  return M > cap ? M : cap;
}

static void run_init(sgais_run *r, const sg_model *m, const sgais_settings *s, sgais_state *x,
                     const sgais_schedule *schedule, sgais_trace *tr, sg_status *st) {
  const int dim = m->dim;
  const int M_cap = sgais_particle_cap(s, x->M);
  *r = (sgais_run){.m = m, .s = s, .mv = &s->a.move, .dim = dim, .M = x->M, .M_cap = M_cap,
                   .theta = x->theta, .logw = x->logw, .step_size = &x->step_size,
                   .score = x->score, .M_io = &x->M, .anchor = &x->anchor, .pcp = x->pcp,
                   .res = &x->res, .buffer_start = x->buffer_start, .key = x->key,
                   .schedule = schedule, .taken = &x->taken, .tr = tr, .st = st};
  r->loglik = (double *) R_alloc(M_cap, sizeof(double));
  r->acc = (double *) R_alloc(M_cap, sizeof(double));
  r->corr_work = (double *) R_alloc(7 * (size_t) dim, sizeof(double));
  r->mean = (double *) R_alloc(dim, sizeof(double));
  /* the score control variate: its direction v = A g (and g) and each particle's h */
  r->cv_dir = (double *) R_alloc(2 * (size_t) dim, sizeof(double));
  r->cv = (double *) R_alloc(M_cap, sizeof(double));
  sg_anneal_scratch_alloc(&r->scratch, M_cap, dim);
  r->work = r->scratch.work;
  /* one stream per particle and one for resampling and the reservoir, per chunk (rng.h) */
  r->rngs = (sg_rng *) R_alloc(M_cap, sizeof(sg_rng));
  r->flags = (int *) R_alloc(M_cap, sizeof(int));
  r->scratch.rng = &r->shared;

  sg_workspace_init(&r->ws, m, st);
  r->threads = m->thread_safe ? sg_threads() : 1;
  sg_workspace_threads(&r->ws, m, r->threads);
  r->target = (sgais_target){.m = m, .batch_size = s->batch_size, .ws = &r->ws,
                             .rng = &r->shared};
  r->pot = (sg_potential){sgais_grad_log_target, &r->target, NULL, sgais_log_rest,
                          {m, &r->ws, NULL, 0, 0, 0.0, NULL}};
  /* the region the particles are relabelled into (model.h, canonicalize), which the exact
   * kernels keep them in */
  if (x->pcp && m->canonicalize)
    r->pot.region = (const double *) (r->region = (double *) R_alloc(m->region_size, sizeof(double)));
  r->movers = (sgais_mover *) R_alloc(r->threads, sizeof(sgais_mover));
  /* the most observations an MH test's population (the earlier ones held) can have */
  const int n_max = x->res.cap ? x->res.cap : m->n_obs;
  for (int t = 0; t < r->threads; t++) mover_init(&r->movers[t], m, s, !!x->pcp, n_max, st);
  /* the FlyMC kernel's collapsed bound over the earlier observations (kernel.h), anchored and
   * collapsed here before each annealing step's moves, read by every mover */
  r->flymc = r->mv->kernel == SG_KERNEL_FLYMC;
  if (r->flymc) {
    sg_flymc_bound_alloc(&r->bound, dim);
    r->pot.data.bound = &r->bound;
  }
  /* the jump proposals (kernel.h), while the potential is exact */
  r->jumps = r->mv->jumps > 0 && m->jump_propose;
  r->jump_pts = r->jumps ? (int *) R_alloc(SG_JUMP_POINTS, sizeof(int)) : NULL;
  r->jump_aux = r->jumps ? (double *) R_alloc(m->jump_aux, sizeof(double)) : NULL;
  r->all_held = x->buffer_start == 0.0 && !x->res.cap;
  sg_restart_watch_init(&r->watch, &s->trigger, r->all_held,
                        s->update == SGAIS_UPDATE_ANNEALED && r->jumps && m->gibbs_propose,
                        s->chunk_size, &tr->stop);
}

/* The target's phase for the rest of chunk c, set at its start (chunk_begin) and when the
 * spread guard gives up mini-batch moves (chunk_go_exact). Exact: Metropolis-adjusted moves
 * (robust kernel) on the exact potential, with jumps built from the observations seen so far
 * (the earlier ones held, then the chunk) and an unsmoothed preconditioner. Mini-batch: no
 * log target, no jumps; chunk_begin sets the control variates' anchor after this. */
static void target_set_phase(sgais_run *r, const sgais_chunk *c, int exact) {
  sgais_target *t = &r->target;
  t->exact = exact;
  t->anchor = NULL;
  r->pot.log_target = exact ? sgais_log_target : NULL;
  r->pot.jump.aux = (r->jumps && exact) ?
      sg_jump_set(r->m, t->past + c->cn, t->slot, 0, t->past, c->base, r->jump_pts, r->jump_aux) :
      NULL;
  if (r->pcp) r->pcp->smoothing = exact ? 1.0 : SGAIS_PRECOND_SMOOTHING;
}

/* The observations at positions slot[0..past-1] (NULL: 0..past-1) grouped by the model's strata
 * from aux (model.h): stratum c's positions in rows[start[c] .. start[c + 1] - 1], in order;
 * label: scratch of past. Returns the strata, 0 for none. */
static int strata_group(const sg_model *m, const double *aux, const int *slot, int past,
                        int *label, int *rows, int *start) {
  const int C = m->strata(m, aux, slot, past, label);
  if (C < 2 || C > SG_STRATA_MAX) return 0;
  int next[SG_STRATA_MAX];
  memset(start, 0, (C + 1) * sizeof(int));
  for (int i = 0; i < past; i++) start[label[i] + 1]++;
  for (int c = 0; c < C; c++) start[c + 1] += start[c];
  memcpy(next, start, C * sizeof(int));
  for (int i = 0; i < past; i++) rows[next[label[i]]++] = slot ? slot[i] : i;
  return C;
}

/* The strata of the chunk's mini-batches (strata_grad): in the mini-batch phase of a model
 * with strata, from the summary of every observation so far that reference_level() has just
 * made (a mixture: its clusters); else none (uniform draws). */
static void strata_set(sgais_run *r, sgais_target *t) {
  t->strata = 0;
  if (t->exact || !r->m->strata || !r->jumps || !r->all_held || t->past < 2) return;
  if (t->past > r->strata_cap) {
    r->strata_cap = t->past > 2 * r->strata_cap ? t->past : 2 * r->strata_cap;
    r->strata_label = (int *) R_alloc(2 * (size_t) r->strata_cap, sizeof(int));
    r->strata_rows = r->strata_label + r->strata_cap;
  }
  t->strata = strata_group(r->m, r->jump_aux, t->slot, t->past, r->strata_label, r->strata_rows,
                           r->strata_start);
  t->strata_start = r->strata_start;
  t->strata_rows = r->strata_rows;
}

/* Probe for the tests (hooks_r.c): the gradient of the mini-batch potential (the prior and the
 * n_obs observations as earlier ones, with the control variate of the anchor a) exactly into
 * out, then `draws` mini-batch estimates of it into the next columns (dim x (draws + 1)), each
 * from stream d of `key`, drawn within the model's strata from its summary of the observations
 * when `stratified` (else uniformly). Returns the strata used, 0 for none. */
int sgais_probe_batch_grads(const sg_model *m, sg_workspace *ws, const double *theta,
                            const double *a, int batch_size, int stratified, int draws,
                            uint64_t key, double *out) {
  const int n = (int) m->n_obs, dim = m->dim;
  sgais_anchor anchor = {(double *) a, (double *) R_alloc(dim, sizeof(double)), 0.0, n};
  memset(anchor.grad, 0, dim * sizeof(double));
  sg_model_grad_log_lik(m, ws, a, NULL, 0, n, 1.0, anchor.grad);
  sg_rng rng;
  int start[SG_STRATA_MAX + 1];
  sgais_target t = {.m = m, .past = n, .batch_size = batch_size, .exact = 1, .n_prev = n,
                    .lambda = 1.0, .idx = (int *) R_alloc(batch_size, sizeof(int)),
                    .anchor = &anchor, .ws = ws, .rng = &rng};
  sgais_grad_log_target(&t, theta, out);
  t.exact = 0;
  if (stratified && m->strata && m->jump_prepare) {
    double *aux = (double *) R_alloc(m->jump_aux, sizeof(double));
    sg_jump_set(m, n, NULL, 0, n, 0, (int *) R_alloc(SG_JUMP_POINTS, sizeof(int)), aux);
    int *label = (int *) R_alloc(2 * (size_t) n, sizeof(int));
    t.strata = strata_group(m, aux, NULL, n, label, label + n, start);
    t.strata_start = start;
    t.strata_rows = label + n;
  }
  for (int d = 0; d < draws; d++) {
    sg_rng_init(&rng, key, (uint64_t) d, 0);
    sgais_grad_log_target(&t, theta, out + (size_t) (d + 1) * dim);
  }
  return t.strata;
}

/* The model's reference level (anneal.h) on the n_now observations so far, judged where the
 * run has jump proposals and holds every observation from the first (else 0): the moves' rule
 * for spare components (chunk_begin) and the triggers (restart.h) read it. */
static int reference_level(sgais_run *r, double n_now) {
  if (!r->jumps || !r->all_held) return 0;
  const int n = (int) n_now;
  return sg_reference_level(r->m, sg_jump_set(r->m, n, NULL, 0, n, 0, r->jump_pts, r->jump_aux));
}

/* A chunk's start (paper Algorithm 1, lines 2-4): its streams, the target over it and the
 * earlier observations, the phase (exact or mini-batch), the anchor, and the particles'
 * log-likelihoods of it. Returns 1 when the run stops before it for a restart, -1 after a
 * failure, else 0. */
static int chunk_begin(sgais_run *r, sgais_chunk *c, double n_done, double n_end) {
  const sgais_settings *s = r->s;
  const int dim = r->dim;
  const double end = sgais_chunk_end(s, n_done);
  *c = (sgais_chunk){.n_done = n_done, .chunk_time = sg_now()};
  c->cn = (int) ((n_end < end ? n_end : end) - n_done);
  c->n_now = n_done + c->cn;
  c->base = (int) (n_done - r->buffer_start);
  /* the chunk's streams, keyed by the observations before it (rng.h) */
  sg_rng_init(&r->shared, r->key, (uint64_t) n_done, SG_RNG_SHARED);
  for (int i = 0; i < r->M_cap; i++) sg_rng_init(&r->rngs[i], r->key, (uint64_t) n_done, (uint64_t) i);
  /* eta in the units of the move settings (inst/design.md, "Kernels"; precond.c), with n the
   * observations in the current target; in units of the width the step is the adapted one */
  c->width = r->mv->scale == SG_STEP_WIDTH;
  r->ws.count.likelihood = r->ws.count.gradient = 0.0;
  /* Mini-batch moves cannot sample a mixture whose data show fewer clusters than it has
   * components (its reference usable, not complete; model.h, ref_ok): the posterior of a spare
   * component rests on the few observations it could claim, which a mini-batch mostly misses,
   * and the trajectory goes wrong with no guard seeing it (inst/design.md). Its chunks move
   * exactly, as the first exact_until observations do. */
  const int level = n_done > 0 ? reference_level(r, c->n_now) : 0;
  const int overfitted = level == SG_REF_USABLE;
  if (n_done > 0 && c->n_now == end &&
      sg_restart_due(&r->watch, r->m, &r->ws, r->theta, r->logw, r->M, c->n_now, c->base, c->cn,
                     level, &r->tr->stop))
    return 1;
  sgais_target *t = &r->target;
  t->chunk_start = c->base;
  t->chunk_n = c->cn;
  t->n_prev = n_done;
  t->past = r->res->cap ? r->res->size : (int) n_done;
  t->slot = r->res->cap ? r->res->slot : NULL;
  /* exact while every earlier observation is held (the settings make exact_until <= cap) */
  target_set_phase(r, c, (n_done <= s->exact_until || overfitted) && t->past == n_done);
  if (n_done > 0) strata_set(r, t);
  /* the phase's particles: early_particles while exact, particles after; more (the mini-batch
   * phase's first chunk, or a restart's from an incomplete reference, R/restart.R) are
   * resampled down to them */
  const int M_phase = t->exact ? s->early_particles : s->a.particles;
  if (r->M > M_phase) {
    resample_down(r->theta, r->logw, r->M, M_phase, dim, &r->scratch);
    r->M = *r->M_io = M_phase;
    sgais_scores_unknown(r->score, r->M, dim);
  }
  const int M = r->M;
  /* the target ESS as the same fraction of the particles in every phase; without annealing
   * (SIR, sequential estimator) one step takes the whole chunk, and the target ESS only sets
   * how many moves follow it (sg_move_steps) */
  c->target_ess = s->a.target_ess * M / s->a.particles;
  c->step_ess = s->update == SGAIS_UPDATE_ANNEALED ? c->target_ess : 0.0;
  /* the MH kernels' test subsamples the earlier observations held, standing for all n_prev */
  r->pot.data.slot = t->slot;
  r->pot.data.start = 0;
  r->pot.data.n = t->past;
  r->pot.data.factor = t->past > 0 ? n_done / t->past : 0.0;
  if (r->pcp) r->pcp->n = c->n_now;
  if (s->control_variates && !t->exact) {
    if (refresh_anchor(r->m, r->anchor, t, r->theta, r->logw, M, r->pcp, r->mean, r->work,
                       &c->reanchors))
      return -1;
    t->anchor = r->anchor;
  }
  /* The first chunk of an annealed run from the reference (anneal.h): the particles, still
   * prior draws of equal weight, are drawn again from q0 (each from its own stream) */
  t->ref = sg_reference_for(r->m, s->a.reference && n_done == 0 &&
                                      s->update == SGAIS_UPDATE_ANNEALED && r->pot.jump.aux,
                            r->jump_aux, c->base, c->cn);
  if (t->ref.aux)
    for (int i = 0; i < M; i++) {
      r->m->ref_draw(r->m, t->ref.aux, t->ref.n, r->theta + (size_t) i * dim, &r->rngs[i]);
      r->logw[i] = 0.0;
    }
  chunk_log_lik(r->movers, sg_threads_for(r->threads, (double) M * c->cn), r->theta, M, c->base,
                c->cn, &t->ref, r->loglik);
  movers_count(r->movers, r->threads, &r->ws, &c->mh_tests, &c->mh_items, c->jump_counts);
  if (check_chunk_loglik(r->loglik, M, n_done + 1, c->n_now, n_done > 0, r->st)) return -1;
  c->min_ess = M;
  /* A fixed schedule serves the chunks without the score control variate only: with it,
   * steps fixed by another run's particles let the target move further within a step than
   * this run's particles stand for, and the correction then adds their lag to weights that
   * already account for it (see SGAIS_SCORE_CV_HISTORY): log Z-hat drifts upwards chunk by
   * chunk (inst/design.md). */
  c->cv_chunk = r->score && n_done >= SGAIS_SCORE_CV_HISTORY * c->cn;
  c->fixed = c->cv_chunk ? NULL : schedule_for(r->schedule, c->n_now);
  if (s->update != SGAIS_UPDATE_ANNEALED) {
    /* the ESS of the chunk's one step: too low, it may call for a restart (restart.h) while the
     * data so far fit in one mini-batch, in the exact phase, where nothing above has changed the
     * particles yet (also in the last, partial chunk, run on a copy: sgais_replicate()); else
     * for a split */
    double ess;
    sg_annealing_step(r->loglik, s->a.conditional_ess ? r->logw : NULL, M, 1.0, 0.0, &ess,
                      r->work);
    if (n_done > 0 && t->exact && c->n_now <= s->batch_size &&
        sg_restart_step_ess(&r->watch, c->n_now, ess, M, &r->tr->stop))
      return 1;
    c->split = s->split_ess > 0.0 && c->cn > 1 && ess < s->split_ess * M;
    if (c->split) c->cv_chunk = 0, c->fixed = NULL;
  }
  return 0;
}

/* The log-likelihoods of the chunk's observations [from, to) at the particles, in r->loglik,
 * and the ESS of the importance step by them. */
static double block_ess(sgais_run *r, sgais_chunk *c, int from, int to) {
  const int M = r->M;
  chunk_log_lik(r->movers, sg_threads_for(r->threads, (double) M * (to - from)), r->theta, M,
                c->base + from, to - from, &r->target.ref, r->loglik);
  movers_count(r->movers, r->threads, &r->ws, &c->mh_tests, &c->mh_items, c->jump_counts);
  double ess;
  sg_annealing_step(r->loglik, r->s->a.conditional_ess ? r->logw : NULL, M, 1.0, 0.0, &ess,
                    r->work);
  return ess;
}

/* The next step of a split chunk (SIR, the sequential estimator; split_ess): where one
 * importance step over the whole chunk would leave too few particles that matter (data in an
 * order that moves the posterior far within a chunk), the chunk's observations are added in
 * blocks, each the longest (by bisection, at least one observation) whose step keeps the ESS
 * at split_ess * M, with resampling and moves between them: the thesis's SIR with data
 * tempering (Alg. 7), one observation a step where the posterior moves most. Leaves the
 * block's log-likelihoods in r->loglik and the observations in the target after it in
 * r->target.chunk_n. Returns -1 after a model failure, else 0. */
static int split_step(sgais_run *r, sgais_chunk *c) {
  const double floor = r->s->split_ess * r->M;
  int lo = c->taken + 1, hi = c->cn; /* the step to lo is taken whatever its ESS */
  int held = 0; /* the block end whose log-likelihoods r->loglik holds (0: none) */
  /* the chunk's first step: its whole rest is known to fall short (chunk_begin) */
  if (c->taken > 0 && block_ess(r, c, c->taken, held = hi) >= floor) lo = hi;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (block_ess(r, c, c->taken, held = mid) >= floor) lo = mid;
    else hi = mid;
  }
  if (held != lo) block_ess(r, c, c->taken, lo);
  if (check_chunk_loglik(r->loglik, r->M, c->n_done + c->taken + 1, c->n_done + lo, 1, r->st))
    return -1;
  c->taken = r->target.chunk_n = lo;
  return 0;
}

/* An annealing step's reweighting (Algorithm 1, lines 6-8): the next lambda by the ESS of the
 * incremental weights (or the fixed schedule's), the weights, and resampling when it is due.
 * Returns -1 after a failure, else 0. */
static int anneal_reweight(sgais_run *r, sgais_chunk *c, double *ess, int *resampled) {
  const sgais_settings *s = r->s;
  const int M = r->M, dim = r->dim;
  double *theta = r->theta;
  if (c->steps == SGAIS_MAX_ANNEALING_STEPS) {
    sg_fail(r->st, SG_ERR_ANNEALING, "annealing over observations %.0f to %.0f did not finish in %d steps; "
                 "try a smaller `target_ess` or `batch_size`.", c->n_done + 1, c->n_now, c->steps);
    return -1;
  }
  if (c->split && split_step(r, c)) return -1;
  /* a split chunk's steps take their blocks whole */
  double max_delta = c->split ? 1.0 : 1.0 - c->lambda;
  /* on a fixed schedule exactly its next step: a target ESS of 0 accepts max_delta */
  if (c->fixed) max_delta = c->fixed[c->steps] - c->lambda;
  if (r->pcp) {
    /* a particle the model's canonical form changed (a mixture's labels) has lost its score */
    const int check = r->score && r->m->canonicalize;
    if (check) memcpy(r->scratch.copy, theta, (size_t) M * dim * sizeof(double));
    sg_model_canonicalize(r->m, &r->ws, theta, M, r->logw, r->region);
    if (check)
      for (int i = 0; i < M; i++)
        if (memcmp(r->scratch.copy + (size_t) i * dim, theta + (size_t) i * dim,
                   dim * sizeof(double)))
          sgais_scores_unknown(r->score + (size_t) i * dim, 1, dim);
  }
  /* the score control variate once the chunk is small beside the earlier data */
  const int use_cv = c->cv_chunk && r->pcp && r->pcp->acc_n > 0.0;
  if (use_cv) {
    /* v = A g, A the preconditioner's running estimate of the particles' covariance (part
     * of the state) and g the chunk's log-likelihood gradient at their mean; then the
     * score of the current target (at lambda) at each particle */
    double *g = r->cv_dir + dim;
    sg_weighted_mean(theta, r->logw, M, dim, r->mean);
    memset(g, 0, dim * sizeof(double));
    sg_model_grad_log_lik(r->m, &r->ws, r->mean, NULL, c->base, c->cn, 1.0, g);
    sg_precond_cov_apply(r->pcp, g, r->cv_dir);
    r->target.lambda = c->lambda;
    movers_set(r->movers, r->threads, &r->target, &r->pot, r->movers[0].kernel.eta);
    particle_scores(r->movers,
                    sg_threads_for(r->threads, (double) M * (c->cn + 2.0 * s->batch_size)),
                    theta, M, r->rngs, r->score, r->cv_dir, r->cv);
    movers_count(r->movers, r->threads, &r->ws, &c->mh_tests, &c->mh_items, c->jump_counts);
    if (r->st->code) return -1;
  }
  double cv_r2;
  double delta = sg_anneal_reweight(theta, r->logw, r->loglik, M, dim, max_delta,
                                    c->fixed ? 0.0 : c->step_ess, s->a.resample_ess,
                                    s->a.conditional_ess, ess, resampled, r->pcp,
                                    use_cv ? r->cv : NULL, &cv_r2, &r->scratch);
  if (*resampled) sgais_scores_unknown(r->score, M, dim);
  if (s->update == SGAIS_UPDATE_AVERAGED) {
    /* eq. 4.3-4.4: the mean of the weights (the evidence so far) for every particle */
    const double mean = sg_log_sum_exp(r->logw, M) - log((double) M);
    for (int i = 0; i < M; i++) r->logw[i] = mean;
  }
  if (*ess < c->min_ess) c->min_ess = *ess;
  /* Var log Z-hat grows by about the chi-square divergence of the incremental weights / M */
  c->predicted_var += ((double) M / *ess - 1.0) / M * (1.0 - cv_r2);
  c->resamples += *resampled;
  if (c->fixed) c->lambda = c->fixed[c->steps];
  else if (c->split) c->lambda = c->taken == c->cn ? 1.0 : (double) c->taken / c->cn;
  else c->lambda = (delta >= max_delta) ? 1.0 : c->lambda + delta;
  /* a split chunk's record is that of one step (a pilot's schedule takes chunks whole) */
  if (!c->split || c->lambda == 1.0) lambdas_push(r->taken, c->lambda);
  c->steps++;
  return 0;
}

/* The rest of chunk c moves on the exact potential, Metropolis-adjusted and with the model's jump
 * proposals, as in the exact phase (chunk_begin): when mini-batch moves spread the particles
 * (the spread guard) and every earlier observation is held: after a restart the mini-batch
 * moves of the next chunk can spread the particles, and halving their step then freezes them
 * where the spread took them, far off (inst/design.md); exact moves give the evidence of a run
 * on those points in one chunk. A chunk whose
 * moves stay within the guard is untouched; this one costs O(n) likelihood terms per move. */
static int chunk_go_exact(sgais_run *r, sgais_chunk *c) {
  sgais_target *t = &r->target;
  if (t->exact || t->past != (int) t->n_prev) return 0;
  target_set_phase(r, c, 1);
  c->exact_moves = 1;
  return 1;
}

/* The spread guard's verdict on mini-batch moves (anneal.h): SG_GUARD_REDO (with half the
 * step), SG_GUARD_FAIL (described in r->st), or go on. */
static int spread_check(sgais_run *r, const sgais_chunk *c, sg_spread_guard *guard,
                        int *halvings) {
  double growth;
  char smaller[64];
  const int verdict = sg_spread_guard_check(guard, r->theta, r->logw, r->loglik, r->work,
                                            c->width, halvings, &growth, smaller);
  if (verdict == SG_GUARD_FAIL)
    sg_fail(r->st, SG_ERR_DIVERGED,
            "%s moves spread the particles %.3g times wider than their target while adding "
            "observations up to %.0f%s: the mini-batch moves cannot sample this posterior; "
            "try a smaller `step_size`, more `particles` or a larger `batch_size`.",
            sg_kernel_name(r->movers[0].kernel.kind), growth, c->n_now, smaller);
  return verdict;
}

/* An annealing step's moves (Algorithm 1, line 9): SGHMC (or the configured kernel) leaving the
 * target at the new lambda invariant; Metropolis-adjusted moves repeated while the particles
 * still correlate with where they began, mini-batch moves that spread the particles redone with
 * half the step (the spread guard, anneal.h). Returns -1 after a failure, else 0. */
static int anneal_move(sgais_run *r, sgais_chunk *c, double ess, int resampled) {
  const sgais_settings *s = r->s;
  const sg_move_settings *mv = r->mv;
  const int M = r->M, dim = r->dim;
  double *theta = r->theta;
  sg_precond *pcp = r->pcp;
  /* The reweighting may have moved the particles' mean far from the anchor (a shift in the
   * data): follow it. */
  if (r->target.anchor && refresh_anchor(r->m, r->anchor, &r->target, theta, r->logw, M, pcp,
                                         r->mean, r->work, &c->reanchors))
    return -1;
  /* a split chunk's target: its first `taken` observations in full */
  r->target.lambda = c->split ? 1.0 : c->lambda;
  r->pot.jump.n = c->n_done + (c->split ? c->taken : c->lambda * c->cn);
  /* the chunk's log-likelihoods, for the next step, follow the moves (a split chunk's next
   * step computes its block's) */
  double *follow = c->lambda < 1.0 && !c->split ? r->loglik : NULL;
  int k = sg_move_steps(mv, ess, c->target_ess, M);
  const double acc_target = sg_kernel_target_acceptance(&r->movers[0].kernel, &r->pot);
  const int metropolis = acc_target > 0.0 && k > 0;
  const int augment =
      metropolis ? sg_move_augment(mv, r->m, r->pot.jump.aux, r->target.past) : 0;
  if (metropolis) k = augment ? 1 : sg_move_distance_steps(mv, k, *r->step_size);
  /* Without a Metropolis test (mini-batch phase) the step is the adapted one but at most the
   * configured one: the exact phase may adapt it past that, and larger steps cost accuracy
   * without a Metropolis test; where it adapted it below (a mixture's particles spread over
   * label-switched modes make its metric too wide for one mode), the mini-batch moves need the
   * smaller step too. */
  double h = (!metropolis && *r->step_size > mv->step_size) ? mv->step_size : *r->step_size;
  if (r->flymc && k > 0) sg_flymc_bound_set(&r->bound, &r->pot, theta, r->logw, M);
  double eta = c->width ? h * h : sg_move_eta(mv, c->n_now);
  c->moves += k;
  const int check_spread = pcp && !metropolis && k > 0;
  sg_spread_guard guard;
  if (check_spread)
    sg_spread_guard_begin(&guard, pcp, theta, r->logw, r->loglik, M, dim, r->scratch.copy,
                          r->work);
  /* Metropolis-adjusted moves are repeated while the particles still correlate with where they
   * began (sg_moves_decorrelate), from the particles' streams where they left off; the start is
   * kept for that and for each particle's metric (sg_precond_leave_out). So are a mixture's
   * stratified mini-batch moves: one round left SIR behind a small cluster (inst/design.md). */
  const int decorrelate = sg_moves_decorrelate(mv, metropolis || r->target.strata, pcp != NULL,
                                                r->m, r->pot.jump.aux);
  const double *start = decorrelate ? r->scratch.copy : theta;
  if (decorrelate) memcpy(r->scratch.copy, theta, (size_t) M * dim * sizeof(double));
  const int jumps = augment ? 0 : sg_move_jumps(mv, r->m, r->pot.jump.aux);
  for (int i = 0; i < r->threads; i++) {
    r->movers[i].kernel.jumps = jumps;
    r->movers[i].kernel.gibbs = augment;
  }
  if (metropolis) memset(r->acc, 0, M * sizeof(double));
  int diverged = 0, halvings = 0, rounds = 0;
redo_moves:
  movers_set(r->movers, r->threads, &r->target, &r->pot, eta);
move_again:
  diverged = move_particles(r->movers, sg_threads_for(r->threads, (double) M * k * s->batch_size),
                            pcp, resampled ? r->scratch.ancestors : NULL, start, theta, M,
                            r->rngs, k, metropolis ? r->acc : NULL,
                            follow, r->flags, r->score);
  movers_count(r->movers, r->threads, &r->ws, &c->mh_tests, &c->mh_items, c->jump_counts);
  sg_interrupt_check();
  if (r->st->code) return -1; /* a model failed: its message, not the NaN it caused */
  rounds++;
  if (decorrelate && diverged < M &&
      sg_move_again(mv, rounds, sg_precond_jump_correlation(pcp, start, theta, r->logw, M,
                                                            r->corr_work))) {
    c->divergent += diverged;
    c->moves += k;
    goto move_again;
  }
  if (check_spread) {
    const int guard_says = spread_check(r, c, &guard, &halvings);
    if (guard_says == SG_GUARD_FAIL) return -1;
    /* the guard undid the moves: redo them exactly where possible, else with half the step */
    if (guard_says == SG_GUARD_REDO && chunk_go_exact(r, c))
      return anneal_move(r, c, ess, resampled);
    if (guard_says == SG_GUARD_REDO) {
      h *= 0.5;
      *r->step_size = h;
      eta = h * h;
      c->step_halvings++;
      c->moves += k;
      goto redo_moves;
    }
  }
  if (diverged == M) {
    fail_diverged(r->st, c->n_now);
    return -1;
  }
  c->divergent += diverged;
  if (metropolis) {
    for (int i = 0; i < M; i++) r->acc[i] /= (double) k * rounds;
    c->acc_sum += sg_move_adapt(mv, acc_target, r->step_size, r->acc, M);
    c->acc_steps++;
  }
  if (follow && check_chunk_loglik(r->loglik, M, c->n_done + 1, c->n_now, 1, r->st))
    return -1;
  return 0;
}

/* A chunk's end: the anchor's gradient sum and the reservoir take in the chunk, and the trace
 * records it as entry j. Returns -1 after a failure, else 0. */
static int chunk_finish(sgais_run *r, sgais_chunk *c, int j) {
  const sgais_settings *s = r->s;
  const int M = r->M, dim = r->dim;
  sgais_anchor *anchor = r->anchor;
  sgais_reservoir *res = r->res;
  /* keep G(a) the gradient sum over all observations absorbed so far */
  if (anchor->n_anchor > 0) {
    sg_model_grad_log_lik(r->m, &r->ws, anchor->theta, NULL, c->base, c->cn, 1.0, anchor->grad);
    anchor->n_grad = c->n_now;
  }
  /* With a bounded reservoir, G at the first anchor is exact only while the reservoir holds
   * every earlier observation; a G estimated from the reservoir alone would be off by about
   * n / sqrt(r) per-observation gradients and shift the target by sqrt(n / r) widths for
   * good. So the anchor is set here, over all n_now observations (the chunk's still in
   * the buffer), before the reservoir starts to sample. */
  if (res->cap && s->control_variates && anchor->n_anchor == 0 && c->n_now > res->cap) {
    sg_weighted_mean(r->theta, r->logw, M, dim, r->mean);
    anchor_exact(r->m, anchor, r->mean, res->slot, res->size, &r->ws);
    sg_model_grad_log_lik(r->m, &r->ws, anchor->theta, NULL, c->base, c->cn, 1.0, anchor->grad);
    if (check_anchor_grad(anchor, dim, c->n_now, r->st)) return -1;
    anchor->n_anchor = anchor->n_grad = c->n_now;
    c->reanchors++;
  }
  if (res->cap) reservoir_add(res, c->base, c->cn, c->n_done, &r->shared);

  sgais_trace *tr = r->tr;
  tr->n[j] = c->n_now;
  tr->log_evidence[j] = sg_log_sum_exp(r->logw, M) - log((double) M);
  tr->annealing_steps[j] = c->steps;
  tr->resamples[j] = c->resamples;
  tr->sghmc_steps[j] = c->moves;
  tr->min_ess[j] = c->min_ess;
  tr->divergent[j] = c->divergent;
  tr->reanchors[j] = c->reanchors;
  tr->step_halvings[j] = c->step_halvings;
  tr->exact_fallback[j] = c->exact_moves;
  tr->acceptance[j] = c->acc_steps ? c->acc_sum / c->acc_steps : NA_REAL;
  tr->step_size[j] = sqrt(r->movers[0].kernel.eta);
  tr->predicted_var[j] = c->predicted_var;
  tr->genealogy_var[j] = r->scratch.genealogy ? sg_genealogy_var(r->scratch.genealogy) : NA_REAL;
  tr->ess[j] = sg_ess(r->logw, M, 1.0, r->work);
  tr->gradient_evaluations[j] = r->ws.count.gradient;
  tr->likelihood_evaluations[j] = r->ws.count.likelihood;
  tr->data_fraction[j] =
      c->mh_tests > 0.0 ? c->mh_items / (c->mh_tests * r->target.past) : NA_REAL;
  tr->jump_acceptance[j] =
      c->jump_counts[0] > 0.0 ? c->jump_counts[1] / c->jump_counts[0] : NA_REAL;
  tr->seconds[j] = sg_now() - c->chunk_time;
  return 0;
}

int sgais_process(const sg_model *m, const sgais_settings *s, sgais_state *state, double n_end,
                  double time_budget, const sgais_schedule *schedule, sgais_trace *tr,
                  sg_status *st) {
  sgais_run r;
  run_init(&r, m, s, state, schedule, tr, st);
  double n_done = state->n;
  r.scratch.genealogy = state->genealogy;
  const double start_time = sg_now();
  int chunks = 0;
  while (n_done < n_end) {
    sgais_chunk c;
    const int begun = chunk_begin(&r, &c, n_done, n_end);
    if (begun < 0) return -1;
    if (begun > 0) break;
    while (c.lambda < 1.0) {
      double ess;
      int resampled;
      if (anneal_reweight(&r, &c, &ess, &resampled) || anneal_move(&r, &c, ess, resampled))
        return -1;
    }
    if (chunk_finish(&r, &c, chunks)) return -1;
    chunks++;
    n_done = c.n_now;
    if (sg_now() - start_time > time_budget) break;
  }
  state->n = n_done;
  return chunks;
}
