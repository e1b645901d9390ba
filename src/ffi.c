/* The R layer's shared parts: raising core failures as classed R conditions, argument checks,
 * the one settings parser, and a digest of observations. */
#include "ffi.h"
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

/* The kinds of failure by status code, as R classes sgais_error_<kind>. */
static const char *const kinds[] = {"ok", "model", "likelihood", "divergence", "annealing",
                                    "input"};

void sg_raise(const sg_status *st) {
  int code = (st->code > 0 && st->code < (int) (sizeof kinds / sizeof kinds[0])) ? st->code
                                                                                 : SG_ERR_INPUT;
  SEXP ns = PROTECT(R_FindNamespace(Rf_mkString("sgais")));
  SEXP call = PROTECT(Rf_lang3(Rf_install("core_error"), Rf_mkString(kinds[code]),
                               Rf_mkString(st->message)));
  Rf_eval(call, ns); /* signals the error: does not return */
  UNPROTECT(2);
  Rf_errorcall(R_NilValue, "%s", st->message);
}

void sg_input_error(const char *fmt, ...) {
  sg_status st = {SG_ERR_INPUT, ""};
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st.message, sizeof st.message, fmt, ap);
  va_end(ap);
  sg_raise(&st);
}

/* Cheap re-checks of arguments already validated in R; messages name the argument. */
int sg_scalar_int(SEXP x, const char *what, int lower) {
  if (Rf_length(x) != 1) sg_input_error("`%s` must be a single number.", what);
  double v = Rf_asReal(x);
  if (ISNAN(v) || v != floor(v) || v < lower || v > INT_MAX)
    sg_input_error("`%s` must be a whole number >= %d.", what, lower);
  return (int) v;
}

/* A count of observations: a whole number >= 0, held in a double (exact up to 2^53). */
double sg_scalar_count(SEXP x, const char *what) {
  if (Rf_length(x) != 1) sg_input_error("`%s` must be a single number.", what);
  double v = Rf_asReal(x);
  if (!R_FINITE(v) || v != floor(v) || v < 0 || v > 9007199254740992.0)
    sg_input_error("`%s` must be a whole number >= 0.", what);
  return v;
}

double sg_scalar_double(SEXP x, const char *what) {
  if (Rf_length(x) != 1) sg_input_error("`%s` must be a single number.", what);
  double v = Rf_asReal(x);
  if (ISNAN(v)) sg_input_error("`%s` must not be NA.", what);
  return v;
}

SEXP sg_list_get(SEXP list, const char *name) {
  if (TYPEOF(list) != VECSXP) sg_input_error("internal error: expected a list holding `%s`; please report this.", name);
  SEXP names = Rf_getAttrib(list, R_NamesSymbol);
  if (TYPEOF(names) != STRSXP) sg_input_error("internal error: unnamed list instead of one holding `%s`; please report this.", name);
  for (R_xlen_t i = 0; i < Rf_xlength(list); i++)
    if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(list, i);
  sg_input_error("internal error: element `%s` missing; please report this.", name);
  return R_NilValue; /* not reached */
}

SEXP sg_list_get_optional(SEXP list, const char *name) {
  if (TYPEOF(list) != VECSXP) sg_input_error("internal error: expected a list holding `%s`; please report this.", name);
  SEXP names = Rf_getAttrib(list, R_NamesSymbol);
  if (TYPEOF(names) != STRSXP) return R_NilValue;
  for (R_xlen_t i = 0; i < Rf_xlength(list); i++)
    if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(list, i);
  return R_NilValue;
}

/* Allocates element i of the list `out` as a vector of `type` and length n, names it, and
 * returns it (protected through `out`). Used to build the lists the entry points return. */
SEXP sg_new_column(SEXP out, SEXP names, int i, const char *name, SEXPTYPE type, R_xlen_t n) {
  SEXP col = Rf_allocVector(type, n);
  SET_VECTOR_ELT(out, i, col);
  SET_STRING_ELT(names, i, Rf_mkChar(name));
  return col;
}

int sg_loglik_from_state(SEXP given, const sg_model *m, sg_workspace *ws, const double *theta,
                         int M, int start, int n, double *ll) {
  if (Rf_length(given) == M) {
    memcpy(ll, REAL(given), M * sizeof(double));
    return 0;
  }
  for (int i = 0; i < M && !ws->status->code; i++)
    ll[i] = sg_model_log_lik(m, ws, theta + (size_t) i * m->dim, NULL, start, n, 1.0, NULL);
  return 1;
}

