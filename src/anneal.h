/* The annealing layer shared by SGAIS and AIS: settings, one adaptive reweighting step with
 * resampling, and the particles' sanity checks. */
#ifndef SG_ANNEAL_H
#define SG_ANNEAL_H

#include "kernel.h"

/* The tuning values of the annealing samplers (SGAIS, AIS), read from the R settings list by
 * name and re-checked by sg_anneal_settings_from_r() (ffi.h); the messages name the argument. resample_ess: resample before the moves
 * when the weight ESS falls below resample_ess * particles (0 never, 1 at every step). */
typedef struct {
  int particles;
  double target_ess, resample_ess;
  int conditional_ess; /* the step's criterion: conditional ESS (1) or incremental ESS (0) */
  int score_cv;        /* the score control variate of each evidence increment (see below) */
  int reference;       /* start the path at the model's reference distribution (see below) */
  sg_move_settings move;
} sg_anneal_settings;

/* The reference path (generalized stepping-stone sampling: Fan, Wu, Chen, Kuo and Lewis 2011,
 * Syst. Biol. 60(2), in AIS form). With a reference distribution q0 (the model's, model.h:
 * ref_log_density, built from aux for a target of n observations) the annealing path is
 *   f_lambda = q0^(1 - lambda) (prior x likelihood)^lambda
 * instead of prior x likelihood^lambda; each step's incremental weight is then the likelihood
 * times prior / q0 to the step (sg_path_log_lik), and log Z is unchanged since q0 is normalised.
 * A q0 near the posterior spares the particles the path from the prior (for a mixture, a
 * first-order transition: inst/design.md, Mixtures). aux NULL: the path from the prior. */
typedef struct {
  const double *aux;
  double n;
} sg_reference;
/* The part of log f_lambda that is not the likelihood: the log prior, or with a reference
 * (1 - lambda) log q0 + lambda log prior; its gradient is added to grad (NULL: none), which must
 * be zero on entry when there is a reference. */
double sg_path_log_base(const sg_model *m, sg_workspace *ws, const sg_reference *ref,
                        double lambda, const double *theta, double *grad);
/* The log-likelihood of observations start..start+n-1 at theta as the annealing weights it:
 * plus log prior - log q0 with a reference; its gradient is added to grad (NULL: none; work:
 * dim of scratch then). */
double sg_path_log_lik(const sg_model *m, sg_workspace *ws, const sg_reference *ref,
                       const double *theta, int start, int n, double *grad, double *work);
/* The reference for a run whose setting `reference` is on, if the model has one and aux (its
 * jump summary) is set; else none. Its target: the n observations at buffer positions
 * start..start+n-1, from which aux may be refitted in place (model.h, ref_refit). */
sg_reference sg_reference_for(const sg_model *m, int reference, double *aux, int start, double n);
/* What the model's reference is worth with aux (its jump summary): 0 none (no reference, or
 * ref_ok refuses it), SG_REF_USABLE or SG_REF_COMPLETE (model.h, ref_ok). */
int sg_reference_level(const sg_model *m, const double *aux);
/* Whether an annealing step's Metropolis-adjusted moves (gradient kernels, preconditioned) are
 * repeated while the particles still correlate with where they began (sg_move_again). Not while
 * a mixture's data show fewer clusters than it has components (its reference on jump_aux usable,
 * not complete): the spare components keep the correlation high along directions between modes,
 * which more local rounds do not decorrelate (the jumps cross them), at up to max_rounds times
 * the cost. */
int sg_moves_decorrelate(const sg_move_settings *mv, int metropolis, int preconditioned,
                         const sg_model *m, const double *jump_aux);
/* The jump proposals after each move (model.h, jump_propose): the setting `jumps`, and
 * max_rounds times as many where the moves are not repeated because a mixture's data show
 * fewer clusters than it has components (above): there the jumps, not the local moves, carry
 * the spare components between the places they may be, and they get the rounds' budget (AIS,
 * and SGAIS where sg_move_augment() makes no data-augmentation moves instead). */
int sg_move_jumps(const sg_move_settings *mv, const sg_model *m, const double *jump_aux);
/* The data-augmentation moves after each move (model.h, gibbs_propose; kernel.c, gibbs_run):
 * SG_AUGMENT_MOVES where the jumps are on (the robust presets), a mixture's data show fewer
 * clusters than it has components and the target holds `held` > 0 observations at full weight
 * (every earlier one, in the exact phase: not a restart's anneal of all the data at once), else
 * 0. Where they are made they replace the jumps and all but one of the Metropolis-adjusted
 * steps: each draws the spare components from their prior and the rest from their conjugate
 * posterior given the allocations, where the local moves, in a metric fitted to particles that
 * disagree on what the spare components do, take many small steps (inst/design.md). */
