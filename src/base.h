/* The base layer of the sgais C core: R's headers, and the status through which the cores
 * report errors.
 *
 * The core (models, kernel, estimators) takes and returns plain C types and never raises an R
 * error itself: a function that can fail returns a status code and describes the failure in an
 * sg_status, and the entry points (ffi.h) turn it into a classed R condition (R/checks.R,
 * core_error()). Memory comes from R_alloc, which R frees when the .Call returns or an error
 * or interrupt unwinds it. The layers, each with its header, include the one below:
 *   base.h -> weights.h (log-space utilities) -> model.h (model interface, priors, built-in
 *   models) -> kernel.h (SGHMC, preconditioner, move settings) -> anneal.h (adaptive annealing)
 *   -> ffi.h (R objects in and out; entry points). */
#ifndef SG_BASE_H
#define SG_BASE_H

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Random.h>

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
