/* Set-up, run and tear-down of one simulation, the final checksum and the JSON report. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "engine_api.h"
#include "json_out.h"
#include "rng.h"
#include "timeline.h"

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "airpdes: out of memory\n");
        exit(1);
    }
    return p;
}

/* The policy of a kind chosen by name, and its option values (NULL: it has none): one
 * lookup in the kind's registry. For library callers too (airpdes has checked the names). */
static const void *policy(const air_options *o, air_policy_kind kind, const char *name,
                          const air_option_value **values)
{
    const air_policy_list *kind_list = &air_policy_lists[kind];
    int i = air_registry_index(kind_list->list, name);
    if (i < 0) {
        fprintf(stderr, "airpdes: unknown --%s %s\n", kind_list->option, name);
        exit(2);
    }
    *values = air_options_policy_values_at(o, kind, i);
    return kind_list->list[i];
}

air_engine *air_engine_create(air_options *o)
{
    air_engine *e = aligned_alloc(64, (sizeof *e + 63) & ~(size_t)63);
    if (!e) exit(1);
    memset(e, 0, sizeof *e);
    e->opt = o;
    e->model = o->model_def;
    e->mode = policy(o, AIR_MODES, o->mode, &e->mode_opt);
    e->seq = e->mode->sequential;
    e->adaptive = e->mode->adaptive;
    air_sim_info *in = &e->info;
    air_options_sim_info(o, in);
    char err[256] = "";
    if (e->model->configure && e->model->configure(in, err, sizeof err)) {
        fprintf(stderr, "airpdes: %s\n", err[0] ? err : "bad model configuration");
        exit(2);
    }
    e->min_delay = e->model->min_delay ? e->model->min_delay(in) : 0.0;
    e->rec_size = air_lp_record_size(e->model->state_size);
    air_pool_shared_init(&e->pool, sizeof(air_event) + e->rec_size);

    e->mapping = e->mode->mapping;
    e->detector = e->adaptive ? policy(o, AIR_DETECTORS, o->detector, &e->detector_opt) : NULL;
    e->reactivation = policy(o, AIR_REACTIVATIONS, o->reactivation, &e->reactivation_opt);
    e->sync = policy(o, AIR_SYNCS, o->sync, &e->sync_opt);
    e->barrier_wait = policy(o, AIR_BARRIER_WAITS, o->barrier_wait, &e->barrier_wait_opt);
    /* a wait that picks another (auto) runs that one, with that one's options */
    if (e->barrier_wait->resolve) {
        e->barrier_wait = e->barrier_wait->resolve(o);
        e->barrier_wait_opt = air_options_policy_values(o, AIR_BARRIER_WAITS, e->barrier_wait->id.name);
    }
    e->loadavg_fd = e->barrier_wait->reads_runnable ? open("/proc/loadavg", O_RDONLY | O_CLOEXEC) : -1;
    CPU_ZERO(&e->allowed_cpus);
    int ncpus = sched_getaffinity(0, sizeof e->allowed_cpus, &e->allowed_cpus) == 0 ? CPU_COUNT(&e->allowed_cpus) : 0;
    e->may_move = !o->pin && ncpus >= 2 && (long)o->threads <= ncpus;
    /* unpinned RAP probes run off the active threads' CPUs (adaptation.c) */
    e->tracks_cpus = e->barrier_wait->tracks_cpu || (e->adaptive && !o->pin);
    /* Adaptation keeps its own cadence, in iterations, whatever the GVT interval: detection
     * every detect_interval iterations and a reactivation attempt every 40 detection
     * periods, at the first GVT round after it (32 and 1280 iterations by default, as with
     * the earlier coupling to a GVT interval of 128: a shorter interval must not multiply
     * the probing, which costs PI a few sched_yield() calls each time). */
    e->detect_period = o->detect_interval;
    e->react_period = (40 * o->detect_interval + o->gvt_interval - 1) / o->gvt_interval;

    /* seq keeps all LPs in one PE structure (one queue); parallel modes one per PE. */
    e->npes = e->seq ? 1 : in->num_pes;
    uint32_t nstruct = e->seq ? in->num_pes : e->npes; /* seq still counts per model PE */
    e->pes = aligned_alloc(64, nstruct * sizeof(air_pe));
    if (!e->pes) exit(1);
    memset(e->pes, 0, nstruct * sizeof(air_pe));
    e->nthreads = (int)o->threads;
    e->threads = aligned_alloc(64, (size_t)e->nthreads * sizeof(air_thread));
    if (!e->threads) exit(1);
    memset(e->threads, 0, (size_t)e->nthreads * sizeof(air_thread));

    for (uint32_t p = 0; p < nstruct; p++) {
        air_pe *pe = &e->pes[p];
        pe->eng = e;
        pe->id = p;
        pe->primary = (int)p < e->nthreads ? (int32_t)p : -1;
        pe->safe_bound = INFINITY;
        atomic_store(&pe->holder, -1);
        atomic_store(&pe->lvt_bits, air_d2u(0.0));
        if (p >= e->npes) continue;
        air_heap_init(&pe->pending);
        air_pool_init(&pe->pool, &e->pool);
        pe->first_lp = e->seq ? 0 : (uint64_t)p * in->lps_per_pe;
        pe->nlps = e->seq ? in->num_lps : in->lps_per_pe;
        pe->lps = xcalloc(pe->nlps, e->rec_size);
        pe->in = xcalloc(e->npes, sizeof(air_spsc));
        for (uint32_t s = 0; s < e->npes; s++) air_spsc_init(&pe->in[s]);
    }
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *t = &e->threads[i];
        t->id = i;
        t->eng = e;
        t->cursor = (uint32_t)i;
        /* the detector's per-thread state on cache lines of its own (APTE's is read by
         * the other threads) */
        if (e->detector && e->detector->state_size) {
            size_t size = (e->detector->state_size + 63) & ~(size_t)63;
            t->detector_state = aligned_alloc(64, size);
            if (!t->detector_state) {
                fprintf(stderr, "airpdes: out of memory\n");
                exit(1);
            }
            memset(t->detector_state, 0, size);
        }
        atomic_store(&t->active, AIR_ACTIVE);
        atomic_store(&t->cpu, -1);
        pthread_mutex_init(&t->mu, NULL);
        pthread_cond_init(&t->cv, NULL);
    }
    atomic_store(&e->n_active, e->nthreads);
    if (e->sync->prepare && e->sync->prepare(e, err, sizeof err)) {
        fprintf(stderr, "airpdes: %s\n", err);
        exit(2);
    }

    /* Initial LP states and events, in LP order (sends to other PEs wait in the queues). */
    for (uint64_t lp = 0; lp < in->num_lps; lp++) {
        air_pe *pe = &e->pes[e->seq ? 0 : lp / in->lps_per_pe];
        air_lp_record *r = air_pe_lp(pe, lp);
        r->rng = air_rng_seed(o->seed, lp);
        air_ctx ctx = { .eng = e, .pe = pe, .lp = r, .ev = NULL, .now = 0.0, .self = lp };
        e->model->init_lp(&ctx, r->state);
    }
    return e;
}

