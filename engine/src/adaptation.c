/* Thread membership for adm / ladm. Threads only REQUEST a change (want_deactivate from
 * a detector, want_reactivate after a successful RAP probe); the GVT leader applies it at
 * the barrier, when every active thread is waiting and no PE is held, so the barrier's
 * member count never races a thread that is arriving. At least one thread stays active.
 * Inactive threads sleep on a condition variable (no CPU use) and hold no PE. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include "engine.h"

static void note(double *times, uint64_t count, double t)
{
    if (count <= AIR_MAX_TIMES) times[count - 1] = t;
}

void air_adapt_activate(air_engine *e, air_thread *t)
{
    pthread_mutex_lock(&t->mu);
    if (!atomic_load(&t->active)) {
        /* The leader has not yet reset the barrier; the thread must not arrive at the
         * next one before that (see air_adapt_inactive_wait). */
        atomic_store(&t->join_gen, atomic_load(&e->bar_gen));
        atomic_store(&t->active, AIR_REJOINING);
        atomic_fetch_add(&e->n_active, 1);
        t->reactivations++;
        note(t->react_times, t->reactivations, air_wall() - e->t0);
    }
    atomic_store(&t->want_reactivate, 0);
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

air_thread *air_adapt_next_inactive(air_engine *e)
{
    for (int k = 0; k < e->nthreads; k++) {
        air_thread *t = &e->threads[(e->react_cursor + (uint32_t)k) % (uint32_t)e->nthreads];
        if (!atomic_load(&t->active)) {
            e->react_cursor = (uint32_t)t->id + 1;
            return t;
        }
    }
    return NULL;
}

static void deactivate(air_engine *e, air_thread *t)
{
    pthread_mutex_lock(&t->mu);
    atomic_store(&t->active, AIR_INACTIVE);
    atomic_fetch_sub(&e->n_active, 1);
    t->deactivations++;
    note(t->deact_times, t->deactivations, air_wall() - e->t0);
    pthread_mutex_unlock(&t->mu);
}

void air_adapt_round(air_engine *e)
{
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *t = &e->threads[i];
        if (atomic_exchange(&t->want_deactivate, 0) && atomic_load(&t->active) &&
            atomic_load(&e->n_active) > 1)
            deactivate(e, t);
    }
    e->reactivation->on_round(e);
}

void air_adapt_wake_all(air_engine *e)
{
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *t = &e->threads[i];
        pthread_mutex_lock(&t->mu);
        pthread_cond_signal(&t->cv);
        pthread_mutex_unlock(&t->mu);
    }
}

/* The slowest of PROBE_YIELDS back-to-back sched_yield() calls. One call alone is a weak
 * signal under EEVDF (Linux >= 6.6): a yield only hands the CPU over when the competitor
 * is "eligible", which on the 2-core VM was so for ~15% of single probes even with a
 * CPU-bound competitor on the same CPU (engine/bench/yield_probe). Each yield pushes the
 * caller's deadline back by a slice, so by the 4th the competitor runs: 4 back-to-back
 * yields were slow (> 1 ms) in 100/100 trials with a competitor and fast (< 5 us) in
 * 100/100 trials without one. */
#define PROBE_YIELDS 4

void air_detect_confirm(air_thread *t, int positive, uint32_t needed)
{
    if (!positive) {
        t->suspect_checks = 0;
        return;
    }
    if (++t->suspect_checks >= needed) atomic_store(&t->want_deactivate, 1);
}

double air_probe_yield_us(void)
{
    double worst = 0;
    for (int i = 0; i < PROBE_YIELDS; i++) {
        double t0 = air_wall();
        sched_yield();
        double d = (air_wall() - t0) * 1e6;
        if (d > worst) worst = d;
    }
    return worst;
}

