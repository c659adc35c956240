/* Measures how long a sched_yield() takes on this machine, the signal behind the pi
 * detector and the rap probe: prints percentiles over --samples probes, each after
 * ~100 us of computation (as between two detector checks), or after sleeping --sleep-us
 * (as a rap probe right after waking). Run it alone and next to a
 * CPU-bound process pinned to the same CPU to see the two regimes, e.g.
 *   taskset -c 0 engine/build/yield_probe            # no competitor
 *   taskset -c 0 engine/build/airload cpu & taskset -c 0 engine/build/yield_probe */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int n = 2000, sleep_us = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--samples") == 0) n = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--sleep-us") == 0) sleep_us = atoi(argv[i + 1]);
    }
    if (n < 10) n = 10;
    double *v = malloc((size_t)n * sizeof *v);
    volatile unsigned long sink = 0;
    for (int i = 0; i < n; i++) {
        if (sleep_us > 0) { /* probe right after waking, as a rap probe does */
            struct timespec ts = { sleep_us / 1000000, (long)(sleep_us % 1000000) * 1000 };
            nanosleep(&ts, NULL);
        } else {
            double w = now_us();
            while (now_us() - w < 100) sink++;
        }
        double t0 = now_us();
        sched_yield();
        v[i] = now_us() - t0;
    }
    qsort(v, (size_t)n, sizeof *v, cmp);
    printf("sched_yield us over %d probes: min %.2f p10 %.2f median %.2f p90 %.2f p99 %.2f max %.2f\n", n,
           v[0], v[n / 10], v[n / 2], v[n * 9 / 10], v[n * 99 / 100], v[n - 1]);
    free(v);
    return 0;
}
