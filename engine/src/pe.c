/* One PE's Time Warp work: receive messages and anti-messages from its input queues,
 * roll back on stragglers, handle a batch of events in key order, fossil-collect what
 * lies below GVT. Also the engine calls a model makes while its event is handled. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "rng.h"

/* Anti-messages travel through the same queues as messages: the pointer to the event to
 * cancel, with its lowest bit set. Safe because the event cannot be fossil-collected
 * while its parent (earlier timestamp, same or older GVT) can still roll back. */
#define ANTI_TAG ((uintptr_t)1)

double air_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline uint32_t pe_of(const air_engine *e, uint64_t lp)
{
    return (uint32_t)(lp / e->info.lps_per_pe);
}

/* Undo processed events later than `key` (and `key` itself when inclusive), newest first:
 * restore each LP record, cancel what each event sent, put the event back as pending. */
static void rollback(air_pe *pe, const air_event *key, int inclusive)
{
    air_engine *eng = pe->eng;
    size_t rs = eng->rec_size;
    pe->rollbacks++;
    air_event *e;
    while ((e = pe->proc_tail) && (inclusive ? !air_ev_before(e, key) : air_ev_before(key, e))) {
        pe->proc_tail = e->prev;
        if (pe->proc_tail) pe->proc_tail->next = NULL;
        else pe->proc_head = NULL;
        pe->nproc--;
        memcpy(air_pe_lp(pe, e->dst_lp), air_ev_saved(e), rs);
        air_event *c = e->children;
        while (c) {
            air_event *next = c->sibling;
            uint32_t dpe = pe_of(eng, c->dst_lp);
            if (dpe == pe->id) {
                /* A local child is later than e, so it was already rolled back: pending.
                 * process_batch drops it when it reaches the top of the heap. */
                c->where = EV_CANCELLED;
            } else {
                air_spsc_push(&eng->pes[dpe].in[pe->id], (void *)((uintptr_t)c | ANTI_TAG));
            }
            c = next;
        }
        e->children = NULL;
        e->where = EV_PENDING;
        air_heap_push(&pe->pending, e);
        pe->rolled_back++;
    }
}

static void receive(air_pe *pe, air_event *e)
{
    if (pe->proc_tail && air_ev_before(e, pe->proc_tail)) rollback(pe, e, 0);
    e->where = EV_PENDING;
    air_heap_push(&pe->pending, e);
}

static void cancel(air_pe *pe, air_event *e)
{
    if (e->where == EV_PROCESSED) rollback(pe, e, 1); /* puts it back in the heap */
    e->where = EV_CANCELLED;
}

uint64_t air_pe_drain(air_pe *pe)
{
    uint64_t n = 0;
    for (uint32_t s = 0; s < pe->eng->npes; s++) {
        air_spsc *q = &pe->in[s];
        void *p;
        while ((p = air_spsc_pop(q))) {
            if ((uintptr_t)p & ANTI_TAG) cancel(pe, (air_event *)((uintptr_t)p & ~ANTI_TAG));
            else receive(pe, p);
            n++;
        }
    }
    return n;
}

/* Commit the processed events earlier than gvt and recycle their buffers as one chain.
 * The boundary is searched from both ends at once, so the cost is that of the shorter side:
 * usually the few uncommitted (recent, cached) events, but when a PE runs far ahead of GVT
 * (no remote events couple it to the others) the committed prefix is the short one. */
void air_pe_fossil(air_pe *pe, double gvt)
{
    air_event *f = pe->proc_head, *b = pe->proc_tail, *last;
    uint64_t n;
    for (uint64_t k = 0;; k++) {
        if (!f || !(f->ts < gvt)) { /* the first k events are committed */
            last = f ? f->prev : pe->proc_tail;
            n = k;
            break;
        }
        if (b->ts < gvt) { /* all but the last k are committed */
            last = b;
            n = pe->nproc - k;
            break;
        }
        f = f->next;
        b = b->prev;
    }
    if (!n) return;
    air_event *first = pe->proc_head;
    pe->proc_head = last->next;
    if (pe->proc_head) pe->proc_head->prev = NULL;
    else pe->proc_tail = NULL;
    pe->nproc -= n;
    air_pool_put_chain(&pe->pool, first, last, n);
    atomic_fetch_add_explicit(&pe->committed, n, memory_order_relaxed);
}

