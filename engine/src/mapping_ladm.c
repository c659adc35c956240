/* Locality-aware dynamic mapping: thread i keeps primary PE i while active. PEs whose
 * primary thread is inactive (or that have none, when PEs > threads) are orphans. After
 * each iteration on its primary, a thread looks round-robin for an orphan that is BEHIND
 * its primary and, if it can lock it, runs it for at most --n-batch iterations: it stops
 * as soon as the orphan has caught up, looks for another orphan that is behind, and goes
 * back to its primary when none is (the paper: "the thread returns to its primary PE if
 * all the orphan PEs have caught up with it") or when the n_batch iterations ran out.
 * "Behind" is measured in LVT (the orphan's next pending timestamp is lower than the
 * primary's): LVT is what GVT and rollbacks depend on, whereas iteration counts drift
 * apart when PEs have different loads. Why stop at catching up: running an orphan a fixed
 * n_batch iterations let it overshoot the primary by up to n_batch - 1 batches of
 * simulated time, so the primary's messages reached it as stragglers (one thread on 2 PEs
 * of 100 PHOLD LPs: 23-44% efficiency, against 95% for adm); returning to the primary
 * after each stint let the primary run ahead of the orphans waiting their turn (one
 * thread on 4 such PEs, remote 0.4: 69%). With no interference (all threads active, PEs
 * == threads) there are no orphans and LADM behaves like FM. */
#include "engine.h"
#include "pe_lock.h"

enum { LADM_N_BATCH, LADM_NOPTS };

const air_option_def air_mapping_ladm_options[] = {
    [LADM_N_BATCH] = { .name = "n-batch", .metavar = "N", .def = "10", .kind = AIR_OPT_UINT, .min = 1, .max = 1e9,
                       .help = "ladm: most iterations per visit to an orphan PE (fewer once it caught up)" },
    [LADM_NOPTS] = { 0 },
};

static int is_orphan(air_engine *e, uint32_t p)
{
    int32_t owner = e->pes[p].primary;
    return owner < 0 || !atomic_load_explicit(&e->threads[owner].active, memory_order_relaxed);
}

static double lvt(air_engine *e, uint32_t p)
{
    return air_u2d(atomic_load_explicit(&e->pes[p].lvt_bits, memory_order_relaxed));
}

/* An orphan the thread may run: behind (in LVT) the thread's primary. */
static int orphan_behind(air_engine *e, air_thread *t, uint32_t p)
{
    return p != (uint32_t)t->id && is_orphan(e, p) && lvt(e, p) < lvt(e, (uint32_t)t->id);
}

static air_pe *find_orphan_behind(air_engine *e, air_thread *t)
{
    uint32_t n = e->npes;
    for (uint32_t k = 1; k <= n; k++) {
        uint32_t p = (t->cursor + k) % n;
        if (!orphan_behind(e, t, p)) continue;
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
        if (orphan_behind(e, t, (uint32_t)t->help_pe) && air_pe_trylock(pe, t->id)) {
            t->help_left--;
            return pe;
        }
        t->help_left = 0;
        t->ran_primary = 1; /* caught up (or taken): see whether another orphan is behind */
    }
    if (t->ran_primary) {
        t->ran_primary = 0;
        air_pe *pe = find_orphan_behind(e, t);
        if (pe) {
            t->help_pe = (int32_t)pe->id;
            t->help_left = e->mode_opt[LADM_N_BATCH].u - 1;
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

const air_mapping air_mapping_ladm = { ladm_acquire, ladm_release, .helps_orphans = 1 };
