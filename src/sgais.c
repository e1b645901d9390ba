/* Stochastic gradient annealed importance sampling (paper Algorithm 1, eq. 2-4).
 *
 * Bayesian updating chunk by chunk: for each chunk C of new observations, anneal lambda from 0 to
 * 1 on f(theta) = p(C | theta)^lambda p(previous data | theta) p(theta) (eq. 2), choosing each
 * step by the ESS of the incremental weights, updating the log-weights by Delta log p(C | theta)
 * and moving the particles by SGHMC on the mini-batch potential of eq. 4. After each chunk,
 * log Z(y_1..n) = logsumexp(log w) - log M is the evidence of the data seen so far.
 *
 * The work is done by sgais_process(), which runs whole chunks from n_done until n_end or until
 * a time budget is spent, so R can show progress between calls and continue a run later; the
 * particles, log-weights and R's RNG stream carry the whole state, so the result does not
 * depend on how the run is split into calls. */
#include "sgais.h"
#include <math.h>
#include <string.h>

/* Annealing steps allowed for one chunk before we give up rather than appear to hang. */
#define SGAIS_MAX_ANNEALING_STEPS 100000

typedef struct {
  int particles, batch_size, chunk_size, sghmc_steps, resample;
  double target_ess, learning_rate, momentum_decay;
} sgais_settings;

/* One entry per processed chunk. */
typedef struct {
  int *n, *annealing_steps;
  double *log_evidence, *min_ess, *ess, *seconds, *gradient_evaluations, *likelihood_evaluations;
} sgais_trace;

/* The stochastic potential of eq. 4 at temperature lambda for the chunk [chunk_start,
 * chunk_start + chunk_n): the chunk exactly, the n_prev earlier observations through a mini-batch
 * drawn with replacement and scaled by n_prev / |B|. While n_prev <= |B| the earlier data are
 * used exactly, which costs no more than a mini-batch and has no gradient noise. */
typedef struct {
  const sg_model *m;
  int chunk_start, chunk_n, n_prev, batch_size;
  double lambda;
  int *idx;
  sg_counter *count;
} sgais_target;

static void sgais_grad_log_target(void *ctx, const double *theta, double *grad) {
  sgais_target *t = ctx;
  const sg_model *m = t->m;
  memset(grad, 0, m->dim * sizeof(double));
  m->log_prior(m, theta, grad);
  sg_model_log_lik(m, theta, NULL, t->chunk_start, t->chunk_n, t->lambda, grad, t->count);
  if (t->n_prev == 0) return;
  if (t->n_prev <= t->batch_size) {
    sg_model_log_lik(m, theta, NULL, 0, t->n_prev, 1.0, grad, t->count);
    return;
  }
  /* One uniform per index: R_unif_index() spends two or more and a log2() on each, a third of
   * the run time here. The non-uniformity of floor(u n) is below n / 2^32 per index. */
  for (int k = 0; k < t->batch_size; k++) {
    int i = (int) (unif_rand() * t->n_prev);
    t->idx[k] = (i < t->n_prev) ? i : t->n_prev - 1;
  }
  sg_model_log_lik(m, theta, t->idx, 0, t->batch_size, (double) t->n_prev / t->batch_size, grad,
                   t->count);
}

static void check_finite_particle(const double *theta, int dim, int n_obs) {
  if (!sg_all_finite(theta, dim))
    Rf_errorcall(R_NilValue,
                 "SGHMC diverged (non-finite parameters) while adding observations up to %d; "
                 "try a smaller `learning_rate`.", n_obs);
}

/* After SGHMC moves, zero likelihood everywhere means the particles ran off: say so. */
static void check_chunk_loglik(const double *loglik, int M, int from, int to, int moved) {
  switch (sg_check_loglik(loglik, M)) {
  case SG_LOGLIK_NOT_FINITE:
    Rf_errorcall(R_NilValue, "the log-likelihood of observations %d to %d is NaN or +Inf for a particle%s.",
                 from, to, moved ? "; try a smaller `learning_rate`" : "");
  case SG_LOGLIK_ALL_ZERO:
    if (moved)
      Rf_errorcall(R_NilValue, "SGHMC diverged (every particle has zero likelihood on observations %d to %d); "
                   "try a smaller `learning_rate`.", from, to);
    Rf_errorcall(R_NilValue, "every particle has zero likelihood on observations %d to %d.", from, to);
  }
}

