/* The engine's shared objects: PEs, threads and the run itself. Modules: pe.c (one PE's
 * work: drain inputs, roll back, handle a batch, fossil-collect), gvt.c (barrier and GVT
 * round), thread_loop.c (a worker thread), mapping_*.c (which PE a thread runs next),
 * detector_*.c and reactivation_*.c (adaptation), seq_run.c (the sequential reference),
 * barrier_wait.c (how a thread waits at the barrier), timeline.c, json_out.c, engine.c
 * (set-up, run, tear-down, the JSON report and summary). */
#ifndef AIR_ENGINE_H
#define AIR_ENGINE_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include "event.h"
#include "event_pool.h"
#include "lp_record.h"
#include "model.h"
#include "options.h"
#include "registry.h"
#include "pending_heap.h"
#include "spsc_queue.h"

typedef struct air_engine air_engine;
typedef struct air_thread air_thread;

typedef struct air_pe {
    /* touched only by the thread holding the PE (or the GVT leader at a barrier) */
    air_heap pending;
    air_event *proc_head, *proc_tail; /* processed, oldest .. newest (key order) */
    uint64_t nproc;                   /* length of the processed list */
    air_pool pool;
    air_spsc *in;                     /* in[src_pe]: one queue per sending PE */
    unsigned char *lps;               /* LP records of this PE's LPs */
    uint64_t first_lp, nlps;
    double safe_bound;                /* handle only ts < safe_bound (sync hook) */
    uint64_t fossil_round;            /* GVT round of the last fossil collection */
    uint32_t id;
    int32_t primary;                  /* thread whose primary PE this is, -1: none */
    uint64_t processed, rolled_back, rollbacks, iterations, non_primary_iterations;
    uint64_t seq_committed;           /* seq mode: events handled for this PE's LPs */
    air_engine *eng;
    /* shared */
    _Atomic uint64_t committed;
    _Atomic uint64_t lvt_bits;        /* next pending timestamp (double bits), for LADM */
    _Atomic int holder;               /* thread id holding the PE, -1 when free */
} __attribute__((aligned(64))) air_pe;

#define AIR_MAX_TIMES 4096
#define AIR_HANDOFF_BUCKET_NS 16
#define AIR_HANDOFF_BUCKETS 65 /* 0-1024 ns in 16 ns steps, then one for everything longer */

struct air_thread {
    int id;
    pthread_t th;
    air_engine *eng;
    uint64_t iter;
    /* mapping state */
    uint32_t cursor;
    int32_t help_pe;
    uint64_t help_left;
    int ran_primary;
    /* adaptation: decided by the GVT leader, requested by the thread. Read by the other
     * threads every iteration (LADM's orphan scan reads active), so on a cache line of its
     * own, away from the fields the owner writes every iteration (above and below). */
    _Alignas(64) _Atomic int active; /* AIR_INACTIVE, AIR_ACTIVE or AIR_REJOINING (non-zero:
                                       * a member the GVT barrier counts and waits for) */
    _Atomic int want_deactivate;
    _Atomic int want_reactivate;
    _Atomic int probe;
    _Atomic uint64_t join_gen;    /* barrier generation during which it was reactivated */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* detector state */
    _Alignas(64) double period_busy;
    uint64_t period_events;
    uint32_t suspect_checks;      /* the detector's consecutive positive checks (thread-local) */
    void *detector_state;         /* the detector's own per-thread state (its state_size bytes,
                                   * zeroed, on cache lines of their own; NULL: none) */
    _Atomic int cpu;              /* CPU it last ran on, -1 before (set every iteration when engine.tracks_cpus) */
    _Atomic uint64_t beat;        /* its iteration count, published with cpu: still moving = running */
    _Atomic uint64_t waiting_gen; /* the barrier generation it waits in (set on arrival) */
    uint64_t cpu_moves;           /* times its barrier wait left a CPU where a partner was queued behind it */
    uint64_t yield_handoffs;      /* sched_yield() calls of its barrier wait that handed the CPU away */
    double no_yield_until;        /* its barrier wait spins instead of yielding until this wall time */
    /* how long after the leader released a GVT round this thread left its wait, in
     * AIR_HANDOFF_BUCKET_NS buckets (the last: everything longer): a waiter that was spinning
     * sees the release one cache-line transfer later, which is ~6x longer when the host runs
     * the vCPUs far apart (workflows/placement.py), so the run's histogram shows how much of
     * it ran far */
    uint64_t handoff_hist[AIR_HANDOFF_BUCKETS];
    /* statistics */
    uint64_t events;
    double busy_s, inactive_s;
    uint64_t deactivations, reactivations;
    /* RAP's probes while inactive: how many, how many too slow to come back, the slowest
     * (so a thread that never came back says whether it was never probed or always slow) */
    uint64_t rap_probes, rap_slow_probes;
    uint64_t rap_no_spare_cpu;    /* probes not run: every CPU had an active thread (counted slow) */
    double rap_probe_max_us;
    double deact_times[AIR_MAX_TIMES], react_times[AIR_MAX_TIMES];
} __attribute__((aligned(64)));

