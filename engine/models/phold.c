/* PHOLD: a constant population of events hopping between LPs. Each LP starts with
 * --events-per-lp events; handling one sends exactly one new event, to an LP on another PE
 * with probability --remote (PE chosen uniformly among the others, LP uniformly in it),
 * else to an LP chosen uniformly on the own PE, after lookahead + exponential(mean).
 * --epg adds that many iterations of real computation per event; its result is folded
 * into the LP state so the compiler cannot remove it. Uses only the workload options
 * shared by all models, so it has no options of its own. */
#include <stdint.h>

#include "model.h"

typedef struct phold_state {
    uint64_t handled; /* events this LP handled (committed, at the end) */
    uint64_t work;    /* result of the EPG computation */
} phold_state;

static int phold_set_option(const char *name, const char *value, char *err, size_t errlen)
{
    (void)name; (void)value; (void)err; (void)errlen;
    return 0;
}

static double phold_min_delay(const air_sim_info *info)
{
    return info->lookahead;
}

static uint64_t grind(uint64_t x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL + (x >> 29);
    return x;
}

static void send_next(air_ctx *ctx)
{
    const air_sim_info *in = air_info(ctx);
    uint64_t self = air_self(ctx);
    uint32_t pe = air_lp_pe(in, self);
    uint64_t dst;
    if (in->num_pes > 1 && air_rand_unif(ctx) < in->remote) {
        uint32_t other = (uint32_t)air_rand_below(ctx, in->num_pes - 1);
        if (other >= pe) other++;
        dst = (uint64_t)other * in->lps_per_pe + air_rand_below(ctx, in->lps_per_pe);
    } else {
        dst = (uint64_t)pe * in->lps_per_pe + air_rand_below(ctx, in->lps_per_pe);
    }
    air_send(ctx, dst, in->lookahead + air_rand_exp(ctx, in->mean), NULL, 0);
}

static void phold_init(air_ctx *ctx, void *state)
{
    (void)state;
    const air_sim_info *in = air_info(ctx);
    for (uint64_t i = 0; i < in->events_per_lp; i++)
        air_send(ctx, air_self(ctx), in->lookahead + air_rand_exp(ctx, in->mean), NULL, 0);
}

static void phold_handle(air_ctx *ctx, void *state, const void *payload)
{
    (void)payload;
    phold_state *s = state;
    s->handled++;
    uint64_t epg = air_info(ctx)->epg;
    if (epg) s->work = grind(s->work ^ s->handled, epg);
    send_next(ctx);
}

static void phold_report(const air_report *r, air_json *j)
{
    const air_sim_info *in = air_report_info(r);
    uint64_t n = air_report_num_lps(r), handled = 0, maxh = 0;
    for (uint64_t lp = 0; lp < n; lp++) {
        const phold_state *s = air_report_state(r, lp);
        handled += s->handled;
        if (s->handled > maxh) maxh = s->handled;
    }
    air_json_u64(j, "population", in->events_per_lp * n);
    air_json_u64(j, "events_handled", handled);
    air_json_f64(j, "mean_events_per_lp", n ? (double)handled / (double)n : 0.0);
    air_json_u64(j, "max_events_per_lp", maxh);
    /* what an ideal PHOLD of this size should commit: population * end / mean increment */
    air_json_f64(j, "expected_events", (double)(in->events_per_lp * n) * in->end_time / (in->mean + in->lookahead));
}

static const air_model_option phold_options[] = { { 0 } };

const air_model air_model_phold = {
    .name = "phold",
    .summary = "PHOLD benchmark: constant event population, --remote share sent to other PEs",
    .state_size = sizeof(phold_state),
    .options = phold_options,
    .set_option = phold_set_option,
    .configure = NULL,
    .min_delay = phold_min_delay,
    .init_lp = phold_init,
    .handle_event = phold_handle,
    .report = phold_report,
};
