/* Glue: entry points for the tests only (tests/testthat), which look inside the core through its
 * probes (model.h, kernel.h, linear_search.h, estimators.h): plain C in and out, the R objects
 * made here. */
#include "estimators.h"
#include "ffi.h"
#include "linear_search.h"
#include <string.h>

/* The model's FlyMC bound with tangent points at `anchor`, collapsed over all its observations
 * and evaluated at theta, and each observation's gap (sg_flymc_probe). */
SEXP ffi_flymc_bound(SEXP model, SEXP anchor, SEXP theta) {
  sg_model m;
  sg_model_from_r(model, &m);
  if (!(m.lik_bound_collapse && m.lik_bound_gap))
    sg_input_error("%s models have no collapsible likelihood bound.", m.name);
  if (TYPEOF(anchor) != REALSXP || Rf_length(anchor) != m.dim)
    sg_input_error("`anchor` must be a numeric vector of length %d.", m.dim);
  if (TYPEOF(theta) != REALSXP || Rf_length(theta) != m.dim)
    sg_input_error("`theta` must be a numeric vector of length %d.", m.dim);
  int nprot = 0;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2)); nprot++;
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 2)); nprot++;
  SEXP total = sg_new_column(out, names, 0, "collapsed", REALSXP, 1);
  SEXP gap = sg_new_column(out, names, 1, "gap", REALSXP, m.n_obs);
  Rf_setAttrib(out, R_NamesSymbol, names);
  REAL(total)[0] = sg_flymc_probe(&m, REAL(anchor), REAL(theta), REAL(gap));
  UNPROTECT(nprot);
  return out;
}

/* The model's grad_log_lik_diff (model.h) at theta and a over observations idx (1-based), with
 * scale 1. */
SEXP ffi_model_grad_diff(SEXP model, SEXP theta, SEXP a, SEXP idx) {
  sg_model m;
  sg_model_from_r(model, &m);
  if (!m.grad_log_lik_diff)
    sg_input_error("%s models have no one-pass gradient difference.", m.name);
  if (TYPEOF(theta) != REALSXP || Rf_length(theta) != m.dim || TYPEOF(a) != REALSXP ||
      Rf_length(a) != m.dim)
    sg_input_error("`theta` and `a` must be numeric vectors of length %d.", m.dim);
  if (TYPEOF(idx) != INTSXP) sg_input_error("`idx` must be an integer vector.");
  const int n = Rf_length(idx);
  int *i0 = (int *) R_alloc(n > 0 ? n : 1, sizeof(int));
  for (int k = 0; k < n; k++) {
    if (INTEGER(idx)[k] < 1 || INTEGER(idx)[k] > m.n_obs) sg_input_error("`idx` is out of range.");
    i0[k] = INTEGER(idx)[k] - 1;
  }
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, m.dim));
  memset(REAL(out), 0, m.dim * sizeof(double));
  sg_model_grad_log_lik_diff(&m, &ws, REAL(theta), REAL(a), i0, n, 1.0, REAL(out));
  if (st.code) sg_raise(&st);
  UNPROTECT(1);
  return out;
}

/* SGAIS's mini-batch gradient at theta with the anchor a, exactly and in `draws` mini-batches
 * of batch_size (sgais_probe_batch_grads): a dim x (draws + 1) matrix, the exact one first,
 * with attribute "strata" (0: drawn uniformly). */
SEXP ffi_sgais_batch_grads(SEXP model, SEXP theta, SEXP a, SEXP batch_size, SEXP stratified,
                           SEXP draws) {
  sg_model m;
  sg_model_from_r(model, &m);
  if (TYPEOF(theta) != REALSXP || Rf_length(theta) != m.dim || TYPEOF(a) != REALSXP ||
      Rf_length(a) != m.dim)
    sg_input_error("`theta` and `a` must be numeric vectors of length %d.", m.dim);
  const int b = Rf_asInteger(batch_size), d = Rf_asInteger(draws);
  if (b < 1 || d < 0 || d == NA_INTEGER) sg_input_error("`batch_size` and `draws` must be counts.");
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, m.dim, d + 1));
  const int C = sgais_probe_batch_grads(&m, &ws, REAL(theta), REAL(a), b, Rf_asLogical(stratified),
                                        d, 0x5354524154554dULL, REAL(out));
  if (st.code) sg_raise(&st);
  Rf_setAttrib(out, Rf_install("strata"), Rf_ScalarInteger(C));
  UNPROTECT(1);
  return out;
}

