/* The model interface: evaluation through a workspace with counts, and the R side of models:
 * building an sg_model from its R object (the registry of families below) and evaluating it for
 * R. A new built-in model is one C file with a constructor plus one unpacker and one row in
 * `registry`; no estimator changes. */
#include "ffi.h"
#include <limits.h>
#include <math.h>
#include <string.h>

void sg_workspace_init(sg_workspace *ws, const sg_model *m, sg_status *st) {
  size_t n = (m->scratch_bytes + sizeof(double) - 1) / sizeof(double);
  ws->scratch = n ? (void *) R_alloc(n, sizeof(double)) : NULL;
  ws->count.likelihood = ws->count.gradient = 0.0;
  ws->status = st;
  ws->threads = 1;
  ws->pool = NULL;
  ws->block_value = ws->block_grad = NULL;
  if (m->thread_safe) {
    ws->block_value = (double *) R_alloc(SG_BLOCK_GROUP, sizeof(double));
    ws->block_grad = (double *) R_alloc((size_t) SG_BLOCK_GROUP * m->dim, sizeof(double));
  }
}

void sg_workspace_threads(sg_workspace *ws, const sg_model *m, int threads) {
  if (!m->thread_safe || threads < 2) {
    ws->threads = 1;
    return;
  }
  ws->threads = threads;
  ws->pool = (sg_workspace *) R_alloc(threads, sizeof(sg_workspace));
  ws->pool[0] = *ws;
  ws->pool[0].threads = 1;
  ws->pool[0].pool = NULL;
  for (int t = 1; t < threads; t++) sg_workspace_init(&ws->pool[t], m, ws->status);
}

/* The sum over more than SG_BLOCK observations, block by block (see model.h). */
static double blocked_log_lik(const sg_model *m, sg_workspace *ws, const double *theta,
                              const int *idx, int start, int n, double scale, double *grad) {
  const int dim = m->dim, n_blocks = (n + SG_BLOCK - 1) / SG_BLOCK;
  const int threads = sg_threads_for(ws->threads, n);
  double total = 0.0;
  for (int first = 0; first < n_blocks; first += SG_BLOCK_GROUP) {
    const int count = (n_blocks - first < SG_BLOCK_GROUP) ? n_blocks - first : SG_BLOCK_GROUP;
    SG_PARALLEL_FOR(threads)
    for (int b = 0; b < count; b++) {
      sg_workspace *w = threads > 1 ? &ws->pool[sg_thread_id()] : ws;
      const int lo = (first + b) * SG_BLOCK, len = (n - lo < SG_BLOCK) ? n - lo : SG_BLOCK;
      double *g = grad ? ws->block_grad + (size_t) b * dim : NULL;
      if (g) memset(g, 0, dim * sizeof(double));
      ws->block_value[b] = idx ? m->log_lik(m, w, theta, idx + lo, 0, len, scale, g)
                               : m->log_lik(m, w, theta, NULL, start + lo, len, scale, g);
    }
    for (int b = 0; b < count; b++) {
      total += ws->block_value[b];
      if (grad)
        for (int j = 0; j < dim; j++) grad[j] += ws->block_grad[(size_t) b * dim + j];
    }
  }
  return total;
}

double sg_model_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                        int start, int n, double scale, double *grad) {
  if (grad) ws->count.gradient += n;
  else ws->count.likelihood += n;
  if (m->thread_safe && n > SG_BLOCK) return blocked_log_lik(m, ws, theta, idx, start, n, scale, grad);
  return m->log_lik(m, ws, theta, idx, start, n, scale, grad);
}

void sg_model_grad_log_lik(const sg_model *m, sg_workspace *ws, const double *theta,
                           const int *idx, int start, int n, double scale, double *grad) {
  if (m->grad_log_lik) {
    ws->count.gradient += n;
    m->grad_log_lik(m, ws, theta, idx, start, n, scale, grad);
  } else {
    sg_model_log_lik(m, ws, theta, idx, start, n, scale, grad);
  }
}

