/* The estimators' layer: SGAIS, AIS and nested sampling, each a core function over plain C
 * types that runs a slice of a run and records it in a trace; their glue files (*_r.c) unpack the
 * R objects, call them and build the results. */
#ifndef SG_ESTIMATORS_H
#define SG_ESTIMATORS_H
#include "restart.h"

/* ---------------------------------------------------------------- SGAIS (paper Algorithm 1): sgais.c */

/* How a chunk enters the particles' weights (the estimators sharing this sampler):
 *   ANNEALED    SGAIS: adaptive annealing from lambda = 0 to 1 (paper Algorithm 1);
 *   IMPORTANCE  SIR with data tempering (thesis Alg. 7, eq. 3.51-3.53): the whole chunk in one
 *               importance step, w_i <- w_i p(C | theta_i), resampling by the ESS criterion;
 *   AVERAGED    the sequential SG-MCMC estimator (thesis Section 4.1, eq. 4.3-4.5; Cameron et
 *               al. 2019a): p-hat(C | earlier) = mean_i p(C | theta_i) (eq. 4.4), the weights
 *               then set to their mean without resampling, so the particles carry no weights
 *               (biased for finite M: the predictive estimates are correlated, Section 4.1). */
enum { SGAIS_UPDATE_ANNEALED = 0, SGAIS_UPDATE_IMPORTANCE = 1, SGAIS_UPDATE_AVERAGED = 2 };

typedef struct {
  sg_anneal_settings a;
  int batch_size, chunk_size, control_variates, exact_until, early_particles;
  int reservoir_size; /* 0: every earlier observation is kept (the setting Inf) */
  double reservoir;   /* the setting as given */
  int update, first_chunk_size;
  /* IMPORTANCE, AVERAGED: a chunk whose one step would leave an ESS below split_ess * particles
   * is taken in steps of as many of its observations as keep it above (0: never; sgais.c) */
  double split_ess;
  sg_restart_triggers trigger;
} sgais_settings;

/* The earlier observations the mini-batches are drawn from (paper Section 5). Unbounded (cap 0):
 * all of them, at buffer positions 0, ..., n_prev - 1. Bounded: a uniform sample of at most cap
 * of them kept by Vitter's Algorithm R, slot[0..size) their buffer positions; while n_prev <=
 * cap it holds every earlier observation, in order. */
typedef struct {
  int *slot;
  int size, cap;
} sgais_reservoir;

/* The control-variate anchor: a, the gradient sum G over the n_grad earlier observations at a,
 * and n_anchor, the n_prev at which a was chosen (0: no anchor yet). */
typedef struct {
  double *theta, *grad;
  double n_anchor, n_grad;
} sgais_anchor;

/* One entry per processed chunk. */
typedef struct {
  int *annealing_steps, *resamples, *sghmc_steps, *divergent, *reanchors, *step_halvings,
      *exact_fallback;
  double *n, *log_evidence, *min_ess, *ess, *predicted_var, *acceptance, *step_size, *seconds,
      *gradient_evaluations, *likelihood_evaluations, *data_fraction, *jump_acceptance;
  /* the genealogy's estimate of Var log Z-hat at the chunk's end (anneal.h), NA without one */
  double *genealogy_var;
  sg_restart_stop stop; /* restart.h */
} sgais_trace;

/* A fixed annealing schedule (a pilot run's, R/sgais.R): for the chunk ending at n[j], steps[j]
 * lambdas, stored one chunk after another in `lambda`. Chunks not in it, and those with the
 * score control variate, anneal adaptively (sgais_process). An adaptive step is chosen from the
 * particles it then reweights, which biases Z-hat by O(1/M) (see ais.c); steps fixed in advance
 * keep it unbiased. */
typedef struct {
  const double *n, *lambda;
  const int *steps;
  int chunks;
} sgais_schedule;

/* The lambdas a call took, one chunk after another (grown by doubling in R_alloc'ed memory). */
typedef struct {
  double *x;
  int n, cap;
} sgais_lambdas;

/* Marks every particle's score as to be computed (particle_scores). */
void sgais_scores_unknown(double *score, int M, int dim);

