/* The kernels every annealing estimator moves its particles with, behind one interface
 * (kernel.h): SGHMC (sghmc.c, the paper's), SGLD (sgld.c), the subsampling Metropolis-Hastings
 * kernels (subsample_mh.c) and Firefly Monte Carlo (flymc.c). The estimators build the
 * potential (sg_potential) and choose the step; the kernel only moves. */
#include "kernel.h"
#include <math.h>
#include <string.h>

static int subsampling(int kind) {
  return kind == SG_KERNEL_AUSTERITY || kind == SG_KERNEL_CONFIDENCE;
}

void sg_kernel_init(sg_kernel *k, const sg_move_settings *s, const sg_precond *pc, int dim,
                    int n_max) {
  memset(k, 0, sizeof(*k));
  k->kind = s->kernel;
  k->integrator = s->integrator;
  k->alpha = s->momentum_decay;
  k->pc = pc;
  k->jumps = s->jumps;
  k->work = (double *) R_alloc(4 * (size_t) dim, sizeof(double));
  if (subsampling(k->kind)) {
    sg_mh_test *t = &k->mh;
    t->tolerance = s->mh_tolerance;
    t->batch = s->mh_batch;
    t->bound = s->mh_bound;
    /* a subset of at most n_max / 2 observations (beyond that the test reads them all) moves at
     * most n_max entries of the shuffle: a table of twice that keeps probes short */
    int cap = 16;
    while (cap < 2 * (double) n_max && cap < (1 << 30)) cap *= 2;
    t->cap = cap;
    t->key = (int *) R_alloc(cap, sizeof(int));
    t->value = (int *) R_alloc(cap, sizeof(int));
    t->used = (int *) R_alloc(cap / 2 + 1, sizeof(int));
    for (int i = 0; i < cap; i++) t->key[i] = -1;
  }
  if (k->kind == SG_KERNEL_FLYMC) {
    k->bright = (int *) R_alloc(n_max > 0 ? n_max : 1, sizeof(int));
    k->gap = (double *) R_alloc(SG_BLOCK, sizeof(double));
  }
}

int sg_jump_chain(const sg_model *m, sg_workspace *ws,
                  double (*log_f)(void *ctx, const double *theta, double *grad), void *ctx,
                  sg_constraint *con, const double *aux, double n, int rungs,
                  const sg_gaussian *pop, double *theta, int jumps, double *prop, sg_rng *rng,
                  double *made) {
  const int dim = m->dim;
  /* log f and log q where the chain is, kept as it moves */
  double lf = log_f(ctx, theta, NULL);
  double lq = m->jump_log_q(m, ws, theta, aux, n, rungs, pop);
  int accepted = 0;
  for (int t = 0; t < jumps && !sg_interrupt_poll(); t++) {
    m->jump_propose(m, prop, aux, n, rungs, pop, rng);
    const double log_u = log(sg_rng_unif(rng));
    const double lf_prop = log_f(ctx, prop, NULL);
    const double lq_prop = m->jump_log_q(m, ws, prop, aux, n, rungs, pop);
    if (made) (*made)++;
    /* a NaN (a proposal the model cannot evaluate) is rejected; the constraint, the costly part
     * in nested sampling (a pass over the chunk), only for proposals that pass the test */
    if (!(log_u < lf_prop - lf + (lq - lq_prop))) continue;
    double ll = 0.0;
    if (con) {
      ll = con->log_lik(con->ctx, prop, NULL);
      if (!(ll > con->threshold)) continue;
    }
    memcpy(theta, prop, (size_t) dim * sizeof(double));
    lf = lf_prop;
    lq = lq_prop;
    if (con) con->value = ll;
    accepted++;
  }
  return accepted;
}

/* The jump proposals after a run of moves on a tempered target (sg_jump_chain on log_target).
 * q's defensive part is the Gaussian of the particles' weighted mean and covariance without
 * this particle (the preconditioner's, sg_precond_leave_out: the proposal must not depend on the
 * particle it moves). grad is left at theta's gradient. */
static void jump_run(const sg_potential *pot, const sg_model *m, double *theta, double *grad,
                     sg_kernel *k) {
  sg_gaussian pop;
  const int moved = sg_jump_chain(m, pot->data.ws, pot->log_target, pot->ctx, NULL, pot->jump.aux,
                                  pot->jump.n, 1, sg_precond_gaussian(sg_kernel_metric(k), &pop),
                                  theta, k->jumps, k->work, k->rng, &k->jumps_made);
  k->jumps_accepted += moved;
  /* q is summed over the relabellings (model.h, jump_log_q), so the point proposed in any
   * labelling stands for its orbit; in C it is the point the target restricted to C has */
  if (moved) {
    sg_left_region(pot, theta);
    pot->log_target(pot->ctx, theta, grad);
  }
}

