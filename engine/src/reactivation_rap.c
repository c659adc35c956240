/* Reactivation after probing: every react_period GVT rounds (but at most every
 * RAP_MIN_INTERVAL_S of wall time, so that fast rounds do not turn probing into a CPU
 * load of its own) one inactive thread is woken to time sched_yield() calls
 * (air_probe_yield_us; an unpinned thread on a CPU that no active thread is on, so that the
 * engine's own threads never look like a competitor: adaptation.c); it asks to come back
 * only if the probe was fast (below --pi-threshold-us), and the leader reactivates it at
 * the next round. */
#include "engine.h"

#define RAP_MIN_INTERVAL_S 0.02

static void rap_round(air_engine *e)
{
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *t = &e->threads[i];
        if (!atomic_load(&t->active) && atomic_load(&t->want_reactivate)) air_adapt_activate(e, t);
    }
    uint64_t r = atomic_load(&e->gvt_round);
    if (r % e->react_period) return;
    double now = air_wall();
    if (now - e->rap_last_probe < RAP_MIN_INTERVAL_S) return;
    e->rap_last_probe = now;
    air_thread *t = air_adapt_next_inactive(e);
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    atomic_store(&t->probe, 1);
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

const air_reactivation air_reactivation_rap = {
    { "rap", "after probing: an inactive thread comes back only if its sched_yield() probe is fast", 1, NULL }, rap_round,
};
