/* RQ's rule on made-up windows (10 ms each, threshold 0.3), among them the pattern measured
 * beside a CPU-bound load on 28 Nov: the thread waited 0.29, 0.71, 0.29, ... of successive
 * windows (EEVDF's slices alias with the windows), which the rule before, every one of 5
 * windows in a row above the threshold, never accepted. Exit status: failures. */
#include <stdio.h>
#include "rq_rule.h"

static int failures;

/* The window (0-based) at which the rule first fires on shares[0..n), or -1. */
static int fires_at(const double *shares, int n)
{
    air_rq_windows w = { { 0 }, { 0 } };
    uint32_t streak = 0;
    for (int i = 0; i < n; i++)
        if (air_rq_window(&w, &streak, shares[i] * 0.010, 0.010, 0.3)) return i;
    return -1;
}

static void expect(const char *what, const double *shares, int n, int want)
{
    int got = fires_at(shares, n);
    if (got != want) {
        failures++;
        fprintf(stderr, "FAIL %s: fires at window %d, wanted %d\n", what, got, want);
    }
}

int main(void)
{
    double half[12], aliased[12], low[12], burst[40], idle_then_load[12], load_gap[12];
    for (int i = 0; i < 12; i++) {
        half[i] = 0.5;                                   /* a steady half share */
        aliased[i] = i % 2 ? 0.71 : 0.29;                /* measured: the same half, aliased */
        low[i] = 0.25;                                   /* a lighter competitor all along */
        idle_then_load[i] = i < 4 ? 0.0 : 0.5;
        load_gap[i] = i == 3 ? 0.1 : 0.5;                /* it left for a window: start again */
    }
    for (int i = 0; i < 40; i++) burst[i] = i % 10 < 3 ? 0.5 : 0.0; /* 15 ms busy every 100 ms */
    expect("a steady half share", half, 12, 4);
    expect("0.29 / 0.71 alternating (the aliased half share)", aliased, 12, 4);
    expect("0.25 all along (below the threshold)", low, 12, -1);
    expect("a burst of 3 windows every 10", burst, 40, -1);
    expect("idle, then a load from window 4", idle_then_load, 12, 8);
    expect("a window without the load restarts the count", load_gap, 12, 8);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("unit_rq_rule: steady, aliased, low, burst, late start, gap: all passed\n");
    return failures ? 1 : 0;
}
