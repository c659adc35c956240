/* Periodic reactivation: every react_period GVT rounds (about 40 detection periods, see
 * engine.c) bring back one inactive thread, round-robin; if the interference is still
 * there, the detector deactivates it again. */
#include "engine.h"

static void pr_round(air_engine *e)
{
    uint64_t r = atomic_load(&e->gvt_round);
    if (r % e->react_period) return;
    for (int k = 0; k < e->nthreads; k++) {
        air_thread *t = &e->threads[(e->react_cursor + (uint32_t)k) % (uint32_t)e->nthreads];
        if (!atomic_load(&t->active)) {
            e->react_cursor = (uint32_t)t->id + 1;
            air_adapt_activate(e, t);
            return;
        }
    }
}

const air_reactivation air_reactivation_pr = {
    { "pr", "periodic: bring one inactive thread back every 40 detection periods", 0, NULL }, pr_round,
};
