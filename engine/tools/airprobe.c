/* airprobe: how fast this machine's CPUs are right now, in a few tens of milliseconds.
 *
 *   airprobe [--steps N] [--cpus LIST]
 *
 * A virtual machine can run slower for minutes with no work of its own to show for it
 * (the host's other guests share its cores and caches: no foreign CPU, often no steal);
 * every engine run in such a phase takes longer per event. The trial runner calls this
 * before and after each run so the phase is seen, not guessed (workflows/machine_speed.py).
 *
 * On every CPU at once (one thread pinned to each, as the engine's threads run) it times
 * two fixed pieces of work on the thread's own CPU clock, which preemption does not
 * advance: `chase`, a pointer chase through a 2 MiB random cycle (cache and memory, like
 * the engine's event pools and heaps), and `compute`, a dependent multiply-add chain (the
 * core alone). The first two CPUs then pass a cache line back and forth (`pingpong`: the
 * round trip between two vCPUs, which the engine's GVT barrier pays every round); its
 * median over chunks hides a chunk in which one side was preempted.
 *
 * Prints one JSON line: {"cpus": [{"cpu": 0, "chase_ns": ..., "compute_ns": ...}, ...],
 * "pingpong_ns": ..., "wall_s": ...}; nanoseconds per step. Exit 0; bad input: one line on
 * stderr, exit 2; a CPU it cannot pin to: exit 3. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cpu_and_clock.h"

#define CHASE_BYTES (2u << 20)
#define PINGPONG_CHUNKS 15
#define PINGPONG_PER_CHUNK 400
#define MAX_CPUS 1024

typedef struct {
    int cpu;
    long steps;
    double chase_ns, compute_ns;
    int failed; /* the error pinning to cpu gave (or ENOMEM), 0 when it ran */
} probe_thread;

static pthread_barrier_t start_line;

/* A random single cycle through n slots (Sattolo), so the chase visits every slot once
 * per lap and no prefetcher can guess the next one. */
