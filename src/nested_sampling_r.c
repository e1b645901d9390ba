/* Glue: the entry point of nested_sampling.c; unpacks the R objects, runs the core and builds the
 * result. */
#include "ffi.h"
#include <math.h>
#include <string.h>


static ns_settings settings_from_r(SEXP x) {
  ns_settings s;
  sg_settings_read(x, sg_ns_table, sg_ns_table_rows, &s);
  s.move = sg_move_settings_from_r(x);
  return s;
}

/* The chunk and the reservoir from a run's state: prior_n, n_end, batch_size (the chunk: see
 * ns_chunk; plain nested sampling 0, n, 0), chunk (its number, for its key), and reservoir
 * (dim x M, or dim x 0 for none), reservoir_log_weight, reservoir_certain, reservoir_filled,
 * reservoir_log_ordinary (see ns_reservoir), copied into the output list `out` at slots
 * first, ... (their names set), where the run updates them. Returns the chunk number. */
static int chunk_from_r(SEXP state, const sg_model *m, int M, ns_chunk *chunk, ns_reservoir *res,
                        SEXP out, SEXP names, int first) {
  const double prior_n = sg_scalar_count(sg_list_get(state, "prior_n"), "prior_n");
  const double n_end = sg_scalar_count(sg_list_get(state, "n_end"), "n_end");
  if (!(prior_n < n_end && n_end <= m->n_obs))
    sg_input_error("`prior_n` and `n_end` must satisfy 0 <= prior_n < n_end <= %d.", m->n_obs);
  chunk->prior_n = (int) prior_n;
  chunk->n_end = (int) n_end;
  chunk->batch_size = sg_scalar_int(sg_list_get(state, "batch_size"), "batch_size", 0);
  if (chunk->prior_n > chunk->batch_size && chunk->batch_size < 1)
    sg_input_error("`batch_size` must be at least 1 when the prior holds observations.");
  const int number = sg_scalar_int(sg_list_get(state, "chunk"), "chunk", 0);
  SEXP theta = sg_list_get(state, "reservoir"), lw = sg_list_get(state, "reservoir_log_weight");
  SEXP certain = sg_list_get(state, "reservoir_certain");
  if (TYPEOF(theta) != REALSXP || !Rf_isMatrix(theta) || Rf_nrows(theta) != m->dim ||
      (Rf_ncols(theta) != M && Rf_ncols(theta) != 0))
    sg_input_error("`reservoir` must be a %d x %d or %d x 0 numeric matrix.", m->dim, M, m->dim);
  const int size = Rf_ncols(theta);
  if (TYPEOF(lw) != REALSXP || Rf_length(lw) != size || TYPEOF(certain) != LGLSXP ||
      Rf_length(certain) != size)
    sg_input_error("`reservoir_log_weight` and `reservoir_certain` must have length %d.", size);
  res->size = size;
  res->filled = sg_scalar_int(sg_list_get(state, "reservoir_filled"), "reservoir_filled", 0);
  if (res->filled > size) sg_input_error("`reservoir_filled` must be at most %d.", size);
  res->log_ordinary = Rf_asReal(sg_list_get(state, "reservoir_log_ordinary"));
  if (ISNAN(res->log_ordinary)) sg_input_error("`reservoir_log_ordinary` must not be NA.");
  SEXP theta_out = sg_new_column(out, names, first, "reservoir", REALSXP, Rf_length(theta));
  Rf_setAttrib(theta_out, R_DimSymbol, Rf_getAttrib(theta, R_DimSymbol));
  res->theta = REAL(theta_out);
  memcpy(res->theta, REAL(theta), Rf_length(theta) * sizeof(double));
  res->log_weight = REAL(sg_new_column(out, names, first + 1, "reservoir_log_weight", REALSXP, size));
  if (size) memcpy(res->log_weight, REAL(lw), size * sizeof(double));
  res->certain = LOGICAL(sg_new_column(out, names, first + 2, "reservoir_certain", LGLSXP, size));
  for (int i = 0; i < size; i++) res->certain[i] = LOGICAL(certain)[i] == TRUE;
  res->work = (double *) R_alloc(2 * ((size_t) size + 1), sizeof(double));
  res->order = (int *) R_alloc((size_t) size + 1, sizeof(int));
  sg_new_column(out, names, first + 3, "reservoir_filled", INTSXP, 1);
  sg_new_column(out, names, first + 4, "reservoir_log_ordinary", REALSXP, 1);
  return number;
}

/* The trace: one entry per removed point (ns_dead), in the order of the fit's trace, named as
 * there (a point's reflections are its rejected steps, its moves the steps made). */
#define COL(name, field) {name, REALSXP, offsetof(ns_dead, field)}
static const sg_column trace_columns[] = {
    COL("iteration", iteration), COL("log_likelihood", log_likelihood),
    COL("log_volume", log_volume), COL("log_weight", log_weight),
    COL("log_evidence", log_evidence), COL("rejected_steps", reflections), COL("steps", moves),
    COL("jumps_accepted", jumps_accepted), COL("seconds", seconds),
    COL("gradient_evaluations", gradient_evaluations),
    COL("likelihood_evaluations", likelihood_evaluations)};
