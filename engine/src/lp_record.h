/* What the engine keeps per LP: its random stream, its send sequence (for the tie-break
 * key) and the model's state. The whole record is what a rollback restores and what the
 * checksum covers. */
#ifndef AIR_LP_RECORD_H
#define AIR_LP_RECORD_H

#include <stddef.h>
#include <stdint.h>

typedef struct air_lp_record {
    uint64_t rng;
    uint64_t send_seq;
    unsigned char state[]; /* model state, state_size bytes */
} air_lp_record;

static inline size_t air_lp_record_size(size_t state_size)
{
    return (sizeof(air_lp_record) + state_size + 7) & ~(size_t)7;
}

#endif
