/* The one SGHMC kernel of the package (paper eq. 3; thesis Alg. 4, eq. 2.52-2.54), used by
 * every estimator on the potential it builds from the model interface. With beta-hat = 0:
 *   v ~ N(0, eta)                                        (fresh momentum for each run)
 *   v <- (1 - alpha) v + eta * grad log f(theta) + N(0, 2 alpha eta)
 *   theta <- theta + v
 * where grad log f = -grad U may be a stochastic (mini-batch) estimate. */
#include "sgais.h"
#include <math.h>

void sg_sghmc_run(const sg_potential *pot, int dim, double *theta, double *v, double *grad,
                  int steps, double eta, double alpha) {
  const double v_sd = sqrt(eta), noise_sd = sqrt(2.0 * alpha * eta), keep = 1.0 - alpha;
  for (int j = 0; j < dim; j++) v[j] = v_sd * norm_rand();
  for (int s = 0; s < steps; s++) {
    pot->grad_log_target(pot->ctx, theta, grad);
    for (int j = 0; j < dim; j++) {
      v[j] = keep * v[j] + eta * grad[j] + noise_sd * norm_rand();
      theta[j] += v[j];
    }
  }
}
