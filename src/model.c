/* The model interface: builds an sg_model from its R object and evaluates it for R.
 * A new built-in model is one C file with an init function plus one row in `registry`;
 * no estimator changes. */
#include "sgais.h"
#include <math.h>
#include <string.h>

typedef void (*sg_model_init)(SEXP data, SEXP hyper, sg_model *m);

static const struct {
  const char *family;
  sg_model_init init;
} registry[] = {
  {"linear_regression", sg_linear_regression_init},
  {"softmax_regression", sg_softmax_regression_init},
  {"gaussian_mixture", sg_gaussian_mixture_init},
};

void sg_model_from_r(SEXP model, sg_model *m) {
  SEXP family = sg_list_get(model, "family");
  if (TYPEOF(family) != STRSXP || Rf_length(family) != 1)
    Rf_errorcall(R_NilValue, "`model` must be an sgais model, e.g. from linear_regression().");
  const char *name = CHAR(STRING_ELT(family, 0));
  for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
    if (strcmp(name, registry[i].family) == 0) {
      memset(m, 0, sizeof(*m));
      registry[i].init(sg_list_get(model, "data"), sg_list_get(model, "hyper"), m);
      m->name = registry[i].family;
      return;
    }
  }
  Rf_errorcall(R_NilValue, "`model` has unknown family \"%s\".", name);
}

double sg_model_log_lik(const sg_model *m, const double *theta, const int *idx, int start, int n,
                        double scale, double *grad, sg_counter *count) {
  if (count) {
    if (grad) count->gradient += n;
    else count->likelihood += n;
  }
  return m->log_lik(m, theta, idx, start, n, scale, grad);
}

void sg_model_canonicalize(const sg_model *m, double *theta, int M) {
  if (!m->canonicalize) return;
  for (int i = 0; i < M; i++) m->canonicalize(m, theta + (size_t) i * m->dim);
}

void sg_normal_prior_draw(double *theta, int dim, double sd) {
  for (int j = 0; j < dim; j++) theta[j] = sd * norm_rand();
}

double sg_normal_log_prior(const double *theta, int dim, double sd, double *grad) {
  double prec = 1.0 / (sd * sd), ss = 0.0;
  for (int j = 0; j < dim; j++) {
    ss += theta[j] * theta[j];
    if (grad) grad[j] -= prec * theta[j];
  }
  return -0.5 * dim * log(2.0 * M_PI * sd * sd) - 0.5 * prec * ss;
}

static void check_theta(const sg_model *m, SEXP theta) {
  if (TYPEOF(theta) != REALSXP || Rf_length(theta) != m->dim)
    Rf_errorcall(R_NilValue, "`theta` must be a numeric vector of length %d.", m->dim);
}

/* log prior, log likelihood over observations start..start+n-1 (1-based in R, 0-based here)
 * and both gradients at one parameter vector: the C functions as R sees them (tests,
 * gradient checks). */
SEXP ffi_model_evaluate(SEXP model, SEXP theta, SEXP start, SEXP n) {
  sg_model m;
  sg_model_from_r(model, &m);
  check_theta(&m, theta);
  int s = sg_scalar_int(start, "start", 0), k = sg_scalar_int(n, "n", 0);
  if (s + (double) k > m.n_obs) Rf_errorcall(R_NilValue, "`start` + `n` exceeds the number of observations.");

  int nprot = 0;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 4)); nprot++;
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 4)); nprot++;
  const char *nm[] = {"log_prior", "grad_log_prior", "log_lik", "grad_log_lik"};
  for (int i = 0; i < 4; i++) SET_STRING_ELT(names, i, Rf_mkChar(nm[i]));
  Rf_setAttrib(out, R_NamesSymbol, names);

  SEXP gp = Rf_allocVector(REALSXP, m.dim);
  SET_VECTOR_ELT(out, 1, gp);
  SEXP gl = Rf_allocVector(REALSXP, m.dim);
  SET_VECTOR_ELT(out, 3, gl);
  memset(REAL(gp), 0, m.dim * sizeof(double));
  memset(REAL(gl), 0, m.dim * sizeof(double));
  SET_VECTOR_ELT(out, 0, Rf_ScalarReal(m.log_prior(&m, REAL(theta), REAL(gp))));
  SET_VECTOR_ELT(out, 2, Rf_ScalarReal(sg_model_log_lik(&m, REAL(theta), NULL, s, k, 1.0, REAL(gl), NULL)));
  UNPROTECT(nprot);
  return out;
}

/* The log-likelihood of every observation at every parameter vector (the columns of the dim x M
 * matrix theta): an n_obs x M matrix, for predictive densities. Interruptible between columns. */
SEXP ffi_model_pointwise_log_lik(SEXP model, SEXP theta) {
  sg_model m;
  sg_model_from_r(model, &m);
  if (TYPEOF(theta) != REALSXP || !Rf_isMatrix(theta) || Rf_nrows(theta) != m.dim)
    Rf_errorcall(R_NilValue, "`theta` must be a numeric matrix with %d rows.", m.dim);
  const int M = Rf_ncols(theta);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, m.n_obs, M));
  double *o = REAL(out);
  for (int i = 0; i < M; i++) {
    const double *th = REAL(theta) + (size_t) i * m.dim;
    for (int j = 0; j < m.n_obs; j++)
      o[(size_t) i * m.n_obs + j] = sg_model_log_lik(&m, th, NULL, j, 1, 1.0, NULL, NULL);
    R_CheckUserInterrupt();
  }
  UNPROTECT(1);
  return out;
}

/* n prior draws as a dim x n matrix (column per draw). */
SEXP ffi_model_prior_draw(SEXP model, SEXP n) {
  sg_model m;
  sg_model_from_r(model, &m);
  int k = sg_scalar_int(n, "n", 0);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, m.dim, k));
  GetRNGstate();
  for (int i = 0; i < k; i++) m.prior_draw(&m, REAL(out) + (R_xlen_t) i * m.dim);
  PutRNGstate();
  UNPROTECT(1);
  return out;
}
