/* Glue: the entry point of sgais.c; unpacks the R objects, runs the core and builds the
 * result. */
#include "ffi.h"
#include <math.h>
#include <string.h>


static sgais_settings settings_from_r(SEXP x) {
  sgais_settings s;
  s.a = sg_anneal_settings_from_r(x);
  sg_settings_read(x, sg_sgais_table, sg_sgais_table_rows, &s);
  if (s.early_particles < s.a.particles)
    sg_input_error("`early_particles` must be at least `particles`.");
  /* Inf: unbounded */
  s.reservoir_size = 0;
  if (R_FINITE(s.reservoir)) {
    if (s.reservoir != floor(s.reservoir) || s.reservoir > INT_MAX)
      sg_input_error("`reservoir_size` must be a whole number or Inf.");
    s.reservoir_size = (int) s.reservoir;
    if (s.reservoir_size < s.exact_until)
      sg_input_error("`reservoir_size` must be at least `exact_until`.");
  }
  return s;
}

/* The run-state fields ffi_sgais_run() reads, in one table: R's names (run_state_fields in
 * R/sgais_state.R; test-sgais_state.R compares them), the names its messages give, and what
 * each must hold. */
enum { ST_N, ST_BUFFER_START, ST_SLOTS, ST_THETA, ST_LOGW, ST_KEY, ST_ANCHOR_N, ST_ANCHOR,
       ST_ANCHOR_GRAD, ST_STEP_SIZE, ST_PRECOND_N, ST_PRECOND_COV, ST_PRECOND_ESS, ST_SCORE,
       ST_GENEALOGY, N_STATE };
#define FIELD(name) {#name, "state$" #name}
static const struct { const char *name, *what; } state_fields[N_STATE] = {
    FIELD(n),            /* a count: the observations absorbed */
    FIELD(buffer_start), /* a count: the model's data hold observation k + 1 at column k - it */
    FIELD(slots),        /* integers, min(n, reservoir_size): the columns a bounded reservoir
                          * keeps of the earlier observations (0-based) */
    FIELD(theta),        /* a dim x M matrix: the particles */
    FIELD(logw),         /* M numbers: their log-weights */
    FIELD(key),          /* the key of the run's random streams (rng.h) */
    FIELD(anchor_n),     /* a count: the control-variate anchor's observations, 0 before one */
    FIELD(anchor),       /* dim numbers (none before there is an anchor): its point */
    FIELD(anchor_grad),  /* dim numbers (none before): its gradient */
    FIELD(step_size),    /* a number: the adapted step in target widths, 0 at the start */
    FIELD(precond_n),    /* a number: the weight of the preconditioner's running covariance */
    FIELD(precond_cov),  /* that covariance, dim x dim (dense) or dim numbers, if precond_n > 0 */
    FIELD(precond_ess),  /* a number: its ESS */
    FIELD(score),        /* dim x M numbers or none: the particles' scores (score_from_r) */
    FIELD(genealogy)};   /* absent or NULL at a run's start, else sg_genealogy_from_r's */
#undef FIELD

static SEXP state_get(SEXP state, int f) { return sg_list_get(state, state_fields[f].name); }
static double state_count(SEXP state, int f) {
  return sg_scalar_count(state_get(state, f), state_fields[f].what);
}
static double state_double(SEXP state, int f) {
  return sg_scalar_double(state_get(state, f), state_fields[f].what);
}
static SEXP state_vector(SEXP state, int f, int len) {
  SEXP x = state_get(state, f);
  if (TYPEOF(x) != REALSXP || Rf_length(x) != len)
    sg_input_error("`%s` must be a numeric vector of length %d.", state_fields[f].what, len);
  return x;
}

/* A schedule from R: a list of n (chunk ends), steps and lambda, each chunk's lambdas
 * increasing in (0, 1] and ending at 1; checked here, as everything the core trusts. */
