/* The model interface (model.h): evaluation through a workspace with counts, Gaussians, and the
 * prior helpers the built-in models share. The R side of models (building an sg_model from its
 * R object, the registry of families) is model_r.c. */
#include "glm_family.h"
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

void sg_model_define(sg_model *m, int dim, int n_obs, const void *data,
                     void (*prior_draw)(const sg_model *, sg_workspace *, double *),
                     double (*log_prior)(const sg_model *, sg_workspace *, const double *,
                                         double *)) {
  m->dim = dim;
  m->n_obs = n_obs;
  m->data = data;
  m->prior_draw = prior_draw;
  m->log_prior = log_prior;
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

void sg_model_grad_log_lik_diff(const sg_model *m, sg_workspace *ws, const double *theta,
                                const double *a, const int *idx, int n, double scale,
                                double *grad) {
  ws->count.gradient += 2.0 * n;
  m->grad_log_lik_diff(m, ws, theta, a, idx, n, scale, grad);
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
                           const double *logw, double *region) {
  if (m->canonicalize) m->canonicalize(m, ws, theta, M, logw, region);
}

int sg_model_to_region(const sg_model *m, sg_workspace *ws, const double *region, double *theta) {
  return (region && m->to_region) ? m->to_region(m, ws, region, theta) : 0;
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

double *sg_log_factorial_table(void) {
  double *t = (double *) R_alloc(SG_LOG_FACTORIAL_TABLE, sizeof(double));
  for (int k = 0; k < SG_LOG_FACTORIAL_TABLE; k++) t[k] = lgammafn(k + 1.0);
  return t;
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
