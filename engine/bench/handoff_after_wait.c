/* How long a spinning waiter takes to see a release, by how long it had waited: the
 * evidence behind judging a run's slow barrier hand-offs against its own configuration
 * (workflows/placement.py, NearLevel.usual_share). A releaser pinned to CPU 0 works
 * --wait-us, stamps CLOCK_MONOTONIC and bumps a counter; a waiter pinned to CPU 1 spins on
 * the counter (with the PAUSE hint, or without: --pause 0) and records release-to-return,
 * as the engine's GVT barrier does (air_thread.handoff_hist). Prints the percentiles and the
 * share at or above --slow-ns. Run it alone; interleave the waits you compare, e.g.
 *   for r in 1 2 3; do for w in 80 4000; do engine/build/handoff_after_wait --wait-us $w; done; done
 * On the Xeon host of the a185202 pair (30 Nov, 6 interleaved rounds of 1.2 s each, machine
 * otherwise idle) the share >= 288 ns was 0.07-0.31 after 80 us waits and 0.97-1.00 after
 * 4 ms ones; without PAUSE 0.03-0.27 and 0.87-1.00. Long waits see slow hand-offs wherever
 * the vCPUs sit, with or without PAUSE (so not the hypervisor's pause-loop exiting): the
 * engine's configurations with long rounds (EPG 4000: ~4 ms of work a round) have a share
 * of slow hand-offs of their own. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tools/cpu_and_clock.h"

static _Atomic unsigned long generation;
static _Atomic double released_at;
static _Atomic int waiter_ready;
static int use_pause = 1, rounds;
static double *handoff_ns;

static double now_s(void) { return seconds(CLOCK_MONOTONIC); }

static void *waiter(void *arg)
{
    (void)arg;
    pin(1);
    for (int i = 0; i < rounds; i++) {
        unsigned long gen = atomic_load(&generation);
        atomic_store(&waiter_ready, 1);
        while (atomic_load_explicit(&generation, memory_order_acquire) == gen) {
            if (use_pause) __builtin_ia32_pause();
        }
        handoff_ns[i] = (now_s() - atomic_load(&released_at)) * 1e9;
    }
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    double wait_us = 80, seconds = 1.2, slow_ns = 288;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc || strncmp(argv[i], "--", 2) != 0) goto usage;
        double v = atof(argv[i + 1]);
        if (!strcmp(argv[i], "--wait-us") && v > 0) wait_us = v;
        else if (!strcmp(argv[i], "--seconds") && v > 0) seconds = v;
        else if (!strcmp(argv[i], "--slow-ns") && v > 0) slow_ns = v;
        else if (!strcmp(argv[i], "--pause")) use_pause = v != 0;
        else goto usage;
    }
    rounds = (int)(seconds * 1e6 / wait_us);
    if (rounds < 10) rounds = 10;
    handoff_ns = calloc((size_t)rounds, sizeof *handoff_ns);
    if (!handoff_ns) return 1;
    pin(0);
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    for (int i = 0; i < rounds; i++) {
        while (!atomic_load(&waiter_ready)) {}
        atomic_store(&waiter_ready, 0);
        double until = now_s() + wait_us * 1e-6;
        while (now_s() < until) {}
        atomic_store(&released_at, now_s());
        atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    }
    pthread_join(t, NULL);
    int slow = 0;
    for (int i = 0; i < rounds; i++) slow += handoff_ns[i] >= slow_ns;
    qsort(handoff_ns, (size_t)rounds, sizeof *handoff_ns, cmp);
    printf("wait %g us, pause %d: %d hand-offs, p10 %.0f / p50 %.0f / p90 %.0f ns, >= %g ns: %.2f\n", wait_us,
           use_pause, rounds, handoff_ns[rounds / 10], handoff_ns[rounds / 2], handoff_ns[rounds * 9 / 10], slow_ns,
           (double)slow / rounds);
    return 0;
usage:
    fprintf(stderr, "usage: handoff_after_wait [--wait-us 80] [--pause 1|0] [--seconds 1.2] [--slow-ns 288]\n");
    return 2;
}