static sgais_schedule schedule_from_r(SEXP x) {
  sgais_schedule sc = {NULL, NULL, NULL, 0};
  SEXP n = sg_list_get(x, "n"), steps = sg_list_get(x, "steps"), lambda = sg_list_get(x, "lambda");
  if (TYPEOF(n) != REALSXP || TYPEOF(steps) != INTSXP || TYPEOF(lambda) != REALSXP ||
      Rf_length(n) != Rf_length(steps))
    sg_input_error("`schedule` must hold chunk ends `n`, integer `steps` and `lambda`.");
  sc.chunks = Rf_length(n);
  sc.n = REAL(n);
  sc.steps = INTEGER(steps);
  sc.lambda = REAL(lambda);
  sg_index offset = 0;
  for (int j = 0; j < sc.chunks; j++) {
    if (sc.steps[j] == NA_INTEGER || sc.steps[j] < 0 || offset + sc.steps[j] > Rf_xlength(lambda))
      sg_input_error("`schedule$steps` must count the lambdas of each chunk.");
    for (int k = 0; k < sc.steps[j]; k++) {
      const double l = sc.lambda[offset + k], prev = k > 0 ? sc.lambda[offset + k - 1] : 0.0;
      if (!(l > prev && l <= 1.0) || (k == sc.steps[j] - 1 && l != 1.0))
        sg_input_error("`schedule$lambda` must increase within (0, 1] to 1 in each chunk.");
    }
    offset += sc.steps[j];
  }
  if (offset != Rf_xlength(lambda))
    sg_input_error("`schedule$steps` must count the lambdas of each chunk.");
  return sc;
}

/* The trace: one entry per chunk (sgais_trace), in the order of the fit's trajectory. */
#define COL(name, type) {#name, type, offsetof(sgais_trace, name)}
static const sg_column trace_columns[] = {
    COL(n, REALSXP), COL(log_evidence, REALSXP), COL(annealing_steps, INTSXP),
    COL(resamples, INTSXP), COL(sghmc_steps, INTSXP), COL(divergent, INTSXP),
    COL(reanchors, INTSXP), COL(min_ess, REALSXP), COL(ess, REALSXP),
    COL(predicted_var, REALSXP), COL(acceptance, REALSXP), COL(step_size, REALSXP),
    COL(seconds, REALSXP), COL(gradient_evaluations, REALSXP),
    COL(likelihood_evaluations, REALSXP), COL(data_fraction, REALSXP),
    COL(step_halvings, INTSXP), COL(jump_acceptance, REALSXP), COL(exact_fallback, INTSXP),
    COL(genealogy_var, REALSXP)};
#undef COL

/* .Call entry: continue a run from `state` (a list, state_fields), adding observations up to
 * n_end, with the chunks in `schedule` (schedule_from_r) on its steps. Returns the new state's
 * fields, every annealing step's lambda and one trace entry per chunk processed. */
/* The result list: the state after the call, then the trace of its chunks (trace_columns). */
enum { THETA, LOGW, ANCHOR, ANCHOR_GRAD, ANCHOR_N, STEP_SIZE_END, PRECOND_COV, PRECOND_N,
       PRECOND_ESS, SLOTS, SCORE, LAMBDAS, GENEALOGY, TRACE, N_OUT };
static const char *out_names[N_OUT] = {
    "theta", "logw", "anchor", "anchor_grad", "anchor_n", "step_size_end", "precond_cov",
    "precond_n", "precond_ess", "slots", "score", "lambdas", "genealogy", "trace"};

/* .Call entry: the names of the state fields read (state_fields) and of the result's (out_names),
 * for test-sgais_state.R to check against R's run_state_fields. */
SEXP ffi_sgais_state_fields(void) {
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2)), names = PROTECT(Rf_allocVector(STRSXP, 2));
  SEXP read = sg_new_column(out, names, 0, "read", STRSXP, N_STATE);
  SEXP written = sg_new_column(out, names, 1, "written", STRSXP, N_OUT);
  for (int f = 0; f < N_STATE; f++) SET_STRING_ELT(read, f, Rf_mkChar(state_fields[f].name));
  for (int i = 0; i < N_OUT; i++) SET_STRING_ELT(written, i, Rf_mkChar(out_names[i]));
  Rf_setAttrib(out, R_NamesSymbol, names);
  UNPROTECT(2);
  return out;
}

/* The reservoir of a state: its slots must point at held observations before the first new
 * one. Without one (cap 0) every observation is held from the first. */
