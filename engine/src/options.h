/* Command-line options of airpdes: one table (options.c) and each policy's own
 * (air_named.options) drive parsing, validation, --help and the JSON `config` object. */
#ifndef AIR_OPTIONS_H
#define AIR_OPTIONS_H

#include <stdint.h>
#include <stdio.h>
#include "model.h"
#include "option_def.h"
#include "registry.h"

#define AIR_MAX_MODEL_OPTIONS 32

typedef struct air_options {
    const char *model;
    const char *mode;
    const char *sync;
    uint64_t threads;
    uint64_t pes;
    uint64_t lps_per_pe;
    uint64_t events_per_lp;
    double remote;
    double mean;
    double lookahead;
    uint64_t epg;
    double end_time;
    uint64_t batch;
    uint64_t gvt_interval;
    uint64_t detect_interval;
    double detect_after_ms;
    const char *barrier_wait;
    const char *detector;
    const char *reactivation;
    double pi_threshold_us;  /* PI's probes, RAP and the inactive wait all read it */
    uint64_t seed;
    int pin;
    const char *json;
    const char *timeline;
    uint64_t timeline_period_ms;
    int quiet;
    int check;     /* --check: validate only */
    int describe;  /* --describe: print the registries as JSON */
    /* the selected model and its options' resolved values */
    const air_model *model_def;
    const char *model_values[AIR_MAX_MODEL_OPTIONS];
    /* every registered policy's options (a row per policy: its kind, its place in its
     * list; a column per option: its index in the policy's table), defaults or given,
     * whichever policy runs */
    air_option_value policy_values[AIR_POLICY_KINDS][AIR_MAX_POLICIES][AIR_MAX_POLICY_OPTIONS];
} air_options;

/* Every option at its default (what air_options_parse starts from); for library callers
 * that fill the rest by hand. 0, or 2 after an error line (a registry outgrew air_options). */
int air_options_defaults(air_options *o);
/* The option values of the policy NAME of a kind, indexed like its table (NULL: no such
 * policy, or one without options past AIR_MAX_POLICIES): what the engine hands the running
 * policy. */
const air_option_value *air_options_policy_values(const air_options *o, air_policy_kind kind, const char *name);
/* the same for the policy at place i of its kind's registry (-1 or past the rows: NULL) */
const air_option_value *air_options_policy_values_at(const air_options *o, air_policy_kind kind, int i);
/* Where a policy option's value is kept, by the option's name (NULL: no policy declares it). */
air_option_value *air_options_value(air_options *o, const char *option_name);

/* Parses argv into o. Returns 0 to run, 1 when --help was printed, 2 after printing one
 * error line to stderr (the caller exits 2). */
int air_options_parse(air_options *o, int argc, char **argv);
void air_options_help(FILE *f);
void air_options_sim_info(const air_options *o, air_sim_info *in); /* what the model is told */

struct air_json;
void air_options_to_json(const air_options *o, struct air_json *j);
/* "work_options": the options that change which events are simulated (option_def.h's
 * work), then model m's own options (every model's with m NULL, for --describe). */
void air_options_work_json(const air_model *m, struct air_json *j);

#endif
