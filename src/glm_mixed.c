/* Logistic, Poisson and negative binomial regression with random effects per group, the group
 * effects integrated out group by group:
 *   eta_i = o_i + a_i' beta + z_i' b_g(i),  b_g ~ N(0, T),  y_i | eta_i by the family
 * (glm_family.h), z_i the row's q random-effect covariates (1 for an intercept, then design
 * columns for slopes), T = D R D as in linear_mixed.c (D the group sds, R their correlation:
 * the identity, known, or LKJ), theta = (beta_1..beta_p, [log omega], [log tau_1..tau_q],
 * [atanh of R's canonical partial correlations]). A random intercept alone, q = 1 and z = 1,
 * has the one-dimensional code below (u = b, T = tau^2); the others the q-dimensional one after
 * it (gmx_log_integral_q).
 *
 * The model's observations are units: some rows of one group, the first `context` of which are
 * the group's earlier rows. A unit's log-likelihood is the predictive density of its own rows
 * given its context,
 *   log p(rows | context, theta) = log I(context and rows) - log I(context),
 *   I(R) = integral of prod_{i in R} p(y_i | eta_i + u) N(u; 0, tau^2) du,
 * so over a group's units the terms telescope to log I(all the group's rows), and the sum over
 * all units is the log-likelihood of theta with every group effect integrated out, whatever
 * units the rows came in (R/glm_mixed.R makes one unit of each group's rows, and a unit with
 * context of rows that arrive later for a group already seen).
 *
 * Why integrated out, where the effects could be parameters (as they are nowhere else in the
 * package): as parameters they make thousands of dimensions that every chunk of a stream moves
 * at once, and annealing and SGHMC in them proved too biased and too slow (inst/design.md,
 * "Measurements behind the defaults"). Integrated out, the model has p + 1 or p + 2 parameters
 * however many groups there are, at the price of a one-dimensional integral per group and
 * evaluation, which costs a few passes over its rows.
 *
 * I(R) by adaptive Gauss-Hermite quadrature (Liu & Pierce 1994, "A note on Gauss-Hermite
 * quadrature", Biometrika 81; Pinheiro & Bates 1995, J. Comput. Graph. Stat. 4): the log
 * integrand h(u) is strictly concave (each family is log-concave in eta, the prior is normal),
 * Newton's method (kept inside the bracket of the root of h') finds its mode m, and with
 * s = (-h''(m))^-1/2 and the q nodes x_k and weights w_k of the rule for e^(-x^2),
 *   I = sqrt(2) s sum_k w_k e^(x_k^2) e^(h(u_k)),  u_k = m + sqrt(2) s x_k,
 * exact for an integrand that is a Gaussian times a polynomial of degree < 2q; the error falls
 * fast with a group's rows (the integrand tends to a Gaussian), so an integral over more rows
 * takes a rule of fewer nodes (the model's rules, each for integrals of at least so many rows:
 * R/glm_mixed.R says which; their error is in inst/design.md). The gradient is
 * that of the integral, E[dh/dtheta] under the normalised integrand, by the same nodes with weights
 * pi_k proportional to the terms of the sum: dh/dbeta = sum_i e_i(u) a_i (e: d log p / d eta),
 * dh/dlog tau = u^2 / tau^2 - 1, and (negative binomial) dh/dphi = sum_i of the family's
 * d/dphi, with d/dlog omega = -2 phi d/dphi (phi = omega^-2).
 *
 * Binomial counts (SG_GLMM_BINOMIAL: y_i successes of m_i trials) take the logit's place: each
 * row's term is sg_binomial_term (one row, whatever its trials), and each integral over rows R
 * is multiplied by prod_{i in R} choose(m_i, y_i), added to its log once, not per node (in a
 * unit's predictive density the context's constants cancel).
 *
 * The data are packed rows (rows_r.c, model.h): a_i, y_i, o_i (0 without an offset), and m_i for
 * binomial counts. */
#include "glm_family.h"
#include <limits.h>
#include <math.h>

#define GMX_MAX_NODES 64
#define GMX_MAX_RULES 4
#define GMX_NEWTON_MAX 200
/* q-dimensional integrals (gmx_log_integral_q): the most Newton steps halved for the mode */
#define GMX_HALVINGS 40
/* The logistic and Poisson terms at eta + u are computed from e^eta (once per row) and e^u (once
 * per node or Newton step), not by an exp() per row and node, when every |eta| and |u| is below
 * this: their products then stay far inside the doubles (e^600 < 1e300), and a term that is
 * -log1p(t) or y (eta + u) - mu is as accurate from a product as from an exp() (relative error
 * of t a few ulps), and it roughly halves the cost of a pass (inst/design.md). */
#define GMX_FAST_BOUND 300.0

#define GMX_QQ (SG_MIXED_MAX_Q * SG_MIXED_MAX_Q)

typedef struct {
  sg_prior prior;       /* first (sg_blocks_model_log_prior()): over all dim parameters */
  const double *rows;   /* row r at rows + r * stride: a_r, y_r, o_r */
  int p, stride, family, q; /* q: the most nodes of any rule */
  int rules, rule_min[GMX_MAX_RULES], rule_at[GMX_MAX_RULES], rule_q[GMX_MAX_RULES];
  const sg_index *start; /* unit u's rows: start[u] .. start[u + 1] - 1 */
  const int *context;    /* the first context[u] of them are conditioned on */
  int omega_at, tau_at;  /* -1: no overdispersion; known taus */
  int cor_at;            /* R's first CPC in theta, or -1 (R known or the identity) */
  int n_eff;             /* q, the random effects */
  int general;           /* 0: a random intercept alone (the one-dimensional code) */
  int grid;              /* the most nodes of a grid: max rule nodes ^ n_eff */
  int zcol[SG_MIXED_MAX_Q]; /* effect k's design column, or -1 for 1 */
  double tau[SG_MIXED_MAX_Q]; /* the known group sds (tau_at < 0) */
  double cor_chol[GMX_QQ];    /* R's Cholesky factor when known (cor_at < 0) */
  const double *node, *log_weight; /* x_k, and log w_k + x_k^2, of every rule */
  double *log_factorial;
  sg_index max_rows;
} gmx_data;