static sgais_reservoir reservoir_from_r(SEXP state, const sgais_settings *s, double from,
                                        double buffer_start) {
  SEXP slots_in = state_get(state, ST_SLOTS);
  const int held = (int) (from - buffer_start);
  sgais_reservoir res = {NULL, 0, s->reservoir_size};
  if (res.cap) {
    res.slot = (int *) R_alloc(res.cap, sizeof(int));
    res.size = Rf_length(slots_in);
    if (TYPEOF(slots_in) != INTSXP || res.size != (from < res.cap ? from : res.cap))
      sg_input_error("`state$slots` must be an integer vector of length %.0f.",
                     from < res.cap ? from : (double) res.cap);
    for (int i = 0; i < res.size; i++) {
      int k = INTEGER(slots_in)[i];
      if (k == NA_INTEGER || k < 0 || k >= held)
        sg_input_error("`state$slots` must hold columns of the model's data before "
                       "the first new observation.");
      res.slot[i] = k;
    }
  } else if (buffer_start != 0.0) {
    sg_input_error("`state$buffer_start` must be 0 without a reservoir.");
  }
  return res;
}

/* The preconditioner with the state's running covariance (precond.c; empty before the first),
 * or NULL without one; *acc_len: the covariance's length. */
static sg_precond *precond_from_r(SEXP state, const sgais_settings *s, const sg_model *m,
                                  sg_precond *pc, int *acc_len) {
  const int dim = m->dim;
  sg_precond_alloc(pc, s->a.move.preconditioner, dim);
  sg_precond_set_free(pc, m);
  sg_precond *pcp = (s->a.move.preconditioner == SG_PRECOND_NONE) ? NULL : pc;
  *acc_len = !pcp ? 0 : (pc->kind == SG_PRECOND_DENSE ? dim * dim : dim);
  double acc_n = state_double(state, ST_PRECOND_N);
  if (pcp && acc_n > 0.0) {
    SEXP acc_in = state_vector(state, ST_PRECOND_COV, *acc_len);
    memcpy(pc->acc, REAL(acc_in), *acc_len * sizeof(double));
    pc->acc_n = acc_n;
    pc->acc_ess = state_double(state, ST_PRECOND_ESS);
  }
  return pcp;
}

/* Each particle's score for the score control variate (NaN rows: to be computed), kept from the
 * last moves and carried in the state so that a run continued in pieces is the same run; NULL
 * without the control variate. */
static double *score_from_r(SEXP state, const sgais_settings *s, int dim, int M) {
  if (!s->a.score_cv) return NULL;
  SEXP score_in = state_get(state, ST_SCORE);
  const size_t len = (size_t) dim * M;
  double *score = (double *) R_alloc(len, sizeof(double));
  if (TYPEOF(score_in) == REALSXP && (size_t) Rf_xlength(score_in) == len) {
    memcpy(score, REAL(score_in), len * sizeof(double));
  } else if (Rf_xlength(score_in) == 0) {
    sgais_scores_unknown(score, M, dim);
  } else {
    sg_input_error("`state$score` must be empty or a numeric vector of length %.0f.", (double) len);
  }
  return score;
}

/* The result list before the run: theta and logw copied from the state (the run updates them in
 * place), the other fields allocated. */
static SEXP result_new(SEXP theta, SEXP logw, int M, int dim, int acc_len) {
  SEXP out = PROTECT(Rf_allocVector(VECSXP, N_OUT));
  SEXP names = PROTECT(Rf_allocVector(STRSXP, N_OUT));
  const int len[N_OUT] = {Rf_length(theta), M, dim, dim, 1, 1, acc_len, 1, 1, 0, 0, 0, 0, 0};
  for (int i = 0; i < TRACE; i++)
    sg_new_column(out, names, i, out_names[i], i == SLOTS ? INTSXP : REALSXP, len[i]);
  SET_STRING_ELT(names, TRACE, Rf_mkChar(out_names[TRACE]));
  Rf_setAttrib(out, R_NamesSymbol, names);
  SEXP theta_out = VECTOR_ELT(out, THETA);
  memcpy(REAL(theta_out), REAL(theta), Rf_length(theta) * sizeof(double));
  memcpy(REAL(VECTOR_ELT(out, LOGW)), REAL(logw), M * sizeof(double));
  Rf_setAttrib(theta_out, R_DimSymbol, Rf_getAttrib(theta, R_DimSymbol));
  UNPROTECT(2);
  return out;
}

