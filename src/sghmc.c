/* The one SGHMC kernel of the package (paper eq. 3; thesis Alg. 4, eq. 2.52-2.54), used by
 * every estimator on the potential it builds from the model interface. With beta-hat = 0:
 *   v ~ N(0, eta)                                        (fresh momentum for each run)
 *   v <- (1 - alpha) v + eta * grad log f(theta) + N(0, 2 alpha eta)
 *   theta <- theta + v
 * where grad log f = -grad U may be a stochastic (mini-batch) estimate.
 *
 * Preconditioned (inverse mass Sigma = L L', estimated from the particles; precond.c): the same
 * dynamics in the coordinates z = L^-1 theta, written in theta:
 *   v ~ N(0, eta Sigma);  v <- (1 - alpha) v + eta Sigma grad log f + N(0, 2 alpha eta Sigma).
 * In z the target has about unit width, so eta = h^2 moves about h widths per step and
 * alpha = 2h is near critical damping of the slowest direction.
 *
 * Constrained sampling (nested sampling, paper Appendix A.1): after each position update the
 * constraint log L(theta) > threshold is checked with the exact likelihood. If the new position
 * violates it, the move is undone (theta returns to the previous, admissible position, as in
 * Galilean Monte Carlo) and the velocity is reflected off the contour in the metric of Sigma,
 *   v <- v - 2 (v . g) / (g' Sigma g) Sigma g,   g = grad log L at the rejected position
 * (the reflection v_z <- v_z - 2 (v_z . n) n of z-space with n = L' g / |L' g|), so the particle
 * never leaves the constrained region and the next step heads back inside.
 *
 * Integrators. SG_INTEGRATOR_EULER is the update above (the paper's). Its stationary position
 * variance on a Gaussian is too large by O(eta) (0.3% at h = 0.1, 1.3% at h = 0.2 per whitened
 * direction, more where a noisy preconditioner leaves the whitened target stiffer), and every
 * chunk's predictive then loses about p eps / 2 of its log.
 * SG_INTEGRATOR_BAOAB is the splitting of Leimkuhler & Matthews (2013) in whitened momentum u
 * (theta velocity L u, step h = sqrt(eta), c = 1 - alpha):
 *   B: u += h/2 L' grad;  A: theta += h/2 L u;  O: u = c u + sqrt(1 - c^2) xi;  A;  B
 * whose position marginal is exact on Gaussian targets at any stable step (h sqrt(lambda_max) <
 * 2), so its error on near-Gaussian posteriors is far below Euler's. It costs one gradient more
 * per run (the first B).
 * When the potential is exact (AIS; SGAIS while it uses all earlier data) the robust kernel is
 * instead generalised HMC (Horowitz 1991), O(h/2) [B A B + Metropolis test] O(h/2) per step:
 * a rejected step restores the position and flips the momentum. It leaves f exactly invariant
 * at any step, and a step that would diverge (a funnel, a stiff direction the preconditioner
 * missed) is rejected rather than taken, and so is a step out of the region C a mixture's
 * particles were relabelled into (kernel.h, sg_left_region). */
#include "kernel.h"
#include <math.h>
#include <string.h>

/* g is overwritten (it is scratch: the gradient at the rejected position). */
static void reflect(const sg_constraint *con, const sg_precond *pc, int dim, const double *at,
                    double *v, double *g) {
  con->log_lik(con->ctx, at, g);
  double *sg = g;
  if (pc) {
    sg = pc->work + dim;
    sg_precond_apply(pc, g, sg);
  }
  double norm2 = 0.0, dot = 0.0;
  for (int j = 0; j < dim; j++) {
    norm2 += g[j] * sg[j];
    dot += v[j] * g[j];
  }
  if (!(norm2 > 0.0) || !R_FINITE(norm2)) {
    /* No usable normal (flat or non-finite likelihood): reverse the velocity instead. */
    for (int j = 0; j < dim; j++) v[j] = -v[j];
    return;
  }
  double c = 2.0 * dot / norm2;
  for (int j = 0; j < dim; j++) v[j] -= c * sg[j];
}

