/* Average-processing-time-per-event detection (the paper's APTE): each active thread
 * publishes its wall time per handled event over the last detection period. A thread that
 * is switched out mid-batch sees that time inflated. When max/min over the active threads
 * exceeds --apte-threshold, the thread with the max counts an inflated period (each thread
 * judges itself, so only the slowest one does); --apte-hits of them within --apte-window-ms,
 * losing more than --apte-share of that window, and it asks to be deactivated. */
#include "engine.h"
#include <math.h>

/* A fresh count when detection starts (--detect-after-ms): nothing before it counts. */
static int apte_start(air_engine *e, air_thread *t)
{
    (void)e;
    t->apte_hits = 0;
    t->apte_lost_s = 0;
    return 0;
}

static void apte_check(air_engine *e, air_thread *t)
{
    if (t->period_events == 0) return;
    uint64_t events = t->period_events;
    double mine = t->period_busy / (double)events;
    t->period_busy = 0;
    t->period_events = 0;
    atomic_store_explicit(&t->apte_bits, air_d2u(mine), memory_order_relaxed);
    double mn = mine, mx = mine;
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *o = &e->threads[i];
        if (o == t || !atomic_load_explicit(&o->active, memory_order_relaxed)) continue;
        uint64_t b = atomic_load_explicit(&o->apte_bits, memory_order_relaxed);
        if (!b) continue;
        double v = air_u2d(b);
        if (v < mn) mn = v;
        if (v > mx) mx = v;
    }
    if (!(mx == mine && mn > 0 && mx / mn > e->opt->apte_threshold)) return;
    /* One inflated period is the paper's rule (--apte-hits 1 --apte-share 0). On the
     * 2-core VM a kernel thread (kdamond, DAMON's sampler) takes a CPU for 0.5-2 ms twice
     * a second, and in a long workflow run other brief tasks (Snakemake's polling) do too;
     * one period is ~0.1 ms of work, so each of those inflates a period just as a CPU load's
     * slice does. What a load does and they do not is take a share of the CPU for long:
     * so a deactivation needs --apte-hits inflated periods within --apte-window-ms, and
     * the wall time lost in inflated periods, decayed over that window, above --apte-share
     * of it (a load sharing the CPU loses half of it; kdamond loses ~1%). */
    double now = air_wall(), window = e->opt->apte_window_ms * 1e-3;
    t->apte_lost_s = t->apte_lost_s * exp(-(now - t->apte_lost_at) / window)
                     + (mine - mn) * (double)events;
    t->apte_lost_at = now;
    uint32_t need = e->opt->apte_hits;
    t->apte_hit_s[t->apte_hits % AIR_APTE_MAX_HITS] = now;
    t->apte_hits++;
    if (t->apte_hits < need) return;
    double oldest = t->apte_hit_s[(t->apte_hits - need) % AIR_APTE_MAX_HITS];
    if (now - oldest <= window && t->apte_lost_s >= e->opt->apte_share * window)
        atomic_store(&t->want_deactivate, 1);
}

const air_detector air_detector_apte = {
    { "apte", "average processing time per event: the slowest thread, above --apte-threshold x the fastest in --apte-hits periods within --apte-window-ms that lose --apte-share of it", 0 },
    NULL, apte_start, apte_check,
};
