#include "event_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLAB_EVENTS 1024

int air_pool_shared_init(air_pool_shared *s, size_t event_size)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->event_size = (event_size + 63) & ~(size_t)63; /* whole cache lines */
    return 0;
}

void air_pool_shared_destroy(air_pool_shared *s)
{
    for (size_t i = 0; i < s->nslabs; i++) free(s->slabs[i]);
    free(s->slabs);
    free(s->chains);
    pthread_mutex_destroy(&s->mu);
}

void air_pool_init(air_pool *p, air_pool_shared *s)
{
    p->free = NULL;
    p->nfree = 0;
    p->shared = s;
}

static void oom(void)
{
    fprintf(stderr, "airpdes: out of memory for events\n");
    exit(1);
}

air_event *air_pool_refill(air_pool *p)
{
    air_pool_shared *s = p->shared;
    pthread_mutex_lock(&s->mu);
    if (s->nchains > 0) {
        air_event *chain = s->chains[--s->nchains];
        pthread_mutex_unlock(&s->mu);
        p->free = chain;
        p->nfree = AIR_POOL_CHAIN;
        return air_pool_get(p);
    }
    if (s->nslabs == s->slabcap) {
        s->slabcap = s->slabcap ? 2 * s->slabcap : 64;
        s->slabs = realloc(s->slabs, s->slabcap * sizeof *s->slabs);
        if (!s->slabs) oom();
    }
    char *slab = aligned_alloc(64, SLAB_EVENTS * s->event_size);
    if (!slab) oom();
    memset(slab, 0, SLAB_EVENTS * s->event_size);
    s->slabs[s->nslabs++] = slab;
    s->allocated += SLAB_EVENTS;
    pthread_mutex_unlock(&s->mu);
    /* Link in reverse so the first buffers handed out are the first in memory. */
    for (int i = SLAB_EVENTS - 1; i >= 0; i--) {
        air_event *e = (air_event *)(slab + (size_t)i * s->event_size);
        e->next = p->free;
        p->free = e;
    }
    p->nfree += SLAB_EVENTS;
    return air_pool_get(p);
}

void air_pool_spill(air_pool *p)
{
    air_pool_shared *s = p->shared;
    air_event *head = p->free, *tail = head;
    for (int i = 1; i < AIR_POOL_CHAIN; i++) tail = tail->next;
    p->free = tail->next;
    tail->next = NULL;
    p->nfree -= AIR_POOL_CHAIN;
    pthread_mutex_lock(&s->mu);
    if (s->nchains == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->chains = realloc(s->chains, s->cap * sizeof *s->chains);
        if (!s->chains) oom();
    }
    s->chains[s->nchains++] = head;
    pthread_mutex_unlock(&s->mu);
}
