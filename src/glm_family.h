/* The response terms of the generalised linear models, shared by their plain forms
 * (logistic_regression.c, poisson_regression.c, negative_binomial_regression.c) and their
 * forms with a random intercept (glm_mixed.c): log p(y | eta) at the linear predictor eta, and
 * its derivative in eta (written to *deta when deta is not NULL); and, for Newton's method on a
 * group's effect, the first two derivatives in eta. Every family here is log-concave in eta
 * (the second derivative is negative), so a group's integrand has one mode. Part of the model
 * layer. */
#ifndef SG_GLM_FAMILY_H
#define SG_GLM_FAMILY_H

#include "model.h"
#include <Rmath.h>
#include <math.h>

/* Bernoulli with a logit link, y 0 or 1. With s = 2 y - 1 and z = s eta, log p = log plogis(z)
 * = -(log1p(exp(-|z|)) + max(-z, 0)): exp() is only taken of a non-positive number, so nothing
 * overflows for any |eta|, and log1p keeps tiny tail probabilities accurate; this is R's
 * plogis(log.p = TRUE) (src/nmath/plogis.c, log1pexp(); Maechler 2012, "Accurately computing
 * log(1 - exp(-|a|))", Rmpfr vignette) without its branches. d log p / d eta = y - plogis(eta)
 * = s plogis(-z), from the same exp(-|z|). */
SG_HOT_INLINE double sg_logit_term(double y, double eta, double *deta) {
  const int success = y != 0.0;
  const double z = success ? eta : -eta;
  const double e = exp(-fabs(z));
  const double lp = -(log1p(e) + (z < 0.0 ? -z : 0.0));
  if (deta) {
    const double q = (z >= 0.0 ? e : 1.0) / (1.0 + e); /* plogis(-z) */
    *deta = success ? q : -q;
  }
  return lp;
}

/* Binomial with a logit link, s successes of m trials (whole numbers, 0 <= s <= m), without the
 * constant log choose(m, s) (sg_log_choose below: callers add it once per row, not per node):
 *   s log plogis(eta) + (m - s) log plogis(-eta)
 *     = -m log1p(e) - s max(-eta, 0) - (m - s) max(eta, 0),
 * e = exp(-|eta|), the arithmetic of sg_logit_term (nothing overflows, the tails keep their
 * precision). d/d eta = s plogis(-eta) - (m - s) plogis(eta), which is s - m plogis(eta)
 * without its cancellation when plogis(eta) is near 1. m = 1 is the Bernoulli term. */
SG_HOT_INLINE double sg_binomial_term(double s, double m, double eta, double *deta) {
  const double e = exp(-fabs(eta));
  const double lp = -(m * log1p(e) + (eta < 0.0 ? -s * eta : (m - s) * eta));
  if (deta) {
    const double p = (eta >= 0.0 ? 1.0 : e) / (1.0 + e), q = (eta >= 0.0 ? e : 1.0) / (1.0 + e);
    *deta = s * q - (m - s) * p;
  }
  return lp;
}

/* Poisson with a log link: y eta - exp(eta) - log(y!), lf = log(y!); d/d eta = y - mu. exp(eta)
 * overflows for eta > 709: the likelihood is then zero (-Inf), which the estimators handle as a
 * particle of zero weight. */
SG_HOT_INLINE double sg_poisson_term(double y, double eta, double lf, double *deta) {
  const double mu = exp(eta);
  if (deta) *deta = y - mu;
  return y * eta - mu - lf;
}

/* Negative binomial with a log link, mean mu = e^eta and size phi (log_phi = log phi), lf =
 * log(y!):
 *   log p(y | mu, phi) = lgamma(y + phi) - lgamma(phi) - log(y!) - phi log(1 + mu / phi)
 *                        + y (eta - log(phi + mu)).
 * Near the Poisson limit phi is huge (omega = 1e-4: phi = 1e8) and the lgamma difference is a
 * small difference of large numbers; for the small counts that are typical it is summed exactly
 * instead, lgamma(y + phi) - lgamma(phi) = sum_{k<y} log(phi + k), and so is its derivative,
 * digamma(y + phi) - digamma(phi) = sum_{k<y} 1 / (phi + k). Beyond log phi = SG_NB_POISSON the
 * relative corrections to the Poisson likelihood, O(mu / phi) and O(y / phi), are below the
 * doubles' precision and the Poisson limit is used (d/d phi is then O(1 / phi^2): 0).
 * Derivatives, when deta is not NULL: d/d eta = phi (y - mu) / (phi + mu) to *deta, and
 *   d/d phi = [digamma(y + phi) - digamma(phi)] - log(1 + mu / phi) + (mu - y) / (phi + mu)
 * added to *dphi. */
