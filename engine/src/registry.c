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

const air_named *air_registry_find(const air_named *const *list, const char *name)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(list[i]->name, name) == 0) return list[i];
    return NULL;
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

static void describe_list(air_json *j, const char *key, const air_named *const *list, int modes)
{
    air_json_arr(j, key);
    for (int i = 0; list[i]; i++) {
        air_json_obj(j, NULL);
        air_json_str(j, "name", list[i]->name);
        air_json_str(j, "help", list[i]->help);
        air_json_bool(j, "default", list[i]->is_default);
        if (modes) { /* a mode's descriptor starts with its air_named */
            const air_mode *m = (const air_mode *)list[i];
            air_json_bool(j, "adapts_threads", m->adaptive);
            air_json_bool(j, "sequential", m->sequential);
        }
        air_json_end_obj(j);
    }
    air_json_end_arr(j);
}

void air_registry_describe(FILE *f)
{
    air_json j;
    air_json_start(&j, f);
    describe_list(&j, "modes", air_mode_list, 1);
    describe_list(&j, "syncs", air_sync_list, 0);
    describe_list(&j, "detectors", air_detector_list, 0);
    describe_list(&j, "reactivations", air_reactivation_list, 0);
    describe_list(&j, "barrier_waits", air_barrier_wait_list, 0);
    air_json_arr(&j, "models");
    for (int i = 0; air_models[i]; i++) {
        air_json_obj(&j, NULL);
        air_json_str(&j, "name", air_models[i]->name);
        air_json_str(&j, "help", air_models[i]->summary);
        air_json_bool(&j, "default", i == 0);
        air_json_end_obj(&j);
    }
    air_json_end_arr(&j);
    air_json_finish(&j);
}