/* Where the chunk after n_done observations ends. Chunk boundaries are fixed from the first
 * observation (so a run continued in pieces is the run of all the data at once): chunks of
 * first, 2 first, 3 first, ... observations while those are below chunk_size (the thesis's
 * schedule for the sequential estimator, Section 4.1: 20 at a time, growing by 20 up to 500),
 * then of chunk_size. R's chunk_floor() (R/sgais.R) is the same rule. */
double sgais_chunk_end(const sgais_settings *s, double n_done);

/* A run's state as the core reads and updates it (the R side is the run-state record,
 * R/sgais_state.R). theta holds the M particles (rows of dim, particle-major; room for
 * max(early_particles, particles)) and logw their log-weights; M becomes `particles` when the
 * mini-batch phase begins. n: the observations absorbed. The (k + 1)-th observation of the
 * stream is at buffer position k - buffer_start of the model's data; res holds the earlier ones
 * that the mini-batches are drawn from. score: each particle's score for the score control
 * variate (NULL: none); pcp: the preconditioner (NULL: none); genealogy (anneal.h; NULL: none)
 * follows the particles for the run's standard error; taken: the lambdas the call took. */
typedef struct {
  double *theta, *logw, *score;
  int M;
  double n, buffer_start, step_size;
  uint64_t key;
  sgais_anchor anchor;
  sg_precond *pcp;
  sgais_reservoir res;
  sg_genealogy *genealogy;
  sgais_lambdas taken;
} sgais_state;

/* The most particles a run of settings s holds, starting from M: early_particles, particles, or
 * M if more (resampled down to the phase's count at the next chunk). */
int sgais_particle_cap(const sgais_settings *s, int M);
int sgais_probe_batch_grads(const sg_model *m, sg_workspace *ws, const double *theta,
                            const double *a, int batch_size, int stratified, int draws,
                            uint64_t key, double *out);

/* Processes chunks from state->n until n_end observations or until time_budget seconds have
 * passed, with the chunks in `schedule` on its steps; returns their number, or -1 after a
 * failure described in st. */
int sgais_process(const sg_model *m, const sgais_settings *s, sgais_state *state, double n_end,
                  double time_budget, const sgais_schedule *schedule, sgais_trace *tr,
                  sg_status *st);

/* ---------------------------------------------------------------- Annealed importance sampling: ais.c */

typedef sg_anneal_settings ais_settings;

/* Annealing steps allowed in all before we give up rather than appear to hang, and per call. */
#define AIS_MAX_STEPS 100000
#define AIS_SLICE_STEPS 10000

typedef struct {
  double *lambda, *ess, *log_evidence, *seconds, *gradient_evaluations, *likelihood_evaluations,
      *acceptance, *step_size, *data_fraction, *jump_acceptance;
  int *resampled, *sghmc_steps, *divergent, *step_halvings;
} ais_trace;

/* Runs annealing steps from *lambda; returns their number, or -1 after a failure described in st
 * (its workspace reports to st). theta holds the particles (M rows of
 * dim), logw their log-weights and loglik their full-data log-likelihoods; genealogy (anneal.h;
 * NULL: none) follows them for the run's standard error. */
int ais_process(const sg_model *m, const ais_settings *s, double *theta, double *logw,
                       double *loglik, double *lambda_io, double *step_size, int steps_done,
                       const double *schedule, int n_schedule, double time_budget, uint64_t key,
                       ais_trace *tr, sg_workspace *ws, sg_genealogy *genealogy);

/* A model failure recorded already is the cause and is what st reports (sg_fail keeps it). After
 * SGHMC moves (moved), zero likelihood everywhere means the particles ran off: a divergence. */
int ais_check_loglik(const double *loglik, int M, double lambda, int moved, sg_status *st);

/* A run's log-likelihoods when the state has none: loglik[i] = particle i's full-data
 * log-likelihood as the annealing weights it (anneal.h, sg_path_log_lik). At the start (lambda
 * = 0) with a reference (setting `reference`, a model that has one) the particles theta (M rows
 * of dim; prior draws) are first drawn again from it (anneal.h, sg_reference_start_draw).
 * Returns the workspace status's code. */