/* What a unit's integrals share: the scales from theta; with q effects also B = D Lc, the
 * lower Cholesky factor of T (q x q, row-major), its parts and the log-determinant of B. */
typedef struct {
  double tau, phi, log_phi;
  double taus[SG_MIXED_MAX_Q], Lc[GMX_QQ], B[GMX_QQ];
} gmx_scales;

static gmx_scales gmx_scales_of(const gmx_data *d, const double *theta) {
  gmx_scales s;
  s.tau = d->tau_at >= 0 ? exp(theta[d->tau_at]) : d->tau[0];
  s.log_phi = d->omega_at >= 0 ? -2.0 * theta[d->omega_at] : INFINITY;
  s.phi = exp(s.log_phi);
  if (d->general) {
    const int q = d->n_eff;
    for (int k = 0; k < q; k++) s.taus[k] = d->tau_at >= 0 ? exp(theta[d->tau_at + k]) : d->tau[k];
    if (d->cor_at >= 0) {
      sg_lkj_cholesky(theta + d->cor_at, q, s.Lc);
    } else {
      for (int k = 0; k < q * q; k++) s.Lc[k] = d->cor_chol[k];
    }
    for (int k = 0; k < q; k++)
      for (int l = 0; l < q; l++) s.B[k * q + l] = s.taus[k] * s.Lc[k * q + l];
  }
  return s;
}

/* A binomial row's trials (0 for the other families, whose rows have none). */
static inline double gmx_trials(const gmx_data *d, const double *x) {
  return d->family == SG_GLMM_BINOMIAL ? x[d->p + 2] : 0.0;
}

/* The sum of log choose(m_i, y_i) over the n binomial rows from `first` (0 for the others). */
static double gmx_log_choose(const gmx_data *d, sg_index first, sg_index n) {
  if (d->family != SG_GLMM_BINOMIAL) return 0.0;
  double lc = 0.0;
  for (sg_index r = 0; r < n; r++) {
    const double *x = d->rows + (first + r) * d->stride;
    lc += sg_log_choose(d->log_factorial, x[d->p + 2], x[d->p]);
  }
  return lc;
}

/* The family's term of row x at eta (binomial: without log choose(m, y), gmx_log_choose). */
static inline double gmx_term(const gmx_data *d, const double *x, double eta, const gmx_scales *s,
                              double *deta, double *dphi) {
  const double y = x[d->p];
  switch (d->family) {
  case SG_GLMM_LOGISTIC: return sg_logit_term(y, eta, deta);
  case SG_GLMM_BINOMIAL: return sg_binomial_term(y, x[d->p + 2], eta, deta);
  case SG_GLMM_POISSON:
    return sg_poisson_term(y, eta, sg_log_factorial(d->log_factorial, y), deta);
  default:
    return sg_nb_term(y, eta, sg_log_factorial(d->log_factorial, y), s->phi, s->log_phi, deta,
                      dphi);
  }
}

/* The fast paths' binomial term (without log choose(m, y)) at lin from t = e^lin and 1 / t, each
 * a product of exponentials: -m log1p(e^-|lin|) - y max(-lin, 0) - (m - y) max(lin, 0), as
 * sg_binomial_term, and its derivative (y - (m - y) t) / (1 + t), to *e, in the form whose
 * exponential is at most 1. */
static inline double gmx_binomial_fast(double y, double m, double lin, double t, double tinv,
                                       double *e) {
  if (lin >= 0.0) {
    *e = (y * tinv - (m - y)) / (1.0 + tinv);
    return -m * log1p(tinv) - (m - y) * lin;
  }
  *e = (y - (m - y) * t) / (1.0 + t);
  return -m * log1p(t) + y * lin;
}

/* The mode of h over the n rows from `first` (linear predictors without the effect in eta, and
 * their exponentials in ex, or ex NULL: GMX_FAST_BOUND) and the curvature -h'' there (to
 * *curv). Newton's steps are kept inside the bracket of the root of h' found so far, and a
 * step that did not halve |h'| is followed by a bisection of the bracket: Newton's method on
 * the exponential side of a Poisson integrand, after overshooting, comes back one unit per step
 * (as many steps as units of distance), where bisection halves the distance. So the iteration
 * converges from u = 0 for any data; it stops when a step is below 1e-3 of the integrand's
 * width: the quadrature about a point that far from the mode, with a width that close, differs
 * from that about the mode by far less than its own error (the nodes integrate a shifted
 * Gaussian, an entire function times a Gaussian, almost exactly), and the last step, taken,
 * leaves the point nearer still. */