static uint32_t *make_cycle(size_t n, uint64_t seed)
{
    /* Small pages always: a 2 MiB buffer sometimes got one transparent huge page and
     * sometimes 512 small ones, and the chase took 10 or 21 ns a step by that alone. */
    uint32_t *next = mmap(NULL, n * sizeof *next, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (next == MAP_FAILED) return NULL;
#ifdef MADV_NOHUGEPAGE
    madvise(next, n * sizeof *next, MADV_NOHUGEPAGE);
#endif
    for (size_t i = 0; i < n; i++) next[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t j = (size_t)((seed >> 33) % i);
        uint32_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
    return next;
}

static volatile uint64_t sink; /* results land here, so the work is not optimised away */

static void *probe_cpu(void *arg)
{
    probe_thread *p = arg;
    size_t n = CHASE_BYTES / sizeof(uint32_t);
    uint32_t *next = make_cycle(n, 0x9e3779b97f4a7c15ULL + (uint64_t)p->cpu);
    p->failed = next ? pin(p->cpu) : ENOMEM;
    pthread_barrier_wait(&start_line); /* every CPU measures at the same time */
    if (p->failed) {
        if (next) munmap(next, n * sizeof *next);
        return NULL;
    }
    uint32_t at = 0;
    for (size_t i = 0; i < n; i++) at = next[at]; /* one lap to warm the caches */
    double t0 = seconds(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < p->steps; i++) at = next[at];
    double t1 = seconds(CLOCK_THREAD_CPUTIME_ID);
    uint64_t x = at;
    for (long i = 0; i < p->steps; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    double t2 = seconds(CLOCK_THREAD_CPUTIME_ID);
    sink = x;
    p->chase_ns = (t1 - t0) * 1e9 / (double)p->steps;
    p->compute_ns = (t2 - t1) * 1e9 / (double)p->steps;
    munmap(next, n * sizeof *next);
    return NULL;
}

static _Alignas(64) atomic_int ball;
static atomic_int pingpong_failed; /* either side: the other must not wait for the ball */

typedef struct {
    int cpu, me;
    double chunk_ns[PINGPONG_CHUNKS];
    int failed;
} pingpong_side;

static void *pingpong(void *arg)
{
    pingpong_side *s = arg;
    s->failed = pin(s->cpu);
    if (s->failed) atomic_store(&pingpong_failed, 1);
    pthread_barrier_wait(&start_line);
    if (atomic_load(&pingpong_failed)) return NULL;
    for (int c = 0; c < PINGPONG_CHUNKS; c++) {
        double t0 = seconds(CLOCK_MONOTONIC);
        for (int i = 0; i < PINGPONG_PER_CHUNK; i++) {
            /* side 0 serves on even counts, side 1 on odd ones: a round trip is two passes */
            int want = 2 * (c * PINGPONG_PER_CHUNK + i) + s->me;
            while (atomic_load_explicit(&ball, memory_order_acquire) != want) {
            }
            atomic_store_explicit(&ball, want + 1, memory_order_release);
        }
        s->chunk_ns[c] = (seconds(CLOCK_MONOTONIC) - t0) * 1e9 / PINGPONG_PER_CHUNK;
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(const char *why)
{
    fprintf(stderr, "airprobe: %s (usage: airprobe [--steps N] [--cpus 0,1,...])\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    long steps = 1000000;
    int cpus[MAX_CPUS], ncpu = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("airprobe [--steps N] [--cpus LIST]: time a pointer chase, a multiply chain and a\n"
                   "cache-line ping-pong on this machine's CPUs (all allowed ones by default); one\n"
                   "JSON line of nanoseconds per step. Used by the trial runner to see a slow phase\n"
                   "of a virtual machine (workflows/machine_speed.py).\n");
            return 0;
        } else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            char *end;
            steps = strtol(argv[++i], &end, 10);
            if (*end || steps < 1000 || steps > 1000000000L) return usage("--steps takes a count of 1000 or more");
        } else if (!strcmp(argv[i], "--cpus") && i + 1 < argc) {
            for (char *tok = strtok(argv[++i], ","); tok; tok = strtok(NULL, ",")) {
                char *end;
                long c = strtol(tok, &end, 10);
                if (*end || c < 0 || c >= CPU_SETSIZE || ncpu == MAX_CPUS) return usage("--cpus takes CPU numbers, e.g. 0,1");
                cpus[ncpu++] = (int)c;
            }
        } else {
            return usage("unknown argument");
        }
    }
    if (ncpu == 0) {
        cpu_set_t allowed;
        if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return usage("cannot read the allowed CPUs");
        for (int c = 0; c < CPU_SETSIZE && ncpu < MAX_CPUS; c++)
            if (CPU_ISSET(c, &allowed)) cpus[ncpu++] = c;
    }
    double wall0 = seconds(CLOCK_MONOTONIC);

    probe_thread *pt = calloc((size_t)ncpu, sizeof *pt);
    pthread_t *tid = calloc((size_t)ncpu, sizeof *tid);
    if (!pt || !tid) return usage("out of memory");
    pthread_barrier_init(&start_line, NULL, (unsigned)ncpu);
    for (int i = 0; i < ncpu; i++) {
        pt[i] = (probe_thread){.cpu = cpus[i], .steps = steps};
        if (pthread_create(&tid[i], NULL, probe_cpu, &pt[i]) != 0) return usage("cannot start a thread");
    }
    int failed = 0, failed_cpu = -1;
    for (int i = 0; i < ncpu; i++) {
        pthread_join(tid[i], NULL);
        if (pt[i].failed && !failed) failed = pt[i].failed, failed_cpu = pt[i].cpu;
    }
    pthread_barrier_destroy(&start_line);

    double pingpong_ns = -1;
    if (!failed && ncpu >= 2) {
        pingpong_side side[2] = {{.cpu = cpus[0], .me = 0}, {.cpu = cpus[1], .me = 1}};
        atomic_store(&ball, 0);
        pthread_barrier_init(&start_line, NULL, 2);
        pthread_t pp[2];
        for (int i = 0; i < 2; i++)
            if (pthread_create(&pp[i], NULL, pingpong, &side[i]) != 0) return usage("cannot start a thread");
        for (int i = 0; i < 2; i++) pthread_join(pp[i], NULL);
        pthread_barrier_destroy(&start_line);
        for (int i = 0; i < 2; i++)
            if (side[i].failed && !failed) failed = side[i].failed, failed_cpu = side[i].cpu;
        qsort(side[0].chunk_ns, PINGPONG_CHUNKS, sizeof(double), cmp_double);
        pingpong_ns = side[0].chunk_ns[PINGPONG_CHUNKS / 2];
    }
    if (failed) {
        fprintf(stderr, "airprobe: cannot pin a thread to CPU %d (%s)\n", failed_cpu, strerror(failed));
        return 3;
    }

    printf("{\"cpus\": [");
    for (int i = 0; i < ncpu; i++)
        printf("%s{\"cpu\": %d, \"chase_ns\": %.3f, \"compute_ns\": %.4f}", i ? ", " : "", pt[i].cpu,
               pt[i].chase_ns, pt[i].compute_ns);
    printf("], \"pingpong_ns\": ");
    if (pingpong_ns < 0)
        printf("null");
    else
        printf("%.1f", pingpong_ns);
    printf(", \"steps\": %ld, \"wall_s\": %.4f}\n", steps, seconds(CLOCK_MONOTONIC) - wall0);
    free(pt);
    free(tid);
    return 0;
}