/* Descriptors of the engine's policies: the first member names it (registry.h). */
typedef struct air_mapping {
    air_pe *(*acquire)(air_engine *e, air_thread *t); /* NULL: nothing to run now */
    void (*release)(air_engine *e, air_thread *t, air_pe *pe);
    /* threads keep a primary PE and run another only to help it while its thread is
     * inactive (a PE's non_primary_iterations count that help; --describe: helps_orphans) */
    int helps_orphans;
} air_mapping;

typedef struct air_mode {
    air_named id;
    const air_mapping *mapping;   /* NULL for the sequential reference */
    int sequential;               /* one thread, one queue, no rollback */
    int adaptive;                 /* threads are deactivated and reactivated */
    int threads_equal_pes;        /* a thread per PE (else threads <= PEs) */
} air_mode;

/* A detector is its file: its per-thread state is its own struct (state_size; the engine
 * allocates it zeroed for every thread, t->detector_state), and the hooks below are all the
 * engine calls. Only check is required. */
typedef struct air_detector {
    air_named id;  /* with its options (id.options): the running detector reads option k as e->detector_opt[k] */
    size_t state_size;                                 /* 0: no per-thread state */
    int (*usable)(char *err, size_t errlen);           /* -1: not on this machine */
    int (*thread_start)(air_engine *e, air_thread *t); /* detection starts (--detect-after-ms) */
    void (*check)(air_engine *e, air_thread *t);       /* sets t->want_deactivate */
    void (*rejoin)(air_thread *t);                     /* the thread is active again */
    void (*thread_end)(air_thread *t);                 /* the run is over: release what it holds */
    /* its figures in the thread's object of the result JSON (docs/interfaces.md) */
    void (*report)(const air_thread *t, air_json *j);
    /* the least wall time in which it can confirm a competitor after a thread comes back
     * (its hold, its windows); PR waits a multiple of it, so that a wrong reactivation
     * costs a small share of the run (reactivation_pr.c). NULL: detector checks only. */
    double (*confirm_s)(const air_engine *e);
} air_detector;

typedef struct air_reactivation {
    air_named id;
    void (*on_round)(air_engine *e); /* GVT leader, every round, all threads stopped */
} air_reactivation;

typedef struct air_barrier_wait {
    air_named id;
    void (*wait)(air_engine *e, air_thread *t, uint64_t gen); /* returns once bar_gen != gen */
    void (*wake)(air_engine *e);               /* the leader, after advancing bar_gen */
    /* set only for a choice made at start-up (auto): the policy it stands for */
    const struct air_barrier_wait *(*resolve)(const air_options *o);
    int tracks_cpu;  /* reads air_thread.cpu and .beat, which the loop then keeps up to date */
    int reads_runnable; /* reads the machine's runnable tasks (air_engine.loadavg_fd) */
    /* keeps its CPU until the round is done, whoever is queued behind it: with more threads
     * than CPUs a partner waits a slice per round (warned about at start) */
    int holds_cpu;
} air_barrier_wait;

typedef struct air_sync {
    air_named id;
    /* may be NULL: refuse (one line on stderr, 2) or warn about a run before it starts */
    int (*check)(const air_options *o, const air_sim_info *in, double lookahead);
    void (*on_round)(air_engine *e, double gvt); /* sets each PE's safe_bound */
    int (*prepare)(air_engine *e, char *err, size_t errlen); /* may be NULL; -1 refuses the run */
    int (*window_over)(air_engine *e); /* may be NULL; 1: nothing runnable, join the barrier now */
    /* may be NULL; a bound on the timestamps a PE handles in its next batch (INFINITY: none) */
    double (*batch_bound)(air_engine *e, air_pe *pe);
} air_sync;

