/* Log-space weight utilities shared by every estimator and model (one log-sum-exp). */
#ifndef SG_WEIGHTS_H
#define SG_WEIGHTS_H

#include "rng.h"


double sg_log_sum_exp(const double *x, int n);
/* mean = the mean of the M rows of dim in theta, weighted by exp(logw) (normalised in log
 * space). */
void sg_weighted_mean(const double *theta, const double *logw, int M, int dim, double *mean);
/* ESS of the weights exp(scale * logw): (sum w)^2 / sum w^2. */
double sg_ess(const double *logw, int n, double scale, double *work);
/* Largest step in (0, max_delta] whose ESS reaches target: the incremental weights' ESS (paper
 * Section 3) with logw NULL, else the conditional ESS given the current log-weights logw. */
double sg_annealing_step(const double *loglik, const double *logw, int n, double max_delta,
                         double target, double *ess, double *work);
/* Systematic resampling with one uniform from rng: ancestors[i] drawn in proportion to
 * exp(logw); the _n form draws n_out ancestors among n_in particles. */
void sg_resample_systematic(const double *logw, int n, int *ancestors, double *work, sg_rng *rng);
void sg_resample_systematic_n(const double *logw, int n_in, int *ancestors, int n_out,
                              double *work, sg_rng *rng);
#endif
