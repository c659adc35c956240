/* The sequential reference: one pending queue over all LPs, events handled in key order,
 * no state saving and no rollback machinery. Every parallel mode must reproduce its
 * committed count and checksum. */
#include "engine.h"

void air_seq_run(air_engine *e)
{
    air_pe *pe = &e->pes[0];
    air_thread *t = &e->threads[0];
    const air_model *m = e->model;
    double end = e->info.end_time;
    uint64_t per = e->info.lps_per_pe;
    air_ctx ctx = { .eng = e, .pe = pe, .ev = NULL };
    uint64_t n = 0;
    double t0 = air_wall();
    while (air_heap_min_ts(&pe->pending) < end) {
        air_event *ev = air_heap_pop(&pe->pending);
        air_lp_record *lp = air_pe_lp(pe, ev->dst_lp);
        ctx.lp = lp;
        ctx.now = ev->ts;
        ctx.self = ev->dst_lp;
        m->handle_event(&ctx, lp->state, ev->payload);
        e->pes[ev->dst_lp / per].seq_committed++;
        air_pool_put(&pe->pool, ev);
        if ((++n & 4095) == 0) {
            atomic_store_explicit(&e->seq_now_bits, air_d2u(ctx.now), memory_order_relaxed);
            atomic_store_explicit(&e->seq_committed, n, memory_order_relaxed);
        }
    }
    atomic_store_explicit(&e->seq_committed, n, memory_order_relaxed);
    double gvt = air_heap_min_ts(&pe->pending);
    atomic_store(&e->seq_now_bits, air_d2u(gvt));
    atomic_store(&e->gvt_bits, air_d2u(gvt));
    t->events = n;
    t->busy_s = air_wall() - t0;
    pe->processed = n;
}
