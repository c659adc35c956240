/* Dynamic mapping (dm, and adm which adds adaptation): each iteration a thread takes the
 * next free PE after the one it ran last, round-robin; a PE is run by one thread at a
 * time. Threads may be fewer than PEs. */
#include "engine.h"
#include "pe_lock.h"

static air_pe *dm_acquire(air_engine *e, air_thread *t)
{
    uint32_t n = e->npes;
    for (uint32_t k = 1; k <= n; k++) {
        uint32_t p = (t->cursor + k) % n;
        if (air_pe_trylock(&e->pes[p], t->id)) {
            t->cursor = p;
            return &e->pes[p];
        }
    }
    return NULL;
}

static void dm_release(air_engine *e, air_thread *t, air_pe *pe)
{
    (void)e; (void)t;
    air_pe_unlock(pe);
}

const air_mapping air_mapping_dm = { dm_acquire, dm_release, .helps_orphans = 0 };
