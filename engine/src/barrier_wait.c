/* How a thread that reached the GVT barrier waits for the last one (--barrier-wait).
 *
 * The waiting matters most when another program takes a core: a waiter that gives its CPU
 * away (sched_yield) under EEVDF hands a whole slice (a tick, ~4 ms) to the competitor
 * sharing its core, so a round that needs both threads running at once only completes
 * when their slices happen to overlap; with 2 CPU loads on 2 cores FM then ran one round
 * per ~3.8 ms instead of per ~0.1 ms (81 s for a 0.7 s run, docs/engine-benchmarks.md).
 * A waiter that keeps its CPU (spin) completes rounds whenever the partner runs, but
 * steals the CPU from a partner queued on the same core (more threads than cores).
 * `block` spins for --barrier-spin-us (a round's work is ~50-100 us, so a partner that
 * is running arrives within it) and then sleeps on a futex until the leader wakes it:
 * the CPU goes to whoever needs it, and the wake-up comes the moment the round is done.
 * `adaptive` spins, but sleeps as soon as a partner is queued on the waiter's own CPU.
 * `idle-yield` spins while anything else on the machine is runnable and yields while
 * nothing is: such a yield hands nothing away, and on the lab's VM FM at remote 0.1 ran
 * 5% faster with a waiter that yields than with one that spins, nothing else running
 * (cause not found: docs/engine-benchmarks.md). `partner` is idle-yield that sleeps while
 * a thread it waits for is switched out. `auto` is idle-yield with no more threads than
 * CPUs, else adaptive.
 *
 *   spin      busy-wait (with the CPU's pause hint) until the round is done
 *   yield     spin 2000 pauses, then sched_yield() until the round is done (the old default)
 *   block     spin up to --barrier-spin-us, then sleep on a futex
 *   adaptive  spin, checking every 50 us whether a partner is queued on this CPU: then sleep
 *   idle-yield  spin 2000 pauses, then yield while the machine's runnable tasks are no more
 *             than the engine's active threads, else spin (checking every 64 pauses) and
 *             move off the CPU if the awaited thread is queued on it (unpinned); a yield
 *             that handed the CPU away stops the yields for 100 ms
 *   partner   idle-yield while the threads still missing make progress, sleep while one
 *             is switched out */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline int round_done(air_engine *e, uint64_t gen)
{
    return atomic_load_explicit(&e->bar_gen, memory_order_acquire) != gen;
}

static void nothing_to_wake(air_engine *e) { (void)e; }

static void spin_wait(air_engine *e, air_thread *t, uint64_t gen)
{
    (void)t;
    while (!round_done(e, gen)) cpu_relax();
}

static void yield_wait(air_engine *e, air_thread *t, uint64_t gen)
{
    (void)t;
    for (int i = 0; i < 2000; i++) {
        if (round_done(e, gen)) return;
        cpu_relax();
    }
    while (!round_done(e, gen)) sched_yield();
}

/* Spin until the round is done or spin_us have passed (the clock is read every 64 pauses,
 * ~2-5 us). Returns 1 when the round is done. */
static int bounded_spin(air_engine *e, uint64_t gen, double spin_us)
{
    if (!(spin_us > 0)) return round_done(e, gen);
    double until = air_wall() + spin_us * 1e-6;
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (round_done(e, gen)) return 1;
            cpu_relax();
        }
        if (air_wall() >= until) return round_done(e, gen);
    }
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, NULL, NULL, 0);
}

/* Sleep on the futex word bar_word until the round is done. bar_word is what the leader
 * changes and wakes on: block_wake sets it to bar_gen's low 32 bits after advancing bar_gen.
 * Only bar_gen says the round is done. A leader switched out between its two stores leaves
 * bar_word at the round before while the next round runs; a sleeper that took the stale word
 * for "done" returned early and ran its PE while the next leader drained every PE (a broken
 * event list, SIGSEGV in air_pe_fossil, 29 Nov; engine/tests/unit_barrier_wait.c). So the
 * sleeper sleeps on whatever value the word has, and wakes whenever it changes.
 * No lost wake-up: a sleeper registers in bar_sleepers before it reads the word, and the
 * leader updates the word before it reads bar_sleepers (both sequentially consistent), so
 * either the sleeper reads the new word (and FUTEX_WAIT, which rechecks it in the kernel,
 * returns at once) or the leader sees the sleeper and wakes it. */
