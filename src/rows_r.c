/* Glue: regression data packed for the hot loops: one row per observation, its covariates and then
 * its response (and further per-observation values, e.g. an offset), each row padded to a
 * multiple of 8 doubles (64 bytes, a cache line) and aligned to one. A mini-batch then reads one
 * cache line per observation up to 7 covariates, where the design (p x n) and the response kept
 * apart cost two or three, and the random rows of a mini-batch are bound by memory latency.
 *
 * Packing a million rows costs tens of milliseconds (R_alloc'ed afresh, more), and a run makes a
 * .Call for each slice of about a quarter second (progress, interrupt recovery), so the packed
 * rows are kept between calls: the last SG_ROWS_CACHE packings, each with the vectors it was
 * packed from, used when a model's data are the same R objects (R objects are not modified in
 * place: the same objects hold the same values; a model whose data changed has new vectors).
 * The cache keeps those vectors alive until later packings push them out: a bounded cost of
 * memory (at most SG_ROWS_CACHE data sets) for not packing again. The packed rows of a model
 * stay valid for its .Call as long as that call packs fewer than SG_ROWS_CACHE other data sets
 * after it (every entry point builds one model). */
#include "ffi.h"
#include <stdint.h>
#include <math.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define SG_ROWS_CACHE 4
#define ROWS_ALIGN 64
/* entries, most recent first: list(xt, cols..., extras..., packed raw vector); preserved for
 * the session */
static SEXP cache = NULL;

static double *aligned(SEXP raw) {
  uintptr_t a = (uintptr_t) RAW(raw);
  return (double *) (a + (ROWS_ALIGN - a % ROWS_ALIGN) % ROWS_ALIGN);
}

/* An entry's sources: xt, the ncol vectors, then the nextra matrices. */
static int same_sources(SEXP entry, SEXP xt, const SEXP *cols, int ncol, const SEXP *extra,
                        int nextra) {
  if (entry == R_NilValue || Rf_length(entry) != ncol + nextra + 2 || VECTOR_ELT(entry, 0) != xt)
    return 0;
  for (int c = 0; c < ncol; c++)
    if (VECTOR_ELT(entry, c + 1) != cols[c]) return 0;
  for (int e = 0; e < nextra; e++)
    if (VECTOR_ELT(entry, ncol + 1 + e) != extra[e]) return 0;
  return 1;
}

/* Moves entry k to the front (the others down one), or inserts `entry` there when k < 0. */
static void to_front(int k, SEXP entry) {
  if (k >= 0) entry = VECTOR_ELT(cache, k);
  PROTECT(entry);
  for (int i = (k >= 0 ? k : SG_ROWS_CACHE - 1); i > 0; i--)
    SET_VECTOR_ELT(cache, i, VECTOR_ELT(cache, i - 1));
  SET_VECTOR_ELT(cache, 0, entry);
  UNPROTECT(1);
}

/* Mini-batch rows are random reads over the whole data: with 4 KiB pages nearly every one also
 * misses the TLB. Where the system gives transparent huge pages on request (Linux, "madvise"
 * mode), ask for them for the packed rows, before they are first written. */
static void huge_pages(void *start, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t page = (uintptr_t) 2 << 20, a = ((uintptr_t) start + page - 1) & ~(page - 1);
  const uintptr_t end = ((uintptr_t) start + bytes) & ~(page - 1);
  if (end > a) (void) madvise((void *) a, end - a, MADV_HUGEPAGE);
#else
  (void) start;
  (void) bytes;
#endif
}

/* Forgets every packing: a model whose data grew (append_rows(), R/model_spec.R) has new
 * vectors, so the packings of the data it grew from would only hold their memory, and that of
 * their sources, until later packings pushed them out: in a stream, several copies of the data
 * held. */
SEXP ffi_rows_forget(void) {
  if (cache)
    for (int k = 0; k < SG_ROWS_CACHE; k++) SET_VECTOR_ELT(cache, k, R_NilValue);
  return R_NilValue;
}

const double *sg_rows_from_r(SEXP xt, const SEXP *cols, int ncol) {
  return sg_rows_extra_from_r(xt, cols, ncol, NULL, 0);
}

const double *sg_rows_extra_from_r(SEXP xt, const SEXP *cols, int ncol, const SEXP *extra,
                                   int nextra) {
  const int p = Rf_nrows(xt), n = Rf_ncols(xt);
  int q = 0;
  for (int e = 0; e < nextra; e++) q += Rf_nrows(extra[e]);
  const int stride = sg_rows_stride(p + ncol + q);
  if (!cache) {
    cache = Rf_allocVector(VECSXP, SG_ROWS_CACHE);
    R_PreserveObject(cache);
  }
  for (int k = 0; k < SG_ROWS_CACHE; k++) {
    if (!same_sources(VECTOR_ELT(cache, k), xt, cols, ncol, extra, nextra)) continue;
    to_front(k, R_NilValue);
    return aligned(VECTOR_ELT(VECTOR_ELT(cache, 0), ncol + nextra + 1));
  }
  SEXP entry = PROTECT(Rf_allocVector(VECSXP, ncol + nextra + 2));
  SET_VECTOR_ELT(entry, 0, xt);
  for (int c = 0; c < ncol; c++) SET_VECTOR_ELT(entry, c + 1, cols[c]);
  for (int e = 0; e < nextra; e++) SET_VECTOR_ELT(entry, ncol + 1 + e, extra[e]);
  SEXP raw = Rf_allocVector(RAWSXP, (sg_index) n * stride * sizeof(double) + ROWS_ALIGN);
  SET_VECTOR_ELT(entry, ncol + nextra + 1, raw);
  double *rows = aligned(raw);
  huge_pages(rows, (size_t) n * stride * sizeof(double));
  const double *x = REAL(xt);
  for (sg_index i = 0; i < n; i++) {
    double *row = rows + i * stride;
    memcpy(row, x + i * p, p * sizeof(double));
    for (int c = 0; c < ncol; c++) row[p + c] = REAL(cols[c])[i];
    int at = p + ncol;
    for (int e = 0; e < nextra; e++) {
      const int r = Rf_nrows(extra[e]);
      memcpy(row + at, REAL(extra[e]) + i * r, r * sizeof(double));
      at += r;
    }
    for (int j = at; j < stride; j++) row[j] = 0.0;
  }
  to_front(-1, entry);
  UNPROTECT(1);
  return rows;
}
