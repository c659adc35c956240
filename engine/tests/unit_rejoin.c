/* A reactivated thread does not arrive at the GVT barrier whose round is still being led.
 *
 * The ordering that broke it (no_deadlock on CI, 30 Nov; here 1 of 12 runs of that driver's
 * 200 engine runs, and 1 engine run in ~45 of a pinned LADM/PR/rq mix that deactivates
 * often): a thread deactivated at one barrier is switched out on its way back, before it
 * looks at its membership; the others run on, and a later
 * round's leader reactivates it. Looking now, the thread saw itself active, ran, and
 * arrived at the barrier while that leader was still inside its round: the arrival made it
 * a second leader, the first leader's reset of the arrival count then erased an arrival of
 * the next round, and every thread waited for ever (gvt_round one ahead of bar_gen).
 *
 * Driven by hand on a two-thread engine record (no simulation, no PE): this test plays the
 * leader (thread 0); thread 1 runs the real air_thread_main from the moment it has been
 * reactivated inside an unfinished round. Exit status: failures. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "hand_engine.h"

static air_pe *nothing_to_run(air_engine *e, air_thread *t)
{
    (void)e;
    (void)t;
    return NULL;
}

static void nothing_to_release(air_engine *e, air_thread *t, air_pe *pe)
{
    (void)e;
    (void)t;
    (void)pe;
}

static const air_mapping no_pes = { .acquire = nothing_to_run, .release = nothing_to_release };
static const air_sync no_window = { .id = { "none", "", 0, NULL } }; /* no bounds, no window */

static void *run_thread(void *arg)
{
    return air_thread_main(arg);
}

/* Wait up to ms for cond; 1 when it held. */
#define WITHIN_MS(ms, cond) ({ int ok_ = 0; for (int i_ = 0; i_ < (ms) && !(ok_ = (cond)); i_++) sleep_ms(1); ok_; })

int main(void)
{
    int failures = 0;
    air_options opt;
    if (air_options_defaults(&opt)) return 1;
    opt.gvt_interval = 1; /* every iteration ends at the barrier */
    air_thread threads[2];
    air_engine *e = hand_engine(&opt, threads, (const air_barrier_wait *)air_registry_find(air_barrier_wait_list, "spin"));
    e->adaptive = 1;
    e->mapping = &no_pes;
    e->sync = &no_window;
    e->t0 = air_wall();
    for (int i = 0; i < 2; i++) {
        pthread_mutex_init(&threads[i].mu, NULL);
        pthread_cond_init(&threads[i].cv, NULL);
    }
    air_thread *rejoiner = &threads[1];
    /* Round 5 is being led by thread 0 alone (thread 1 was deactivated at an earlier
     * barrier and has not looked since): the leader reactivates thread 1 in it. */
    atomic_store(&threads[0].active, AIR_ACTIVE);
    atomic_store(&rejoiner->active, AIR_INACTIVE);
    atomic_store(&e->n_active, 1);
    atomic_store(&e->bar_gen, 5);
    atomic_store(&e->bar_arrived, 1); /* the leader's own arrival */
    air_adapt_activate(e, rejoiner);
    pthread_t th;
    pthread_create(&th, NULL, run_thread, rejoiner); /* thread 1 looks now */

    if (WITHIN_MS(200, atomic_load(&e->bar_arrived) != 1)) {
        failures++;
        fprintf(stderr, "FAIL: the reactivated thread arrived at the barrier of round 5 while its "
                        "leader was still in it (arrivals %d, waiting in round %llu)\n",
                atomic_load(&e->bar_arrived), (unsigned long long)atomic_load(&rejoiner->waiting_gen));
    } else {
        printf("ok   the reactivated thread stayed out of the round being led\n");
    }

    /* The leader ends round 5 as air_gvt_barrier does. */
    atomic_store(&e->bar_arrived, 0);
    atomic_store(&e->bar_gen, 6);
    if (!failures) {
        if (WITHIN_MS(2000, atomic_load(&e->bar_arrived) == 1 && atomic_load(&rejoiner->waiting_gen) == 6)) {
            printf("ok   it arrived at round 6 once round 5 was released\n");
        } else {
            failures++;
            fprintf(stderr, "FAIL: it did not arrive at round 6 within 2 s of round 5's release "
                            "(arrivals %d, membership %d)\n",
                    atomic_load(&e->bar_arrived), atomic_load(&rejoiner->active));
        }
        if (atomic_load(&rejoiner->active) != AIR_ACTIVE) {
            failures++;
            fprintf(stderr, "FAIL: it rejoined but its membership is %d, not ACTIVE\n",
                    atomic_load(&rejoiner->active));
        }
    }

    atomic_store(&e->done, 1); /* end the run: the thread leaves its wait and its loop */
    atomic_store(&e->bar_gen, 1000);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    if (pthread_timedjoin_np(th, NULL, &until) != 0) {
        fprintf(stderr, "FAIL: the thread did not end within 10 s of the run's end\n");
        return failures + 1;
    }
    free(e);
    return failures;
}
