/* The lists of the engine's policies (see registry.h). To add a policy: its descriptor in
 * its own file, one line here. */
#include "registry.h"

#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "json_out.h"
#include "../models/models.h"

const air_named *const air_mode_list[] = {
    &air_mode_seq.id, &air_mode_fm.id, &air_mode_dm.id, &air_mode_adm.id, &air_mode_ladm.id, NULL,
};

const air_named *const air_sync_list[] = {
    &air_sync_optimistic.id, &air_sync_conservative.id, NULL,
};

const air_named *const air_detector_list[] = {
    &air_detector_apte.id, &air_detector_pi.id, &air_detector_rq.id, NULL,
};

const air_named *const air_reactivation_list[] = {
    &air_reactivation_pr.id, &air_reactivation_rap.id, NULL,
};

const air_named *const air_barrier_wait_list[] = {
    &air_barrier_wait_auto.id, &air_barrier_wait_spin.id, &air_barrier_wait_yield.id,
    &air_barrier_wait_block.id, &air_barrier_wait_adaptive.id,
    &air_barrier_wait_idle_yield.id, &air_barrier_wait_partner.id, NULL,
};

const air_policy_list air_policy_lists[AIR_POLICY_KINDS] = {
    [AIR_MODES] = { "mode", "modes", air_mode_list },
    [AIR_SYNCS] = { "sync", "syncs", air_sync_list },
    [AIR_DETECTORS] = { "detector", "detectors", air_detector_list },
    [AIR_REACTIVATIONS] = { "reactivation", "reactivations", air_reactivation_list },
    [AIR_BARRIER_WAITS] = { "barrier-wait", "barrier_waits", air_barrier_wait_list },
};

int air_registry_index(const air_named *const *list, const char *name)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(list[i]->name, name) == 0) return i;
    return -1;
}

const air_named *air_registry_find(const air_named *const *list, const char *name)
{
    int i = air_registry_index(list, name);
    return i < 0 ? NULL : list[i];
}

const char *air_registry_default(const air_named *const *list)
{
    for (int i = 0; list[i]; i++)
        if (list[i]->is_default) return list[i]->name;
    return list[0]->name;
}

const char *air_registry_names(const air_named *const *list, const char *sep, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; list[i] && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? sep : "", list[i]->name);
    return buf;
}

/* A policy's options: name, value, default, help and limits, as --help shows them. */
static void describe_options(air_json *j, const air_option_def *opts)
{
    air_json_arr(j, "options");
    for (int k = 0; opts && opts[k].name; k++) {
        air_json_obj(j, NULL);
        air_json_str(j, "name", opts[k].name);
        air_json_str(j, "metavar", opts[k].metavar);
        air_json_str(j, "default", opts[k].def);
        air_json_str(j, "help", opts[k].help);
        air_json_bool(j, "whole_number", opts[k].kind == AIR_OPT_UINT);
        air_json_f64(j, "min", opts[k].min);
        air_json_f64(j, "max", opts[k].max);
        air_json_end_obj(j);
    }
    air_json_end_arr(j);
}

static void describe_list(air_json *j, air_policy_kind kind)
{
    const air_named *const *list = air_policy_lists[kind].list;
    air_json_arr(j, air_policy_lists[kind].key);
    for (int i = 0; list[i]; i++) {
        air_json_obj(j, NULL);
        air_json_str(j, "name", list[i]->name);
        air_json_str(j, "help", list[i]->help);
        air_json_bool(j, "default", list[i]->is_default);
        describe_options(j, list[i]->options);
        if (kind == AIR_MODES) { /* a descriptor starts with its air_named */
            const air_mode *m = (const air_mode *)list[i];
            air_json_bool(j, "adapts_threads", m->adaptive);
            air_json_bool(j, "sequential", m->sequential);
            air_json_bool(j, "helps_orphans", m->mapping && m->mapping->helps_orphans);
        }
        air_json_end_obj(j);
    }
    air_json_end_arr(j);
}

void air_registry_describe(FILE *f)
{
    air_json j;
    air_json_start(&j, f);
    for (int k = 0; k < AIR_POLICY_KINDS; k++) describe_list(&j, (air_policy_kind)k);
    air_json_arr(&j, "models");
    for (int i = 0; air_models[i]; i++) {
        air_json_obj(&j, NULL);
        air_json_str(&j, "name", air_models[i]->name);
        air_json_str(&j, "help", air_models[i]->summary);
        air_json_bool(&j, "default", i == 0);
        air_json_end_obj(&j);
    }
    air_json_end_arr(&j);
    air_options_work_json(NULL, &j);
    air_json_finish(&j);
}
