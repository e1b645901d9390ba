/* Log-space weight utilities shared by every estimator, a timer, and argument checks. */
#include "sgais.h"
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <string.h>
#include <time.h>

/* log(sum(exp(x))) without overflow; -Inf entries (zero weights) are allowed. */
double sg_log_sum_exp(const double *x, int n) {
  double mx = R_NegInf;
  for (int i = 0; i < n; i++)
    if (x[i] > mx) mx = x[i];
  if (!R_FINITE(mx)) return mx; /* all -Inf (zero), +Inf or NaN propagate */
  double s = 0.0;
  for (int i = 0; i < n; i++) s += exp(x[i] - mx);
  return mx + log(s);
}

void sg_weighted_mean(const double *theta, const double *logw, int M, int dim, double *mean) {
  double lse = sg_log_sum_exp(logw, M);
  memset(mean, 0, dim * sizeof(double));
  for (int i = 0; i < M; i++) {
    double w = exp(logw[i] - lse);
    for (int j = 0; j < dim; j++) mean[j] += w * theta[(size_t) i * dim + j];
  }
}

/* ESS of weights w_i = exp(scale * logw_i) computed in log space:
 * log ESS = 2 logsumexp(a) - logsumexp(2a), a = scale * logw (paper Section 3). */
double sg_ess(const double *logw, int n, double scale, double *work) {
  for (int i = 0; i < n; i++) work[i] = scale * logw[i];
  double l1 = sg_log_sum_exp(work, n);
  for (int i = 0; i < n; i++) work[i] *= 2.0;
  double l2 = sg_log_sum_exp(work, n);
  return exp(2.0 * l1 - l2);
}

/* The adaptive annealing step of Algorithm 1 line 6: Delta in (0, max_delta] with
 * ESS(Delta) = target, where ESS is that of the incremental weights p(C | theta_i)^Delta.
 * ESS(Delta) falls monotonically from n at Delta = 0, so take max_delta when it already meets the
 * target and bisect otherwise. The result is always > 0, so annealing always progresses. */
double sg_annealing_step(const double *loglik, int n, double max_delta, double target,
                         double *ess, double *work) {
  double e = sg_ess(loglik, n, max_delta, work);
  if (e >= target) {
    *ess = e;
    return max_delta;
  }
  double lo = 0.0, hi = max_delta, hi_ess = e;
  for (int it = 0; it < 200 && hi - lo > 1e-15 * max_delta; it++) {
    double mid = 0.5 * (lo + hi);
    e = sg_ess(loglik, n, mid, work);
    if (e >= target) {
      lo = mid;
      if (e - target < 1e-9 * target) break;
    } else {
      hi = mid;
      hi_ess = e;
    }
  }
  if (lo > 0.0) {
    *ess = sg_ess(loglik, n, lo, work);
    return lo;
  }
  /* Only when the target equals n: no Delta > 0 keeps ESS = n, take the smallest step found. */
  *ess = hi_ess;
  return hi;
}

/* Systematic resampling (one uniform draw): n_out ancestors among the n_in particles, in
 * proportion to exp(logw); lower variance than multinomial resampling. */
void sg_resample_systematic_n(const double *logw, int n_in, int *ancestors, int n_out,
                              double *work) {
  double lse = sg_log_sum_exp(logw, n_in);
  double u = unif_rand() / n_out, cum = 0.0;
  int j = 0;
  for (int i = 0; i < n_in; i++) work[i] = exp(logw[i] - lse);
  for (int i = 0; i < n_out; i++) {
    double point = u + (double) i / n_out;
    while (j < n_in - 1 && cum + work[j] < point) cum += work[j++];
    ancestors[i] = j;
  }
}

void sg_resample_systematic(const double *logw, int n, int *ancestors, double *work) {
  sg_resample_systematic_n(logw, n, ancestors, n, work);
}

double sg_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Cheap re-checks of arguments already validated in R; messages name the argument. */
int sg_scalar_int(SEXP x, const char *what, int lower) {
  if (Rf_length(x) != 1) Rf_errorcall(R_NilValue, "`%s` must be a single number.", what);
  double v = Rf_asReal(x);
  if (ISNAN(v) || v != floor(v) || v < lower || v > INT_MAX)
    Rf_errorcall(R_NilValue, "`%s` must be a whole number >= %d.", what, lower);
  return (int) v;
}