/* Undo a step that left the constrained region and reflect; returns 1 if it did. */
static int constrain(sg_constraint *c, const sg_precond *pc, int dim, double *theta, double *v,
                     double *grad) {
  double ll = c->log_lik(c->ctx, theta, NULL);
  if (ll > c->threshold) {
    c->value = ll;
    return 0;
  }
  reflect(c, pc, dim, theta, v, grad); /* grad is free scratch until the next step */
  memcpy(theta, c->prev, dim * sizeof(double));
  return 1;
}

/* u += half L' g (L = identity without a preconditioner); t is scratch of dim. */
static void kick(const sg_precond *pc, int dim, const double *g, double half, double *u,
                 double *t) {
  if (!pc) {
    for (int j = 0; j < dim; j++) u[j] += half * g[j];
  } else {
    sg_precond_factor_transpose_apply(pc, g, t);
    for (int j = 0; j < dim; j++) u[j] += half * t[j];
  }
}

/* theta += half L u; t is scratch of dim. */
static void drift(const sg_precond *pc, int dim, const double *u, double half, double *theta,
                  double *t) {
  memcpy(t, u, dim * sizeof(double));
  if (pc) sg_precond_factor_apply(pc, t);
  for (int j = 0; j < dim; j++) theta[j] += half * t[j];
}

/* BAOAB (see the top of the file); u is the whitened momentum, the gradient at the current
 * position is carried from one step's last B to the next step's first. */
static int baoab_run(const sg_potential *pot, sg_constraint *c, int dim, double *theta, double *u,
                     double *grad, int steps, double eta, double alpha, const sg_precond *pc,
                     double *t, sg_rng *rng) {
  const double h = sqrt(eta), keep = 1.0 - alpha, noise_sd = sqrt(1.0 - keep * keep);
  int reflections = 0;
  if (steps == 0) return 0;
  for (int j = 0; j < dim; j++) u[j] = sg_rng_norm(rng);
  pot->grad_log_target(pot->ctx, theta, grad);
  for (int s = 0; s < steps && !sg_interrupt_poll(); s++) {
    if (c) memcpy(c->prev, theta, dim * sizeof(double));
    kick(pc, dim, grad, 0.5 * h, u, t);
    drift(pc, dim, u, 0.5 * h, theta, t);
    for (int j = 0; j < dim; j++) u[j] = keep * u[j] + noise_sd * sg_rng_norm(rng);
    drift(pc, dim, u, 0.5 * h, theta, t);
    if (c) {
      double ll = c->log_lik(c->ctx, theta, NULL);
      if (ll > c->threshold) {
        c->value = ll;
      } else {
        /* undo and reflect u off the contour in the whitened coordinates: n = L' g / |L' g| */
        c->log_lik(c->ctx, theta, grad);
        if (pc) sg_precond_factor_transpose_apply(pc, grad, t);
        else memcpy(t, grad, dim * sizeof(double));
        double norm2 = 0.0, dot = 0.0;
        for (int j = 0; j < dim; j++) {
          norm2 += t[j] * t[j];
          dot += u[j] * t[j];
        }
        if (norm2 > 0.0 && R_FINITE(norm2)) {
          for (int j = 0; j < dim; j++) u[j] -= 2.0 * dot / norm2 * t[j];
        } else {
          for (int j = 0; j < dim; j++) u[j] = -u[j];
        }
        memcpy(theta, c->prev, dim * sizeof(double));
        reflections++;
      }
    }
    pot->grad_log_target(pot->ctx, theta, grad);
    kick(pc, dim, grad, 0.5 * h, u, t);
  }
  return reflections;
}

/* Generalised HMC with an exact potential (see the top of the file); u is the whitened
 * momentum. work holds theta, grad and u before each step (3 dim after the first dim). */
