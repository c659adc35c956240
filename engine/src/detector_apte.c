/* Average-processing-time-per-event detection (the paper's APTE): each active thread
 * publishes its wall time per handled event over the last detection period. A thread that
 * is switched out mid-batch sees that time inflated. When max/min over the active threads
 * exceeds --apte-threshold, the thread with the max counts an inflated period (each thread
 * judges itself, so only the slowest one does); --apte-hits of them within --apte-window-ms,
 * losing more than --apte-share of that window, and it asks to be deactivated. */
#include "engine.h"
#include <math.h>

#define APTE_MAX_HITS 8 /* the largest --apte-hits: the ring of hit times */

enum { APTE_THRESHOLD, APTE_HITS, APTE_WINDOW_MS, APTE_SHARE, APTE_NOPTS };

static const air_option_def apte_options[] = {
    [APTE_THRESHOLD] = { .name = "apte-threshold", .metavar = "F", .def = "5.4", .kind = AIR_OPT_DOUBLE,
                         .min = 1, .max = AIR_OPT_UNBOUNDED,
                         .help = "apte: a period is inflated when its thread is the slowest and max/min time per event exceeds F" },
    [APTE_HITS] = { .name = "apte-hits", .metavar = "N", .def = "3", .kind = AIR_OPT_UINT, .min = 1, .max = APTE_MAX_HITS,
                    .help = "apte: deactivate after N inflated periods within --apte-window-ms (1: the paper's rule)" },
    [APTE_WINDOW_MS] = { .name = "apte-window-ms", .metavar = "F", .def = "100", .kind = AIR_OPT_DOUBLE, .min = 0.001, .max = 1e7,
                         .help = "apte: the wall-clock window in which --apte-hits inflated periods must fall" },
    [APTE_SHARE] = { .name = "apte-share", .metavar = "F", .def = "0.2", .kind = AIR_OPT_DOUBLE, .min = 0, .max = 1,
                     .help = "apte: and the time lost in inflated periods, averaged over the window, exceeds F of it (0 with --apte-hits 1: the paper's rule)" },
    [APTE_NOPTS] = { 0 },
};

typedef struct apte_state {
    _Atomic uint64_t bits;            /* last period's time per event (double bits), 0: none;
                                       * the other threads read it */
    double hit_s[APTE_MAX_HITS];      /* wall times of its last inflated periods (a ring) */
    uint32_t hits;                    /* inflated periods since the detector (re)started */
    double lost_s;                    /* wall time lost in inflated periods, decayed over the window */
    double lost_at;                   /* when lost_s was last updated */
} apte_state;

static apte_state *apte_of(const air_thread *t) { return t->detector_state; }

/* A fresh count when detection starts (--detect-after-ms): nothing before it counts. */
static int apte_start(air_engine *e, air_thread *t)
{
    (void)e;
    apte_of(t)->hits = 0;
    apte_of(t)->lost_s = 0;
    return 0;
}

/* Back from inactivity: a fresh count, and no period of its own for the others to compare
 * with yet. lost_s decays on: the CPU's recent history still holds. */
static void apte_rejoin(air_thread *t)
{
    apte_of(t)->hits = 0;
    atomic_store(&apte_of(t)->bits, 0);
}

static void apte_check(air_engine *e, air_thread *t)
{
    if (t->period_events == 0) return;
    apte_state *st = apte_of(t);
    uint64_t events = t->period_events;
    double mine = t->period_busy / (double)events;
    t->period_busy = 0;
    t->period_events = 0;
    atomic_store_explicit(&st->bits, air_d2u(mine), memory_order_relaxed);
    double mn = mine, mx = mine;
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *o = &e->threads[i];
        if (o == t || !atomic_load_explicit(&o->active, memory_order_relaxed)) continue;
        uint64_t b = atomic_load_explicit(&apte_of(o)->bits, memory_order_relaxed);
        if (!b) continue;
        double v = air_u2d(b);
        if (v < mn) mn = v;
        if (v > mx) mx = v;
    }
    if (!(mx == mine && mn > 0 && mx / mn > e->detector_opt[APTE_THRESHOLD].d)) return;
    /* One inflated period is the paper's rule (--apte-hits 1 --apte-share 0). On the
     * 2-core VM a kernel thread (kdamond, DAMON's sampler) takes a CPU for 0.5-2 ms twice
     * a second, and in a long workflow run other brief tasks (Snakemake's polling) do too;
     * one period is ~0.1 ms of work, so each of those inflates a period just as a CPU load's
     * slice does. What a load does and they do not is take a share of the CPU for long:
     * so a deactivation needs --apte-hits inflated periods within --apte-window-ms, and
     * the wall time lost in inflated periods, decayed over that window, above --apte-share
     * of it (a load sharing the CPU loses half of it; kdamond loses ~1%). */
    double now = air_wall(), window = e->detector_opt[APTE_WINDOW_MS].d * 1e-3;
    st->lost_s = st->lost_s * exp(-(now - st->lost_at) / window)
                 + (mine - mn) * (double)events;
    st->lost_at = now;
    uint32_t need = (uint32_t)e->detector_opt[APTE_HITS].u;
    st->hit_s[st->hits % APTE_MAX_HITS] = now;
    st->hits++;
    if (st->hits < need) return;
    double oldest = st->hit_s[(st->hits - need) % APTE_MAX_HITS];
    if (now - oldest <= window && st->lost_s >= e->detector_opt[APTE_SHARE].d * window)
        atomic_store(&t->want_deactivate, 1);
}

/* The time lost in inflated periods must reach --apte-share of --apte-window-ms: at least
 * that much wall time (a load sharing the CPU loses about half of it). */
static double apte_confirm_s(const air_engine *e)
{
    return e->detector_opt[APTE_SHARE].d * e->detector_opt[APTE_WINDOW_MS].d * 1e-3;
}

const air_detector air_detector_apte = {
    { "apte", "average processing time per event: the slowest thread, above --apte-threshold x the fastest in --apte-hits periods within --apte-window-ms that lose --apte-share of it", 0, apte_options },
    .state_size = sizeof(apte_state),
    .thread_start = apte_start,
    .check = apte_check,
    .rejoin = apte_rejoin,
    .confirm_s = apte_confirm_s,
};
