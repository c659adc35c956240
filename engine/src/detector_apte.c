/* Average-processing-time-per-event detection (the paper's APTE): each active thread
 * publishes its wall time per handled event over the last detection period. A thread that
 * is switched out mid-batch sees that time inflated. When max/min over the active threads
 * exceeds --apte-threshold, the thread with the max counts an inflated period (each thread
 * judges itself, so only the slowest one does); --apte-hits of them within --apte-window-ms
 * and it asks to be deactivated. */
#include "engine.h"

static void apte_check(air_engine *e, air_thread *t)
{
    if (t->period_events == 0) return;
    double mine = t->period_busy / (double)t->period_events;
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
    /* One inflated period is the paper's rule (--apte-hits 1). On the 2-core VM a thread's
     * CPU clock stops for 0.4-5 ms 3-4 times a second with no guest task running (the
     * hypervisor), and one period is ~0.1 ms of work, so a single period cannot tell such
     * a gap from a competitor's slice; a competitor on the same CPU takes one every few
     * slices, though. 3 within 100 ms (the default): idle 2.3 s runs with a deactivation
     * 0 of 6 (the paper's rule: 6 of 6, 3-7 each), first detection beside one CPU load at
     * 0.07-0.15 s (0.10-0.14 s). Inflated periods in a row do not work: the switched-out
     * thread's periods are inflated one at a time, between normal ones. */
    double now = air_wall();
    uint32_t need = e->opt->apte_hits;
    t->apte_hit_s[t->apte_hits % AIR_APTE_MAX_HITS] = now;
    t->apte_hits++;
    if (t->apte_hits < need) return;
    double oldest = t->apte_hit_s[(t->apte_hits - need) % AIR_APTE_MAX_HITS];
    if (now - oldest <= e->opt->apte_window_ms * 1e-3) atomic_store(&t->want_deactivate, 1);
}

const air_detector air_detector_apte = {
    { "apte", "average processing time per event: the slowest thread, above --apte-threshold x the fastest in --apte-hits periods within --apte-window-ms", 0 },
    NULL, NULL, apte_check,
};
