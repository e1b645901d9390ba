/* Nested sampling (Skilling 2006; thesis Alg. 5; the paper's reference method, Section 6.1 and
 * Appendix A.1).
 *
 * M live points from the prior. Iteration i removes the live point of lowest likelihood L*_i,
 * assigns it the prior volume log X_i = -i / M (shrinkage exp(-1/M)) and the weight
 * w_i = X_{i-1} - X_i, and accumulates log Z = log sum L*_i w_i by log-sum-exp together with the
 * information H by Skilling's update. The removed point is replaced by a copy of a random other
 * live point (itself when M = 1) moved by `sghmc_steps` SGHMC steps on the prior potential,
 * eta = learning_rate, reflecting off the contour log L = log L*_i (sg_sghmc_run with a
 * constraint; the exact full-data likelihood is evaluated after every step). The robust preset
 * instead moves the copy by a Metropolis random walk on the prior restricted to log L > L*,
 * with proposals in the metric of the live points' covariance and a scale adapted towards 50%
 * acceptance (constrained_walk()), and as many proposals as it takes to travel a fixed distance
 * (walk_length()). The run stops when
 * max(live log L) + log X_i < log(tolerance) + log Z; then every live point adds L_j X_i / M.
 *
 * nested_process() runs iterations until the stop, max_iterations or a time budget; the live
 * points, their log-likelihoods, the iteration, log Z, H and the run's key are the whole state,
 * and each iteration draws from its own stream keyed by (key, iteration) (rng.h), so the result
 * does not depend on how the run is split into calls. The likelihood passes over all the data
 * are split over threads by observation blocks (model.h), which does not change them either.
 *
 * Online nested sampling (thesis Section 4.3; R/online_nested_sampling.R) runs the same loop on
 * one chunk of the data at a time: the prior is the model's prior times the likelihood of the
 * `prior_n` earlier observations, pi_c(theta) = p(theta) prod_{k < prior_n} p(y_k | theta), and
 * the likelihood that of observations [prior_n, n_end). Plain nested sampling is the one chunk
 * prior_n = 0, n_end = n. The walk evaluates pi_c exactly (its cost per proposal grows with the
 * earlier data); the SGHMC move follows the mini-batch potential -log p(theta) - (prior_n / |B|)
 * sum_B log p(y | theta) (exact while prior_n <= |B|), at a cost that does not. Each chunk's
 * streams are keyed by the chunk's own key (ns_chunk_key()), the first chunk's being the run's, so
 * plain nested sampling draws what it always drew. With a reservoir (reservoir_offer()), every
 * removed point and the final live points are offered with their posterior weight L_i w_i, and
 * the M points kept are the next chunk's live points. */
#include "estimators.h"
#include <math.h>
#include <string.h>

/* The squared distance, per parameter and in live-point widths, a walk travels in all: a random
 * walk diffuses, so after S proposals it has moved about S * walk_jump in squared distance, and
 * a Metropolis random walk on a roughly Gaussian shape forgets its start (autocorrelation below
 * e^-3 per coordinate) once that is about 6 per coordinate. Twice that is asked for, because the
 * constrained prior is seldom Gaussian; on well-shaped regions it is what 8 proposals per
 * parameter at 50% acceptance travel, the former fixed default. */
#define NS_WALK_DISTANCE 12.0

typedef struct {
  const sg_model *m;
  sg_workspace *ws;
  ns_chunk chunk;
  int *batch;  /* batch_size indices */
  sg_rng *rng; /* the iteration's stream, for the mini-batches */
  /* Plain nested sampling with a reference q0 (setting `reference`; anneal.h): the prior
   * repartitioned (Chen, Hobson, Das and Gelderblom 2019, "Improving the efficiency and
   * robustness of nested sampling using posterior repartitioning"): the run's prior is q0 and
   * its likelihood L prior / q0, whose product, and so Z, is unchanged; with q0 near the
   * posterior the run has little prior volume to shrink through. work: dim of scratch. */
  sg_reference ref;
  double *work;
} ns_ctx;

/* log pi_c(theta): the prior times the earlier observations' likelihood, exactly (or log q0);
 * its gradient is added to grad when grad is not NULL. */
