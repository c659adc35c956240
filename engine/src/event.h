/* An event buffer. Events are ordered by the key (ts, src_lp, send_seq), a total order,
 * so every mode handles an LP's events in the same order. Each buffer is followed by room
 * for one saved LP record (copy state saving), see lp_record.h. */
#ifndef AIR_EVENT_H
#define AIR_EVENT_H

#include <stdint.h>
#include "model.h"

/* EV_CANCELLED: still in the pending heap but cancelled by an anti-message or a rollback;
 * dropped when it reaches the top (lazy deletion: the heap never tracks positions). */
enum { EV_FREE = 0 /* a fresh (zeroed) buffer; a recycled one keeps its last state */, EV_PENDING, EV_PROCESSED, EV_INFLIGHT, EV_CANCELLED };

typedef struct air_event {
    /* first cache line: the key, the payload and the state, all a handler and the heap's
     * tie-break read */
    double ts;
    uint64_t send_seq;
    uint32_t src_lp;            /* LP ids fit 32 bits: options refuse more than 4e9 LPs */
    uint32_t dst_lp;
    unsigned char payload[AIR_PAYLOAD_MAX]; /* at offset 24: 8-byte aligned */
    uint8_t where;              /* EV_* */
    /* second cache line: links, then the saved LP record */
    struct air_event *prev;     /* processed list (older) */
    struct air_event *next;     /* processed list (newer), free list */
    struct air_event *children; /* events sent while handling this one (for cancellation) */
    struct air_event *sibling;  /* next child of the same parent */
    /* saved LP record follows, aligned to 8 */
} air_event;

static inline int air_ev_before(const air_event *a, const air_event *b)
{
    if (a->ts != b->ts) return a->ts < b->ts;
    if (a->src_lp != b->src_lp) return a->src_lp < b->src_lp;
    return a->send_seq < b->send_seq;
}

static inline void *air_ev_saved(air_event *e)
{
    return (void *)(e + 1);
}

#endif
