/* Run-queue detection (beyond the paper): the kernel accounts, per thread, the time it
 * spent runnable but waiting for a CPU (/proc/thread-self/schedstat, second field, ns).
 * When that wait is more than --rq-threshold of the wall time over the last AIR_RQ_CONFIRM
 * windows of at least RQ_MIN_WINDOW_S (50 ms), and the competitor was there in each of
 * them (a wait of more than half the threshold), the thread asks to be deactivated
 * (rq_rule.c).
 * A short burst of another task is not a competitor: under EEVDF a woken task shares the
 * CPU in 3 ms slices, so a 15 ms burst every 100 ms (13% of a core) made a pinned thread
 * wait > 30% of two 4 ms windows ~20 times a 3 s no-load run; a workflow's own bursts did
 * the same in 11 of 12 no-load runs of the 40ac11e pair. A CPU-bound load makes it wait
 * 33-50% for as long as it runs.
 * Why the mean and not every window above the threshold (the rule before 28 Nov): the
 * slices alias with the 10 ms windows. Sharing its CPU with a CPU-bound load, a thread
 * waited 0.29, 0.71, 0.29, 0.71, ... of successive windows (half the time, as it should),
 * and a rule that wants five windows in a row above 0.3 never fired: ADM with rq beside
 * one CPU-bound load did not deactivate for 0.2-1 s in about a third of the adaptation
 * test's runs. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"
#include "rq_rule.h"

#define RQ_MIN_WINDOW_S 0.010

enum { RQ_THRESHOLD, RQ_NOPTS };

static const air_option_def rq_options[] = {
    [RQ_THRESHOLD] = { .name = "rq-threshold", .metavar = "F", .def = "0.3", .kind = AIR_OPT_DOUBLE, .min = 0, .max = 1,
                       .help = "rq: deactivate when the share of time spent waiting for a CPU exceeds F over 50 ms (5 windows of 10 ms, each above F/2)" },
    [RQ_NOPTS] = { 0 },
};

typedef struct rq_state {
    int fd;                   /* /proc/thread-self/schedstat, when has_fd */
    int has_fd;               /* 0 until detection starts, or when the file cannot be read */
    uint64_t wait0;           /* the runnable wait (ns) at the window's start, */
    double t0;                /* and its wall time */
    air_rq_windows windows;
} rq_state;

static rq_state *rq_of(const air_thread *t) { return t->detector_state; }

static int read_wait(int fd, uint64_t *wait_ns)
{
    char buf[128];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *p;
    strtoull(buf, &p, 10);
    *wait_ns = strtoull(p, NULL, 10);
    return 0;
}

static int rq_start(air_engine *e, air_thread *t)
{
    (void)e;
    rq_state *st = rq_of(t);
    st->fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    st->t0 = air_wall();
    st->has_fd = st->fd >= 0 && read_wait(st->fd, &st->wait0) == 0;
    if (!st->has_fd && st->fd >= 0) close(st->fd);
    return 0;
}

static void rq_thread_end(air_thread *t)
{
    if (rq_of(t)->has_fd) close(rq_of(t)->fd);
}

static void rq_check(air_engine *e, air_thread *t)
{
    rq_state *st = rq_of(t);
    if (!st->has_fd) return;
    double now = air_wall();
    double dt = now - st->t0;
    if (dt < RQ_MIN_WINDOW_S) return;
    uint64_t w;
    if (read_wait(st->fd, &w)) return;
    double wait_s = (double)(w - st->wait0) * 1e-9;
    st->wait0 = w;
    st->t0 = now;
    /* suspect_checks: the windows in a row with the competitor there (the engine zeroes
     * it when the detector starts and when the thread comes back) */
    if (air_rq_window(&st->windows, &t->suspect_checks, wait_s, dt, e->detector_opt[RQ_THRESHOLD].d))
        atomic_store(&t->want_deactivate, 1);
}

static int rq_usable(char *err, size_t errlen)
{
    if (access("/proc/thread-self/schedstat", R_OK) == 0) return 0;
    snprintf(err, errlen, "--detector rq needs /proc/thread-self/schedstat, which this kernel does not provide (use another detector)");
    return -1;
}

/* AIR_RQ_CONFIRM windows of at least RQ_MIN_WINDOW_S with the competitor in each. */
static double rq_confirm_s(const air_engine *e)
{
    (void)e;
    return AIR_RQ_CONFIRM * RQ_MIN_WINDOW_S;
}

const air_detector air_detector_rq = {
    { "rq", "run-queue wait (beyond the paper): the kernel's schedstat wait share above --rq-threshold over 50 ms", 0, rq_options },
    .state_size = sizeof(rq_state),
    .usable = rq_usable,
    .thread_start = rq_start,
    .check = rq_check,
    .thread_end = rq_thread_end,
    .confirm_s = rq_confirm_s,
};
