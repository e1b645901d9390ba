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

sg_move_settings sg_move_settings_from_r(SEXP x) {
  sg_move_settings s;
  s.steps = sg_scalar_int(sg_list_get(x, "sghmc_steps"), "sghmc_steps", 0);
  s.min_steps = sg_scalar_int(sg_list_get(x, "min_sghmc_steps"), "min_sghmc_steps", 0);
  s.scale = sg_scalar_int(sg_list_get(x, "step_scale"), "step_scale", 0);
  s.preconditioner = sg_scalar_int(sg_list_get(x, "preconditioner"), "preconditioner", 0);
  s.learning_rate = sg_scalar_double(sg_list_get(x, "learning_rate"), "learning_rate");
  s.step_size = sg_scalar_double(sg_list_get(x, "step_size"), "step_size");
  s.momentum_decay = sg_scalar_double(sg_list_get(x, "momentum_decay"), "momentum_decay");
  s.integrator = sg_scalar_int(sg_list_get(x, "integrator"), "integrator", 0);
  if (s.integrator > SG_INTEGRATOR_BAOAB) sg_input_error("`integrator` is not a known integrator.");
  if (s.min_steps > s.steps)
    sg_input_error("`min_sghmc_steps` must not exceed `sghmc_steps`.");
  if (s.scale > SG_STEP_WIDTH) sg_input_error("`step_scale` is not a known scale.");
  if (s.preconditioner > SG_PRECOND_DENSE)
    sg_input_error("`preconditioner` is not a known preconditioner.");
  if (s.scale == SG_STEP_PER_OBSERVATION) s.preconditioner = SG_PRECOND_NONE;
  if (!(s.learning_rate > 0.0) || !R_FINITE(s.learning_rate))
    sg_input_error("`learning_rate` must be positive and finite.");
  if (!(s.step_size > 0.0) || !R_FINITE(s.step_size))
    sg_input_error("`step_size` must be positive and finite.");
  if (!(s.momentum_decay > 0.0 && s.momentum_decay <= 1.0))
    sg_input_error("`momentum_decay` must be in (0, 1].");
  /* the kernel and its MH test (c_settings() gives fits made before kernels were a setting
   * SGHMC) */
  s.kernel = sg_scalar_int(sg_list_get(x, "kernel"), "kernel", 0);
  if (s.kernel > SG_KERNEL_FLYMC) sg_input_error("`kernel` is not a known kernel.");
  s.mh_batch = 100;
  s.mh_tolerance = 0.05;
  s.mh_bound = SG_BOUND_BERNSTEIN;
  if (s.kernel == SG_KERNEL_AUSTERITY || s.kernel == SG_KERNEL_CONFIDENCE) {
    s.mh_batch = sg_scalar_int(sg_list_get(x, "mh_batch_size"), "mh_batch_size", 2);
    s.mh_tolerance = sg_scalar_double(sg_list_get(x, "mh_tolerance"), "mh_tolerance");
    s.mh_bound = sg_scalar_int(sg_list_get(x, "mh_bound"), "mh_bound", 0);
    if (!(s.mh_tolerance > 0.0 && s.mh_tolerance < 1.0))
      sg_input_error("`mh_tolerance` must be in (0, 1).");
    if (s.mh_bound > SG_BOUND_HOEFFDING) sg_input_error("`mh_bound` is not a known bound.");
  }
  if (sg_kernel_random_walk(s.kernel) && s.scale != SG_STEP_WIDTH)
    sg_input_error("the Metropolis-Hastings kernels need `step_scale = \"width\"`.");
  s.jumps = sg_scalar_int(sg_list_get(x, "jumps"), "jumps", 0);
  s.max_rounds = sg_scalar_int(sg_list_get(x, "max_rounds"), "max_rounds", 1);
  s.max_correlation = sg_scalar_double(sg_list_get(x, "max_correlation"), "max_correlation");
  if (!(s.max_correlation >= 0.0 && s.max_correlation <= 1.0))
    sg_input_error("`max_correlation` must be in [0, 1].");
  s.base_step = s.step_size; /* until sg_move_settings_for() knows the dimension */
  return s;
}

sg_anneal_settings sg_anneal_settings_from_r(SEXP x) {
  sg_anneal_settings s;
  s.particles = sg_scalar_int(sg_list_get(x, "particles"), "particles", 2);
  s.target_ess = sg_scalar_double(sg_list_get(x, "target_ess"), "target_ess");
  s.resample_ess = sg_scalar_double(sg_list_get(x, "resample_ess"), "resample_ess");
  s.conditional_ess = sg_scalar_int(sg_list_get(x, "conditional_ess"), "conditional_ess", 0);
  if (s.conditional_ess > 1) sg_input_error("`conditional_ess` must be 0 or 1.");
  s.score_cv = sg_scalar_int(sg_list_get(x, "score_control_variate"), "score_control_variate", 0);
  if (s.score_cv > 1) sg_input_error("`score_control_variate` must be 0 or 1.");
  s.move = sg_move_settings_from_r(x);
  if (!(s.target_ess > 1.0 && s.target_ess < s.particles))
    sg_input_error("`target_ess` must be in (1, particles).");
  if (!(s.resample_ess >= 0.0 && s.resample_ess <= 1.0))
    sg_input_error("`resample_ess` must be in [0, 1].");
  return s;
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