/* Processes chunks until n_end or until time_budget seconds have passed; returns their number.
 * theta holds the particles (M rows of dim, particle-major) and logw their log-weights. */
static int sgais_process(const sg_model *m, const sgais_settings *s, double *theta, double *logw,
                         int n_done, int n_end, double time_budget, sgais_trace *tr) {
  const int M = s->particles, dim = m->dim;
  double *loglik = (double *) R_alloc(M, sizeof(double));
  double *v = (double *) R_alloc(dim, sizeof(double));
  double *grad = (double *) R_alloc(dim, sizeof(double));
  sg_anneal_scratch scratch;
  sg_anneal_scratch_alloc(&scratch, M, dim, s->resample);
  double *work = scratch.work;
  int *idx = (int *) R_alloc(s->batch_size, sizeof(int));

  sg_counter count;
  sgais_target target = {m, 0, 0, 0, s->batch_size, 0.0, idx, &count};
  sg_potential pot = {sgais_grad_log_target, &target};
  const double start_time = sg_now();
  int chunks = 0;

  while (n_done < n_end) {
    const double chunk_time = sg_now();
    const int cn = (n_end - n_done < s->chunk_size) ? n_end - n_done : s->chunk_size;
    const int n_now = n_done + cn;
    /* eta = lr / n with n the observations in the current target (ALGORITHM-NOTES, SGHMC). */
    const double eta = s->learning_rate / n_now;
    count.likelihood = count.gradient = 0.0;
    target.chunk_start = n_done;
    target.chunk_n = cn;
    target.n_prev = n_done;

    for (int i = 0; i < M; i++)
      loglik[i] = sg_model_log_lik(m, theta + (size_t) i * dim, NULL, n_done, cn, 1.0, NULL, &count);
    check_chunk_loglik(loglik, M, n_done + 1, n_now, n_done > 0);

    double lambda = 0.0, min_ess = M;
    int steps = 0;
    while (lambda < 1.0) {
      if (steps == SGAIS_MAX_ANNEALING_STEPS)
        Rf_errorcall(R_NilValue, "annealing over observations %d to %d did not finish in %d steps; "
                     "try a smaller `target_ess` or `batch_size`.", n_done + 1, n_now, steps);
      /* Algorithm 1 lines 6-8: Delta by the ESS of the incremental weights, then the weights,
       * then optional resampling before the moves (paper Section 3). */
      double ess, max_delta = 1.0 - lambda;
      double delta = sg_anneal_reweight(theta, logw, loglik, M, dim, max_delta, s->target_ess,
                                        s->resample, &ess, &scratch);
      if (ess < min_ess) min_ess = ess;
      lambda = (delta >= max_delta) ? 1.0 : lambda + delta;
      steps++;

      /* Line 9: SGHMC moves leaving f at the new lambda invariant. */
      target.lambda = lambda;
      for (int i = 0; i < M; i++) {
        double *th = theta + (size_t) i * dim;
        sg_sghmc_run(&pot, NULL, dim, th, v, grad, s->sghmc_steps, eta, s->momentum_decay);
        check_finite_particle(th, dim, n_now);
        if (lambda < 1.0) loglik[i] = sg_model_log_lik(m, th, NULL, n_done, cn, 1.0, NULL, &count);
      }
      if (lambda < 1.0) check_chunk_loglik(loglik, M, n_done + 1, n_now, 1);
      R_CheckUserInterrupt();
    }

    tr->n[chunks] = n_now;
    tr->log_evidence[chunks] = sg_log_sum_exp(logw, M) - log((double) M);
    tr->annealing_steps[chunks] = steps;
    tr->min_ess[chunks] = min_ess;
    tr->ess[chunks] = sg_ess(logw, M, 1.0, work);
    tr->gradient_evaluations[chunks] = count.gradient;
    tr->likelihood_evaluations[chunks] = count.likelihood;
    tr->seconds[chunks] = sg_now() - chunk_time;
    chunks++;
    n_done = n_now;
    if (sg_now() - start_time > time_budget) break;
  }
  return chunks;
}