static double gmx_mode(const gmx_data *d, const double *eta, const double *ex, sg_index first,
                       sg_index n, const gmx_scales *s, double *curv) {
  const double prec = 1.0 / (s->tau * s->tau);
  double u = 0.0, lo = -INFINITY, hi = INFINITY, g2 = -prec, last = INFINITY;
  for (int it = 0; it < GMX_NEWTON_MAX; it++) {
    double g1 = -u * prec;
    g2 = -prec;
    if (ex && fabs(u) < GMX_FAST_BOUND) {
      const double eu = exp(u);
      const double *y = d->rows + first * d->stride + d->p;
      if (d->family == SG_GLMM_LOGISTIC) {
        for (sg_index k = 0; k < n; k++) {
          const double t = ex[k] * eu, pr = t / (1.0 + t); /* plogis(eta + u) */
          g1 += y[k * d->stride] - pr;
          g2 -= pr / (1.0 + t);
        }
      } else if (d->family == SG_GLMM_BINOMIAL) { /* y successes of m trials (2 doubles on) */
        for (sg_index k = 0; k < n; k++) {
          const double t = ex[k] * eu, pr = t / (1.0 + t), m = y[k * d->stride + 2];
          g1 += y[k * d->stride] / (1.0 + t) - (m - y[k * d->stride]) * pr;
          g2 -= m * pr / (1.0 + t);
        }
      } else { /* Poisson */
        for (sg_index k = 0; k < n; k++) {
          const double mu = ex[k] * eu;
          g1 += y[k * d->stride] - mu;
          g2 -= mu;
        }
      }
    } else {
      for (sg_index k = 0; k < n; k++) {
        double d1, d2;
        const double *x = d->rows + (first + k) * d->stride;
        sg_glm_newton_terms(d->family, x[d->p], gmx_trials(d, x), eta[k] + u, s->phi, s->log_phi,
                            &d1, &d2);
        g1 += d1;
        g2 += d2;
      }
    }
    if (!R_FINITE(g1) || !R_FINITE(g2)) { /* exp() overflowed: no mode to find */
      *curv = NAN;
      return NAN;
    }
    double next = u - g1 / g2; /* towards the root: g2 < 0 */
    if (fabs(next - u) <= 1e-3 / sqrt(-g2)) {
      u = next;
      break;
    }
    if (g1 > 0.0) lo = u; else hi = u;
    /* past the other end of the bracket, which is then finite (the step's direction is g1's),
     * or too slow: bisect */
    const int slow = fabs(g1) > 0.5 * last && R_FINITE(lo) && R_FINITE(hi);
    if (slow || !(next > lo && next < hi)) next = 0.5 * (lo + hi);
    last = fabs(g1);
    u = next;
    if (it == GMX_NEWTON_MAX - 1) { /* not converged: no mode to trust */
      *curv = NAN;
      return NAN;
    }
  }
  *curv = -g2;
  return u;
}

/* log I over the n rows from `first` (eta and ex as gmx_mode's). With grad, adds `weight` times
 * the gradient: in beta to grad[0..p-1], in log tau to *gt, in phi to *gphi. work: q (p + 5). */
static double gmx_log_integral(const gmx_data *d, const double *eta, const double *ex,
                               sg_index first, sg_index n, const gmx_scales *s, double weight,
                               double *grad, double *gt, double *gphi, double *work) {
  if (n == 0) return 0.0;
  int r = 0;
  while (r + 1 < d->rules && n >= d->rule_min[r + 1]) r++;
  const int q = d->rule_q[r], p = d->p;
  const double *node = d->node + d->rule_at[r], *log_weight = d->log_weight + d->rule_at[r];
  double curv;
  const double m = gmx_mode(d, eta, ex, first, n, s, &curv);
  if (ISNAN(m)) return -INFINITY;
  const double width = M_SQRT2 / sqrt(curv);
  /* h, u, gp, e^u, e^-u (q each), then gb (q x p) */
  double *h = work, *u = work + q, *gp = work + 2 * q, *eu = work + 3 * q, *emu = work + 4 * q,
         *gb = work + 5 * q;
  const double log_norm = -0.5 * log(2.0 * M_PI) - log(s->tau);
  int fast = ex != NULL;
  for (int k = 0; k < q; k++) {
    u[k] = m + width * node[k];
    h[k] = log_weight[k] + log_norm - 0.5 * (u[k] / s->tau) * (u[k] / s->tau);
    gp[k] = 0.0;
    if (fabs(u[k]) >= GMX_FAST_BOUND) fast = 0;
  }
  if (fast)
    for (int k = 0; k < q; k++) {
      eu[k] = exp(u[k]);
      emu[k] = exp(-u[k]);
    }
  if (grad)
    for (int j = 0; j < q * p; j++) gb[j] = 0.0;
  for (sg_index r = 0; r < n; r++) {
    const double *x = d->rows + (first + r) * d->stride;
    const double y = x[p];
    for (int k = 0; k < q; k++) {
      double e, lp;
      if (!fast) {
        lp = gmx_term(d, x, eta[r] + u[k], s, grad ? &e : NULL, grad ? gp + k : NULL);
      } else if (d->family == SG_GLMM_LOGISTIC) {
        /* t = exp(-z), z = +-(eta + u) signed by y: log p = -log1p(t), d/d eta = +-t / (1 + t) */
        const double t = y != 0.0 ? emu[k] / ex[r] : ex[r] * eu[k];
        lp = -log1p(t);
        e = (y != 0.0 ? t : -t) / (1.0 + t);
      } else if (d->family == SG_GLMM_BINOMIAL) {
        lp = gmx_binomial_fast(y, x[p + 2], eta[r] + u[k], ex[r] * eu[k], emu[k] / ex[r], &e);
      } else { /* Poisson: mu = e^eta e^u */
        const double mu = ex[r] * eu[k];
        lp = y * (eta[r] + u[k]) - mu - sg_log_factorial(d->log_factorial, y);
        e = y - mu;
      }
      h[k] += lp;
      if (grad) {
        double *g = gb + k * p;
        for (int j = 0; j < p; j++) g[j] += e * x[j];
      }
    }
  }
  const double lse = sg_log_sum_exp(h, q);
  if (!R_FINITE(lse)) return lse == INFINITY ? NAN : -INFINITY;
  const double value = lse + log(width) + gmx_log_choose(d, first, n);
  if (grad) {
    for (int k = 0; k < q; k++) {
      const double pk = weight * exp(h[k] - lse);
      const double *g = gb + k * p;
      for (int j = 0; j < p; j++) grad[j] += pk * g[j];
      *gt += pk * ((u[k] / s->tau) * (u[k] / s->tau) - 1.0);
      *gphi += pk * gp[k];
    }
  }
  return value;
}

