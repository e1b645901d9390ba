/* Glue: models from their R objects (the registry of families; a new built-in model is one C
 * file with a constructor (model.h) plus one unpacker and one row in `registry` here, no
 * estimator changes), and the entry points that evaluate a model for R. */
#include "ffi.h"
#include <limits.h>
#include <math.h>
#include <string.h>

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

/* data: xt, y, and `trials` when its rows are binomial counts (y successes). */
static void logistic_regression_from_r(SEXP model, sg_model *m, sg_status *st) {
  SEXP data = sg_list_get(model, "data");
  SEXP xt = data_matrix(data, "xt", REALSXP);
  const int trials = sg_list_get_optional(data, "trials") != R_NilValue;
  SEXP cols[2] = {data_vector(data, "y", REALSXP, Rf_ncols(xt)),
                  trials ? data_vector(data, "trials", REALSXP, Rf_ncols(xt)) : R_NilValue};
  sg_logistic_regression_init(m, sg_rows_from_r(xt, cols, 1 + trials), Rf_nrows(xt), Rf_ncols(xt),
                              trials, coef_prior(model, Rf_nrows(xt)), st);
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

/* A known scale hyperparameter, or NaN when the model has none of that name (a parameter). */
static double known_or_nan(SEXP model, const char *name) {
  SEXP v = sg_list_get_optional(sg_list_get(model, "hyper"), name);
  return v == R_NilValue ? R_NaN : sg_scalar_double(v, name);
}

/* The q group sds from hyper: `group_sd` when known, else NaN (parameters); whether known. */
static int group_sds_from_r(SEXP hyper, int q, double *tau) {
  SEXP known = sg_list_get_optional(hyper, "group_sd");
  if (known != R_NilValue && (TYPEOF(known) != REALSXP || Rf_length(known) != q))
    sg_input_error("`model` is corrupt: `group_sd` must be %d numbers.", q);
  for (int k = 0; k < q; k++) tau[k] = known == R_NilValue ? R_NaN : REAL(known)[k];
  return known != R_NilValue;
}

/* The correlation of q random effects from hyper: NULL (independent: no `correlated`), *unknown
 * (a parameter), or the known `group_cor` (q x q). */
static const double *correlation_from_r(SEXP hyper, int q, const double *unknown) {
  SEXP correlated = sg_list_get_optional(hyper, "correlated");
  if (correlated == R_NilValue || Rf_asLogical(correlated) != TRUE) return NULL;
  SEXP cor = sg_list_get_optional(hyper, "group_cor");
  if (cor == R_NilValue) return unknown;
  if (TYPEOF(cor) != REALSXP || !Rf_isMatrix(cor) || Rf_nrows(cor) != q || Rf_ncols(cor) != q)
    sg_input_error("`model` is corrupt: `group_cor` must be a %d x %d matrix.", q, q);
  return REAL(cor);
}

/* data: xt (p x n), y, zt (q x n: the random-effect covariates) and st (w x n: each row's
 * group sums before it, R/linear_mixed.R); hyper: noise_sd and group_sd (q values) when known,
 * `correlated` (TRUE for correlated effects) with `group_cor` (q x q) when their correlation
 * is known, and `prior`, the blocks of all the parameters. */
static void linear_mixed_from_r(SEXP model, sg_model *m, sg_status *st) {
  SEXP data = sg_list_get(model, "data");
  SEXP xt = data_matrix(data, "xt", REALSXP);
  const int p = Rf_nrows(xt), n = Rf_ncols(xt);
  SEXP y = data_vector(data, "y", REALSXP, n);
  SEXP extra[2] = {data_matrix(data, "zt", REALSXP), data_matrix(data, "st", REALSXP)};
  const int q = Rf_nrows(extra[0]);
  if (q > SG_MIXED_MAX_Q || Rf_ncols(extra[0]) != n)
    sg_input_error("`model` data are corrupt: `zt` must have at most %d rows and %d columns.",
                   SG_MIXED_MAX_Q, n);
  if (Rf_nrows(extra[1]) != sg_mixed_stats_width(p, q) || Rf_ncols(extra[1]) != n)
    sg_input_error("`model` data are corrupt: `st` must be a %d x %d matrix.",
                   sg_mixed_stats_width(p, q), n);
  const double sigma = known_or_nan(model, "noise_sd");
  SEXP hyper = sg_list_get(model, "hyper");
  double tau[SG_MIXED_MAX_Q];
  const int known = group_sds_from_r(hyper, q, tau);
  const double unknown = R_NaN; /* cor[0] NaN: R is a parameter */
  const double *r = correlation_from_r(hyper, q, &unknown);
  const int dim = p + ISNAN(sigma) + (known ? 0 : q) + (r == &unknown ? q * (q - 1) / 2 : 0);
  sg_prior prior = sg_prior_from_r(sg_list_get(hyper, "prior"), dim);
  sg_linear_mixed_init(m, sg_rows_extra_from_r(xt, &y, 1, extra, 2), p, q, n, sigma, tau, r,
                       prior, st);
}

/* data: xt (p x rows), y, offset (rows; with glmm_family SG_GLMM_BINOMIAL, and only then, also
 * `trials`), unit_rows and unit_context (one per observation, a unit of rows of one group:
 * R/glm_mixed.R); hyper: glmm_family (SG_GLMM_*), `effects` (each
 * random effect's design column, 1-based, or 0 for an intercept; absent: an intercept alone),
 * group_sd (one per effect) when known, `correlated` and `group_cor` as linear_mixed_from_r's,
 * quadrature (3 x nodes: the Gauss-Hermite rules, as sg_glm_mixed_init takes them) and `prior`,
 * the blocks of all the parameters. */
static void glm_mixed_from_r(SEXP model, sg_model *m, sg_status *st) {
  SEXP data = sg_list_get(model, "data"), hyp = sg_list_get(model, "hyper");
  SEXP xt = data_matrix(data, "xt", REALSXP);
  const int p = Rf_nrows(xt), rows = Rf_ncols(xt);
  const int family = sg_scalar_int(sg_list_get(hyp, "glmm_family"), "glmm_family", 1);
  const int binomial = family == SG_GLMM_BINOMIAL;
  if (binomial != (sg_list_get_optional(data, "trials") != R_NilValue))
    sg_input_error("`model` is corrupt: its data have `trials` if and only if its family is "
                   "binomial (`glmm_family` %d).", SG_GLMM_BINOMIAL);
  SEXP cols[3] = {data_vector(data, "y", REALSXP, rows), data_vector(data, "offset", REALSXP, rows),
                  binomial ? data_vector(data, "trials", REALSXP, rows) : R_NilValue};
  SEXP unit_rows = sg_list_get(data, "unit_rows");
  if (TYPEOF(unit_rows) != INTSXP)
    sg_input_error("`model` data are corrupt: `unit_rows` must be integers.");
  const int n = Rf_length(unit_rows);
  SEXP context = data_vector(data, "unit_context", INTSXP, n);
  double total = 0.0;
  for (int u = 0; u < n; u++) total += INTEGER(unit_rows)[u];
  if (total != rows)
    sg_input_error("`model` data are corrupt: `unit_rows` add up to %.0f rows, not %d.", total, rows);
  SEXP quad = sg_list_get(hyp, "quadrature");
  if (TYPEOF(quad) != REALSXP || !Rf_isMatrix(quad) || Rf_nrows(quad) != 3 || Rf_ncols(quad) < 1)
    sg_input_error("`model` is corrupt: `quadrature` must be a numeric matrix of 3 rows.");
  SEXP eff = sg_list_get_optional(hyp, "effects");
  int zcol[SG_MIXED_MAX_Q] = {-1};
  int q = 1;
  if (eff != R_NilValue) {
    if (TYPEOF(eff) != INTSXP || Rf_length(eff) < 1 || Rf_length(eff) > SG_MIXED_MAX_Q)
      sg_input_error("`model` is corrupt: `effects` must be 1 to %d integers.", SG_MIXED_MAX_Q);
    q = Rf_length(eff);
    for (int k = 0; k < q; k++) {
      const int c = INTEGER(eff)[k];
      if (c == NA_INTEGER || c < 0 || c > p)
        sg_input_error("`model` is corrupt: `effects` must be design columns (1 to %d) or 0.", p);
      zcol[k] = c - 1;
    }
  }
  double tau[SG_MIXED_MAX_Q];
  const int known = group_sds_from_r(hyp, q, tau);
  const double unknown = R_NaN;
  const double *cor = correlation_from_r(hyp, q, &unknown);
  const int dim = p + (family == SG_GLMM_NEGATIVE_BINOMIAL) + (known ? 0 : q) +
                  (cor == &unknown ? q * (q - 1) / 2 : 0);
  sg_prior prior = sg_prior_from_r(sg_list_get(hyp, "prior"), dim);
  sg_glmm_effects effects = {.q = q, .zcol = zcol, .tau = tau, .cor = cor};
  sg_glm_mixed_init(m, sg_rows_from_r(xt, cols, 2 + binomial), p, family, n, INTEGER(unit_rows),
                    INTEGER(context), effects, REAL(quad), Rf_ncols(quad), prior, st);
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
  {"linear_mixed", linear_mixed_from_r, 1},
  {"glm_mixed", glm_mixed_from_r, 1},
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

/* theta as a dim x M matrix of parameter vectors (a column each); returns M. */
static int check_theta_columns(const sg_model *m, SEXP theta) {
  if (TYPEOF(theta) != REALSXP || !Rf_isMatrix(theta) || Rf_nrows(theta) != m->dim)
    sg_input_error("`theta` must be a numeric matrix with %d rows.", m->dim);
  return Rf_ncols(theta);
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
  const char *nm[] = {"log_prior", "grad_log_prior", "log_lik", "grad_log_lik"};
  sg_set_names(out, nm, 4);

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

/* The model at every parameter vector (the columns of the dim x M matrix theta): with
 * `pointwise`, the log-likelihood of every observation (an n_obs x M matrix, for predictive
 * densities); else the log prior and the log-likelihood of all the observations, without
 * gradients, each pass on the session's threads (blocks in a fixed order: the same on any
 * number), a 2 x M matrix for importance sampling (R/importance_sampling.R). Interruptible
 * between columns. */
static SEXP model_at_columns(SEXP model, SEXP theta, int pointwise) {
  sg_model m;
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_model_from_r(model, &m);
  const int M = check_theta_columns(&m, theta);
  sg_workspace_init(&ws, &m, &st);
  if (!pointwise) sg_workspace_threads(&ws, &m, sg_threads());
  const int rows = pointwise ? m.n_obs : 2;
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, rows, M));
  for (int i = 0; i < M; i++) {
    const double *t = REAL(theta) + (size_t) i * m.dim;
    double *o = REAL(out) + (size_t) i * rows;
    if (pointwise) {
      sg_model_log_lik_pointwise(&m, &ws, t, 0, m.n_obs, o);
    } else {
      o[0] = m.log_prior(&m, &ws, t, NULL);
      o[1] = sg_model_log_lik(&m, &ws, t, NULL, 0, m.n_obs, 1.0, NULL);
    }
    if (st.code) sg_raise(&st);
    R_CheckUserInterrupt();
  }
  UNPROTECT(1);
  return out;
}
SEXP ffi_model_pointwise_log_lik(SEXP model, SEXP theta) {
  return model_at_columns(model, theta, 1);
}
SEXP ffi_model_log_density(SEXP model, SEXP theta) {
  return model_at_columns(model, theta, 0);
}

/* `draws` points from the model's reference distribution built on all its observations (the
 * q0 AIS and nested sampling start from: anneal.h, sg_reference_for), each from its own stream
 * (key, SG_REF_START_STREAM, i), and their log densities log q0: list(theta = dim x draws,
 * log_q), or NULL where the model has no reference usable for these data. The proposal of
 * importance_sampling() for a mixture (R/importance_sampling.R): q0 sums over the relabellings,
 * so it covers all the posterior's K! modes. Interruptible between draws. */
SEXP ffi_reference_draws(SEXP model, SEXP draws, SEXP key) {
  sg_model m;
  sg_model_from_r(model, &m);
  const int M = sg_scalar_int(draws, "draws", 1);
  const uint64_t k = sg_rng_key_from_state(key, "key");
  if (!m.jump_propose || !m.ref_log_density || !m.ref_draw) return R_NilValue;
  const int N = m.n_obs;
  double *aux = (double *) R_alloc(m.jump_aux, sizeof(double));
  sg_jump_set(&m, N, NULL, 0, N, 0, (int *) R_alloc(SG_JUMP_POINTS, sizeof(int)), aux);
  const sg_reference ref = sg_reference_for(&m, 1, aux, 0, N);
  if (!ref.aux) return R_NilValue;
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);
  SEXP theta = PROTECT(Rf_allocMatrix(REALSXP, m.dim, M));
  SEXP log_q = PROTECT(Rf_allocVector(REALSXP, M));
  for (int i = 0; i < M; i++) {
    double *t = REAL(theta) + (size_t) i * m.dim;
    sg_reference_start_draw(&m, &ref, k, i, t);
    REAL(log_q)[i] = sg_path_log_base(&m, &ws, &ref, 0.0, t, NULL);
    if (st.code) sg_raise(&st);
    if (i % 64 == 63) R_CheckUserInterrupt();
  }
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, theta);
  SET_VECTOR_ELT(out, 1, log_q);
  const char *nm[] = {"theta", "log_q"};
  sg_set_names(out, nm, 2);
  UNPROTECT(3);
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
  for (int i = 0; i < k && !st.code; i++) m.prior_draw(&m, &ws, REAL(out) + (sg_index) i * m.dim);
  PutRNGstate();
  if (st.code) sg_raise(&st);
  UNPROTECT(1);
  return out;
}

