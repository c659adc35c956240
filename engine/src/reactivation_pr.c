/* Periodic reactivation: every --pr-periods detection periods bring back one inactive
 * thread, round-robin; if the interference is still there, the detector deactivates it
 * again. The paper sets the period at 40 detection periods ("the reactivation period must
 * be significantly larger than the detection period to avoid too frequent testing"), so a
 * wrong reactivation costs about 1/40 of the run. A detection period here is the longer of
 * --detect-interval loop iterations and the wall time the detector needs to confirm a
 * competitor (air_detector.confirm_s: PI's --pi-hold-ms, RQ's 50 ms of windows, APTE's
 * --apte-share of its window). Counted in iterations alone (the engine before 6 Dec),
 * 40 periods were ~3 ms of one thread's work against PI's 30-ms hold: the thread came back
 * 10 times as often as it could be confirmed out, each time handing its CPU to the load
 * in PI's probes while its partner waited at the GVT barrier, and LADM PI-PR beside one
 * CPU-bound load took 10x PI-RAP's time (docs/engine-benchmarks.md). */
#include "engine.h"

enum { PR_PERIODS, PR_NOPTS };

static const air_option_def pr_options[] = {
    [PR_PERIODS] = { .name = "pr-periods", .metavar = "N", .def = "40", .kind = AIR_OPT_UINT, .min = 1, .max = 1000000,
                     .help = "pr: bring one inactive thread back every N detection periods, a period being the longer of --detect-interval iterations and the time the detector needs to confirm a competitor (pi: the longer of --pi-hold-ms and 3 probes; rq: 50 ms; apte: --apte-share of --apte-window-ms); the paper's 40" },
    [PR_NOPTS] = { 0 },
};

static void pr_round(air_engine *e)
{
    uint64_t n = e->reactivation_opt[PR_PERIODS].u;
    uint64_t gvt = e->opt->gvt_interval ? e->opt->gvt_interval : 1;
    uint64_t rounds = (n * e->detect_period + gvt - 1) / gvt;
    uint64_t r = atomic_load(&e->gvt_round);
    if (rounds > 1 && r % rounds) return;
    double now = air_wall();
    double confirm_s = e->detector && e->detector->confirm_s ? e->detector->confirm_s(e) : 0.0;
    if (e->pr_last_s == 0) e->pr_last_s = e->t0; /* the first period counts from the start */
    if (now - e->pr_last_s < (double)n * confirm_s) return;
    e->pr_last_s = now; /* a slot, whether or not a thread is out: the period is fixed */
    air_thread *t = air_adapt_next_inactive(e);
    if (t) air_adapt_activate(e, t);
}

const air_reactivation air_reactivation_pr = {
    { "pr", "periodic: bring one inactive thread back every --pr-periods detection periods (in iterations and in the detector's confirmation time)", 0, pr_options }, pr_round,
};
