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
 * never leaves the constrained region and the next step heads back inside. */
#include "sgais.h"
#include <math.h>
#include <string.h>

static int preconditioned(const sg_precond *pc) {
  return pc != NULL && pc->kind != SG_PRECOND_NONE;
}

/* g is overwritten (it is scratch: the gradient at the rejected position). */
static void reflect(const sg_constraint *con, const sg_precond *pc, int dim, const double *at,
                    double *v, double *g) {
  con->log_lik(con->ctx, at, g);
  double *sg = g;
  if (preconditioned(pc)) {
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

int sg_sghmc_run(const sg_potential *pot, sg_constraint *c, int dim, double *theta,
                 double *v, double *grad, int steps, double eta, double alpha,
                 const sg_precond *pc) {
  const double v_sd = sqrt(eta), noise_sd = sqrt(2.0 * alpha * eta), keep = 1.0 - alpha;
  int reflections = 0;
  if (!preconditioned(pc)) {
    /* The paper's kernel, exactly (the "paper" presets depend on its arithmetic and draws). */
    for (int j = 0; j < dim; j++) v[j] = v_sd * norm_rand();
    for (int s = 0; s < steps; s++) {
      pot->grad_log_target(pot->ctx, theta, grad);
      if (c) memcpy(c->prev, theta, dim * sizeof(double));
      for (int j = 0; j < dim; j++) {
        v[j] = keep * v[j] + eta * grad[j] + noise_sd * norm_rand();
        theta[j] += v[j];
      }
      if (c) reflections += constrain(c, pc, dim, theta, v, grad);
    }
    return reflections;
  }

  double *xi = pc->work, *sgrad = pc->work + dim;
  for (int j = 0; j < dim; j++) v[j] = v_sd * norm_rand();
  sg_precond_factor_apply(pc, v);
  for (int s = 0; s < steps; s++) {
    pot->grad_log_target(pot->ctx, theta, grad);
    if (c) memcpy(c->prev, theta, dim * sizeof(double));
    for (int j = 0; j < dim; j++) xi[j] = noise_sd * norm_rand();
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
