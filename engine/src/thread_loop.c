/* A worker thread: ask the mapping for a PE, run one iteration on it, release it; every
 * detect_period iterations let the detector look for interference; after gvt_interval
 * iterations join the GVT barrier, and join it at once when another thread already waits
 * there: the round then comes after gvt_interval iterations of the first thread to get
 * there. Waiting for a slower thread to finish its own gvt_interval iterations left the
 * faster one spinning 10-30 us in most rounds (7-13% of fm's time at remote 0.1), and it
 * is needless: a round is correct whenever every active thread has arrived.
 * Inactive threads sleep in air_adapt_inactive_wait. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "engine.h"

static void pin(air_thread *t)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(t->id % ncpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void *air_thread_main(void *arg)
{
    air_thread *t = arg;
    air_engine *e = t->eng;
    if (e->opt->pin) pin(t);
    if (e->detector && e->detector->thread_start) e->detector->thread_start(e, t);
    uint64_t gi = e->opt->gvt_interval;
    while (!atomic_load_explicit(&e->done, memory_order_acquire)) {
        if (!atomic_load_explicit(&t->active, memory_order_acquire)) {
            air_adapt_inactive_wait(e, t);
            continue;
        }
        air_pe *pe = e->mapping->acquire(e, t);
        if (pe) {
            air_pe_iteration(e, t, pe);
            e->mapping->release(e, t, pe);
        }
        t->iter++;
        if (e->detector && t->iter % e->detect_period == 0) e->detector->check(e, t);
        if (++t->window_iter >= gi || atomic_load_explicit(&e->bar_arrived, memory_order_relaxed) > 0 ||
            (e->sync->window_over && e->sync->window_over(e))) {
            air_gvt_barrier(e, t);
            t->window_iter = 0;
        }
    }
    return NULL;
}
