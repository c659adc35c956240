/* Average-processing-time-per-event detection (the paper's APTE): each active thread
 * publishes its wall time per handled event over the last detection period. A thread that
 * is switched out mid-batch sees that time inflated. When max/min over the active threads
 * exceeds --apte-threshold, the thread with the max asks to be deactivated (each thread
 * judges itself, so only the slowest one does). */
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
    /* One period (~800 events) decides, as in the paper. On an idle machine a page fault or
     * a barrier wait inflates a period now and then: deactivations in 5 of 5 idle 2.3 s
     * runs, 1-3% of each. Confirming over 2 or 3 periods in a row removed those but also
     * every detection under a real load (0 of 3 runs: the switched-out thread's periods are
     * inflated one at a time), so APTE keeps its false alarms (PI, the default, and RQ confirm). */
    air_detect_confirm(t, mx == mine && mn > 0 && mx / mn > e->opt->apte_threshold, 1);
}

const air_detector air_detector_apte = {
    { "apte", "average processing time per event: the slowest thread, above --apte-threshold x the fastest", 0 },
    NULL, NULL, apte_check,
};
