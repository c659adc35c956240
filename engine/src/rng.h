/* Per-LP random stream: splitmix64. One 64-bit word of state, so saving and restoring it
 * on rollback is a copy; output passes BigCrush and the generator is tiny and fast. */
#ifndef AIR_RNG_H
#define AIR_RNG_H

#include <stdint.h>

static inline uint64_t air_rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in the open interval (0, 1): 53 random bits, offset by half a step. */
static inline double air_rng_unif(uint64_t *s)
{
    return ((double)(air_rng_next(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Independent start states for (seed, stream) pairs. */
uint64_t air_rng_seed(uint64_t seed, uint64_t stream);
double air_rng_exp(uint64_t *s, double mean);
uint64_t air_rng_below(uint64_t *s, uint64_t n);

#endif
