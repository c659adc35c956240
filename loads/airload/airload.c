/* airload: the paper's interfering processes, measuring themselves.
 *
 *   airload cpu   [--threads N] [--duration S] [--start-delay S]
 *   airload onoff --ctp-us N [--threads N] [--duration S] [--start-delay S]
 *
 * cpu is a tight computation loop (the paper's "CPU-intensive process"); onoff computes
 * for CTP microseconds, then sleeps for CTP microseconds, repeatedly (the paper's on-off
 * model, section 8.6). Each thread counts work units (blocks of WORK_BLOCK arithmetic
 * steps). At the end of --duration, or on SIGTERM/SIGINT, it prints one JSON line with its
 * throughput and, for onoff, the on and off times it really achieved (a sleep of 10 us
 * takes longer than 10 us: the figures say so rather than pretend). Exit 0; bad input:
 * one line on stderr, exit 2. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define WORK_BLOCK 2000 /* ~1-2 us of work: fine enough for CTP 1 us to be honest */

typedef struct {
    uint64_t units;
    double on_s, off_s;
    uint64_t cycles;
} load_stats;

static atomic_int stop_flag;
static int onoff_mode;
static double ctp_s;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One work unit. The result feeds the next call, so the compiler cannot drop it. */
static uint64_t work_unit(uint64_t x)
{
    for (int i = 0; i < WORK_BLOCK; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}

static void *load_thread(void *arg)
{
    load_stats *st = arg;
    uint64_t x = (uint64_t)(uintptr_t)arg;
    if (!onoff_mode) {
        while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
            x = work_unit(x);
            st->units++;
        }
    } else {
        while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
            double t0 = now_s(), t1;
            do {
                x = work_unit(x);
                st->units++;
                t1 = now_s();
            } while (t1 - t0 < ctp_s && !atomic_load_explicit(&stop_flag, memory_order_relaxed));
            st->on_s += t1 - t0;
            if (atomic_load_explicit(&stop_flag, memory_order_relaxed)) break;
            struct timespec d = {(time_t)ctp_s, (long)((ctp_s - floor(ctp_s)) * 1e9)};
            nanosleep(&d, NULL);
            st->off_s += now_s() - t1;
            st->cycles++;
        }
    }
    if (x == 42) fputc(' ', stderr); /* keeps x alive */
    return NULL;
}

static int usage_error(const char *msg, const char *val)
{
    fprintf(stderr, "airload: %s%s%s (see airload --help)\n", msg, val ? ": " : "", val ? val : "");
    return 2;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0) return -1;
    *out = v;
    return 0;
}

static const char *HELP =
    "airload - the lab's interfering processes, each measuring its own progress\n\n"
    "usage: airload cpu   [--threads N] [--duration S] [--start-delay S]\n"
    "       airload onoff --ctp-us N [--threads N] [--duration S] [--start-delay S]\n\n"
    "  cpu            a tight computation loop on each thread (the paper's CPU-bound load)\n"
    "  onoff          compute for --ctp-us microseconds, sleep as long, repeat (paper 8.6)\n"
    "  --ctp-us N     onoff: the on (and off) period in microseconds, > 0\n"
    "  --threads N    threads, each a copy of the load [1]\n"
    "  --duration S   stop after S seconds [run until SIGTERM/SIGINT]\n"
    "  --start-delay S  wait S seconds before starting [0]\n\n"
    "At the end it prints one JSON line: kind, threads, wall_s, work_units, throughput\n"
    "(work units/s; a unit is a fixed block of arithmetic), unit, and for onoff ctp_us,\n"
    "on_s, off_s, cycles, mean_on_us, mean_off_us, busy_share (measured, not assumed).\n\n"
    "Example: airload onoff --ctp-us 1000 --duration 3\n";

