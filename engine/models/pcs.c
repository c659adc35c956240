/* PCS: a personal communication system (cellular network), after Carothers, Fujimoto and
 * Lin (PADS 1995) as used in the AIR paper's section 8.5. Written for this engine, not a
 * port of ROSS's pcs.c.
 *
 * Each LP is a cell (a base station) on a torus of grid_x x grid_y cells, with --channels
 * channels. LPs are numbered row by row and PEs own blocks of consecutive LPs, so a PE owns
 * a band of rows and only hand-offs across a band edge are remote events. The torus is the
 * squarest one with exactly --pes x --lps-per-pe cells; both sides must be >= 3 so that
 * every cell has 4 distinct neighbours. Counts that allow no such torus are refused (exit
 * 2, naming a --lps-per-pe that works): a prime count gives a 1 x n ring where a hand-off
 * could return to the cell it left, and a side of 2 makes a cell's two neighbours along it
 * the same cell.
 *
 * Events (all sent with delay >= --lookahead, which is the model's lookahead):
 *   ARRIVAL  a new call starts in this cell (Poisson, --call-rate per cell). It takes a
 *            free channel or is blocked. An accepted call lasts Exp(--call-duration); its
 *            mobile stays in the cell Exp(--cell-residence). If the call ends first, the
 *            cell schedules END; otherwise, at the moment the mobile leaves, the cell
 *            schedules LEAVE for itself and HANDIN for a random one of its 4 neighbours,
 *            carrying the remaining call time.
 *   END      the call completes: its channel is freed.
 *   LEAVE    the mobile left with its call: its channel is freed.
 *   HANDIN   a call arrives from a neighbour: it takes a free channel (then the same
 *            END-or-move choice as a new call) or is dropped.
 * Every delay is lookahead + a random time, so the lookahead is a signalling delay; with
 * --lookahead 0 every delay is still > 0 (the exponential draws are), but conservative
 * synchronisation is then impossible and refused by the engine.
 *
 * Outcome figures come only from the final committed cell states, so they are rollback-
 * safe and identical in every mode. The state also keeps the lowest free-channel count
 * each cell reached on its committed path, so the run proves 0 <= busy <= channels held at
 * every committed state (`min_free_channels`, `max_busy_channels` in the JSON); a handler
 * that would break the invariant aborts at once (a model bug, whatever the mode).
 *
 * Defaults give ~8 Erlang offered per cell on 10 channels (Erlang-B blocking ~12%, as in
 * ROSS's configuration) and about one event per cell per time unit. Without --lps-per-pe
 * the run has the paper's 36,864 cells (a 192 x 192 torus) spread over the PEs, so --pes
 * must divide 36,864; the engine's default end time 10000 then means ~3.7e8 events (a
 * minute or more): pass --end-time, or --lps-per-pe for a small network.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PCS_ARRIVAL = 1, PCS_END = 2, PCS_LEAVE = 3, PCS_HANDIN = 4 };

typedef struct pcs_cell {
    int32_t free_channels;
    int32_t min_free;        /* lowest free_channels reached (committed path) */
    uint64_t attempted;      /* new calls */
    uint64_t blocked;        /* new calls finding no channel */
    uint64_t handoffs_in;    /* calls arriving from a neighbour */
    uint64_t dropped;        /* of those, finding no channel */
    uint64_t handoffs_out;   /* calls that left this cell with their mobile */
    uint64_t completed;      /* calls that ended in this cell */
} pcs_cell;

typedef struct pcs_msg {
    uint32_t kind;
    uint32_t pad;
    double remaining;        /* HANDIN: call time left */
} pcs_msg;

/* Options (read-only once the run starts). */
static long opt_channels;
static double opt_call_rate, opt_call_duration, opt_residence;
/* The torus, fixed by configure from the LP count. */
static uint64_t grid_x, grid_y;

static const air_model_option pcs_options[] = {
    {"channels", "N", "10", "channels per cell"},
    {"call-rate", "F", "0.4", "new calls per cell per time unit (Poisson arrivals)"},
    {"call-duration", "F", "20", "mean call holding time (exponential)"},
    {"cell-residence", "F", "50", "mean time a mobile stays in a cell before moving to a neighbour"},
    {NULL, NULL, NULL, NULL},
};

