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
 * are split over threads by observation blocks (model.h), which does not change them either. */
#include "ffi.h"
#include <math.h>
#include <string.h>

#define NS_SLICE_ITERATIONS 10000

enum { NS_RUNNING = 0, NS_CONVERGED = 1, NS_MAX_ITERATIONS = 2 };

enum { NS_MOVE_SGHMC = 0, NS_MOVE_WALK = 1 };

typedef struct {
  int live_points, move_kind;
  double tolerance, max_iterations;
  sg_move_settings move;
} ns_settings;

/* walk_scale: the random walk's proposal scale in live-point widths; walk_jump: the mean squared
 * distance (in live-point widths, summed over coordinates) moved per proposal. Both are adapted
 * between iterations and part of the state, so slicing a run does not change them. */
typedef struct {
  double iteration, log_z, information, walk_scale, walk_jump;
  int status;
} ns_state;

/* The squared distance, per parameter and in live-point widths, a walk travels in all: a random
 * walk diffuses, so after S proposals it has moved about S * walk_jump in squared distance, and
 * a Metropolis random walk on a roughly Gaussian shape forgets its start (autocorrelation below
 * e^-3 per coordinate) once that is about 6 per coordinate. Twice that is asked for, because the
 * constrained prior is seldom Gaussian; on well-shaped regions it is what 8 proposals per
 * parameter at 50% acceptance travel, the former fixed default. */
#define NS_WALK_DISTANCE 12.0

/* Per removed point: iteration, its log-likelihood, log volume, log weight (log w_i + log L),
 * log Z after it, cost, reflections, the moves (steps or proposals) made for its replacement,
 * the seconds the iteration took; and its parameters (dim per point). */
typedef struct {
  double *iteration, *log_likelihood, *log_volume, *log_weight, *log_evidence;
  double *gradient_evaluations, *likelihood_evaluations, *reflections, *moves, *seconds, *theta;
} ns_dead;

typedef struct {
  const sg_model *m;
  sg_workspace *ws;
} ns_ctx;

static void prior_grad(void *ctx, const double *theta, double *grad) {
  const sg_model *m = ((ns_ctx *) ctx)->m;
  memset(grad, 0, m->dim * sizeof(double));
  m->log_prior(m, ((ns_ctx *) ctx)->ws, theta, grad);
}

static double full_log_lik(void *ctx, const double *theta, double *grad) {
  ns_ctx *c = ctx;
  if (grad) memset(grad, 0, c->m->dim * sizeof(double));
  return sg_model_log_lik(c->m, c->ws, theta, NULL, 0, c->m->n_obs, 1.0, grad);
}

/* A Metropolis random walk on the prior restricted to log L > lstar, from th (log-likelihood
 * *ll): `steps` proposals th + scale L xi, xi ~ N(0, I), each accepted when log u < log p(th') -
 * log p(th) and log L(th') > lstar. It leaves the constrained prior exactly invariant, which the
 * paper's reflected SGHMC move does not: with its step scaled to the live points it undoes a
 * step at the contour and reflects without moving, its stationary density thins near the
 * contour, and the new points lie too high (measured +11 nats at N = 2,000). The prior test comes
 * first, so rejected proposals seldom cost a likelihood evaluation. Returns the acceptances. */
static int constrained_walk(const sg_model *m, const sg_precond *pc, double *th, double *ll,
                            double lstar, int steps, double scale, double *prop, double *jump,
                            sg_workspace *ws, sg_rng *rng) {
  const int dim = m->dim;
  double lp = m->log_prior(m, ws, th, NULL);
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
    double lp_new = m->log_prior(m, ws, prop, NULL);
    if (!(log(sg_rng_unif(rng)) < lp_new - lp)) continue;
    double ll_new = sg_model_log_lik(m, ws, prop, NULL, 0, m->n_obs, 1.0, NULL);
    if (!(ll_new > lstar)) continue;
    memcpy(th, prop, dim * sizeof(double));
    lp = lp_new;
    *ll = ll_new;
    accepted++;
    *jump += sq;
  }
  return accepted;
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
  d->seconds[k] = 0.0;
  memcpy(d->theta + (size_t) k * dim, theta, dim * sizeof(double));
}

/* Runs iterations; returns the number of points recorded in d (removed points, then the final
 * live points once the run stops), or -1 after a failure described in ws_own->status. theta
 * holds the live points (M rows of dim). */