static double prior_log_density(void *ctx, const double *theta, double *grad) {
  const ns_ctx *c = ctx;
  if (c->ref.aux) return sg_path_log_base(c->m, c->ws, &c->ref, 0.0, theta, grad);
  double lp = c->m->log_prior(c->m, c->ws, theta, grad);
  if (c->chunk.prior_n > 0)
    lp += sg_model_log_lik(c->m, c->ws, theta, NULL, 0, c->chunk.prior_n, 1.0, grad);
  return lp;
}

/* The gradient of log pi_c for the SGHMC move: the earlier observations' part from a
 * mini-batch of batch_size drawn with replacement, scaled by prior_n / batch_size (exact while
 * prior_n <= batch_size). */
static void prior_grad(void *ctx, const double *theta, double *grad) {
  ns_ctx *c = ctx;
  const sg_model *m = c->m;
  const int n = c->chunk.prior_n, B = c->chunk.batch_size;
  memset(grad, 0, m->dim * sizeof(double));
  if (c->ref.aux) {
    sg_path_log_base(m, c->ws, &c->ref, 0.0, theta, grad);
    return;
  }
  m->log_prior(m, c->ws, theta, grad);
  if (n == 0) return;
  if (n <= B) {
    sg_model_grad_log_lik(m, c->ws, theta, NULL, 0, n, 1.0, grad);
    return;
  }
  for (int k = 0; k < B; k++) c->batch[k] = (int) sg_rng_index(c->rng, (uint32_t) n);
  sg_model_grad_log_lik(m, c->ws, theta, c->batch, 0, B, (double) n / B, grad);
}

/* The chunk's log-likelihood, over observations [prior_n, n_end). */
static double chunk_log_lik(void *ctx, const double *theta, double *grad) {
  ns_ctx *c = ctx;
  if (grad) memset(grad, 0, c->m->dim * sizeof(double));
  /* repartitioned (ns_ctx): times prior / q0 */
  return sg_path_log_lik(c->m, c->ws, &c->ref, theta, c->chunk.prior_n,
                         c->chunk.n_end - c->chunk.prior_n, grad, c->work);
}

/* The key of chunk `chunk`'s streams: the run's for the first chunk (plain nested sampling),
 * else a draw from the stream (key, chunk, SG_RNG_SHARED - 1), which no iteration uses. */
uint64_t ns_chunk_key(uint64_t key, int chunk) {
  if (chunk == 0) return key;
  sg_rng r;
  sg_rng_init(&r, key, (uint64_t) chunk, SG_RNG_SHARED - 1);
  return sg_rng_next(&r);
}

static void sort_desc(double *x, int *order, int n) {
  for (int i = 1; i < n; i++) { /* insertion sort: n is the reservoir's size */
    double v = x[i];
    int o = order[i], j = i - 1;
    while (j >= 0 && x[j] < v) {
      x[j + 1] = x[j];
      order[j + 1] = order[j];
      j--;
    }
    x[j + 1] = v;
    order[j + 1] = o;
  }
}

/* Offers the point theta (log-weight lw) to the reservoir r, drawing from rng (Chao 1982; see
 * ns_reservoir). The candidates for certainty are the certain items kept and the new one; the
 * new threshold tau' is the smallest c for which, with the c heaviest candidates certain, the
 * next is below tau_c = (ordinary weight + the others' weights) / (M - c). The new item is kept
 * with probability pi' = min(1, w / tau'), and then evicts a kept item i with probability
 * (1 - pi'_i / pi_i) / pi' (pi_i = 1 for the certain ones, w_i / tau for the others), so that
 * every item's inclusion probability becomes pi'_i: they sum to pi' because both sets of
 * probabilities sum to M. A point of zero weight only fills an empty slot. */