void air_engine_run(air_engine *e, air_timeline *tl, air_result *r)
{
    e->t0 = air_wall();
    if (tl) air_timeline_start(tl, e, tl->record, tl->progress);
    if (e->seq) {
        air_seq_run(e);
    } else {
        for (int i = 1; i < e->nthreads; i++)
            if (pthread_create(&e->threads[i].th, NULL, air_thread_main, &e->threads[i])) {
                fprintf(stderr, "airpdes: cannot start thread %d\n", i);
                exit(1);
            }
        air_thread_main(&e->threads[0]);
        for (int i = 1; i < e->nthreads; i++) pthread_join(e->threads[i].th, NULL);
        for (uint32_t p = 0; p < e->npes; p++) air_pe_fossil(&e->pes[p], INFINITY);
    }
    r->wall_s = air_wall() - e->t0;
    r->start_monotonic_s = e->t0;
    if (tl) air_timeline_stop(tl);
    r->committed = r->processed = r->rolled_back = r->rollbacks = 0;
    for (uint32_t p = 0; p < e->npes; p++) {
        air_pe *pe = &e->pes[p];
        r->processed += pe->processed;
        r->rolled_back += pe->rolled_back;
        r->rollbacks += pe->rollbacks;
        r->committed += e->seq ? pe->processed : atomic_load(&pe->committed);
    }
    r->gvt_rounds = atomic_load(&e->gvt_round);
    r->final_gvt = air_gvt(e);
    /* FNV-1a over every LP record (random stream, send sequence, model state) in LP order. */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (uint64_t lp = 0; lp < e->info.num_lps; lp++) {
        air_pe *pe = &e->pes[e->seq ? 0 : lp / e->info.lps_per_pe];
        const unsigned char *b = (const unsigned char *)air_pe_lp(pe, lp);
        for (size_t k = 0; k < e->rec_size; k++) h = (h ^ b[k]) * 0x100000001b3ULL;
    }
    r->checksum = h;
}

