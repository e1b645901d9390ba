/* Norms over packed rows (model.h) for the models' bounds; packing the rows from R objects is
 * rows_r.c. */
#include "model.h"
#include <math.h>

double sg_rows_max_norm(const double *rows, int stride, int p, int n) {
  double most = 0.0;
  for (sg_index i = 0; i < n; i++) {
    const double *x = rows + i * stride;
    double s = 0.0;
    for (int j = 0; j < p; j++) s += x[j] * x[j];
    if (s > most) most = s;
  }
  return sqrt(most);
}

double sg_rows_max_abs(const double *rows, int stride, int col, int n) {
  double most = 0.0;
  for (sg_index i = 0; i < n; i++) {
    double a = fabs(rows[i * stride + col]);
    if (a > most) most = a;
  }
  return most;
}

double sg_distance(const double *x, const double *y, int n) {
  double s = 0.0;
  for (int j = 0; j < n; j++) s += (x[j] - y[j]) * (x[j] - y[j]);
  return sqrt(s);
}

double sg_sum_norm(const double *x, const double *y, int n) {
  double s = 0.0;
  for (int j = 0; j < n; j++) s += (x[j] + y[j]) * (x[j] + y[j]);
  return sqrt(s);
}

double sg_rows_max_scaled_norm(const double *rows, int stride, int p, int col, int n) {
  double most = 0.0;
  for (sg_index i = 0; i < n; i++) {
    const double *x = rows + i * stride;
    double s = 0.0;
    for (int j = 0; j < p; j++) s += x[j] * x[j];
    const double v = fabs(x[col]) * sqrt(s);
    if (v > most) most = v;
  }
  return most;
}
