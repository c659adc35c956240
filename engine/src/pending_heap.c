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
        i = p;
    }
    h->a[i] = x;
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

/* Index of the earlier of the siblings c and c + 1: a branch-free timestamp comparison,
 * the full key only on a tie. */
static inline size_t earlier_child(const air_heap_entry *a, size_t c)
{
    double l = a[c].ts, r = a[c + 1].ts;
    if (__builtin_expect(l == r, 0)) return c + air_ev_before(a[c + 1].ev, a[c].ev);
    return c + (r < l);
}

/* Bottom-up pop (Floyd): the hole at the root descends to a leaf along the earlier
 * children (one comparison per level), then the last entry, which belongs near the
 * bottom anyway, sifts up from there. About half the comparisons of a plain sift-down,
 * and the hot comparison has no unpredictable branch: this is the sequential engine's
 * inner loop. */
air_event *air_heap_pop(air_heap *h)
{
    if (!h->n) return NULL;
    air_heap_entry *a = h->a;
    air_event *e = a[0].ev;
    size_t n = --h->n;
    if (!n) return e;
    air_heap_entry x = a[n];
    size_t i = 0, c;
    while ((c = 2 * i + 1) + 1 < n) {
        c = earlier_child(a, c);
        a[i] = a[c];
        i = c;
    }
    if (c < n) { /* a last, single child */
        a[i] = a[c];
        i = c;
    }
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&x, &a[p])) break;
        a[i] = a[p];
        i = p;
    }
    a[i] = x;
    return e;
}
