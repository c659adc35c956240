/* Reactivation after probing: every react_period GVT rounds one inactive thread is woken
 * to time a sched_yield(); it asks to come back only if the probe was fast (below
 * --pi-threshold-us), and the leader reactivates it at the next round. */
#include "engine.h"

static void rap_round(air_engine *e)
{
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *t = &e->threads[i];
        if (!atomic_load(&t->active) && atomic_load(&t->want_reactivate)) air_adapt_activate(e, t);
    }
    uint64_t r = atomic_load(&e->gvt_round);
    if (r % e->react_period) return;
    for (int k = 0; k < e->nthreads; k++) {
        air_thread *t = &e->threads[(e->react_cursor + (uint32_t)k) % (uint32_t)e->nthreads];
        if (!atomic_load(&t->active)) {
            e->react_cursor = (uint32_t)t->id + 1;
            pthread_mutex_lock(&t->mu);
            atomic_store(&t->probe, 1);
            pthread_cond_signal(&t->cv);
            pthread_mutex_unlock(&t->mu);
            return;
        }
    }
}

const air_reactivation air_reactivation_rap = { "rap", rap_round };
