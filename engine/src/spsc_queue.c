#include "spsc_queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static air_spsc_block *new_block(air_spsc *q)
{
    air_spsc_block *b = atomic_exchange_explicit(&q->spare, NULL, memory_order_acquire);
    if (!b) {
        b = malloc(sizeof *b);
        if (!b) { fprintf(stderr, "airpdes: out of memory\n"); exit(1); }
        memset(b, 0, sizeof *b);
    }
    return b;
}

int air_spsc_init(air_spsc *q)
{
    memset(q, 0, sizeof *q);
    q->ptail = q->chead = new_block(q);
    return 0;
}

void air_spsc_destroy(air_spsc *q)
{
    air_spsc_block *b = q->chead;
    while (b) {
        air_spsc_block *n = atomic_load(&b->next);
        free(b);
        b = n;
    }
    free(atomic_load(&q->spare));
    q->chead = q->ptail = NULL;
}

void air_spsc_push(air_spsc *q, void *item)
{
    if (q->pidx == AIR_SPSC_BLOCK) {
        air_spsc_block *b = new_block(q);
        atomic_store_explicit(&b->slot[0], item, memory_order_relaxed);
        atomic_store_explicit(&q->ptail->next, b, memory_order_release);
        q->ptail = b;
        q->pidx = 1;
        return;
    }
    atomic_store_explicit(&q->ptail->slot[q->pidx++], item, memory_order_release);
}

void *air_spsc_pop(air_spsc *q)
{
    if (q->cidx == AIR_SPSC_BLOCK) {
        air_spsc_block *n = atomic_load_explicit(&q->chead->next, memory_order_acquire);
        if (!n) return NULL;
        air_spsc_block *old = q->chead;
        q->chead = n;
        q->cidx = 0;
        /* The producer finished with `old` (it moved to a later block), so recycle it. */
        memset(old, 0, sizeof *old);
        old = atomic_exchange_explicit(&q->spare, old, memory_order_release);
        free(old);
    }
    void *item = atomic_load_explicit(&q->chead->slot[q->cidx], memory_order_acquire);
    if (item) q->cidx++;
    return item;
}
