#include "timeline.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

static void sample(air_timeline *tl)
{
    air_engine *e = tl->eng;
    air_sample s;
    s.t_s = air_wall() - e->t0;
    if (e->seq) {
        s.gvt = air_u2d(atomic_load(&e->seq_now_bits));
        s.committed = atomic_load(&e->seq_committed);
    } else {
        s.gvt = air_gvt(e);
        s.committed = 0;
        for (uint32_t p = 0; p < e->npes; p++)
            s.committed += atomic_load_explicit(&e->pes[p].committed, memory_order_relaxed);
    }
    s.active = atomic_load(&e->n_active);
    if (tl->record) {
        if (tl->n == tl->cap) {
            tl->cap = tl->cap ? 2 * tl->cap : 1024;
            air_sample *r = realloc(tl->rows, tl->cap * sizeof *r);
            if (!r) return;
            tl->rows = r;
        }
        tl->rows[tl->n++] = s;
    }
    if (tl->progress) {
        double end = e->info.end_time;
        double g = s.gvt > end ? end : s.gvt;
        fprintf(stderr, "\rairpdes: t=%.1fs gvt %.1f/%.0f (%3.0f%%) committed %llu active %d   ",
                s.t_s, g, end, 100.0 * g / end, (unsigned long long)s.committed, s.active);
    }
}

static void *sampler(void *arg)
{
    air_timeline *tl = arg;
    double next = tl->eng->t0 + tl->period_s;
    unsigned k = 0;
    int every = tl->period_s > 0 ? (int)ceil(0.25 / tl->period_s) : 1; /* progress ~4/s */
    while (!atomic_load(&tl->stop)) {
        double now = air_wall();
        if (now < next) {
            double d = next - now;
            struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
            nanosleep(&ts, NULL);
            continue;
        }
        next += tl->period_s;
        if (next < now) next = now + tl->period_s; /* we were descheduled: do not burst */
        int prog = tl->progress;
        tl->progress = prog && (++k % (unsigned)every == 0);
        sample(tl);
        tl->progress = prog;
    }
    return NULL;
}

void air_timeline_start(air_timeline *tl, air_engine *e, int record, int progress)
{
    tl->eng = e;
    tl->record = record;
    tl->progress = progress;
    tl->period_s = (double)e->opt->timeline_period_ms / 1000.0;
    tl->rows = NULL;
    tl->n = tl->cap = 0;
    atomic_store(&tl->stop, 0);
    tl->running = (record || progress) && pthread_create(&tl->th, NULL, sampler, tl) == 0;
}

void air_timeline_stop(air_timeline *tl)
{
    if (!tl->running) return;
    atomic_store(&tl->stop, 1);
    pthread_join(tl->th, NULL);
    tl->running = 0;
    int prog = tl->progress;
    tl->progress = 0;
    sample(tl);
    if (prog) fputc('\n', stderr);
}

int air_timeline_write(const air_timeline *tl, FILE *f)
{
    fprintf(f, "t_s,gvt,committed_events,active_threads\n");
    for (size_t i = 0; i < tl->n; i++) {
        const air_sample *s = &tl->rows[i];
        double g = isfinite(s->gvt) ? s->gvt : tl->eng->info.end_time;
        fprintf(f, "%.4f,%.6f,%llu,%d\n", s->t_s, g, (unsigned long long)s->committed, s->active);
    }
    return ferror(f) ? -1 : 0;
}

void air_timeline_free(air_timeline *tl)
{
    free(tl->rows);
    tl->rows = NULL;
}