static int nested_process(const sg_model *m, const ns_settings *s, double *theta, double *loglik,
                          ns_state *st, double time_budget, uint64_t key, ns_dead *d,
                          sg_workspace *ws_own) {
  sg_status *fail = ws_own->status;
  const int M = s->live_points, dim = m->dim;
  const double log_shrink = log(-expm1(-1.0 / M)); /* log(1 - exp(-1/M)) */
  double *v = (double *) R_alloc(dim, sizeof(double));
  double *grad = (double *) R_alloc(dim, sizeof(double));
  double *kscratch = (double *) R_alloc(dim, sizeof(double));
  double *prev = (double *) R_alloc(dim, sizeof(double));
  const sg_move_settings *mv = &s->move;
  sg_precond pc;
  sg_precond_alloc(&pc, mv->preconditioner, dim);
  sg_precond *pcp = (mv->preconditioner == SG_PRECOND_NONE) ? NULL : &pc;
  double *pwork = pcp ? (double *) R_alloc((size_t) M + (size_t) dim * (dim + 1), sizeof(double)) : NULL;
  /* the live points' metric for the new point, estimated without the point it copies (see
   * below); pw: the live points' log-weights, -Inf for the slot the copy fills */
  sg_precond own;
  sg_precond_alloc(&own, mv->preconditioner, dim);
  sg_precond *ownp = pcp ? &own : NULL;
  double *pw = pcp ? (double *) R_alloc(M, sizeof(double)) : NULL;
  sg_kernel kernel;
  sg_kernel_init(&kernel, mv, ownp, dim, 0);
  kernel.eta = sg_move_eta(mv, 1.0); /* the prior potential does not grow with n */
  kernel.alpha = mv->momentum_decay;
  sg_rng rng; /* each iteration's stream, keyed by the iteration (rng.h) */
  kernel.rng = &rng;
  sg_workspace *ws = ws_own;
  ns_ctx ctx = {m, ws};
  sg_potential pot = {prior_grad, &ctx, NULL};
  sg_constraint con = {full_log_lik, &ctx, 0.0, 0.0, prev};
  const double start_time = sg_now();
  int k = 0;

  while (st->status == NS_RUNNING && k < NS_SLICE_ITERATIONS) {
    if (st->iteration >= s->max_iterations) {
      st->status = NS_MAX_ITERATIONS;
      break;
    }
    ws->count.likelihood = ws->count.gradient = 0.0;
    const double iteration_start = sg_now();
    int worst = 0;
    for (int i = 1; i < M; i++)
      if (loglik[i] < loglik[worst]) worst = i;
    const double i_now = st->iteration + 1.0, lstar = loglik[worst];
    const double log_x = -i_now / M, lw = -(i_now - 1.0) / M + log_shrink;
    accumulate(st, lw, lstar);
    double *th = theta + (size_t) worst * dim;
    sg_rng_init(&rng, key, (uint64_t) i_now, 0);

    /* Replace by a copy of another live point moved under the constraint log L > L*. */
    int from = worst;
    if (M > 1) {
      from = (int) sg_rng_index(&rng, (uint32_t) (M - 1));
      if (from >= worst) from++;
    }
    const double *src = theta + (size_t) from * dim;
    /* record the dead point before overwriting it */
    record(d, k, dim, th, i_now, lstar, log_x, lw, st, &ws->count, 0);
    memmove(th, src, dim * sizeof(double));
    con.threshold = lstar;
    con.value = loglik[from];
    /* Robust preset: steps scaled to the live points' spread, as dynesty and ernest scale their
     * proposals; the live points fill the constrained region, so their covariance is its shape
     * (ALGORITHM-NOTES, "Nested sampling's step near the contour"). */
    if (pcp) {
      sg_model_canonicalize(m, ws, theta, M); /* live points stay inside: likelihoods unchanged */
      /* The metric must not depend on where the walk starts (precond.c, sg_precond_leave_out:
       * a start in the tail would stretch it outwards and the new points would lie too far in):
       * estimated from the other live points, neither the copy nor the point it copies. */
      for (int i = 0; i < M; i++) pw[i] = (i == worst) ? R_NegInf : 0.0;
      sg_precond_estimate(pcp, theta, pw, M, pwork);
      sg_precond_leave_out(pcp, from, src, &own);
    }
    int refl, walk_steps = mv->steps;
    if (s->move_kind == NS_MOVE_WALK) {
      double ll = loglik[from], jump;
      const int steps = walk_length(mv, st, dim);
      int acc = constrained_walk(m, ownp, th, &ll, lstar, steps, st->walk_scale, kscratch, &jump,
                                 ws, &rng);
      refl = steps - acc;
      walk_steps = steps;
      if (steps > 0) {
        /* towards 50% acceptance, by at most a factor e^(1/2) per iteration */
        st->walk_scale *= exp((double) acc / steps - 0.5);
        /* mean squared jump per proposal over the last ~20 walks */
        st->walk_jump += 0.05 * (jump / steps - st->walk_jump);
      }
      con.value = ll;
    } else {
      refl = sg_sghmc_run(&pot, &con, dim, th, v, grad, mv->steps, &kernel);
    }
    if (fail->code) return -1; /* a model failed: its message, not what it caused */
    if (!sg_all_finite(th, dim)) {
      sg_fail(fail, SG_ERR_DIVERGED, "SGHMC diverged (non-finite parameters) at nested-sampling iteration %.0f; "
              "try a smaller `learning_rate`.", i_now);
      return -1;
    }
    loglik[worst] = con.value;
    d->gradient_evaluations[k] = ws->count.gradient;
    d->likelihood_evaluations[k] = ws->count.likelihood;
    d->reflections[k] = refl;
    d->moves[k] = walk_steps;
    d->seconds[k] = sg_now() - iteration_start;
    k++;
    st->iteration = i_now;

    double lmax = loglik[0];
    for (int i = 1; i < M; i++)
      if (loglik[i] > lmax) lmax = loglik[i];
    if (lmax + log_x < log(s->tolerance) + st->log_z) st->status = NS_CONVERGED;
    sg_interrupt_check();
    if (sg_now() - start_time > time_budget) break;
  }

  if (st->status != NS_RUNNING) {
    /* The live points' final contribution: each holds X_final / M of the prior volume. */
    const double log_x = -st->iteration / M, lw = log_x - log((double) M);
    ws->count.likelihood = ws->count.gradient = 0.0;
    for (int i = 0; i < M; i++) {
      accumulate(st, lw, loglik[i]);
      record(d, k++, dim, theta + (size_t) i * dim, NA_REAL, loglik[i], log_x, lw, st, &ws->count, 0);
    }
  }
  return k;
}

