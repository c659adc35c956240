/* GVT rounds, ROSS-MT style: a barrier among the ACTIVE threads only (inactive threads
 * hold no PE and never block a round). The last thread to arrive is the leader: with
 * every PE released, it drains all in-flight messages and anti-messages (repeating until
 * no queue holds anything, since a rollback can send more), takes GVT as the minimum
 * pending timestamp over all PEs, lets the sync protocol set the PEs' safe bounds, applies
 * adaptation decisions (so thread membership never changes while threads are arriving)
 * and ends the run once GVT reaches the end time. Fossil collection is done lazily by the
 * next thread that runs each PE (air_pe_iteration), so it proceeds in parallel. */
#include "engine.h"

void air_gvt_round(air_engine *e)
{
    uint64_t moved;
    do {
        moved = 0;
        for (uint32_t p = 0; p < e->npes; p++) moved += air_pe_drain(&e->pes[p]);
    } while (moved);
    double gvt = __builtin_inf();
    for (uint32_t p = 0; p < e->npes; p++) {
        double m = air_heap_min_ts(&e->pes[p].pending);
        atomic_store_explicit(&e->pes[p].lvt_bits, air_d2u(m), memory_order_relaxed);
        if (m < gvt) gvt = m;
    }
    atomic_store_explicit(&e->gvt_bits, air_d2u(gvt), memory_order_release);
    atomic_fetch_add_explicit(&e->gvt_round, 1, memory_order_acq_rel);
    if (e->sync->on_round) e->sync->on_round(e, gvt);
    if (gvt >= e->info.end_time) {
        atomic_store(&e->done, 1);
        return;
    }
    if (e->adaptive) air_adapt_round(e);
}

/* The release-to-return time of a waiter (see air_thread.handoff_hist). The leader of the
 * next round cannot overwrite bar_release_bits before this thread has arrived there. A
 * double of monotonic seconds resolves ~0.02 ns at a day's uptime. */
static void note_handoff(air_engine *e, air_thread *t)
{
    double ns = (air_wall() - air_u2d(atomic_load_explicit(&e->bar_release_bits, memory_order_relaxed))) * 1e9;
    double b = ns > 0 ? ns / AIR_HANDOFF_BUCKET_NS : 0;
    t->handoff_hist[b < AIR_HANDOFF_BUCKETS - 1 ? (int)b : AIR_HANDOFF_BUCKETS - 1]++;
}

void air_gvt_barrier(air_engine *e, air_thread *t)
{
    uint64_t gen = atomic_load_explicit(&e->bar_gen, memory_order_acquire);
    atomic_store_explicit(&t->waiting_gen, gen, memory_order_relaxed);
    int n = atomic_fetch_add_explicit(&e->bar_arrived, 1, memory_order_acq_rel) + 1;
    if (n == atomic_load_explicit(&e->n_active, memory_order_acquire)) {
        air_gvt_round(e);
        atomic_store_explicit(&e->bar_arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&e->bar_release_bits, air_d2u(air_wall()), memory_order_relaxed);
        atomic_store_explicit(&e->bar_gen, gen + 1, memory_order_release);
        e->barrier_wait->wake(e);
        if (atomic_load(&e->done)) air_adapt_wake_all(e);
        return;
    }
    e->barrier_wait->wait(e, t, gen);
    note_handoff(e, t);
}
