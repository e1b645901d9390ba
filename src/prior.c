/* Prior building blocks shared by the built-in models and the models users write in R or C
 * (R/prior.R describes them): independent priors on consecutive parameters. Scale parameters
 * are sampled on the log scale, theta = log sigma, so their blocks include the log-Jacobian
 * log |d sigma / d theta| = theta and every estimator sees a density on the whole real line. */
#include "model.h"
#include <limits.h>
#include <math.h>
#include <Rmath.h>

#define LOG_SQRT_2PI 0.918938533204672741780329736406 /* log(2 pi) / 2 */
#define LOG_SQRT_PI_2 0.225791352644727432363097614947 /* log(pi / 2) / 2 */

int sg_lkj_dim(int n) {
  for (int q = 2; q <= 64; q++)
    if (q * (q - 1) / 2 == n) return q;
  return 0;
}

/* The Beta(b, b) shape, on (z + 1) / 2, of a canonical partial correlation in column j (0-based)
 * of a q x q matrix under LKJ(eta): b = eta + (q - 2 - j) / 2; the CPCs are independent
 * (Lewandowski, Kurowicka & Joe 2009, Section 3.2). */
static inline double lkj_shape(double eta, int q, int j) {
  return eta + 0.5 * (q - 2 - j);
}

/* log(1 - tanh(u)^2) = 2 log(2 / (e^u + e^-u)), without overflow for large |u| */
static inline double log1m_tanh2(double u) {
  const double a = fabs(u);
  return 2.0 * (M_LN2 - a - log1p(exp(-2.0 * a)));
}

void sg_lkj_cholesky(const double *u, int q, double *L) {
  for (int i = 0, at = 0; i < q; i++) {
    double s = 1.0;
    for (int j = 0; j < i; j++, at++) {
      const double z = tanh(u[at]);
      L[i * q + j] = z * s;
      s *= sqrt(1.0 - z * z);
    }
    L[i * q + i] = s;
    for (int j = i + 1; j < q; j++) L[i * q + j] = 0.0;
  }
}

int sg_correlation_cholesky(const double *cor, int q, double *L, sg_status *st) {
  for (int k = 0; k < q; k++) {
    if (cor[k * q + k] != 1.0)
      return sg_fail(st, SG_ERR_INPUT, "`group_cor` must have a unit diagonal.");
    for (int l = 0; l <= k; l++) {
      double v = cor[k * q + l];
      if (!R_FINITE(v) || v != cor[l * q + k])
        return sg_fail(st, SG_ERR_INPUT, "`group_cor` must be finite and symmetric.");
      for (int r = 0; r < l; r++) v -= L[k * q + r] * L[l * q + r];
      if (l < k) {
        L[k * q + l] = v / L[l * q + l];
      } else {
        if (!(v > 1e-12))
          return sg_fail(st, SG_ERR_INPUT, "`group_cor` must be positive definite.");
        L[k * q + k] = sqrt(v);
      }
    }
    for (int l = k + 1; l < q; l++) L[k * q + l] = 0.0;
  }
  return SG_OK;
}

void sg_lkj_cholesky_grad(const double *u, int q, const double *dL, double *grad) {
  double z[64], s[65];
  for (int i = 1, at = 0; i < q; at += i, i++) {
    s[0] = 1.0;
    for (int j = 0; j < i; j++) {
      z[j] = tanh(u[at + j]);
      s[j + 1] = s[j] * sqrt(1.0 - z[j] * z[j]);
    }
    /* back along the row: tail = sum_{k > j} c_k s_k, c_k = dL_ik z_k (k < i), c_i = dL_ii */
    double tail = dL[i * q + i] * s[i];
    for (int j = i - 1; j >= 0; j--) {
      grad[at + j] += dL[i * q + j] * s[j] * (1.0 - z[j] * z[j]) - z[j] * tail;
      tail += dL[i * q + j] * z[j] * s[j];
    }
  }
}

int sg_prior_check(const sg_prior *p, int dim, sg_status *st) {
  int next = 0;
  for (int b = 0; b < p->n_blocks; b++) {
    const sg_prior_block *k = &p->block[b];
    if (k->kind < SG_PRIOR_NORMAL || k->kind > SG_PRIOR_LKJ)
      return sg_fail(st, SG_ERR_INPUT, "prior block %d has an unknown kind.", b + 1);
    if (k->kind == SG_PRIOR_LKJ && (sg_lkj_dim(k->n) < 2 || !(k->dof > 0) || !R_FINITE(k->dof)))
      return sg_fail(st, SG_ERR_INPUT,
                     "prior block %d (LKJ) must cover q (q - 1) / 2 parameters and have eta > 0.",
                     b + 1);
    if (k->start != next || k->n < 1 || k->n > dim - next)
      return sg_fail(st, SG_ERR_INPUT, "prior block %d does not follow the one before it.", b + 1);
    if (!R_FINITE(k->location) || !(k->scale > 0) || !R_FINITE(k->scale) ||
        ((k->kind == SG_PRIOR_STUDENT_T || k->kind == SG_PRIOR_HALF_T ||
          k->kind == SG_PRIOR_INV_GAMMA) && (!(k->dof > 0) || !R_FINITE(k->dof))))
      return sg_fail(st, SG_ERR_INPUT, "prior block %d has an invalid location, scale or df.", b + 1);
    next += k->n;
  }
  if (next != dim)
    return sg_fail(st, SG_ERR_INPUT, "the prior covers %d parameters, not the model's %d.", next, dim);
  return SG_OK;
}