/* A count of observations: a whole number >= 0, held in a double (exact up to 2^53). */
double sg_scalar_count(SEXP x, const char *what) {
  if (Rf_length(x) != 1) Rf_errorcall(R_NilValue, "`%s` must be a single number.", what);
  double v = Rf_asReal(x);
  if (!R_FINITE(v) || v != floor(v) || v < 0 || v > 9007199254740992.0)
    Rf_errorcall(R_NilValue, "`%s` must be a whole number >= 0.", what);
  return v;
}

double sg_scalar_double(SEXP x, const char *what) {
  if (Rf_length(x) != 1) Rf_errorcall(R_NilValue, "`%s` must be a single number.", what);
  double v = Rf_asReal(x);
  if (ISNAN(v)) Rf_errorcall(R_NilValue, "`%s` must not be NA.", what);
  return v;
}

SEXP sg_list_get(SEXP list, const char *name) {
  if (TYPEOF(list) != VECSXP) Rf_errorcall(R_NilValue, "internal error: expected a list holding `%s`; please report this.", name);
  SEXP names = Rf_getAttrib(list, R_NamesSymbol);
  if (TYPEOF(names) != STRSXP) Rf_errorcall(R_NilValue, "internal error: unnamed list instead of one holding `%s`; please report this.", name);
  for (R_xlen_t i = 0; i < Rf_xlength(list); i++)
    if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(list, i);
  Rf_errorcall(R_NilValue, "internal error: element `%s` missing; please report this.", name);
  return R_NilValue; /* not reached */
}

/* Allocates element i of the list `out` as a vector of `type` and length n, names it, and
 * returns it (protected through `out`). Used to build the lists the entry points return. */
SEXP sg_new_column(SEXP out, SEXP names, int i, const char *name, SEXPTYPE type, R_xlen_t n) {
  SEXP col = Rf_allocVector(type, n);
  SET_VECTOR_ELT(out, i, col);
  SET_STRING_ELT(names, i, Rf_mkChar(name));
  return col;
}

/* A digest of a sequence of observations that does not depend on how the sequence was split:
 * 64-bit FNV-1a over the bytes of the values in order, continued from `digest` (16 hex digits,
 * or "" to start). Doubles are hashed with -0 as +0, so equal numbers give equal digests. Used
 * to check that fits compared are fits of the same observations (R/compare_models.R). */
SEXP ffi_data_digest(SEXP digest, SEXP values) {
  if (TYPEOF(digest) != STRSXP || XLENGTH(digest) != 1 || STRING_ELT(digest, 0) == NA_STRING)
    Rf_errorcall(R_NilValue, "`digest` must be a string.");
  const char *in = CHAR(STRING_ELT(digest, 0));
  uint64_t h = 14695981039346656037ULL; /* the FNV offset basis */
  if (in[0] != '\0') {
    if (strlen(in) != 16) Rf_errorcall(R_NilValue, "`digest` must have 16 hex digits.");
    h = 0;
    for (int i = 0; i < 16; i++) {
      char c = in[i];
      int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
      if (v < 0) Rf_errorcall(R_NilValue, "`digest` must have 16 hex digits.");
      h = (h << 4) | (uint64_t) v;
    }
  }
  const uint64_t prime = 1099511628211ULL;
  R_xlen_t n = XLENGTH(values);
  if (TYPEOF(values) == REALSXP) {
    const double *x = REAL(values);
    for (R_xlen_t i = 0; i < n; i++) {
      double v = x[i] == 0.0 ? 0.0 : x[i];
      unsigned char b[sizeof(double)];
      memcpy(b, &v, sizeof(double));
      for (size_t k = 0; k < sizeof(double); k++) h = (h ^ b[k]) * prime;
    }
  } else if (TYPEOF(values) == INTSXP) {
    const int *x = INTEGER(values);
    for (R_xlen_t i = 0; i < n; i++) {
      unsigned char b[sizeof(int)];
      memcpy(b, &x[i], sizeof(int));
      for (size_t k = 0; k < sizeof(int); k++) h = (h ^ b[k]) * prime;
    }
  } else {
    Rf_errorcall(R_NilValue, "`values` must be a numeric or integer vector.");
  }
  char out[17];
  snprintf(out, sizeof(out), "%016llx", (unsigned long long) h);
  return Rf_mkString(out);
}
