/* The glue layer: everything that reads or builds R objects (ffi.c, init.c, api.c,
 * custom_model.c and the *_r.c files; the core never includes this header). Entry points called
 * through .Call are named ffi_<topic>_<verb>; they check their arguments (again: R checked them
 * first), unpack the R objects into the plain C types the core takes, run the core, and build
 * the result, raising a core failure (sg_status) as a classed R condition. */
#ifndef SG_FFI_H
#define SG_FFI_H

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <stddef.h>
#include "estimators.h"

/* Raises st as an R error of class sgais_error_<kind> (R/checks.R, core_error()). */
void sg_raise(const sg_status *st)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* Raises an R error of class sgais_error_input (printf-style message): for an argument or object
 * the core cannot use. Every argument check of the R layer goes through it, so that R users can
 * catch such errors by class like every other error of the package. */
void sg_input_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((noreturn, format(printf, 1, 2)))
#endif
    ;

/* Argument checks for entry points; errors name the argument. */
int sg_scalar_int(SEXP x, const char *what, int lower);
double sg_scalar_double(SEXP x, const char *what);
double sg_scalar_count(SEXP x, const char *what);
SEXP sg_list_get(SEXP list, const char *name);
/* The same, or R_NilValue when the list has no such element (optional fields). */
SEXP sg_list_get_optional(SEXP list, const char *name);
/* A regression's data as rows (rows_r.c, model.h): covariates (the columns of the p x n matrix
 * xt) then cols[0..ncol) (numeric vectors of length n, checked by the caller), each row
 * sg_rows_stride(p + ncol) doubles (more with `extra`, below) and aligned to 64 bytes; packed once for the same R objects
 * and kept in a small cache between calls. Call in the main thread. */
const double *sg_rows_from_r(SEXP xt, const SEXP *cols, int ncol);
/* The same with each observation's values in the nextra matrices `extra` (numeric, n columns
 * each, checked by the caller) after the columns, in order. */
const double *sg_rows_extra_from_r(SEXP xt, const SEXP *cols, int ncol, const SEXP *extra,
                                   int nextra);
/* Names x (a vector of n elements) with the n strings `names`. */
void sg_set_names(SEXP x, const char *const *names, int n);
/* A run's key for its random streams (rng.h), stored in R as two whole numbers in [0, 2^32). */
uint64_t sg_rng_key_from_state(SEXP x, const char *what);
SEXP sg_new_column(SEXP out, SEXP names, int i, const char *name, SEXPTYPE type, R_xlen_t n);
/* A run's genealogy (anneal.h) from its state's `genealogy`, a list of `eve` (integer),
 * `influence` (numeric), each of length cap, and `closed`; NULL (a run's start, a restart, or
 * the state of a fit made before genealogies were kept) starts a segment of M particles. The
 * arrays are R_alloc'ed. */
void sg_genealogy_from_r(SEXP x, int cap, int M, sg_genealogy *g);
/* The genealogy as such a list (allocated, unprotected). */
SEXP sg_genealogy_to_r(const sg_genealogy *g);
/* An estimator's trace as a named list of columns, built from one spec table per estimator:
 * each column's name, type (REALSXP or INTSXP) and the offset (offsetof) of the pointer that the
 * core's trace struct keeps to it. sg_columns_new allocates the columns (length n) and points the
 * struct at them; sg_columns_cut then keeps the first n entries of each, the entries the core
 * filled. R reads the columns by name. */
typedef struct {
  const char *name;
  SEXPTYPE type;
  size_t offset;
} sg_column;
/* The log-likelihoods of the M points theta (rows of m->dim) over observations [start,
 * start + n) into ll: the state's `given` ones when it holds M (checked by the caller's R
 * side), else computed through ws, which counts them and stops at a model failure (in
 * ws->status). Returns 1 when they were computed, for the caller to check them. */
int sg_loglik_from_state(SEXP given, const sg_model *m, sg_workspace *ws, const double *theta,
                         int M, int start, int n, double *ll);
SEXP sg_columns_new(const sg_column *cols, int ncol, void *trace, R_xlen_t n);
void sg_columns_cut(SEXP list, R_xlen_t n);

/* The one settings parser, driven by the settings table (ffi.c; the R side is the schema in
 * R/settings.R): each row a setting C reads, by name, its type ('i' a whole number, 'c' a code,
 * 'd' a number), the offset of its field in the struct filled, and its range, each end open or
 * closed. sg_settings_read() reads and re-checks the rows into `out` (errors name the setting);
 * the move and annealing settings and each estimator's (sg_sgais_table, sg_ns_table) are read
 * through it. */
typedef struct {
  const char *name;
  char type;
  size_t offset;
  double lower, upper;
  unsigned char open_lower, open_upper;
} sg_setting;
void sg_settings_read(SEXP x, const sg_setting *rows, int n, void *out);
extern const sg_setting sg_sgais_table[], sg_ns_table[];
extern const int sg_sgais_table_rows, sg_ns_table_rows;
sg_move_settings sg_move_settings_from_r(SEXP x);
sg_anneal_settings sg_anneal_settings_from_r(SEXP x);

