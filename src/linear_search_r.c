/* Glue: the entry points of linear_search.c (R/linear_search.R checks the arguments first; these
 * re-check them cheaply). */
#include "ffi.h"
#include "linear_search.h"
#include <limits.h>
#include <string.h>

static const char *const prior_kinds[] = {"normal", "nig", "g", "zs"};

static const double *real_vector(SEXP x, int n, const char *what) {
  if (TYPEOF(x) != REALSXP || Rf_length(x) != n)
    sg_input_error("`%s` must be a numeric vector of length %d.", what, n);
  return REAL(x);
}

/* The statistics, columns' groups, terms' parents (R_NilValue: none) and prior. */
static void input_from_r(SEXP stats, SEXP group, SEXP parents, SEXP prior, ls_input *in) {
  memset(in, 0, sizeof *in);
  SEXP xtx = sg_list_get(stats, "xtx");
  if (TYPEOF(xtx) != REALSXP || !Rf_isMatrix(xtx) || Rf_nrows(xtx) != Rf_ncols(xtx) ||
      Rf_nrows(xtx) < 1)
    sg_input_error("`stats$xtx` must be a square numeric matrix.");
  const int q = Rf_nrows(xtx);
  in->q = q;
  in->xtx = REAL(xtx);
  in->xty = real_vector(sg_list_get(stats, "xty"), q, "stats$xty");
  in->yy = sg_scalar_double(sg_list_get(stats, "yy"), "stats$yy");
  in->n = sg_scalar_double(sg_list_get(stats, "n"), "stats$n");
  if (TYPEOF(group) != INTSXP || Rf_length(group) != q)
    sg_input_error("`group` must be an integer vector of length %d.", q);
  in->group = INTEGER(group);
  int K = 0;
  for (int j = 0; j < q; j++) {
    if (in->group[j] < 0 || in->group[j] == NA_INTEGER)
      sg_input_error("`group` must hold whole numbers >= 0.");
    if (in->group[j] > K) K = in->group[j];
  }
  in->K = K;
  int *start = (int *) R_alloc(K + 1, sizeof(int));
  start[0] = 0;
  if (parents == R_NilValue) {
    for (int k = 0; k < K; k++) start[k + 1] = 0;
    in->parent_term = start;
  } else {
    if (TYPEOF(parents) != VECSXP || Rf_length(parents) != K)
      sg_input_error("`parents` must be a list of %d integer vectors.", K);
    for (int k = 0; k < K; k++) {
      SEXP pk = VECTOR_ELT(parents, k);
      if (TYPEOF(pk) != INTSXP) sg_input_error("`parents[[%d]]` must be an integer vector.", k + 1);
      start[k + 1] = start[k] + Rf_length(pk);
    }
    int *terms = (int *) R_alloc(start[K] + 1, sizeof(int));
    for (int k = 0; k < K; k++) {
      SEXP pk = VECTOR_ELT(parents, k);
      for (int i = 0; i < Rf_length(pk); i++) {
        const int r = INTEGER(pk)[i];
        if (r == NA_INTEGER || r < 1 || r > K || r == k + 1)
          sg_input_error("`parents[[%d]]` must hold other terms, in 1..%d.", k + 1, K);
        terms[start[k] + i] = r - 1;
      }
    }
    in->parent_term = terms;
  }
  in->parent_start = start;

  SEXP kind = sg_list_get(prior, "kind");
  if (TYPEOF(kind) != STRSXP || Rf_length(kind) != 1)
    sg_input_error("`prior$kind` must be a string.");
  in->kind = -1;
  for (int i = 0; i < 4; i++)
    if (strcmp(CHAR(STRING_ELT(kind, 0)), prior_kinds[i]) == 0) in->kind = i;
  SEXP offset = sg_list_get_optional(prior, "offset");
  in->offset = offset == R_NilValue ? 0.0 : sg_scalar_double(offset, "prior$offset");
  switch (in->kind) {
  case LS_NORMAL:
  case LS_NIG:
    in->mean = real_vector(sg_list_get(prior, "mean"), q, "prior$mean");
    in->var = real_vector(sg_list_get(prior, "var"), q, "prior$var");
    if (in->kind == LS_NORMAL) {
      in->s2 = sg_scalar_double(sg_list_get(prior, "s2"), "prior$s2");
    } else {
      in->shape = sg_scalar_double(sg_list_get(prior, "shape"), "prior$shape");
      in->scale = sg_scalar_double(sg_list_get(prior, "scale"), "prior$scale");
    }
    break;
  case LS_G:
  case LS_ZS: {
    SEXP gram = sg_list_get(prior, "gram");
    if (TYPEOF(gram) != REALSXP || Rf_length(gram) != (q - 1) * (q - 1))
      sg_input_error("`prior$gram` must be a numeric %d x %d matrix.", q - 1, q - 1);
    in->gram = REAL(gram);
    in->g = sg_scalar_double(sg_list_get(prior, in->kind == LS_G ? "g" : "r2"),
                             in->kind == LS_G ? "prior$g" : "prior$r2");
    break;
  }
  default:
    sg_input_error("`prior$kind` must be \"normal\", \"nig\", \"g\" or \"zs\".");
  }
}

