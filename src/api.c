/* The registered C API (inst/include/sgais.h): a table of model classes that other packages
 * register from their init routines, and the adapter that makes a model of such a class an
 * sg_model. The R object (R/compiled_model.R) names its class; the class is looked up by that
 * name whenever a model is built, so no pointer is ever stored in R. */
#include "ffi.h"
#include "sgais.h"
#include <R_ext/Rdynload.h>
#include <math.h>
#include <string.h>

#define API_MAX_CLASSES 256
#define API_MAX_NAME 128

typedef struct {
  sgais_model_class cls;
  char name[API_MAX_NAME];
} api_entry;

static api_entry classes[API_MAX_CLASSES];
static int n_classes = 0;

static int api_register(const sgais_model_class *cls) {
  if (!cls || cls->api_version != SGAIS_API_VERSION || !cls->name || !cls->log_lik ||
      strlen(cls->name) == 0 || strlen(cls->name) >= API_MAX_NAME ||
      (cls->log_prior == NULL) != (cls->prior_draw == NULL))
    return 1;
  int i = 0;
  while (i < n_classes && strcmp(classes[i].name, cls->name) != 0) i++;
  if (i == n_classes) {
    if (n_classes == API_MAX_CLASSES) return 2;
    n_classes++;
  }
  classes[i].cls = *cls;
  strcpy(classes[i].name, cls->name);
  classes[i].cls.name = classes[i].name;
  return 0;
}

static int api_version(void) { return SGAIS_API_VERSION; }

static const sgais_model_class *api_find(const char *name) {
  for (int i = 0; i < n_classes; i++)
    if (strcmp(classes[i].name, name) == 0) return &classes[i].cls;
  return NULL;
}

void sg_api_register(void) {
  R_RegisterCCallable("sgais", "sgais_register_model_class", (DL_FUNC) api_register);
  R_RegisterCCallable("sgais", "sgais_log_sum_exp", (DL_FUNC) sg_log_sum_exp);
  R_RegisterCCallable("sgais", "sgais_api_version", (DL_FUNC) api_version);
}

/* Whether a class of this name is registered (compiled_model() checks before building). */
SEXP ffi_api_model_class(SEXP name) {
  if (TYPEOF(name) != STRSXP || Rf_length(name) != 1 || STRING_ELT(name, 0) == NA_STRING)
    sg_input_error("`class` must be a string.");
  return Rf_ScalarLogical(api_find(CHAR(STRING_ELT(name, 0))) != NULL);
}

/* ---------------------------------------------------------------- the adapter */

typedef struct {
  const sgais_model_class *cls;
  sgais_data d;
  sg_prior prior; /* when the class has no prior of its own */
} api_model;

/* A NaN from the class is its failure: say which class, once. */
static double api_checked(const sg_model *m, sg_workspace *ws, double v, const char *what) {
  if (ISNAN(v))
    sg_fail(ws->status, SG_ERR_MODEL, "the %s of compiled model class \"%s\" is NaN.", what,
            ((const api_model *) m->data)->cls->name);
  return v;
}

static void api_prior_draw(const sg_model *m, sg_workspace *ws, double *theta) {
  const api_model *a = m->data;
  if (a->cls->prior_draw) a->cls->prior_draw(&a->d, ws->scratch, theta);
  else sg_prior_draw(&a->prior, theta);
}

static double api_log_prior(const sg_model *m, sg_workspace *ws, const double *theta, double *grad) {
  const api_model *a = m->data;
  if (!a->cls->log_prior) return sg_prior_log_density(&a->prior, theta, grad);
  return api_checked(m, ws, a->cls->log_prior(&a->d, ws->scratch, theta, grad), "log prior");
}

static double api_log_lik(const sg_model *m, sg_workspace *ws, const double *theta, const int *idx,
                          int start, int n, double scale, double *grad) {
  const api_model *a = m->data;
  return api_checked(m, ws, a->cls->log_lik(&a->d, ws->scratch, theta, idx, start, n, scale, grad),
                     "log-likelihood");
}

void sg_api_model_from_r(SEXP model, sg_model *m) {
  SEXP name = sg_list_get(model, "class_name");
  if (TYPEOF(name) != STRSXP || Rf_length(name) != 1 || STRING_ELT(name, 0) == NA_STRING)
    sg_input_error("`model` is corrupt: `class_name` must be a string.");
  const sgais_model_class *cls = api_find(CHAR(STRING_ELT(name, 0)));
  if (!cls) {
    /* a model read in a new session: loading its package registers the class (R errors if it
     * cannot, naming the package) */
    SEXP ns = PROTECT(R_FindNamespace(Rf_mkString("sgais")));
    SEXP call = PROTECT(Rf_lang4(Rf_install("ensure_model_class"), name,
                                 sg_list_get(model, "package"), R_NilValue));
    Rf_eval(call, ns);
    UNPROTECT(2);
    cls = api_find(CHAR(STRING_ELT(name, 0)));
  }
  if (!cls)
    sg_input_error("compiled model class \"%s\" is not registered; load the package "
                 "that defines it.", CHAR(STRING_ELT(name, 0)));
  SEXP xt = sg_list_get(sg_list_get(model, "data"), "xt");
  SEXP hyper = sg_list_get(sg_list_get(model, "hyper"), "values");
  if (TYPEOF(xt) != REALSXP || !Rf_isMatrix(xt))
    sg_input_error("`model` data are corrupt: `xt` must be a numeric matrix.");
  if (TYPEOF(hyper) != REALSXP)
    sg_input_error("`model` is corrupt: its hyperparameters must be numeric.");
  int dim = sg_scalar_int(sg_list_get(model, "dim"), "dim", 1);

  api_model *a = (api_model *) R_alloc(1, sizeof(api_model));
  a->cls = cls;
  a->d.n_obs = Rf_ncols(xt);
  a->d.n_vars = Rf_nrows(xt);
  a->d.x = REAL(xt);
  a->d.n_hyper = Rf_length(hyper);
  a->d.hyper = REAL(hyper);
  a->d.dim = dim;
  if (!cls->log_prior) a->prior = sg_prior_from_r(sg_list_get(sg_list_get(model, "hyper"), "prior"), dim);
  if (cls->check) {
    char message[SG_MESSAGE_LEN] = "";
    if (cls->check(&a->d, message, sizeof message)) {
      message[SG_MESSAGE_LEN - 1] = '\0';
      sg_status st = {SG_OK, ""};
      sg_fail(&st, SG_ERR_INPUT, "compiled model class \"%s\": %s", cls->name,
              message[0] ? message : "its check failed.");
      sg_raise(&st);
    }
  }
  m->name = cls->name;
  sg_model_define(m, dim, a->d.n_obs, a, api_prior_draw, api_log_prior);
  m->scratch_bytes = cls->scratch_bytes ? cls->scratch_bytes(&a->d) : 0;
  m->log_lik = api_log_lik;
}