SEXP sg_columns_new(const sg_column *cols, int ncol, void *trace, R_xlen_t n) {
  SEXP out = PROTECT(Rf_allocVector(VECSXP, ncol));
  SEXP names = PROTECT(Rf_allocVector(STRSXP, ncol));
  for (int i = 0; i < ncol; i++) {
    SEXP col = sg_new_column(out, names, i, cols[i].name, cols[i].type, n);
    void **slot = (void **) ((char *) trace + cols[i].offset);
    *slot = (cols[i].type == INTSXP) ? (void *) INTEGER(col) : (void *) REAL(col);
  }
  Rf_setAttrib(out, R_NamesSymbol, names);
  UNPROTECT(2);
  return out;
}

void sg_columns_cut(SEXP list, R_xlen_t n) {
  for (R_xlen_t i = 0; i < Rf_xlength(list); i++)
    SET_VECTOR_ELT(list, i, Rf_lengthgets(VECTOR_ELT(list, i), n));
}

/* A digest of a sequence of observations that does not depend on how the sequence was split:
 * 64-bit FNV-1a over the bytes of the values in order, continued from `digest` (16 hex digits,
 * or "" to start). Doubles are hashed with -0 as +0, so equal numbers give equal digests. Used
 * to check that fits compared are fits of the same observations (R/compare_models.R). */
/* The position (1-based, a double) of the first value of x that is not finite, or 0: the
 * check of a model's data (R/model.R, validate_sgais_model()) without allocating a logical
 * vector as large as the data. */
void sg_set_names(SEXP x, const char *const *names, int n) {
  SEXP nm = PROTECT(Rf_allocVector(STRSXP, n));
  for (int i = 0; i < n; i++) SET_STRING_ELT(nm, i, Rf_mkChar(names[i]));
  Rf_setAttrib(x, R_NamesSymbol, nm);
  UNPROTECT(1);
}

SEXP ffi_first_non_finite(SEXP x) {
  R_xlen_t n = XLENGTH(x);
  if (TYPEOF(x) == REALSXP) {
    const double *v = REAL(x);
    for (R_xlen_t i = 0; i < n; i++)
      if (!R_FINITE(v[i])) return Rf_ScalarReal((double) i + 1);
  } else if (TYPEOF(x) == INTSXP) {
    const int *v = INTEGER(x);
    for (R_xlen_t i = 0; i < n; i++)
      if (v[i] == NA_INTEGER) return Rf_ScalarReal((double) i + 1);
  } else {
    sg_input_error("`x` must be a numeric vector or matrix.");
  }
  return Rf_ScalarReal(0.0);
}

SEXP ffi_data_digest(SEXP digest, SEXP values) {
  if (TYPEOF(digest) != STRSXP || XLENGTH(digest) != 1 || STRING_ELT(digest, 0) == NA_STRING)
    sg_input_error("`digest` must be a string.");
  const char *in = CHAR(STRING_ELT(digest, 0));
  uint64_t h = 14695981039346656037ULL; /* the FNV offset basis */
  if (in[0] != '\0') {
    if (strlen(in) != 16) sg_input_error("`digest` must have 16 hex digits.");
    h = 0;
    for (int i = 0; i < 16; i++) {
      char c = in[i];
      int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
      if (v < 0) sg_input_error("`digest` must have 16 hex digits.");
      h = (h << 4) | (uint64_t) v;
    }
  }
  const uint64_t prime = 1099511628211ULL;
  R_xlen_t n = XLENGTH(values);
  if (TYPEOF(values) == REALSXP) {
    const double *x = REAL(values);
    for (R_xlen_t i = 0; i < n; i++) {
      double v = x[i] == 0.0 ? 0.0 : x[i];
      unsigned char b[sizeof(double)];
      memcpy(b, &v, sizeof(double));
      for (size_t k = 0; k < sizeof(double); k++) h = (h ^ b[k]) * prime;
    }
  } else if (TYPEOF(values) == INTSXP) {
    const int *x = INTEGER(values);
    for (R_xlen_t i = 0; i < n; i++) {
      unsigned char b[sizeof(int)];
      memcpy(b, &x[i], sizeof(int));
      for (size_t k = 0; k < sizeof(int); k++) h = (h ^ b[k]) * prime;
    }
  } else {
    sg_input_error("`values` must be a numeric or integer vector.");
  }
  char out[17];
  snprintf(out, sizeof(out), "%016llx", (unsigned long long) h);
  return Rf_mkString(out);
}