static ns_settings settings_from_r(SEXP x) {
  ns_settings s;
  s.live_points = sg_scalar_int(sg_list_get(x, "live_points"), "live_points", 1);
  s.move = sg_move_settings_from_r(x);
  s.move_kind = sg_scalar_int(sg_list_get(x, "move"), "move", 0);
  if (s.move_kind > NS_MOVE_WALK) sg_input_error("`move` is not a known move.");
  s.tolerance = sg_scalar_double(sg_list_get(x, "tolerance"), "tolerance");
  s.max_iterations = sg_scalar_double(sg_list_get(x, "max_iterations"), "max_iterations");
  if (!(s.tolerance > 0.0) || !R_FINITE(s.tolerance))
    sg_input_error("`tolerance` must be positive and finite.");
  if (!(s.max_iterations >= 1.0)) sg_input_error("`max_iterations` must be >= 1.");
  return s;
}

/* .Call entry: continue a run from `state`, a list with theta (dim x M live points), loglik
 * (their log-likelihoods, or empty at the start: then computed and counted), iteration, log_z,
 * information. Returns the new state (with status 0 running, 1 converged, 2 stopped at
 * max_iterations) and the points removed in this call (dead points, the final live points
 * appended once the run has stopped). */
SEXP ffi_nested_sampling_run(SEXP model, SEXP state, SEXP settings, SEXP time_budget) {
  sg_model m;
  sg_model_from_r(model, &m);
  ns_settings s = settings_from_r(settings);
  const int M = s.live_points, dim = m.dim;
  double budget = sg_scalar_double(time_budget, "time_budget");
  const uint64_t key = sg_rng_key_from_state(sg_list_get(state, "key"), "state$key");
  SEXP theta = sg_list_get(state, "theta"), loglik = sg_list_get(state, "loglik");
  if (TYPEOF(theta) != REALSXP || !Rf_isMatrix(theta) || Rf_nrows(theta) != dim || Rf_ncols(theta) != M)
    sg_input_error("`theta` must be a %d x %d numeric matrix.", dim, M);
  if (TYPEOF(loglik) != REALSXP || (Rf_length(loglik) != M && Rf_length(loglik) != 0))
    sg_input_error("`loglik` must be a numeric vector of length 0 or %d.", M);
  ns_state st;
  st.iteration = sg_scalar_double(sg_list_get(state, "iteration"), "iteration");
  st.log_z = Rf_asReal(sg_list_get(state, "log_z"));
  st.information = sg_scalar_double(sg_list_get(state, "information"), "information");
  st.walk_scale = sg_scalar_double(sg_list_get(state, "walk_scale"), "walk_scale");
  if (!(st.walk_scale > 0.0) || !R_FINITE(st.walk_scale)) st.walk_scale = 2.38 / sqrt((double) dim);
  st.walk_jump = sg_scalar_double(sg_list_get(state, "walk_jump"), "walk_jump");
  if (!(st.walk_jump > 0.0) || !R_FINITE(st.walk_jump))
    st.walk_jump = 0.5 * st.walk_scale * st.walk_scale * dim; /* half the proposals accepted */
  st.status = NS_RUNNING;

  const int cap = NS_SLICE_ITERATIONS + M;
  int nprot = 0;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 20)); nprot++;
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 20)); nprot++;
  SEXP theta_out = sg_new_column(out, names, 0, "theta", REALSXP, Rf_length(theta));
  SEXP loglik_out = sg_new_column(out, names, 1, "loglik", REALSXP, M);
  SEXP iteration_out = sg_new_column(out, names, 2, "iteration_end", REALSXP, 1);
  SEXP log_z_out = sg_new_column(out, names, 3, "log_z", REALSXP, 1);
  SEXP information_out = sg_new_column(out, names, 4, "information", REALSXP, 1);
  SEXP status_out = sg_new_column(out, names, 5, "status", INTSXP, 1);
  ns_dead d;
  d.iteration = REAL(sg_new_column(out, names, 6, "iteration", REALSXP, cap));
  d.log_likelihood = REAL(sg_new_column(out, names, 7, "log_likelihood", REALSXP, cap));
  d.log_volume = REAL(sg_new_column(out, names, 8, "log_volume", REALSXP, cap));
  d.log_weight = REAL(sg_new_column(out, names, 9, "log_weight", REALSXP, cap));
  d.log_evidence = REAL(sg_new_column(out, names, 10, "log_evidence", REALSXP, cap));
  d.gradient_evaluations = REAL(sg_new_column(out, names, 11, "gradient_evaluations", REALSXP, cap));
  d.likelihood_evaluations = REAL(sg_new_column(out, names, 12, "likelihood_evaluations", REALSXP, cap));
  d.reflections = REAL(sg_new_column(out, names, 13, "reflections", REALSXP, cap));
  SEXP dead_theta = sg_new_column(out, names, 14, "dead_theta", REALSXP, 0);
  SEXP seconds_out = sg_new_column(out, names, 15, "seconds", REALSXP, 1);
  SEXP scale_out = sg_new_column(out, names, 16, "walk_scale", REALSXP, 1);
  SEXP jump_out = sg_new_column(out, names, 17, "walk_jump", REALSXP, 1);
  d.moves = REAL(sg_new_column(out, names, 18, "moves", REALSXP, cap));
  d.seconds = REAL(sg_new_column(out, names, 19, "iteration_seconds", REALSXP, cap));
  Rf_setAttrib(out, R_NamesSymbol, names);
  d.theta = (double *) R_alloc((size_t) cap * dim, sizeof(double));
  memcpy(REAL(theta_out), REAL(theta), Rf_length(theta) * sizeof(double));
  Rf_setAttrib(theta_out, R_DimSymbol, Rf_getAttrib(theta, R_DimSymbol));

  const double start = sg_now();
  double *th = REAL(theta_out), *ll = REAL(loglik_out), initial = 0.0;
  sg_status fail = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &fail);
  sg_workspace_threads(&ws, &m, sg_threads());
  if (Rf_length(loglik) == M) {
    memcpy(ll, REAL(loglik), M * sizeof(double));
  } else {
    for (int i = 0; i < M; i++) {
      ll[i] = sg_model_log_lik(&m, &ws, th + (size_t) i * dim, NULL, 0, m.n_obs, 1.0, NULL);
      if (ISNAN(ll[i]) || ll[i] == R_PosInf) {
        sg_fail(&fail, SG_ERR_LIKELIHOOD, "the log-likelihood of a live point is not finite-valued (NaN or +Inf).");
        sg_raise(&fail);
      }
    }
    initial = ws.count.likelihood;
  }

  int k = nested_process(&m, &s, th, ll, &st, budget, key, &d, &ws);
  if (k < 0) sg_raise(&fail);
  if (k > 0) d.likelihood_evaluations[0] += initial;

  REAL(iteration_out)[0] = st.iteration;
  REAL(log_z_out)[0] = st.log_z;
  REAL(information_out)[0] = st.information;
  INTEGER(status_out)[0] = st.status;
  REAL(scale_out)[0] = st.walk_scale;
  REAL(jump_out)[0] = st.walk_jump;
  dead_theta = Rf_allocMatrix(REALSXP, dim, k);
  SET_VECTOR_ELT(out, 14, dead_theta);
  memcpy(REAL(dead_theta), d.theta, (size_t) k * dim * sizeof(double));
  for (int i = 6; i < 14; i++) SET_VECTOR_ELT(out, i, Rf_lengthgets(VECTOR_ELT(out, i), k));
  for (int i = 18; i < 20; i++) SET_VECTOR_ELT(out, i, Rf_lengthgets(VECTOR_ELT(out, i), k));
  REAL(seconds_out)[0] = sg_now() - start;
  UNPROTECT(nprot);
  return out;
}
