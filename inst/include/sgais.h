/* sgais.h: the C API of the R package sgais, for models written in C.
 *
 * A package (or code compiled at run time) defines a model class, a struct of functions, and
 * registers it from its init routine:
 *
 *   #include <sgais.h>
 *   static const sgais_model_class my_class = {SGAIS_API_VERSION, "mypkg_poisson", NULL, NULL,
 *                                              my_log_lik, NULL, NULL};
 *   void R_init_mypkg(DllInfo *dll) { sgais_register_model_class(&my_class); }
 *
 * with `LinkingTo: sgais` and `Imports: sgais` in its DESCRIPTION. In R, compiled_model() then
 * builds a model of that class from data and hyperparameters, which sgais(), ais() and
 * nested_sampling() run like any other. The model object stores the class's name and package,
 * never a pointer, so a saved fit works in a new session: sgais loads the package, whose init
 * registers the class again. See inst/examples/sgaisexample for a complete package.
 *
 * Functions are called from one thread at a time for now, but must not keep state between
 * calls outside `scratch` (later versions evaluate particles in parallel, each with its own). */
#ifndef SGAIS_API_H
#define SGAIS_API_H

#include <stddef.h>
#include <R_ext/Rdynload.h>

/* The version of this interface. A class records the version it was compiled against; sgais
 * refuses classes of versions it does not know. */
#define SGAIS_API_VERSION 1

/* The data and hyperparameters of one model, as sgais passes them to the class's functions. */
typedef struct {
  int n_obs;           /* observations */
  int n_vars;          /* values per observation (the columns of the data in R) */
  const double *x;     /* observation i is x[i * n_vars], ..., x[i * n_vars + n_vars - 1] */
  int n_hyper;         /* the numeric hyperparameters given to compiled_model(), in order */
  const double *hyper;
  int dim;             /* the number of parameters */
} sgais_data;

typedef struct sgais_model_class {
  int api_version;  /* SGAIS_API_VERSION */
  const char *name; /* unique among the classes loaded, e.g. "<package>_<model>" */

  /* Optional (NULL): checks the data and hyperparameters; returns 0, or nonzero with the reason
   * written to message (at most message_len bytes), which becomes an R error. */
  int (*check)(const sgais_data *d, char *message, size_t message_len);

  /* Optional (NULL: none): the bytes of scratch memory an evaluation may write. */
  size_t (*scratch_bytes)(const sgais_data *d);

  /* Required: sum_i log p(y_i | theta) over the observations idx[0], ..., idx[n - 1] (0-based),
   * or start, ..., start + n - 1 when idx is NULL. When grad is not NULL, also add scale times
   * the gradient of that sum with respect to theta to grad[0..dim-1] (add, do not overwrite).
   * Return NaN if the value cannot be computed; -Inf is a zero likelihood. */
  double (*log_lik)(const sgais_data *d, void *scratch, const double *theta, const int *idx,
                    int start, int n, double scale, double *grad);

  /* Optional, both or neither (NULL: the prior given to compiled_model(), e.g. normal_prior()):
   * log p(theta) with its gradient added to grad when grad is not NULL, and a draw from the
   * prior using R's generators (unif_rand(), norm_rand(), exp_rand() from <R_ext/Random.h>). */
  double (*log_prior)(const sgais_data *d, void *scratch, const double *theta, double *grad);
  void (*prior_draw)(const sgais_data *d, void *scratch, double *theta);
} sgais_model_class;

/* Registers a model class (a copy of *cls is kept; a class of the same name is replaced).
 * Returns 0, or nonzero when the class is invalid (unknown version, no name or log_lik, only
 * one of log_prior and prior_draw) or too many classes are registered. */
static inline int sgais_register_model_class(const sgais_model_class *cls) {
  static int (*fn)(const sgais_model_class *) = NULL;
  if (fn == NULL)
    fn = (int (*)(const sgais_model_class *)) R_GetCCallable("sgais", "sgais_register_model_class");
  return fn(cls);
}

/* log(sum(exp(x[0..n-1]))) without overflow; -Inf entries are zero weights. */
static inline double sgais_log_sum_exp(const double *x, int n) {
  static double (*fn)(const double *, int) = NULL;
  if (fn == NULL) fn = (double (*)(const double *, int)) R_GetCCallable("sgais", "sgais_log_sum_exp");
  return fn(x, n);
}

/* The API version of the installed sgais (to check at run time against SGAIS_API_VERSION). */
static inline int sgais_api_version(void) {
  static int (*fn)(void) = NULL;
  if (fn == NULL) fn = (int (*)(void)) R_GetCCallable("sgais", "sgais_api_version");
  return fn();
}

#endif