/* ---------------------------------------------------------------- the settings table
 * Every setting C reads from the settings list, by its name there (the schema's name, or its
 * c_name: R/settings.R), with its type, where it goes and its range. R checked the values
 * already (resolve_settings()); C checks them again, cheaply, and test-control.R checks that
 * this table and the R schema agree (ffi_settings_table()). Types: 'i' a whole number in
 * [lower, upper]; 'c' a code in [lower, upper]; 'd' a number in its range, each end open or
 * closed. */
#define MOVE(field) offsetof(sg_move_settings, field)
static const sg_setting move_table[] = {
    {"sghmc_steps", 'i', MOVE(steps), 0, INT_MAX, 0, 0},
    {"min_sghmc_steps", 'i', MOVE(min_steps), 0, INT_MAX, 0, 0},
    {"step_scale", 'c', MOVE(scale), 0, SG_STEP_WIDTH, 0, 0},
    {"preconditioner", 'c', MOVE(preconditioner), 0, SG_PRECOND_DENSE, 0, 0},
    {"integrator", 'c', MOVE(integrator), 0, SG_INTEGRATOR_BAOAB, 0, 0},
    {"learning_rate", 'd', MOVE(learning_rate), 0, INFINITY, 1, 1},
    {"step_size", 'd', MOVE(step_size), 0, INFINITY, 1, 1},
    {"momentum_decay", 'd', MOVE(momentum_decay), 0, 1, 1, 0},
    {"kernel", 'c', MOVE(kernel), 0, SG_KERNEL_FLYMC, 0, 0},
    {"mh_batch_size", 'i', MOVE(mh_batch), 2, INT_MAX, 0, 0},
    {"mh_tolerance", 'd', MOVE(mh_tolerance), 0, 1, 1, 1},
    {"mh_bound", 'c', MOVE(mh_bound), 0, SG_BOUND_HOEFFDING, 0, 0},
    {"jumps", 'i', MOVE(jumps), 0, INT_MAX, 0, 0},
    {"max_rounds", 'i', MOVE(max_rounds), 1, INT_MAX, 0, 0},
    {"max_correlation", 'd', MOVE(max_correlation), 0, 1, 1, 0}};
#undef MOVE
#define ANNEAL(field) offsetof(sg_anneal_settings, field)
static const sg_setting anneal_table[] = {
    {"particles", 'i', ANNEAL(particles), 2, INT_MAX, 0, 0},
    {"target_ess", 'd', ANNEAL(target_ess), 1, INFINITY, 1, 1},
    {"resample_ess", 'd', ANNEAL(resample_ess), 0, 1, 0, 0},
    {"conditional_ess", 'c', ANNEAL(conditional_ess), 0, 1, 0, 0},
    {"score_control_variate", 'c', ANNEAL(score_cv), 0, 1, 0, 0},
    {"reference", 'c', ANNEAL(reference), 0, 1, 0, 0}};
#undef ANNEAL
#define SGAIS(field) offsetof(sgais_settings, field)
const sg_setting sg_sgais_table[] = {
    {"batch_size", 'i', SGAIS(batch_size), 1, INT_MAX, 0, 0},
    {"chunk_size", 'i', SGAIS(chunk_size), 1, INT_MAX, 0, 0},
    {"first_chunk_size", 'i', SGAIS(first_chunk_size), 1, INT_MAX, 0, 0},
    {"update", 'c', SGAIS(update), 0, SGAIS_UPDATE_AVERAGED, 0, 0},
    {"split_ess", 'd', SGAIS(split_ess), 0, 1, 0, 1},
    {"control_variates", 'c', SGAIS(control_variates), 0, 1, 0, 0},
    {"exact_until", 'i', SGAIS(exact_until), 0, INT_MAX, 0, 0},
    {"early_particles", 'i', SGAIS(early_particles), 2, INT_MAX, 0, 0},
    {"reservoir_size", 'd', SGAIS(reservoir), 1, INFINITY, 0, 0},
    {"restart_threshold", 'd', SGAIS(trigger.threshold), 0, INFINITY, 1, 0},
    {"trigger_after", 'd', SGAIS(trigger.after), 0, INFINITY, 0, 0},
    {"trigger_due", 'd', SGAIS(trigger.due), 0, INFINITY, 0, 0},
    {"restart_ess", 'd', SGAIS(trigger.ess), 0, 1, 0, 1},
    {"trigger_on_reference", 'c', SGAIS(trigger.on_reference), 0, 1, 0, 0}};
