/* The base layer: failures recorded for the entry points to raise, a timer. */
#include "base.h"
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int sg_fail(sg_status *st, int code, const char *fmt, ...) {
  if (st->code != SG_OK) return st->code;
  st->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->message, sizeof st->message, fmt, ap);
  va_end(ap);
  return code;
}

double sg_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

int sg_all_finite(const double *x, int n) {
  for (int j = 0; j < n; j++)
    if (!R_FINITE(x[j])) return 0;
  return 1;
}
