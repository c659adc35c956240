/* The PE spin lock used by the dynamic mappings: check the holder without locking (cheap,
 * no cache-line ping-pong while busy), then claim it with a CAS. */
#ifndef AIR_PE_LOCK_H
#define AIR_PE_LOCK_H

#include "engine.h"

static inline int air_pe_trylock(air_pe *pe, int tid)
{
    if (atomic_load_explicit(&pe->holder, memory_order_relaxed) != -1) return 0;
    int expect = -1;
    return atomic_compare_exchange_strong_explicit(&pe->holder, &expect, tid,
                                                   memory_order_acquire, memory_order_relaxed);
}

static inline void air_pe_unlock(air_pe *pe)
{
    atomic_store_explicit(&pe->holder, -1, memory_order_release);
}

#endif
