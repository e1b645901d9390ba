/* Registration of the .Call entry points (exact argument counts) and of the C API that other
 * packages call (api.c, inst/include/sgais.h); the thread setting's fork handler (threads.c). */
#include "ffi.h"
#include "threads.h"
#include <R_ext/Rdynload.h>
#include <R_ext/Visibility.h>

static const R_CallMethodDef call_methods[] = {
  {"ffi_model_evaluate", (DL_FUNC) &ffi_model_evaluate, 4},
  {"ffi_model_prior_draw", (DL_FUNC) &ffi_model_prior_draw, 2},
  {"ffi_model_capabilities", (DL_FUNC) &ffi_model_capabilities, 1},
  {"ffi_group_prefix", (DL_FUNC) &ffi_group_prefix, 5},
  {"ffi_settings_table", (DL_FUNC) &ffi_settings_table, 0},
  {"ffi_kernel_suits_model", (DL_FUNC) &ffi_kernel_suits_model, 2},
  {"ffi_rng_draws", (DL_FUNC) &ffi_rng_draws, 6},
  {"ffi_annealing_step", (DL_FUNC) &ffi_annealing_step, 4},
  {"ffi_model_pointwise_log_lik", (DL_FUNC) &ffi_model_pointwise_log_lik, 2},
  {"ffi_model_log_density", (DL_FUNC) &ffi_model_log_density, 2},
  {"ffi_reference_draws", (DL_FUNC) &ffi_reference_draws, 3},
  {"ffi_sgais_run", (DL_FUNC) &ffi_sgais_run, 6},
  {"ffi_sgais_state_fields", (DL_FUNC) &ffi_sgais_state_fields, 0},
  {"ffi_ais_run", (DL_FUNC) &ffi_ais_run, 12},
  {"ffi_nested_sampling_run", (DL_FUNC) &ffi_nested_sampling_run, 4},
  {"ffi_api_model_class", (DL_FUNC) &ffi_api_model_class, 1},
  {"ffi_custom_model_failed", (DL_FUNC) &ffi_custom_model_failed, 0},
  {"ffi_session_token", (DL_FUNC) &ffi_session_token, 0},
  {"ffi_session_token_live", (DL_FUNC) &ffi_session_token_live, 1},
  {"ffi_data_digest", (DL_FUNC) &ffi_data_digest, 2},
  {"ffi_first_non_finite", (DL_FUNC) &ffi_first_non_finite, 1},
  {"ffi_precond_metric", (DL_FUNC) &ffi_precond_metric, 4},
  {"ffi_flymc_bound", (DL_FUNC) &ffi_flymc_bound, 3},
  {"ffi_model_grad_diff", (DL_FUNC) &ffi_model_grad_diff, 4},
  {"ffi_sgais_batch_grads", (DL_FUNC) &ffi_sgais_batch_grads, 6},
  {"ffi_gaussian_mixture_jump_clusters", (DL_FUNC) &ffi_gaussian_mixture_jump_clusters, 1},
  {"ffi_gaussian_mixture_jump_parts", (DL_FUNC) &ffi_gaussian_mixture_jump_parts, 5},
  {"ffi_gaussian_mixture_canonicalize", (DL_FUNC) &ffi_gaussian_mixture_canonicalize, 3},
  {"ffi_gaussian_mixture_to_region", (DL_FUNC) &ffi_gaussian_mixture_to_region, 4},
  {"ffi_gaussian_mixture_reference", (DL_FUNC) &ffi_gaussian_mixture_reference, 4},
  {"ffi_model_reference_level", (DL_FUNC) &ffi_model_reference_level, 1},
  {"ffi_threads_get", (DL_FUNC) &ffi_threads_get, 0},
  {"ffi_threads_set", (DL_FUNC) &ffi_threads_set, 1},
  {"ffi_threads_max", (DL_FUNC) &ffi_threads_max, 0},
  {"ffi_threads_openmp", (DL_FUNC) &ffi_threads_openmp, 0},
  {"ffi_rows_forget", (DL_FUNC) &ffi_rows_forget, 0},
  {"ffi_linear_search_enumerate", (DL_FUNC) &ffi_linear_search_enumerate, 4},
  {"ffi_linear_search_models", (DL_FUNC) &ffi_linear_search_models, 5},
  {"ffi_linear_search_mcmc", (DL_FUNC) &ffi_linear_search_mcmc, 7},
  {"ffi_linear_search_zs_integral", (DL_FUNC) &ffi_linear_search_zs_integral, 6},
  {NULL, NULL, 0}
};

void attribute_visible R_init_sgais(DllInfo *dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
  sg_api_register();
  sg_threads_init();
  sg_stop_hooks_init();
}