/* Builds a model from its R object (class sgais_model; R_alloc'ed), raising an R error naming
 * the field when the object cannot be used. Models written in R hold R closures that live as
 * long as the model object, which the caller keeps protected (it is a .Call argument). */
void sg_model_from_r(SEXP model, sg_model *m);
/* A prior from its R description (R/prior.R): a numeric matrix with one column per block and
 * rows kind, start (0-based), n, location, scale, df. */
sg_prior sg_prior_from_r(SEXP blocks, int dim);

/* Unpackers of the models written in R (custom_model.c) and in C through the registered API
 * (api.c), called by sg_model_from_r(). */
void sg_custom_model_from_r(SEXP model, sg_model *m);
void sg_api_model_from_r(SEXP model, sg_model *m);
/* The registered C API (R_RegisterCCallable, inst/include/sgais.h). */
void sg_api_register(void);

/* ---------------------------------------------------------------- entry points */

SEXP ffi_model_evaluate(SEXP model, SEXP theta, SEXP start, SEXP n);
SEXP ffi_model_prior_draw(SEXP model, SEXP n);
SEXP ffi_model_capabilities(SEXP model);
SEXP ffi_group_prefix(SEXP xt, SEXP y, SEXP zt, SEXP group, SEXP sums);
SEXP ffi_kernel_suits_model(SEXP model, SEXP kernel);
SEXP ffi_rng_draws(SEXP key, SEXP a, SEXP b, SEXP n, SEXP kind, SEXP range);
SEXP ffi_annealing_step(SEXP loglik, SEXP logw, SEXP max_delta, SEXP target);
SEXP ffi_model_pointwise_log_lik(SEXP model, SEXP theta);
SEXP ffi_model_log_density(SEXP model, SEXP theta);
SEXP ffi_reference_draws(SEXP model, SEXP draws, SEXP key);
SEXP ffi_api_model_class(SEXP name);
SEXP ffi_custom_model_failed(void);
void sg_stop_hooks_init(void);
SEXP ffi_session_token(void);
SEXP ffi_session_token_live(SEXP token);
SEXP ffi_data_digest(SEXP digest, SEXP values);
SEXP ffi_first_non_finite(SEXP x);
SEXP ffi_precond_metric(SEXP theta, SEXP logw, SEXP kind, SEXP leave_out);
SEXP ffi_flymc_bound(SEXP model, SEXP anchor, SEXP theta);
SEXP ffi_model_grad_diff(SEXP model, SEXP theta, SEXP a, SEXP idx);
SEXP ffi_sgais_batch_grads(SEXP model, SEXP theta, SEXP a, SEXP batch_size, SEXP stratified,
                           SEXP draws);
SEXP ffi_gaussian_mixture_jump_clusters(SEXP model);
SEXP ffi_gaussian_mixture_jump_parts(SEXP model, SEXP theta, SEXP pop_mean, SEXP pop_factor,
                                     SEXP n);
SEXP ffi_gaussian_mixture_canonicalize(SEXP model, SEXP theta, SEXP logw);
SEXP ffi_gaussian_mixture_to_region(SEXP model, SEXP theta, SEXP logw, SEXP x);
SEXP ffi_gaussian_mixture_reference(SEXP model, SEXP theta, SEXP n, SEXP seed);
SEXP ffi_model_reference_level(SEXP model);
SEXP ffi_settings_table(void);
SEXP ffi_threads_get(void);
SEXP ffi_threads_set(SEXP threads);
SEXP ffi_threads_max(void);
SEXP ffi_threads_openmp(void);
SEXP ffi_rows_forget(void);
SEXP ffi_sgais_run(SEXP model, SEXP state, SEXP n_end, SEXP settings, SEXP schedule,
                   SEXP time_budget);
SEXP ffi_sgais_state_fields(void);
SEXP ffi_ais_run(SEXP model, SEXP theta, SEXP logw, SEXP loglik, SEXP lambda, SEXP settings,
                 SEXP steps_done, SEXP step_size, SEXP key, SEXP schedule, SEXP time_budget,
                 SEXP genealogy);
SEXP ffi_nested_sampling_run(SEXP model, SEXP state, SEXP settings, SEXP time_budget);
SEXP ffi_linear_search_enumerate(SEXP stats, SEXP group, SEXP parents, SEXP prior);
SEXP ffi_linear_search_models(SEXP stats, SEXP group, SEXP prior, SEXP models, SEXP moments);
SEXP ffi_linear_search_mcmc(SEXP stats, SEXP group, SEXP parents, SEXP prior,
                            SEXP log_prior_size, SEXP iterations, SEXP state);
SEXP ffi_linear_search_zs_integral(SEXP lam, SEXP s, SEXP mult, SEXP qinf, SEXP n, SEXP r2);

#endif