void sg_model_log_lik_pointwise(const sg_model *m, sg_workspace *ws, const double *theta,
                                int start, int n, double *out) {
  ws->count.likelihood += n;
  if (m->log_lik_pointwise) {
    m->log_lik_pointwise(m, ws, theta, start, n, out);
    return;
  }
  for (int k = 0; k < n; k++) out[k] = m->log_lik(m, ws, theta, NULL, start + k, 1, 1.0, NULL);
}

void sg_model_lik_bound_collapse(const sg_model *m, sg_workspace *ws, const double *t,
                                 const int *idx, int start, int n, double *A, double *b,
                                 double *c) {
  ws->count.likelihood += n;
  m->lik_bound_collapse(m, t, idx, start, n, A, b, c);
}

void sg_model_lik_bound_gap(const sg_model *m, sg_workspace *ws, const double *t,
                            const double *theta, const int *idx, int start, int n, double *gap) {
  ws->count.likelihood += n;
  m->lik_bound_gap(m, t, theta, idx, start, n, gap);
}

void sg_model_canonicalize(const sg_model *m, sg_workspace *ws, double *theta, int M,
                           const double *logw) {
  if (m->canonicalize) m->canonicalize(m, ws, theta, M, logw);
}

void sg_gaussian_draw(const sg_gaussian *g, int dim, sg_rng *rng, double *x) {
  double *e = x; /* L e is computed from the bottom up, in place */
  for (int j = 0; j < dim; j++) e[j] = sg_rng_norm(rng);
  if (g->diagonal) {
    for (int j = 0; j < dim; j++) x[j] = g->mean[j] + g->factor[j] * e[j];
    return;
  }
  const double *L = g->factor;
  for (int j = dim - 1; j >= 0; j--) {
    double v = 0.0;
    for (int k = 0; k <= j; k++) v += L[j + (size_t) k * dim] * e[k];
    x[j] = v; /* e[j..] are no longer needed */
  }
  for (int j = 0; j < dim; j++) x[j] += g->mean[j];
}

void sg_gaussian_set(sg_gaussian *g, const double *mean, const double *factor, int diagonal,
                     int dim) {
  g->mean = mean;
  g->factor = factor;
  g->diagonal = diagonal;
  g->log_det = 0.0;
  for (int j = 0; j < dim; j++) g->log_det += log(diagonal ? factor[j] : factor[j + (size_t) j * dim]);
}

double sg_gaussian_log_density(const sg_gaussian *g, int dim, const double *x, double *work) {
  static const double log_2pi = 1.837877066409345483560659472811;
  const double *L = g->factor;
  double q = 0.0;
  for (int j = 0; j < dim; j++) {
    const double ljj = g->diagonal ? L[j] : L[j + (size_t) j * dim];
    double r = x[j] - g->mean[j];
    if (!g->diagonal) /* forward substitution: work = L^-1 (x - mean) */
      for (int k = 0; k < j; k++) r -= L[j + (size_t) k * dim] * work[k];
    work[j] = r / ljj;
    q += work[j] * work[j];
  }
  return -0.5 * (dim * log_2pi + q) - g->log_det;
}

void sg_normal_prior_draw(double *theta, int dim, double sd) {
  for (int j = 0; j < dim; j++) theta[j] = sd * norm_rand();
}

int sg_coef_prior_check(const sg_coef_prior *c, int dim, sg_status *st) {
  if (!(c->sd > 0) || !R_FINITE(c->sd))
    return sg_fail(st, SG_ERR_INPUT, "`prior_sd` must be positive and finite.");
  if (!c->blocks) return SG_OK;
  for (int b = 0; b < c->blocks->n_blocks; b++) {
    int kind = c->blocks->block[b].kind;
    if (kind != SG_PRIOR_NORMAL && kind != SG_PRIOR_STUDENT_T)
      return sg_fail(st, SG_ERR_INPUT, "`model` is corrupt: a coefficient's prior is not normal or Student-t.");
  }
  return sg_prior_check(c->blocks, dim, st);
}

