/* A worker thread: ask the mapping for a PE, run one iteration on it, release it; every
 * detect_period iterations (once --detect-after-ms has passed) let the detector look for
 * interference; every gvt_interval iterations join the GVT barrier. Inactive threads
 * sleep in air_adapt_inactive_wait. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "engine.h"

/* Thread i runs on the i-th CPU (mod their number) of those the process may use, so a
 * cpuset partition or SLURM's binding is respected. Called before anything else in the
 * thread; the workers were created with the process's mask, the main thread pins itself
 * after creating them. */
static void pin(air_thread *t)
{
    cpu_set_t allowed, set;
    if (sched_getaffinity(0, sizeof allowed, &allowed)) return;
    int n = CPU_COUNT(&allowed);
    if (n < 1) return;
    int want = t->id % n;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed) || want--) continue;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        return;
    }
}

/* The detector starts --detect-after-ms into the run, with a fresh window. Measured on the
 * 2-core VM: in about half of all starts the second thread is created on its creator's CPU
 * and the two share it in 3-5 ms slices for 10-25 ms until the load balancer moves one;
 * PI and RQ read that as a competitor (the a3f4133 quick runs: a deactivation in 28 of 144
 * no-load PI/RQ trials, 27 of the 29 at 0.009-0.025 s; 4-8 of 20 bare RQ runs). */
static int detector_start_due(air_engine *e, air_thread *t)
{
    if (air_wall() - e->t0 < e->opt->detect_after_ms * 1e-3) return 0;
    if (e->detector->thread_start) e->detector->thread_start(e, t);
    t->period_busy = 0;
    t->period_events = 0;
    t->suspect_checks = 0;
    return 1;
}

void *air_thread_main(void *arg)
{
    air_thread *t = arg;
    air_engine *e = t->eng;
    if (e->opt->pin) pin(t);
    int detecting = 0;
    uint64_t gi = e->opt->gvt_interval;
    int track_cpu = e->tracks_cpus;
    while (!atomic_load_explicit(&e->done, memory_order_acquire)) {
        if (atomic_load_explicit(&t->active, memory_order_acquire) != AIR_ACTIVE) {
            air_adapt_inactive_wait(e, t);
            continue;
        }
        if (track_cpu) {
            atomic_store_explicit(&t->cpu, sched_getcpu(), memory_order_relaxed);
            atomic_store_explicit(&t->beat, t->iter, memory_order_relaxed);
        }
        air_pe *pe = e->mapping->acquire(e, t);
        if (pe) {
            air_pe_iteration(e, t, pe);
            e->mapping->release(e, t, pe);
        }
        t->iter++;
        if (e->detector && t->iter % e->detect_period == 0) {
            if (detecting) e->detector->check(e, t);
            else detecting = detector_start_due(e, t);
        }
        if (t->iter % gi == 0 || (e->sync->window_over && e->sync->window_over(e))) air_gvt_barrier(e, t);
    }
    return NULL;
}
