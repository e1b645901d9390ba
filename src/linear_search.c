/* Exact evidence of many submodels of a linear regression (linear_search.h). */
#include "linear_search.h"
#include <math.h>
#include <string.h>

/* The enumeration updates one state from submodel to submodel by sweeps; it is rebuilt from the
 * group-0 state every LS_REFRESH_STEPS steps, so that rounding cannot accumulate, and after a
 * step whose pivot fell below LS_PIVOT_REFRESH of its column's diagonal (a column nearly
 * dependent on those in: undoing its sweep later would carry errors magnified by 1 / pivot). */
#define LS_REFRESH_STEPS 128
#define LS_PIVOT_REFRESH 1e-2
/* Pivots at or below this fraction of the diagonal: the columns are linearly dependent. */
#define LS_PIVOT_SINGULAR 1e-13
/* The Zellner-Siow quadrature: steps of at most half the integrand's width about its mode and
 * LS_ZS_MAX_STEP in log g, nodes outward until they add less than LS_ZS_TAIL of the sum. */
#define LS_ZS_MAX_STEP 0.4
#define LS_ZS_TAIL 1e-17
#define LS_ZS_MAX_NODES 20000
/* The slopes' cross products are taken as A00 M (ZS's one-eigenvalue form) within this relative
 * difference, the rounding of statistics from the same rows. */
#define LS_USUAL_TOL 1e-12
/* MCMC: the probability of a move that adds or drops one term (else a swap). */
#define LS_FLIP_PROB 0.5

static const double LOG_2PI = 1.837877066409345483560659472811;
static const double LGAMMA_HALF = 0.5723649429247000870717136756012; /* lgamma(1/2) */

/* ---------------------------------------------------------------- small dense algebra */

/* In-place Cholesky a = L L' of the k x k matrix a (column-major, lower triangle used and
 * written); returns 0, or 1 when a is not positive definite. */
static int chol_lower(double *a, int k) {
  for (int j = 0; j < k; j++) {
    double *aj = a + (size_t) j * k;
    double d = aj[j];
    for (int m = 0; m < j; m++) d -= a[j + (size_t) m * k] * a[j + (size_t) m * k];
    if (!(d > 0.0) || !R_FINITE(d)) return 1;
    d = sqrt(d);
    aj[j] = d;
    for (int i = j + 1; i < k; i++) {
      double s = aj[i];
      for (int m = 0; m < j; m++) s -= a[i + (size_t) m * k] * a[j + (size_t) m * k];
      aj[i] = s / d;
    }
  }
  return 0;
}

/* x <- L^-1 x (forward substitution) and x <- L'^-1 x (back substitution). */
static void solve_lower(const double *l, int k, double *x) {
  for (int i = 0; i < k; i++) {
    double s = x[i];
    for (int m = 0; m < i; m++) s -= l[i + (size_t) m * k] * x[m];
    x[i] = s / l[i + (size_t) i * k];
  }
}
static void solve_upper_t(const double *l, int k, double *x) {
  for (int i = k - 1; i >= 0; i--) {
    double s = x[i];
    for (int m = i + 1; m < k; m++) s -= l[m + (size_t) i * k] * x[m];
    x[i] = s / l[i + (size_t) i * k];
  }
}

/* inv <- (L L')^-1, k x k, full; col is scratch of k. */
static void chol_inverse(const double *l, int k, double *inv, double *col) {
  for (int j = 0; j < k; j++) {
    for (int i = 0; i < k; i++) col[i] = (i == j);
    solve_lower(l, k, col);
    solve_upper_t(l, k, col);
    memcpy(inv + (size_t) j * k, col, k * sizeof(double));
  }
}

/* Eigenvalues w and eigenvectors (columns of v) of the symmetric k x k matrix a, destroyed, by
 * cyclic Jacobi rotations (Golub and Van Loan 2013, Section 8.5), accurate for the small
 * eigenvalues too. */
static void jacobi_eigen(double *a, int k, double *w, double *v) {
  for (int i = 0; i < k * k; i++) v[i] = 0.0;
  for (int i = 0; i < k; i++) v[i + (size_t) i * k] = 1.0;
  for (int sweep = 0; sweep < 60; sweep++) {
    double off = 0.0, diag = 0.0;
    for (int j = 0; j < k; j++) {
      diag += a[j + (size_t) j * k] * a[j + (size_t) j * k];
      for (int i = 0; i < j; i++) off += a[i + (size_t) j * k] * a[i + (size_t) j * k];
    }
    if (off <= 1e-32 * diag || off == 0.0) break;
    for (int p = 0; p < k - 1; p++) {
      for (int q = p + 1; q < k; q++) {
        const double apq = a[p + (size_t) q * k];
        if (apq == 0.0) continue;
        const double app = a[p + (size_t) p * k], aqq = a[q + (size_t) q * k];
        const double theta = (aqq - app) / (2.0 * apq);
        double t = fabs(theta) > 1e150 ? 0.5 / theta
                                       : 1.0 / (fabs(theta) + sqrt(theta * theta + 1.0));
        if (theta < 0.0 && fabs(theta) <= 1e150) t = -t;
        const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        a[p + (size_t) p * k] = app - t * apq;
        a[q + (size_t) q * k] = aqq + t * apq;
        a[p + (size_t) q * k] = a[q + (size_t) p * k] = 0.0;
        for (int r = 0; r < k; r++) {
          if (r != p && r != q) {
            const double arp = a[r + (size_t) p * k], arq = a[r + (size_t) q * k];
            a[r + (size_t) p * k] = a[p + (size_t) r * k] = c * arp - s * arq;
            a[r + (size_t) q * k] = a[q + (size_t) r * k] = s * arp + c * arq;
          }
          const double vrp = v[r + (size_t) p * k], vrq = v[r + (size_t) q * k];
          v[r + (size_t) p * k] = c * vrp - s * vrq;
          v[r + (size_t) q * k] = s * vrp + c * vrq;
        }
      }
    }
  }
  for (int i = 0; i < k; i++) w[i] = a[i + (size_t) i * k];
}

/* The sweep operator on column k of the symmetric D x D matrix g (Little and Rubin 2002,
 * Section 7.4.3), or its reverse (in = 0): sweeping a set S of the columns of [[P, b], [b', c]]
 * leaves -P_SS^-1 in the S block, P_SS^-1 P_S. beside it and c - b_S' P_SS^-1 b_S in the corner,
 * in any order, and a reverse sweep removes a column from S. Returns the pivot, the Schur
 * complement of column k given the other swept columns (the factor by which det P_SS grows when
 * k enters, or shrinks when it leaves). v: scratch of D. */
static double sweep(double *g, int D, int k, int in, double *v) {
  double *gk = g + (size_t) k * D;
  memcpy(v, gk, D * sizeof(double));
  const double d = v[k], inv = 1.0 / d, sign = in ? 1.0 : -1.0;
  for (int j = 0; j < D; j++) {
    if (j == k) continue;
    double *gj = g + (size_t) j * D;
    const double f = v[j] * inv;
    for (int i = 0; i < D; i++) gj[i] -= v[i] * f;
    gj[k] = sign * f;
  }
  for (int i = 0; i < D; i++) gk[i] = sign * v[i] * inv;
  gk[k] = -inv;
  return in ? d : -inv;
}

/* ---------------------------------------------------------------- the problem */

static int popcount64(uint64_t x) {
  int c = 0;
  while (x) {
    x &= x - 1;
    c++;
  }
  return c;
}

static int member_has(const uint64_t *m, int k) {
  return (int) ((m[k >> 6] >> (k & 63)) & 1u);
}

static int member_size(const uint64_t *m, int W) {
  int s = 0;
  for (int w = 0; w < W; w++) s += popcount64(m[w]);
  return s;
}