#define SG_AUGMENT_MOVES 3
int sg_move_augment(const sg_move_settings *mv, const sg_model *m, const double *jump_aux,
                    int held);
/* Point i of a run's start drawn from q0 into theta, from the stream (key, SG_REF_START_STREAM,
 * i), which no iteration of any method uses (AIS and nested sampling: ais_start, ns_start). */
#define SG_REF_START_STREAM UINT64_C(0xffffffff00000000)
void sg_reference_start_draw(const sg_model *m, const sg_reference *ref, uint64_t key, int i,
                             double *theta);

/* The genealogy of a run's particles, for the standard error of log Z-hat that one run reports
 * (the estimator of Chan and Lai 2013 and Lee and Whiteley 2018, in its first-order form).
 * Each particle has an Eve, its ancestor at the start of the current segment (`eve`, numbers
 * below `cap`), inherited by its copies at every resampling. An annealing step changes log
 * Z-hat by about sum_i W_i (g_i / g - 1), W the normalised weights before the step, g_i the
 * incremental weights and g their W-mean (with the score control variate, g_i - beta h_i and its
 * mean); each term is added to the `influence` of particle i's Eve. Particles of different Eves
 * are nearly independent, so the sum of the squared influences estimates Var log Z-hat,
 * including what the sum of the steps' chi-square divergences over M (the `predicted_var` of a
 * step) leaves out: weights that accumulate over several steps between resamplings, and moves
 * that leave a particle's copies correlated with each other and with where they were in later
 * steps. Resampling moves no influence (it does not change Z-hat), so its own noise is not
 * counted. As the Eves of a long run coalesce, later steps' terms cancel within the few groups
 * left; so a segment is closed once fewer than SG_GENEALOGY_MIN_EVES Eves (or a fraction
 * SG_GENEALOGY_MIN_EVE_SHARE of the particles, whichever is larger) have descendants: its
 * estimate goes to `closed` and every particle is its own Eve again. */
#define SG_GENEALOGY_MIN_EVES 5
#define SG_GENEALOGY_MIN_EVE_SHARE 0.1
typedef struct {
  int *eve;          /* cap: each particle's Eve */
  double *influence; /* cap: each Eve's influence on log Z-hat */
  double closed;     /* the variance estimate of the closed segments */
  int *marks;        /* cap: scratch */
  int cap;
} sg_genealogy;
/* A new segment of M particles (M <= cap): particle i its own Eve, no influence. */
void sg_genealogy_reset(sg_genealogy *g, int M);
/* The estimate of Var log Z-hat so far: closed + the sum of the squared influences. */
double sg_genealogy_var(const sg_genealogy *g);
/* After particles were drawn again: particle i (of M) descends from ancestors[i]. */
void sg_genealogy_resampled(sg_genealogy *g, const int *ancestors, int M);
/* Closes the segment when the M particles descend from too few Eves (see above). */
void sg_genealogy_close_if_few(sg_genealogy *g, int M);

/* Scratch for sg_anneal_reweight (R_alloc'ed), and the stream its resampling draws from (set
 * by the caller), and the run's genealogy (NULL: none is kept). */
typedef struct {
  double *work, *copy;
  int *ancestors;
  sg_rng *rng;
  sg_genealogy *genealogy;
} sg_anneal_scratch;
void sg_anneal_scratch_alloc(sg_anneal_scratch *s, int M, int dim);
/* One adaptive annealing step shared by SGAIS and AIS: Delta in (0, max_delta] by the ESS of the
 * incremental weights, or with conditional_ess their conditional ESS given logw (weights.h;
 * reported in *ess), logw += Delta * loglik, and, when cv is not NULL, plus the log of the
 * score control variate's correction of the step's evidence ratio (sg_anneal_score_correction;
 * the fraction of its variance removed in *cv_r2 if not NULL, else 0); the step's terms added
 * to the genealogy's influences when s->genealogy is set; then, when pc is not NULL,
 * the preconditioner from the reweighted particles; then, if the weight ESS is below
 * resample_ess * M (or resample_ess >= 1), systematic resampling of the particles theta (M rows
 * of dim) and of loglik with the weights set to their mean (*resampled = 1). Returns Delta. */