static int parse_positive(const char *name, const char *value, double *out, char *err, size_t errlen)
{
    char *end;
    double v = strtod(value, &end);
    if (end == value || *end != '\0' || !(v > 0) || !isfinite(v)) {
        snprintf(err, errlen, "--%s must be a positive number, got '%s'", name, value);
        return -1;
    }
    *out = v;
    return 0;
}

static int pcs_set_option(const char *name, const char *value, char *err, size_t errlen)
{
    if (strcmp(name, "channels") == 0) {
        char *end;
        long v = strtol(value, &end, 10);
        if (end == value || *end != '\0' || v < 1 || v > 1000000) {
            snprintf(err, errlen, "--channels must be an integer in [1, 1000000], got '%s'", value);
            return -1;
        }
        opt_channels = v;
        return 0;
    }
    if (strcmp(name, "call-rate") == 0) return parse_positive(name, value, &opt_call_rate, err, errlen);
    if (strcmp(name, "call-duration") == 0) return parse_positive(name, value, &opt_call_duration, err, errlen);
    if (strcmp(name, "cell-residence") == 0) return parse_positive(name, value, &opt_residence, err, errlen);
    snprintf(err, errlen, "pcs has no option --%s", name);
    return -1;
}

#define PCS_PAPER_CELLS 36864 /* the AIR paper's network (section 8.5): 192 x 192 */

/* The short side of the squarest torus with exactly n cells: the largest divisor <= sqrt. */
static uint64_t torus_side(uint64_t n)
{
    uint64_t x = (uint64_t)sqrt((double)n);
    while (x > 1 && n % x != 0) x--;
    return x ? x : 1;
}

static int pcs_configure(const air_sim_info *info, char *err, size_t errlen)
{
    uint64_t n = info->num_lps, x = torus_side(n);
    if (x < 3) {
        uint64_t per = info->lps_per_pe + 1; /* the next --lps-per-pe that makes a torus */
        while (torus_side(per * info->num_pes) < 3) per++;
        snprintf(err, errlen, "pcs needs a torus of at least 3 x 3 cells (4 distinct neighbours "
                 "per cell), but %llu cells (--pes x --lps-per-pe) only make %llu x %llu; "
                 "use e.g. --lps-per-pe %llu", (unsigned long long)n, (unsigned long long)x,
                 (unsigned long long)(n / x), (unsigned long long)per);
        return -1;
    }
    grid_x = x;
    grid_y = n / x;
    return 0;
}

static double pcs_min_delay(const air_sim_info *info)
{
    return info->lookahead;
}

static void send_self(air_ctx *ctx, uint32_t kind, double delay)
{
    pcs_msg m = {kind, 0, 0.0};
    air_send(ctx, air_self(ctx), delay, &m, sizeof m);
}

static uint64_t random_neighbour(air_ctx *ctx)
{
    uint64_t self = air_self(ctx);
    uint64_t x = self % grid_x, y = self / grid_x;
    switch (air_rand_below(ctx, 4)) {
    case 0: x = (x + 1) % grid_x; break;
    case 1: x = (x + grid_x - 1) % grid_x; break;
    case 2: y = (y + 1) % grid_y; break;
    default: y = (y + grid_y - 1) % grid_y; break;
    }
    return y * grid_x + x;
}

static void check_channels(const pcs_cell *c)
{
    if (c->free_channels < 0 || c->free_channels > opt_channels) {
        fprintf(stderr, "pcs: internal error: a cell has %d free channels of %ld\n",
                (int)c->free_channels, opt_channels);
        abort();
    }
}

/* Seize a channel for a call with `remaining` time to run and schedule how it leaves. */
static void start_call(air_ctx *ctx, pcs_cell *c, double remaining)
{
    double la = air_info(ctx)->lookahead;
    c->free_channels--;
    check_channels(c);
    if (c->free_channels < c->min_free) c->min_free = c->free_channels;
    double stay = air_rand_exp(ctx, opt_residence);
    if (remaining <= stay) {
        send_self(ctx, PCS_END, la + remaining);
    } else {
        send_self(ctx, PCS_LEAVE, la + stay);
        pcs_msg m = {PCS_HANDIN, 0, remaining - stay};
        air_send(ctx, random_neighbour(ctx), la + stay, &m, sizeof m);
    }
}

