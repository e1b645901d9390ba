/* Stochastic gradient Langevin dynamics (Welling & Teh 2011; thesis Alg. 3; slides "SGLD"):
 *   theta <- theta + (eta / 2) grad log f(theta) + N(0, eta),
 * with grad log f the estimator's potential gradient (a mini-batch estimate in SGAIS, exact in
 * AIS), and, preconditioned (inverse mass Sigma = L L', precond.c), in the whitened coordinates
 * z = L^-1 theta: theta <- theta + (eta / 2) Sigma grad log f + sqrt(eta) L xi. The step
 * conventions are the SGHMC kernel's: eta = h^2 moves about h target widths per step (the
 * noise), or the paper's learning_rate / n. No Metropolis test: on a Gaussian target of unit
 * width the chain's stationary variance is 1 / (1 - eta / 4) per whitened direction (2.3% too
 * wide at h = 0.3), an error SGHMC's BAOAB integrator does not make. */
#include "kernel.h"
#include <math.h>

void sg_sgld_run(const sg_potential *pot, int dim, double *theta, double *grad, int steps,
                 sg_kernel *k) {
  const double eta = k->eta, noise_sd = sqrt(eta);
  const sg_precond *pc = (k->pc && k->pc->kind != SG_PRECOND_NONE) ? k->pc : NULL;
  double *xi = k->work, *sgrad = k->work + dim;
  for (int s = 0; s < steps && !sg_interrupt_poll(); s++) {
    pot->grad_log_target(pot->ctx, theta, grad);
    for (int j = 0; j < dim; j++) xi[j] = sg_rng_norm(k->rng);
    if (pc) {
      sg_precond_apply(pc, grad, sgrad);
      sg_precond_factor_apply(pc, xi);
    } else {
      for (int j = 0; j < dim; j++) sgrad[j] = grad[j];
    }
    for (int j = 0; j < dim; j++) theta[j] += 0.5 * eta * sgrad[j] + noise_sd * xi[j];
  }
}