static void reservoir_offer(ns_reservoir *r, const double *theta, double lw, int dim, sg_rng *rng) {
  const int M = r->size;
  if (r->filled < M) {
    int k = r->filled++;
    memcpy(r->theta + (size_t) k * dim, theta, dim * sizeof(double));
    r->log_weight[k] = lw;
    r->certain[k] = 1;
    return;
  }
  if (!(lw > R_NegInf)) return;
  /* candidates: the certain kept items (their slots) and the new one (slot M) */
  double *cw = r->work, *tail = r->work + M + 1;
  int *order = r->order, K = 0, n_certain = 0;
  for (int i = 0; i < M; i++) {
    if (r->certain[i]) {
      cw[K] = r->log_weight[i];
      order[K++] = i;
      n_certain++;
    }
  }
  cw[K] = lw;
  order[K++] = M;
  sort_desc(cw, order, K);
  /* tail[c] = log of the weights of candidates c.. (sorted) */
  tail[K] = R_NegInf;
  for (int c = K - 1; c >= 0; c--) {
    double t[2] = {tail[c + 1], cw[c]};
    tail[c] = sg_log_sum_exp(t, 2);
  }
  const double old_tau = (n_certain < M) ? r->log_ordinary - log((double) (M - n_certain)) : R_NegInf;
  int c = 0;
  double tau = R_NegInf;
  for (;; c++) {
    if (M - c < 1) { /* cannot happen with a positive new weight; kept safe */
      c = M - 1;
      double t[2] = {r->log_ordinary, tail[c]};
      tau = sg_log_sum_exp(t, 2);
      break;
    }
    double t[2] = {r->log_ordinary, tail[c]};
    tau = sg_log_sum_exp(t, 2) - log((double) (M - c));
    if (c == K || cw[c] < tau) break;
  }
  /* candidates below tau' become ordinary: their weights join the ordinary weight */
  for (int j = 0; j < K; j++) {
    if (cw[j] < tau) {
      double t[2] = {r->log_ordinary, cw[j]};
      r->log_ordinary = sg_log_sum_exp(t, 2);
    }
  }
  const double p_new = (lw >= tau) ? 1.0 : exp(lw - tau);
  const double u = sg_rng_unif(rng), v = sg_rng_unif(rng);
  /* eviction probabilities (1 - pi'_i / pi_i) / p_new, into cw (no longer needed) */
  const double keep_ordinary = (old_tau == R_NegInf) ? 1.0 : exp(old_tau - tau); /* tau / tau' */
  for (int i = 0; i < M; i++) {
    const double w = r->log_weight[i];
    if (w == R_NegInf) cw[i] = 1.0;
    else if (r->certain[i]) cw[i] = (w >= tau) ? 0.0 : -expm1(w - tau);
    else cw[i] = 1.0 - keep_ordinary;
    r->certain[i] = r->certain[i] && w >= tau;
  }
  if (!(u < p_new)) return;
  double acc = 0.0;
  int out = -1, last = -1;
  for (int i = 0; i < M && out < 0; i++) {
    if (cw[i] > 0.0) last = i;
    acc += cw[i] / p_new;
    if (v < acc) out = i;
  }
  if (out < 0) out = last; /* rounding: the probabilities sum to 1 */
  if (out < 0) return;
  memcpy(r->theta + (size_t) out * dim, theta, dim * sizeof(double));
  r->log_weight[out] = lw;
  r->certain[out] = (lw >= tau);
}

/* A Metropolis random walk on the prior restricted to log L > lstar, from th (log-likelihood
 * *ll): `steps` proposals th + scale L xi, xi ~ N(0, I), each accepted when log u < log p(th') -
 * log p(th) and log L(th') > lstar. It leaves the constrained prior exactly invariant, which the
 * paper's reflected SGHMC move does not: with its step scaled to the live points it undoes a
 * step at the contour and reflects without moving, its stationary density thins near the
 * contour, and the new points lie too high. The cheaper test
 * comes first, so rejected proposals seldom cost the other: the prior's when it holds fewer
 * observations than the chunk (plain nested sampling: none), else the constraint's; u is drawn
 * before either, so the order does not change the walk. The prior p is the chunk's, pi_c (see
 * the top of the file). Returns the acceptances. */
