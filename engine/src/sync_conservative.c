/* Conservative synchronisation: YAWNS-style time windows bounded by GVT + lookahead.
 *
 * Why windows and not null messages: the engine already stops every active thread at a
 * barrier for each GVT round, and the round's leader drains every in-flight message into
 * the PEs' pending queues before taking GVT (gvt.c). So the barrier is a free global
 * synchronisation point, and a window costs no message traffic; null messages would add
 * per-channel traffic to machinery built for shared memory. The windows work unchanged
 * whichever thread runs a PE, so they serve every mapping mode (fm, dm, adm, ladm).
 *
 * Why it is safe (no event is ever handled out of order, hence no rollback): at a round,
 * every existing event is in some pending queue and GVT is the smallest timestamp among
 * them. During the window, PEs handle only events with ts < bound = GVT + L, where L is the
 * model's lookahead (min_delay: the engine aborts any send with a smaller delay). An event
 * handled in the window has ts >= GVT, so everything it sends has ts >= GVT + L = bound
 * (floating-point addition rounds monotonically, so this holds in doubles too). Hence every
 * event below the bound already existed at the round, no straggler can arrive, and each
 * PE handles exactly the events seq would, in the same key order. New events (>= bound)
 * wait in the input queues for the next round. Before the first round GVT >= 0, so the
 * initial bound is L.
 *
 * A window ends early when no PE has anything left below the bound (window_over): its
 * threads then join the barrier at once instead of idling to the next GVT interval, so a
 * window costs one barrier, not gvt_interval empty iterations.
 *
 * A model with zero lookahead cannot be run this way (the window would be empty forever):
 * refused at set-up with a clear message.
 */
#include <math.h>
#include <stdio.h>

#include "engine.h"

static void set_bounds(air_engine *e, double gvt)
{
    double bound = gvt + e->min_delay;
    if (bound > e->info.end_time) bound = e->info.end_time;
    for (uint32_t p = 0; p < e->npes; p++) e->pes[p].safe_bound = bound;
}

static int conservative_prepare(air_engine *e, char *err, size_t errlen)
{
    if (!(e->min_delay > 0)) {
        snprintf(err, errlen,
                 "--sync %s needs a positive lookahead, but model %s has lookahead %g "
                 "(set --lookahead > 0)",
                 e->opt->sync, e->model->name, e->min_delay);
        return -1;
    }
    set_bounds(e, 0.0);
    return 0;
}

static int conservative_window_over(air_engine *e)
{
    double bound = e->pes[0].safe_bound; /* the same for every PE */
    for (uint32_t p = 0; p < e->npes; p++) {
        double next = air_u2d(atomic_load_explicit(&e->pes[p].lvt_bits, memory_order_relaxed));
        if (next < bound) return 0;
    }
    return 1;
}

/* A conservative window spans at most one lookahead of simulated time, or one event when
 * events are sparser than that (the next window starts at the next event), so a run needs
 * about end time / max(lookahead, mean gap between events) GVT rounds, each a barrier of
 * every thread. Millions of them take minutes however small the model (a run with
 * --lookahead 1e-06 ran past 120 s): say so before the run, and why. The event density
 * is estimated from the initial population (--events-per-lp per LP, each event moving
 * its LP --mean + --lookahead ahead on average). */
#define WINDOW_WARN_ROUNDS 1e6

static int conservative_check(const air_options *o, const air_sim_info *in, double lookahead)
{
    if (!(lookahead > 0)) {
        fprintf(stderr, "airpdes: --sync %s needs a positive lookahead, but model %s has "
                "lookahead %g (set --lookahead > 0)\n", o->sync, o->model, lookahead);
        return 2;
    }
    double population = (double)in->num_lps * (double)(o->events_per_lp ? o->events_per_lp : 1);
    double gap = (o->mean + lookahead) / population;
    double rounds = o->end_time / (lookahead > gap ? lookahead : gap);
    if (rounds >= WINDOW_WARN_ROUNDS)
        fprintf(stderr, "airpdes: warning: --sync %s with lookahead %g over end time %g needs about %.3g "
                "GVT rounds (windows of one lookahead, each a barrier of all threads): expect a very long run; "
                "raise --lookahead or use another --sync\n", o->sync, lookahead, o->end_time, rounds);
    return 0;
}

const air_sync air_sync_conservative = {
    .id = { "conservative", "lookahead windows: between GVT rounds PEs handle only events before "
            "GVT + lookahead, so nothing is ever rolled back; in every parallel mode; refused "
            "when the model's lookahead is 0", 0, NULL },
    .check = conservative_check,
    .on_round = set_bounds,
    .prepare = conservative_prepare,
    .window_over = conservative_window_over,
};