/* ---- q effects: b = B v, v ~ N(0, I), so I(R) = integral of e^h(v) dv with
 *   h(v) = sum_i log p(y_i | eta_i + w_i'v) - v'v / 2 - (q / 2) log(2 pi),  w_i = B' z_i,
 * by adaptive Gauss-Hermite quadrature on the product grid of a rule (Pinheiro & Bates 1995,
 * Section 3.2; Liu & Pierce 1994): Newton's method, each step halved until h rises (h is
 * strictly concave: each family is log-concave in eta), finds h's mode m, and with
 * -h''(m) = L L' (Cholesky) the nodes v_k = m + sqrt(2) L^-T x_k,
 *   I = 2^(q/2) det(L)^-1 sum_k W_k e^(|x_k|^2) e^(h(v_k)),  W_k = the product of the weights.
 * The gradient is E[dh/dtheta] under the normalised terms pi_k, as in one dimension: in beta,
 * sum_i e_i a_i; in B (v fixed, the integration variable), sum_i e_i z_i v' (its lower
 * triangle), which gmx_log_lik takes to log tau_k (dB_kl / dlog tau_k = B_kl) and to R's CPCs
 * (dB_kl / dLc_kl = tau_k, then sg_lkj_cholesky_grad()). */

/* The q-vector z of row x (a design row). */
static inline void gmx_z(const gmx_data *d, const double *x, double *z) {
  for (int k = 0; k < d->n_eff; k++) z[k] = d->zcol[k] < 0 ? 1.0 : x[d->zcol[k]];
}

/* h(v) over the n rows from `first` (eta their linear predictors without the effects, w their
 * w_i, n x q), with its gradient g and Hessian H (q x q) when g is not NULL. */
static double gmx_h(const gmx_data *d, const double *eta, const double *w, sg_index first,
                    sg_index n, const gmx_scales *s, const double *v, double *g, double *H) {
  const int q = d->n_eff;
  double h = 0.0;
  for (int k = 0; k < q; k++) {
    h -= 0.5 * v[k] * v[k];
    if (g) {
      g[k] = -v[k];
      for (int l = 0; l < q; l++) H[k * q + l] = k == l ? -1.0 : 0.0;
    }
  }
  for (sg_index r = 0; r < n; r++) {
    const double *wr = w + r * q, *x = d->rows + (first + r) * d->stride;
    double lin = eta[r];
    for (int k = 0; k < q; k++) lin += wr[k] * v[k];
    h += gmx_term(d, x, lin, s, NULL, NULL);
    if (g) {
      double d1, d2;
      sg_glm_newton_terms(d->family, x[d->p], gmx_trials(d, x), lin, s->phi, s->log_phi, &d1,
                          &d2);
      for (int k = 0; k < q; k++) {
        g[k] += d1 * wr[k];
        for (int l = 0; l <= k; l++) H[k * q + l] += d2 * wr[k] * wr[l];
      }
    }
  }
  return h - 0.5 * q * log(2.0 * M_PI);
}

/* The lower Cholesky factor of -H (q x q, its lower triangle read) into L; 0 when not
 * positive definite. */
static int gmx_chol_neg(const double *H, int q, double *L) {
  for (int k = 0; k < q; k++)
    for (int l = 0; l <= k; l++) {
      double v = -H[k * q + l];
      for (int r = 0; r < l; r++) v -= L[k * q + r] * L[l * q + r];
      if (l < k) {
        L[k * q + l] = v / L[l * q + l];
      } else {
        if (!(v > 0.0) || !R_FINITE(v)) return 0;
        L[k * q + k] = sqrt(v);
      }
    }
  return 1;
}

/* The mode of h (to m) and the Cholesky factor L of -h'' there; 0 when not found. */
static int gmx_mode_q(const gmx_data *d, const double *eta, const double *w, sg_index first,
                      sg_index n, const gmx_scales *s, double *m, double *L) {
  const int q = d->n_eff;
  double v[SG_MIXED_MAX_Q] = {0.0}, g[SG_MIXED_MAX_Q], H[GMX_QQ], step[SG_MIXED_MAX_Q],
      last[SG_MIXED_MAX_Q];
  double h_last = -INFINITY;
  int halvings = 0;
  for (int it = 0; it < GMX_NEWTON_MAX; it++) {
    const double h = gmx_h(d, eta, w, first, n, s, v, g, H);
    int finite = R_FINITE(h);
    for (int k = 0; k < q; k++) finite = finite && R_FINITE(g[k]);
    /* overshot (h fell by more than its rounding): halve the step from the last point; when the
     * halvings run out, the last point is the mode as far as doubles can tell (L is its own) */
    if (!finite || h < h_last - 1e-13 * fabs(h_last)) {
      if (it == 0) return 0;
      if (++halvings > GMX_HALVINGS) {
        for (int k = 0; k < q; k++) m[k] = last[k];
        return 1;
      }
      for (int k = 0; k < q; k++) {
        step[k] *= 0.5;
        v[k] = last[k] + step[k];
      }
      continue;
    }
    if (!gmx_chol_neg(H, q, L)) return 0;
    /* the Newton step -H^-1 g, by L L' step = g */
    for (int k = 0; k < q; k++) {
      double a = g[k];
      for (int r = 0; r < k; r++) a -= L[k * q + r] * step[r];
      step[k] = a / L[k * q + k];
    }
    double decrement = 0.0; /* g' (-H)^-1 g: the squared step in units of the widths */
    for (int k = 0; k < q; k++) decrement += step[k] * step[k];
    for (int k = q - 1; k >= 0; k--) {
      double a = step[k];
      for (int r = k + 1; r < q; r++) a -= L[r * q + k] * step[r];
      step[k] = a / L[k * q + k];
    }
    for (int k = 0; k < q; k++) {
      last[k] = v[k];
      v[k] += step[k];
    }
    h_last = h;
    halvings = 0;
    /* as in one dimension: a step below 1e-3 of the widths, taken, and L from before it */
    if (decrement <= 1e-6) {
      for (int k = 0; k < q; k++) m[k] = v[k];
      return 1;
    }
  }
  return 0;
}

