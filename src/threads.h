/* Threads: how many threads a parallel region may use. The number is set from R
 * (sgais_threads(), R/threads.R) and read with sg_threads().
 *
 * Rules for parallel code in this package (data.table's discipline):
 * - Give every `#pragma omp parallel` (or `parallel for`) the clause num_threads(sg_threads()).
 *   Never call omp_set_num_threads(): it would change the setting for R and for every other
 *   package in the session.
 * - Include <omp.h> and call omp_* functions only under #ifdef _OPENMP. Without OpenMP the
 *   pragmas are ignored and the same code runs on one thread.
 * - Inside a parallel region, call no R API: no R_alloc or allocVector, no RNG (unif_rand,
 *   norm_rand, ...), no R_CheckUserInterrupt, no Rf_error, Rf_warning or Rprintf. Allocate
 *   before the region and draw random numbers on the main thread. Workers report failures in
 *   their own sg_status, and the main thread raises them after the region.
 * - Models written in R (custom_model()) and compiled models (the C API) run on the main thread
 *   only. Built-in models may be evaluated in parallel, each thread with its own workspace.
 * - Results must not depend on the number of threads. Split the work into fixed blocks whose
 *   number and bounds do not depend on the thread count. Each block writes its partial result
 *   to its own slot, and the main thread combines the slots in block order after the region
 *   (no `reduction` clause or atomic add on floating point). Results are then bit-identical for
 *   any number of threads. */
#ifndef SG_THREADS_H
#define SG_THREADS_H

#include "base.h"

/* The number of threads for a parallel region, >= 1 (1 when built without OpenMP). A plain
 * read of the setting: call it on the main thread, anywhere. */
int sg_threads(void);

/* The most threads the setting may take: the processors available to this process, capped by
 * OpenMP's thread limit and by OMP_THREAD_LIMIT (read again at each call, so that
 * Sys.setenv() applies). 1 without OpenMP. */
int sg_threads_max(void);

/* Sets the number of threads to n, capped at sg_threads_max(); n <= 0 means sg_threads_max().
 * Returns the number set. */
int sg_threads_set(int n);

/* Called once when the package is loaded (init.c): a process forked from this one (e.g. by
 * parallel::mclapply()) uses one thread, since OpenMP may hang in a child forked after the
 * parent used it. */
void sg_threads_init(void);

/* A `parallel for` over the following loop on `threads` threads (num_threads(threads), static
 * schedule), serial when threads is 1; sg_thread_id() is the thread's number in the team (0 on
 * the main thread and without OpenMP), e.g. to pick its workspace. A loop whose body may call R
 * (a model written in R) must not be inside one even with one thread: an R error or interrupt
 * would unwind through the region. */
#ifdef _OPENMP
#include <omp.h>
#define SG_PRAGMA(x) _Pragma(#x)
#define SG_PARALLEL_FOR(threads) \
  SG_PRAGMA(omp parallel for if((threads) > 1) num_threads(threads) schedule(static))
static inline int sg_thread_id(void) { return omp_get_thread_num(); }
#else
#define SG_PARALLEL_FOR(threads)
static inline int sg_thread_id(void) { return 0; }
#endif

/* Interrupts, honoured within about SG_INTERRUPT_INTERVAL seconds of work.
 * sg_interrupt_check(): on the main thread outside parallel regions, lets R act on a pending
 * interrupt (unwinding the .Call; the cores keep their memory in R_alloc, so nothing leaks),
 * looking at most every SG_INTERRUPT_INTERVAL seconds, so it can be called often.
 * sg_interrupt_poll(): anywhere, e.g. between a kernel's steps; returns nonzero when the work
 * should stop early. Outside parallel regions it is sg_interrupt_check(). Inside one, the
 * main thread looks for an interrupt or a time limit (setTimeLimit()) through the glue's
 * catch_stop hook, which catches the condition so nothing unwinds through the region (the one R
 * call made in a region, on the thread R runs on while the others touch no R object); every
 * thread then sees the stop, and sg_interrupt_check() after the region raises what was caught
 * (raise_stop: the same interrupt, or the same error, e.g. "reached elapsed time limit"). */
#define SG_INTERRUPT_INTERVAL 0.1
void sg_interrupt_check(void);
int sg_interrupt_poll(void);

/* The hooks above, set by the glue when the package loads (threads_r.c); without them nothing is
 * checked inside a parallel region. catch_stop returns nonzero when it caught a condition. */
typedef struct {
  int (*catch_stop)(void);
  void (*raise_stop)(void);
} sg_stop_hooks;
void sg_stop_hooks_set(sg_stop_hooks hooks);

#endif
