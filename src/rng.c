/* The random-number layer (rng.h). */
#include "rng.h"
#include <math.h>

/* SplitMix64's output function (Steele, Lea & Flood 2014): a bijective mix of 64 bits, here to
 * hash the stream's coordinates and to fill xoshiro's state, as its authors recommend. */
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void sg_rng_init(sg_rng *r, uint64_t key, uint64_t a, uint64_t b) {
  /* nested hashing separates the coordinates: (a, b) and (b, a) give unrelated streams */
  uint64_t z = mix64(key ^ mix64(a + 0x9e3779b97f4a7c15ULL) ^ mix64(mix64(b) + 0x632be59bd9b4e019ULL));
  for (int i = 0; i < 4; i++) {
    z += 0x9e3779b97f4a7c15ULL;
    r->s[i] = mix64(z);
  }
  /* xoshiro's state must not be all zero; the chance is 2^-256, but make it impossible */
  if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1;
  r->spare = 0.0;
  r->has_spare = 0;
}

uint64_t sg_rng_key_join(double high, double low) {
  return ((uint64_t) high << 32) | ((uint64_t) low & 0xffffffffULL);
}

double sg_rng_index_large(sg_rng *r, double n) {
  if (n <= 4294967295.0) return (double) sg_rng_index(r, (uint32_t) n);
  const uint64_t top = (uint64_t) n - 1;
  uint64_t mask = top;
  for (int shift = 1; shift < 64; shift <<= 1) mask |= mask >> shift;
  uint64_t x;
  do x = sg_rng_next(r) & mask; while (x > top);
  return (double) x;
}

double sg_rng_norm(sg_rng *r) {
  if (r->has_spare) {
    r->has_spare = 0;
    return r->spare;
  }
  double u, v, s;
  do {
    u = 2.0 * sg_rng_unif(r) - 1.0;
    v = 2.0 * sg_rng_unif(r) - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double f = sqrt(-2.0 * log(s) / s);
  r->spare = v * f;
  r->has_spare = 1;
  return u * f;
}

double sg_rng_log_gamma(sg_rng *r, double shape) {
  double boost = 0.0;
  if (shape < 1.0) {
    boost = log(sg_rng_unif(r)) / shape;
    shape += 1.0;
  }
  const double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = sg_rng_norm(r);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    if (log(sg_rng_unif(r)) < 0.5 * x * x + d - d * v + d * log(v)) return log(d * v) + boost;
  }
}