static void sleep_until_done(air_engine *e, uint64_t gen)
{
    atomic_fetch_add(&e->bar_sleepers, 1);
    for (;;) {
        uint32_t word = atomic_load(&e->bar_word);
        if (round_done(e, gen)) break;
        futex(&e->bar_word, FUTEX_WAIT_PRIVATE, word);
    }
    atomic_fetch_sub(&e->bar_sleepers, 1);
}

/* block's own option (its value: e->barrier_wait_opt[BLOCK_SPIN_US]) */
enum { BLOCK_SPIN_US, BLOCK_NOPTS };

static const air_option_def block_options[] = {
    [BLOCK_SPIN_US] = { .name = "barrier-spin-us", .metavar = "F", .def = "50", .kind = AIR_OPT_DOUBLE, .min = 0, .max = 1e7,
                        .help = "block: microseconds to spin at the barrier before sleeping" },
    [BLOCK_NOPTS] = { 0 },
};

static void block_wait(air_engine *e, air_thread *t, uint64_t gen)
{
    (void)t;
    if (!bounded_spin(e, gen, e->barrier_wait_opt[BLOCK_SPIN_US].d)) sleep_until_done(e, gen);
}

/* Whether another engine thread is queued behind this waiter on its CPU (it last ran on
 * the same CPU and has not arrived): then spinning only delays it to the end of the
 * waiter's slice, so the waiter sleeps. Otherwise the waiter spins: its partners run (or
 * wait for a competitor) on other CPUs, and a sleeping waiter would leave its CPU idle,
 * the kernel would pull a queued task onto it (often the other engine thread, which then
 * shares a CPU with it) and the next rounds would alternate instead of overlap. */
#define CHECK_EVERY_US 50

static int partner_queued_here(air_engine *e, air_thread *t)
{
    int mine = sched_getcpu();
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *o = &e->threads[i];
        if (o != t && atomic_load_explicit(&o->active, memory_order_relaxed) &&
            atomic_load_explicit(&o->cpu, memory_order_relaxed) == mine)
            return 1;
    }
    return 0;
}

static void adaptive_wait(air_engine *e, air_thread *t, uint64_t gen)
{
    while (!bounded_spin(e, gen, CHECK_EVERY_US))
        if (partner_queued_here(e, t)) {
            sleep_until_done(e, gen);
            return;
        }
}

/* Tasks runnable on the whole machine now, this one included (/proc/loadavg's fourth
 * field, "R/T"), or INT_MAX when it cannot be read (then the waiter spins). */
static int machine_runnable(int fd)
{
    char buf[128];
    ssize_t k = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (k <= 0) return INT_MAX;
    buf[k] = 0;
    char *p = buf;
    for (int field = 0; field < 3 && p; field++) {
        p = strchr(p, ' ');
        if (p) p++;
    }
    return p ? atoi(p) : INT_MAX;
}

/* A yield that returns after more than HANDOFF_US handed the CPU to another task although
 * /proc/loadavg counted nothing runnable beyond the engine's threads: a task woke between
 * the check and the yield, or the count is wrong (a stale or virtualised /proc; a wrong
 * count made idle-yield as slow as `yield` beside two loads, engine/tests/barrier_waits.py).
 * The waiter then spins, not yields, for NO_YIELD_S, so however wrong the count, a waiter
 * hands a competitor at most one slice per NO_YIELD_S instead of one per round. A yield
 * with nothing else to run returns in about a microsecond; a handoff lasts a slice (ms). */
#define HANDOFF_US 50
#define NO_YIELD_S 0.1

static int nothing_else_runnable(air_engine *e, air_thread *t)
{
    return air_wall() >= t->no_yield_until &&
           machine_runnable(e->loadavg_fd) <= atomic_load_explicit(&e->n_active, memory_order_relaxed);
}

static void checked_yield(air_thread *t)
{
    double before = air_wall();
    sched_yield();
    double after = air_wall();
    if (after - before > HANDOFF_US * 1e-6) {
        t->yield_handoffs++;
        t->no_yield_until = after + NO_YIELD_S;
    }
}

/* Leave this CPU for the others the process may use: a partner queued behind the waiter
 * here then runs at once. Needed because the kernel balances scheduling groups, not
 * threads: beside a program of another session (another autogroup or cgroup) both engine
 * threads on one CPU and the program on the other look balanced, and the kernel left them
 * so for whole runs (FM took >29x its time; docs/engine-benchmarks.md). The waiter's mask
 * stays "every allowed CPU but the one it left" until it has to move again. */
