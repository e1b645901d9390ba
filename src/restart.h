/* Restarts of a streaming run (R/restart.R): the core stops a run before a chunk that calls for
 * one, and R runs it. On the annealing layer, under the estimators. */
#ifndef SG_RESTART_H
#define SG_RESTART_H

#include "anneal.h"

/* The triggers (R/restart.R, restart_triggers()): the surprise above which a chunk calls for a
 * restart (Inf: never), the fewest observations at the end of a chunk that may, the grid's next
 * point (Inf: none), whether the model's reference becoming complete calls for one, and the ESS
 * fraction below which a chunk's one importance step calls for one (0: never). */
typedef struct {
  double threshold, after, due, ess;
  int on_reference;
} sg_restart_triggers;

/* Where a run stopped: the end of the chunk that called for a restart (0: none), whether the
 * particles predicted that chunk far worse than the observations before it (whatever called),
 * and whether the model's reference had become complete there (the trigger on_reference). */
typedef struct {
  double at;
  int shift, reference;
} sg_restart_stop;

/* A run's watch: its triggers, whether any can fire, whether its moves augment a mixture's
 * spare components (anneal.h, sg_move_augment: SGAIS's annealed update), and scratch for the
 * surprise. */
typedef struct {
  const sg_restart_triggers *t;
  int on, augments;
  double *lp;
} sg_restart_watch;

void sg_restart_watch_init(sg_restart_watch *w, const sg_restart_triggers *t, int all_held,
                           int augments, int chunk_size, sg_restart_stop *stop);

/* Whether the run stops for a restart before the chunk of cn observations at buffer position
 * base, ending at n_now, with the particles (theta, logw, M) before it; fills *stop. `level`:
 * the model's reference level on the n_now observations (0, SG_REF_USABLE or SG_REF_COMPLETE;
 * 0 where not judged). */
int sg_restart_due(const sg_restart_watch *w, const sg_model *m, sg_workspace *ws,
                   const double *theta, const double *logw, int M, double n_now, int base, int cn,
                   int level, sg_restart_stop *stop);

/* Whether the run stops for a restart before the chunk ending at n_now whose one importance step
 * (SIR, the sequential estimator) would leave an ESS of `ess` among M particles; fills *stop. */
int sg_restart_step_ess(const sg_restart_watch *w, double n_now, double ess, int M,
                        sg_restart_stop *stop);

#endif