int ls_allowed(const ls_problem *p, const uint64_t *member) {
  for (int k = 0; k < p->K; k++) {
    if (!member_has(member, k)) continue;
    const uint64_t *par = p->parents + (size_t) k * p->W;
    for (int w = 0; w < p->W; w++)
      if (par[w] & ~member[w]) return 0;
  }
  return 1;
}

/* The columns of each term (term_start, term_cols; the group-0 columns in cols0) and each
 * term's parents as bit sets, checked. */
static int setup_terms(const ls_input *in, ls_problem *p, sg_status *st) {
  const int q = in->q, K = in->K;
  p->term_start = (int *) R_alloc(K + 2, sizeof(int));
  p->term_cols = (int *) R_alloc(q, sizeof(int));
  p->cols0 = (int *) R_alloc(q, sizeof(int));
  for (int k = 0; k <= K + 1; k++) p->term_start[k] = 0;
  for (int j = 0; j < q; j++) {
    const int gj = in->group[j];
    if (gj < 0 || gj > K) return sg_fail(st, SG_ERR_INPUT, "`group` must be in 0..%d.", K);
    if (gj == 0) p->cols0[p->n0++] = j;
    else p->term_start[gj]++;
  }
  /* counts to starts: term k (0-based) at term_start[k] */
  int at = 0;
  for (int k = 0; k < K; k++) {
    const int c = p->term_start[k + 1];
    if (c == 0) return sg_fail(st, SG_ERR_INPUT, "Term %d has no column in `group`.", k + 1);
    p->term_start[k] = at;
    at += c;
  }
  p->term_start[K] = at;
  int *fill = (int *) R_alloc(K + 1, sizeof(int));
  for (int k = 0; k < K; k++) fill[k] = p->term_start[k];
  for (int j = 0; j < q; j++)
    if (in->group[j] > 0) p->term_cols[fill[in->group[j] - 1]++] = j;
  /* parents as bit sets */
  p->parents = (uint64_t *) R_alloc((size_t) K * p->W + 1, sizeof(uint64_t));
  memset(p->parents, 0, ((size_t) K * p->W + 1) * sizeof(uint64_t));
  for (int k = 0; k < K; k++) {
    for (int i = in->parent_start[k]; i < in->parent_start[k + 1]; i++) {
      const int r = in->parent_term[i];
      if (r < 0 || r >= K || r == k)
        return sg_fail(st, SG_ERR_INPUT, "Term %d's parents must be other terms.", k + 1);
      p->parents[(size_t) k * p->W + (r >> 6)] |= (uint64_t) 1 << (r & 63);
    }
  }
  return SG_OK;
}

/* The group-0 columns A_0 are in every submodel, so their prior means m_0 can leave the
 * likelihood once for all: y' = y - A_0 m_0 has A'y' = A'y - A'A_0 m_0 (am = A'A_0 m_0, q) and
 * y''y' = y'y - 2 m_0'A_0'y + m_0'A_0'A_0 m_0, returned (y'y itself when every m_0 is 0). */
static double shift_statistics(const ls_input *in, const ls_problem *p, double *am) {
  const int q = in->q;
  double c = in->yy;
  int shifted = 0;
  for (int j = 0; j < q; j++) am[j] = 0.0;
  for (int i = 0; i < p->n0; i++) {
    const int j = p->cols0[i];
    const double m = in->mean[j];
    if (m == 0.0) continue;
    shifted = 1;
    for (int r = 0; r < q; r++) am[r] += in->xtx[r + (size_t) j * q] * m;
  }
  if (shifted) {
    double mxty = 0.0, mam = 0.0;
    for (int i = 0; i < p->n0; i++) {
      const int j = p->cols0[i];
      mxty += in->mean[j] * in->xty[j];
      mam += in->mean[j] * am[j];
    }
    c = in->yy - 2.0 * mxty + mam;
  }
  return c;
}

/* The normal prior (known noise variance s2) and the normal-inverse-gamma prior: the augmented
 * matrix's P = A'A / s2 + diag(var)^-1, b = A'y' / s2 + var^-1 mean (candidate columns),
 * c0 = y''y' / s2 (s2 = 1 for NIG, whose sigma^2 is integrated out in the evidence), the
 * constant of every log evidence and each term's sums of log var and mean^2 / var. */
static int setup_conjugate(const ls_input *in, ls_problem *p, sg_status *st) {
  const int q = in->q, K = in->K, normal = in->kind == LS_NORMAL;
  const double n = in->n;
  if (normal && !(in->s2 > 0.0 && R_FINITE(in->s2)))
    return sg_fail(st, SG_ERR_INPUT, "The noise variance must be positive.");
  if (!normal && !(in->shape > 0.0 && in->scale > 0.0 && R_FINITE(in->shape) &&
                   R_FINITE(in->scale)))
    return sg_fail(st, SG_ERR_INPUT, "The variance's shape and scale must be positive.");
  for (int j = 0; j < q; j++)
    if (!(in->var[j] > 0.0 && R_FINITE(in->var[j]) && R_FINITE(in->mean[j])))
      return sg_fail(st, SG_ERR_INPUT, "Prior variances must be positive, means finite.");
  double *am = (double *) R_alloc(q, sizeof(double));
  const double c = shift_statistics(in, p, am);
  const double s2 = normal ? in->s2 : 1.0;
  for (int j = 0; j < q; j++) {
    for (int r = 0; r < q; r++) p->P[r + (size_t) j * q] = in->xtx[r + (size_t) j * q] / s2;
    p->P[j + (size_t) j * q] += 1.0 / in->var[j];
    p->b[j] = (in->xty[j] - am[j]) / s2 + (in->group[j] > 0 ? in->mean[j] / in->var[j] : 0.0);
  }
  p->c0 = c / s2;
  double log_var0 = 0.0;
  for (int i = 0; i < p->n0; i++) log_var0 += log(in->var[p->cols0[i]]);
  p->term_log_var = (double *) R_alloc(K + 1, sizeof(double));
  p->term_mean2 = (double *) R_alloc(K + 1, sizeof(double));
  for (int k = 0; k < K; k++) {
    p->term_log_var[k] = p->term_mean2[k] = 0.0;
    for (int i = p->term_start[k]; i < p->term_start[k + 1]; i++) {
      const int j = p->term_cols[i];
      p->term_log_var[k] += log(in->var[j]);
      p->term_mean2[k] += in->mean[j] * in->mean[j] / in->var[j];
    }
  }
  p->shape = in->shape;
  p->scale = in->scale;
  p->mean0 = (double *) R_alloc(q, sizeof(double));
  memcpy(p->mean0, in->mean, q * sizeof(double));
  p->const0 = normal ? -0.5 * n * log(2.0 * M_PI * s2) - 0.5 * log_var0
                     : lgammafn(in->shape + 0.5 * n) - lgammafn(in->shape) +
                           in->shape * log(in->scale) - 0.5 * n * LOG_2PI - 0.5 * log_var0;
  return SG_OK;
}

/* The g-prior and the Zellner-Siow prior, in BayesFactor's conventions (a flat intercept, first
 * and in every submodel): M (gram) checked positive definite, A'A[0, 0], y'y less its
 * intercept-only fit; for G, P gains M / g in the slopes' block; for ZS, the slopes' C and d with
 * the intercept eliminated, and whether C = A00 M (the usual form, one eigenvalue: zs_usual). */