#undef COL

/* .Call entry: continue a run from `state`, a list with theta (dim x M live points), loglik
 * (their log-likelihoods, or empty at the start: then computed and counted), iteration, log_z,
 * information, and the chunk and reservoir (chunk_from_r()). Returns the new state (with status
 * 0 running, 1 converged, 2 stopped at max_iterations) and the points removed in this call
 * (dead points, the final live points appended once the run has stopped). */
SEXP ffi_nested_sampling_run(SEXP model, SEXP state, SEXP settings, SEXP time_budget) {
  sg_model m;
  sg_model_from_r(model, &m);
  ns_settings s = settings_from_r(settings);
  const int M = s.live_points, dim = m.dim;
  double budget = sg_scalar_double(time_budget, "time_budget");
  const uint64_t run_key = sg_rng_key_from_state(sg_list_get(state, "key"), "state$key");
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
  /* the state after the call (the reservoir's five fields from RESERVOIR on, chunk_from_r),
   * the removed points' parameters, then their trace (trace_columns), by name */
  enum { THETA, LOGLIK, ITERATION_END, LOG_Z, INFORMATION, STATUS, DEAD_THETA, SECONDS,
         WALK_SCALE, WALK_JUMP, RESERVOIR, TRACE = RESERVOIR + 5, N_OUT };
  SEXP out = PROTECT(Rf_allocVector(VECSXP, N_OUT)); nprot++;
  SEXP names = PROTECT(Rf_allocVector(STRSXP, N_OUT)); nprot++;
  ns_chunk chunk;
  ns_reservoir res;
  const uint64_t key =
      ns_chunk_key(run_key, chunk_from_r(state, &m, M, &chunk, &res, out, names, RESERVOIR));
  SEXP theta_out = sg_new_column(out, names, THETA, "theta", REALSXP, Rf_length(theta));
  SEXP loglik_out = sg_new_column(out, names, LOGLIK, "loglik", REALSXP, M);
  SEXP iteration_out = sg_new_column(out, names, ITERATION_END, "iteration_end", REALSXP, 1);
  SEXP log_z_out = sg_new_column(out, names, LOG_Z, "log_z", REALSXP, 1);
  SEXP information_out = sg_new_column(out, names, INFORMATION, "information", REALSXP, 1);
  SEXP status_out = sg_new_column(out, names, STATUS, "status", INTSXP, 1);
  SEXP dead_theta = sg_new_column(out, names, DEAD_THETA, "dead_theta", REALSXP, 0);
  SEXP seconds_out = sg_new_column(out, names, SECONDS, "seconds", REALSXP, 1);
  SEXP scale_out = sg_new_column(out, names, WALK_SCALE, "walk_scale", REALSXP, 1);
  SEXP jump_out = sg_new_column(out, names, WALK_JUMP, "walk_jump", REALSXP, 1);
  ns_dead d;
  SEXP trace = sg_columns_new(trace_columns, sizeof trace_columns / sizeof trace_columns[0], &d,
                              cap);
  SET_VECTOR_ELT(out, TRACE, trace);
  SET_STRING_ELT(names, TRACE, Rf_mkChar("trace"));
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
  /* at the start (no log-likelihoods yet) the points may be drawn again (ns_start) */
  if (Rf_length(loglik) == M
          ? sg_loglik_from_state(loglik, &m, &ws, th, M, chunk.prior_n, chunk.n_end - chunk.prior_n,
                                 ll)
          : (ns_start(&m, &s, &chunk, th, st.iteration == 0.0, key, ll, &ws), 1)) {
    for (int i = 0; i < M; i++)
      if (ISNAN(ll[i]) || ll[i] == R_PosInf)
        sg_fail(&fail, SG_ERR_LIKELIHOOD, "the log-likelihood of a live point is not finite-valued (NaN or +Inf).");
    if (fail.code) sg_raise(&fail);
    initial = ws.count.likelihood;
  }

  int k = nested_process(&m, &s, &chunk, th, ll, &st, budget, key, &d, res.size ? &res : NULL,
                         &ws);
  if (k < 0) sg_raise(&fail);
  if (k > 0) d.likelihood_evaluations[0] += initial;

  REAL(iteration_out)[0] = st.iteration;
  REAL(log_z_out)[0] = st.log_z;
  REAL(information_out)[0] = st.information;
  INTEGER(status_out)[0] = st.status;
  REAL(scale_out)[0] = st.walk_scale;
  REAL(jump_out)[0] = st.walk_jump;
  INTEGER(VECTOR_ELT(out, RESERVOIR + 3))[0] = res.filled;
  REAL(VECTOR_ELT(out, RESERVOIR + 4))[0] = res.log_ordinary;
  dead_theta = Rf_allocMatrix(REALSXP, dim, k);
  SET_VECTOR_ELT(out, DEAD_THETA, dead_theta);
  memcpy(REAL(dead_theta), d.theta, (size_t) k * dim * sizeof(double));
  sg_columns_cut(trace, k);
  REAL(seconds_out)[0] = sg_now() - start;
  UNPROTECT(nprot);
  return out;
}