/* A mixture model with jump proposals (and its K, D), or an input error; theta must hold
 * points of its dimension, a column each: their number is returned. */
static int mixture_with_jumps(SEXP model, SEXP theta, sg_model *m, int *K, int *D) {
  sg_model_from_r(model, m);
  if (!sg_gaussian_mixture_has_jumps(m, K, D))
    sg_input_error("`model` must be a gaussian_mixture() with 2 to %d components.", GM_JUMP_MAX_K);
  if (theta == R_NilValue) return 0;
  if (TYPEOF(theta) != REALSXP || Rf_length(theta) % m->dim != 0)
    sg_input_error("`theta` must be a numeric matrix of %d rows.", m->dim);
  return Rf_length(theta) / m->dim;
}

/* The clusters a mixture's jump proposals are built from, given all its observations:
 * list(share (C), mean, variance (C x d matrices)). */
SEXP ffi_gaussian_mixture_jump_clusters(SEXP model) {
  sg_model m;
  int K, D;
  mixture_with_jumps(model, R_NilValue, &m, &K, &D);
  double *aux = (double *) R_alloc(m.jump_aux, sizeof(double));
  sg_jump_set(&m, m.n_obs, NULL, 0, m.n_obs, 0, (int *) R_alloc(SG_JUMP_POINTS, sizeof(int)), aux);
  const int C = sg_gaussian_mixture_clusters(&m, aux, NULL, NULL, NULL);
  int nprot = 0;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 3)); nprot++;
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 3)); nprot++;
  double *share = REAL(sg_new_column(out, names, 0, "share", REALSXP, C));
  SEXP mean = PROTECT(Rf_allocMatrix(REALSXP, C, D)); nprot++;
  SEXP var = PROTECT(Rf_allocMatrix(REALSXP, C, D)); nprot++;
  SET_VECTOR_ELT(out, 1, mean);
  SET_STRING_ELT(names, 1, Rf_mkChar("mean"));
  SET_VECTOR_ELT(out, 2, var);
  SET_STRING_ELT(names, 2, Rf_mkChar("variance"));
  Rf_setAttrib(out, R_NamesSymbol, names);
  sg_gaussian_mixture_clusters(&m, aux, share, REAL(mean), REAL(var));
  UNPROTECT(nprot);
  return out;
}

/* The parts of a mixture's jump proposal at the points theta (dim x M, a column each), with the
 * population Gaussian N(pop_mean, L L') (L: dim x dim, lower triangular) and Q built from all
 * the observations with n of them in the target: list(clusters = log Q, pop = log P, each
 * summed over the relabellings, factors = the population factors, draws = M draws from P). */