int ais_start(const sg_model *m, const ais_settings *s, double *theta, int M, double lambda,
              uint64_t key, double *loglik, sg_workspace *ws);

/* ---------------------------------------------------------------- Nested sampling: nested_sampling.c */

/* Iterations per call (a slice of a run), a run's status, and its move. */
#define NS_SLICE_ITERATIONS 10000
enum { NS_RUNNING = 0, NS_CONVERGED = 1, NS_MAX_ITERATIONS = 2 };
enum { NS_MOVE_SGHMC = 0, NS_MOVE_WALK = 1 };

typedef struct {
  int live_points, move_kind;
  int reference; /* repartition the prior of plain nested sampling (nested_sampling.c, ns_ctx) */
  double tolerance, max_iterations;
  sg_move_settings move;
} ns_settings;

/* The chunk a run works on: its prior holds observations [0, prior_n), its likelihood
 * [prior_n, n_end); batch_size: the SGHMC move's mini-batch of the earlier observations. */
typedef struct {
  int prior_n, n_end, batch_size;
} ns_chunk;

/* Weighted reservoir sampling (Chao 1982) of the points offered with log-weights lw: the M
 * points kept are a sample without replacement whose inclusion probabilities are
 * pi_i = min(1, w_i / tau), tau the threshold at which they sum to M. Items at or above tau are
 * `certain` (kept with probability 1, set aside with their own weights); log_ordinary is the log
 * of the summed weight of every other item offered so far (kept, evicted or refused), so that
 * tau = (ordinary weight + the other kept items' weights) / (M - certain). filled: slots in use
 * (the first M items fill them). theta: M rows of dim. NULL theta: no reservoir. */
typedef struct {
  int size, filled;
  double *theta, *log_weight, log_ordinary;
  int *certain;
  double *work; /* 2 (size + 1) */
  int *order;   /* size + 1 */
} ns_reservoir;

/* walk_scale: the random walk's proposal scale in live-point widths; walk_jump: the mean squared
 * distance (in live-point widths, summed over coordinates) moved per proposal. Both are adapted
 * between iterations and part of the state, so slicing a run does not change them. */
typedef struct {
  double iteration, log_z, information, walk_scale, walk_jump;
  int status;
} ns_state;

/* Per removed point: iteration, its log-likelihood, log volume, log weight (log w_i + log L),
 * log Z after it, cost, reflections, the moves (steps or proposals) made for its replacement
 * and the jump proposals accepted after them,
 * the seconds the iteration took; and its parameters (dim per point). */
typedef struct {
  double *iteration, *log_likelihood, *log_volume, *log_weight, *log_evidence;
  double *gradient_evaluations, *likelihood_evaluations, *reflections, *moves, *seconds, *theta;
  double *jumps_accepted;
} ns_dead;

/* Runs iterations; returns the number of points recorded in d (removed points, then the final
 * live points once the run stops), or -1 after a failure described in ws_own->status. theta
 * holds the live points (M rows of dim). */
int nested_process(const sg_model *m, const ns_settings *s, const ns_chunk *chunk,
                          double *theta, double *loglik, ns_state *st, double time_budget,
                          uint64_t key, ns_dead *d, ns_reservoir *res, sg_workspace *ws_own);

/* The key of chunk `chunk`'s streams: the run's for the first chunk (plain nested sampling),
 * else a draw from the stream (key, chunk, SG_RNG_SHARED - 1), which no iteration uses. */
uint64_t ns_chunk_key(uint64_t key, int chunk);

/* The live points' log-likelihoods when the state has none: loglik[i] = that of point i (with a
 * repartitioned prior, L prior / q0: nested_sampling.c, ns_ctx). At the start (at_start: no
 * iteration yet) of plain nested sampling with a reference the points theta (prior draws) are
 * first drawn again from it (anneal.h, sg_reference_start_draw). Returns the status code. */
int ns_start(const sg_model *m, const ns_settings *s, const ns_chunk *chunk, double *theta,
             int at_start, uint64_t key, double *loglik, sg_workspace *ws);

#endif
