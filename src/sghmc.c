/* The one SGHMC kernel of the package (paper eq. 3; thesis Alg. 4, eq. 2.52-2.54), used by
 * every estimator on the potential it builds from the model interface. With beta-hat = 0:
 *   v ~ N(0, eta)                                        (fresh momentum for each run)
 *   v <- (1 - alpha) v + eta * grad log f(theta) + N(0, 2 alpha eta)
 *   theta <- theta + v
 * where grad log f = -grad U may be a stochastic (mini-batch) estimate.
 *
 * Constrained sampling (nested sampling, paper Appendix A.1): after each position update the
 * constraint log L(theta) > threshold is checked with the exact likelihood. If the new position
 * violates it, the move is undone (theta returns to the previous, admissible position, as in
 * Galilean Monte Carlo) and the velocity is reflected off the contour,
 *   v <- v - 2 (v . n) n,   n = grad log L / |grad log L| at the rejected position,
 * so the particle never leaves the constrained region and the next step heads back inside. */
#include "sgais.h"
#include <math.h>
#include <string.h>

static void reflect(const sg_constraint *con, int dim, const double *at, double *v, double *n) {
  con->log_lik(con->ctx, at, n);
  double norm2 = 0.0, dot = 0.0;
  for (int j = 0; j < dim; j++) {
    norm2 += n[j] * n[j];
    dot += v[j] * n[j];
  }
  if (!(norm2 > 0.0) || !R_FINITE(norm2)) {
    /* No usable normal (flat or non-finite likelihood): reverse the velocity instead. */
    for (int j = 0; j < dim; j++) v[j] = -v[j];
    return;
  }
  double c = 2.0 * dot / norm2;
  for (int j = 0; j < dim; j++) v[j] -= c * n[j];
}

int sg_sghmc_run(const sg_potential *pot, sg_constraint *c, int dim, double *theta,
                 double *v, double *grad, int steps, double eta, double alpha) {
  const double v_sd = sqrt(eta), noise_sd = sqrt(2.0 * alpha * eta), keep = 1.0 - alpha;
  int reflections = 0;
  for (int j = 0; j < dim; j++) v[j] = v_sd * norm_rand();
  for (int s = 0; s < steps; s++) {
    pot->grad_log_target(pot->ctx, theta, grad);
    if (c) memcpy(c->prev, theta, dim * sizeof(double));
    for (int j = 0; j < dim; j++) {
      v[j] = keep * v[j] + eta * grad[j] + noise_sd * norm_rand();
      theta[j] += v[j];
    }
    if (c) {
      double ll = c->log_lik(c->ctx, theta, NULL);
      if (ll > c->threshold) {
        c->value = ll;
      } else {
        reflect(c, dim, theta, v, grad); /* grad is free scratch until the next step */
        memcpy(theta, c->prev, dim * sizeof(double));
        reflections++;
      }
    }
  }
  return reflections;
}