static void move_off_this_cpu(air_engine *e, air_thread *t)
{
    int here = sched_getcpu();
    cpu_set_t set = e->allowed_cpus;
    if (here < 0 || !CPU_ISSET(here, &set) || CPU_COUNT(&set) < 2) return;
    CPU_CLR(here, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0) t->cpu_moves++;
}

/* The loop idle-yield and partner share: spin 2000 pauses (a running partner arrives
 * within them), then until the round is done yield while nothing else is runnable
 * (checked_yield: it hands nothing away), else spin, and every CHECK_EVERY_US of spinning
 * ask the policy's `check` what the others are doing; a check that returns 1 puts the
 * waiter to sleep on the futex until the round is done. The check's clock restarts after
 * a yield: what it compares (a partner's progress) was not watched meanwhile. */
typedef int (*wait_check)(air_engine *e, air_thread *t, uint64_t gen, uint64_t *seen);

static void keep_cpu_wait(air_engine *e, air_thread *t, uint64_t gen, wait_check check, uint64_t *seen)
{
    for (int i = 0; i < 2000; i++) {
        if (round_done(e, gen)) return;
        cpu_relax();
    }
    double next_check = air_wall() + CHECK_EVERY_US * 1e-6;
    while (!round_done(e, gen)) {
        if (nothing_else_runnable(e, t)) {
            checked_yield(t);
            next_check = air_wall() + CHECK_EVERY_US * 1e-6;
            continue;
        }
        for (int i = 0; i < 64 && !round_done(e, gen); i++) cpu_relax();
        if (air_wall() < next_check) continue;
        if (check(e, t, gen, seen)) {
            sleep_until_done(e, gen);
            return;
        }
        next_check = air_wall() + CHECK_EVERY_US * 1e-6;
    }
}

/* idle-yield: anything runnable beyond the engine's own active threads (a load, another
 * program, a kernel thread) makes the waiter keep its CPU, so a yield never hands a
 * competitor a slice (the collapse of `yield`). A task that becomes runnable between the
 * check and the yield gets one slice, and then no yield for NO_YIELD_S (checked_yield).
 * The check only moves the waiter off a CPU the awaited thread is queued on; it never sleeps. */
static int queued_partner_check(air_engine *e, air_thread *t, uint64_t gen, uint64_t *seen)
{
    (void)gen, (void)seen;
    if (e->may_move && partner_queued_here(e, t)) move_off_this_cpu(e, t);
    return 0;
}

static void idle_yield_wait(air_engine *e, air_thread *t, uint64_t gen)
{
    keep_cpu_wait(e, t, gen, queued_partner_check, NULL);
}

/* partner: the adaptive mutex's rule (spin while the owner runs, sleep while it does not)
 * applied to a barrier. While every thread still missing is making progress (its
 * iteration count moved within the last check), it will arrive within microseconds:
 * keep the CPU (spin while anything else is runnable, yield while nothing is, as
 * idle-yield). While one is switched out (its count stood still for a whole check of
 * 50 us), waiting for it can take a scheduler slice: sleep on the futex, so the CPU goes
 * to whoever needs it, and the leader's wake-up (which preempts a competitor, the sleeper
 * having used less than its share) starts the next round with both threads running.
 * With a CPU load per core this took FM from 3.2-4.5x to 2.1-2.8x its no-load time; with
 * one load it changed little (docs/engine-benchmarks.md). A missing partner queued
 * behind the waiter on its own CPU is let run by moving off the CPU (unpinned, threads
 * <= CPUs), else by sleeping. Nothing else runnable: nobody can be switched out, and a
 * long iteration of a partner (a PE's first after a round fossil-collects) must not put
 * the waiter to sleep (keep_cpu_wait yields then); in the a3d99c9 quick run, sleeping
 * without that check went with no-load false alarms in 44% of adaptive trials (0-6% before). */