/* ---- report access for models ---- */
struct air_report {
    air_engine *e;
};

uint64_t air_report_num_lps(const air_report *r) { return r->e->info.num_lps; }
const air_sim_info *air_report_info(const air_report *r) { return &r->e->info; }
const void *air_report_state(const air_report *r, uint64_t lp)
{
    air_engine *e = r->e;
    air_pe *pe = &e->pes[e->seq ? 0 : lp / e->info.lps_per_pe];
    return air_pe_lp(pe, lp)->state;
}

static void times_array(air_json *j, const char *key, const double *v, uint64_t n)
{
    air_json_arr(j, key);
    for (uint64_t i = 0; i < n && i < AIR_MAX_TIMES; i++) air_json_f64(j, NULL, v[i]);
    air_json_end_arr(j);
}

void air_engine_write_json(air_engine *e, const air_result *r, FILE *f)
{
    air_json j;
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r->checksum);
    air_json_start(&j, f);
    air_options_to_json(e->opt, &j);
    /* which of config's options decide the simulated events, so readers keep no list of them */
    air_options_work_json(e->opt->model_def, &j);
    /* whether the mode adapts its threads, so readers keep no lists of mode names */
    air_json_bool(&j, "mode_adaptive", e->adaptive);
    air_json_f64(&j, "wall_s", r->wall_s);
    /* the instant wall_s and the timeline count from, so a runner can put loads on the same clock */
    air_json_f64(&j, "start_monotonic_s", r->start_monotonic_s);
    air_json_u64(&j, "committed_events", r->committed);
    air_json_u64(&j, "processed_events", r->processed);
    air_json_u64(&j, "rolled_back_events", r->rolled_back);
    air_json_u64(&j, "rollbacks", r->rollbacks);
    air_json_f64(&j, "efficiency", r->processed ? (double)r->committed / (double)r->processed : 1.0);
    air_json_f64(&j, "event_rate", r->wall_s > 0 ? (double)r->committed / r->wall_s : 0.0);
    air_json_u64(&j, "gvt_rounds", r->gvt_rounds);
    air_json_f64(&j, "final_gvt", r->final_gvt);
    /* every waiter's release-to-return times, summed over threads (air_thread.handoff_hist) */
    air_json_obj(&j, "barrier_handoff");
    air_json_u64(&j, "bucket_ns", AIR_HANDOFF_BUCKET_NS);
    air_json_arr(&j, "counts");
    for (int b = 0; b < AIR_HANDOFF_BUCKETS; b++) {
        uint64_t n = 0;
        for (int i = 0; i < e->nthreads; i++) n += e->threads[i].handoff_hist[b];
        air_json_u64(&j, NULL, n);
    }
    air_json_end_arr(&j);
    air_json_end_obj(&j);
    air_json_str(&j, "checksum", hex);
    air_json_arr(&j, "threads");
    for (int i = 0; i < e->nthreads; i++) {
        air_thread *t = &e->threads[i];
        air_json_obj(&j, NULL);
        air_json_i64(&j, "id", i);
        air_json_u64(&j, "events", t->events);
        air_json_f64(&j, "busy_s", t->busy_s);
        air_json_f64(&j, "inactive_s", t->inactive_s);
        air_json_u64(&j, "deactivations", t->deactivations);
        air_json_u64(&j, "reactivations", t->reactivations);
        air_json_u64(&j, "cpu_moves", t->cpu_moves);
        air_json_u64(&j, "yield_handoffs", t->yield_handoffs);
        air_json_u64(&j, "rap_probes", t->rap_probes);
        air_json_u64(&j, "rap_slow_probes", t->rap_slow_probes);
        air_json_f64(&j, "rap_probe_max_us", t->rap_probe_max_us);
        air_json_u64(&j, "rap_no_spare_cpu", t->rap_no_spare_cpu);
        if (e->detector && e->detector->report) e->detector->report(t, &j);
        times_array(&j, "deactivation_times_s", t->deact_times, t->deactivations);
        times_array(&j, "reactivation_times_s", t->react_times, t->reactivations);
        /* the lists keep the first AIR_MAX_TIMES of each; the counts above are exact */
        air_json_bool(&j, "times_truncated",
                      t->deactivations > AIR_MAX_TIMES || t->reactivations > AIR_MAX_TIMES);
        air_json_end_obj(&j);
    }
    air_json_end_arr(&j);
    air_json_arr(&j, "pes");
    for (uint32_t p = 0; p < e->info.num_pes; p++) {
        air_pe *pe = &e->pes[p];
        air_json_obj(&j, NULL);
        air_json_u64(&j, "id", p);
        air_json_u64(&j, "committed_events", e->seq ? pe->seq_committed : atomic_load(&pe->committed));
        air_json_u64(&j, "iterations", pe->iterations);
        air_json_u64(&j, "non_primary_iterations", pe->non_primary_iterations);
        air_json_end_obj(&j);
    }
    air_json_end_arr(&j);
    air_json_obj(&j, "model");
    air_json_str(&j, "name", e->model->name);
    struct air_report rep = { e };
    e->model->report(&rep, &j);
    air_json_end_obj(&j);
    air_json_finish(&j);
}