const int sg_sgais_table_rows = sizeof sg_sgais_table / sizeof sg_sgais_table[0];
#undef SGAIS
#define NS(field) offsetof(ns_settings, field)
const sg_setting sg_ns_table[] = {
    {"live_points", 'i', NS(live_points), 1, INT_MAX, 0, 0},
    {"move", 'c', NS(move_kind), 0, NS_MOVE_WALK, 0, 0},
    {"tolerance", 'd', NS(tolerance), 0, INFINITY, 1, 1},
    {"max_iterations", 'd', NS(max_iterations), 1, INFINITY, 0, 1},
    {"reference", 'c', NS(reference), 0, 1, 0, 0}};
const int sg_ns_table_rows = sizeof sg_ns_table / sizeof sg_ns_table[0];
#undef NS
static const struct {
  const char *name;
  const sg_setting *rows;
  int n;
} settings_tables[] = {{"move", move_table, sizeof move_table / sizeof move_table[0]},
                       {"anneal", anneal_table, sizeof anneal_table / sizeof anneal_table[0]},
                       {"sgais", sg_sgais_table, sizeof sg_sgais_table / sizeof sg_sgais_table[0]},
                       {"nested_sampling", sg_ns_table, sizeof sg_ns_table / sizeof sg_ns_table[0]}};

/* The range of a 'd' row as an error message. */
static void range_error(const sg_setting *t) {
  if (t->lower == 0 && t->open_lower && t->upper == R_PosInf)
    sg_input_error("`%s` must be positive and finite.", t->name);
  if (t->upper == R_PosInf)
    sg_input_error("`%s` must be a finite number above %g.", t->name, t->lower);
  sg_input_error("`%s` must be in %c%g, %g%c.", t->name, t->open_lower ? '(' : '[', t->lower,
                 t->upper, t->open_upper ? ')' : ']');
}

void sg_settings_read(SEXP x, const sg_setting *rows, int n, void *out) {
  for (int k = 0; k < n; k++) {
    const sg_setting *t = &rows[k];
    char *at = (char *) out + t->offset;
    if (t->type == 'd') {
      const double v = sg_scalar_double(sg_list_get(x, t->name), t->name);
      if (!(t->open_lower ? v > t->lower : v >= t->lower) ||
          !(t->open_upper ? v < t->upper : v <= t->upper))
        range_error(t);
      *(double *) at = v;
    } else {
      const int v = sg_scalar_int(sg_list_get(x, t->name), t->name, (int) t->lower);
      if (v > t->upper) {
        if (t->type == 'c') sg_input_error("`%s` is not a known setting value.", t->name);
        sg_input_error("`%s` must be at most %.0f.", t->name, t->upper);
      }
      *(int *) at = v;
    }
  }
}

sg_move_settings sg_move_settings_from_r(SEXP x) {
  sg_move_settings s;
  sg_settings_read(x, move_table, sizeof move_table / sizeof move_table[0], &s);
  if (s.min_steps > s.steps)
    sg_input_error("`min_sghmc_steps` must not exceed `sghmc_steps`.");
  if (s.scale == SG_STEP_PER_OBSERVATION) s.preconditioner = SG_PRECOND_NONE;
  /* the MH test's settings serve the subsampling MH kernels only: fixed for the others */
  if (s.kernel != SG_KERNEL_AUSTERITY && s.kernel != SG_KERNEL_CONFIDENCE) {
    s.mh_batch = 100;
    s.mh_tolerance = 0.05;
    s.mh_bound = SG_BOUND_BERNSTEIN;
  }
  if (sg_kernel_random_walk(s.kernel) && s.scale != SG_STEP_WIDTH)
    sg_input_error("the Metropolis-Hastings kernels need `step_scale = \"width\"`.");
  s.base_step = s.step_size; /* until sg_move_settings_for() knows the dimension */
  return s;
}

sg_anneal_settings sg_anneal_settings_from_r(SEXP x) {
  sg_anneal_settings s;
  sg_settings_read(x, anneal_table, sizeof anneal_table / sizeof anneal_table[0], &s);
  s.move = sg_move_settings_from_r(x);
  if (!(s.target_ess < s.particles)) sg_input_error("`target_ess` must be in (1, particles).");
  return s;
}

/* The settings table as a data frame-like list (name, table, type, lower, upper, open_lower,
 * open_upper), for the test that compares it with the R schema. */
