/* One adaptive annealing step, shared by SGAIS (per chunk) and AIS (on the full data):
 * choose Delta by the ESS of the incremental weights exp(Delta * loglik) (paper Algorithm 1
 * lines 6-8; thesis Alg. 6), update the log-weights by Delta * loglik and optionally resample
 * the particles systematically, setting the weights to their mean. */
#include "sgais.h"
#include <math.h>
#include <string.h>

void sg_anneal_scratch_alloc(sg_anneal_scratch *s, int M, int dim, int resample) {
  s->work = (double *) R_alloc(M, sizeof(double));
  s->ancestors = (int *) R_alloc(M, sizeof(int));
  s->copy = resample ? (double *) R_alloc((size_t) M * (dim + 1), sizeof(double)) : NULL;
}

double sg_anneal_reweight(double *theta, double *logw, double *loglik, int M, int dim,
                          double max_delta, double target_ess, int resample, double *ess,
                          sg_anneal_scratch *s) {
  double delta = sg_annealing_step(loglik, M, max_delta, target_ess, ess, s->work);
  for (int i = 0; i < M; i++) logw[i] += delta * loglik[i];
  if (resample) {
    sg_resample_systematic(logw, M, s->ancestors, s->work);
    double *theta_copy = s->copy, *loglik_copy = s->copy + (size_t) M * dim;
    memcpy(theta_copy, theta, (size_t) M * dim * sizeof(double));
    memcpy(loglik_copy, loglik, M * sizeof(double));
    for (int i = 0; i < M; i++) {
      memcpy(theta + (size_t) i * dim, theta_copy + (size_t) s->ancestors[i] * dim, dim * sizeof(double));
      loglik[i] = loglik_copy[s->ancestors[i]];
    }
    double mean = sg_log_sum_exp(logw, M) - log((double) M);
    for (int i = 0; i < M; i++) logw[i] = mean;
  }
  return delta;
}

int sg_check_loglik(const double *loglik, int M) {
  int all_zero = 1;
  for (int i = 0; i < M; i++) {
    if (ISNAN(loglik[i]) || loglik[i] == R_PosInf) return SG_LOGLIK_NOT_FINITE;
    if (loglik[i] > R_NegInf) all_zero = 0;
  }
  return all_zero ? SG_LOGLIK_ALL_ZERO : SG_LOGLIK_OK;
}

int sg_all_finite(const double *x, int n) {
  for (int j = 0; j < n; j++)
    if (!R_FINITE(x[j])) return 0;
  return 1;
}

sg_anneal_settings sg_anneal_settings_from_r(SEXP x) {
  sg_anneal_settings s;
  s.particles = sg_scalar_int(sg_list_get(x, "particles"), "particles", 2);
  s.sghmc_steps = sg_scalar_int(sg_list_get(x, "sghmc_steps"), "sghmc_steps", 0);
  s.resample = sg_scalar_int(sg_list_get(x, "resample"), "resample", 0);
  s.target_ess = sg_scalar_double(sg_list_get(x, "target_ess"), "target_ess");
  s.learning_rate = sg_scalar_double(sg_list_get(x, "learning_rate"), "learning_rate");
  s.momentum_decay = sg_scalar_double(sg_list_get(x, "momentum_decay"), "momentum_decay");
  if (!(s.target_ess > 1.0 && s.target_ess <= s.particles))
    Rf_errorcall(R_NilValue, "`target_ess` must be in (1, particles].");
  if (!(s.learning_rate > 0.0) || !R_FINITE(s.learning_rate))
    Rf_errorcall(R_NilValue, "`learning_rate` must be positive and finite.");
  if (!(s.momentum_decay > 0.0 && s.momentum_decay <= 1.0))
    Rf_errorcall(R_NilValue, "`momentum_decay` must be in (0, 1].");
  return s;
}
