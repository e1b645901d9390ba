/* The thread setting (threads.h) and the interrupt checks. R chooses the default (option,
 * environment variable, check limits) and checks the argument (R/threads.R, threads_r.c); this
 * file holds the setting and caps it at what OpenMP and the machine allow. With base.c, the one
 * core file that calls R's runtime (interrupts), never its objects. */
#include "threads.h"
#include <R_ext/Utils.h> /* R_CheckUserInterrupt() */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <Rinterface.h> /* Rf_onintr(): raise an interrupt caught in a parallel region */
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(_OPENMP) && !defined(_WIN32)
#include <pthread.h>
#define SG_FORK_HANDLER 1
#endif

#ifdef _OPENMP
static int env_limit(const char *name);
#endif

/* Never 0, so that a region is safe even before R sets the value at load. */
static int n_threads = 1;

int sg_threads(void) {
  return n_threads;
}

int sg_threads_max(void) {
#ifdef _OPENMP
  int n = omp_get_num_procs();
  int limit = omp_get_thread_limit();  /* OMP_THREAD_LIMIT as OpenMP read it at start */
  if (limit < n) n = limit;
  limit = env_limit("OMP_THREAD_LIMIT"); /* as it is now */
  if (limit < n) n = limit;
  return n < 1 ? 1 : n;
#else
  return 1;
#endif
}

int sg_threads_set(int n) {
  int max = sg_threads_max();
  n_threads = (n <= 0 || n > max) ? max : n;
  return n_threads;
}

#ifdef SG_FORK_HANDLER
static void one_thread_in_child(void) {
  n_threads = 1;
}
#endif

void sg_threads_init(void) {
#ifdef SG_FORK_HANDLER
  pthread_atfork(NULL, NULL, one_thread_in_child);
#endif
}

#ifdef _OPENMP
/* The value of the environment variable `name` if it is a whole number >= 1, else INT_MAX
 * (unset or unusable: no limit; OpenMP ignores such a value too). */
static int env_limit(const char *name) {
  const char *s = getenv(name);
  if (s == NULL || *s == '\0') return INT_MAX;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  while (isspace((unsigned char) *end)) end++;
  if (errno != 0 || end == s || *end != '\0' || v < 1 || v > INT_MAX) return INT_MAX;
  return (int) v;
}
#endif
/* ---------------------------------------------------------------- interrupts (threads.h) */

static double next_check = 0.0; /* when to look next (sg_now() seconds) */
static volatile int stop_requested = 0;
static sg_stop_hooks stop_hooks = {NULL, NULL};

void sg_stop_hooks_set(sg_stop_hooks hooks) {
  stop_hooks = hooks;
}

void sg_interrupt_check(void) {
  if (stop_requested) {
    /* caught inside a parallel region (sg_interrupt_poll): raise it now, outside */
    stop_requested = 0;
    next_check = sg_now() + SG_INTERRUPT_INTERVAL;
    if (stop_hooks.raise_stop) stop_hooks.raise_stop();
    Rf_onintr();
  }
  const double now = sg_now();
  if (now < next_check) return;
  next_check = now + SG_INTERRUPT_INTERVAL;
  R_CheckUserInterrupt();
}

int sg_interrupt_poll(void) {
  if (stop_requested) return 1;
#ifdef _OPENMP
  if (omp_in_parallel()) {
    if (omp_get_thread_num() != 0 || !stop_hooks.catch_stop) return 0;
    const double now = sg_now();
    if (now < next_check) return 0;
    next_check = now + SG_INTERRUPT_INTERVAL;
    if (stop_hooks.catch_stop()) stop_requested = 1;
    return stop_requested;
  }
#endif
  sg_interrupt_check();
  return 0;
}
