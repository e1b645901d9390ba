/* Models written in R (R/custom_model.R): the likelihood, its gradient and optionally the prior
 * are R functions, which the C core calls back with the rows an evaluation needs as one block,
 * a numeric matrix with a row per observation (never row by row: the R function is vectorised
 * over rows, so a mini-batch costs one call). A prior made of building blocks (prior.c) is
 * evaluated in C.
 *
 * R errors inside the user's functions unwind the core like any R error (its memory is
 * R_alloc'ed; interrupts unwind the same way). While a function runs, `active` names it, so the
 * calling handler that R puts around the .Call (with_model_errors()) can turn its error into an
 * sgais_error_model condition naming the function: one handler per .Call, where a wrapper
 * around each function would cost 2 microseconds per call. What the functions return is checked
 * here: a wrong length, a wrong type or NaN is a model failure (sg_fail(SG_ERR_MODEL)) that the
 * estimator reports instead of the NaN it would cause. */
#include "ffi.h"
#include <math.h>
#include <string.h>

/* Rows per call when every observation is evaluated (predictive densities), bounding memory. */
#define CM_POINTWISE_BLOCK 8192

typedef struct {
  SEXP log_likelihood, gradient;             /* closures, held by the model object */
  SEXP prior_log_density, prior_gradient, prior_draw; /* R_NilValue when the prior is blocks */
  SEXP dimnames, parameter_names;           /* attributes of the block and of theta */
  const double *xt;                         /* p x n, column i = observation i */
  int p;
  sg_prior prior;
} cm_data;

static SEXP cm_theta(const cm_data *d, const double *theta, int dim) {
  SEXP x = PROTECT(Rf_allocVector(REALSXP, dim));
  memcpy(REAL(x), theta, dim * sizeof(double));
  Rf_setAttrib(x, R_NamesSymbol, d->parameter_names);
  UNPROTECT(1);
  return x;
}

/* The rows idx[0..n-1] (or start..start+n-1) as an n x p matrix with the data's column names. */
static SEXP cm_block(const cm_data *d, const int *idx, int start, int n) {
  SEXP x = PROTECT(Rf_allocMatrix(REALSXP, n, d->p));
  double *out = REAL(x);
  const int p = d->p;
  for (int k = 0; k < n; k++) {
    const double *row = d->xt + (R_xlen_t) (idx ? idx[k] : start + k) * p;
    for (int j = 0; j < p; j++) out[(R_xlen_t) j * n + k] = row[j];
  }
  Rf_setAttrib(x, R_DimNamesSymbol, d->dimnames);
  UNPROTECT(1);
  return x;
}

/* The user function running now (NULL: none), for with_model_errors(). */
static const char *active = NULL;

/* The name of the user function whose R error is being handled, and forgets it. */
SEXP ffi_custom_model_failed(void) {
  SEXP out = active ? Rf_mkString(active) : R_NilValue;
  active = NULL;
  return out;
}

/* A token that says "built in this R session": an external pointer to a static object. Saving
 * it (saveRDS(), save(), a checkpoint) keeps the object but not the address, so a model read
 * back from a file has a token whose address is NULL and its R functions are not run until the
 * user gives them again (R/custom_model.R, reattach_functions()). */
static const int session_marker = 1;

SEXP ffi_session_token(void) {
  return R_MakeExternalPtr((void *) &session_marker, R_NilValue, R_NilValue);
}

SEXP ffi_session_token_live(SEXP token) {
  return Rf_ScalarLogical(TYPEOF(token) == EXTPTRSXP &&
                          R_ExternalPtrAddr(token) == (void *) &session_marker);
}

/* f(), f(theta) or f(theta, block), f called `name` in messages; errors unwind (see the top of
 * the file). */
static SEXP cm_call(SEXP f, const char *name, SEXP theta, SEXP block) {
  SEXP call = PROTECT(theta == R_NilValue ? Rf_lang1(f)
                      : block == R_NilValue ? Rf_lang2(f, theta) : Rf_lang3(f, theta, block));
  active = name;
  SEXP out = Rf_eval(call, R_GlobalEnv);
  active = NULL;
  UNPROTECT(1);
  return out;
}

/* A numeric result as doubles (integers converted), or NULL with the failure recorded. A logical
 * result is refused: TRUE/FALSE read as 1/0 would be a log-likelihood by accident. */