static void setup_from_r(SEXP stats, SEXP group, SEXP parents, SEXP prior, ls_problem *p) {
  ls_input in;
  input_from_r(stats, group, parents, prior, &in);
  sg_status st = {SG_OK, ""};
  if (ls_setup(&in, p, &st)) sg_raise(&st);
}

/* Row i of the logical n x K matrix x as a membership of W words. */
static void member_from_row(SEXP x, R_xlen_t n, int K, R_xlen_t i, uint64_t *m, int W) {
  memset(m, 0, (size_t) W * sizeof(uint64_t));
  const int *v = LOGICAL(x);
  for (int k = 0; k < K; k++) {
    const int b = v[i + n * k];
    if (b == NA_LOGICAL) sg_input_error("Submodels must be TRUE or FALSE for each term.");
    if (b) m[k >> 6] |= (uint64_t) 1 << (k & 63);
  }
}

static void check_members(SEXP x, int K, const char *what) {
  if (TYPEOF(x) != LGLSXP || !Rf_isMatrix(x) || Rf_ncols(x) != K)
    sg_input_error("`%s` must be a logical matrix of %d columns.", what, K);
}

static SEXP named_list(int n, const char *const *names) {
  SEXP out = PROTECT(Rf_allocVector(VECSXP, n));
  sg_set_names(out, names, n);
  UNPROTECT(1);
  return out;
}

/* .Call entry: every allowed submodel's code (bit k - 1 for term k), number of terms and log
 * evidence, in Gray-code order. */
SEXP ffi_linear_search_enumerate(SEXP stats, SEXP group, SEXP parents, SEXP prior) {
  ls_problem p;
  setup_from_r(stats, group, parents, prior, &p);
  sg_status st = {SG_OK, ""};
  if (p.K > LS_MAX_ENUMERATE) {
    sg_fail(&st, SG_ERR_INPUT, "%d terms make 2^%d submodels, more than an enumeration takes "
            "(2^%d); search them by MCMC.", p.K, p.K, LS_MAX_ENUMERATE);
    sg_raise(&st);
  }
  const R_xlen_t count = (R_xlen_t) ls_count_allowed(&p);
  int nprot = 0;
  static const char *names[] = {"code", "size", "log_evidence"};
  SEXP out = PROTECT(named_list(3, names)); nprot++;
  SET_VECTOR_ELT(out, 0, Rf_allocVector(INTSXP, count));
  SET_VECTOR_ELT(out, 1, Rf_allocVector(INTSXP, count));
  SET_VECTOR_ELT(out, 2, Rf_allocVector(REALSXP, count));
  if (ls_enumerate(&p, INTEGER(VECTOR_ELT(out, 0)), INTEGER(VECTOR_ELT(out, 1)),
                   REAL(VECTOR_ELT(out, 2)), &st))
    sg_raise(&st);
  UNPROTECT(nprot);
  return out;
}

/* Element i of the list `out`: a copy of the d1 x d2 x d3 numbers x, a vector (d2 = 0), a matrix
 * (d3 = 0) or an array. */