/* The product grid of a q-dimensional integral and what its nodes accumulate over the rows
 * (gmx_log_integral_q). */
typedef struct {
  int q, p, nq, K;      /* effects, coefficients, nodes per axis, nodes of the grid (nq^q) */
  const double *node;   /* the rule's nodes x_a (nq) */
  double xmax;          /* max |x_a| */
  double m[SG_MIXED_MAX_Q], L[GMX_QQ]; /* h's mode and the Cholesky factor of -h'' there */
  /* per node k: h(v_k) so far, v_k (q), sum_i e_i z_i (q), sum_i e_i a_i (p) and d/dphi */
  double *h, *v, *ez, *ea, *gp;
} gmx_grid;

/* The doubles gmx_log_integral_q's work takes: a grid of `grid` nodes. */
static inline sg_index gmx_grid_work(int grid, int p, int q) {
  return (sg_index) grid * (2 + 2 * q + p);
}

/* Lays the grid out in work (gmx_grid_work()) and fills in each node k: its multi-index over the
 * axes, its point v_k = m + sqrt(2) L^-T x_k, and h's terms that do not depend on the rows,
 * log W_k + |x_k|^2 (log_weight holds log w_a + x_a^2 per axis) - |v_k|^2 / 2 - (q / 2) log(2 pi);
 * the rows' sums start at 0. */
static void gmx_grid_nodes(gmx_grid *gr, const double *log_weight, double *work) {
  const int q = gr->q, p = gr->p, nq = gr->nq;
  int K = 1;
  for (int k = 0; k < q; k++) K *= nq;
  gr->K = K;
  gr->h = work;
  gr->v = work + K;
  gr->ez = gr->v + (sg_index) K * q;
  gr->ea = gr->ez + (sg_index) K * q;
  gr->gp = gr->ea + (sg_index) K * p;
  gr->xmax = 0.0;
  for (int a = 0; a < nq; a++)
    if (fabs(gr->node[a]) > gr->xmax) gr->xmax = fabs(gr->node[a]);
  const double *L = gr->L;
  int idx[SG_MIXED_MAX_Q] = {0};
  for (int k = 0; k < K; k++) {
    /* node k's multi-index idx, its x, and v = m + sqrt(2) L^-T x */
    double *v = gr->v + (sg_index) k * q, lw = 0.0;
    for (int j = 0; j < q; j++) {
      v[j] = M_SQRT2 * gr->node[idx[j]];
      lw += log_weight[idx[j]];
    }
    for (int j = q - 1; j >= 0; j--) {
      double a = v[j];
      for (int l = j + 1; l < q; l++) a -= L[l * q + j] * v[l];
      v[j] = a / L[j * q + j];
    }
    gr->h[k] = lw - 0.5 * q * log(2.0 * M_PI);
    for (int j = 0; j < q; j++) {
      v[j] += gr->m[j];
      gr->h[k] -= 0.5 * v[j] * v[j];
    }
    gr->gp[k] = 0.0;
    for (int j = 0; j < q; j++) gr->ez[(sg_index) k * q + j] = 0.0;
    for (int j = 0; j < p; j++) gr->ea[(sg_index) k * p + j] = 0.0;
    for (int j = 0; j < q && ++idx[j] == nq; j++) idx[j] = 0;
  }
}

/* Adds row x's terms (linear predictor eta_i without the effects, w_i = wi) to every node by the
 * fast path of the logistic, binomial and Poisson families: on the grid the row's linear
 * predictor is
 *   lin_k = c + sum_j u_j x_(k_j),  c = eta_i + w_i'm,  u = sqrt(2) L^-1 w_i,
 * a sum over the axes of the grid's own nodes, so e^lin_k is e^c times a product of q factors
 * e^(u_j x_a), each one of nq per axis: q nq + 1 exp() per row instead of nq^q. As in one
 * dimension (GMX_FAST_BOUND), only when every |lin| stays far inside the doubles: returns 0,
 * having added nothing, when it may not. z: the row's z_i when grad. */
static int gmx_grid_row_fast(const gmx_data *d, gmx_grid *gr, const double *x, const double *wi,
                             double eta_i, const double *z, int grad) {
  const int q = gr->q, p = gr->p, nq = gr->nq;
  const double *L = gr->L, *node = gr->node, y = x[p];
  double c = eta_i, bound = 0.0, u[SG_MIXED_MAX_Q], E[SG_MIXED_MAX_Q * GMX_MAX_NODES];
  for (int j = 0; j < q; j++) {
    double a = wi[j];
    for (int r = 0; r < j; r++) a -= L[j * q + r] * u[r];
    u[j] = a / L[j * q + j];
    c += wi[j] * gr->m[j];
  }
  for (int j = 0; j < q; j++) {
    u[j] *= M_SQRT2;
    bound += fabs(u[j]) * gr->xmax;
  }
  if (!(fabs(c) + bound < GMX_FAST_BOUND)) return 0;
  const double ec = exp(c), lf = d->family == SG_GLMM_POISSON
                                     ? sg_log_factorial(d->log_factorial, y) : 0.0;
  for (int j = 0; j < q; j++)
    for (int a = 0; a < nq; a++) E[j * nq + a] = exp(u[j] * node[a]);
  int at[SG_MIXED_MAX_Q] = {0};
  for (int k = 0; k < gr->K; k++) {
    double t = ec, lin = c, e, lp;
    for (int j = 0; j < q; j++) {
      t *= E[j * nq + at[j]];
      lin += u[j] * node[at[j]];
    }
    if (d->family == SG_GLMM_LOGISTIC) {
      /* log p = -log1p(e^-lin) (y = 1) or -log1p(e^lin) (y = 0) */
      const double r = y != 0.0 ? 1.0 / t : t;
      lp = -log1p(r);
      e = (y != 0.0 ? 1.0 : -t) / (1.0 + t);
    } else if (d->family == SG_GLMM_BINOMIAL) {
      lp = gmx_binomial_fast(y, x[p + 2], lin, t, 1.0 / t, &e);
    } else { /* Poisson */
      lp = y * lin - t - lf;
      e = y - t;
    }
    gr->h[k] += lp;
    if (grad) {
      double *ga = gr->ea + (sg_index) k * p, *gz = gr->ez + (sg_index) k * q;
      for (int j = 0; j < p; j++) ga[j] += e * x[j];
      for (int j = 0; j < q; j++) gz[j] += e * z[j];
    }
    for (int j = 0; j < q && ++at[j] == nq; j++) at[j] = 0;
  }
  return 1;
}