/* Data-augmentation moves (model.h, gibbs_propose) on a target
 *   log f = log prior + sum_pop log p(y | theta) + lambda sum_t log p(y | theta) + R(theta)
 * holding the potential's population at full weight (factor 1: SGAIS's exact phase) and its
 * tempered observations t at lambda, R the rest (with a reference, (1 - lambda) (log q0 -
 * log prior)). The target is augmented with every observation's allocation a, distributed as
 * its responsibilities p(a | y, theta), so drawing them is an exact Gibbs step; a proposal from
 * q(theta' | a) (the conjugate posterior, the tempered observations at weight lambda) then has
 * the Metropolis-Hastings ratio exp(G(theta') - G(theta) + F(theta') - F(theta)), G = log_rest -
 * log prior and F as gibbs_propose returns it. For separated clusters the responsibilities are
 * about 0 or 1 and the ratio about 1 at every lambda (Tanner & Wong 1987; Robert & Casella
 * 2004, Section 10.3). A spare component, allocated nothing, is drawn from its prior: a move
 * that a metric fitted to the whole population cannot make (inst/design.md). */
static double gibbs_rest(const sg_potential *pot, const sg_model *m, const double *theta) {
  sg_workspace *ws = pot->data.ws;
  return pot->log_rest(pot->ctx, theta) - m->log_prior(m, ws, theta, NULL);
}

static void gibbs_run(const sg_potential *pot, const sg_model *m, double *theta, double *grad,
                      sg_kernel *k) {
  sg_workspace *ws = pot->data.ws;
  double *prop = k->work;
  double rest = gibbs_rest(pot, m, theta);
  int moved = 0;
  for (int t = 0; t < k->gibbs && !sg_interrupt_poll(); t++) {
    const double f = m->gibbs_propose(m, ws, theta, pot->data.slot, pot->data.start, pot->data.n,
                                      pot->tempered.start, pot->tempered.n, pot->tempered.lambda,
                                      prop, k->rng);
    ws->count.likelihood += pot->data.n + 3.0 * pot->tempered.n;
    const double log_u = log(sg_rng_unif(k->rng));
    const double rest_prop = gibbs_rest(pot, m, prop);
    k->jumps_made++;
    if (!(log_u < rest_prop - rest + f)) continue;
    memcpy(theta, prop, (size_t) m->dim * sizeof(double));
    rest = rest_prop;
    moved = 1;
    k->jumps_accepted++;
  }
  /* the proposal is equivariant under relabelling, so the accepted point stands for its orbit:
   * in C it is the point the target restricted to C has (as jump_run) */
  if (moved) {
    sg_left_region(pot, theta);
    pot->log_target(pot->ctx, theta, grad);
  }
}

void sg_kernel_run(const sg_potential *pot, int dim, double *theta, double *v, double *grad,
                   int steps, sg_kernel *k) {
  switch (k->kind) {
  case SG_KERNEL_SGLD:
    sg_sgld_run(pot, dim, theta, v, grad, steps, k);
    break;
  case SG_KERNEL_AUSTERITY:
  case SG_KERNEL_CONFIDENCE:
    sg_subsample_mh_run(pot, dim, theta, steps, k);
    break;
  case SG_KERNEL_FLYMC:
    sg_flymc_run(pot, dim, theta, steps, k);
    break;
  default:
    sg_sghmc_run(pot, NULL, dim, theta, v, grad, steps, k);
  }
  /* The moves left the model's free directions alone (the metric spans only the identified
   * part); their exact conditional is the prior: draw it (model.h, free_project). */
  if (steps > 0 && k->pc) sg_precond_redraw_free(k->pc, theta, k->rng);
  const sg_model *m = pot->data.m;
  if (steps > 0 && k->jumps > 0 && pot->log_target && pot->jump.aux)
    jump_run(pot, m, theta, grad, k);
  if (steps > 0 && k->gibbs > 0 && pot->log_target && pot->log_rest && m && m->gibbs_propose &&
      (pot->data.n == 0 || pot->data.factor == 1.0))
    gibbs_run(pot, m, theta, grad, k);
}

const double *sg_jump_set(const sg_model *m, int n, const int *slot, int start, int n_first,
                          int start2, int *pts, double *aux) {
  if (n <= 0) return NULL;
  const int n_pts = n < SG_JUMP_POINTS ? n : SG_JUMP_POINTS;
  for (int j = 0; j < n_pts; j++) {
    /* the middle of the j-th of n_pts equal parts of the list */
    const int e = (int) (((double) j + 0.5) * n / n_pts);
    pts[j] = e < n_first ? (slot ? slot[e] : start + e) : start2 + (e - n_first);
  }
  m->jump_prepare(m, pts, n_pts, (double) n, aux);
  return aux;
}

const char *sg_kernel_name(int kind) {
  switch (kind) {
  case SG_KERNEL_SGLD: return "SGLD";
  case SG_KERNEL_AUSTERITY: return "Austerity MH";
  case SG_KERNEL_CONFIDENCE: return "Confidence-sampler MH";
  case SG_KERNEL_FLYMC: return "FlyMC";
  default: return "SGHMC";
  }
}

double sg_kernel_target_acceptance(const sg_kernel *k, const sg_potential *pot) {
  if (sg_kernel_random_walk(k->kind)) return 0.234; /* random walk (Roberts, Gelman & Gilks 1997) */
  if (k->integrator == SG_INTEGRATOR_BAOAB && pot->log_target) {
    if (k->kind == SG_KERNEL_SGHMC) return 0.8;   /* generalised HMC (sghmc.c) */
    if (k->kind == SG_KERNEL_SGLD) return 0.574;  /* MALA (Roberts & Rosenthal 1998; sgld.c) */
  }
  return 0.0;
}
