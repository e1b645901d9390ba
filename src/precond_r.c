/* Glue: the preconditioner's metric for R (R/control.R, the tests). */
#include "ffi.h"
#include <string.h>

/* The metric Sigma = L L' that the kernels use for particles theta
 * (dim x M) with log-weights logw, of kind `kind` (SG_PRECOND_*), estimated from all of them
 * (leave_out = 0) or with particle leave_out (1-based) left out as sg_precond_leave_out() does. */
SEXP ffi_precond_metric(SEXP theta, SEXP logw, SEXP kind, SEXP leave_out) {
  if (TYPEOF(theta) != REALSXP || !Rf_isMatrix(theta))
    sg_input_error("`theta` must be a numeric matrix.");
  const int dim = Rf_nrows(theta), M = Rf_ncols(theta);
  if (dim < 1 || M < 2) sg_input_error("`theta` needs a row and two columns.");
  if (TYPEOF(logw) != REALSXP || Rf_length(logw) != M)
    sg_input_error("`logw` must be a numeric vector of length %d.", M);
  const int k = sg_scalar_int(kind, "kind", SG_PRECOND_DIAGONAL);
  if (k > SG_PRECOND_DENSE) sg_input_error("`kind` is not a known preconditioner.");
  const int a = sg_scalar_int(leave_out, "leave_out", 0);
  if (a > M) sg_input_error("`leave_out` must be at most %d.", M);
  sg_precond p, own;
  sg_precond_alloc(&p, k, dim);
  sg_precond_alloc(&own, k, dim);
  double *work = (double *) R_alloc((size_t) M + (size_t) dim * (dim + 1), sizeof(double));
  if (sg_precond_estimate(&p, REAL(theta), REAL(logw), M, work))
    sg_input_error("the particles are degenerate.");
  const sg_precond *use = &p;
  if (a > 0) {
    sg_precond_leave_out(&p, a - 1, REAL(theta) + (size_t) (a - 1) * dim, &own);
    use = &own;
  }
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, dim, dim));
  double *col = (double *) R_alloc(dim, sizeof(double));
  for (int j = 0; j < dim; j++) {
    /* column j of L L' = L (L' e_j) */
    memset(col, 0, dim * sizeof(double));
    col[j] = 1.0;
    sg_precond_factor_transpose_apply(use, col, REAL(out) + (size_t) j * dim);
    sg_precond_factor_apply(use, REAL(out) + (size_t) j * dim);
  }
  UNPROTECT(1);
  return out;
}
