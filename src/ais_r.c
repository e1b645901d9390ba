/* Glue: the entry point of ais.c; unpacks the R objects, runs the core and builds the
 * result. */
#include "ffi.h"
#include <math.h>
#include <string.h>

/* The trace: one entry per annealing step (ais_trace), in the order of the fit's schedule. */
#define COL(name, type) {#name, type, offsetof(ais_trace, name)}
static const sg_column trace_columns[] = {
    COL(lambda, REALSXP), COL(ess, REALSXP), COL(resampled, INTSXP), COL(sghmc_steps, INTSXP),
    COL(acceptance, REALSXP), COL(step_size, REALSXP), COL(divergent, INTSXP),
    COL(step_halvings, INTSXP), COL(data_fraction, REALSXP), COL(jump_acceptance, REALSXP),
    COL(log_evidence, REALSXP), COL(seconds, REALSXP), COL(gradient_evaluations, REALSXP),
    COL(likelihood_evaluations, REALSXP)};
#undef COL

/* .Call entry: continue a run from particles theta (dim x M) with log-weights logw at
 * temperature lambda. loglik holds the particles' full-data log-likelihoods, or is empty at the
 * start (they are then computed and counted in the first step); genealogy is the run's
 * (sg_genealogy_from_r; NULL at the start). Returns the new state and one trace entry per
 * annealing step. */
SEXP ffi_ais_run(SEXP model, SEXP theta, SEXP logw, SEXP loglik, SEXP lambda, SEXP settings,
                 SEXP steps_done, SEXP step_size, SEXP key, SEXP schedule, SEXP time_budget,
                 SEXP genealogy) {
  sg_model m;
  sg_model_from_r(model, &m);
  ais_settings s = sg_anneal_settings_from_r(settings);
  {
    sg_status st = {SG_OK, ""};
    if (sg_move_settings_for(&s.move, &m, &st)) sg_raise(&st);
  }
  const int M = s.particles;
  double lam = sg_scalar_double(lambda, "lambda"), budget = sg_scalar_double(time_budget, "time_budget");
  int done = sg_scalar_int(steps_done, "steps_done", 0);
  const uint64_t run_key = sg_rng_key_from_state(key, "key");
  /* the adapted step in target widths; 0 at the start: the configured step_size */
  double step = sg_scalar_double(step_size, "step_size");
  if (!(step > 0.0) || !R_FINITE(step)) step = s.move.base_step;
  if (!(lam >= 0.0 && lam <= 1.0)) sg_input_error("`lambda` must be in [0, 1].");
  if (TYPEOF(theta) != REALSXP || !Rf_isMatrix(theta) || Rf_nrows(theta) != m.dim || Rf_ncols(theta) != M)
    sg_input_error("`theta` must be a %d x %d numeric matrix.", m.dim, M);
  if (TYPEOF(logw) != REALSXP || Rf_length(logw) != M)
    sg_input_error("`logw` must be a numeric vector of length %d.", M);
  if (TYPEOF(loglik) != REALSXP || (Rf_length(loglik) != M && Rf_length(loglik) != 0))
    sg_input_error("`loglik` must be a numeric vector of length 0 or %d.", M);
  /* a fixed schedule: increasing lambdas in (0, 1], the last 1, from step steps_done on */
  if (TYPEOF(schedule) != REALSXP) sg_input_error("`schedule` must be a numeric vector.");
  const int n_schedule = Rf_length(schedule);
  const double *sched = REAL(schedule);
  if (n_schedule > 0) {
    if (n_schedule > AIS_MAX_STEPS || done > n_schedule || sched[n_schedule - 1] != 1.0)
      sg_input_error("`schedule` must end at 1, with at most %d steps.", AIS_MAX_STEPS);
    for (int j = 0; j < n_schedule; j++)
      if (!(sched[j] > (j > 0 ? sched[j - 1] : 0.0) && sched[j] <= 1.0))
        sg_input_error("`schedule` must increase strictly within (0, 1].");
    if (done > 0 && lam != sched[done - 1])
      sg_input_error("`lambda` must be the schedule's lambda after step %d.", done);
  }

  int nprot = 0;
  /* the state after the call, then the trace of its steps (trace_columns), by name */
  enum { THETA, LOGW, LOGLIK, LAMBDA_END, STEP_SIZE_END, GENEALOGY, TRACE, N_OUT };
  static const char *out_names[N_OUT] = {"theta", "logw", "loglik", "lambda_end",
                                         "step_size_end", "genealogy", "trace"};
  SEXP out = PROTECT(Rf_allocVector(VECSXP, N_OUT)); nprot++;
  SEXP names = PROTECT(Rf_allocVector(STRSXP, N_OUT)); nprot++;
  SEXP theta_out = sg_new_column(out, names, THETA, out_names[THETA], REALSXP, Rf_length(theta));
  SEXP logw_out = sg_new_column(out, names, LOGW, out_names[LOGW], REALSXP, M);
  SEXP loglik_out = sg_new_column(out, names, LOGLIK, out_names[LOGLIK], REALSXP, M);
  SEXP lambda_end = sg_new_column(out, names, LAMBDA_END, out_names[LAMBDA_END], REALSXP, 1);
  SEXP step_end = sg_new_column(out, names, STEP_SIZE_END, out_names[STEP_SIZE_END], REALSXP, 1);
  SET_STRING_ELT(names, GENEALOGY, Rf_mkChar(out_names[GENEALOGY]));
  SET_STRING_ELT(names, TRACE, Rf_mkChar(out_names[TRACE]));
  Rf_setAttrib(out, R_NamesSymbol, names);
  memcpy(REAL(theta_out), REAL(theta), Rf_length(theta) * sizeof(double));
  memcpy(REAL(logw_out), REAL(logw), M * sizeof(double));
  Rf_setAttrib(theta_out, R_DimSymbol, Rf_getAttrib(theta, R_DimSymbol));
  ais_trace tr;
  SEXP trace = sg_columns_new(trace_columns, sizeof trace_columns / sizeof trace_columns[0], &tr,
                              AIS_SLICE_STEPS);
  SET_VECTOR_ELT(out, TRACE, trace);

  double *th = REAL(theta_out), *ll = REAL(loglik_out), initial = 0.0;
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);
  sg_workspace_threads(&ws, &m, sg_threads());
  /* at the start (no log-likelihoods yet) the particles may be drawn again (ais_start) */
  if (Rf_length(loglik) == M ? sg_loglik_from_state(loglik, &m, &ws, th, M, 0, m.n_obs, ll)
                             : (ais_start(&m, &s, th, M, lam, run_key, ll, &ws), 1)) {
    if (st.code || ais_check_loglik(ll, M, lam, 0, &st)) sg_raise(&st);
    initial = ws.count.likelihood;
  }

  sg_genealogy gen;
  sg_genealogy_from_r(genealogy, M, M, &gen);
  int steps = ais_process(&m, &s, th, REAL(logw_out), ll, &lam, &step, done, sched, n_schedule,
                          budget, run_key, &tr, &ws, &gen);
  if (steps < 0) sg_raise(&st);
  SET_VECTOR_ELT(out, GENEALOGY, sg_genealogy_to_r(&gen));
  if (steps > 0) tr.likelihood_evaluations[0] += initial;
  REAL(lambda_end)[0] = lam;
  REAL(step_end)[0] = step;

  sg_columns_cut(trace, steps);
  UNPROTECT(nprot);
  return out;
}