static int constrained_walk(const ns_ctx *c, const sg_precond *pc, double *th, double *ll,
                            double lstar, int steps, double scale, double *prop, double *jump,
                            sg_rng *rng) {
  const int dim = c->m->dim;
  const int prior_first = c->chunk.prior_n <= c->chunk.n_end - c->chunk.prior_n;
  double lp = prior_log_density((void *) c, th, NULL);
  int accepted = 0;
  *jump = 0.0;
  for (int s = 0; s < steps && !sg_interrupt_poll(); s++) {
    double sq = 0.0; /* the proposal's squared length in live-point widths */
    for (int j = 0; j < dim; j++) {
      prop[j] = scale * sg_rng_norm(rng);
      sq += prop[j] * prop[j];
    }
    if (pc) sg_precond_factor_apply(pc, prop);
    for (int j = 0; j < dim; j++) prop[j] += th[j];
    const double log_u = log(sg_rng_unif(rng));
    double lp_new = R_NaN, ll_new = R_NaN;
    if (prior_first) {
      lp_new = prior_log_density((void *) c, prop, NULL);
      if (!(log_u < lp_new - lp)) continue;
      ll_new = chunk_log_lik((void *) c, prop, NULL);
      if (!(ll_new > lstar)) continue;
    } else {
      ll_new = chunk_log_lik((void *) c, prop, NULL);
      if (!(ll_new > lstar)) continue;
      lp_new = prior_log_density((void *) c, prop, NULL);
      if (!(log_u < lp_new - lp)) continue;
    }
    memcpy(th, prop, dim * sizeof(double));
    lp = lp_new;
    *ll = ll_new;
    accepted++;
    *jump += sq;
  }
  return accepted;
}

/* The rungs of a jump proposal (model.h): its guess at the modes is as wide as posteriors of
 * n_end, n_end / 4, ... down to prior_n + 1 observations, since in the course of a run the
 * constrained region shrinks from the (chunk's) prior's width to the posterior's. */
static int jump_rungs(const ns_chunk *chunk) {
  const double lo = chunk->prior_n + 1.0;
  int r = 1;
  while (r < SG_JUMP_MAX_RUNGS && chunk->n_end * pow(SG_JUMP_RUNG_RATIO, -r) >= lo) r++;
  return r;
}

/* Proposals for the next walk: enough to travel NS_WALK_DISTANCE per parameter at the mean
 * squared jump of the walks so far, within [min_steps, steps] (fixed when they are equal). Where
 * the constrained region is thin and curved (a likelihood far out in the prior's tail: the
 * region is a cap of the likelihood's ellipsoid) the scale adapted to 50% acceptance is small
 * and a fixed number of proposals leaves new points near their copies, which biases log Z low;
 * the walk then lengthens instead. The rule uses past walks only, so each walk still leaves the
 * constrained prior invariant. */
static int walk_length(const sg_move_settings *mv, const ns_state *st, int dim) {
  if (mv->min_steps >= mv->steps) return mv->steps;
  double want = NS_WALK_DISTANCE * dim / st->walk_jump;
  if (!(want < mv->steps)) return mv->steps; /* also when walk_jump is 0 */
  if (want <= mv->min_steps) return mv->min_steps;
  return (int) ceil(want);
}

/* Adds one point of log weight lw (prior mass) and log-likelihood ll to log Z and H. */
static void accumulate(ns_state *st, double lw, double ll) {
  double lc = lw + ll, old = st->log_z;
  double terms[2] = {old, lc};
  double z = sg_log_sum_exp(terms, 2);
  if (old == R_NegInf) st->information = exp(lc - z) * ll - z;
  else st->information = exp(lc - z) * ll + exp(old - z) * (st->information + old) - z;
  st->log_z = z;
}

static void record(ns_dead *d, int k, int dim, const double *theta, double iteration, double ll,
                   double log_volume, double lw, const ns_state *st, const sg_counter *count,
                   int reflections) {
  d->iteration[k] = iteration;
  d->log_likelihood[k] = ll;
  d->log_volume[k] = log_volume;
  d->log_weight[k] = lw + ll;
  d->log_evidence[k] = st->log_z;
  d->gradient_evaluations[k] = count->gradient;
  d->likelihood_evaluations[k] = count->likelihood;
  d->reflections[k] = reflections;
  d->moves[k] = 0.0;
  d->jumps_accepted[k] = 0.0;
  d->seconds[k] = 0.0;
  memcpy(d->theta + (size_t) k * dim, theta, dim * sizeof(double));
}

/* One call's run (nested_process): the state it updates (the caller's), its scratch, the kernel
 * and the constrained target. ctx, pot and con point into the struct, so it stays where
 * ns_run_init() built it. */
typedef struct {
  const sg_model *m;
  const ns_settings *s;
  const sg_move_settings *mv;
  const ns_chunk *chunk;
  int M, dim, rungs;
  double log_shrink;
  double *theta, *loglik;
  ns_state *st;
  uint64_t key;
  ns_dead *d;
  ns_reservoir *res;
  sg_workspace *ws;
  sg_status *fail;
  double *v, *grad, *kscratch, *prev, *pwork, *pw;
  sg_precond pc, own, *pcp, *ownp;
  sg_kernel kernel;
  sg_rng rng, shared; /* each iteration's streams, keyed by the iteration (rng.h) */
  ns_ctx ctx;
  sg_potential pot;
  sg_constraint con;
  double *jump_aux;
} ns_run;