/* Adds row x's terms to every node by the family's term at each node's linear predictor
 * eta_i + w_i'v_k (any family, any |lin|). z: the row's z_i when grad. */
static void gmx_grid_row(const gmx_data *d, gmx_grid *gr, const double *x, const double *wi,
                         double eta_i, const gmx_scales *s, const double *z, int grad) {
  const int q = gr->q, p = gr->p;
  for (int k = 0; k < gr->K; k++) {
    const double *v = gr->v + (sg_index) k * q;
    double lin = eta_i, e;
    for (int j = 0; j < q; j++) lin += wi[j] * v[j];
    gr->h[k] += gmx_term(d, x, lin, s, grad ? &e : NULL, grad ? gr->gp + k : NULL);
    if (grad) {
      double *a = gr->ea + (sg_index) k * p, *b = gr->ez + (sg_index) k * q;
      for (int j = 0; j < p; j++) a[j] += e * x[j];
      for (int j = 0; j < q; j++) b[j] += e * z[j];
    }
  }
}

/* Adds `weight` times the integral's gradient, E[dh/dtheta] under the nodes' normalised terms
 * pi_k = e^(h_k - lse): in beta to grad, in B to gB (its lower triangle), in phi to *gphi. */
static void gmx_grid_gradient(const gmx_grid *gr, double lse, double weight, double *grad,
                              double *gB, double *gphi) {
  const int q = gr->q, p = gr->p;
  for (int k = 0; k < gr->K; k++) {
    const double pk = weight * exp(gr->h[k] - lse);
    const double *a = gr->ea + (sg_index) k * p, *b = gr->ez + (sg_index) k * q,
                 *v = gr->v + (sg_index) k * q;
    for (int j = 0; j < p; j++) grad[j] += pk * a[j];
    for (int j = 0; j < q; j++)
      for (int l = 0; l <= j; l++) gB[j * q + l] += pk * b[j] * v[l];
    *gphi += pk * gr->gp[k];
  }
}

/* log I over the n rows from `first`, q effects (eta as gmx_mode's; w their w_i). With grad,
 * adds `weight` times the gradient: in beta to grad[0..p-1], in B to gB (q x q, the lower
 * triangle), in phi to *gphi. work: gmx_grid_work(). */
static double gmx_log_integral_q(const gmx_data *d, const double *eta, const double *w,
                                 sg_index first, sg_index n, const gmx_scales *s, double weight,
                                 double *grad, double *gB, double *gphi, double *work) {
  if (n == 0) return 0.0;
  gmx_grid gr;
  gr.q = d->n_eff;
  gr.p = d->p;
  int r = 0;
  while (r + 1 < d->rules && n >= d->rule_min[r + 1]) r++;
  gr.nq = d->rule_q[r];
  gr.node = d->node + d->rule_at[r];
  if (!gmx_mode_q(d, eta, w, first, n, s, gr.m, gr.L)) return -INFINITY;
  gmx_grid_nodes(&gr, d->log_weight + d->rule_at[r], work);
  const int q = gr.q, fast_family = d->family != SG_GLMM_NEGATIVE_BINOMIAL;
  double log_det = 0.0;
  for (int k = 0; k < q; k++) log_det += log(gr.L[k * q + k]);
  double z[SG_MIXED_MAX_Q];
  for (sg_index i = 0; i < n; i++) {
    const double *x = d->rows + (first + i) * d->stride, *wi = w + i * q;
    if (grad) gmx_z(d, x, z);
    if (!(fast_family && gmx_grid_row_fast(d, &gr, x, wi, eta[i], z, grad != NULL)))
      gmx_grid_row(d, &gr, x, wi, eta[i], s, z, grad != NULL);
  }
  const double lse = sg_log_sum_exp(gr.h, gr.K);
  if (!R_FINITE(lse)) return lse == INFINITY ? NAN : -INFINITY;
  const double value = lse + 0.5 * q * M_LN2 - log_det + gmx_log_choose(d, first, n);
  if (grad) gmx_grid_gradient(&gr, lse, weight, grad, gB, gphi);
  return value;
}

/* log p(unit u's rows | its context, theta); with grad, adds `scale` times its gradient in beta
 * to grad and (without the scale) in log tau (one dimension) or B (q effects, q x q) and phi to
 * gt and *gphi. eta, ex: scratch of the unit's rows (ex: n x q); work: gmx_work()'s. */