/* What the model supplies (model.h), as a named logical vector: jump proposals (its posterior
 * may have modes that local moves cannot travel between), a bound on its log-likelihood ratios
 * (the confidence sampler), a collapsible likelihood bound (FlyMC), a canonical labelling, a
 * reference distribution for the annealing path (with the jumps, whose summary it is built from). R
 * reads the model's capabilities here rather than keeping lists of families. */
SEXP ffi_model_capabilities(SEXP model) {
  sg_model m;
  sg_model_from_r(model, &m);
  const char *names[] = {"jumps", "log_lik_range", "lik_bound", "canonicalize", "reference"};
  const int has[] = {m.jump_propose != NULL, m.log_lik_range != NULL,
                     m.lik_bound_collapse != NULL && m.lik_bound_gap != NULL,
                     m.canonicalize != NULL,
                     m.jump_propose != NULL && m.ref_log_density != NULL && m.ref_draw != NULL};
  const int n = sizeof(names) / sizeof(names[0]);
  SEXP out = PROTECT(Rf_allocVector(LGLSXP, n));
  for (int i = 0; i < n; i++) LOGICAL(out)[i] = has[i];
  sg_set_names(out, names, n);
  UNPROTECT(1);
  return out;
}

/* NULL when the kernel (its code, R/control.R) suits the model, else why not
 * (sg_kernel_suits_model, the one rule; R raises it as sgais_error_kernel). */