/* One iteration: the point removed (worst), the live point its replacement copies (from), the
 * threshold and the prior volume, and what the move did. */
typedef struct {
  double i_now, lstar, log_x, lw, start;
  int worst, from, rejected, steps, jumped;
} ns_iteration;

static void ns_run_init(ns_run *r, const sg_model *m, const ns_settings *s, const ns_chunk *chunk,
                        double *theta, double *loglik, ns_state *st, uint64_t key, ns_dead *d,
                        ns_reservoir *res, sg_workspace *ws) {
  const int M = s->live_points, dim = m->dim;
  const sg_move_settings *mv = &s->move;
  *r = (ns_run){.m = m, .s = s, .mv = mv, .chunk = chunk, .M = M, .dim = dim,
                .log_shrink = log(-expm1(-1.0 / M)), /* log(1 - exp(-1/M)) */
                .theta = theta, .loglik = loglik, .st = st, .key = key, .d = d, .res = res,
                .ws = ws, .fail = ws->status};
  r->v = (double *) R_alloc(dim, sizeof(double));
  r->grad = (double *) R_alloc(dim, sizeof(double));
  r->kscratch = (double *) R_alloc(dim, sizeof(double));
  r->prev = (double *) R_alloc(dim, sizeof(double));
  sg_precond_alloc(&r->pc, mv->preconditioner, dim);
  r->pcp = (mv->preconditioner == SG_PRECOND_NONE) ? NULL : &r->pc;
  r->pwork = r->pcp ? (double *) R_alloc((size_t) M + (size_t) dim * (dim + 1), sizeof(double))
                    : NULL;
  /* the live points' metric for the new point, estimated without the point it copies (see
   * ns_replace); pw: the live points' log-weights, -Inf for the slot the copy fills */
  sg_precond_alloc(&r->own, mv->preconditioner, dim);
  r->ownp = r->pcp ? &r->own : NULL;
  r->pw = r->pcp ? (double *) R_alloc(M, sizeof(double)) : NULL;
  sg_kernel_init(&r->kernel, mv, r->ownp, dim, 0);
  /* the prior potential holds the earlier observations (none in plain nested sampling) */
  r->kernel.eta = sg_move_eta(mv, chunk->prior_n > 0 ? (double) chunk->prior_n : 1.0);
  r->kernel.alpha = mv->momentum_decay;
  r->kernel.rng = &r->rng;
  int *batch = (int *) R_alloc(chunk->batch_size > 0 ? chunk->batch_size : 1, sizeof(int));
  r->ctx = (ns_ctx){.m = m, .ws = ws, .chunk = *chunk, .batch = batch, .rng = &r->rng,
                    .work = (double *) R_alloc(dim, sizeof(double))};
  r->pot = (sg_potential){prior_grad, &r->ctx, NULL, NULL, {NULL, NULL, NULL, 0, 0, 0.0}};
  r->con = (sg_constraint){chunk_log_lik, &r->ctx, 0.0, 0.0, r->prev};
  /* jump proposals (sg_jump_chain()), built from the observations up to the chunk's end */
  r->rungs = jump_rungs(chunk);
  if (mv->jumps > 0 && m->jump_propose)
    r->jump_aux = (double *) sg_jump_set(m, chunk->n_end, NULL, 0, chunk->n_end, 0,
                                         (int *) R_alloc(SG_JUMP_POINTS, sizeof(int)),
                                         (double *) R_alloc(m->jump_aux, sizeof(double)));
  /* plain nested sampling may repartition its prior (ns_ctx), from the same summary */
  if (chunk->prior_n == 0)
    r->ctx.ref = sg_reference_for(m, s->reference, r->jump_aux, 0, chunk->n_end);
}

