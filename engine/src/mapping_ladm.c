/* Locality-aware dynamic mapping: thread i keeps primary PE i while active. PEs whose
 * primary thread is inactive (or that have none, when PEs > threads) are orphans. After
 * each iteration on its primary, a thread looks round-robin for an orphan that is BEHIND
 * its primary and, if it can lock it, runs it for --n-batch iterations before returning.
 * "Behind" is measured in LVT (the orphan's next pending timestamp is lower than the
 * primary's): LVT is what GVT and rollbacks depend on, whereas iteration counts drift
 * apart when PEs have different loads. With no interference (all threads active, PEs ==
 * threads) there are no orphans and LADM behaves like FM. */
#include "engine.h"
#include "pe_lock.h"

static int is_orphan(air_engine *e, uint32_t p)
{
    int32_t owner = e->pes[p].primary;
    return owner < 0 || !atomic_load_explicit(&e->threads[owner].active, memory_order_relaxed);
}

static double lvt(air_engine *e, uint32_t p)
{
    return air_u2d(atomic_load_explicit(&e->pes[p].lvt_bits, memory_order_relaxed));
}

static air_pe *find_orphan_behind(air_engine *e, air_thread *t)
{
    uint32_t n = e->npes;
    double mine = lvt(e, (uint32_t)t->id);
    for (uint32_t k = 1; k <= n; k++) {
        uint32_t p = (t->cursor + k) % n;
        if (p == (uint32_t)t->id || !is_orphan(e, p) || !(lvt(e, p) < mine)) continue;
        if (air_pe_trylock(&e->pes[p], t->id)) {
            t->cursor = p;
            return &e->pes[p];
        }
    }
    return NULL;
}

static air_pe *ladm_acquire(air_engine *e, air_thread *t)
{
    if (t->help_left > 0) {
        air_pe *pe = &e->pes[t->help_pe];
        if (is_orphan(e, (uint32_t)t->help_pe) && air_pe_trylock(pe, t->id)) {
            t->help_left--;
            return pe;
        }
        t->help_left = 0;
    }
    if (t->ran_primary) {
        t->ran_primary = 0;
        air_pe *pe = find_orphan_behind(e, t);
        if (pe) {
            t->help_pe = (int32_t)pe->id;
            t->help_left = e->opt->n_batch - 1;
            return pe;
        }
    }
    air_pe *own = &e->pes[t->id];
    if (air_pe_trylock(own, t->id)) {
        t->ran_primary = 1;
        return own;
    }
    return NULL; /* a helper still holds our primary: it finishes its iteration soon */
}

static void ladm_release(air_engine *e, air_thread *t, air_pe *pe)
{
    (void)e; (void)t;
    air_pe_unlock(pe);
}

const air_mapping air_mapping_ladm = { "ladm", ladm_acquire, ladm_release };
