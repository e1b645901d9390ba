/* Glue: the entry points of sgais_threads() (R/threads.R); the setting itself is threads.c. */
#include "ffi.h"
#include "threads.h"

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