void air_engine_print_summary(air_engine *e, const air_result *r, FILE *f)
{
    air_options *o = e->opt;
    fprintf(f, "airpdes: %s %s, %llu thread%s, %u PE%s x %llu LP%s, end time %g\n", o->model, o->mode,
            (unsigned long long)o->threads, o->threads == 1 ? "" : "s", e->info.num_pes,
            e->info.num_pes == 1 ? "" : "s", (unsigned long long)o->lps_per_pe,
            o->lps_per_pe == 1 ? "" : "s", o->end_time);
    fprintf(f, "  committed %llu events in %.3f s = %.3f M ev/s\n", (unsigned long long)r->committed,
            r->wall_s, r->wall_s > 0 ? (double)r->committed / r->wall_s / 1e6 : 0.0);
    fprintf(f, "  processed %llu, rolled back %llu in %llu rollbacks, efficiency %.2f%%, %llu GVT rounds\n",
            (unsigned long long)r->processed, (unsigned long long)r->rolled_back,
            (unsigned long long)r->rollbacks,
            r->processed ? 100.0 * (double)r->committed / (double)r->processed : 100.0,
            (unsigned long long)r->gvt_rounds);
    if (e->adaptive)
        for (int i = 0; i < e->nthreads; i++)
            fprintf(f, "  thread %d: %llu deactivation%s, %llu reactivation%s, inactive %.3f s\n", i,
                    (unsigned long long)e->threads[i].deactivations,
                    e->threads[i].deactivations == 1 ? "" : "s",
                    (unsigned long long)e->threads[i].reactivations,
                    e->threads[i].reactivations == 1 ? "" : "s", e->threads[i].inactive_s);
    fprintf(f, "  checksum %016llx\n", (unsigned long long)r->checksum);
}

void air_engine_destroy(air_engine *e)
{
    for (uint32_t p = 0; p < e->npes; p++) {
        air_pe *pe = &e->pes[p];
        air_heap_destroy(&pe->pending);
        for (uint32_t s = 0; s < e->npes; s++) air_spsc_destroy(&pe->in[s]);
        free(pe->in);
        free(pe->lps);
    }
    for (int i = 0; i < e->nthreads; i++) {
        if (e->threads[i].detector_state) {
            if (e->detector->thread_end) e->detector->thread_end(&e->threads[i]);
            free(e->threads[i].detector_state);
        }
        pthread_mutex_destroy(&e->threads[i].mu);
        pthread_cond_destroy(&e->threads[i].cv);
    }
    if (e->loadavg_fd >= 0) close(e->loadavg_fd);
    air_pool_shared_destroy(&e->pool);
    free(e->pes);
    free(e->threads);
    free(e);
}