/* A RAP probe asks whether a CPU is free for this thread, so it must not run beside one of
 * the engine's own active threads: their yields to it would read as a competitor. Where a
 * sleeping thread wakes is the kernel's choice, and on the 2-core VM an inactive adm thread
 * woke on the active thread's CPU in 4 of 147 runs with a competitor on the other CPU; its
 * probes then stayed there, all slow (~4 ms), and twice (30 Nov, and a CI run on 4 Dec) it
 * never came back after the competitor had left. So an unpinned thread probes on the CPUs
 * of the process that no active thread is on, and returns to its own mask afterwards (the
 * barrier wait may have narrowed it). With none free the probe counts as slow: coming
 * back would share a CPU with the engine. Pinned threads probe their own CPU, as in the
 * paper. Returns the slowest yield in us, or -1 when no CPU was free. */
static double probe_off_active_cpus_us(air_engine *e, air_thread *t)
{
    cpu_set_t own, spare = e->allowed_cpus;
    if (e->opt->pin || pthread_getaffinity_np(pthread_self(), sizeof own, &own)) return air_probe_yield_us();
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *o = &e->threads[i];
        int cpu = atomic_load_explicit(&o->cpu, memory_order_relaxed);
        if (o != t && atomic_load(&o->active) && cpu >= 0 && cpu < CPU_SETSIZE) CPU_CLR(cpu, &spare);
    }
    if (CPU_COUNT(&spare) == 0) return -1;
    if (pthread_setaffinity_np(pthread_self(), sizeof spare, &spare)) return air_probe_yield_us();
    double us = air_probe_yield_us();
    pthread_setaffinity_np(pthread_self(), sizeof own, &own);
    return us;
}

/* Sleep until reactivated or the run ends, then rejoin. A RAP probe request wakes the
 * thread briefly: it times a sched_yield() and asks for reactivation only if the probe was
 * fast, i.e. no other runnable task was waiting for its CPU.
 * Every reactivated thread passes here, also one that was deactivated and reactivated
 * before it looked at its membership again (switched out on its way back from the barrier
 * while the others ran whole rounds): it finds itself REJOINING, not ACTIVE. Such a thread
 * once arrived at the barrier whose round was still being led, became a second leader,
 * and the barrier's count lost an arrival: every thread waited for ever (no_deadlock on
 * CI, 30 Nov: bar_gen 320, gvt_round 321, 1 of 2 arrived). */
void air_adapt_inactive_wait(air_engine *e, air_thread *t)
{
    double t0 = air_wall();
    pthread_mutex_lock(&t->mu);
    while (atomic_load(&t->active) == AIR_INACTIVE && !atomic_load(&e->done)) {
        if (atomic_exchange(&t->probe, 0)) {
            pthread_mutex_unlock(&t->mu);
            double us = probe_off_active_cpus_us(e, t);
            pthread_mutex_lock(&t->mu);
            t->rap_probes++;
            if (us < 0) t->rap_no_spare_cpu++;
            if (us > t->rap_probe_max_us) t->rap_probe_max_us = us;
            if (us >= 0 && us < e->opt->pi_threshold_us) atomic_store(&t->want_reactivate, 1);
            else t->rap_slow_probes++;
            continue;
        }
        pthread_cond_wait(&t->cv, &t->mu);
    }
    pthread_mutex_unlock(&t->mu);
    while (!atomic_load(&e->done) && atomic_load(&e->bar_gen) == atomic_load(&t->join_gen)) sched_yield();
    /* No round can be led while this thread is counted and has not arrived, so nothing
     * else changes its membership now (it stays INACTIVE only when the run is over). */
    int rejoining = AIR_REJOINING;
    atomic_compare_exchange_strong(&t->active, &rejoining, AIR_ACTIVE);
    t->inactive_s += air_wall() - t0;
    /* Rejoin in step with the others, who are at an iteration count that is a multiple
     * of gvt_interval; start a fresh detection period. */
    t->iter = 0;
    t->period_busy = 0;
    t->period_events = 0;
    t->help_left = 0;
    t->ran_primary = 0;
    t->suspect_checks = 0;
    if (e->detector && e->detector->rejoin) e->detector->rejoin(t);
}