static int setup_g_priors(const ls_input *in, ls_problem *p, sg_status *st) {
  const int q = in->q;
  const double n = in->n;
  if (in->group[0] != 0)
    return sg_fail(st, SG_ERR_INPUT, "The g-priors need the intercept first, in group 0.");
  if (!(n > q))
    return sg_fail(st, SG_ERR_INPUT, "The g-priors need more rows than design columns.");
  if (!(in->g > 0.0 && R_FINITE(in->g)))
    return sg_fail(st, SG_ERR_INPUT, "`g` (or r^2) must be positive.");
  const int ks = q - 1;
  p->g = in->g;
  p->a00 = in->xtx[0];
  if (!(p->a00 > 0.0)) return sg_fail(st, SG_ERR_INPUT, "The intercept's column is zero.");
  p->gram = (double *) R_alloc((size_t) ks * ks + 1, sizeof(double));
  if (ks > 0) {
    if (!sg_all_finite(in->gram, ks * ks))
      return sg_fail(st, SG_ERR_INPUT, "`gram` must be finite.");
    memcpy(p->gram, in->gram, (size_t) ks * ks * sizeof(double));
    double *l = (double *) R_alloc((size_t) ks * ks, sizeof(double));
    memcpy(l, in->gram, (size_t) ks * ks * sizeof(double));
    if (chol_lower(l, ks)) return sg_fail(st, SG_ERR_INPUT, "`gram` must be positive definite.");
  }
  p->syy = in->yy - in->xty[0] * in->xty[0] / p->a00;
  if (!(p->syy > 0.0)) return sg_fail(st, SG_ERR_INPUT, "The response has no spread.");
  if (in->kind == LS_G) {
    for (int j = 1; j < q; j++)
      for (int i = 1; i < q; i++)
        p->P[i + (size_t) j * q] += in->gram[(i - 1) + (size_t) (j - 1) * ks] / in->g;
    return SG_OK;
  }
  /* ZS: the slopes with the intercept eliminated */
  p->cs = (double *) R_alloc((size_t) ks * ks + 1, sizeof(double));
  p->ds = (double *) R_alloc(ks + 1, sizeof(double));
  p->usual = 1;
  for (int j = 0; j < ks; j++) {
    p->ds[j] = in->xty[j + 1] - in->xtx[j + 1] * in->xty[0] / p->a00;
    for (int i = 0; i < ks; i++)
      p->cs[i + (size_t) j * ks] =
          in->xtx[(i + 1) + (size_t) (j + 1) * q] - in->xtx[i + 1] * in->xtx[j + 1] / p->a00;
  }
  for (int j = 0; j < ks && p->usual; j++)
    for (int i = 0; i < ks; i++) {
      const double c = p->cs[i + (size_t) j * ks];
      const double scale = sqrt(fabs(p->cs[i + (size_t) i * ks] * p->cs[j + (size_t) j * ks]));
      if (fabs(c - p->a00 * p->gram[i + (size_t) j * ks]) > LS_USUAL_TOL * scale) {
        p->usual = 0;
        break;
      }
    }
  return SG_OK;
}

/* linear_search.h: the input checked, then the terms and the prior's part of the problem. */
int ls_setup(const ls_input *in, ls_problem *p, sg_status *st) {
  const int q = in->q, K = in->K;
  memset(p, 0, sizeof *p);
  if (q < 1 || K < 0) return sg_fail(st, SG_ERR_INPUT, "The design has no columns.");
  if (!(in->n >= 1.0) || !R_FINITE(in->yy) || !sg_all_finite(in->xtx, q * q) ||
      !sg_all_finite(in->xty, q))
    return sg_fail(st, SG_ERR_INPUT, "The sufficient statistics must be finite, with n >= 1.");
  p->kind = in->kind;
  p->q = q;
  p->K = K;
  p->W = K > 0 ? (K + 63) / 64 : 1;
  p->n = in->n;
  p->offset = in->offset;
  if (setup_terms(in, p, st)) return st->code;
  p->P = (double *) R_alloc((size_t) q * q, sizeof(double));
  p->b = (double *) R_alloc(q, sizeof(double));
  memcpy(p->P, in->xtx, (size_t) q * q * sizeof(double));
  memcpy(p->b, in->xty, q * sizeof(double));
  p->c0 = in->yy;
  if (in->kind == LS_NORMAL || in->kind == LS_NIG) return setup_conjugate(in, p, st);
  if (in->kind != LS_G && in->kind != LS_ZS)
    return sg_fail(st, SG_ERR_INPUT, "Unknown prior kind %d.", in->kind);
  return setup_g_priors(in, p, st);
}

double ls_count_allowed(const ls_problem *p) {
  const int K = p->K;
  uint32_t par[LS_MAX_ENUMERATE];
  int any = 0;
  for (int k = 0; k < K; k++) {
    par[k] = (uint32_t) p->parents[(size_t) k * p->W];
    any |= par[k] != 0;
  }
  const uint32_t total = (uint32_t) 1 << K;
  if (!any) return (double) total;
  double count = 0.0;
  for (uint32_t c = 0; c < total; c++) {
    int ok = 1;
    for (uint32_t rest = c; rest && ok; rest &= rest - 1) {
      const int k = __builtin_ctz(rest);
      ok = (par[k] & ~c) == 0;
    }
    count += ok;
  }
  return count;
}

/* ---------------------------------------------------------------- the Zellner-Siow integral */

/* The integrand over t = log g: with u_i = g lam_i / (1 + g lam_i),
 *   h(t) = -t/2 - r2 e^-t / 2 - 1/2 sum mult_i log(1 + g lam_i) - (n-1)/2 log(Q(g) / Q(0)),
 *   Q(g) = qinf + sum s_i / (1 + g lam_i),
 * the G prior's log evidence (zellner_log_evidence(), with det(A'A + blockdiag(0, M / g)) =
 * A00 det(M) prod(1 / g + lam_i)) plus the log density of t, less what does not depend on g.
 * In the usual case (slopes' cross products A00 M) there is one eigenvalue, A00, of
 * multiplicity k, and s = the regression sum of squares (Liang et al. 2008, eq. 5; the
 * mixture over g: their Section 3.1). */
typedef struct {
  int m;
  const double *lam, *s, *mult;
  double qinf, q0, half_nm1, r2;
} zs_fun;

static double zs_h(const zs_fun *z, double t) {
  if (t > 700.0 || t < -700.0) return R_NegInf;
  const double g = exp(t);
  double ld = 0.0, q = z->qinf;
  for (int i = 0; i < z->m; i++) {
    const double gl = g * z->lam[i];
    ld += z->mult[i] * log1p(gl);
    q += z->s[i] / (1.0 + gl);
  }
  return -0.5 * t - 0.5 * z->r2 / g - 0.5 * ld - z->half_nm1 * log(q / z->q0);
}

/* h'(t) and h''(t). */
static void zs_slopes(const zs_fun *z, double t, double *d1, double *d2) {
  const double g = exp(t), er = z->r2 / g;
  double a1 = 0.0, a2 = 0.0, q = z->qinf, q1 = 0.0, q2 = 0.0;
  for (int i = 0; i < z->m; i++) {
    const double w = 1.0 / (1.0 + g * z->lam[i]), u = 1.0 - w;
    a1 += z->mult[i] * u;
    a2 += z->mult[i] * u * w;
    q += z->s[i] * w;
    q1 -= z->s[i] * u * w;
    q2 -= z->s[i] * u * w * (w - u);
  }
  const double r1 = q1 / q, r2 = q2 / q;
  *d1 = -0.5 + 0.5 * er - 0.5 * a1 - z->half_nm1 * r1;
  *d2 = -0.5 * er - 0.5 * a2 - z->half_nm1 * (r2 - r1 * r1);
}

/* The mode of h, by Newton's method kept within a bracket, and bisection: h' falls from +Inf
 * (t -> -Inf) to -(k + 1)/2 (t -> Inf) and, in every case tried, crosses 0 once. *sd: the width
 * 1 / sqrt(-h'') there. */
