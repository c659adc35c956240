/* Unit tests for the engine's data structures: the SPSC queue, the pending-event heap,
 * the per-LP random stream and its restore, and the event pool. Each check prints what
 * failed; the exit status is the number of failures (0 = pass). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event_pool.h"
#include "pending_heap.h"
#include "rng.h"
#include "spsc_queue.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

/* FIFO order across many block boundaries, interleaved pushes and pops, empty = NULL. */
static void test_spsc(void)
{
    air_spsc q;
    CHECK(air_spsc_init(&q) == 0, "spsc init");
    CHECK(air_spsc_pop(&q) == NULL, "new queue is not empty");
    uintptr_t next_in = 1, next_out = 1;
    const uintptr_t total = 10 * AIR_SPSC_BLOCK + 17;
    while (next_out < total) {
        int burst = (int)(next_in % 700); /* bursts longer than a block, and short ones */
        for (int i = 0; i < burst && next_in < total; i++) air_spsc_push(&q, (void *)next_in++);
        for (int i = 0; i < burst / 2 + 1 && next_out < next_in; i++) {
            uintptr_t got = (uintptr_t)air_spsc_pop(&q);
            CHECK(got == next_out, "spsc order: got %lu, expected %lu",
                  (unsigned long)got, (unsigned long)next_out);
            next_out++;
        }
        if (failures) break;
    }
    CHECK(air_spsc_pop(&q) == NULL, "drained queue is not empty");
    air_spsc_destroy(&q);
}

/* The heap pops in the total order (ts, src_lp, send_seq), ties included, whatever the
 * order of pushes and interleaved pops. */
static void test_heap(void)
{
    enum { N = 6000 };
    air_event *ev = calloc(N, sizeof *ev);
    air_heap h;
    air_heap_init(&h);
    uint64_t s = air_rng_seed(42, 0);
    /* A PE's pattern: pushes interleaved with pops, each new event later than the last
     * one popped (small integer increments: many equal timestamps, and equal senders). */
    air_event *prev = NULL;
    size_t popped = 0;
    for (int i = 0; i < N; i++) {
        ev[i].ts = (prev ? prev->ts : 0.0) + 1.0 + (double)air_rng_below(&s, 3);
        ev[i].src_lp = air_rng_below(&s, 4);
        ev[i].send_seq = (uint64_t)i;
        air_heap_push(&h, &ev[i]);
        if (i % 3 == 2) {
            CHECK(air_heap_min_ts(&h) == air_heap_min(&h)->ts, "min_ts disagrees with min");
            air_event *e = air_heap_pop(&h);
            if (prev) CHECK(air_ev_before(prev, e), "interleaved pop out of order at ts %g", e->ts);
            prev = e;
            popped++;
        }
    }
    CHECK(h.n == (size_t)N - popped, "heap size %zu after %zu pops", h.n, popped);
    while (h.n) {
        air_event *e = air_heap_pop(&h);
        CHECK(air_ev_before(prev, e), "heap order broken at ts %g", e->ts);
        prev = e;
        popped++;
    }
    CHECK(popped == (size_t)N, "popped %zu of %d", popped, N);
    CHECK(air_heap_min(&h) == NULL, "empty heap has a min");
    air_heap_destroy(&h);
    free(ev);
}

/* Restoring a saved stream state replays exactly the same draws; different streams of
 * the same seed differ; uniforms lie in (0, 1); below(n) stays below n. */
static void test_rng(void)
{
    uint64_t a = air_rng_seed(7, 3), b = air_rng_seed(7, 4);
    CHECK(a != b, "streams 3 and 4 of seed 7 start equal");
    for (int i = 0; i < 100; i++) air_rng_next(&a);
    uint64_t saved = a;
    double first[64];
    for (int i = 0; i < 64; i++) first[i] = air_rng_exp(&a, 1.0) + air_rng_unif(&a);
    a = saved;
    for (int i = 0; i < 64; i++)
        CHECK(first[i] == air_rng_exp(&a, 1.0) + air_rng_unif(&a), "draw %d differs after restore", i);
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        double u = air_rng_unif(&b);
        CHECK(u > 0 && u < 1, "uniform %g outside (0,1)", u);
        CHECK(air_rng_below(&b, 13) < 13, "below(13) out of range");
        sum += air_rng_exp(&b, 2.0);
    }
    CHECK(sum / 100000 > 1.95 && sum / 100000 < 2.05, "exponential mean %g, expected 2", sum / 100000);
}

/* The pool reuses the most recently freed buffer first (LIFO), and many alloc/free
 * cycles do not allocate new memory once the working set is in the pool. */
static void test_pool(void)
{
    air_pool_shared sh;
    CHECK(air_pool_shared_init(&sh, sizeof(air_event) + 64) == 0, "pool init");
    air_pool p;
    air_pool_init(&p, &sh);
    air_event *x = air_pool_get(&p), *y = air_pool_get(&p);
    CHECK(x && y && x != y, "two gets returned the same buffer");
    air_pool_put(&p, x);
    CHECK(air_pool_get(&p) == x, "pool is not LIFO");
    air_pool_put(&p, x);
    air_pool_put(&p, y);
    enum { LIVE = 3000 };
    static air_event *live[LIVE];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < LIVE; i++) live[i] = air_pool_get(&p);
        for (int i = 0; i < LIVE; i++) air_pool_put(&p, live[i]);
    }
    uint64_t after_warmup = sh.allocated;
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < LIVE; i++) live[i] = air_pool_get(&p);
        for (int i = 0; i < LIVE; i++) air_pool_put(&p, live[i]);
    }
    CHECK(sh.allocated == after_warmup, "pool grew from %lu to %lu buffers with a constant working set",
          (unsigned long)after_warmup, (unsigned long)sh.allocated);
    air_pool_shared_destroy(&sh);
}

int main(void)
{
    test_spsc();
    test_heap();
    test_rng();
    test_pool();
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("unit_structures: spsc, heap, rng, pool: all passed\n");
    return failures ? 1 : 0;
}