static void set_reals(SEXP out, int i, const double *x, int d1, int d2, int d3) {
  SEXP v = d2 == 0   ? Rf_allocVector(REALSXP, d1)
           : d3 == 0 ? Rf_allocMatrix(REALSXP, d1, d2)
                     : Rf_alloc3DArray(REALSXP, d1, d2, d3);
  SET_VECTOR_ELT(out, i, v);
  const size_t n = (size_t) d1 * (d2 ? d2 : 1) * (d3 ? d3 : 1);
  if (n) memcpy(REAL(v), x, n * sizeof(double));
}

/* One submodel's moments as a named list (ls_moments). */
static SEXP moments_to_r(const ls_moments *mom, int q) {
  static const char *names[] = {"kind", "df", "mean", "cov", "scale", "g", "weight",
                                "node_mean", "node_scale"};
  static const char *kinds[] = {"normal", "t", "t_mixture"};
  const int mixture = mom->kind == LS_MOMENTS_T_MIXTURE;
  SEXP out = PROTECT(named_list(mixture ? 9 : 5, names));
  SET_VECTOR_ELT(out, 0, Rf_mkString(kinds[mom->kind]));
  SET_VECTOR_ELT(out, 1, Rf_ScalarReal(mom->df));
  set_reals(out, 2, mom->mean, q, 0, 0);
  set_reals(out, 3, mom->cov, q, q, 0);
  set_reals(out, 4, mom->scale, q, q, 0);
  if (mixture) {
    const int m = mom->nodes;
    set_reals(out, 5, mom->g, m, 0, 0);
    set_reals(out, 6, mom->weight, m, 0, 0);
    set_reals(out, 7, mom->node_mean, q, m, 0);
    set_reals(out, 8, mom->node_scale, q, q, m);
  }
  UNPROTECT(1);
  return out;
}

/* .Call entry: the log evidence of each submodel (rows of the logical matrix `models`, one
 * column per term), and with `moments` TRUE a list of their posterior moments. */
SEXP ffi_linear_search_models(SEXP stats, SEXP group, SEXP prior, SEXP models, SEXP moments) {
  ls_problem p;
  setup_from_r(stats, group, R_NilValue, prior, &p);
  check_members(models, p.K, "models");
  if (TYPEOF(moments) != LGLSXP || Rf_length(moments) != 1 || LOGICAL(moments)[0] == NA_LOGICAL)
    sg_input_error("`moments` must be TRUE or FALSE.");
  const int with_moments = LOGICAL(moments)[0];
  const R_xlen_t m = Rf_nrows(models);
  const int q = p.q;
  int nprot = 0;
  static const char *names[] = {"log_evidence", "moments"};
  SEXP out = PROTECT(named_list(2, names)); nprot++;
  SEXP lz = Rf_allocVector(REALSXP, m);
  SET_VECTOR_ELT(out, 0, lz);
  SEXP mom_list = R_NilValue;
  if (with_moments) {
    mom_list = Rf_allocVector(VECSXP, m);
    SET_VECTOR_ELT(out, 1, mom_list);
  }
  uint64_t *member = (uint64_t *) R_alloc(p.W, sizeof(uint64_t));
  double *mean = (double *) R_alloc(q, sizeof(double));
  double *cov = (double *) R_alloc((size_t) q * q, sizeof(double));
  double *scale = (double *) R_alloc((size_t) q * q, sizeof(double));
  sg_status st = {SG_OK, ""};
  for (R_xlen_t i = 0; i < m; i++) {
    member_from_row(models, m, p.K, i, member, p.W);
    ls_moments mom = {0, 0, 0.0, mean, cov, scale, NULL, NULL, NULL, NULL};
    const void *vmax = vmaxget();
    if (ls_evaluate(&p, member, REAL(lz) + i, with_moments ? &mom : NULL, &st)) sg_raise(&st);
    if (with_moments) SET_VECTOR_ELT(mom_list, i, moments_to_r(&mom, q));
    vmaxset(vmax); /* each submodel's scratch */
    sg_interrupt_check();
  }
  UNPROTECT(nprot);
  return out;
}

/* .Call entry: `iterations` steps of the chain over submodels continued from `state` (the
 * result of an earlier call, or a new state with no models), returning the new state: the
 * chain's submodel, iterations and key, every submodel evaluated so far with its log evidence
 * and visits, and this call's trace of the number of terms and its accepted moves. */