SEXP ffi_gaussian_mixture_jump_parts(SEXP model, SEXP theta, SEXP pop_mean, SEXP pop_factor,
                                     SEXP n) {
  sg_model m;
  int K, D;
  const int M = mixture_with_jumps(model, theta, &m, &K, &D), dim = m.dim;
  if (TYPEOF(pop_mean) != REALSXP || Rf_length(pop_mean) != dim)
    sg_input_error("`pop_mean` must be a numeric vector of length %d.", dim);
  if (TYPEOF(pop_factor) != REALSXP || Rf_length(pop_factor) != dim * dim)
    sg_input_error("`pop_factor` must be a %d x %d numeric matrix.", dim, dim);
  const double n_obs = sg_scalar_double(n, "n");
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);
  double *aux = (double *) R_alloc(m.jump_aux, sizeof(double));
  sg_jump_set(&m, m.n_obs, NULL, 0, m.n_obs, 0, (int *) R_alloc(SG_JUMP_POINTS, sizeof(int)), aux);
  sg_gaussian pop;
  sg_gaussian_set(&pop, REAL(pop_mean), REAL(pop_factor), 0, dim);
  int nprot = 0;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 4)); nprot++;
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 4)); nprot++;
  double *lq_c = REAL(sg_new_column(out, names, 0, "clusters", REALSXP, M));
  double *lq_p = REAL(sg_new_column(out, names, 1, "pop", REALSXP, M));
  double *fac = REAL(sg_new_column(out, names, 2, "factors", REALSXP, K + 4 * K * D));
  double *draws = REAL(sg_new_column(out, names, 3, "draws", REALSXP, (R_xlen_t) M * dim));
  Rf_setAttrib(out, R_NamesSymbol, names);
  sg_gaussian_mixture_jump_parts(&m, &ws, aux, REAL(theta), M, &pop, n_obs, lq_c, lq_p, fac, draws);
  UNPROTECT(nprot);
  return out;
}

/* The reference distribution q0 of a mixture's first chunk (model.h, ref_log_density) at the
 * points theta (dim x M, a column each), built from all the observations for a target of n of
 * them: list(value = log q0 (M), gradient (dim x M), draws = M draws from q0, from stream seed). */
SEXP ffi_gaussian_mixture_reference(SEXP model, SEXP theta, SEXP n, SEXP seed) {
  sg_model m;
  int K, D;
  const int M = mixture_with_jumps(model, theta, &m, &K, &D), dim = m.dim;
  const double n_obs = sg_scalar_double(n, "n");
  const int key = sg_scalar_int(seed, "seed", 0);
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);
  double *aux = (double *) R_alloc(m.jump_aux, sizeof(double));
  sg_jump_set(&m, m.n_obs, NULL, 0, m.n_obs, 0, (int *) R_alloc(SG_JUMP_POINTS, sizeof(int)), aux);
  int nprot = 0;
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 3)); nprot++;
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 3)); nprot++;
  double *value = REAL(sg_new_column(out, names, 0, "value", REALSXP, M));
  double *grad = REAL(sg_new_column(out, names, 1, "gradient", REALSXP, (R_xlen_t) M * dim));
  double *draws = REAL(sg_new_column(out, names, 2, "draws", REALSXP, (R_xlen_t) M * dim));
  Rf_setAttrib(out, R_NamesSymbol, names);
  memset(grad, 0, (size_t) M * dim * sizeof(double));
  sg_rng rng;
  sg_rng_init(&rng, (uint64_t) key, 0, 0);
  for (int i = 0; i < M; i++) {
    value[i] = m.ref_log_density(&m, &ws, REAL(theta) + (size_t) i * dim, aux, n_obs,
                                 grad + (size_t) i * dim);
    m.ref_draw(&m, aux, n_obs, draws + (size_t) i * dim, &rng);
  }
  UNPROTECT(nprot);
  return out;
}

/* What the model's reference built on all its observations is worth (anneal.h,
 * sg_reference_level): 0 none, 1 usable (a restart run then anneals them as one chunk from it,
 * R/sgais.R, sgais_restart), 2 complete (what a stream's restarts wait for). An integer. */
SEXP ffi_model_reference_level(SEXP model) {
  sg_model m;
  sg_model_from_r(model, &m);
  if (!m.jump_propose || !m.ref_log_density || m.n_obs < 1) return Rf_ScalarInteger(0);
  double *aux = (double *) R_alloc(m.jump_aux, sizeof(double));
  sg_jump_set(&m, m.n_obs, NULL, 0, m.n_obs, 0, (int *) R_alloc(SG_JUMP_POINTS, sizeof(int)), aux);
  return Rf_ScalarInteger(sg_reference_level(&m, aux));
}