static double gmx_unit(const gmx_data *d, const double *theta, int u, const gmx_scales *s,
                       double scale, double *grad, double *gt, double *gphi, double *eta,
                       double *ex, double *work) {
  const sg_index first = d->start[u], n = d->start[u + 1] - first;
  const int p = d->p;
  int fast = d->family != SG_GLMM_NEGATIVE_BINOMIAL && !d->general;
  for (sg_index r = 0; r < n; r++) {
    const double *x = d->rows + (first + r) * d->stride;
    double e = x[p + 1];
    for (int j = 0; j < p; j++) e += x[j] * theta[j];
    eta[r] = e;
    if (!(fabs(e) < GMX_FAST_BOUND)) fast = 0;
  }
  double *gb = grad ? work : NULL; /* the unit's beta gradient, unscaled */
  work += p;
  if (grad)
    for (int j = 0; j < p; j++) gb[j] = 0.0;
  double v;
  if (d->general) {
    /* ex holds the rows' w_i = B' z_i (n x q); gt the gradient in B (q x q) */
    const int q = d->n_eff;
    double z[SG_MIXED_MAX_Q];
    for (sg_index r = 0; r < n; r++) {
      gmx_z(d, d->rows + (first + r) * d->stride, z);
      for (int l = 0; l < q; l++) {
        double a = 0.0;
        for (int k = l; k < q; k++) a += s->B[k * q + l] * z[k];
        ex[r * q + l] = a;
      }
    }
    v = gmx_log_integral_q(d, eta, ex, first, n, s, 1.0, gb, gt, gphi, work);
    if (d->context[u] > 0)
      v -= gmx_log_integral_q(d, eta, ex, first, d->context[u], s, -1.0, gb, gt, gphi, work);
  } else {
    if (fast)
      for (sg_index r = 0; r < n; r++) ex[r] = exp(eta[r]);
    const double *exr = fast ? ex : NULL;
    v = gmx_log_integral(d, eta, exr, first, n, s, 1.0, gb, gt, gphi, work);
    if (d->context[u] > 0)
      v -= gmx_log_integral(d, eta, exr, first, d->context[u], s, -1.0, gb, gt, gphi, work);
  }
  if (grad)
    for (int j = 0; j < p; j++) grad[j] += scale * gb[j];
  return v;
}

/* The workspace's scratch: a unit's beta gradient (p), work for its integrals (one dimension:
 * q (p + 5); q effects: gmx_grid_work()), then its rows' linear predictors (max_rows) and their
 * exponentials or w_i (max_rows x n_eff). */
static inline sg_index gmx_work_size(const gmx_data *d) {
  return d->general ? gmx_grid_work(d->grid, d->p, d->n_eff) : (sg_index) d->q * (d->p + 5);
}

static double *gmx_work(const gmx_data *d, sg_workspace *ws, double **eta, double **ex) {
  double *work = (double *) ws->scratch;
  *eta = work + d->p + gmx_work_size(d);
  *ex = *eta + d->max_rows;
  return work;
}

/* Adds scale times the gradient in log tau_k and R's CPCs from gB, that in B. */
static void gmx_cov_grad(const gmx_data *d, const double *theta, const gmx_scales *s,
                         const double *gB, double scale, double *grad) {
  const int q = d->n_eff;
  if (d->tau_at >= 0)
    for (int k = 0; k < q; k++) {
      double a = 0.0;
      for (int l = 0; l <= k; l++) a += gB[k * q + l] * s->B[k * q + l];
      grad[d->tau_at + k] += scale * a;
    }
  if (d->cor_at >= 0) {
    double dL[GMX_QQ], g[GMX_QQ] = {0.0};
    for (int k = 0; k < q; k++)
      for (int l = 0; l < q; l++) dL[k * q + l] = l <= k ? gB[k * q + l] * s->taus[k] : 0.0;
    sg_lkj_cholesky_grad(theta + d->cor_at, q, dL, g);
    for (int j = 0; j < q * (q - 1) / 2; j++) grad[d->cor_at + j] += scale * g[j];
  }
}

static double gmx_log_lik(const sg_model *m, sg_workspace *ws, const double *theta,
                          const int *idx, int start, int n, double scale, double *grad) {
  const gmx_data *d = m->data;
  const gmx_scales s = gmx_scales_of(d, theta);
  double *eta, *ex, *work = gmx_work(d, ws, &eta, &ex);
  double gt[GMX_QQ] = {0.0}, gphi = 0.0, sum = 0.0;
  for (int k = 0; k < n; k++)
    sum += gmx_unit(d, theta, idx ? idx[k] : start + k, &s, scale, grad, gt, &gphi, eta, ex,
                    work);
  if (grad) {
    if (d->general) {
      gmx_cov_grad(d, theta, &s, gt, scale, grad);
    } else if (d->tau_at >= 0) {
      grad[d->tau_at] += scale * gt[0];
    }
    if (d->omega_at >= 0) grad[d->omega_at] += scale * (-2.0 * s.phi * gphi);
  }
  return sum;
}

static void gmx_log_lik_pointwise(const sg_model *m, sg_workspace *ws, const double *theta,
                                  int start, int n, double *out) {
  const gmx_data *d = m->data;
  const gmx_scales s = gmx_scales_of(d, theta);
  double *eta, *ex, *work = gmx_work(d, ws, &eta, &ex);
  for (int k = 0; k < n; k++)
    out[k] = gmx_unit(d, theta, start + k, &s, 0.0, NULL, NULL, NULL, eta, ex, work);
}

/* The rules in quad (3 x total, column-major: the fewest rows a rule is for, a node, its log
 * weight; a rule's nodes consecutive, the rules by increasing fewest rows, the first for 0). */
static int gmx_rules(gmx_data *d, const double *quad, int total, sg_status *st) {
  d->rules = 0;
  d->q = 0;
  for (int k = 0; k < total; k++) {
    const double *c = quad + 3 * (sg_index) k;
    if (!R_FINITE(c[0]) || !R_FINITE(c[1]) || !R_FINITE(c[2]))
      return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: its quadrature rules are not finite.");
    if (k == 0 || c[0] != quad[3 * (sg_index) (k - 1)]) {
      if (d->rules == GMX_MAX_RULES || (k == 0 && c[0] != 0.0) ||
          (k > 0 && !(c[0] > quad[3 * (sg_index) (k - 1)])) || c[0] > INT_MAX)
        return sg_fail(st, SG_ERR_INPUT,
                       "`model` is corrupt: its quadrature rules must be at most %d, the first "
                       "for 0 rows, by increasing rows.", GMX_MAX_RULES);
      d->rule_min[d->rules] = (int) c[0];
      d->rule_at[d->rules] = k;
      d->rule_q[d->rules] = 0;
      d->rules++;
    }
    if (++d->rule_q[d->rules - 1] > GMX_MAX_NODES)
      return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: a quadrature rule has over %d nodes.",
                     GMX_MAX_NODES);
    if (d->rule_q[d->rules - 1] > d->q) d->q = d->rule_q[d->rules - 1];
  }
  if (d->rules == 0)
    return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: it has no quadrature rule.");
  double *node = (double *) R_alloc(total, sizeof(double));
  double *lw = (double *) R_alloc(total, sizeof(double));
  for (int k = 0; k < total; k++) {
    node[k] = quad[3 * (sg_index) k + 1];
    lw[k] = quad[3 * (sg_index) k + 2] + node[k] * node[k];
  }
  d->node = node;
  d->log_weight = lw;
  return SG_OK;
}