/* log(y!) is read from a table (sg_log_factorial_table(), model.c) for the small counts that are
 * typical (lgamma() costs several times the rest of an observation), and computed beyond it. */
#define SG_LOG_FACTORIAL_TABLE 256
SG_HOT_INLINE double sg_log_factorial(const double *table, double y) {
  return y < SG_LOG_FACTORIAL_TABLE ? table[(int) y] : lgammafn(y + 1.0);
}

/* log choose(m, s) = log(m!) - log(s!) - log((m - s)!), from the table while m is in it; beyond,
 * as R's lchoose does, -log(m + 1) - lbeta(m - s + 1, s + 1), without the cancellation of three
 * large log-gammas (Rmath's lchoose itself checks R's stack, which a worker thread must not). */
SG_HOT_INLINE double sg_log_choose(const double *table, double m, double s) {
  if (m < SG_LOG_FACTORIAL_TABLE) return table[(int) m] - table[(int) s] - table[(int) (m - s)];
  return -log1p(m) - lbeta(m - s + 1.0, s + 1.0);
}

#define SG_NB_SUM_MAX 64
#define SG_NB_POISSON 36.0
SG_HOT_INLINE double sg_nb_term(double y, double eta, double lf, double phi, double log_phi,
                                double *deta, double *dphi) {
  if (log_phi > SG_NB_POISSON) return sg_poisson_term(y, eta, lf, deta);
  /* log(phi + mu) and mu / phi without overflow: mu = e^eta may be huge or tiny */
  const double log_sum = (eta > log_phi) ? eta + log1p(exp(log_phi - eta))
                                         : log_phi + log1p(exp(eta - log_phi));
  const double ratio = exp(eta - log_phi); /* mu / phi */
  double lg, dg = 0.0;
  if (y < SG_NB_SUM_MAX) {
    lg = 0.0;
    for (int k = 0; k < (int) y; k++) {
      lg += log(phi + k);
      if (deta) dg += 1.0 / (phi + k);
    }
  } else {
    lg = lgammafn(y + phi) - lgammafn(phi);
    if (deta) dg = Rf_digamma(y + phi) - Rf_digamma(phi);
  }
  if (deta) {
    /* phi (y - mu) / (phi + mu) = (y - mu) / (1 + mu / phi) */
    const double mu = exp(eta);
    *deta = (y - mu) / (1.0 + ratio);
    /* (mu - y) / (phi + mu) = (mu / phi - y / phi) / (1 + mu / phi) */
    *dphi += dg - log1p(ratio) + (ratio - y / phi) / (1.0 + ratio);
  }
  return lg - lf - phi * log1p(ratio) + y * (eta - log_sum);
}

/* The first and second derivatives in eta of log p(y | eta) (glm_mixed.c, Newton's method): for
 * the logit, y - p and -p (1 - p), from e = exp(-|eta|) (p (1 - p) = e / (1 + e)^2 on either
 * side); binomial, y successes of `trials`, those of sg_binomial_term and -trials p (1 - p);
 * Poisson, y - mu and -mu; negative binomial, with r = mu / phi, (y - mu) / (1 + r) and
 * -mu (1 + y / phi) / (1 + r)^2 (the Poisson's beyond SG_NB_POISSON). `trials` is read by the
 * binomial only. */
SG_HOT_INLINE void sg_glm_newton_terms(int family, double y, double trials, double eta,
                                       double phi, double log_phi, double *d1, double *d2) {
  if (family == SG_GLMM_LOGISTIC) {
    const double e = exp(-fabs(eta));
    const double p = (eta >= 0.0 ? 1.0 : e) / (1.0 + e);
    *d1 = y - p;
    *d2 = -e / ((1.0 + e) * (1.0 + e));
    return;
  }
  if (family == SG_GLMM_BINOMIAL) {
    const double e = exp(-fabs(eta));
    const double p = (eta >= 0.0 ? 1.0 : e) / (1.0 + e), q = (eta >= 0.0 ? e : 1.0) / (1.0 + e);
    *d1 = y * q - (trials - y) * p;
    *d2 = -trials * e / ((1.0 + e) * (1.0 + e));
    return;
  }
  const double mu = exp(eta);
  if (family == SG_GLMM_POISSON || log_phi > SG_NB_POISSON) {
    *d1 = y - mu;
    *d2 = -mu;
    return;
  }
  const double r = exp(eta - log_phi);
  *d1 = (y - mu) / (1.0 + r);
  *d2 = -mu * (1.0 + y / phi) / ((1.0 + r) * (1.0 + r));
}

#endif