static uint64_t process_batch(air_engine *eng, air_pe *pe, uint64_t max)
{
    double bound = eng->info.end_time < pe->safe_bound ? eng->info.end_time : pe->safe_bound;
    if (eng->sync->batch_bound) { /* the sync's own bound (optimistic: --optimism-window) */
        double window = eng->sync->batch_bound(eng, pe);
        if (window < bound) bound = window;
    }
    size_t rs = eng->rec_size;
    const air_model *m = eng->model;
    air_ctx ctx = { .eng = eng, .pe = pe };
    uint64_t n = 0;
    while (n < max && air_heap_min_ts(&pe->pending) < bound) {
        air_event *e = air_heap_pop(&pe->pending);
        if (e->where == EV_CANCELLED) {
            air_pool_put(&pe->pool, e);
            continue;
        }
        air_lp_record *lp = air_pe_lp(pe, e->dst_lp);
        memcpy(air_ev_saved(e), lp, rs);
        e->children = NULL;
        ctx.lp = lp;
        ctx.ev = e;
        ctx.now = e->ts;
        ctx.self = e->dst_lp;
        m->handle_event(&ctx, lp->state, e->payload);
        e->where = EV_PROCESSED;
        e->next = NULL;
        e->prev = pe->proc_tail;
        if (pe->proc_tail) pe->proc_tail->next = e;
        else pe->proc_head = e;
        pe->proc_tail = e;
        n++;
    }
    pe->processed += n;
    pe->nproc += n;
    return n;
}

void air_pe_iteration(air_engine *eng, air_thread *t, air_pe *pe)
{
    uint64_t round = atomic_load_explicit(&eng->gvt_round, memory_order_acquire);
    if (pe->fossil_round != round) {
        air_pe_fossil(pe, air_gvt(eng));
        pe->fossil_round = round;
    }
    air_pe_drain(pe);
    double t0 = air_wall();
    uint64_t n = process_batch(eng, pe, eng->opt->batch);
    double dt = air_wall() - t0;
    t->busy_s += dt;
    t->events += n;
    t->period_busy += dt;
    t->period_events += n;
    pe->iterations++;
    if (pe->primary != t->id) pe->non_primary_iterations++;
    atomic_store_explicit(&pe->lvt_bits, air_d2u(air_heap_min_ts(&pe->pending)), memory_order_relaxed);
}

/* ---- engine calls for models ---- */

static void model_fault(const char *what)
{
    fprintf(stderr, "airpdes: model error: %s\n", what);
    exit(1);
}

void air_send(air_ctx *c, uint64_t dst, double delay, const void *payload, size_t len)
{
    air_engine *eng = c->eng;
    if (!(delay > 0) || delay < eng->min_delay) model_fault("air_send delay below the model's min_delay (or not > 0)");
    if (dst >= eng->info.num_lps) model_fault("air_send to an LP id out of range");
    if (len > AIR_PAYLOAD_MAX) model_fault("air_send payload larger than AIR_PAYLOAD_MAX");
    double ts = c->now + delay;
    if (ts <= c->now) ts = nextafter(c->now, INFINITY); /* keep causality strict */
    air_pe *pe = c->pe;
    air_event *e = air_pool_get(&pe->pool);
    e->ts = ts;
    e->src_lp = c->self;
    e->send_seq = c->lp->send_seq++;
    e->dst_lp = dst;
    e->children = NULL;
    if (len) memcpy(e->payload, payload, len);
    if (eng->seq) {
        e->where = EV_PENDING;
        air_heap_push(&pe->pending, e);
        return;
    }
    if (c->ev) { /* remember it for cancellation; events sent by init_lp are never undone */
        e->sibling = c->ev->children;
        c->ev->children = e;
    }
    uint32_t dpe = pe_of(eng, dst);
    if (dpe == pe->id) {
        e->where = EV_PENDING;
        air_heap_push(&pe->pending, e);
    } else {
        e->where = EV_INFLIGHT;
        air_spsc_push(&eng->pes[dpe].in[pe->id], e);
    }
}

double air_now(const air_ctx *c) { return c->now; }
uint64_t air_self(const air_ctx *c) { return c->self; }
const air_sim_info *air_info(const air_ctx *c) { return &c->eng->info; }
double air_rand_unif(air_ctx *c) { return air_rng_unif(&c->lp->rng); }
double air_rand_exp(air_ctx *c, double mean) { return air_rng_exp(&c->lp->rng, mean); }
uint64_t air_rand_below(air_ctx *c, uint64_t n) { return air_rng_below(&c->lp->rng, n); }