double sg_anneal_reweight(double *theta, double *logw, double *loglik, int M, int dim,
                          double max_delta, double target_ess, double resample_ess,
                          int conditional_ess, double *ess, int *resampled, sg_precond *pc,
                          const double *cv, double *cv_r2, sg_anneal_scratch *s);
/* The score control variate of an annealing step's evidence ratio
 *   r = sum_i W_i exp(Delta loglik_i),   W_i the particles' normalised weights exp(logw_i).
 * The weighted particles stand for the current target f; its score has mean zero under f, so
 * any h(theta) = v' grad log f(theta) does too, and
 *   r_cv = r - beta sum_i W_i h_i,   beta the weighted regression slope of the incremental
 * weights on h_i (cv: M values), estimates the same ratio. With v = Sigma g, Sigma the
 * particles' covariance and g the gradient of the new data's log-likelihood at their mean, h is
 * (minus) the linear term of log p(new data | theta) when f is about Gaussian: the term whose
 * Monte Carlo error, a sampling error of the particles' mean in the direction of g, dominates
 * Var log Z-hat when data arrive in chunks (it adds up to about p log(N / n0) / M nats^2 over a
 * stream, and log Z-hat is low by half its variance). Zero-variance control variates: Mira,
 * Solgi & Imparato (2013); for SMC's evidence, South, Oates, Mira & Drovandi (2023, and their
 * R package ZVCV).
 * Returns log(r_cv / r), 0 (no correction) when h has no spread or r_cv is not positive;
 * *r2 the squared weighted correlation of the two and *beta the slope (0 without a correction).
 * work: M. */
double sg_anneal_score_correction(const double *logw, const double *loglik, double delta,
                                  const double *cv, int M, double *work, double *r2,
                                  double *beta);
/* The guard on moves without a Metropolis test (mini-batch moves; the paper's kernel; SGLD),
 * shared by SGAIS and AIS. In the preconditioner's metric the particles' spread after the moves
 * should be about what it was before (the moves leave the target nearly invariant); more than
 * SG_MAX_SPREAD_GROWTH times as much means the discretisation has broken down and the estimate
 * would be silently wrong. The moves are then undone (sg_spread_guard_check) and the caller
 * redoes them with half the step, which stays halved for the rest of the run (the heating by
 * gradient noise and the integrator's error both shrink with the step), up to
 * SG_MAX_STEP_HALVINGS times in one annealing step before giving up with an error; the fit
 * counts the halvings and warns (R/replicates.R): a run that goes on after halvings can be far
 * off (inst/design.md, "Measurements behind the defaults"). */
#define SG_MAX_SPREAD_GROWTH 4.0
#define SG_MAX_STEP_HALVINGS 4
typedef struct {
  const sg_precond *pc;
  int M, dim;
  double before; /* the spread before the moves, at least 1 */
  double *copy;  /* theta and loglik before the moves (M (dim + 1)) */
} sg_spread_guard;
/* Records the spread of the particles theta (log-weights logw) in pc's metric and copies theta
 * and loglik (M values) into copy (M (dim + 1), e.g. the anneal scratch's); work: 2 dim. */
void sg_spread_guard_begin(sg_spread_guard *g, const sg_precond *pc, const double *theta,
                           const double *logw, const double *loglik, int M, int dim,
                           double *copy, double *work);
/* The verdict on the moves since sg_spread_guard_begin: SG_GUARD_OK when the spread grew at
 * most SG_MAX_SPREAD_GROWTH times; else SG_GUARD_REDO when the step may be halved again
 * (can_halve, fewer than SG_MAX_STEP_HALVINGS halvings so far): the moves are undone and
 * *halvings counted, and the caller halves its step and redoes them; else SG_GUARD_FAIL, with
 * *growth and `smaller` (", even with steps 2^h times smaller" after h halvings, else "") for
 * the caller's error. work: 2 dim; smaller: at least 64 chars. */
enum { SG_GUARD_OK = 0, SG_GUARD_REDO = 1, SG_GUARD_FAIL = 2 };
int sg_spread_guard_check(const sg_spread_guard *g, double *theta, const double *logw,
                          double *loglik, double *work, int can_halve, int *halvings,
                          double *growth, char *smaller);

/* Particle sanity checks shared by the annealing samplers; callers word the error. */
enum { SG_LOGLIK_OK = 0, SG_LOGLIK_NOT_FINITE = 1, SG_LOGLIK_ALL_ZERO = 2 };
int sg_check_loglik(const double *loglik, int M); /* NaN or +Inf; or all -Inf */

#endif