SEXP ffi_kernel_suits_model(SEXP model, SEXP kernel) {
  sg_model m;
  sg_model_from_r(model, &m);
  sg_status st = {SG_OK, ""};
  if (!sg_kernel_suits_model(sg_scalar_int(kernel, "kernel", 0), &m, &st)) return R_NilValue;
  return Rf_mkString(st.message);
}

/* Each row's group sums over the rows before it (sg_group_prefix), continuing from `sums`
 * (w x G, the rows before these): list(st, sums), the sums updated. group: 1-based indices into
 * sums' columns. */
SEXP ffi_group_prefix(SEXP xt, SEXP y, SEXP zt, SEXP group, SEXP sums) {
  if (TYPEOF(xt) != REALSXP || !Rf_isMatrix(xt)) sg_input_error("`xt` must be a numeric matrix.");
  const int p = Rf_nrows(xt), n = Rf_ncols(xt);
  if (TYPEOF(y) != REALSXP || Rf_length(y) != n)
    sg_input_error("`y` must be a numeric vector of length %d.", n);
  if (TYPEOF(zt) != REALSXP || !Rf_isMatrix(zt) || Rf_ncols(zt) != n || Rf_nrows(zt) < 1 ||
      Rf_nrows(zt) > SG_MIXED_MAX_Q)
    sg_input_error("`zt` must be a numeric matrix of 1 to %d rows and %d columns.", SG_MIXED_MAX_Q, n);
  const int q = Rf_nrows(zt), w = sg_mixed_stats_width(p, q);
  if (TYPEOF(group) != INTSXP || Rf_length(group) != n)
    sg_input_error("`group` must be an integer vector of length %d.", n);
  if (TYPEOF(sums) != REALSXP || !Rf_isMatrix(sums) || Rf_nrows(sums) != w)
    sg_input_error("`sums` must be a numeric matrix with %d rows.", w);
  const int G = Rf_ncols(sums);
  int *g = (int *) R_alloc(n > 0 ? n : 1, sizeof(int));
  for (int i = 0; i < n; i++) {
    const int gi = INTEGER(group)[i];
    if (gi == NA_INTEGER || gi < 1 || gi > G)
      sg_input_error("`group` must index the columns of `sums`: observation %d has %d.", i + 1, gi);
    g[i] = gi - 1;
  }
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SEXP st = SET_VECTOR_ELT(out, 0, Rf_allocMatrix(REALSXP, w, n));
  SEXP total = SET_VECTOR_ELT(out, 1, Rf_duplicate(sums));
  sg_group_prefix(REAL(xt), REAL(y), REAL(zt), g, p, q, n, REAL(total), REAL(st));
  const char *names[] = {"st", "sums"};
  sg_set_names(out, names, 2);
  UNPROTECT(1);
  return out;
}
