/* Every GVT-barrier wait policy keeps its contract, "returns once bar_gen != gen", in the
 * one ordering that broke it: the previous round's leader advanced bar_gen and was then
 * switched out before its wake-up (block_wake) brought the futex word bar_word up to date.
 * The other thread arrives at the next barrier meanwhile and, if it decides to sleep, finds
 * bar_word stale. The sleep used to take a stale word for a finished round and return: the
 * thread ran its PE while the next leader drained every PE (air_gvt_round), and colocation's
 * forced run with --barrier-wait partner died in air_pe_fossil on a broken list (29 Nov).
 *
 * Driven by hand on a two-thread engine record (no simulation): the waiter is thread 0 of
 * round 1, made to sleep where its policy can (block: no spin; adaptive: the other thread
 * queued on its CPU; partner: the other thread's progress standing still); this test plays
 * the leaders. Exit status: failures. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "hand_engine.h"

static int failures;

typedef struct waiter {
    air_engine *e;
    const air_barrier_wait *policy;
    _Atomic int returned;
} waiter;

static void *wait_round_1(void *arg)
{
    waiter *w = arg;
    cpu_set_t one; /* on the CPU the other thread is said to be queued on (adaptive) */
    CPU_ZERO(&one);
    CPU_SET(atomic_load(&w->e->threads[1].cpu), &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    w->policy->wait(w->e, &w->e->threads[0], 1);
    atomic_store(&w->returned, 1);
    return NULL;
}

static void check_policy(const air_barrier_wait *policy, int cpu)
{
    air_options opt;
    if (air_options_defaults(&opt)) exit(1);
    air_options_value(&opt, "barrier-spin-us")->d = 0; /* block: straight to its futex */
    air_thread threads[2];
    /* no /proc/loadavg: the machine counts as busy, so idle-yield and partner spin, never yield */
    air_engine *e = hand_engine(&opt, threads, policy);
    e->may_move = 0;
    for (int i = 0; i < 2; i++) {
        atomic_store(&threads[i].active, 1);
        atomic_store(&threads[i].cpu, cpu);
    }
    atomic_store(&e->n_active, 2);
    /* Round 0 is over: its leader (thread 1) advanced bar_gen and was switched out before
     * its wake-up, so bar_word still says round 0. Thread 1 is not in round 1 yet. */
    atomic_store(&e->bar_gen, 1);
    atomic_store(&e->bar_word, 0);
    atomic_store(&threads[1].waiting_gen, 0);
    waiter w = { e, policy, 0 };
    pthread_t th;
    pthread_create(&th, NULL, wait_round_1, &w);
    sleep_ms(200);
    int early = atomic_load(&w.returned);
    if (early) {
        failures++;
        fprintf(stderr, "FAIL %s: returned in round 1 before it was done (the futex word was stale)\n",
                policy->id.name);
    }
    policy->wake(e); /* the leader of round 0 runs again: its wake-up */
    sleep_ms(50);
    if (!early && atomic_load(&w.returned)) {
        failures++;
        fprintf(stderr, "FAIL %s: returned on round 0's wake-up, round 1 not done\n", policy->id.name);
    }
    atomic_store(&e->bar_gen, 2); /* thread 1 arrives last and leads round 1 */
    policy->wake(e);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    if (pthread_timedjoin_np(th, NULL, &until) != 0) {
        fprintf(stderr, "FAIL %s: still waiting 10 s after round 1 was done\n", policy->id.name);
        exit(1 + failures); /* the thread cannot be joined: stop here */
    }
    if (!early && atomic_load(&w.returned)) printf("ok   %s: waited for round 1 past a stale futex word\n", policy->id.name);
    free(e);
}

int main(void)
{
    int cpu = sched_getcpu();
    if (cpu < 0) cpu = 0;
    for (const air_named *const *p = air_barrier_wait_list; *p; p++) {
        const air_barrier_wait *policy = (const air_barrier_wait *)*p;
        if (policy->wait) check_policy(policy, cpu); /* auto has none: it stands for another */
    }
    return failures;
}