int main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(HELP, stdout);
        return 0;
    }
    if (argc < 2) return usage_error("missing the kind (cpu or onoff)", NULL);
    const char *kind = argv[1];
    if (strcmp(kind, "cpu") && strcmp(kind, "onoff")) return usage_error("unknown kind", kind);
    onoff_mode = !strcmp(kind, "onoff");
    double threads_d = 1, duration = -1, delay = 0, ctp_us = -1;
    for (int i = 2; i < argc; i++) {
        const char *opt = argv[i];
        if (!strcmp(opt, "--help")) { fputs(HELP, stdout); return 0; }
        if (i + 1 >= argc) return usage_error("missing a value for", opt);
        double v;
        if (parse_double(argv[i + 1], &v)) return usage_error("not a non-negative number", argv[i + 1]);
        if (!strcmp(opt, "--threads")) threads_d = v;
        else if (!strcmp(opt, "--duration")) duration = v;
        else if (!strcmp(opt, "--start-delay")) delay = v;
        else if (!strcmp(opt, "--ctp-us")) ctp_us = v;
        else return usage_error("unknown option", opt);
        i++;
    }
    if (threads_d < 1 || threads_d > 4096 || threads_d != floor(threads_d))
        return usage_error("--threads must be an integer in [1, 4096]", NULL);
    if (onoff_mode && ctp_us <= 0) return usage_error("onoff needs --ctp-us N with N > 0", NULL);
    if (!onoff_mode && ctp_us >= 0) return usage_error("--ctp-us applies to onoff only", NULL);
    int nthreads = (int)threads_d;
    /* The default 50 us timer slack would stretch every short off period; ask for 1 ns. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    ctp_s = ctp_us * 1e-6;

    /* Signals go to the main thread only (sigtimedwait below); workers poll stop_flag. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    if (delay > 0) {
        struct timespec d = {(time_t)delay, (long)((delay - floor(delay)) * 1e9)};
        int got;
        while ((got = sigtimedwait(&sigs, NULL, &d)) < 0 && errno == EINTR) {} /* see below */
        if (got > 0) duration = 0; /* stopped before it started */
    }

    load_stats *st = calloc((size_t)nthreads, sizeof *st);
    pthread_t *tid = calloc((size_t)nthreads, sizeof *tid);
    if (!st || !tid) return usage_error("out of memory", NULL);
    double t0 = now_s();
    int started = 0;
    if (duration != 0)
        for (; started < nthreads; started++)
            if (pthread_create(&tid[started], NULL, load_thread, &st[started])) break;
    if (duration < 0) {
        while (sigwaitinfo(&sigs, NULL) < 0 && errno == EINTR) {}
    } else if (duration > 0) {
        /* Wait for a signal or the deadline. Being stopped and continued (SIGSTOP/SIGCONT,
         * as SLURM's gang scheduler does) interrupts sigtimedwait with EINTR: wait again
         * for the time left, so --duration is wall time from the start. */
        for (;;) {
            double left = duration - (now_s() - t0);
            if (left <= 0) break;
            struct timespec d = {(time_t)left, (long)((left - floor(left)) * 1e9)};
            if (sigtimedwait(&sigs, NULL, &d) >= 0 || errno == EAGAIN) break;
        }
    }
    atomic_store(&stop_flag, 1);
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    double wall = now_s() - t0;

    load_stats sum = {0};
    for (int i = 0; i < nthreads; i++) {
        sum.units += st[i].units;
        sum.on_s += st[i].on_s;
        sum.off_s += st[i].off_s;
        sum.cycles += st[i].cycles;
    }
    printf("{\"kind\": \"%s\", \"threads\": %d, \"wall_s\": %.6f, \"work_units\": %llu, "
           "\"throughput\": %.3f, \"unit\": \"work units/s\"",
           kind, nthreads, wall, (unsigned long long)sum.units, wall > 0 ? (double)sum.units / wall : 0.0);
    if (onoff_mode) {
        double per = sum.cycles ? 1e6 / (double)sum.cycles : 0;
        printf(", \"ctp_us\": %.3f, \"on_s\": %.6f, \"off_s\": %.6f, \"cycles\": %llu, "
               "\"mean_on_us\": %.3f, \"mean_off_us\": %.3f, \"busy_share\": %.4f",
               ctp_us, sum.on_s, sum.off_s, (unsigned long long)sum.cycles, sum.on_s * per,
               sum.off_s * per, sum.on_s + sum.off_s > 0 ? sum.on_s / (sum.on_s + sum.off_s) : 0.0);
    }
    printf("}\n");
    fflush(stdout);
    free(st);
    free(tid);
    return 0;
}
