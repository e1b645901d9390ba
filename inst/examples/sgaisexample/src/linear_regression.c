/* Bayesian linear regression with known noise as an sgais model class (inst/include/sgais.h).
 * Observation i holds its p = dim covariates, then its response: n_vars = dim + 1.
 * The one hyperparameter is the noise sd. The prior comes from R (the class has none). */
#include <math.h>
#include <stdio.h>
#include <R_ext/Error.h>
#include <R_ext/Rdynload.h>
#include <sgais.h>

static int check(const sgais_data *d, char *message, size_t len) {
  if (d->n_vars != d->dim + 1) {
    snprintf(message, len, "the data need %d columns (covariates, then the response), not %d.",
             d->dim + 1, d->n_vars);
    return 1;
  }
  if (d->n_hyper != 1 || !(d->hyper[0] > 0) || !isfinite(d->hyper[0])) {
    snprintf(message, len, "the one hyperparameter is the noise sd, a positive number.");
    return 1;
  }
  return 0;
}

static double log_lik(const sgais_data *d, void *scratch, const double *theta, const int *idx,
                      int start, int n, double scale, double *grad) {
  (void) scratch;
  const int p = d->dim;
  const double s2 = d->hyper[0] * d->hyper[0];
  double ss = 0.0;
  for (int k = 0; k < n; k++) {
    const double *row = d->x + (size_t) (idx ? idx[k] : start + k) * d->n_vars;
    double mu = 0.0;
    for (int j = 0; j < p; j++) mu += row[j] * theta[j];
    double r = row[p] - mu;
    ss += r * r;
    if (grad)
      for (int j = 0; j < p; j++) grad[j] += scale * r * row[j] / s2;
  }
  return -0.5 * n * log(2.0 * M_PI * s2) - 0.5 * ss / s2;
}

static const sgais_model_class linear_regression = {
  SGAIS_API_VERSION, "sgaisexample_linear_regression", check, NULL, log_lik, NULL, NULL
};

void R_init_sgaisexample(DllInfo *dll) {
  R_registerRoutines(dll, NULL, NULL, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  if (sgais_register_model_class(&linear_regression) != 0)
    Rf_warning("sgaisexample: sgais did not accept the model class.");
}
