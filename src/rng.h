/* The random-number layer: the fast generator of the samplers' moves, mini-batches and
 * resampling, in streams keyed by position in the run rather than drawn in sequence.
 *
 * Each stream is xoshiro256++ (Blackman & Vigna 2021, "Scrambled linear pseudorandom number
 * generators") started from a hash of (run key, a, b): the run key is drawn once from R's RNG
 * when a run starts (so set.seed() makes runs reproducible, and RNGkind() matters only through
 * that draw), a and b say which part of the run the stream serves (SGAIS: the observations
 * before a chunk and the particle). A particle's draws therefore depend neither on the order in
 * which particles are moved (threads) nor on where a run was split into calls (continuation).
 * A stream is used by one thread at a time; nothing here calls R. */
#ifndef SG_RNG_H
#define SG_RNG_H

#include "base.h"
#include <stdint.h>

typedef struct {
  uint64_t s[4];
  double spare; /* the polar method makes normals in pairs; the second waits here */
  int has_spare;
} sg_rng;

/* The stream (key, a, b); b = SG_RNG_SHARED is the stream of a run's shared draws
 * (resampling, the reservoir), apart from its particles' streams b = 0, 1, ... */
#define SG_RNG_SHARED UINT64_MAX
void sg_rng_init(sg_rng *r, uint64_t key, uint64_t a, uint64_t b);
/* The key stored in R as two whole numbers in [0, 2^32) (high, low), as R cannot hold 64 bits. */
uint64_t sg_rng_key_join(double high, double low);

static inline uint64_t sg_rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t sg_rng_next(sg_rng *r) {
  uint64_t *s = r->s;
  const uint64_t out = sg_rng_rotl(s[0] + s[3], 23) + s[0], t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = sg_rng_rotl(s[3], 45);
  return out;
}

/* Uniform on (0, 1), 53 random bits (never 0, so its log is finite). */
static inline double sg_rng_unif(sg_rng *r) {
  return ((double) (sg_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

/* Exactly uniform on 0, ..., n - 1 for 0 < n <= 2^32 (Lemire 2019, "Fast random integer
 * generation in an interval": a multiply, and a rejection only with probability < n / 2^32). */
static inline uint32_t sg_rng_index(sg_rng *r, uint32_t n) {
  uint64_t m = (sg_rng_next(r) >> 32) * (uint64_t) n;
  uint32_t low = (uint32_t) m;
  if (low < n) {
    const uint32_t threshold = (uint32_t) (-n) % n; /* 2^32 mod n */
    while (low < threshold) {
      m = (sg_rng_next(r) >> 32) * (uint64_t) n;
      low = (uint32_t) m;
    }
  }
  return (uint32_t) (m >> 32);
}

/* Exactly uniform on 0, ..., n - 1 for any n in [1, 2^53] (counts of observations in a stream):
 * bit-mask rejection, fewer than two draws on average. */
double sg_rng_index_large(sg_rng *r, double n);

/* Standard normal (Marsaglia's polar method: exact, a log and a square root per pair). */
double sg_rng_norm(sg_rng *r);

/* log G for G ~ Gamma(shape, 1), shape > 0 (Marsaglia & Tsang 2000, with G(a) = G(a + 1) U^(1/a)
 * below shape 1; the log so that tiny shapes do not underflow to log 0). */
double sg_rng_log_gamma(sg_rng *r, double shape);

#endif
