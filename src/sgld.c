/* Stochastic gradient Langevin dynamics (Welling & Teh 2011; thesis Alg. 3; slides "SGLD"):
 *   theta <- theta + (eta / 2) grad log f(theta) + N(0, eta),
 * with grad log f the estimator's potential gradient (a mini-batch estimate in SGAIS, exact in
 * AIS), and, preconditioned (inverse mass Sigma = L L', precond.c), in the whitened coordinates
 * z = L^-1 theta: theta <- theta + (eta / 2) Sigma grad log f + sqrt(eta) L xi. The step
 * conventions are the SGHMC kernel's: eta = h^2 moves about h target widths per step (the
 * noise), or the paper's learning_rate / n. Unadjusted, on a Gaussian target of unit width the
 * chain's stationary variance is 1 / (1 - eta / 4) per whitened direction (2.3% too wide at
 * h = 0.3), and where the whitened target is narrower than the metric says (a poor metric, a
 * non-Gaussian posterior) the step can be past the stability limit eta < 4 / curvature, where
 * the particles heat without bound and log Z-hat is absurd (inst/design.md).
 *
 * So where the potential is exact (pot->log_target: AIS, SGAIS's early phase) and the
 * integrator is BAOAB (the robust presets; kernel.h), the step is Metropolis-adjusted: the
 * Metropolis-adjusted Langevin algorithm (MALA; Roberts & Tweedie 1996), whose step the
 * estimators adapt towards 57.4% acceptance (Roberts & Rosenthal 1998), as they adapt
 * generalised HMC's (sghmc.c). SGLD proper is then what runs on mini-batch gradients. */
#include "kernel.h"
#include <math.h>
#include <string.h>

/* out = L' g (whitened gradient), or g without a metric */
static void whiten(const sg_precond *pc, const double *g, double *out, int dim) {
  if (pc) sg_precond_factor_transpose_apply(pc, g, out);
  else memcpy(out, g, dim * sizeof(double));
}

/* MALA in the metric Sigma = L L': in whitened coordinates the proposal is
 *   z' = z + (eta / 2) g + sqrt(eta) xi,   g = L' grad log f(theta),
 * and the reverse proposal's residual z - z' - (eta / 2) g' = -(sqrt(eta) xi + (eta / 2)(g + g')),
 * so log q(theta | theta') - log q(theta' | theta) = (|xi|^2 - |xi + sqrt(eta) (g + g') / 2|^2) / 2.
 * work: theta, grad and g before the step, then xi (4 dim); v: scratch of dim. */
static void mala_run(const sg_potential *pot, int dim, double *theta, double *v, double *grad,
                     int steps, sg_kernel *k) {
  const double eta = k->eta, sd = sqrt(eta);
  const sg_precond *pc = sg_kernel_metric(k);
  double *theta0 = k->work, *grad0 = k->work + dim, *g0 = k->work + 2 * dim,
         *xi = k->work + 3 * dim;
  k->accepted = 0;
  if (steps == 0) return;
  double lf = pot->log_target(pot->ctx, theta, grad);
  whiten(pc, grad, g0, dim);
  for (int s = 0; s < steps && !sg_interrupt_poll(); s++) {
    memcpy(theta0, theta, dim * sizeof(double));
    memcpy(grad0, grad, dim * sizeof(double));
    double xi2 = 0.0;
    for (int j = 0; j < dim; j++) {
      xi[j] = sg_rng_norm(k->rng);
      xi2 += xi[j] * xi[j];
      v[j] = 0.5 * eta * g0[j] + sd * xi[j];
    }
    if (pc) sg_precond_factor_apply(pc, v);
    for (int j = 0; j < dim; j++) theta[j] += v[j];
    /* a step out of the particles' region C is rejected (kernel.h, sg_left_region) */
    double lf1 = sg_left_region(pot, theta) ? R_NegInf : pot->log_target(pot->ctx, theta, grad);
    whiten(pc, grad, v, dim);
    double back2 = 0.0;
    for (int j = 0; j < dim; j++) {
      double r = xi[j] + 0.5 * sd * (g0[j] + v[j]);
      back2 += r * r;
    }
    double log_ratio = lf1 - lf + 0.5 * (xi2 - back2);
    if (log(sg_rng_unif(k->rng)) < log_ratio) { /* NaN (a diverged step) is rejected */
      lf = lf1;
      memcpy(g0, v, dim * sizeof(double));
      k->accepted++;
    } else {
      memcpy(theta, theta0, dim * sizeof(double));
      memcpy(grad, grad0, dim * sizeof(double));
    }
  }
}

void sg_sgld_run(const sg_potential *pot, int dim, double *theta, double *v, double *grad,
                 int steps, sg_kernel *k) {
  if (k->integrator == SG_INTEGRATOR_BAOAB && pot->log_target) {
    mala_run(pot, dim, theta, v, grad, steps, k);
    return;
  }
  k->accepted = 0;
  const double eta = k->eta, noise_sd = sqrt(eta);
  const sg_precond *pc = sg_kernel_metric(k);
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