static double zs_mode(const zs_fun *z, double *sd) {
  double t = log(z->r2), d1, d2;
  t = fmin(fmax(t, -600.0), 600.0);
  zs_slopes(z, t, &d1, &d2);
  double lo = t, hi = t, step = 1.0;
  if (d1 > 0.0) {
    for (;;) {
      hi = fmin(lo + step, 690.0);
      zs_slopes(z, hi, &d1, &d2);
      if (!(d1 > 0.0) || hi >= 690.0) break;
      lo = hi;
      step *= 2.0;
    }
  } else {
    for (;;) {
      lo = fmax(hi - step, -690.0);
      zs_slopes(z, lo, &d1, &d2);
      if (d1 > 0.0 || lo <= -690.0) break;
      hi = lo;
      step *= 2.0;
    }
  }
  t = 0.5 * (lo + hi);
  for (int it = 0; it < 200; it++) {
    zs_slopes(z, t, &d1, &d2);
    if (d1 > 0.0) lo = t;
    else hi = t;
    double next = d2 < 0.0 ? t - d1 / d2 : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    const double moved = fabs(next - t);
    t = next;
    if (moved < 1e-9 || hi - lo < 1e-9) break;
  }
  zs_slopes(z, t, &d1, &d2);
  *sd = d2 < 0.0 ? 1.0 / sqrt(-d2) : 1.0;
  return t;
}

/* log of the integral of exp(h) by the trapezoidal rule in t about the mode. h is analytic in
 * the strip |Im t| < pi/2 (there Re g > 0, so neither 1 + g lam nor Q(g) vanishes), so the
 * rule's error falls as exp(-pi^2 / step) (Trefethen and Weideman 2014, Theorem 5.1): the
 * step is at most LS_ZS_MAX_STEP for that, and half the width about the mode so that a sharp
 * peak is resolved. Nodes go outward until they add less than LS_ZS_TAIL of the sum (h falls
 * monotonically away from its mode). With t_out and w_out (may be NULL; room for
 * LS_ZS_MAX_NODES) the nodes and their normalised weights. */
static double zs_integral(const zs_fun *z, int *nodes, double *t_out, double *w_out) {
  double sd;
  const double mode = zs_mode(z, &sd);
  const double step = fmin(0.5 * sd, LS_ZS_MAX_STEP), top = zs_h(z, mode);
  double total = 1.0;
  int count = 1;
  if (t_out) {
    t_out[0] = mode;
    w_out[0] = 1.0;
  }
  for (int dir = -1; dir <= 1; dir += 2) {
    for (int j = 1; count < LS_ZS_MAX_NODES; j++) {
      const double t = mode + dir * j * step, v = exp(zs_h(z, t) - top);
      total += v;
      if (t_out) {
        t_out[count] = t;
        w_out[count] = v;
      }
      count++;
      if (!(v > LS_ZS_TAIL * total)) break;
    }
  }
  if (w_out)
    for (int i = 0; i < count; i++) w_out[i] /= total;
  if (nodes) *nodes = count;
  return top + log(total * step);
}

/* The constant of the density of t = log g, g ~ InvGamma(1/2, r2 / 2). */
static double zs_prior_const(double r2) {
  return 0.5 * log(0.5 * r2) - LGAMMA_HALF;
}

double ls_zs_log_integral(int m, const double *lam, const double *s, const double *mult,
                          double qinf, double n, double r2, int *nodes) {
  double q0 = qinf;
  for (int i = 0; i < m; i++) q0 += s[i];
  zs_fun z = {m, lam, s, mult, qinf, q0, 0.5 * (n - 1.0), r2};
  return zs_integral(&z, nodes, NULL, NULL) + zs_prior_const(r2);
}

/* The G prior's log evidence less the log of the integral: the constant of every submodel of
 * a G or ZS problem, given Q(0) = syy (zellner_log_evidence() with -1/2 log det P - k/2 log g +
 * 1/2 log det M_S = -1/2 log A00 - 1/2 sum log(1 + g lam_i)). */
static double zellner_const(const ls_problem *p) {
  const double nm1 = p->n - 1.0;
  return -0.5 * nm1 * LOG_2PI - 0.5 * log(p->a00) + lgammafn(0.5 * nm1) -
         0.5 * nm1 * log(0.5 * p->syy) + p->offset;
}

/* ZS's log evidence in the usual case from the regression sum of squares ssr of k slopes. */
static double zs_usual(const ls_problem *p, int k, double ssr, int *nodes, double *t_out,
                       double *w_out) {
  if (k == 0) {
    if (nodes) *nodes = 0;
    return zellner_const(p);
  }
  ssr = fmin(fmax(ssr, 0.0), p->syy);
  const double mult = k;
  zs_fun z = {1, &p->a00, &ssr, &mult, p->syy - ssr, p->syy, 0.5 * (p->n - 1.0), p->g};
  return zellner_const(p) + zs_prior_const(p->g) + zs_integral(&z, nodes, t_out, w_out);
}

/* ---------------------------------------------------------------- one submodel, afresh */

/* The columns of a submodel in the design's order; returns their number. */
static int model_columns(const ls_problem *p, const uint64_t *member, int *idx) {
  int k = 0;
  for (int i = 0; i < p->n0; i++) idx[k++] = p->cols0[i];
  for (int t = 0; t < p->K; t++)
    if (member_has(member, t))
      for (int i = p->term_start[t]; i < p->term_start[t + 1]; i++) idx[k++] = p->term_cols[i];
  /* insertion sort: at most q columns */
  for (int i = 1; i < k; i++) {
    const int v = idx[i];
    int j = i - 1;
    while (j >= 0 && idx[j] > v) {
      idx[j + 1] = idx[j];
      j--;
    }
    idx[j + 1] = v;
  }
  return k;
}

/* Sums over a submodel's terms of the terms' log var and mean^2 / var. */
static void term_sums(const ls_problem *p, const uint64_t *member, double *log_var,
                      double *mean2) {
  double a = 0.0, b = 0.0;
  for (int t = 0; t < p->K; t++)
    if (member_has(member, t)) {
      a += p->term_log_var[t];
      b += p->term_mean2[t];
    }
  *log_var = a;
  *mean2 = b;
}

/* The principal submatrix of the q x q matrix x on idx (k of them) into out. */
static void take(const double *x, int q, const int *idx, int k, double *out) {
  for (int j = 0; j < k; j++)
    for (int i = 0; i < k; i++) out[i + (size_t) j * k] = x[idx[i] + (size_t) idx[j] * q];
}

/* The moments of a normal or t posterior: mean = P^-1 b (plus the shifted prior means), scale =
 * factor P^-1, cov = scale df / (df - 2) (df infinite: cov = scale), spread into q. */
static void spread_moments(const ls_problem *p, const int *idx, int k, const double *l,
                           const double *z, double factor, double df, const double *shift,
                           double *mean, double *scale, double *cov, double *work) {
  const int q = p->q;
  double *mu = work, *inv = work + k, *col = work + k + (size_t) k * k;
  memcpy(mu, z, k * sizeof(double));
  solve_upper_t(l, k, mu);
  chol_inverse(l, k, inv, col);
  for (int i = 0; i < q; i++) mean[i] = 0.0;
  for (int i = 0; i < q * q; i++) scale[i] = cov[i] = 0.0;
  const double inflate = R_FINITE(df) ? df / (df - 2.0) : 1.0;
  for (int j = 0; j < k; j++) {
    mean[idx[j]] = mu[j] + (shift ? shift[idx[j]] : 0.0);
    for (int i = 0; i < k; i++) {
      const double v = factor * inv[i + (size_t) j * k];
      scale[idx[i] + (size_t) idx[j] * q] = v;
      cov[idx[i] + (size_t) idx[j] * q] = v * inflate;
    }
  }
}