int sg_coef_prior_with_scale(sg_coef_prior prior, int p, int kind, double scale, sg_prior *out,
                             sg_status *st) {
  const int nc = prior.blocks ? prior.blocks->n_blocks : 1;
  sg_prior_block *b = (sg_prior_block *) R_alloc(nc + 1, sizeof(sg_prior_block));
  if (prior.blocks)
    for (int i = 0; i < nc; i++) b[i] = prior.blocks->block[i];
  else
    b[0] = (sg_prior_block) {SG_PRIOR_NORMAL, 0, p, 0.0, prior.sd, 0.0};
  b[nc] = (sg_prior_block) {kind, p, 1, 0.0, scale, 0.0};
  *out = (sg_prior) {nc + 1, b};
  return sg_prior_check(out, p + 1, st);
}

void sg_blocks_model_prior_draw(const sg_model *m, sg_workspace *ws, double *theta) {
  (void) ws;
  sg_prior_draw((const sg_prior *) m->data, theta);
}

double sg_blocks_model_log_prior(const sg_model *m, sg_workspace *ws, const double *theta,
                                 double *grad) {
  (void) ws;
  return sg_prior_log_density((const sg_prior *) m->data, theta, grad);
}

void sg_coef_model_prior_draw(const sg_model *m, sg_workspace *ws, double *theta) {
  (void) ws;
  const sg_coef_prior *c = (const sg_coef_prior *) m->data;
  if (c->blocks) sg_prior_draw(c->blocks, theta);
  else sg_normal_prior_draw(theta, m->dim, c->sd);
}

double sg_coef_model_log_prior(const sg_model *m, sg_workspace *ws, const double *theta,
                               double *grad) {
  (void) ws;
  const sg_coef_prior *c = (const sg_coef_prior *) m->data;
  if (c->blocks) return sg_prior_log_density(c->blocks, theta, grad);
  return sg_normal_log_prior(theta, m->dim, c->sd, grad);
}

double sg_normal_log_prior(const double *theta, int dim, double sd, double *grad) {
  double prec = 1.0 / (sd * sd), ss = 0.0;
  for (int j = 0; j < dim; j++) {
    ss += theta[j] * theta[j];
    if (grad) grad[j] -= prec * theta[j];
  }
  return -0.5 * dim * log(2.0 * M_PI * sd * sd) - 0.5 * prec * ss;
}

/* ---------------------------------------------------------------- R objects */

/* Element `name` of the model's data: a matrix (rows > 0 when asked) or vector of `type`. */
static SEXP data_matrix(SEXP data, const char *name, SEXPTYPE type) {
  SEXP x = sg_list_get(data, name);
  if (TYPEOF(x) != type || !Rf_isMatrix(x) || Rf_nrows(x) < 1)
    sg_input_error("`model` data are corrupt: `%s` must be a %s matrix.", name,
                 type == REALSXP ? "numeric" : "integer");
  return x;
}

static SEXP data_vector(SEXP data, const char *name, SEXPTYPE type, int n) {
  SEXP x = sg_list_get(data, name);
  if (TYPEOF(x) != type || Rf_length(x) != n)
    sg_input_error("`model` data are corrupt: `%s` must be a%s vector of length %d.",
                 name, type == REALSXP ? " numeric" : "n integer", n);
  return x;
}

static double hyper(SEXP model, const char *name) {
  return sg_scalar_double(sg_list_get(sg_list_get(model, "hyper"), name), name);
}

/* The coefficients' prior of a regression with `dim` coefficients: hyper$prior_sd, and the
 * blocks of hyper$prior when the model has them (R/prior.R regression_prior()). */
