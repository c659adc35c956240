/* Event buffers. Each PE has a LIFO free list (the most recently freed buffer is reused
 * first: it is still in cache). Events migrate between PEs (allocated by the sender,
 * freed by the receiver), so a list that grows past a limit hands a chain of buffers to
 * a shared pool, and an empty list takes a chain from it before allocating new memory.
 * Memory therefore stays bounded by the number of live events. */
#ifndef AIR_EVENT_POOL_H
#define AIR_EVENT_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "event.h"

#define AIR_POOL_CHAIN 256

typedef struct air_pool_shared {
    pthread_mutex_t mu;
    air_event **chains;  /* each a list of AIR_POOL_CHAIN buffers linked by next */
    size_t nchains, cap;
    void **slabs;        /* every allocation, freed at the end */
    size_t nslabs, slabcap;
    size_t event_size;
    uint64_t allocated;  /* buffers ever allocated */
} air_pool_shared;

typedef struct air_pool {
    air_event *free;
    size_t nfree;
    air_pool_shared *shared;
} air_pool;

int air_pool_shared_init(air_pool_shared *s, size_t event_size);
void air_pool_shared_destroy(air_pool_shared *s);
void air_pool_init(air_pool *p, air_pool_shared *s);
air_event *air_pool_refill(air_pool *p);   /* slow path of air_pool_get */
void air_pool_spill(air_pool *p);          /* slow path of air_pool_put */

static inline air_event *air_pool_get(air_pool *p)
{
    air_event *e = p->free;
    if (!e) return air_pool_refill(p);
    p->free = e->next;
    p->nfree--;
    return e;
}

/* Hand back a chain of n buffers linked by next, first .. last, in O(1) (fossil collection
 * returns a PE's whole committed prefix this way). A free buffer's `where` is not kept up to
 * date: nothing reads it before air_send sets it again. */
static inline void air_pool_put_chain(air_pool *p, air_event *first, air_event *last, size_t n)
{
    last->next = p->free;
    p->free = first;
    p->nfree += n;
    while (p->nfree > 4 * AIR_POOL_CHAIN) air_pool_spill(p);
}

static inline void air_pool_put(air_pool *p, air_event *e)
{
    air_pool_put_chain(p, e, e, 1);
}

#endif
