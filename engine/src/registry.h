/* The engine's policies by name. Each policy is one descriptor in its own file, whose first
 * member is an air_named (its name, a help line, whether it is the default, its own
 * options); registry.c lists them. Option parsing, --help, the checks and the engine's
 * set-up all look policies up here, so a policy's name is written once, in its descriptor,
 * and adding one is its file plus one line in registry.c. */
#ifndef AIR_REGISTRY_H
#define AIR_REGISTRY_H

#include <stddef.h>
#include <stdio.h>

struct air_option_def;

typedef struct air_named {
    const char *name;
    const char *help;  /* one line for --help */
    int is_default;    /* exactly one per list */
    /* its own command-line options, ending with a NULL name (option_def.h; NULL: none); the
     * engine hands the running policy their values (air_engine's *_opt, indexed like this) */
    const struct air_option_def *options;
} air_named;

/* NULL-terminated lists of descriptors (each pointer is its descriptor's first member) */
extern const air_named *const air_mode_list[];
extern const air_named *const air_sync_list[];
extern const air_named *const air_detector_list[];
extern const air_named *const air_reactivation_list[];
extern const air_named *const air_barrier_wait_list[];

/* The kinds of policy: each has a list above, an option that chooses one, and a row of
 * option values per policy in air_options. */
typedef enum { AIR_MODES, AIR_SYNCS, AIR_DETECTORS, AIR_REACTIVATIONS, AIR_BARRIER_WAITS, AIR_POLICY_KINDS } air_policy_kind;
typedef struct air_policy_list {
    const char *option;               /* the option that chooses one: "mode" */
    const char *key;                  /* its list in --describe: "modes" */
    const air_named *const *list;
} air_policy_list;
extern const air_policy_list air_policy_lists[AIR_POLICY_KINDS];

const air_named *air_registry_find(const air_named *const *list, const char *name); /* NULL: none */
int air_registry_index(const air_named *const *list, const char *name); /* its place, -1: none */
const char *air_registry_default(const air_named *const *list);
/* "a|b|c" (sep "|") or "a | b | c" into buf */
const char *air_registry_names(const air_named *const *list, const char *sep, char *buf, size_t len);

/* --describe: every policy list and model as JSON ({"modes": [{"name", "help", "default",
 * "options", "adapts_threads", "sequential", "helps_orphans"}], "syncs": [...], ..., "work_options": [the
 * options that change which events are simulated]}), so scripts ask the engine instead of
 * keeping their own lists of names */
void air_registry_describe(FILE *f);

#endif