SEXP ffi_settings_table(void) {
  int n = 0;
  const int tables = sizeof settings_tables / sizeof settings_tables[0];
  for (int k = 0; k < tables; k++) n += settings_tables[k].n;
  const char *cols[] = {"name", "table", "type", "lower", "upper", "open_lower", "open_upper"};
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 7));
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 7));
  SEXP name = sg_new_column(out, names, 0, cols[0], STRSXP, n);
  SEXP table = sg_new_column(out, names, 1, cols[1], STRSXP, n);
  SEXP type = sg_new_column(out, names, 2, cols[2], STRSXP, n);
  double *lower = REAL(sg_new_column(out, names, 3, cols[3], REALSXP, n));
  double *upper = REAL(sg_new_column(out, names, 4, cols[4], REALSXP, n));
  int *ol = LOGICAL(sg_new_column(out, names, 5, cols[5], LGLSXP, n));
  int *ou = LOGICAL(sg_new_column(out, names, 6, cols[6], LGLSXP, n));
  Rf_setAttrib(out, R_NamesSymbol, names);
  int i = 0;
  for (int k = 0; k < tables; k++) {
    for (int r = 0; r < settings_tables[k].n; r++, i++) {
      const sg_setting *t = &settings_tables[k].rows[r];
      const char ty[2] = {t->type, '\0'};
      SET_STRING_ELT(name, i, Rf_mkChar(t->name));
      SET_STRING_ELT(table, i, Rf_mkChar(settings_tables[k].name));
      SET_STRING_ELT(type, i, Rf_mkChar(ty));
      lower[i] = t->lower;
      upper[i] = t->upper;
      ol[i] = t->open_lower;
      ou[i] = t->open_upper;
    }
  }
  UNPROTECT(2);
  return out;
}

uint64_t sg_rng_key_from_state(SEXP x, const char *what) {
  if (TYPEOF(x) != REALSXP || Rf_length(x) != 2)
    sg_input_error("`%s` must be a numeric vector of length 2.", what);
  for (int i = 0; i < 2; i++) {
    double k = REAL(x)[i];
    if (!(k >= 0.0 && k < 4294967296.0) || k != floor(k))
      sg_input_error("`%s` must hold whole numbers in [0, 2^32).", what);
  }
  return sg_rng_key_join(REAL(x)[0], REAL(x)[1]);
}

void sg_genealogy_from_r(SEXP x, int cap, int M, sg_genealogy *g) {
  g->cap = cap;
  g->eve = (int *) R_alloc(cap, sizeof(int));
  g->marks = (int *) R_alloc(cap, sizeof(int));
  g->influence = (double *) R_alloc(cap, sizeof(double));
  g->closed = 0.0;
  if (Rf_isNull(x)) {
    sg_genealogy_reset(g, M);
    return;
  }
  SEXP eve = sg_list_get(x, "eve"), influence = sg_list_get(x, "influence");
  if (TYPEOF(eve) != INTSXP || Rf_length(eve) != cap || TYPEOF(influence) != REALSXP ||
      Rf_length(influence) != cap)
    sg_input_error("`state$genealogy` must hold `eve` and `influence` of length %d.", cap);
  g->closed = sg_scalar_double(sg_list_get(x, "closed"), "state$genealogy$closed");
  if (!(g->closed >= 0.0) || !R_FINITE(g->closed))
    sg_input_error("`state$genealogy$closed` must be a non-negative number.");
  memcpy(g->eve, INTEGER(eve), cap * sizeof(int));
  memcpy(g->influence, REAL(influence), cap * sizeof(double));
  for (int i = 0; i < cap; i++) {
    if (g->eve[i] == NA_INTEGER || g->eve[i] < 0 || g->eve[i] >= cap)
      sg_input_error("`state$genealogy$eve` must hold numbers in [0, %d).", cap);
    if (!R_FINITE(g->influence[i]))
      sg_input_error("`state$genealogy$influence` must be finite.");
  }
}

SEXP sg_genealogy_to_r(const sg_genealogy *g) {
  static const char *names[] = {"eve", "influence", "closed"};
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 3));
  SEXP eve = Rf_allocVector(INTSXP, g->cap);
  SET_VECTOR_ELT(out, 0, eve);
  memcpy(INTEGER(eve), g->eve, g->cap * sizeof(int));
  SEXP influence = Rf_allocVector(REALSXP, g->cap);
  SET_VECTOR_ELT(out, 1, influence);
  memcpy(REAL(influence), g->influence, g->cap * sizeof(double));
  SET_VECTOR_ELT(out, 2, Rf_ScalarReal(g->closed));
  sg_set_names(out, names, 3);
  UNPROTECT(1);
  return out;
}

