/* Glue: the entry points of sgais_threads() (R/threads.R), and the hooks that look for an
 * interrupt or a time limit inside a parallel region (threads.h); the setting itself is
 * threads.c. */
#include "ffi.h"
#include "threads.h"
#include <R_ext/Utils.h>
#include <Rinterface.h>

/* The condition caught inside a parallel region, kept (preserved) until it is raised. */
static SEXP caught = NULL;

static SEXP check_body(void *data) {
  (void) data;
  R_CheckUserInterrupt(); /* also where R enforces setTimeLimit() */
  return R_NilValue;
}

static SEXP keep_condition(SEXP condition, void *data) {
  (void) data;
  if (caught == NULL) {
    R_PreserveObject(condition);
    caught = condition;
  }
  return R_NilValue;
}

/* An interrupt or error (a time limit) caught, not raised: R_tryCatch unwinds no further than
 * itself and, unlike R_ToplevelExec, prints nothing. */
static int catch_stop(void) {
  SEXP classes = PROTECT(Rf_allocVector(STRSXP, 2));
  SET_STRING_ELT(classes, 0, Rf_mkChar("interrupt"));
  SET_STRING_ELT(classes, 1, Rf_mkChar("error"));
  R_tryCatch(check_body, NULL, classes, keep_condition, NULL, NULL, NULL);
  UNPROTECT(1);
  return caught != NULL;
}

/* Raises what catch_stop() caught: the interrupt again, or the error as it was (stop(cond)). */
static void raise_stop(void) {
  if (caught == NULL) return;
  SEXP condition = PROTECT(caught);
  R_ReleaseObject(condition);
  caught = NULL;
  if (Rf_inherits(condition, "interrupt")) {
    UNPROTECT(1);
    Rf_onintr();
    return;
  }
  SEXP call = PROTECT(Rf_lang2(Rf_install("stop"), condition));
  Rf_eval(call, R_BaseEnv);
  UNPROTECT(2);
}

void sg_stop_hooks_init(void) {
  sg_stop_hooks hooks = {catch_stop, raise_stop};
  sg_stop_hooks_set(hooks);
}

SEXP ffi_threads_get(void) {
  return Rf_ScalarInteger(sg_threads());
}

/* Sets the number of threads (R checked `threads`: a whole number >= 0) and returns the
 * previous one. */
SEXP ffi_threads_set(SEXP threads) {
  int old = sg_threads();
  sg_threads_set(sg_scalar_int(threads, "threads", 0));
  return Rf_ScalarInteger(old);
}

SEXP ffi_threads_max(void) {
  return Rf_ScalarInteger(sg_threads_max());
}

/* The OpenMP version the package was built with (yyyymm, e.g. 201511), or 0 without OpenMP. */
SEXP ffi_threads_openmp(void) {
#ifdef _OPENMP
  return Rf_ScalarInteger(_OPENMP);
#else
  return Rf_ScalarInteger(0);
#endif
}

