/* The base layer of the sgais C core: the status through which the core reports errors, and
 * the parts of R's runtime it uses.
 *
 * The core (models, kernels, estimators) takes and returns plain C types and never raises an R
 * error itself: a function that can fail returns a status code and describes the failure in an
 * sg_status, and the glue files (ffi.h, *_r.c) turn it into a classed R condition (R/checks.R,
 * core_error()). Memory comes from R_alloc, which R frees when the .Call returns or an error
 * or interrupt unwinds it. The layers, each with its header, include the one below:
 *   base.h -> rng.h, threads.h -> weights.h (log-space utilities) -> model.h (model interface,
 *   priors, built-in models) -> kernel.h (kernels, preconditioner, move settings) -> anneal.h
 *   (adaptive annealing) -> estimators.h (SGAIS, AIS, nested sampling) -> ffi.h (glue: R
 *   objects in and out, entry points); linear_search.h (variable selection) sits on weights.h
 *   and threads.h, beside model.h. src/README.md lists the files of each layer, and
 *   tools/check-layers.R (run by CI) checks that no core object reads or builds R objects or
 *   calls a glue file, and that no object files call each other in a circle. */
#ifndef SG_BASE_H
#define SG_BASE_H

/* Only R's runtime services, none of its objects: memory (R_alloc), IEEE values (R_finite,
 * R_NaReal, R_PosInf), the math library (Rmath.h). Glue files (ffi.h) add Rinternals.h. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <R_ext/Arith.h>
#include <R_ext/Memory.h>
#include <Rmath.h>
/* An index into a long vector (sg_index on the platforms R runs on). */
typedef ptrdiff_t sg_index;

/* Status codes; each is a subclass of `sgais_error` in R (core_error()). */
enum {
  SG_OK = 0,
  SG_ERR_MODEL = 1,      /* a model's function failed or returned nonsense: sgais_error_model */
  SG_ERR_LIKELIHOOD = 2, /* NaN or +Inf likelihood, or zero for every particle: sgais_error_likelihood */
  SG_ERR_DIVERGED = 3,   /* the sampler's moves broke down: sgais_error_divergence */
  SG_ERR_ANNEALING = 4,  /* annealing did not finish: sgais_error_annealing */
  SG_ERR_INPUT = 5       /* an argument or object the core cannot use: sgais_error_input */
};

#define SG_MESSAGE_LEN 1024
typedef struct {
  int code;
  char message[SG_MESSAGE_LEN];
} sg_status;

/* Records a failure (printf-style message) unless one is recorded already, so the first cause
 * is the one reported (a model error, not the NaN it leads to). Returns the recorded code. */
int sg_fail(sg_status *st, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Wall-clock seconds from an arbitrary origin. */
double sg_now(void);
int sg_all_finite(const double *x, int n);

#endif