/* Scratch for one submodel of up to q columns (R_alloc'ed once per call). */
typedef struct {
  int *idx, *slopes;
  double *a, *m, *z, *v, *w, *e, *work, *t, *wt, *mult, *s;
} ls_work;

static void work_init(const ls_problem *p, ls_work *w) {
  const size_t q = (size_t) p->q + 1;
  w->idx = (int *) R_alloc(q, sizeof(int));
  w->slopes = (int *) R_alloc(q, sizeof(int));
  w->a = (double *) R_alloc(q * q, sizeof(double));
  w->m = (double *) R_alloc(q * q, sizeof(double));
  w->v = (double *) R_alloc(q * q, sizeof(double));
  w->z = (double *) R_alloc(q, sizeof(double));
  w->w = (double *) R_alloc(q, sizeof(double));
  w->e = (double *) R_alloc(q, sizeof(double));
  w->mult = (double *) R_alloc(q, sizeof(double));
  w->s = (double *) R_alloc(q, sizeof(double));
  w->work = (double *) R_alloc(2 * q * q + 2 * q, sizeof(double));
  w->t = w->wt = NULL;
}

/* ZS in general (slopes' cross products C not A00 M, e.g. statistics of more rows than M's):
 * the generalised eigenvalues lam of C_S against M_S (M_S = L L', L^-1 C_S L^-T = U diag(lam) U')
 * and s_i = e_i^2 / lam_i with e = U' L^-1 d_S. Directions with lam_i at rounding level carry no
 * information and are left out. Returns the number of eigenvalues kept, or -1 when M_S is not
 * positive definite. */
static int zs_general_parts(const ls_problem *p, const int *sl, int k, ls_work *w, double *qinf) {
  const int ks = p->q - 1;
  double *c = w->a, *l = w->m, *u = w->v, *lam = w->w, *e = w->e;
  take(p->gram, ks, sl, k, l);
  if (chol_lower(l, k)) return -1;
  take(p->cs, ks, sl, k, c);
  /* c <- L^-1 C L^-T: columns, then rows */
  for (int j = 0; j < k; j++) solve_lower(l, k, c + (size_t) j * k);
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < k; j++) w->z[j] = c[i + (size_t) j * k];
    solve_lower(l, k, w->z);
    for (int j = 0; j < k; j++) c[i + (size_t) j * k] = w->z[j];
  }
  for (int j = 0; j < k; j++)
    for (int i = 0; i < j; i++)
      c[i + (size_t) j * k] = c[j + (size_t) i * k] =
          0.5 * (c[i + (size_t) j * k] + c[j + (size_t) i * k]);
  jacobi_eigen(c, k, lam, u);
  for (int i = 0; i < k; i++) w->z[i] = p->ds[sl[i]];
  solve_lower(l, k, w->z);
  double top = 0.0, ssr = 0.0;
  for (int i = 0; i < k; i++) top = fmax(top, lam[i]);
  int m = 0;
  for (int i = 0; i < k; i++) {
    double ei = 0.0;
    for (int r = 0; r < k; r++) ei += u[r + (size_t) i * k] * w->z[r];
    if (!(lam[i] > 1e-14 * top)) continue;
    lam[m] = lam[i];
    e[m] = ei * ei / lam[i];
    w->mult[m] = 1.0;
    ssr += e[m];
    m++;
  }
  *qinf = fmax(p->syy - ssr, 0.0);
  return m;
}

/* The slopes (indices into M) among a submodel's sorted columns idx (the intercept first). */
static int model_slopes(const int *idx, int k, int *sl) {
  int m = 0;
  for (int i = 0; i < k; i++)
    if (idx[i] > 0) sl[m++] = idx[i] - 1;
  return m;
}

/* ZS's log evidence of the submodel with slopes sl (k of them); with t_out, w_out the nodes. */
static double zs_model(const ls_problem *p, const int *sl, int k, ls_work *w, int *nodes,
                       double *t_out, double *w_out, sg_status *st) {
  if (k == 0) return zs_usual(p, 0, 0.0, nodes, NULL, NULL);
  if (p->usual) {
    double *l = w->a;
    take(p->cs, p->q - 1, sl, k, l);
    if (chol_lower(l, k)) {
      sg_fail(st, SG_ERR_INPUT, "A submodel's covariates are linearly dependent.");
      return R_NaN;
    }
    for (int i = 0; i < k; i++) w->z[i] = p->ds[sl[i]];
    solve_lower(l, k, w->z);
    double ssr = 0.0;
    for (int i = 0; i < k; i++) ssr += w->z[i] * w->z[i];
    return zs_usual(p, k, ssr, nodes, t_out, w_out);
  }
  double qinf;
  const int m = zs_general_parts(p, sl, k, w, &qinf);
  if (m < 0) {
    sg_fail(st, SG_ERR_INPUT, "`gram` must be positive definite.");
    return R_NaN;
  }
  if (m == 0) return zs_usual(p, 0, 0.0, nodes, NULL, NULL);
  zs_fun z = {m, w->w, w->e, w->mult, qinf, p->syy, 0.5 * (p->n - 1.0), p->g};
  return zellner_const(p) + zs_prior_const(p->g) + zs_integral(&z, nodes, t_out, w_out);
}

/* The ZS mixture's moments: at each node g, the G prior's t posterior (df n - 1, location
 * P(g)^-1 b, scale Q(g) / (n - 1) P(g)^-1 with P(g) = A'A + blockdiag(0, M / g)). */
static int zs_moments(const ls_problem *p, const int *idx, int k, ls_work *w, const double *t,
                      const double *wt, int nodes, ls_moments *mom, sg_status *st) {
  const int q = p->q;
  const double df = p->n - 1.0;
  mom->kind = LS_MOMENTS_T_MIXTURE;
  mom->df = df;
  mom->nodes = nodes;
  mom->g = (double *) R_alloc(nodes + 1, sizeof(double));
  mom->weight = (double *) R_alloc(nodes + 1, sizeof(double));
  mom->node_mean = (double *) R_alloc((size_t) nodes * q + 1, sizeof(double));
  mom->node_scale = (double *) R_alloc((size_t) nodes * q * q + 1, sizeof(double));
  double *cov = (double *) R_alloc((size_t) q * q, sizeof(double));
  for (int i = 0; i < q; i++) mom->mean[i] = 0.0;
  for (int i = 0; i < q * q; i++) mom->cov[i] = mom->scale[i] = 0.0;
  const int ks = q - 1;
  for (int r = 0; r < nodes; r++) {
    const double g = exp(t[r]);
    double *l = w->a;
    take(p->P, q, idx, k, l);
    for (int j = 0; j < k; j++)
      for (int i = 0; i < k; i++)
        if (idx[i] > 0 && idx[j] > 0)
          l[i + (size_t) j * k] += p->gram[(idx[i] - 1) + (size_t) (idx[j] - 1) * ks] / g;
    if (chol_lower(l, k))
      return sg_fail(st, SG_ERR_INPUT, "A submodel's posterior precision is singular.");
    for (int i = 0; i < k; i++) w->z[i] = p->b[idx[i]];
    solve_lower(l, k, w->z);
    double zz = 0.0;
    for (int i = 0; i < k; i++) zz += w->z[i] * w->z[i];
    const double qg = fmax(p->c0 - zz, 0.0);
    double *mean = mom->node_mean + (size_t) r * q, *scale = mom->node_scale + (size_t) r * q * q;
    spread_moments(p, idx, k, l, w->z, qg / df, df, NULL, mean, scale, cov, w->work);
    mom->g[r] = g;
    mom->weight[r] = wt[r];
    for (int i = 0; i < q; i++) mom->mean[i] += wt[r] * mean[i];
    for (int j = 0; j < q; j++)
      for (int i = 0; i < q; i++)
        mom->cov[i + (size_t) j * q] += wt[r] * (cov[i + (size_t) j * q] + mean[i] * mean[j]);
  }
  for (int j = 0; j < q; j++)
    for (int i = 0; i < q; i++) mom->cov[i + (size_t) j * q] -= mom->mean[i] * mom->mean[j];
  /* scale: the mixture's covariance in t units, for a single-t summary */
  for (int i = 0; i < q * q; i++) mom->scale[i] = mom->cov[i] * (df - 2.0) / df;
  return SG_OK;
}