static sg_coef_prior coef_prior(SEXP model, int dim) {
  sg_coef_prior c = {hyper(model, "prior_sd"), NULL};
  SEXP blocks = sg_list_get_optional(sg_list_get(model, "hyper"), "prior");
  if (blocks != R_NilValue) {
    sg_prior *p = (sg_prior *) R_alloc(1, sizeof(sg_prior));
    *p = sg_prior_from_r(blocks, dim);
    c.blocks = p;
  }
  return c;
}

static void linear_regression_from_r(SEXP model, sg_model *m, sg_status *st) {
  SEXP data = sg_list_get(model, "data");
  SEXP xt = data_matrix(data, "xt", REALSXP);
  SEXP y = data_vector(data, "y", REALSXP, Rf_ncols(xt));
  sg_linear_regression_init(m, sg_rows_from_r(xt, &y, 1), Rf_nrows(xt), Rf_ncols(xt),
                            hyper(model, "noise_sd"), coef_prior(model, Rf_nrows(xt)), st);
}

static void linear_regression_nig_from_r(SEXP model, sg_model *m, sg_status *st) {
  SEXP data = sg_list_get(model, "data");
  SEXP xt = data_matrix(data, "xt", REALSXP);
  SEXP y = data_vector(data, "y", REALSXP, Rf_ncols(xt));
  sg_linear_regression_nig_init(m, sg_rows_from_r(xt, &y, 1), Rf_nrows(xt), Rf_ncols(xt),
                                coef_prior(model, Rf_nrows(xt)), hyper(model, "variance_shape"),
                                hyper(model, "variance_scale"), st);
}

/* hyper: zellner (1 g-prior, 2 Zellner-Siow), g, gram_chol (a k x k matrix, k = p - 1) and flat
 * (6 numbers); R/linear_regression.R linear_regression_zellner(). */
static void linear_regression_zellner_from_r(SEXP model, sg_model *m, sg_status *st) {
  SEXP data = sg_list_get(model, "data");
  SEXP xt = data_matrix(data, "xt", REALSXP);
  SEXP y = data_vector(data, "y", REALSXP, Rf_ncols(xt));
  SEXP h = sg_list_get(model, "hyper");
  const int p = Rf_nrows(xt), k = p - 1;
  SEXP chol = sg_list_get(h, "gram_chol"), flat = sg_list_get(h, "flat");
  if (TYPEOF(chol) != REALSXP || !Rf_isMatrix(chol) || Rf_nrows(chol) != k || Rf_ncols(chol) != k)
    sg_input_error("`model` is corrupt: `gram_chol` must be a %d x %d numeric matrix.", k, k);
  if (TYPEOF(flat) != REALSXP || Rf_length(flat) != 6)
    sg_input_error("`model` is corrupt: `flat` must be 6 numbers.");
  const int kind = (int) hyper(model, "zellner");
  sg_linear_regression_zellner_init(m, sg_rows_from_r(xt, &y, 1), p, Rf_ncols(xt), kind,
                                    hyper(model, "g"), REAL(chol), REAL(flat), st);
}

static void robust_regression_from_r(SEXP model, sg_model *m, sg_status *st) {
  SEXP data = sg_list_get(model, "data");
  SEXP xt = data_matrix(data, "xt", REALSXP);
  SEXP y = data_vector(data, "y", REALSXP, Rf_ncols(xt));
  sg_robust_regression_init(m, sg_rows_from_r(xt, &y, 1), Rf_nrows(xt), Rf_ncols(xt),
                            hyper(model, "df"), coef_prior(model, Rf_nrows(xt)),
                            hyper(model, "scale_prior"), st);
}

static void softmax_regression_from_r(SEXP model, sg_model *m, sg_status *st) {
  SEXP data = sg_list_get(model, "data");
  SEXP xt = data_matrix(data, "xt", REALSXP);
  SEXP y = data_vector(data, "y", INTSXP, Rf_ncols(xt));
  int K = sg_scalar_int(sg_list_get(sg_list_get(model, "hyper"), "classes"), "classes", 2);
  if ((double) K * Rf_nrows(xt) > INT_MAX / 2)
    sg_input_error("`model` has too many parameters (classes x design columns).");
  sg_softmax_regression_init(m, REAL(xt), INTEGER(y), Rf_nrows(xt), Rf_ncols(xt), K,
                             coef_prior(model, K * Rf_nrows(xt)), st);
}