static void ghmc_run(const sg_potential *pot, int dim, double *theta, double *u, double *grad,
                     int steps, sg_kernel *k) {
  const double h = sqrt(k->eta), c = sqrt(1.0 - k->alpha), noise_sd = sqrt(1.0 - c * c);
  const sg_precond *pc = sg_kernel_metric(k); /* NULL: none */
  sg_rng *rng = k->rng;
  double *t = k->work, *theta0 = k->work + dim, *grad0 = k->work + 2 * dim, *u0 = k->work + 3 * dim;
  k->accepted = 0;
  if (steps == 0) return;
  for (int j = 0; j < dim; j++) u[j] = sg_rng_norm(rng);
  double lf = pot->log_target(pot->ctx, theta, grad);
  for (int s = 0; s < steps && !sg_interrupt_poll(); s++) {
    for (int j = 0; j < dim; j++) u[j] = c * u[j] + noise_sd * sg_rng_norm(rng);
    memcpy(theta0, theta, dim * sizeof(double));
    memcpy(grad0, grad, dim * sizeof(double));
    memcpy(u0, u, dim * sizeof(double));
    double kin0 = 0.0, kin1 = 0.0;
    for (int j = 0; j < dim; j++) kin0 += u[j] * u[j];
    kick(pc, dim, grad, 0.5 * h, u, t);
    drift(pc, dim, u, h, theta, t);
    /* a step out of the particles' region C is rejected (kernel.h, sg_left_region) */
    const int left = sg_left_region(pot, theta);
    double lf1 = left ? R_NegInf : pot->log_target(pot->ctx, theta, grad);
    if (!left) kick(pc, dim, grad, 0.5 * h, u, t);
    for (int j = 0; j < dim; j++) kin1 += u[j] * u[j];
    double log_ratio = (lf1 - 0.5 * kin1) - (lf - 0.5 * kin0);
    if (log(sg_rng_unif(rng)) < log_ratio) { /* NaN (a diverged step) is rejected */
      lf = lf1;
      k->accepted++;
    } else {
      memcpy(theta, theta0, dim * sizeof(double));
      memcpy(grad, grad0, dim * sizeof(double));
      for (int j = 0; j < dim; j++) u[j] = -u0[j];
    }
    for (int j = 0; j < dim; j++) u[j] = c * u[j] + noise_sd * sg_rng_norm(rng);
  }
}

int sg_sghmc_run(const sg_potential *pot, sg_constraint *c, int dim, double *theta,
                 double *v, double *grad, int steps, sg_kernel *k) {
  const double eta = k->eta, alpha = k->alpha;
  const sg_precond *pc = sg_kernel_metric(k); /* NULL: none */
  sg_rng *rng = k->rng;
  if (k->integrator == SG_INTEGRATOR_BAOAB) {
    if (pot->log_target && !c) {
      ghmc_run(pot, dim, theta, v, grad, steps, k);
      return 0;
    }
    return baoab_run(pot, c, dim, theta, v, grad, steps, eta, alpha, pc, k->work, k->rng);
  }
  const double v_sd = sqrt(eta), noise_sd = sqrt(2.0 * alpha * eta), keep = 1.0 - alpha;
  int reflections = 0;
  if (!pc) {
    /* The paper's kernel, exactly. */
    for (int j = 0; j < dim; j++) v[j] = v_sd * sg_rng_norm(rng);
    for (int s = 0; s < steps && !sg_interrupt_poll(); s++) {
      pot->grad_log_target(pot->ctx, theta, grad);
      if (c) memcpy(c->prev, theta, dim * sizeof(double));
      for (int j = 0; j < dim; j++) {
        v[j] = keep * v[j] + eta * grad[j] + noise_sd * sg_rng_norm(rng);
        theta[j] += v[j];
      }
      if (c) reflections += constrain(c, pc, dim, theta, v, grad);
    }
    return reflections;
  }

  double *xi = pc->work, *sgrad = pc->work + dim;
  for (int j = 0; j < dim; j++) v[j] = v_sd * sg_rng_norm(rng);
  sg_precond_factor_apply(pc, v);
  for (int s = 0; s < steps && !sg_interrupt_poll(); s++) {
    pot->grad_log_target(pot->ctx, theta, grad);
    if (c) memcpy(c->prev, theta, dim * sizeof(double));
    for (int j = 0; j < dim; j++) xi[j] = noise_sd * sg_rng_norm(rng);
    sg_precond_factor_apply(pc, xi);
    sg_precond_apply(pc, grad, sgrad);
    for (int j = 0; j < dim; j++) {
      v[j] = keep * v[j] + eta * sgrad[j] + xi[j];
      theta[j] += v[j];
    }
    if (c) reflections += constrain(c, pc, dim, theta, v, grad);
  }
  return reflections;
}