static int evaluate(const ls_problem *p, const uint64_t *member, double *log_evidence,
                    ls_moments *mom, ls_work *w, sg_status *st) {
  const int q = p->q;
  int *idx = w->idx;
  const int k = model_columns(p, member, idx);
  if (p->kind == LS_ZS) {
    const int ks = model_slopes(idx, k, w->slopes);
    double *t = NULL, *wt = NULL;
    if (mom) {
      t = (double *) R_alloc(LS_ZS_MAX_NODES, sizeof(double));
      wt = (double *) R_alloc(LS_ZS_MAX_NODES, sizeof(double));
    }
    int nodes = 0;
    *log_evidence = zs_model(p, w->slopes, ks, w, &nodes, t, wt, st);
    if (st->code) return st->code;
    if (!mom) return SG_OK;
    if (nodes == 0) { /* the intercept alone: one node, any g */
      nodes = 1;
      t[0] = log(p->g);
      wt[0] = 1.0;
    }
    return zs_moments(p, idx, k, w, t, wt, nodes, mom, st);
  }
  double *l = w->a;
  take(p->P, q, idx, k, l);
  if (chol_lower(l, k))
    return sg_fail(st, SG_ERR_INPUT, "A submodel's posterior precision is singular.");
  double log_det = 0.0, zz = 0.0;
  for (int i = 0; i < k; i++) log_det += 2.0 * log(l[i + (size_t) i * k]);
  for (int i = 0; i < k; i++) w->z[i] = p->b[idx[i]];
  solve_lower(l, k, w->z);
  for (int i = 0; i < k; i++) zz += w->z[i] * w->z[i];
  double quad, factor, df;
  if (p->kind == LS_G) {
    const int ks = model_slopes(idx, k, w->slopes);
    double log_det_m = 0.0;
    if (ks > 0) {
      double *lm = w->m;
      take(p->gram, q - 1, w->slopes, ks, lm);
      if (chol_lower(lm, ks)) return sg_fail(st, SG_ERR_INPUT, "`gram` must be positive definite.");
      for (int i = 0; i < ks; i++) log_det_m += 2.0 * log(lm[i + (size_t) i * ks]);
    }
    const double nm1 = p->n - 1.0;
    quad = fmax(p->c0 - zz, 0.0);
    *log_evidence = -0.5 * nm1 * LOG_2PI - 0.5 * log_det - 0.5 * (ks * log(p->g) - log_det_m) +
                    lgammafn(0.5 * nm1) - 0.5 * nm1 * log(0.5 * quad) + p->offset;
    factor = quad / nm1;
    df = nm1;
  } else {
    double log_var, mean2;
    term_sums(p, member, &log_var, &mean2);
    quad = p->c0 + mean2 - zz;
    if (p->kind == LS_NORMAL) {
      *log_evidence = p->const0 - 0.5 * log_var - 0.5 * log_det - 0.5 * quad + p->offset;
      factor = 1.0;
      df = R_PosInf;
    } else {
      quad = fmax(quad, 0.0);
      const double a = p->shape + 0.5 * p->n, b = p->scale + 0.5 * quad;
      *log_evidence = p->const0 - 0.5 * log_var - 0.5 * log_det - a * log(b) + p->offset;
      factor = b / a;
      df = 2.0 * a;
    }
  }
  if (!mom) return SG_OK;
  mom->kind = R_FINITE(df) ? LS_MOMENTS_T : LS_MOMENTS_NORMAL;
  mom->df = df;
  mom->nodes = 0;
  /* the group-0 prior means shifted out of the response (ls_setup) come back */
  double *shift = NULL;
  if (p->kind == LS_NORMAL || p->kind == LS_NIG) {
    shift = (double *) R_alloc(q, sizeof(double));
    for (int j = 0; j < q; j++) shift[j] = 0.0;
    for (int i = 0; i < p->n0; i++) shift[p->cols0[i]] = p->mean0[p->cols0[i]];
  }
  spread_moments(p, idx, k, l, w->z, factor, df, shift, mom->mean, mom->scale, mom->cov,
                 w->work);
  return SG_OK;
}

int ls_evaluate(const ls_problem *p, const uint64_t *member, double *log_evidence,
                ls_moments *mom, sg_status *st) {
  ls_work w;
  work_init(p, &w);
  return evaluate(p, member, log_evidence, mom, &w, st);
}

/* ---------------------------------------------------------------- enumeration by sweeps */

/* A swept matrix over the candidate columns (in term order) and, for P, the response last: the
 * group-0 columns are swept out once (base), the rest scaled to a unit diagonal so that a pivot
 * is the fraction of its column's variance left given the columns swept in. */
typedef struct {
  int D, n_cand;
  double *base, *g, *log_scale, *v;
  double log_det, log_det0; /* of the candidate block swept in (unscaled); of the group-0 one */
} sweeper;

/* The base of a sweeper from the symmetric dim x dim matrix x: sweeps the `n_out` indices `out`,
 * keeps the `n_keep` indices `keep` (candidates, then the response when `response`). */
static int sweeper_init(sweeper *s, const double *x, int dim, const int *out, int n_out,
                        const int *keep, int n_keep, int response, sg_status *st) {
  double *full = (double *) R_alloc((size_t) dim * dim, sizeof(double));
  double *v = (double *) R_alloc(dim + 1, sizeof(double));
  memcpy(full, x, (size_t) dim * dim * sizeof(double));
  s->log_det0 = 0.0;
  for (int i = 0; i < n_out; i++) {
    const double diag = full[out[i] + (size_t) out[i] * dim];
    const double piv = sweep(full, dim, out[i], 1, v);
    if (!(piv > LS_PIVOT_SINGULAR * diag) || !R_FINITE(piv))
      return sg_fail(st, SG_ERR_INPUT,
                     "The columns in every submodel (group 0) are linearly dependent.");
    s->log_det0 += log(piv);
  }
  const int D = n_keep;
  s->D = D;
  s->n_cand = D - (response ? 1 : 0);
  s->base = (double *) R_alloc((size_t) D * D, sizeof(double));
  s->g = (double *) R_alloc((size_t) D * D, sizeof(double));
  s->log_scale = (double *) R_alloc(D, sizeof(double));
  s->v = (double *) R_alloc(D, sizeof(double));
  double *scale = (double *) R_alloc(D, sizeof(double));
  for (int i = 0; i < D; i++) {
    const double d = full[keep[i] + (size_t) keep[i] * dim];
    if (i < s->n_cand && !(d > 0.0 && R_FINITE(d)))
      return sg_fail(st, SG_ERR_INPUT, "A candidate column is constant, or dependent on the "
                                       "columns in every submodel.");
    scale[i] = i < s->n_cand ? 1.0 / sqrt(d) : 1.0;
    s->log_scale[i] = i < s->n_cand ? log(d) : 0.0;
  }
  for (int j = 0; j < D; j++)
    for (int i = 0; i < D; i++)
      s->base[i + (size_t) j * D] = full[keep[i] + (size_t) keep[j] * dim] * scale[i] * scale[j];
  memcpy(s->g, s->base, (size_t) D * D * sizeof(double));
  s->log_det = 0.0;
  return SG_OK;
}