/* The result list after the run: M particles now (of M_in), and what the run leaves for the next
 * call. */
static void result_finish(SEXP out, int dim, int M, int M_in, const double *score,
                          const sgais_reservoir *res, const sgais_lambdas *taken,
                          double step_size, const sg_precond *pcp, int acc_len,
                          const sgais_anchor *anchor) {
  /* every annealing step's lambda, chunk after chunk (the trace's annealing_steps split them) */
  SET_VECTOR_ELT(out, LAMBDAS, Rf_allocVector(REALSXP, taken->n));
  if (taken->n) memcpy(REAL(VECTOR_ELT(out, LAMBDAS)), taken->x, taken->n * sizeof(double));
  if (score) {
    SEXP sc = Rf_allocMatrix(REALSXP, dim, M);
    SET_VECTOR_ELT(out, SCORE, sc);
    memcpy(REAL(sc), score, (size_t) dim * M * sizeof(double));
  }
  if (res->cap) {
    SEXP slots_out = Rf_allocVector(INTSXP, res->size);
    SET_VECTOR_ELT(out, SLOTS, slots_out);
    memcpy(INTEGER(slots_out), res->slot, res->size * sizeof(int));
  }
  if (M != M_in) {
    /* fewer particles now: the first M columns and weights */
    SEXP before = VECTOR_ELT(out, THETA), th = Rf_allocMatrix(REALSXP, dim, M);
    SET_VECTOR_ELT(out, THETA, th);
    memcpy(REAL(th), REAL(before), (size_t) dim * M * sizeof(double));
    SET_VECTOR_ELT(out, LOGW, Rf_lengthgets(VECTOR_ELT(out, LOGW), M));
  }
  REAL(VECTOR_ELT(out, STEP_SIZE_END))[0] = step_size;
  if (pcp) memcpy(REAL(VECTOR_ELT(out, PRECOND_COV)), pcp->acc, acc_len * sizeof(double));
  REAL(VECTOR_ELT(out, PRECOND_N))[0] = pcp ? pcp->acc_n : 0.0;
  REAL(VECTOR_ELT(out, PRECOND_ESS))[0] = pcp ? pcp->acc_ess : 0.0;
  REAL(VECTOR_ELT(out, ANCHOR_N))[0] = anchor->n_anchor;
  if (anchor->n_anchor == 0) {
    SET_VECTOR_ELT(out, ANCHOR, Rf_allocVector(REALSXP, 0));
    SET_VECTOR_ELT(out, ANCHOR_GRAD, Rf_allocVector(REALSXP, 0));
  }
}
SEXP ffi_sgais_run(SEXP model, SEXP state, SEXP n_end, SEXP settings, SEXP schedule,
                   SEXP time_budget) {
  sg_model m;
  sg_model_from_r(model, &m);
  sgais_settings s = settings_from_r(settings);
  {
    sg_status st = {SG_OK, ""};
    if (sg_move_settings_for(&s.a.move, &m, &st)) sg_raise(&st);
  }
  const int dim = m.dim;
  double from = state_count(state, ST_N);
  double to = sg_scalar_count(n_end, "n_end");
  double buffer_start = state_count(state, ST_BUFFER_START);
  double budget = sg_scalar_double(time_budget, "time_budget");
  const sgais_schedule sched = schedule_from_r(schedule);
  if (from > to || from < buffer_start || to - buffer_start > m.n_obs)
    sg_input_error("`n_end` must lie between `state$n` and the number of observations.");
  sgais_reservoir res = reservoir_from_r(state, &s, from, buffer_start);
  SEXP theta = state_get(state, ST_THETA);
  /* early_particles particles until the mini-batch phase, `particles` after, or more after a
   * restart (sgais_particle_cap) */
  const int M_in = (TYPEOF(theta) == REALSXP && Rf_isMatrix(theta)) ? Rf_ncols(theta) : -1;
  if (M_in < 0 || Rf_nrows(theta) != dim || (M_in != s.a.particles && M_in < s.early_particles))
    sg_input_error("`state$theta` must be a %d x %d numeric matrix.", dim,
                   from <= s.exact_until ? s.early_particles : s.a.particles);
  int M = M_in;
  SEXP logw = state_vector(state, ST_LOGW, M);
  const uint64_t key = sg_rng_key_from_state(state_get(state, ST_KEY), state_fields[ST_KEY].what);
  double anchor_n = state_count(state, ST_ANCHOR_N);
  int has_anchor = anchor_n > 0;
  SEXP anchor_theta = state_vector(state, ST_ANCHOR, has_anchor ? dim : 0);
  SEXP anchor_grad = state_vector(state, ST_ANCHOR_GRAD, has_anchor ? dim : 0);
  if (anchor_n > from) sg_input_error("`state$anchor_n` must not exceed `state$n`.");
  /* the adapted step in target widths; 0 at the start: the configured step_size */
  double step_size = state_double(state, ST_STEP_SIZE);
  if (!(step_size > 0.0) || !R_FINITE(step_size)) step_size = s.a.move.base_step;
  sg_precond pc;
  int acc_len;
  sg_precond *pcp = precond_from_r(state, &s, &m, &pc, &acc_len);

  int nprot = 0, max_chunks = 0;
  for (double b = from; b < to; b = sgais_chunk_end(&s, b)) max_chunks++;
  SEXP out = PROTECT(result_new(theta, logw, M, dim, acc_len)); nprot++;
  sgais_state x = {.theta = REAL(VECTOR_ELT(out, THETA)), .logw = REAL(VECTOR_ELT(out, LOGW)),
                   .score = score_from_r(state, &s, dim, M_in), .M = M, .n = from,
                   .buffer_start = buffer_start, .step_size = step_size, .key = key,
                   .anchor = {REAL(VECTOR_ELT(out, ANCHOR)), REAL(VECTOR_ELT(out, ANCHOR_GRAD)),
                              anchor_n, from},
                   .pcp = pcp, .res = res, .genealogy = NULL, .taken = {NULL, 0, 0}};
  if (has_anchor) {
    memcpy(x.anchor.theta, REAL(anchor_theta), dim * sizeof(double));
    memcpy(x.anchor.grad, REAL(anchor_grad), dim * sizeof(double));
  }
  sgais_trace tr;
  SEXP trace = sg_columns_new(trace_columns, sizeof trace_columns / sizeof trace_columns[0], &tr,
                              max_chunks);
  SET_VECTOR_ELT(out, TRACE, trace);

  sg_status st = {SG_OK, ""};
  sg_genealogy gen;
  /* its lines: one per particle the run may hold, or as many as a genealogy begun with more
   * particles has (a restart's, resampled down since) */
  SEXP gen_in = sg_list_get_optional(state, state_fields[ST_GENEALOGY].name);
  int gen_cap = sgais_particle_cap(&s, M);
  if (TYPEOF(gen_in) == VECSXP) {
    SEXP eve = sg_list_get(gen_in, "eve");
    if (Rf_length(eve) > gen_cap) gen_cap = Rf_length(eve);
  }
  sg_genealogy_from_r(gen_in, gen_cap, M, &gen);
  x.genealogy = &gen;
  int chunks = sgais_process(&m, &s, &x, to, budget, &sched, &tr, &st);
  if (chunks < 0) sg_raise(&st);
  SET_VECTOR_ELT(out, GENEALOGY, sg_genealogy_to_r(&gen));
  /* where the run stopped for a restart (0: it did not), whether that chunk was a shift and
   * whether the model's reference was complete there */
  SEXP stop = PROTECT(Rf_allocVector(REALSXP, 3)); nprot++;
  REAL(stop)[0] = tr.stop.at;
  REAL(stop)[1] = tr.stop.shift;
  REAL(stop)[2] = tr.stop.reference;
  Rf_setAttrib(out, Rf_install("restart"), stop);
  result_finish(out, dim, x.M, M_in, x.score, &x.res, &x.taken, x.step_size, pcp, acc_len,
                &x.anchor);
  sg_columns_cut(trace, chunks);
  UNPROTECT(nprot);
  return out;
}
