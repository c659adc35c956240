/* Performance-indicator detection (the paper's PI): the thread times sched_yield()
 * (a short burst of them, see air_probe_yield_us).
 * With no other runnable task on its CPU the call returns in about a microsecond; when a
 * competitor shares the CPU, the scheduler runs it and the call takes milliseconds (a
 * scheduling slice). Above --pi-threshold-us the thread asks to be deactivated. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <sys/resource.h>

#include "engine.h"

/* --pi-threshold-us is the engine's option: RAP and the inactive wait time yields too. */
enum { PI_INTERVAL_MS, PI_BACKOFF_MS, PI_NEEDS_SWITCH, PI_SWITCH_RATE, PI_HOLD_MS, PI_NOPTS };

static const air_option_def pi_options[] = {
    [PI_INTERVAL_MS] = { .name = "pi-interval-ms", .metavar = "F", .def = "1", .kind = AIR_OPT_DOUBLE, .min = 0, .max = 1e6,
                         .help = "pi: probe at most once per F ms of wall time (0: at every detector check)" },
    [PI_BACKOFF_MS] = { .name = "pi-backoff-ms", .metavar = "F", .def = "64", .kind = AIR_OPT_DOUBLE, .min = 0, .max = 1e6,
                        .help = "pi: after slow probes that did not add up to a deactivation (a competitor that comes and goes, each probe handing it a slice), double the probe interval, up to F ms; back to --pi-interval-ms after a deactivation (0: off, every probe --pi-interval-ms apart)" },
    [PI_NEEDS_SWITCH] = { .name = "pi-needs-switch", .metavar = "N", .def = "1", .kind = AIR_OPT_UINT, .min = 0, .max = 1,
                          .help = "pi: 1: a slow probe counts only if its yields handed the CPU to another task (the thread was switched out); a probe slowed by the hypervisor (steal) or interrupts is not a competitor to deactivate for. 0: every slow probe counts (the engine before 27 Nov)" },
    [PI_SWITCH_RATE] = { .name = "pi-switch-rate", .metavar = "F", .def = "0", .kind = AIR_OPT_DOUBLE, .min = 0, .max = 1e9,
                         .help = "pi: a probe also counts as slow when the thread was preempted more than F times a second since its last probe (a competitor too short-lived for a yield to meet: an on-off load with a 10 us period preempts each of 2 threads ~7,000 times a second, a CPU-bound load ~60); 0: off (an experiment, docs/engine-benchmarks.md)" },
    [PI_HOLD_MS] = { .name = "pi-hold-ms", .metavar = "F", .def = "30", .kind = AIR_OPT_DOUBLE, .min = 0, .max = 1e6,
                     .help = "pi: deactivate only once the slow probes have lasted F ms in a row (from the first slow probe), as well as 3 probes: a kernel thread's burst (DAMON's kdamond ran up to 28 ms at a time on the 2-core VM) is not a competitor worth a thread; a CPU-bound load holds for good (0: 3 slow probes suffice, the engine before 30 Nov)" },
    [PI_NOPTS] = { 0 },
};

typedef struct pi_state {
    double next_s;             /* no probe before this wall time */
    double backoff_ms;         /* with --pi-backoff-ms: the grown probe interval, 0: none */
    uint64_t probes;           /* probes taken while active, and how many were slow */
    uint64_t slow_probes;
    uint64_t slow_kept_cpu;    /* slow probes in which the thread was never switched out */
    double probe_s;            /* wall time inside probes (the CPU its yields handed away) */
    long preempt_mark;         /* with --pi-switch-rate: preemptions at the end of the last probe, */
    double preempt_mark_s;     /* and when (0: no probe yet) */
    double streak_start_s;     /* when the current run of slow probes began */
} pi_state;

static pi_state *pi_of(const air_thread *t) { return t->detector_state; }

/* The thread's context switches so far, -1 if unknown. A yield that handed the CPU to a
 * competitor switched; a probe that was slow without a switch was delayed by something
 * the yield could not hand the CPU to: the hypervisor running another guest on the vCPU
 * (steal) or interrupt handling. */
static long thread_switches(void)
{
    struct rusage r;
    return getrusage(RUSAGE_THREAD, &r) ? -1 : r.ru_nvcsw + r.ru_nivcsw;
}

/* The thread's involuntary switches so far (preempted, or a yield that handed the CPU
 * away), -1 if unknown. */
static long thread_preemptions(void)
{
    struct rusage r;
    return getrusage(RUSAGE_THREAD, &r) ? -1 : r.ru_nivcsw;
}

/* --pi-switch-rate: whether the thread was preempted more than F times a second between
 * the end of its last probe and now. A load that runs ~10 us at a time preempts the
 * engine thousands of times a second, yet is rarely runnable at the instant a probe
 * yields, so the probes alone stay fast (docs/reference-runs.md, "preemptions PI's
 * probes do not see"). */
static int preempted_often(const air_engine *e, const pi_state *st, double now)
{
    if (e->detector_opt[PI_SWITCH_RATE].d <= 0 || st->preempt_mark_s <= 0 || now <= st->preempt_mark_s) return 0;
    long n = thread_preemptions();
    if (n < 0 || st->preempt_mark < 0) return 0;
    return (n - st->preempt_mark) / (now - st->preempt_mark_s) > e->detector_opt[PI_SWITCH_RATE].d;
}