int ns_start(const sg_model *m, const ns_settings *s, const ns_chunk *chunk, double *theta,
             int at_start, uint64_t key, double *loglik, sg_workspace *ws) {
  ns_run r;
  ns_state st = {0};
  ns_run_init(&r, m, s, chunk, theta, loglik, &st, key, NULL, NULL, ws);
  for (int i = 0; i < s->live_points && !ws->status->code; i++) {
    double *th = theta + (size_t) i * m->dim;
    /* drawn from q0 instead, from a stream of its own */
    if (r.ctx.ref.aux && at_start) sg_reference_start_draw(m, &r.ctx.ref, key, i, th);
    loglik[i] = chunk_log_lik(&r.ctx, th, NULL);
    sg_interrupt_check(); /* many live points on much data take seconds */
  }
  return ws->status->code;
}

/* Removes the live point of lowest likelihood: accumulates its weight, records it as dead point
 * k (and offers it to the reservoir), and overwrites it with a copy of another live point,
 * drawn from the iteration's stream. */
static void ns_remove_worst(ns_run *r, ns_iteration *it, int k) {
  const int M = r->M, dim = r->dim;
  ns_state *st = r->st;
  it->worst = 0;
  for (int i = 1; i < M; i++)
    if (r->loglik[i] < r->loglik[it->worst]) it->worst = i;
  it->i_now = st->iteration + 1.0;
  it->lstar = r->loglik[it->worst];
  it->log_x = -it->i_now / M;
  it->lw = -(it->i_now - 1.0) / M + r->log_shrink;
  accumulate(st, it->lw, it->lstar);
  double *th = r->theta + (size_t) it->worst * dim;
  sg_rng_init(&r->rng, r->key, (uint64_t) it->i_now, 0);
  it->from = it->worst;
  if (M > 1) {
    it->from = (int) sg_rng_index(&r->rng, (uint32_t) (M - 1));
    if (it->from >= it->worst) it->from++;
  }
  /* record the dead point (and offer it to the reservoir) before overwriting it */
  record(r->d, k, dim, th, it->i_now, it->lstar, it->log_x, it->lw, st, &r->ws->count, 0);
  if (r->res) {
    sg_rng_init(&r->shared, r->key, (uint64_t) it->i_now, SG_RNG_SHARED);
    reservoir_offer(r->res, th, it->lw + it->lstar, dim, &r->shared);
  }
  memmove(th, r->theta + (size_t) it->from * dim, dim * sizeof(double));
}

/* Moves the copy under the constraint log L > L*: a random walk scaled to the live points
 * (robust preset) or SGHMC with reflections (the paper's), then the jump proposals. Returns -1
 * after a failure, else 0. */
static int ns_replace(ns_run *r, ns_iteration *it) {
  const sg_move_settings *mv = r->mv;
  const int M = r->M, dim = r->dim;
  ns_state *st = r->st;
  double *th = r->theta + (size_t) it->worst * dim;
  r->con.threshold = it->lstar;
  r->con.value = r->loglik[it->from];
  /* Robust preset: steps scaled to the live points' spread, as dynesty and ernest scale their
   * proposals; the live points fill the constrained region, so their covariance is its shape
   * (inst/design.md, "Nested sampling moves"). */
  if (r->pcp) {
    /* live points stay inside: likelihoods unchanged */
    sg_model_canonicalize(r->m, r->ws, r->theta, M, NULL, NULL);
    /* The metric must not depend on where the walk starts (precond.c, sg_precond_leave_out:
     * a start in the tail would stretch it outwards and the new points would lie too far in):
     * estimated from the other live points, neither the copy nor the point it copies. */
    for (int i = 0; i < M; i++) r->pw[i] = (i == it->worst) ? R_NegInf : 0.0;
    sg_precond_estimate(r->pcp, r->theta, r->pw, M, r->pwork);
    sg_precond_leave_out(r->pcp, it->from, r->theta + (size_t) it->from * dim, &r->own);
  }
  it->steps = mv->steps;
  if (r->s->move_kind == NS_MOVE_WALK) {
    double ll = r->loglik[it->from], jump;
    const int steps = walk_length(mv, st, dim);
    int acc = constrained_walk(&r->ctx, r->ownp, th, &ll, it->lstar, steps, st->walk_scale,
                               r->kscratch, &jump, &r->rng);
    it->rejected = steps - acc;
    it->steps = steps;
    if (steps > 0) {
      /* towards 50% acceptance, by at most a factor e^(1/2) per iteration */
      st->walk_scale *= exp((double) acc / steps - 0.5);
      /* mean squared jump per proposal over the last ~20 walks */
      st->walk_jump += 0.05 * (jump / steps - st->walk_jump);
    }
    r->con.value = ll;
  } else {
    it->rejected = sg_sghmc_run(&r->pot, &r->con, dim, th, r->v, r->grad, mv->steps, &r->kernel);
  }
  if (r->jump_aux && !r->fail->code && sg_all_finite(th, dim)) {
    sg_gaussian pop;
    /* on the constrained prior (kernel.h): the walk cannot leave a mode the contour has cut
     * off (a mixture's live points can follow the mode with one component over two clusters) */
    it->jumped = sg_jump_chain(r->m, r->ws, prior_log_density, &r->ctx, &r->con, r->jump_aux,
                               r->chunk->n_end, r->rungs, sg_precond_gaussian(r->ownp, &pop), th,
                               mv->jumps, r->kscratch, &r->rng, NULL);
  }
  if (r->fail->code) return -1; /* a model failed: its message, not what it caused */
  if (!sg_all_finite(th, dim)) {
    sg_fail(r->fail, SG_ERR_DIVERGED, "SGHMC diverged (non-finite parameters) at nested-sampling "
            "iteration %.0f; try a smaller `learning_rate`.", it->i_now);
    return -1;
  }
  r->loglik[it->worst] = r->con.value;
  return 0;
}