static int switched_out_check(air_engine *e, air_thread *t, uint64_t gen, uint64_t *seen)
{
    int mine = sched_getcpu(), out = 0, moved = 0;
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *o = &e->threads[i];
        if (o == t || !atomic_load_explicit(&o->active, memory_order_relaxed) ||
            atomic_load_explicit(&o->waiting_gen, memory_order_relaxed) == gen)
            continue;
        uint64_t b = atomic_load_explicit(&o->beat, memory_order_relaxed);
        if (b == seen[i]) {
            out = 1;
            if (e->may_move && !moved && atomic_load_explicit(&o->cpu, memory_order_relaxed) == mine) {
                move_off_this_cpu(e, t);
                moved = 1;
            }
        }
        seen[i] = b;
    }
    return out && !moved;
}

static void partner_wait(air_engine *e, air_thread *t, uint64_t gen)
{
    uint64_t seen[e->nthreads];
    for (int i = 0; i < e->nthreads; i++) seen[i] = atomic_load_explicit(&e->threads[i].beat, memory_order_relaxed);
    keep_cpu_wait(e, t, gen, switched_out_check, seen);
}

static void block_wake(air_engine *e)
{
    atomic_store(&e->bar_word, (uint32_t)atomic_load(&e->bar_gen));
    if (atomic_load(&e->bar_sleepers) > 0) futex(&e->bar_word, FUTEX_WAKE_PRIVATE, INT_MAX);
}

/* auto: idle-yield while every thread can have a CPU of its own (beside a competitor the
 * waiter keeps its CPU, so a round completes the moment its partner runs; with one or two
 * CPU loads on 2 cores this kept FM within 1.5-2.5x of Eq. 1 where yield collapsed
 * 10-100x; with nothing else running it yields, which was 5% faster), adaptive when threads
 * outnumber the usable CPUs (a pure spinner would keep a partner queued behind it on its
 * CPU for a whole slice per round). `partner` was auto in a3d99c9: FM beside a load per
 * core 2.4-2.8x instead of 3.9-4.5x, but in the workflow's quick run its futex sleeps went
 * with no-load false alarms and on-off trials flagged disturbed (the wake-ups' interrupt
 * time counts as foreign CPU), so it is an option until those are understood.
 * Measurements: docs/engine-benchmarks.md. */
long air_usable_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
}

static const air_barrier_wait *auto_resolve(const air_options *o)
{
    return (long)o->threads <= air_usable_cpus() ? &air_barrier_wait_idle_yield : &air_barrier_wait_adaptive;
}

const air_barrier_wait air_barrier_wait_auto = {
    { "auto", "idle-yield when every thread can have a CPU of its own, else adaptive", 1, NULL }, NULL, NULL, auto_resolve, 0, 0, 0,
};
const air_barrier_wait air_barrier_wait_spin = {
    { "spin", "busy-wait: a round completes as soon as the last thread arrives, but a thread "
      "queued behind the spinner on its CPU waits for the spinner's slice to end", 0, NULL },
    spin_wait, nothing_to_wake, NULL, 0, 0, 1,
};
const air_barrier_wait air_barrier_wait_yield = {
    { "yield", "spin briefly, then sched_yield(): under EEVDF the waiter hands a competing "
      "program a whole slice per round, so FM under load crawls (kept to measure exactly that)", 0, NULL },
    yield_wait, nothing_to_wake, NULL, 0, 0, 0,
};
const air_barrier_wait air_barrier_wait_block = {
    { "block", "spin --barrier-spin-us, then sleep on a futex until the round is done", 0, block_options },
    block_wait, block_wake, NULL, 0, 0, 0,
};
const air_barrier_wait air_barrier_wait_adaptive = {
    { "adaptive", "spin, but sleep once another engine thread is queued on the waiter's CPU "
      "(it would wait for the spinner's slice to end)", 0, NULL },
    adaptive_wait, block_wake, NULL, 1, 0, 0,
};
const air_barrier_wait air_barrier_wait_partner = {
    { "partner", "idle-yield while every missing thread is running; sleep on a futex while one is "
      "switched out (its progress stood still for 50 us); leave a CPU a missing thread is queued on", 0, NULL },
    partner_wait, block_wake, NULL, 1, 1, 0,
};
const air_barrier_wait air_barrier_wait_idle_yield = {
    { "idle-yield", "spin while anything else on the machine is runnable; while nothing is, "
      "sched_yield() (it then hands nothing away; on the lab's VM it was 5% faster than spinning); "
      "unpinned, leave a CPU the awaited thread is queued on", 0, NULL },
    idle_yield_wait, nothing_to_wake, NULL, 1, 1, 1,
};