/* Seconds to the thread's next probe: --pi-interval-ms, or the grown back-off if longer. */
static double pi_interval_s(const air_engine *e, const pi_state *st)
{
    double interval_ms = e->detector_opt[PI_INTERVAL_MS].d;
    return (st->backoff_ms > interval_ms ? st->backoff_ms : interval_ms) * 1e-3;
}

static void pi_check(air_engine *e, air_thread *t)
{
    /* The last active thread cannot be deactivated, and under competitors every probe
     * hands its CPU to them for a slice or more: probing then only slows the run (with two
     * CPU-bound competitors on 2 cores it made a 1 s run take 15-35 s). */
    if (atomic_load_explicit(&e->n_active, memory_order_relaxed) <= 1) {
        t->suspect_checks = 0;
        return;
    }
    /* A probe (4 yields) costs ~5 us on an idle CPU; once per 32 iterations (~90 us of
     * work) that was 5% of a no-load run, most of LADM's overhead over FM. At most one per
     * --pi-interval-ms (1 ms: 0.5%) keeps the cost and detects as soon: beside a
     * competitor each probe takes a slice of milliseconds anyway. */
    pi_state *st = pi_of(t);
    double now = air_wall();
    if (now < st->next_s) return;
    /* A CPU-bound competitor makes every probe slow; a brief wake-up of some other task
     * (a kernel worker, the engine's own timeline sampler) makes one slow. Probes run
     * every few hundred microseconds, so acting on a single slow one deactivated threads
     * on an idle machine (all threads active only 57-84% of a run); 3 slow probes in a
     * row did not. */
    int preempted = preempted_often(e, st, now);
    long switches = thread_switches();
    int slow = air_probe_yield_us() > e->opt->pi_threshold_us;
    st->probes++;
    st->slow_probes += slow;
    st->probe_s += air_wall() - now;
    if (e->detector_opt[PI_SWITCH_RATE].d > 0) {  /* the next window starts after this probe's own yields */
        st->preempt_mark = thread_preemptions();
        st->preempt_mark_s = air_wall();
    }
    /* --pi-needs-switch: a slow probe in which the thread kept its CPU found no competitor
     * in the guest to deactivate for; it neither counts towards a deactivation nor
     * interrupts a run of slow probes, nor changes the back-off: the next probe comes at
     * the interval in force. */
    if (slow && !preempted && switches >= 0 && thread_switches() == switches) {
        st->slow_kept_cpu++;
        if (e->detector_opt[PI_NEEDS_SWITCH].u) {
            st->next_s = now + pi_interval_s(e, st);
            return;
        }
    }
    /* --pi-backoff-ms: a fast probe after slow ones means a competitor that comes and
     * goes (an on-off load with a 10 ms period: 3 slow probes in a row do not fit in its
     * on-period, and each slow probe handed it a slice: beside LADM-PI it got ~2.5x the
     * CPU it got beside FM, docs/engine-benchmarks.md). Probe less often then. */
    double max_ms = e->detector_opt[PI_BACKOFF_MS].d;
    int positive = slow || preempted;
    if (max_ms > 0 && !positive && t->suspect_checks > 0) {
        double grown = st->backoff_ms > 0 ? 2 * st->backoff_ms : 2 * e->detector_opt[PI_INTERVAL_MS].d;
        st->backoff_ms = grown > max_ms ? max_ms : (grown < 2 ? 2 : grown); /* 2: from --pi-interval-ms 0 */
    }
    st->next_s = now + pi_interval_s(e, st);
    /* --pi-hold-ms: the run of slow probes must also have lasted that long. A kernel thread
     * (DAMON's kdamond on the 2-core VM) stays runnable for 6-28 ms a few times a minute,
     * long enough for 3 probes in a row; a CPU-bound competitor stays for good. */
    if (positive && t->suspect_checks == 0) st->streak_start_s = now;
    int held = !positive || (air_wall() - st->streak_start_s) * 1e3 >= e->detector_opt[PI_HOLD_MS].d;
    air_detect_confirm(t, positive, held ? 3 : UINT32_MAX);
    if (atomic_load(&t->want_deactivate)) st->backoff_ms = 0;
}

/* Its probes while the thread was active: how often it looked, how many were slow and in
 * how many of those it kept its CPU, and how long its yields gave the CPU away. */
static void pi_report(const air_thread *t, air_json *j)
{
    const pi_state *st = pi_of(t);
    air_json_u64(j, "pi_probes", st->probes);
    air_json_u64(j, "pi_slow_probes", st->slow_probes);
    air_json_u64(j, "pi_slow_kept_cpu", st->slow_kept_cpu);
    air_json_f64(j, "pi_probe_s", st->probe_s);
}

/* Three slow probes --pi-interval-ms apart, lasting --pi-hold-ms in all. */
static double pi_confirm_s(const air_engine *e)
{
    double probes_ms = 3 * e->detector_opt[PI_INTERVAL_MS].d, hold_ms = e->detector_opt[PI_HOLD_MS].d;
    return (probes_ms > hold_ms ? probes_ms : hold_ms) * 1e-3;
}

const air_detector air_detector_pi = {
    { "pi", "performance indicator: a timed burst of sched_yield() slower than --pi-threshold-us, three probes in a row lasting --pi-hold-ms", 1, pi_options },
    .state_size = sizeof(pi_state),
    .check = pi_check,
    .report = pi_report,
    .confirm_s = pi_confirm_s,
};