static const double *cm_numeric(sg_workspace *ws, SEXP x, R_xlen_t want, const char *fun,
                                const char *expected) {
  if ((TYPEOF(x) != REALSXP && TYPEOF(x) != INTSXP) || XLENGTH(x) != want) {
    sg_fail(ws->status, SG_ERR_MODEL, "`%s` must return %s; it returned a %s of length %.0f.",
            fun, expected, Rf_type2char(TYPEOF(x)), (double) XLENGTH(x));
    return NULL;
  }
  const double *v = REAL(TYPEOF(x) == REALSXP ? x : Rf_coerceVector(x, REALSXP));
  for (R_xlen_t i = 0; i < want; i++) {
    if (ISNAN(v[i])) {
      sg_fail(ws->status, SG_ERR_MODEL, "`%s` returned NA or NaN (element %.0f).", fun,
              (double) i + 1);
      return NULL;
    }
  }
  return v;
}

static double cm_sum_log_lik(const sg_model *m, sg_workspace *ws, SEXP theta, SEXP block, int n) {
  const cm_data *d = m->data;
  SEXP ll = PROTECT(cm_call(d->log_likelihood, "log_likelihood", theta, block));
  char expected[96];
  snprintf(expected, sizeof expected, "one log-likelihood per row (%d)", n);
  const double *v = cm_numeric(ws, ll, n, "log_likelihood", expected);
  double s = 0.0;
  if (v) {
    for (int k = 0; k < n; k++) s += v[k];
    if (s == R_PosInf) {
      sg_fail(ws->status, SG_ERR_MODEL, "`log_likelihood` returned +Inf.");
      s = R_NaN;
    }
  } else {
    s = R_NaN;
  }
  UNPROTECT(1);
  return s;
}

/* Adds scale * (the summed gradient) to grad: `gradient` returns the sum (length dim) or one
 * row per observation (an n x dim matrix), which is summed here. */
static void cm_add_gradient(const sg_model *m, sg_workspace *ws, SEXP theta, SEXP block, int n,
                            double scale, double *grad) {
  const cm_data *d = m->data;
  const int dim = m->dim;
  SEXP g = PROTECT(cm_call(d->gradient, "gradient", theta, block));
  int rows = Rf_isMatrix(g) && Rf_nrows(g) == n && Rf_ncols(g) == dim && n != 1 ? n : 1;
  char expected[96];
  snprintf(expected, sizeof expected, "a gradient of length %d (or an %d x %d matrix)", dim, n, dim);
  const double *v = cm_numeric(ws, g, (R_xlen_t) rows * dim, "gradient", expected);
  if (!v) {
    for (int j = 0; j < dim; j++) grad[j] = R_NaN;
  } else {
    for (int j = 0; j < dim; j++) {
      double s = 0.0;
      for (int k = 0; k < rows; k++) s += v[(R_xlen_t) j * rows + k];
      grad[j] += scale * s;
    }
  }
  UNPROTECT(1);
}

static double cm_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                         int start, int n, double scale, double *grad) {
  if (ws->status->code) return R_NaN; /* failed already: do not call R again */
  if (n == 0) return 0.0;
  const cm_data *d = m->data;
  SEXP th = PROTECT(cm_theta(d, theta, m->dim));
  SEXP block = PROTECT(cm_block(d, idx, start, n));
  double s = cm_sum_log_lik(m, ws, th, block, n);
  if (grad && !ws->status->code) cm_add_gradient(m, ws, th, block, n, scale, grad);
  UNPROTECT(2);
  return s;
}

static void cm_grad_log_lik(const sg_model *m, sg_workspace *ws, const double *theta,
                            const int *idx, int start, int n, double scale, double *grad) {
  if (ws->status->code) {
    for (int j = 0; j < m->dim; j++) grad[j] = R_NaN;
    return;
  }
  if (n == 0) return;
  const cm_data *d = m->data;
  SEXP th = PROTECT(cm_theta(d, theta, m->dim));
  SEXP block = PROTECT(cm_block(d, idx, start, n));
  cm_add_gradient(m, ws, th, block, n, scale, grad);
  UNPROTECT(2);
}

static void cm_log_lik_pointwise(const sg_model *m, sg_workspace *ws, const double *theta,
                                 int start, int n, double *out) {
  const cm_data *d = m->data;
  SEXP th = PROTECT(cm_theta(d, theta, m->dim));
  for (int from = 0; from < n && !ws->status->code; from += CM_POINTWISE_BLOCK) {
    int k = n - from < CM_POINTWISE_BLOCK ? n - from : CM_POINTWISE_BLOCK;
    SEXP block = PROTECT(cm_block(d, NULL, start + from, k));
    SEXP ll = PROTECT(cm_call(d->log_likelihood, "log_likelihood", th, block));
    char expected[96];
    snprintf(expected, sizeof expected, "one log-likelihood per row (%d)", k);
    const double *v = cm_numeric(ws, ll, k, "log_likelihood", expected);
    for (int i = 0; i < k; i++) out[from + i] = v ? v[i] : R_NaN;
    UNPROTECT(2);
  }
  UNPROTECT(1);
}