struct air_engine {
    air_options *opt;
    const air_model *model;
    air_sim_info info;
    double min_delay;
    int seq;                   /* sequential reference run */
    int adaptive;              /* adm / ladm */
    air_pe *pes;
    uint32_t npes;
    air_thread *threads;
    int nthreads;
    size_t rec_size;
    air_pool_shared pool;
    const air_mode *mode;
    const air_mapping *mapping;
    const air_detector *detector;
    const air_reactivation *reactivation;
    const air_sync *sync;
    const air_barrier_wait *barrier_wait;
    /* the running policies' own options (air_named.options), option k at [k]; detector_opt
     * NULL when no detector runs */
    const air_option_value *mode_opt, *sync_opt, *detector_opt, *reactivation_opt, *barrier_wait_opt;
    uint64_t detect_period;    /* iterations between detector checks */
    uint64_t react_period;     /* GVT rounds between reactivation attempts */
    double t0;                 /* wall clock at the start of the simulation */
    /* barrier and GVT: bar_gen alone on its line, since waiters poll it while the
     * others run (arrivals and GVT updates must not bounce it) */
    _Atomic int n_active __attribute__((aligned(64)));
    _Atomic int bar_arrived;
    _Atomic uint64_t bar_gen __attribute__((aligned(64)));
    _Atomic uint32_t bar_word;     /* futex word of the block wait policy (bar_gen's low bits) */
    _Atomic uint64_t bar_release_bits; /* air_wall() (double bits) when the leader released the last round (bar_gen's line) */
    _Atomic int bar_sleepers;      /* threads asleep on bar_word */
    int loadavg_fd;                /* /proc/loadavg for a wait that reads_runnable, else -1 */
    cpu_set_t allowed_cpus;        /* the process's CPUs at start (before any pinning) */
    int may_move;                  /* idle-yield and partner may move a waiter off a shared CPU (unpinned, threads <= CPUs) */
    int tracks_cpus;               /* threads publish their CPU every iteration (air_thread.cpu): the
                                    * barrier wait reads it, or an inactive thread's RAP probe does */
    _Atomic uint64_t gvt_bits __attribute__((aligned(64)));
    _Atomic uint64_t gvt_round;
    _Atomic int done;
    uint32_t react_cursor;     /* where air_adapt_next_inactive starts its round-robin search */
    double rap_last_probe;     /* wall time of the last RAP probe */
    double pr_last_s;          /* wall time of PR's last reactivation slot */
    /* seq progress for the sampler */
    _Atomic uint64_t seq_now_bits;
    _Atomic uint64_t seq_committed;
};

/* helpers */
double air_wall(void); /* monotonic seconds */

static inline uint64_t air_d2u(double d) { union { double d; uint64_t u; } x = { .d = d }; return x.u; }
static inline double air_u2d(uint64_t u) { union { uint64_t u; double d; } x = { .u = u }; return x.d; }

static inline air_lp_record *air_pe_lp(air_pe *pe, uint64_t lp)
{
    return (air_lp_record *)(pe->lps + (lp - pe->first_lp) * pe->eng->rec_size);
}

static inline double air_gvt(air_engine *e) { return air_u2d(atomic_load_explicit(&e->gvt_bits, memory_order_acquire)); }

/* pe.c */
void air_pe_iteration(air_engine *e, air_thread *t, air_pe *pe);
uint64_t air_pe_drain(air_pe *pe);
void air_pe_fossil(air_pe *pe, double gvt);
struct air_ctx {
    air_engine *eng;
    air_pe *pe;
    air_lp_record *lp;
    air_event *ev;   /* the event being handled (NULL in init_lp) */
    double now;
    uint64_t self;
};

/* gvt.c */
void air_gvt_barrier(air_engine *e, air_thread *t);
void air_gvt_round(air_engine *e);

/* thread_loop.c */
void *air_thread_main(void *arg);

/* adaptation.c: membership changes, only by the GVT leader */
void air_adapt_round(air_engine *e);
void air_adapt_activate(air_engine *e, air_thread *t);
/* The next inactive thread after the last one returned (round-robin over the threads, so
 * every inactive thread gets its turn at PR's and RAP's slots), or NULL if none is out. */
air_thread *air_adapt_next_inactive(air_engine *e);
void air_adapt_inactive_wait(air_engine *e, air_thread *t);

/* A thread's membership (air_thread.active). REJOINING: reactivated by the GVT leader and
 * counted in n_active, but it must not arrive at a barrier before the leader has released
 * the round that reactivated it; it passes air_adapt_inactive_wait first, which waits for
 * that and then makes it ACTIVE. */
enum { AIR_INACTIVE = 0, AIR_ACTIVE = 1, AIR_REJOINING = 2 };
void air_adapt_wake_all(air_engine *e);
double air_probe_yield_us(void);
/* A detector's verdict on one check, confirmed: the thread asks to be deactivated only
 * after `needed` positive checks in a row (one noisy check is not a competitor). */
void air_detect_confirm(air_thread *t, int positive, uint32_t needed);

/* seq_run.c */
void air_seq_run(air_engine *e);

/* descriptors (listed in registry.c) */
extern const air_mapping air_mapping_fm, air_mapping_dm, air_mapping_ladm;
extern const air_option_def air_mapping_ladm_options[]; /* the ladm mode's (mapping_ladm.c) */
extern const air_mode air_mode_seq, air_mode_fm, air_mode_dm, air_mode_adm, air_mode_ladm;
extern const air_detector air_detector_apte, air_detector_pi, air_detector_rq;
extern const air_reactivation air_reactivation_pr, air_reactivation_rap;
extern const air_sync air_sync_optimistic, air_sync_conservative;
/* the CPUs this process may run on (its affinity mask; cpusets and SLURM binding respected) */
long air_usable_cpus(void);
extern const air_barrier_wait air_barrier_wait_auto, air_barrier_wait_spin, air_barrier_wait_yield,
    air_barrier_wait_block, air_barrier_wait_adaptive, air_barrier_wait_idle_yield, air_barrier_wait_partner;

#endif