/* n draws from the stream (key, a, b) (rng.h), for tests: kind 0 uniforms on (0, 1), 1 indices
 * in 0, ..., range - 1 (range <= 2^53), 2 standard normals. */
/* The adaptive annealing step (weights.c) for log-likelihoods `loglik`, by the conditional ESS
 * given log-weights `logw` (NULL: the incremental ESS): c(Delta, ESS). For tests. */
SEXP ffi_annealing_step(SEXP loglik, SEXP logw, SEXP max_delta, SEXP target) {
  if (TYPEOF(loglik) != REALSXP || XLENGTH(loglik) < 2 || XLENGTH(loglik) > INT_MAX)
    sg_input_error("`loglik` must be a numeric vector of length >= 2.");
  const int n = (int) XLENGTH(loglik);
  if (logw != R_NilValue && (TYPEOF(logw) != REALSXP || XLENGTH(logw) != n))
    sg_input_error("`logw` must be NULL or a numeric vector as long as `loglik`.");
  const double md = sg_scalar_double(max_delta, "max_delta");
  const double tg = sg_scalar_double(target, "target");
  if (!(md > 0.0 && md <= 1.0)) sg_input_error("`max_delta` must be in (0, 1].");
  if (!(tg > 1.0 && tg < n)) sg_input_error("`target` must be in (1, length(loglik)).");
  double *work = (double *) R_alloc(n, sizeof(double)), ess;
  double delta = sg_annealing_step(REAL(loglik), logw == R_NilValue ? NULL : REAL(logw), n, md,
                                   tg, &ess, work);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, 2));
  REAL(out)[0] = delta;
  REAL(out)[1] = ess;
  UNPROTECT(1);
  return out;
}

SEXP ffi_rng_draws(SEXP key, SEXP a, SEXP b, SEXP n, SEXP kind, SEXP range) {
  const uint64_t k = sg_rng_key_from_state(key, "key");
  const double sa = sg_scalar_count(a, "a"), sb = sg_scalar_count(b, "b");
  const int len = sg_scalar_int(n, "n", 0), what = sg_scalar_int(kind, "kind", 0);
  const double r = sg_scalar_count(range, "range");
  if (what > 2) sg_input_error("`kind` must be 0, 1 or 2.");
  if (what == 1 && !(r >= 1.0 && r <= 9007199254740992.0))
    sg_input_error("`range` must be in [1, 2^53].");
  sg_rng rng;
  sg_rng_init(&rng, k, (uint64_t) sa, (uint64_t) sb);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, len));
  for (int i = 0; i < len; i++)
    REAL(out)[i] = what == 0 ? sg_rng_unif(&rng)
                 : what == 1 ? sg_rng_index_large(&rng, r)
                             : sg_rng_norm(&rng);
  UNPROTECT(1);
  return out;
}

/* A prior from its R description: a numeric matrix with one column per block and rows kind,
 * start (0-based), n, location, scale, df; checked by the core (sg_prior_check). */
sg_prior sg_prior_from_r(SEXP blocks, int dim) {
  if (TYPEOF(blocks) != REALSXP || !Rf_isMatrix(blocks) || Rf_nrows(blocks) != 6 ||
      Rf_ncols(blocks) < 1)
    sg_input_error("`model` is corrupt: its prior is not a prior description.");
  const int nb = Rf_ncols(blocks);
  const double *x = REAL(blocks);
  sg_prior_block *b = (sg_prior_block *) R_alloc(nb, sizeof(sg_prior_block));
  for (int i = 0; i < nb; i++) {
    const double *c = x + 6 * (size_t) i;
    for (int r = 0; r < 3; r++)
      if (!(c[r] >= 0 && c[r] <= INT_MAX && c[r] == floor(c[r])))
        sg_input_error("`model` is corrupt: its prior is not a prior description.");
    b[i].kind = (int) c[0];
    b[i].start = (int) c[1];
    b[i].n = (int) c[2];
    b[i].location = c[3];
    b[i].scale = c[4];
    b[i].dof = c[5];
  }
  sg_prior p = {nb, b};
  sg_status st = {SG_OK, ""};
  if (sg_prior_check(&p, dim, &st)) sg_raise(&st);
  return p;
}
