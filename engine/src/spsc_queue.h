/* Unbounded single-producer/single-consumer queue of pointers: a linked list of blocks of
 * AIR_SPSC_BLOCK slots. It never fills up, so a PE can always send (no deadlock between
 * two PEs sending to each other). A NULL slot means "not yet written". The producer is
 * whichever thread holds the sending PE, the consumer whichever holds the receiving PE;
 * PE hand-over goes through the PE lock, which orders those accesses. One spare block is
 * recycled between the two sides so the steady state does not call malloc. */
#ifndef AIR_SPSC_QUEUE_H
#define AIR_SPSC_QUEUE_H

#include <stdatomic.h>
#include <stddef.h>

#define AIR_SPSC_BLOCK 256

typedef struct air_spsc_block {
    _Atomic(void *) slot[AIR_SPSC_BLOCK];
    _Atomic(struct air_spsc_block *) next;
} air_spsc_block;

typedef struct air_spsc {
    /* producer side */
    air_spsc_block *ptail;
    unsigned pidx;
    char pad1[64 - sizeof(void *) - sizeof(unsigned)];
    /* consumer side */
    air_spsc_block *chead;
    unsigned cidx;
    char pad2[64 - sizeof(void *) - sizeof(unsigned)];
    _Atomic(air_spsc_block *) spare;
} air_spsc;

int air_spsc_init(air_spsc *q);
void air_spsc_destroy(air_spsc *q);
void air_spsc_push(air_spsc *q, void *item); /* item != NULL */
void *air_spsc_pop(air_spsc *q);              /* NULL when empty */

#endif