/* Sweeps term k's columns in or out; returns the smallest pivot. */
static double sweeper_toggle(sweeper *s, const ls_problem *p, int k, int in) {
  double least = 1.0;
  for (int j = p->term_start[k]; j < p->term_start[k + 1]; j++) {
    const double piv = sweep(s->g, s->D, j, in, s->v);
    const double l = log(piv) + s->log_scale[j];
    s->log_det += in ? l : -l;
    if (!(piv >= least)) least = piv; /* NaN too */
  }
  return least;
}

/* The state of submodel `code` afresh from the base. */
static int sweeper_rebuild(sweeper *s, const ls_problem *p, uint32_t code, sg_status *st) {
  memcpy(s->g, s->base, (size_t) s->D * s->D * sizeof(double));
  s->log_det = 0.0;
  for (int k = 0; k < p->K; k++)
    if ((code >> k) & 1u) {
      const double least = sweeper_toggle(s, p, k, 1);
      if (!(least > LS_PIVOT_SINGULAR))
        return sg_fail(st, SG_ERR_INPUT, "The columns of term %d are linearly dependent on "
                                         "those of other terms of a submodel.", k + 1);
    }
  return SG_OK;
}

/* The corner of a P sweeper: c less the fit of the swept columns. */
static double sweeper_corner(const sweeper *s) {
  return s->g[(size_t) s->D * s->D - 1];
}

/* The enumeration's state: a sweeper of the augmented matrix [[P, b], [b', c0]] and, for the
 * g-prior, one of M, over the candidate terms' columns, updated from submodel to submodel; none
 * for the Zellner-Siow prior in its general form (C != A00 M), whose submodels are evaluated
 * afresh. */
typedef struct {
  int general, with_m; /* no sweepers (ZS, general form); a sweeper of M too (G) */
  int ks0;             /* the slopes in every submodel: group-0 columns but the intercept */
  int steps, dirty;    /* steps since the last rebuild; a rebuild is due (a small pivot) */
  sweeper sp, sm;
  ls_work w;
} ls_sweeps;

/* The sweepers of the submodel of no candidate term. Returns the status code. */
static int sweeps_init(const ls_problem *p, ls_sweeps *e, sg_status *st) {
  const int K = p->K, q = p->q, qc = p->term_start[K];
  work_init(p, &e->w);
  e->general = p->kind == LS_ZS && !p->usual;
  e->with_m = p->kind == LS_G;
  e->ks0 = e->steps = e->dirty = 0;
  if (e->general) return SG_OK;
  /* [[P, b], [b', c0]] */
  const int dim = q + 1;
  double *aug = (double *) R_alloc((size_t) dim * dim, sizeof(double));
  for (int j = 0; j < q; j++) {
    memcpy(aug + (size_t) j * dim, p->P + (size_t) j * q, q * sizeof(double));
    aug[q + (size_t) j * dim] = p->b[j];
    aug[j + (size_t) q * dim] = p->b[j];
  }
  aug[q + (size_t) q * dim] = p->c0;
  int *keep = (int *) R_alloc(qc + 1, sizeof(int));
  memcpy(keep, p->term_cols, qc * sizeof(int));
  keep[qc] = q;
  if (sweeper_init(&e->sp, aug, dim, p->cols0, p->n0, keep, qc + 1, 1, st)) return st->code;
  if (e->with_m) {
    int *out = (int *) R_alloc(q, sizeof(int));
    for (int i = 0; i < p->n0; i++)
      if (p->cols0[i] > 0) out[e->ks0++] = p->cols0[i] - 1;
    for (int i = 0; i < qc; i++) keep[i] = p->term_cols[i] - 1;
    if (sweeper_init(&e->sm, p->gram, q - 1, out, e->ks0, keep, qc, 0, st)) return st->code;
  } else {
    for (int i = 0; i < p->n0; i++) e->ks0 += p->cols0[i] > 0;
  }
  return SG_OK;
}

/* Moves the sweepers to submodel `code`, which differs from the last in term k: term k swept in
 * or out, or the state rebuilt from the base every LS_REFRESH_STEPS steps, after a step whose
 * pivot fell below LS_PIVOT_REFRESH (at the next step) and after one whose pivot was singular
 * (at once). Returns the status code. */
static int sweeps_step(const ls_problem *p, ls_sweeps *e, uint32_t code, int k, sg_status *st) {
  if (e->dirty || ++e->steps >= LS_REFRESH_STEPS) {
    if (sweeper_rebuild(&e->sp, p, code, st)) return st->code;
    if (e->with_m && sweeper_rebuild(&e->sm, p, code, st)) return st->code;
    e->steps = e->dirty = 0;
  } else {
    const int in = (code >> k) & 1u;
    double least = sweeper_toggle(&e->sp, p, k, in);
    if (e->with_m) least = fmin(least, sweeper_toggle(&e->sm, p, k, in));
    if (!(least > LS_PIVOT_SINGULAR)) {
      if (sweeper_rebuild(&e->sp, p, code, st)) return st->code;
      if (e->with_m && sweeper_rebuild(&e->sm, p, code, st)) return st->code;
      e->steps = 0;
    } else if (least < LS_PIVOT_REFRESH) {
      e->dirty = 1;
    }
  }
  return SG_OK;
}

/* The log evidence of submodel `code` (to *lz) from the sweepers' state: the corner c0 - b'P^-1 b
 * of the swept augmented matrix and the log-determinant of its swept block give each prior's
 * closed form; the general Zellner-Siow form by fresh factorisations (evaluate()). Returns the
 * status code. */
static int sweeps_log_evidence(const ls_problem *p, ls_sweeps *e, uint32_t code, double *lz,
                               sg_status *st) {
  const uint64_t member = code;
  if (e->general) return evaluate(p, &member, lz, NULL, &e->w, st);
  const double nm1 = p->n - 1.0;
  int cols = 0;
  for (uint32_t rest = code; rest; rest &= rest - 1) {
    const int k = __builtin_ctz(rest);
    cols += p->term_start[k + 1] - p->term_start[k];
  }
  const double corner = sweeper_corner(&e->sp), log_det = e->sp.log_det0 + e->sp.log_det;
  if (p->kind == LS_ZS) {
    *lz = zs_usual(p, e->ks0 + cols, p->syy - corner, NULL, NULL, NULL);
  } else if (p->kind == LS_G) {
    const int ks = e->ks0 + cols;
    *lz = -0.5 * nm1 * LOG_2PI - 0.5 * log_det -
          0.5 * (ks * log(p->g) - (e->sm.log_det0 + e->sm.log_det)) + lgammafn(0.5 * nm1) -
          0.5 * nm1 * log(0.5 * fmax(corner, 0.0)) + p->offset;
  } else {
    double log_var, mean2;
    term_sums(p, &member, &log_var, &mean2);
    const double quad = corner + mean2;
    *lz = p->const0 - 0.5 * log_var - 0.5 * log_det + p->offset;
    if (p->kind == LS_NORMAL) *lz -= 0.5 * quad;
    else *lz -= (p->shape + 0.5 * p->n) * log(p->scale + 0.5 * fmax(quad, 0.0));
  }
  return SG_OK;
}

