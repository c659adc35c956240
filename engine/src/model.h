/* The model interface: everything a simulation model sees of the engine.
 *
 * HOW TO WRITE A MODEL (see engine/models/phold.c for a complete, short example)
 *
 * 1. State.  Each LP (logical process) owns `state_size` bytes of model state. The engine
 *    zeroes it, calls init_lp once per LP, and afterwards hands it to handle_event. All
 *    mutable simulation data must live there: the engine copies it before each event (copy
 *    state saving) and restores the copy when the event is rolled back. Never keep
 *    pointers in it, never write globals from a handler (handlers of different LPs run
 *    concurrently on different threads; a handler may run, be rolled back and run again).
 *
 * 2. Events.  air_send(ctx, dst_lp, delay, payload, len) schedules an event for LP dst_lp
 *    at now + delay. delay must be > 0 and >= the model's min_delay (its lookahead; the
 *    engine aborts on a violation). The payload (<= AIR_PAYLOAD_MAX bytes) is copied.
 *    Simultaneous events are ordered by (timestamp, sender LP, sender's send sequence), so
 *    results never depend on thread timing. Events with timestamp >= --end-time are never
 *    handled. handle_event gets the LP's state and the payload of the event.
 *
 * 3. Randomness.  Draw only from the LP's own stream (air_rand_*): it is part of the LP's
 *    saved state, so a rolled-back event re-draws the same numbers. Never use rand().
 *
 * 4. Reading the engine.  air_now(ctx) is the current event's timestamp (0 in init_lp),
 *    air_self(ctx) the LP id, air_info(ctx) the shape of the run (LP count, PE count,
 *    LPs per PE, end time, seed and the workload options shared by all models). LPs are
 *    numbered 0..num_lps-1 and mapped to PEs in blocks: air_lp_pe(info, lp).
 *
 * 5. Options.  A model lists its own CLI options in `options` (name without "--",
 *    metavar, default text, help). The engine calls set_option(name, value) once per
 *    option, first with every default and then with the user's value; reject a bad value
 *    by writing a one-line message into err and returning -1 (the engine prints it and
 *    exits 2). configure(info, ...) runs once after all options are known; use it for
 *    checks that need the run's shape (pcs refuses LP counts that make no proper torus).
 *    A model whose size is part of its definition sets default_num_lps: without
 *    --lps-per-pe the run has that many LPs spread over the PEs. Options are stored by the
 *    model in its own static variables (read-only once the run starts). The resolved
 *    values (--lps-per-pe too) appear in the JSON `config` object.
 *
 * 6. Outcome.  report(r, j) writes the model's outcome figures into the JSON `model`
 *    object with air_json_u64 / air_json_f64 / air_json_str. Derive them ONLY from the
 *    final committed LP states (air_report_state(r, lp)): they are then rollback-safe,
 *    identical in every mode, and covered by the checksum.
 *
 * 7. Registration.  Add one line to the table in engine/models/models.c and the source
 *    file to engine/CMakeLists.txt (AIR_MODEL_SOURCES).
 *
 * SYNCHRONISATION HOOK (for --sync conservative, see sync_conservative.c): every PE has a "safe time
 * bound"; a PE only handles events with timestamp < its bound. The optimistic protocol
 * leaves it at +infinity; a conservative protocol sets it at each GVT round (all threads
 * are stopped at that moment), e.g. to GVT + min_delay, which is safe because every send
 * has delay >= min_delay.
 */
#ifndef AIR_MODEL_H
#define AIR_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define AIR_PAYLOAD_MAX 32

typedef struct air_ctx air_ctx;       /* the engine's view of the LP being run */
typedef struct air_report air_report; /* read access to final LP states */
typedef struct air_json air_json;     /* the JSON object being written */

/* The shape of the run and the workload options every model may read. */
typedef struct air_sim_info {
    uint64_t num_lps;
    uint32_t num_pes;
    uint64_t lps_per_pe;
    double end_time;
    uint64_t seed;
    /* workload options (--events-per-lp, --remote, --mean, --lookahead, --epg) */
    uint64_t events_per_lp;
    double remote;
    double mean;
    double lookahead;
    uint64_t epg;
} air_sim_info;

static inline uint32_t air_lp_pe(const air_sim_info *info, uint64_t lp)
{
    return (uint32_t)(lp / info->lps_per_pe);
}

typedef struct air_model_option {
    const char *name;          /* "channels" for --channels */
    const char *metavar;       /* "N", "F", ... */
    const char *default_value; /* text, parsed by set_option like a user value */
    const char *help;          /* one line */
} air_model_option;

typedef struct air_model {
    const char *name;
    const char *summary;                /* one line for --help */
    size_t state_size;                  /* bytes of per-LP state */
    uint64_t default_num_lps;           /* 0: --lps-per-pe defaults to 1000 per PE; else, when
                                           --lps-per-pe is not given, this many LPs spread over
                                           the PEs (--pes must divide it) */
    const air_model_option *options;    /* terminated by an entry with name == NULL */
    int (*set_option)(const char *name, const char *value, char *err, size_t errlen);
    int (*configure)(const air_sim_info *info, char *err, size_t errlen); /* may be NULL */
    double (*min_delay)(const air_sim_info *info); /* lookahead every send respects */
    void (*init_lp)(air_ctx *ctx, void *state);
    void (*handle_event)(air_ctx *ctx, void *state, const void *payload);
    void (*report)(const air_report *r, air_json *j);
} air_model;

/* Engine calls available to init_lp and handle_event. */
void air_send(air_ctx *ctx, uint64_t dst_lp, double delay, const void *payload, size_t len);
double air_now(const air_ctx *ctx);
uint64_t air_self(const air_ctx *ctx);
const air_sim_info *air_info(const air_ctx *ctx);
double air_rand_unif(air_ctx *ctx);                 /* uniform in (0, 1) */
double air_rand_exp(air_ctx *ctx, double mean);     /* exponential, > 0 */
uint64_t air_rand_below(air_ctx *ctx, uint64_t n);  /* uniform in [0, n) */

/* Calls available to report. */
uint64_t air_report_num_lps(const air_report *r);
const air_sim_info *air_report_info(const air_report *r);
const void *air_report_state(const air_report *r, uint64_t lp);
void air_json_u64(air_json *j, const char *key, uint64_t v);
void air_json_f64(air_json *j, const char *key, double v);
void air_json_str(air_json *j, const char *key, const char *v);

#endif
