/* Fixed mapping: thread i always runs PE i (threads == PEs), no locking needed. */
#include "engine.h"

static air_pe *fm_acquire(air_engine *e, air_thread *t)
{
    return &e->pes[t->id];
}

static void fm_release(air_engine *e, air_thread *t, air_pe *pe)
{
    (void)e; (void)t; (void)pe;
}

const air_mapping air_mapping_fm = { fm_acquire, fm_release, .helps_orphans = 0 };
