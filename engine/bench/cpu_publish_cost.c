/* What an adaptive unpinned thread pays per scheduler iteration to publish its CPU
 * (thread_loop.c: sched_getcpu() and two relaxed atomic stores, so RAP's probe can avoid the
 * active threads' CPUs). Times --calls iterations of exactly that against the same loop
 * storing a constant, --rounds times, and prints the extra nanoseconds per iteration (the
 * lowest round and the median). Multiplied by a run's iterations per thread-second (the
 * engine JSON's pes[].iterations over wall_s and threads) it bounds the share of the run it
 * costs, with none of the run-to-run noise of timing two engines against each other.
 *   engine/build/cpu_publish_cost [--calls 20000000] [--rounds 7] */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Atomic int cpu;
static _Atomic uint64_t beat;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* noinline: the two loops differ only in the call, not in what the compiler may hoist */
__attribute__((noinline)) static double loop(long calls, int publish)
{
    double t0 = now_ns();
    for (long i = 0; i < calls; i++) {
        atomic_store_explicit(&cpu, publish ? sched_getcpu() : 0, memory_order_relaxed);
        atomic_store_explicit(&beat, (uint64_t)i, memory_order_relaxed);
    }
    return (now_ns() - t0) / (double)calls;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long calls = 20000000;
    int rounds = 7;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: cpu_publish_cost [--calls N] [--rounds R]\n"
                   "extra ns per iteration of publishing the CPU (sched_getcpu + 2 relaxed stores)\n");
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "cpu_publish_cost: %s needs a value\n", argv[i]);
            return 2;
        }
        char *end;
        long v = strtol(argv[i + 1], &end, 10);
        if (*end || v < 1) {
            fprintf(stderr, "cpu_publish_cost: %s: not a positive integer: %s\n", argv[i], argv[i + 1]);
            return 2;
        }
        if (!strcmp(argv[i], "--calls")) calls = v;
        else if (!strcmp(argv[i], "--rounds") && v <= 1000) rounds = (int)v;
        else {
            fprintf(stderr, "cpu_publish_cost: unknown option %s (see --help)\n", argv[i]);
            return 2;
        }
        i++;
    }
    double *extra = malloc(sizeof *extra * (size_t)rounds);
    if (!extra) return 1;
    for (int r = 0; r < rounds; r++) {  /* interleaved: plain, then publishing, each round */
        double plain = loop(calls, 0);
        extra[r] = loop(calls, 1) - plain;
    }
    qsort(extra, (size_t)rounds, sizeof *extra, cmp);
    printf("{\"calls\": %ld, \"rounds\": %d, \"extra_ns_lowest\": %.3f, \"extra_ns_median\": %.3f, "
           "\"extra_ns_highest\": %.3f}\n", calls, rounds, extra[0], extra[rounds / 2], extra[rounds - 1]);
    free(extra);
    return 0;
}