void sg_prior_draw(const sg_prior *p, double *theta) {
  for (int b = 0; b < p->n_blocks; b++) {
    const sg_prior_block *k = &p->block[b];
    double *th = theta + k->start;
    for (int j = 0; j < k->n; j++) {
      switch (k->kind) {
      case SG_PRIOR_NORMAL: th[j] = k->location + k->scale * norm_rand(); break;
      case SG_PRIOR_STUDENT_T: th[j] = k->location + k->scale * Rf_rt(k->dof); break;
      case SG_PRIOR_HALF_NORMAL: {
        double z = fabs(norm_rand());
        th[j] = log(k->scale * (z > 1e-300 ? z : 1e-300));
        break;
      }
      case SG_PRIOR_EXPONENTIAL: {
        double e = exp_rand();
        th[j] = log(k->scale * (e > 1e-300 ? e : 1e-300));
        break;
      }
      case SG_PRIOR_HALF_T: {
        double z = fabs(Rf_rt(k->dof));
        th[j] = log(k->scale * (z > 1e-300 ? z : 1e-300));
        break;
      }
      case SG_PRIOR_INV_GAMMA: {
        /* sigma^2 = scale / G, G ~ Gamma(shape); log G from log of a draw, kept above 1e-300 */
        double g = rgamma(k->dof, 1.0);
        th[j] = 0.5 * (log(k->scale) - log(g > 1e-300 ? g : 1e-300));
        break;
      }
      case SG_PRIOR_LKJ: {
        /* j in the lower triangle by rows: row i = 1, 2, ..., column j - i (i - 1) / 2 */
        int i = 1;
        while ((i + 1) * i / 2 <= j) i++;
        const double b = lkj_shape(k->dof, sg_lkj_dim(k->n), j - i * (i - 1) / 2);
        double z = 2.0 * rbeta(b, b) - 1.0;
        const double edge = 1.0 - 1e-15;
        th[j] = atanh(z > edge ? edge : z < -edge ? -edge : z);
        break;
      }
      }
    }
  }
}

double sg_prior_log_density(const sg_prior *p, const double *theta, double *grad) {
  double lp = 0.0;
  for (int b = 0; b < p->n_blocks; b++) {
    const sg_prior_block *k = &p->block[b];
    const double *th = theta + k->start;
    double *g = grad ? grad + k->start : NULL;
    const double s = k->scale, ls = log(s);
    switch (k->kind) {
    case SG_PRIOR_NORMAL:
      for (int j = 0; j < k->n; j++) {
        double z = (th[j] - k->location) / s;
        lp += -LOG_SQRT_2PI - ls - 0.5 * z * z;
        if (g) g[j] -= z / s;
      }
      break;
    case SG_PRIOR_STUDENT_T: {
      const double nu = k->dof;
      const double c = lgammafn(0.5 * (nu + 1)) - lgammafn(0.5 * nu) - 0.5 * log(nu * M_PI) - ls;
      for (int j = 0; j < k->n; j++) {
        double z = (th[j] - k->location) / s;
        lp += c - 0.5 * (nu + 1) * log1p(z * z / nu);
        if (g) g[j] -= (nu + 1) * z / (s * (nu + z * z));
      }
      break;
    }
    case SG_PRIOR_HALF_NORMAL:
      /* sigma = e^theta: log 2 + log N(sigma; 0, s^2) + theta */
      for (int j = 0; j < k->n; j++) {
        double z = exp(th[j] - ls);
        lp += -LOG_SQRT_PI_2 - ls - 0.5 * z * z + th[j];
        if (g) g[j] += 1.0 - z * z;
      }
      break;
    case SG_PRIOR_EXPONENTIAL:
      /* rate 1 / s: -log s - sigma / s + theta */
      for (int j = 0; j < k->n; j++) {
        double z = exp(th[j] - ls);
        lp += -ls - z + th[j];
        if (g) g[j] += 1.0 - z;
      }
      break;
    case SG_PRIOR_HALF_T: {
      /* sigma = e^theta: log 2 + log t_nu(sigma / s) - log s + theta */
      const double nu = k->dof;
      const double c = M_LN2 + lgammafn(0.5 * (nu + 1)) - lgammafn(0.5 * nu) - 0.5 * log(nu * M_PI) - ls;
      for (int j = 0; j < k->n; j++) {
        double z = exp(th[j] - ls), z2 = z * z;
        lp += c - 0.5 * (nu + 1) * log1p(z2 / nu) + th[j];
        if (g) g[j] += 1.0 - (nu + 1) * z2 / (nu + z2);
      }
      break;
    }
    case SG_PRIOR_INV_GAMMA: {
      /* sigma^2 = e^(2 theta) ~ InvGamma(a, b), Jacobian 2 e^(2 theta):
       * a log b - lgamma(a) + log 2 - 2 a theta - b e^(-2 theta) */
      const double a = k->dof, c = a * ls - lgammafn(a) + M_LN2;
      for (int j = 0; j < k->n; j++) {
        double u = s * exp(-2.0 * th[j]);
        lp += c - 2.0 * a * th[j] - u;
        if (g) g[j] += -2.0 * a + 2.0 * u;
      }
      break;
    }
    case SG_PRIOR_LKJ: {
      /* z = tanh(theta) with (z + 1) / 2 ~ Beta(b, b): the density of z is
       * (1 - z^2)^(b - 1) / (2^(2b - 1) B(b, b)), and dz / dtheta = 1 - z^2 */
      const int q = sg_lkj_dim(k->n);
      for (int i = 1, j = 0; i < q; i++)
        for (int c = 0; c < i; c++, j++) {
          const double b = lkj_shape(k->dof, q, c);
          lp += b * log1m_tanh2(th[j]) - (2.0 * b - 1.0) * M_LN2 - lbeta(b, b);
          if (g) g[j] -= 2.0 * b * tanh(th[j]);
        }
      break;
    }
    }
  }
  return lp;
}
