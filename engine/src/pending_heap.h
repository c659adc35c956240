/* The pending-event set of a PE: a binary min-heap keyed by (ts, src_lp, send_seq).
 * Entries keep the timestamp beside the pointer so most comparisons touch only the heap
 * array, and the heap never writes to the events: a cancelled event is not removed but
 * marked EV_CANCELLED and dropped by whoever pops it (pe.c). Writing each moved event's
 * position back, as a removable heap must, cost a cache miss per level of every pop. */
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

static inline air_event *air_heap_min(const air_heap *h)
{
    return h->n ? h->a[0].ev : NULL;
}

static inline double air_heap_min_ts(const air_heap *h)
{
    return h->n ? h->a[0].ts : __builtin_inf();
}

#endif
