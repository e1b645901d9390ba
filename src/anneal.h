/* The annealing layer shared by SGAIS and AIS: settings, one adaptive reweighting step with
 * resampling, and the particles' sanity checks. */
#ifndef SG_ANNEAL_H
#define SG_ANNEAL_H

#include "kernel.h"

/* The tuning values of the annealing samplers (SGAIS, AIS), read from the R settings list by
 * name and re-checked by sg_anneal_settings_from_r() (ffi.h); the messages name the argument. resample_ess: resample before the moves
 * when the weight ESS falls below resample_ess * particles (0 never, 1 at every step). */
typedef struct {
  int particles;
  double target_ess, resample_ess;
  int conditional_ess; /* the step's criterion: conditional ESS (1) or incremental ESS (0) */
  sg_move_settings move;
} sg_anneal_settings;

/* Scratch for sg_anneal_reweight (R_alloc'ed), and the stream its resampling draws from (set
 * by the caller). */
typedef struct {
  double *work, *copy;
  int *ancestors;
  sg_rng *rng;
} sg_anneal_scratch;
void sg_anneal_scratch_alloc(sg_anneal_scratch *s, int M, int dim);
/* One adaptive annealing step shared by SGAIS and AIS: Delta in (0, max_delta] by the ESS of the
 * incremental weights, or with conditional_ess their conditional ESS given logw (weights.h;
 * reported in *ess), logw += Delta * loglik; then, when pc is not NULL,
 * the preconditioner from the reweighted particles; then, if the weight ESS is below
 * resample_ess * M (or resample_ess >= 1), systematic resampling of the particles theta (M rows
 * of dim) and of loglik with the weights set to their mean (*resampled = 1). Returns Delta. */
double sg_anneal_reweight(double *theta, double *logw, double *loglik, int M, int dim,
                          double max_delta, double target_ess, double resample_ess,
                          int conditional_ess, double *ess, int *resampled, sg_precond *pc,
                          sg_anneal_scratch *s);
/* Particle sanity checks shared by the annealing samplers; callers word the error. */
enum { SG_LOGLIK_OK = 0, SG_LOGLIK_NOT_FINITE = 1, SG_LOGLIK_ALL_ZERO = 2 };
int sg_check_loglik(const double *loglik, int M); /* NaN or +Inf; or all -Inf */

#endif