SEXP ffi_linear_search_mcmc(SEXP stats, SEXP group, SEXP parents, SEXP prior,
                            SEXP log_prior_size, SEXP iterations, SEXP state) {
  ls_problem p;
  setup_from_r(stats, group, parents, prior, &p);
  const int K = p.K, W = p.W;
  const double *lps = real_vector(log_prior_size, K + 1, "log_prior_size");
  for (int k = 0; k <= K; k++)
    if (ISNAN(lps[k]) || lps[k] == R_PosInf)
      sg_input_error("`log_prior_size` must hold numbers < Inf.");
  const int iter = sg_scalar_int(iterations, "iterations", 0);
  ls_chain ch;
  ch.model = (uint64_t *) R_alloc(W, sizeof(uint64_t));
  SEXP model = sg_list_get(state, "model");
  if (TYPEOF(model) != LGLSXP || Rf_length(model) != K)
    sg_input_error("`state$model` must be a logical vector of length %d.", K);
  member_from_row(model, 1, K, 0, ch.model, W);
  ch.iteration = sg_scalar_count(sg_list_get(state, "iteration"), "state$iteration");
  ch.key = sg_rng_key_from_state(sg_list_get(state, "key"), "state$key");
  SEXP models = sg_list_get(state, "models");
  check_members(models, K, "state$models");
  const R_xlen_t m = Rf_nrows(models);
  const double *lz_in = real_vector(sg_list_get(state, "log_evidence"), m, "state$log_evidence");
  const double *vis_in = real_vector(sg_list_get(state, "visits"), m, "state$visits");
  if (m + (R_xlen_t) iter + 1 > INT_MAX / 2)
    sg_input_error("The chain's state and `iterations` hold too many submodels.");
  ls_cache cache;
  ls_cache_init(&cache, W, (int) m + 64);
  uint64_t *member = (uint64_t *) R_alloc(W, sizeof(uint64_t));
  for (R_xlen_t i = 0; i < m; i++) {
    member_from_row(models, m, K, i, member, W);
    if (ls_cache_find(&cache, member) >= 0 || ISNAN(lz_in[i]) || !(vis_in[i] >= 0.0))
      sg_input_error("`state$models` must be distinct, with log evidences and visits >= 0.");
    ls_cache_add(&cache, member, lz_in[i], vis_in[i]);
  }

  int nprot = 0;
  SEXP trace = PROTECT(Rf_allocVector(INTSXP, iter)); nprot++;
  double accepted = 0.0;
  sg_status st = {SG_OK, ""};
  if (ls_mcmc(&p, lps, &ch, iter, &cache, INTEGER(trace), &accepted, &st)) sg_raise(&st);

  static const char *names[] = {"model", "iteration", "key", "models", "log_evidence", "visits",
                                "trace_size", "accepted"};
  SEXP out = PROTECT(named_list(8, names)); nprot++;
  SEXP cur = Rf_allocVector(LGLSXP, K);
  SET_VECTOR_ELT(out, 0, cur);
  for (int k = 0; k < K; k++) LOGICAL(cur)[k] = (int) ((ch.model[k >> 6] >> (k & 63)) & 1u);
  SET_VECTOR_ELT(out, 1, Rf_ScalarReal(ch.iteration));
  SET_VECTOR_ELT(out, 2, Rf_duplicate(sg_list_get(state, "key")));
  const R_xlen_t n = cache.count;
  SEXP bits = Rf_allocMatrix(LGLSXP, (int) n, K);
  SET_VECTOR_ELT(out, 3, bits);
  for (R_xlen_t i = 0; i < n; i++)
    for (int k = 0; k < K; k++)
      LOGICAL(bits)[i + n * k] =
          (int) ((cache.bits[(size_t) i * W + (k >> 6)] >> (k & 63)) & 1u);
  set_reals(out, 4, cache.log_evidence, (int) n, 0, 0);
  set_reals(out, 5, cache.visits, (int) n, 0, 0);
  SET_VECTOR_ELT(out, 6, trace);
  SET_VECTOR_ELT(out, 7, Rf_ScalarReal(accepted));
  UNPROTECT(nprot);
  return out;
}