int ls_enumerate(const ls_problem *p, int *code_out, int *size_out, double *lz_out,
                 sg_status *st) {
  const int K = p->K;
  if (K > LS_MAX_ENUMERATE)
    return sg_fail(st, SG_ERR_INPUT, "%d terms make 2^%d submodels, more than an enumeration "
                   "takes (2^%d); search them by MCMC.", K, K, LS_MAX_ENUMERATE);
  uint32_t par[LS_MAX_ENUMERATE + 1];
  for (int k = 0; k < K; k++) par[k] = (uint32_t) p->parents[(size_t) k * p->W];
  ls_sweeps e;
  if (sweeps_init(p, &e, st)) return st->code;
  uint32_t code = 0;
  int out = 0;
  const uint32_t total = (uint32_t) 1 << K;
  /* Gray-code order: submodel i differs from submodel i - 1 in the term of i's lowest set bit */
  for (uint32_t i = 0; i < total; i++) {
    if (i > 0) {
      const int k = __builtin_ctz(i);
      code ^= (uint32_t) 1 << k;
      if (!e.general && sweeps_step(p, &e, code, k, st)) return st->code;
    }
    int ok = 1;
    for (uint32_t rest = code; rest && ok; rest &= rest - 1)
      ok = (par[__builtin_ctz(rest)] & ~code) == 0;
    if (ok) {
      double lz;
      if (sweeps_log_evidence(p, &e, code, &lz, st)) return st->code;
      code_out[out] = (int) code;
      size_out[out] = popcount64(code);
      lz_out[out] = lz;
      out++;
    }
    if ((i & 4095u) == 4095u) sg_interrupt_check();
  }
  return SG_OK;
}

/* ---------------------------------------------------------------- the cache */

static uint64_t hash_member(const uint64_t *m, int W) {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (int w = 0; w < W; w++) {
    h ^= m[w] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  return h;
}

static void cache_table(ls_cache *c, int table_cap) {
  c->table_cap = table_cap;
  c->table = (int *) R_alloc(table_cap, sizeof(int));
  memset(c->table, 0, (size_t) table_cap * sizeof(int));
  const uint64_t mask = (uint64_t) table_cap - 1;
  for (int i = 0; i < c->count; i++) {
    uint64_t h = hash_member(c->bits + (size_t) i * c->W, c->W) & mask;
    while (c->table[h]) h = (h + 1) & mask;
    c->table[h] = i + 1;
  }
}

void ls_cache_init(ls_cache *c, int W, int cap) {
  c->W = W;
  c->count = 0;
  c->cap = cap < 16 ? 16 : cap;
  c->bits = (uint64_t *) R_alloc((size_t) c->cap * W, sizeof(uint64_t));
  c->log_evidence = (double *) R_alloc(c->cap, sizeof(double));
  c->visits = (double *) R_alloc(c->cap, sizeof(double));
  int t = 32;
  while (t < 2 * c->cap) t *= 2;
  cache_table(c, t);
}

int ls_cache_find(const ls_cache *c, const uint64_t *member) {
  const uint64_t mask = (uint64_t) c->table_cap - 1;
  uint64_t h = hash_member(member, c->W) & mask;
  while (c->table[h]) {
    const int i = c->table[h] - 1;
    if (memcmp(c->bits + (size_t) i * c->W, member, (size_t) c->W * sizeof(uint64_t)) == 0)
      return i;
    h = (h + 1) & mask;
  }
  return -1;
}

int ls_cache_add(ls_cache *c, const uint64_t *member, double log_evidence, double visits) {
  if (c->count == c->cap) {
    const int cap = 2 * c->cap;
    uint64_t *bits = (uint64_t *) R_alloc((size_t) cap * c->W, sizeof(uint64_t));
    double *lz = (double *) R_alloc(cap, sizeof(double));
    double *vis = (double *) R_alloc(cap, sizeof(double));
    memcpy(bits, c->bits, (size_t) c->count * c->W * sizeof(uint64_t));
    memcpy(lz, c->log_evidence, (size_t) c->count * sizeof(double));
    memcpy(vis, c->visits, (size_t) c->count * sizeof(double));
    c->bits = bits;
    c->log_evidence = lz;
    c->visits = vis;
    c->cap = cap;
  }
  const int i = c->count++;
  memcpy(c->bits + (size_t) i * c->W, member, (size_t) c->W * sizeof(uint64_t));
  c->log_evidence[i] = log_evidence;
  c->visits[i] = visits;
  if (2 * c->count > c->table_cap) {
    cache_table(c, 2 * c->table_cap);
  } else {
    const uint64_t mask = (uint64_t) c->table_cap - 1;
    uint64_t h = hash_member(member, c->W) & mask;
    while (c->table[h]) h = (h + 1) & mask;
    c->table[h] = i + 1;
  }
  return i;
}

/* ---------------------------------------------------------------- MCMC over submodels */

/* The index of the r-th term (0-based) that is (want = 1) or is not (want = 0) in m. */
static int nth_term(const uint64_t *m, int K, int r, int want) {
  for (int k = 0; k < K; k++)
    if (member_has(m, k) == want && r-- == 0) return k;
  return -1;
}

static void flip(uint64_t *m, int k) {
  m[k >> 6] ^= (uint64_t) 1 << (k & 63);
}

/* The proposals are symmetric, so the Hastings ratio is the ratio of the targets: with
 * probability LS_FLIP_PROB one of the K terms, uniformly, enters or leaves (the reverse move
 * picks the same term with the same probability); otherwise a term in and a term out, each
 * uniformly, change places (the reverse swap has the same |S| (K - |S|) choices), or nothing
 * moves when all or none of the terms are in. A proposal that breaks marginality has target 0
 * and is rejected, without evaluating it. */
int ls_mcmc(const ls_problem *p, const double *log_prior_size, ls_chain *ch, int iterations,
            ls_cache *c, int *trace_size, double *accepted, sg_status *st) {
  const int K = p->K, W = p->W;
  ls_work w;
  work_init(p, &w);
  uint64_t *cur = ch->model, *prop = (uint64_t *) R_alloc(W, sizeof(uint64_t));
  if (!ls_allowed(p, cur))
    return sg_fail(st, SG_ERR_INPUT, "The chain's submodel breaks marginality.");
  int ci = ls_cache_find(c, cur);
  if (ci < 0) {
    double lz;
    if (evaluate(p, cur, &lz, NULL, &w, st)) return st->code;
    ci = ls_cache_add(c, cur, lz, 0.0);
  }
  int size = member_size(cur, W);
  double target = c->log_evidence[ci] + log_prior_size[size];
  for (int it = 0; it < iterations; it++) {
    sg_rng r;
    sg_rng_init(&r, ch->key, (uint64_t) (ch->iteration + it), 0);
    memcpy(prop, cur, (size_t) W * sizeof(uint64_t));
    int moved = 0, psize = size;
    if (K > 0 && sg_rng_unif(&r) < LS_FLIP_PROB) {
      const int k = (int) sg_rng_index(&r, (uint32_t) K);
      psize += member_has(prop, k) ? -1 : 1;
      flip(prop, k);
      moved = 1;
    } else if (size > 0 && size < K) {
      const int a = (int) sg_rng_index(&r, (uint32_t) size);
      const int b = (int) sg_rng_index(&r, (uint32_t) (K - size));
      flip(prop, nth_term(cur, K, a, 1));
      flip(prop, nth_term(cur, K, b, 0));
      moved = 1;
    }
    if (moved && ls_allowed(p, prop)) {
      int pi = ls_cache_find(c, prop);
      if (pi < 0) {
        double lz;
        if (evaluate(p, prop, &lz, NULL, &w, st)) return st->code;
        pi = ls_cache_add(c, prop, lz, 0.0);
      }
      const double pt = c->log_evidence[pi] + log_prior_size[psize];
      if (log(sg_rng_unif(&r)) < pt - target) {
        memcpy(cur, prop, (size_t) W * sizeof(uint64_t));
        ci = pi;
        size = psize;
        target = pt;
        *accepted += 1.0;
      }
    }
    c->visits[ci] += 1.0;
    trace_size[it] = size;
    if ((it & 1023) == 1023) sg_interrupt_check();
  }
  ch->iteration += iterations;
  return SG_OK;
}