/* The dead point k's costs and moves, the new iteration count, and whether the run has
 * converged: the live points can add at most tolerance times Z-hat. */
static void ns_finish_iteration(ns_run *r, const ns_iteration *it, int k) {
  ns_dead *d = r->d;
  ns_state *st = r->st;
  d->gradient_evaluations[k] = r->ws->count.gradient;
  d->likelihood_evaluations[k] = r->ws->count.likelihood;
  d->reflections[k] = it->rejected;
  d->moves[k] = it->steps;
  d->jumps_accepted[k] = it->jumped;
  d->seconds[k] = sg_now() - it->start;
  st->iteration = it->i_now;
  double lmax = r->loglik[0];
  for (int i = 1; i < r->M; i++)
    if (r->loglik[i] > lmax) lmax = r->loglik[i];
  if (lmax + it->log_x < log(r->s->tolerance) + st->log_z) st->status = NS_CONVERGED;
}

/* The live points' final contribution once the run has stopped: each holds X_final / M of the
 * prior volume. Records them from dead point k on; returns the points recorded in all. */
static int ns_add_live_points(ns_run *r, int k) {
  const int M = r->M, dim = r->dim;
  ns_state *st = r->st;
  const double log_x = -st->iteration / M, lw = log_x - log((double) M);
  r->ws->count.likelihood = r->ws->count.gradient = 0.0;
  if (r->res) sg_rng_init(&r->shared, r->key, (uint64_t) st->iteration + 1, SG_RNG_SHARED);
  for (int i = 0; i < M; i++) {
    const double *th = r->theta + (size_t) i * dim;
    accumulate(st, lw, r->loglik[i]);
    record(r->d, k++, dim, th, NA_REAL, r->loglik[i], log_x, lw, st, &r->ws->count, 0);
    if (r->res) reservoir_offer(r->res, th, lw + r->loglik[i], dim, &r->shared);
  }
  return k;
}

/* Runs iterations (see estimators.h). */
int nested_process(const sg_model *m, const ns_settings *s, const ns_chunk *chunk,
                   double *theta, double *loglik, ns_state *st, double time_budget,
                   uint64_t key, ns_dead *d, ns_reservoir *res, sg_workspace *ws_own) {
  ns_run r;
  ns_run_init(&r, m, s, chunk, theta, loglik, st, key, d, res, ws_own);
  const double start_time = sg_now();
  int k = 0;
  while (st->status == NS_RUNNING && k < NS_SLICE_ITERATIONS) {
    if (st->iteration >= s->max_iterations) {
      st->status = NS_MAX_ITERATIONS;
      break;
    }
    ws_own->count.likelihood = ws_own->count.gradient = 0.0;
    ns_iteration it = {.start = sg_now()};
    ns_remove_worst(&r, &it, k);
    if (ns_replace(&r, &it)) return -1;
    ns_finish_iteration(&r, &it, k);
    k++;
    sg_interrupt_check();
    if (sg_now() - start_time > time_budget) break;
  }
  if (st->status != NS_RUNNING) k = ns_add_live_points(&r, k);
  return k;
}
