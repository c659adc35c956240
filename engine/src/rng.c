#include "rng.h"

#include <math.h>

uint64_t air_rng_seed(uint64_t seed, uint64_t stream)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dULL + stream;
    uint64_t a = air_rng_next(&s);
    uint64_t b = stream ^ 0xd1b54a32d192ed03ULL;
    return a ^ air_rng_next(&b);
}

double air_rng_exp(uint64_t *s, double mean)
{
    return -mean * log(air_rng_unif(s));
}

/* Lemire's multiply-shift: unbiased enough for n << 2^64 and branch-free. */
uint64_t air_rng_below(uint64_t *s, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)air_rng_next(s) * n) >> 64);
}
