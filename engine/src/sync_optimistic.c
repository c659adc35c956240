/* Optimistic (Time Warp) synchronisation: rollbacks repair causality; optionally a window
 * bounds how far a PE runs ahead of the others. */
#include "engine.h"

#include <math.h>

enum { OPTIMISTIC_WINDOW, OPTIMISTIC_NOPTS };

static const air_option_def optimistic_options[] = {
    [OPTIMISTIC_WINDOW] = { .name = "optimism-window", .metavar = "K", .def = "0", .kind = AIR_OPT_DOUBLE,
                            .min = 0, .max = AIR_OPT_UNBOUNDED,
                            .help = "optimistic: handle no event later than the other PEs' least next-event time + K lookaheads (0: no bound)" },
    [OPTIMISTIC_NOPTS] = { 0 },
};

/* Optimism control (--optimism-window K, off by default): a PE handles no event later
 * than the other PEs' least next-event time plus K lookaheads. Without it a thread whose
 * partner is switched out runs up to a whole GVT interval ahead; when the partner resumes,
 * its messages fall into that work's past and roll it back, and the anti-messages roll the
 * partner back in turn. That is what happens when threads alternate on a CPU instead of
 * running together (4 threads on 2 cores, single runs: efficiency 0.31, 0.98 with K = 2), at a price
 * when nothing competes (threads wait for each other more often: 2 threads on 2 cores
 * took ~20% longer with K = 2); see docs/engine-benchmarks.md. A heuristic only: the
 * committed result does not depend on it, and the PE with the least time is never held
 * back, so the run always progresses. */
static double window_bound(air_engine *eng, air_pe *pe)
{
    double w = eng->sync_opt[OPTIMISTIC_WINDOW].d * eng->min_delay;
    if (!(w > 0)) return INFINITY;
    double least = INFINITY;
    for (uint32_t p = 0; p < eng->npes; p++) {
        if (p == pe->id) continue;
        double lvt = air_u2d(atomic_load_explicit(&eng->pes[p].lvt_bits, memory_order_relaxed));
        if (lvt < least) least = lvt;
    }
    return least + w;
}

const air_sync air_sync_optimistic = {
    .id = { "optimistic", "Time Warp: PEs run ahead, stragglers roll back", 1, optimistic_options },
    .batch_bound = window_bound,
};
