#include "pending_heap.h"

#include <stdio.h>
#include <stdlib.h>

static inline int before(const air_heap_entry *x, const air_heap_entry *y)
{
    if (x->ts != y->ts) return x->ts < y->ts;
    return air_ev_before(x->ev, y->ev);
}

void air_heap_init(air_heap *h)
{
    h->n = 0;
    h->cap = 1024;
    h->a = malloc(h->cap * sizeof *h->a);
    if (!h->a) { fprintf(stderr, "airpdes: out of memory\n"); exit(1); }
}

void air_heap_destroy(air_heap *h)
{
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}

static void sift_up(air_heap *h, size_t i)
{
    air_heap_entry x = h->a[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&x, &h->a[p])) break;
        h->a[i] = h->a[p];
        h->a[i].ev->heap_idx = (int32_t)i;
        i = p;
    }
    h->a[i] = x;
    x.ev->heap_idx = (int32_t)i;
}

static void sift_down(air_heap *h, size_t i)
{
    air_heap_entry x = h->a[i];
    size_t n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&h->a[c + 1], &h->a[c])) c++;
        if (!before(&h->a[c], &x)) break;
        h->a[i] = h->a[c];
        h->a[i].ev->heap_idx = (int32_t)i;
        i = c;
    }
    h->a[i] = x;
    x.ev->heap_idx = (int32_t)i;
}

void air_heap_push(air_heap *h, air_event *e)
{
    if (h->n == h->cap) {
        h->cap *= 2;
        h->a = realloc(h->a, h->cap * sizeof *h->a);
        if (!h->a) { fprintf(stderr, "airpdes: out of memory\n"); exit(1); }
    }
    h->a[h->n].ts = e->ts;
    h->a[h->n].ev = e;
    sift_up(h, h->n++);
}

air_event *air_heap_pop(air_heap *h)
{
    if (!h->n) return NULL;
    air_event *e = h->a[0].ev;
    e->heap_idx = -1;
    if (--h->n) {
        h->a[0] = h->a[h->n];
        sift_down(h, 0);
    }
    return e;
}

void air_heap_remove(air_heap *h, air_event *e)
{
    size_t i = (size_t)e->heap_idx;
    e->heap_idx = -1;
    if (i == --h->n) return;
    h->a[i] = h->a[h->n];
    if (i > 0 && before(&h->a[i], &h->a[(i - 1) / 2])) sift_up(h, i);
    else sift_down(h, i);
}