static void cm_prior_draw(const sg_model *m, sg_workspace *ws, double *theta) {
  const cm_data *d = m->data;
  if (d->prior_draw == R_NilValue) {
    sg_prior_draw(&d->prior, theta);
    return;
  }
  /* the R function draws with R's RNG, whose state the caller holds in C: hand it over */
  PutRNGstate();
  SEXP x = PROTECT(cm_call(d->prior_draw, "prior$draw", R_NilValue, R_NilValue));
  GetRNGstate();
  char expected[64];
  snprintf(expected, sizeof expected, "a numeric vector of length %d", m->dim);
  const double *v = cm_numeric(ws, x, m->dim, "prior$draw", expected);
  for (int j = 0; j < m->dim; j++) theta[j] = v ? v[j] : R_NaN;
  UNPROTECT(1);
}

static double cm_log_prior(const sg_model *m, sg_workspace *ws, const double *theta, double *grad) {
  const cm_data *d = m->data;
  if (d->prior_log_density == R_NilValue) return sg_prior_log_density(&d->prior, theta, grad);
  if (ws->status->code) return R_NaN;
  SEXP th = PROTECT(cm_theta(d, theta, m->dim));
  SEXP lp = PROTECT(cm_call(d->prior_log_density, "prior$log_density", th, R_NilValue));
  const double *v = cm_numeric(ws, lp, 1, "prior$log_density", "a single number");
  double out = v ? v[0] : R_NaN;
  if (grad && v) {
    SEXP g = PROTECT(cm_call(d->prior_gradient, "prior$gradient", th, R_NilValue));
    char expected[64];
    snprintf(expected, sizeof expected, "a numeric vector of length %d", m->dim);
    const double *gv = cm_numeric(ws, g, m->dim, "prior$gradient", expected);
    for (int j = 0; j < m->dim; j++) grad[j] += gv ? gv[j] : R_NaN;
    UNPROTECT(1);
  }
  UNPROTECT(2);
  return out;
}

static SEXP cm_function(SEXP x, const char *name, int optional) {
  if (x == R_NilValue && optional) return x;
  if (TYPEOF(x) != CLOSXP)
    sg_input_error("`model` is corrupt: `%s` must be a function.", name);
  return x;
}

void sg_custom_model_from_r(SEXP model, sg_model *m) {
  active = NULL; /* left over from an interrupt inside a user function */
  SEXP xt = sg_list_get(sg_list_get(model, "data"), "xt");
  if (TYPEOF(xt) != REALSXP || !Rf_isMatrix(xt) || Rf_nrows(xt) < 1)
    sg_input_error("`model` data are corrupt: `xt` must be a numeric matrix.");
  SEXP fns = sg_list_get(model, "functions");
  SEXP dimnames = sg_list_get(model, "block_dimnames");
  SEXP names = sg_list_get(model, "parameter_names");
  int dim = sg_scalar_int(sg_list_get(model, "dim"), "dim", 1);
  if (TYPEOF(dimnames) != VECSXP || Rf_length(dimnames) != 2 ||
      TYPEOF(VECTOR_ELT(dimnames, 1)) != STRSXP || Rf_length(VECTOR_ELT(dimnames, 1)) != Rf_nrows(xt))
    sg_input_error("`model` is corrupt: `block_dimnames` does not match its data.");
  if (TYPEOF(names) != STRSXP || Rf_length(names) != dim)
    sg_input_error("`model` is corrupt: `parameter_names` does not match `dim`.");

  cm_data *d = (cm_data *) R_alloc(1, sizeof(cm_data));
  d->log_likelihood = cm_function(sg_list_get(fns, "log_likelihood"), "log_likelihood", 0);
  d->gradient = cm_function(sg_list_get(fns, "gradient"), "gradient", 0);
  d->prior_log_density = cm_function(sg_list_get(fns, "prior_log_density"), "prior$log_density", 1);
  d->prior_gradient = cm_function(sg_list_get(fns, "prior_gradient"), "prior$gradient",
                                  d->prior_log_density == R_NilValue);
  d->prior_draw = cm_function(sg_list_get(fns, "prior_draw"), "prior$draw",
                              d->prior_log_density == R_NilValue);
  d->dimnames = dimnames;
  d->parameter_names = names;
  d->xt = REAL(xt);
  d->p = Rf_nrows(xt);
  if (d->prior_log_density == R_NilValue)
    d->prior = sg_prior_from_r(sg_list_get(sg_list_get(model, "hyper"), "prior"), dim);

  m->dim = dim;
  m->n_obs = Rf_ncols(xt);
  m->data = d;
  m->prior_draw = cm_prior_draw;
  m->log_prior = cm_log_prior;
  m->log_lik = cm_log_lik;
  m->grad_log_lik = cm_grad_log_lik;
  m->log_lik_pointwise = cm_log_lik_pointwise;
}
