/* The timeline sampler: a thread that wakes every --timeline-period-ms and records
 * (t_s, gvt, committed_events, active_threads); it also prints the progress line when
 * stderr is a terminal. */
#ifndef AIR_TIMELINE_H
#define AIR_TIMELINE_H

#include <pthread.h>
#include <stdio.h>
#include "engine.h"

typedef struct air_sample {
    double t_s, gvt;
    uint64_t committed;
    int active;
} air_sample;

typedef struct air_timeline {
    air_engine *eng;
    pthread_t th;
    int running, record, progress;
    _Atomic int stop;
    double period_s;
    air_sample *rows;
    size_t n, cap;
} air_timeline;

void air_timeline_start(air_timeline *tl, air_engine *e, int record, int progress);
void air_timeline_stop(air_timeline *tl); /* adds a final sample */
int air_timeline_write(const air_timeline *tl, FILE *f);
void air_timeline_free(air_timeline *tl);

#endif
