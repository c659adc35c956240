/* An option's descriptor: its name, type, default, help line and limits. The engine's own
 * options are one table in options.c; a policy (a mode, synchronisation, detector,
 * reactivation or barrier wait) declares its own in its file (air_named.options), and
 * options.c parses, checks, lists (--help, --describe) and records (the JSON `config`) them
 * all alike, so a new policy's options are its file only. */
#ifndef AIR_OPTION_DEF_H
#define AIR_OPTION_DEF_H

#include <stddef.h>
#include <stdint.h>

struct air_named;

typedef enum { AIR_OPT_UINT, AIR_OPT_DOUBLE, AIR_OPT_CHOICE, AIR_OPT_PATH, AIR_OPT_FLAG } air_option_kind;

typedef struct air_option_def {
    const char *name, *metavar, *def, *help;
    air_option_kind kind;
    size_t off;                         /* the engine's table: where in air_options (a
                                           policy's option k is value slot k instead) */
    const struct air_named *const *reg; /* AIR_OPT_CHOICE: the registry of its values */
    double min, max;                    /* numeric limits, inclusive */
    int min_open;                       /* 1: min itself is refused too (a strict lower bound) */
    /* 1: it changes which events are simulated (the model, its shape and parameters, the
     * seed, the end time); 0: only how they are run. A policy's options are always 0: by the
     * determinism contract no policy changes the committed events. --describe and every
     * run's JSON list the 1s (work_options), so calibration and the analysis key a
     * configuration by them and keep no list of their own. */
    int work;
} air_option_def;

#define AIR_OPT_UNBOUNDED 1e300 /* max of an option with no upper limit */

/* A policy option's value: .u for AIR_OPT_UINT, .d for AIR_OPT_DOUBLE (the only kinds a
 * policy's options take). */
typedef union air_option_value {
    uint64_t u;
    double d;
} air_option_value;

/* Room in air_options for every registered policy's values: policies of one kind, options
 * of one policy (options.c refuses to start when a registry outgrows it, so raising these
 * is the whole fix). */
#define AIR_MAX_POLICIES 8
#define AIR_MAX_POLICY_OPTIONS 8

#endif