/* theta (dim x M, a column each) after the model's canonicalize with log-weights logw. */
SEXP ffi_gaussian_mixture_canonicalize(SEXP model, SEXP theta, SEXP logw) {
  sg_model m;
  sg_model_from_r(model, &m);
  if (TYPEOF(theta) != REALSXP || Rf_length(theta) % m.dim != 0)
    sg_input_error("`theta` must be a numeric matrix of %d rows.", m.dim);
  const int M = Rf_length(theta) / m.dim;
  if (TYPEOF(logw) != REALSXP || Rf_length(logw) != M)
    sg_input_error("`logw` must be a numeric vector of length %d.", M);
  if (m.canonicalize == NULL) sg_input_error("`model` has no canonical labelling.");
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);
  SEXP out = PROTECT(Rf_duplicate(theta));
  sg_model_canonicalize(&m, &ws, REAL(out), M, REAL(logw), NULL);
  UNPROTECT(1);
  return out;
}

/* The points x (dim x n) mapped into the region the model's canonicalize puts theta in (logw as
 * above): list(x = the mapped points, moved = whether each was outside). */
SEXP ffi_gaussian_mixture_to_region(SEXP model, SEXP theta, SEXP logw, SEXP x) {
  sg_model m;
  sg_model_from_r(model, &m);
  if (TYPEOF(theta) != REALSXP || Rf_length(theta) % m.dim != 0)
    sg_input_error("`theta` must be a numeric matrix of %d rows.", m.dim);
  if (TYPEOF(x) != REALSXP || Rf_length(x) % m.dim != 0)
    sg_input_error("`x` must be a numeric matrix of %d rows.", m.dim);
  const int M = Rf_length(theta) / m.dim, n = Rf_length(x) / m.dim;
  if (TYPEOF(logw) != REALSXP || Rf_length(logw) != M)
    sg_input_error("`logw` must be a numeric vector of length %d.", M);
  if (m.canonicalize == NULL || m.to_region == NULL)
    sg_input_error("`model` has no canonical labelling.");
  sg_status st = {SG_OK, ""};
  sg_workspace ws;
  sg_workspace_init(&ws, &m, &st);
  double *pop = (double *) R_alloc(Rf_length(theta), sizeof(double));
  double *region = (double *) R_alloc(m.region_size, sizeof(double));
  memcpy(pop, REAL(theta), (size_t) Rf_length(theta) * sizeof(double));
  sg_model_canonicalize(&m, &ws, pop, M, REAL(logw), region);
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SEXP mapped = SET_VECTOR_ELT(out, 0, Rf_duplicate(x));
  SEXP moved = SET_VECTOR_ELT(out, 1, Rf_allocVector(LGLSXP, n));
  for (int i = 0; i < n; i++)
    LOGICAL(moved)[i] = sg_model_to_region(&m, &ws, region, REAL(mapped) + (size_t) i * m.dim);
  const char *names[] = {"x", "moved"};
  sg_set_names(out, names, 2);
  UNPROTECT(1);
  return out;
}

/* The Zellner-Siow log Bayes factor against the intercept alone, ls_zs_log_integral() with
 * eigenvalues lam, projections s and multiplicities mult, and the number of quadrature nodes
 * as attribute "nodes". */
SEXP ffi_linear_search_zs_integral(SEXP lam, SEXP s, SEXP mult, SEXP qinf, SEXP n, SEXP r2) {
  const int m = Rf_length(lam);
  if (TYPEOF(lam) != REALSXP || TYPEOF(s) != REALSXP || TYPEOF(mult) != REALSXP ||
      Rf_length(s) != m || Rf_length(mult) != m)
    sg_input_error("`lam`, `s` and `mult` must be numeric vectors of one length.");
  int nodes = 0;
  SEXP out = PROTECT(Rf_ScalarReal(ls_zs_log_integral(
      m, REAL(lam), REAL(s), REAL(mult), sg_scalar_double(qinf, "qinf"),
      sg_scalar_double(n, "n"), sg_scalar_double(r2, "r2"), &nodes)));
  Rf_setAttrib(out, Rf_install("nodes"), Rf_ScalarInteger(nodes));
  UNPROTECT(1);
  return out;
}