int sg_glm_mixed_init(sg_model *m, const double *rows, int p, int family, int n_units,
                      const int *unit_rows, const int *context, sg_glmm_effects effects,
                      const double *quad, int total, sg_prior prior, sg_status *st) {
  if (p < 1 || n_units < 0)
    return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: no design columns.");
  if (family < SG_GLMM_LOGISTIC || family > SG_GLMM_BINOMIAL)
    return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: unknown response family %d.", family);
  gmx_data *d = (gmx_data *) R_alloc(1, sizeof(gmx_data));
  if (gmx_rules(d, quad, total, st)) return st->code;
  const int q = d->q;
  if (p > INT_MAX / (4 * GMX_MAX_NODES) - 64)
    return sg_fail(st, SG_ERR_INPUT, "`model` has too many design columns.");
  const int ne = effects.q;
  if (ne < 1 || ne > SG_MIXED_MAX_Q)
    return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: it has %d random effects per group (1 to %d).",
                   ne, SG_MIXED_MAX_Q);
  const int known_tau = !ISNAN(effects.tau[0]);
  for (int k = 0; k < ne; k++) {
    if (ISNAN(effects.tau[k]) != !known_tau ||
        (known_tau && (!(effects.tau[k] > 0) || !R_FINITE(effects.tau[k]))))
      return sg_fail(st, SG_ERR_INPUT, "`group_sd` must be positive and finite, or all unknown.");
    if (effects.zcol[k] < -1 || effects.zcol[k] >= p)
      return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: random effect %d has no design column.",
                     k + 1);
    d->zcol[k] = effects.zcol[k];
    d->tau[k] = effects.tau[k];
  }
  d->n_eff = ne;
  d->general = ne > 1 || effects.zcol[0] != -1 || effects.cor != NULL;
  const int known_cor = effects.cor != NULL && !ISNAN(effects.cor[0]);
  if (effects.cor && ne < 2)
    return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: a correlation needs 2 random effects.");
  for (int k = 0; k < ne * ne; k++) d->cor_chol[k] = k % (ne + 1) == 0 ? 1.0 : 0.0;
  if (known_cor && sg_correlation_cholesky(effects.cor, ne, d->cor_chol, st)) return st->code;
  d->grid = 1;
  for (int k = 0; k < ne; k++) {
    if (d->grid > SG_GLMM_MAX_GRID / q)
      return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: its quadrature grid has over %d nodes.",
                     SG_GLMM_MAX_GRID);
    d->grid *= q;
  }
  sg_index *start = (sg_index *) R_alloc((size_t) n_units + 1, sizeof(sg_index));
  sg_index max_rows = 0;
  start[0] = 0;
  for (int u = 0; u < n_units; u++) {
    if (unit_rows[u] < 1 || context[u] < 0 || context[u] >= unit_rows[u])
      return sg_fail(st, SG_ERR_INPUT,
                     "`model` data are corrupt: observation %d has %d rows and %d of context.",
                     u + 1, unit_rows[u], context[u]);
    start[u + 1] = start[u] + unit_rows[u];
    if (unit_rows[u] > max_rows) max_rows = unit_rows[u];
  }
  const int stride = sg_rows_stride(p + 2 + (family == SG_GLMM_BINOMIAL));
  if (start[n_units] > INT_MAX)
    return sg_fail(st, SG_ERR_INPUT, "`model` data are corrupt: too many rows.");
  const int n_rows = (int) start[n_units];
  if (family == SG_GLMM_LOGISTIC) {
    for (sg_index r = 0; r < n_rows; r++) {
      const double y = rows[r * stride + p];
      if (y != 0.0 && y != 1.0)
        return sg_fail(st, SG_ERR_INPUT,
                       "`model` data are corrupt: the response is not 0 or 1 at row %d.",
                       (int) r + 1);
    }
  } else if (sg_count_rows_check(rows, p, n_rows, stride, st) ||
             (family == SG_GLMM_BINOMIAL &&
              sg_binomial_rows_check(rows, n_rows, stride, p, p + 2, st))) {
    return st->code;
  }
  d->rows = rows;
  d->p = p;
  d->stride = stride;
  d->family = family;
  d->start = start;
  d->context = context;
  d->log_factorial = family == SG_GLMM_LOGISTIC ? NULL : sg_log_factorial_table();
  d->max_rows = max_rows;
  int dim = p;
  d->omega_at = family == SG_GLMM_NEGATIVE_BINOMIAL ? dim++ : -1;
  d->tau_at = known_tau ? -1 : dim;
  if (!known_tau) dim += ne;
  d->cor_at = effects.cor != NULL && !known_cor ? dim : -1;
  if (d->cor_at >= 0) dim += ne * (ne - 1) / 2;
  d->prior = prior;
  if (sg_prior_check(&d->prior, dim, st)) return st->code;

  sg_model_define(m, dim, n_units, d, sg_blocks_model_prior_draw, sg_blocks_model_log_prior);
  /* gmx_work() */
  m->scratch_bytes =
      ((size_t) gmx_work_size(d) + p + (size_t) max_rows * (1 + ne)) * sizeof(double);
  m->log_lik = gmx_log_lik;
  m->log_lik_pointwise = gmx_log_lik_pointwise;
  return SG_OK;
}
