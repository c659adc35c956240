/* Run-queue detection (beyond the paper): the kernel accounts, per thread, the time it
 * spent runnable but waiting for a CPU (/proc/thread-self/schedstat, second field, ns).
 * When that wait is more than --rq-threshold of the wall time over a window, a
 * competitor holds this thread's CPU and the thread asks to be deactivated. The window is
 * at least RQ_MIN_WINDOW_S: shorter windows are below the scheduler's own granularity. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine.h"

#define RQ_MIN_WINDOW_S 0.004

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
    t->rq_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    t->rq_t0 = air_wall();
    if (t->rq_fd < 0 || read_wait(t->rq_fd, &t->rq_wait0)) t->rq_fd = -1;
    return 0;
}

static void rq_check(air_engine *e, air_thread *t)
{
    if (t->rq_fd < 0) return;
    double now = air_wall();
    double dt = now - t->rq_t0;
    if (dt < RQ_MIN_WINDOW_S) return;
    uint64_t w;
    if (read_wait(t->rq_fd, &w)) return;
    double share = (double)(w - t->rq_wait0) * 1e-9 / dt;
    t->rq_wait0 = w;
    t->rq_t0 = now;
    /* a window of a few ms can catch one wake-up of another task: 2 in a row */
    air_detect_confirm(t, share > e->opt->rq_threshold, 2);
}

static int rq_usable(char *err, size_t errlen)
{
    if (access("/proc/thread-self/schedstat", R_OK) == 0) return 0;
    snprintf(err, errlen, "--detector rq needs /proc/thread-self/schedstat, which this kernel does not provide (use another detector)");
    return -1;
}

const air_detector air_detector_rq = {
    { "rq", "run-queue wait (beyond the paper): the kernel's schedstat wait share above --rq-threshold", 0 },
    rq_usable, rq_start, rq_check,
};