static void pcs_init_lp(air_ctx *ctx, void *state)
{
    pcs_cell *c = state;
    c->free_channels = (int32_t)opt_channels;
    c->min_free = (int32_t)opt_channels;
    send_self(ctx, PCS_ARRIVAL, air_info(ctx)->lookahead + air_rand_exp(ctx, 1.0 / opt_call_rate));
}

static void pcs_handle_event(air_ctx *ctx, void *state, const void *payload)
{
    pcs_cell *c = state;
    pcs_msg m;
    memcpy(&m, payload, sizeof m);
    switch (m.kind) {
    case PCS_ARRIVAL:
        c->attempted++;
        send_self(ctx, PCS_ARRIVAL, air_info(ctx)->lookahead + air_rand_exp(ctx, 1.0 / opt_call_rate));
        if (c->free_channels > 0)
            start_call(ctx, c, air_rand_exp(ctx, opt_call_duration));
        else
            c->blocked++;
        break;
    case PCS_HANDIN:
        c->handoffs_in++;
        if (c->free_channels > 0)
            start_call(ctx, c, m.remaining);
        else
            c->dropped++;
        break;
    case PCS_END:
    case PCS_LEAVE:
        c->free_channels++;
        check_channels(c);
        if (m.kind == PCS_END) c->completed++;
        else c->handoffs_out++;
        break;
    default:
        fprintf(stderr, "pcs: internal error: unknown event kind %u\n", m.kind);
        abort();
    }
}

static double ratio(uint64_t a, uint64_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

static void pcs_report(const air_report *r, air_json *j)
{
    uint64_t attempted = 0, blocked = 0, hin = 0, dropped = 0, hout = 0, completed = 0, busy = 0;
    int32_t min_free = (int32_t)opt_channels;
    uint64_t n = air_report_num_lps(r);
    for (uint64_t lp = 0; lp < n; lp++) {
        const pcs_cell *c = air_report_state(r, lp);
        attempted += c->attempted;
        blocked += c->blocked;
        hin += c->handoffs_in;
        dropped += c->dropped;
        hout += c->handoffs_out;
        completed += c->completed;
        busy += (uint64_t)(opt_channels - c->free_channels);
        if (c->min_free < min_free) min_free = c->min_free;
    }
    air_json_u64(j, "calls_attempted", attempted);
    air_json_u64(j, "calls_blocked", blocked);
    air_json_f64(j, "blocking_probability", ratio(blocked, attempted));
    air_json_u64(j, "handoffs_attempted", hin);
    air_json_u64(j, "calls_handed_off", hin - dropped);
    air_json_u64(j, "calls_dropped", dropped);
    air_json_f64(j, "dropping_probability", ratio(dropped, hin));
    air_json_u64(j, "calls_left_cell", hout);
    air_json_u64(j, "calls_completed", completed);
    air_json_u64(j, "calls_in_progress_at_end", busy);
    air_json_u64(j, "channels", (uint64_t)opt_channels);
    air_json_f64(j, "min_free_channels", (double)min_free);
    air_json_u64(j, "max_busy_channels", (uint64_t)(opt_channels - min_free));
    air_json_u64(j, "grid_x", grid_x);
    air_json_u64(j, "grid_y", grid_y);
}

const air_model air_model_pcs = {
    .name = "pcs",
    .summary = "cellular network: cells on a torus, channels, call arrivals, hand-offs, blocking",
    .state_size = sizeof(pcs_cell),
    .default_num_lps = PCS_PAPER_CELLS,
    .options = pcs_options,
    .set_option = pcs_set_option,
    .configure = pcs_configure,
    .min_delay = pcs_min_delay,
    .init_lp = pcs_init_lp,
    .handle_event = pcs_handle_event,
    .report = pcs_report,
};
