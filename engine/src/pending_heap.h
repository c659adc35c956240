/* The pending-event set of a PE: a binary min-heap keyed by (ts, src_lp, send_seq), with
 * each event knowing its index so a cancelled event is removed in O(log n). Entries keep
 * the timestamp beside the pointer so most comparisons touch only the heap array. */
#ifndef AIR_PENDING_HEAP_H
#define AIR_PENDING_HEAP_H

#include <stddef.h>
#include "event.h"

typedef struct air_heap_entry {
    double ts;
    air_event *ev;
} air_heap_entry;

typedef struct air_heap {
    air_heap_entry *a;
    size_t n, cap;
} air_heap;

void air_heap_init(air_heap *h);
void air_heap_destroy(air_heap *h);
void air_heap_push(air_heap *h, air_event *e);
air_event *air_heap_pop(air_heap *h);
void air_heap_remove(air_heap *h, air_event *e);

static inline air_event *air_heap_min(const air_heap *h)
{
    return h->n ? h->a[0].ev : NULL;
}

static inline double air_heap_min_ts(const air_heap *h)
{
    return h->n ? h->a[0].ts : __builtin_inf();
}

#endif