static sgais_settings settings_from_r(SEXP x) {
  sg_anneal_settings a = sg_anneal_settings_from_r(x);
  sgais_settings s;
  s.particles = a.particles;
  s.sghmc_steps = a.sghmc_steps;
  s.resample = a.resample;
  s.target_ess = a.target_ess;
  s.learning_rate = a.learning_rate;
  s.momentum_decay = a.momentum_decay;
  s.batch_size = sg_scalar_int(sg_list_get(x, "batch_size"), "batch_size", 1);
  s.chunk_size = sg_scalar_int(sg_list_get(x, "chunk_size"), "chunk_size", 1);
  return s;
}

/* .Call entry: continue a run from particles theta (dim x M) and log-weights logw, which have
 * absorbed observations 1..n_done, adding observations up to n_end. Returns the new state and
 * one trace entry per chunk processed. */
SEXP ffi_sgais_run(SEXP model, SEXP theta, SEXP logw, SEXP n_done, SEXP n_end, SEXP settings,
                   SEXP time_budget) {
  sg_model m;
  sg_model_from_r(model, &m);
  sgais_settings s = settings_from_r(settings);
  int from = sg_scalar_int(n_done, "n_done", 0), to = sg_scalar_int(n_end, "n_end", 0);
  double budget = sg_scalar_double(time_budget, "time_budget");
  if (to > m.n_obs || from > to) Rf_errorcall(R_NilValue, "`n_end` must lie between `n_done` and the number of observations.");
  if (TYPEOF(theta) != REALSXP || !Rf_isMatrix(theta) || Rf_nrows(theta) != m.dim || Rf_ncols(theta) != s.particles)
    Rf_errorcall(R_NilValue, "`theta` must be a %d x %d numeric matrix.", m.dim, s.particles);
  if (TYPEOF(logw) != REALSXP || Rf_length(logw) != s.particles)
    Rf_errorcall(R_NilValue, "`logw` must be a numeric vector of length %d.", s.particles);

  int nprot = 0, max_chunks = (int) ((to - from + (double) s.chunk_size - 1) / s.chunk_size);
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 10)); nprot++;
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 10)); nprot++;
  SEXP theta_out = sg_new_column(out, names, 0, "theta", REALSXP, Rf_length(theta));
  SEXP logw_out = sg_new_column(out, names, 1, "logw", REALSXP, s.particles);
  memcpy(REAL(theta_out), REAL(theta), Rf_length(theta) * sizeof(double));
  memcpy(REAL(logw_out), REAL(logw), s.particles * sizeof(double));
  Rf_setAttrib(theta_out, R_DimSymbol, Rf_getAttrib(theta, R_DimSymbol));
  sgais_trace tr;
  tr.n = INTEGER(sg_new_column(out, names, 2, "n", INTSXP, max_chunks));
  tr.log_evidence = REAL(sg_new_column(out, names, 3, "log_evidence", REALSXP, max_chunks));
  tr.annealing_steps = INTEGER(sg_new_column(out, names, 4, "annealing_steps", INTSXP, max_chunks));
  tr.min_ess = REAL(sg_new_column(out, names, 5, "min_ess", REALSXP, max_chunks));
  tr.ess = REAL(sg_new_column(out, names, 6, "ess", REALSXP, max_chunks));
  tr.seconds = REAL(sg_new_column(out, names, 7, "seconds", REALSXP, max_chunks));
  tr.gradient_evaluations = REAL(sg_new_column(out, names, 8, "gradient_evaluations", REALSXP, max_chunks));
  tr.likelihood_evaluations = REAL(sg_new_column(out, names, 9, "likelihood_evaluations", REALSXP, max_chunks));
  Rf_setAttrib(out, R_NamesSymbol, names);

  GetRNGstate();
  int chunks = sgais_process(&m, &s, REAL(theta_out), REAL(logw_out), from, to, budget, &tr);
  PutRNGstate();

  for (int i = 2; i < 10; i++) SET_VECTOR_ELT(out, i, Rf_lengthgets(VECTOR_ELT(out, i), chunks));
  UNPROTECT(nprot);
  return out;
}
