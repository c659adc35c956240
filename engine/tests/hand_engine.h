/* A two-thread engine record built by hand, for the unit tests that drive the barrier and
 * membership code without a simulation (no model, no PE): the caller's options (start them
 * from air_options_defaults), the given barrier wait with its own option values, and two
 * threads numbered and pointing back at the engine. The rest stays zero for the test to set. */
#ifndef AIR_HAND_ENGINE_H
#define AIR_HAND_ENGINE_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "registry.h"

static inline air_engine *hand_engine(air_options *opt, air_thread threads[2], const air_barrier_wait *wait)
{
    memset(threads, 0, 2 * sizeof *threads);
    air_engine *e = calloc(1, sizeof *e);
    if (!e) exit(1);
    e->opt = opt;
    e->threads = threads;
    e->nthreads = 2;
    e->barrier_wait = wait;
    e->barrier_wait_opt = air_options_policy_values(opt, AIR_BARRIER_WAITS, wait->id.name);
    e->loadavg_fd = -1; /* no /proc/loadavg: a wait that reads it counts the machine as busy */
    for (int i = 0; i < 2; i++) {
        threads[i].id = i;
        threads[i].eng = e;
    }
    return e;
}

static inline void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

#endif