static void logistic_regression_from_r(SEXP model, sg_model *m, sg_status *st) {
  SEXP data = sg_list_get(model, "data");
  SEXP xt = data_matrix(data, "xt", REALSXP);
  SEXP y = data_vector(data, "y", REALSXP, Rf_ncols(xt));
  sg_logistic_regression_init(m, sg_rows_from_r(xt, &y, 1), Rf_nrows(xt), Rf_ncols(xt),
                              coef_prior(model, Rf_nrows(xt)), st);
}

/* The packed rows of a count regression (covariates, counts, offset) and their sizes. */
static const double *count_rows(SEXP model, int *p, int *n) {
  SEXP data = sg_list_get(model, "data");
  SEXP xt = data_matrix(data, "xt", REALSXP);
  SEXP cols[2] = {data_vector(data, "y", REALSXP, Rf_ncols(xt)),
                  data_vector(data, "offset", REALSXP, Rf_ncols(xt))};
  *p = Rf_nrows(xt);
  *n = Rf_ncols(xt);
  return sg_rows_from_r(xt, cols, 2);
}

static void poisson_regression_from_r(SEXP model, sg_model *m, sg_status *st) {
  int p, n;
  const double *rows = count_rows(model, &p, &n);
  sg_poisson_regression_init(m, rows, p, n, coef_prior(model, p), st);
}

static void negative_binomial_regression_from_r(SEXP model, sg_model *m, sg_status *st) {
  int p, n;
  const double *rows = count_rows(model, &p, &n);
  sg_negative_binomial_regression_init(m, rows, p, n, coef_prior(model, p),
                                       hyper(model, "overdispersion_prior"), st);
}

static void gaussian_mixture_from_r(SEXP model, sg_model *m, sg_status *st) {
  SEXP yt = data_matrix(sg_list_get(model, "data"), "yt", REALSXP);
  int K = sg_scalar_int(sg_list_get(sg_list_get(model, "hyper"), "components"), "components", 1);
  sg_gaussian_mixture_init(m, REAL(yt), Rf_nrows(yt), Rf_ncols(yt), K, hyper(model, "concentration"),
                           hyper(model, "variance_shape"), hyper(model, "variance_scale"),
                           hyper(model, "mean_variance_ratio"), st);
}

static void custom_from_r(SEXP model, sg_model *m, sg_status *st) {
  (void) st;
  sg_custom_model_from_r(model, m);
}

static void api_from_r(SEXP model, sg_model *m, sg_status *st) {
  (void) st;
  sg_api_model_from_r(model, m);
}

typedef void (*sg_model_unpack)(SEXP model, sg_model *m, sg_status *st);

/* thread_safe: the family's functions call no R API while evaluating (sg_model.thread_safe). */
static const struct {
  const char *family;
  sg_model_unpack unpack;
  int thread_safe;
} registry[] = {
  {"linear_regression", linear_regression_from_r, 1},
  {"linear_regression_nig", linear_regression_nig_from_r, 1},
  {"linear_regression_zellner", linear_regression_zellner_from_r, 1},
  {"robust_regression", robust_regression_from_r, 1},
  {"softmax_regression", softmax_regression_from_r, 1},
  {"logistic_regression", logistic_regression_from_r, 1},
  {"poisson_regression", poisson_regression_from_r, 1},
  {"negative_binomial_regression", negative_binomial_regression_from_r, 1},
  {"gaussian_mixture", gaussian_mixture_from_r, 1},
  {"custom", custom_from_r, 0},   /* R callbacks */
  {"compiled", api_from_r, 0},    /* the API does not promise thread safety (sgais.h) */
};

