/* What airpdes (and tests) call: build a run from options, run it, report, free it. */
#ifndef AIR_ENGINE_API_H
#define AIR_ENGINE_API_H

#include <stdio.h>
#include "options.h"

typedef struct air_engine air_engine;
struct air_timeline;

typedef struct air_result {
    double wall_s;
    double start_monotonic_s; /* CLOCK_MONOTONIC at the start of the engine's clock (wall_s and timeline 0) */
    uint64_t committed, processed, rolled_back, rollbacks, gvt_rounds;
    double final_gvt;
    uint64_t checksum;
} air_result;

air_engine *air_engine_create(air_options *o);
void air_engine_run(air_engine *e, struct air_timeline *tl, air_result *r);
void air_engine_write_json(air_engine *e, const air_result *r, FILE *f);
void air_engine_print_summary(air_engine *e, const air_result *r, FILE *f);
void air_engine_destroy(air_engine *e);

#endif
