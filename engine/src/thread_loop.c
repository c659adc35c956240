/* A worker thread: ask the mapping for a PE, run one iteration on it, release it; every
 * detect_period iterations let the detector look for interference; every gvt_interval
 * iterations join the GVT barrier. Inactive threads sleep in air_adapt_inactive_wait. */
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
    int track_cpu = e->barrier_wait->tracks_cpu;
    while (!atomic_load_explicit(&e->done, memory_order_acquire)) {
        if (!atomic_load_explicit(&t->active, memory_order_acquire)) {
            air_adapt_inactive_wait(e, t);
            continue;
        }
        if (track_cpu) atomic_store_explicit(&t->cpu, sched_getcpu(), memory_order_relaxed);
        air_pe *pe = e->mapping->acquire(e, t);
        if (pe) {
            air_pe_iteration(e, t, pe);
            e->mapping->release(e, t, pe);
        }
        t->iter++;
        if (e->detector && t->iter % e->detect_period == 0) e->detector->check(e, t);
        if (t->iter % gi == 0 || (e->sync->window_over && e->sync->window_over(e))) air_gvt_barrier(e, t);
    }
    return NULL;
}