void sg_model_from_r(SEXP model, sg_model *m) {
  SEXP family = TYPEOF(model) == VECSXP ? sg_list_get(model, "family") : R_NilValue;
  if (TYPEOF(family) != STRSXP || Rf_length(family) != 1)
    sg_input_error("`model` must be an sgais model, e.g. from linear_regression().");
  const char *name = CHAR(STRING_ELT(family, 0));
  for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
    if (strcmp(name, registry[i].family) == 0) {
      sg_status st = {SG_OK, ""};
      memset(m, 0, sizeof(*m));
      registry[i].unpack(model, m, &st);
      if (st.code) sg_raise(&st);
      if (!m->name) m->name = registry[i].family;
      m->thread_safe = registry[i].thread_safe;
      /* what every estimator indexes with; R checked it, a corrupt object must not crash */
      int dim = sg_scalar_int(sg_list_get(model, "dim"), "dim", 1);
      if (m->dim != dim)
        sg_input_error("`model` is corrupt: `dim` is %d but its data and prior make %d.",
                     dim, m->dim);
      return;
    }
  }
  sg_input_error("`model` has unknown family \"%s\".", name);
}

static void check_theta(const sg_model *m, SEXP theta) {
  if (TYPEOF(theta) != REALSXP || Rf_length(theta) != m->dim)
    sg_input_error("`theta` must be a numeric vector of length %d.", m->dim);
}

/* log prior, log likelihood over observations start..start+n-1 (1-based in R, 0-based here)
 * and both gradients at one parameter vector: the C functions as R sees them (tests,
 * gradient checks). */
SEXP ffi_model_evaluate(SEXP model, SEXP theta, SEXP start, SEXP n) {
  sg_model m;
  sg_model_from_r(model, &m);
  check_theta(&m, theta);
  int s = sg_scalar_int(start, "start", 0), k = sg_scalar_int(n, "n", 0);
  if (s + (double) k > m.n_obs) sg_input_error("`start` + `n` exceeds the number of observations.");
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);

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
  SET_VECTOR_ELT(out, 0, Rf_ScalarReal(m.log_prior(&m, &ws, REAL(theta), REAL(gp))));
  SET_VECTOR_ELT(out, 2, Rf_ScalarReal(sg_model_log_lik(&m, &ws, REAL(theta), NULL, s, k, 1.0, REAL(gl))));
  if (st.code) sg_raise(&st);
  UNPROTECT(nprot);
  return out;
}

/* The log-likelihood of every observation at every parameter vector (the columns of the dim x M
 * matrix theta): an n_obs x M matrix, for predictive densities. Interruptible between columns. */
SEXP ffi_model_pointwise_log_lik(SEXP model, SEXP theta) {
  sg_model m;
  sg_model_from_r(model, &m);
  if (TYPEOF(theta) != REALSXP || !Rf_isMatrix(theta) || Rf_nrows(theta) != m.dim)
    sg_input_error("`theta` must be a numeric matrix with %d rows.", m.dim);
  const int M = Rf_ncols(theta);
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, m.n_obs, M));
  double *o = REAL(out);
  for (int i = 0; i < M; i++) {
    sg_model_log_lik_pointwise(&m, &ws, REAL(theta) + (size_t) i * m.dim, 0, m.n_obs,
                               o + (size_t) i * m.n_obs);
    if (st.code) sg_raise(&st);
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
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, m.dim, k));
  GetRNGstate();
  for (int i = 0; i < k && !st.code; i++) m.prior_draw(&m, &ws, REAL(out) + (R_xlen_t) i * m.dim);
  PutRNGstate();
  if (st.code) sg_raise(&st);
  UNPROTECT(1);
  return out;
}

/* Whether the model makes jump proposals (model.h): its posterior may have modes that local
 * moves cannot travel between. */
SEXP ffi_model_has_jumps(SEXP model) {
  sg_model m;
  sg_model_from_r(model, &m);
  return Rf_ScalarLogical(m.jump_propose != NULL);
}
