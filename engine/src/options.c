/* airpdes options: one table gives each engine option's name, type, default, help line
 * and limits, and each policy brings a table of its own (air_named.options); parsing,
 * validation, --help and the JSON `config` object all read both. */
#include "options.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "json_out.h"
#include "../models/models.h"

/* option_def.h's descriptor (reg NULL with K_CHOICE: --model), with short names for the
 * table's kinds */
typedef air_option_def optdef;
#define K_UINT AIR_OPT_UINT
#define K_DOUBLE AIR_OPT_DOUBLE
#define K_CHOICE AIR_OPT_CHOICE
#define K_PATH AIR_OPT_PATH
#define K_FLAG AIR_OPT_FLAG

#define O(f) offsetof(air_options, f)
#define BIG AIR_OPT_UNBOUNDED
/* Every 64-bit value is a seed: (double)UINT64_MAX rounds to 2^64, and strtoull reports
 * anything larger as out of range. */
#define SEED_MAX 18446744073709551615.0

/* Default for --pi-threshold-us, measured on the 2-core development VM (Debian 12, kernel
 * CFS): a sched_yield() with no competitor on the CPU took 0.3-2 us (median ~0.6 us, rare
 * outliers ~60 us from kernel threads); with a CPU-bound competitor (airload cpu or a busy
 * loop) sharing the core it took 1-12 ms (median ~3 ms, the CFS slice). 200 us sits between
 * the two regimes with a factor of >=5 margin on each side. Re-measure elsewhere with
 * engine/bench/yield_probe.c (built as engine/build/yield_probe). */
#define PI_THRESHOLD_US_DEFAULT "200"

/* name, metavar, default, help, kind, place, registry, min, max, min_open, work (1: it
 * changes which events are simulated, see option_def.h) */
static const optdef table[] = {
    { "model", "NAME", NULL, "simulation model (see Models below)", K_CHOICE, O(model), NULL, 0, 0, 0, 1 },
    { "mode", "MODE", NULL, "how threads map to PEs (see Modes below)", K_CHOICE, O(mode), air_mode_list, 0, 0, 0, 0 },
    { "sync", "SYNC", NULL, "synchronisation (see Synchronisation below)", K_CHOICE, O(sync), air_sync_list, 0, 0, 0, 0 },
    { "threads", "N", "1", "worker threads (seq: 1; fm: = --pes; dm/adm/ladm: <= --pes)", K_UINT, O(threads), NULL, 1, 1024, 0, 0 },
    { "pes", "N", NULL, "processing elements (groups of LPs)", K_UINT, O(pes), NULL, 1, 65536, 0, 1 },
    { "lps-per-pe", "N", "1000", "LPs in each PE (pcs: its own default, see Models)", K_UINT, O(lps_per_pe), NULL, 1, 1e9, 0, 1 },
    { "events-per-lp", "N", "1", "phold: initial events per LP (the event population)", K_UINT, O(events_per_lp), NULL, 0, 1e6, 0, 1 },
    { "remote", "F", "0.1", "phold: probability an event goes to an LP on another PE, in [0, 1]", K_DOUBLE, O(remote), NULL, 0, 1, 0, 1 },
    { "mean", "F", "1.0", "phold: mean of the exponential timestamp increment", K_DOUBLE, O(mean), NULL, 0, BIG, 0, 1 },
    { "lookahead", "F", "0.1", "constant added to every event's delay: the model's lookahead (phold, pcs)", K_DOUBLE, O(lookahead), NULL, 0, BIG, 0, 1 },
    { "epg", "N", "0", "phold: iterations of real computation per event (event granularity)", K_UINT, O(epg), NULL, 0, 1e12, 0, 1 },
    { "end-time", "F", "10000", "simulated end time (> 0); events at or after it are not handled", K_DOUBLE, O(end_time), NULL, 0, BIG, 1, 1 },
    { "batch", "N", "24", "events a thread handles per loop iteration on a PE", K_UINT, O(batch), NULL, 1, 1e9, 0, 0 },
    { "gvt-interval", "N", "32", "loop iterations between GVT rounds", K_UINT, O(gvt_interval), NULL, 1, 1e9, 0, 0 },
    { "barrier-wait", "HOW", NULL, "how a thread waits at the GVT barrier (see below)", K_CHOICE, O(barrier_wait), air_barrier_wait_list, 0, 0, 0, 0 },
    { "detect-interval", "N", "32", "adm/ladm: loop iterations between detector checks; rap probes every 40 of these, pr waits --pr-periods of them (and of its detector's confirmation time)", K_UINT, O(detect_interval), NULL, 1, 1e9, 0, 0 },
    { "detect-after-ms", "F", "50", "adm/ladm: the detector starts judging this long after the run starts (see Detectors below)", K_DOUBLE, O(detect_after_ms), NULL, 0, 1e7, 0, 0 },
    { "detector", "NAME", NULL, "adm/ladm interference detector (see below)", K_CHOICE, O(detector), air_detector_list, 0, 0, 0, 0 },
    { "reactivation", "NAME", NULL, "adm/ladm reactivation policy (see below)", K_CHOICE, O(reactivation), air_reactivation_list, 0, 0, 0, 0 },
    { "pi-threshold-us", "F", PI_THRESHOLD_US_DEFAULT, "pi and rap: a sched_yield() slower than F microseconds means a competitor", K_DOUBLE, O(pi_threshold_us), NULL, 0, BIG, 0, 0 },
    { "seed", "N", "1", "random seed (each LP's stream derives from it)", K_UINT, O(seed), NULL, 0, SEED_MAX, 0, 1 },
    { "pin", NULL, NULL, "bind thread i to the i-th CPU the process may use (i mod their count; cpusets and SLURM binding are respected)", K_FLAG, O(pin), NULL, 0, 0, 0, 0 },
    { "json", "FILE", NULL, "write the run's results as JSON to FILE (atomically)", K_PATH, O(json), NULL, 0, 0, 0, 0 },
    { "timeline", "FILE", NULL, "write a CSV t_s,gvt,committed_events,active_threads to FILE", K_PATH, O(timeline), NULL, 0, 0, 0, 0 },
    { "timeline-period-ms", "N", "10", "timeline sampling period in wall-clock milliseconds", K_UINT, O(timeline_period_ms), NULL, 1, 1e7, 0, 0 },
    { "quiet", NULL, NULL, "no summary on stdout, no progress line", K_FLAG, O(quiet), NULL, 0, 0, 0, 0 },
    { "check", NULL, NULL, "validate the options and exit (0 = a run would start)", K_FLAG, O(check), NULL, 0, 0, 0, 0 },
    { "describe", NULL, NULL, "print the modes, synchronisations, detectors, reactivations, barrier waits and models as JSON and exit", K_FLAG, O(describe), NULL, 0, 0, 0, 0 },
};
#define NOPT (sizeof table / sizeof table[0])

static int fail(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "airpdes: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, " (see airpdes --help)\n");
    return 2;
}

/* The default of an option: its table entry's, or its registry's marked one. */
static const char *default_of(const optdef *d)
{
    if (d->def) return d->def;
    if (d->kind != K_CHOICE) return NULL;
    return d->reg ? air_registry_default(d->reg) : air_models[0]->name; /* models.c lists the default first */
}

/* Parses v as d's value into dst (its place in air_options, or a policy's value slot). */
static int set_value(void *dst, const optdef *d, const char *v)
{
    char *base = dst;
    char *end;
    char range[96];
    switch (d->kind) {
    case K_UINT: {
        if (!*v || strspn(v, "0123456789") != strlen(v))
            return fail("--%s needs a whole number >= 0, got '%s'", d->name, v);
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || (double)x < d->min || (double)x > d->max) {
            if (d->max >= SEED_MAX) /* %.0f would print UINT64_MAX as 2^64 */
                snprintf(range, sizeof range, "--%s must be in [%.0f, %llu], got '%%s'", d->name, d->min,
                         (unsigned long long)UINT64_MAX);
            else
                snprintf(range, sizeof range, "--%s must be in [%.0f, %.0f], got '%%s'", d->name, d->min, d->max);
            return fail(range, v, NULL);
        }
        *(uint64_t *)base = x;
        return 0;
    }
    case K_DOUBLE: {
        errno = 0;
        double x = strtod(v, &end);
        if (!*v || *end || errno || !isfinite(x))
            return fail("--%s needs a number, got '%s'", d->name, v);
        if (x < d->min || x > d->max || (d->min_open && x == d->min)) {
            if (d->min_open) snprintf(range, sizeof range, "--%s must be > %g, got '%%s'", d->name, d->min);
            else if (d->max >= BIG) snprintf(range, sizeof range, "--%s must be >= %g, got '%%s'", d->name, d->min);
            else snprintf(range, sizeof range, "--%s must be in [%g, %g], got '%%s'", d->name, d->min, d->max);
            return fail(range, v, NULL);
        }
        *(double *)base = x;
        return 0;
    }
    case K_CHOICE: {
        char names[256];
        if (d->reg && !air_registry_find(d->reg, v))
            return fail("--%s must be one of %s", d->name, air_registry_names(d->reg, "|", names, sizeof names));
        }
        *(const char **)base = v;
        return 0;
    case K_PATH:
        if (!*v) return fail("--%s needs a file name%s", d->name, "");
        *(const char **)base = v;
        return 0;
    case K_FLAG:
        *(int *)base = 1;
        return 0;
    }
    return 2;
}

static const optdef *lookup(const char *name, size_t len)
{
    for (size_t i = 0; i < NOPT; i++)
        if (strlen(table[i].name) == len && strncmp(table[i].name, name, len) == 0) return &table[i];
    return NULL;
}

/* The options of the i-th policy of a kind (NULL: none). */
static const optdef *policy_options(int kind, int i) { return air_policy_lists[kind].list[i]->options; }

/* A policy's option by name: its descriptor, and where its value goes in o. */
static const optdef *lookup_policy_option(air_options *o, const char *name, size_t len, air_option_value **slot)
{
    for (int kind = 0; kind < AIR_POLICY_KINDS; kind++)
        for (int i = 0; air_policy_lists[kind].list[i]; i++)
            for (int k = 0; policy_options(kind, i) && policy_options(kind, i)[k].name; k++) {
                const optdef *d = &policy_options(kind, i)[k];
                if (strlen(d->name) == len && strncmp(d->name, name, len) == 0) {
                    *slot = &o->policy_values[kind][i][k];
                    return d;
                }
            }
    return NULL;
}

air_option_value *air_options_value(air_options *o, const char *option_name)
{
    air_option_value *slot = NULL;
    return lookup_policy_option(o, option_name, strlen(option_name), &slot) ? slot : NULL;
}

const air_option_value *air_options_policy_values_at(const air_options *o, air_policy_kind kind, int i)
{
    /* a policy past the rows has no options (policy_defaults refuses any that has) */
    return i < 0 || i >= AIR_MAX_POLICIES ? NULL : o->policy_values[kind][i];
}

const air_option_value *air_options_policy_values(const air_options *o, air_policy_kind kind, const char *name)
{
    return air_options_policy_values_at(o, kind, air_registry_index(air_policy_lists[kind].list, name));
}

/* Every policy's options at their defaults. A registry that outgrew air_options, an
 * option of a kind a value slot cannot hold, or a name declared twice (by the engine's
 * table or another policy) would be a build mistake: refused before any run. */
static int policy_defaults(air_options *o)
{
    for (int kind = 0; kind < AIR_POLICY_KINDS; kind++)
        for (int i = 0; air_policy_lists[kind].list[i]; i++)
            for (int k = 0; policy_options(kind, i) && policy_options(kind, i)[k].name; k++) {
                const optdef *d = &policy_options(kind, i)[k];
                air_option_value *first = NULL;
                if (i >= AIR_MAX_POLICIES || k >= AIR_MAX_POLICY_OPTIONS || !d->def
                    || (d->kind != K_UINT && d->kind != K_DOUBLE) || lookup(d->name, strlen(d->name))
                    || (lookup_policy_option(o, d->name, strlen(d->name), &first) && first != &o->policy_values[kind][i][k])) {
                    fprintf(stderr, "airpdes: internal error: %s %s's option --%s does not fit (see option_def.h)\n",
                            air_policy_lists[kind].option, air_policy_lists[kind].list[i]->name, d->name);
                    return 2;
                }
                if (set_value(&o->policy_values[kind][i][k], d, d->def)) return 2;
            }
    return 0;
}

int air_options_defaults(air_options *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < NOPT; i++)
        if (default_of(&table[i]) && set_value((char *)o + table[i].off, &table[i], default_of(&table[i]))) return 2;
    return policy_defaults(o);
}

static int model_option_index(const air_model *m, const char *name, size_t len)
{
    for (int i = 0; m && m->options && m->options[i].name; i++)
        if (strlen(m->options[i].name) == len && strncmp(m->options[i].name, name, len) == 0) return i;
    return -1;
}

/* Creating (then removing) FILE.tmp.PID proves the output can be written before the run
 * spends any time; the real output goes to the same temporary name and is renamed. */
static int check_writable(const char *opt, const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wx");
    if (!f) {
        fprintf(stderr, "airpdes: cannot write --%s %s: %s\n", opt, path, strerror(errno));
        return 2;
    }
    fclose(f);
    unlink(tmp);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "airpdes: cannot write --%s %s: it is a directory\n", opt, path);
        return 2;
    }
    if (access(path, F_OK) == 0 && access(path, W_OK) != 0) {
        fprintf(stderr, "airpdes: cannot write --%s %s: %s\n", opt, path, strerror(errno));
        return 2;
    }
    return 0;
}

/* The run's shape as the model sees it: validation and the engine's set-up use the same. */
void air_options_sim_info(const air_options *o, air_sim_info *in)
{
    memset(in, 0, sizeof *in);
    in->num_pes = (uint32_t)o->pes;
    in->lps_per_pe = o->lps_per_pe;
    in->num_lps = o->pes * o->lps_per_pe;
    in->end_time = o->end_time;
    in->seed = o->seed;
    in->events_per_lp = o->events_per_lp;
    in->remote = o->remote;
    in->mean = o->mean;
    in->lookahead = o->lookahead;
    in->epg = o->epg;
}

/* What the model and the sync would refuse at set-up, refused here already so that
 * --check answers for the run (the engine keeps its own checks for library callers). */
static int validate_model(const air_options *o)
{
    const air_model *m = o->model_def;
    air_sim_info in;
    air_options_sim_info(o, &in);
    char err[256] = "";
    if (m->configure && m->configure(&in, err, sizeof err)) {
        fprintf(stderr, "airpdes: %s\n", err[0] ? err : "bad model configuration");
        return 2;
    }
    double lookahead = m->min_delay ? m->min_delay(&in) : 0.0;
    const air_sync *sync = (const air_sync *)air_registry_find(air_sync_list, o->sync);
    if (sync->check && sync->check(o, &in, lookahead)) return 2;
    return 0;
}

/* Whether two output paths name one file however spelled ("o.json", "./o.json"): the same
 * directory and the same name. Both directories exist (check_writable wrote to them). */
static int same_output(const char *a, const char *b)
{
    char da[4096], db[4096], na[4096], nb[4096];
    snprintf(da, sizeof da, "%s", a);
    snprintf(db, sizeof db, "%s", b);
    snprintf(na, sizeof na, "%s", a);
    snprintf(nb, sizeof nb, "%s", b);
    struct stat sa, sb;
    if (stat(dirname(da), &sa) || stat(dirname(db), &sb)) return strcmp(a, b) == 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && strcmp(basename(na), basename(nb)) == 0;
}

/* A model with a size of its own (pcs: the paper's 36,864 cells) spreads it over the PEs
 * when --lps-per-pe is not given; a PE count that does not divide it is refused rather
 * than silently rounded, so "the default size" always means the same model. */
static int default_lps(air_options *o)
{
    uint64_t total = o->model_def->default_num_lps;
    if (total % o->pes == 0) {
        o->lps_per_pe = total / o->pes;
        return 0;
    }
    fprintf(stderr, "airpdes: --model %s has %llu LPs by default, spread over the PEs, but --pes %llu "
            "does not divide %llu; use --pes", o->model, (unsigned long long)total,
            (unsigned long long)o->pes, (unsigned long long)total);
    const char *sep = " ";
    for (uint64_t d = 1; d <= total && d <= 65536; d++)
        if (total % d == 0) {
            fprintf(stderr, "%s%llu", sep, (unsigned long long)d);
            sep = ", ";
        }
    fprintf(stderr, ", or pass --lps-per-pe\n");
    return 2;
}

/* A wait that holds its CPU, chosen by name with more threads than usable CPUs: FM with 4
 * threads on 2 CPUs and no load took 9.2-9.7 s with spin or idle-yield against 0.5-0.8 s
 * with auto (4 Dec), each round waiting for a spinner's slice to end. Allowed (it is how
 * that cost is measured), but said. */
static void warn_oversubscribed(const air_options *o)
{
    long cpus = air_usable_cpus();
    if (cpus > 0 && (long)o->threads > cpus)
        fprintf(stderr, "airpdes: warning: --barrier-wait %s with %llu threads on %ld CPUs: a waiter keeps its "
                "CPU while a partner queued behind it waits for its slice, every round; expect a run many times "
                "slower (auto picks adaptive here)\n", o->barrier_wait, (unsigned long long)o->threads, cpus);
}

static int validate(air_options *o, int pes_given, int lps_given)
{
    const char *m = o->mode;
    const air_mode *mode = (const air_mode *)air_registry_find(air_mode_list, m);
    if (!pes_given) o->pes = o->threads;
    if (mode->sequential && o->threads != 1) {
        fprintf(stderr, "airpdes: --mode %s runs one thread; use --threads 1 (and --pes N for the model's shape)\n", m);
        return 2;
    }
    if (mode->threads_equal_pes && o->threads != o->pes) {
        fprintf(stderr, "airpdes: --mode %s runs PE i on thread i, so --threads (%llu) must equal --pes (%llu)\n",
                m, (unsigned long long)o->threads, (unsigned long long)o->pes);
        return 2;
    }
    if (!mode->sequential && !mode->threads_equal_pes && o->threads > o->pes) {
        fprintf(stderr, "airpdes: --mode %s needs --threads (%llu) <= --pes (%llu)\n", m,
                (unsigned long long)o->threads, (unsigned long long)o->pes);
        return 2;
    }
    if (!(o->end_time > 0)) {
        fprintf(stderr, "airpdes: --end-time must be > 0, got %g\n", o->end_time);
        return 2;
    }
    if (!(o->mean + o->lookahead > 0)) {
        fprintf(stderr, "airpdes: --mean and --lookahead cannot both be 0 (events would not advance time)\n");
        return 2;
    }
    if (!lps_given && o->model_def->default_num_lps && default_lps(o)) return 2;
    if ((double)o->pes * (double)o->lps_per_pe > 4e9) { /* events hold LP ids in 32 bits */
        fprintf(stderr, "airpdes: too many LPs (--pes x --lps-per-pe > 4e9)\n");
        return 2;
    }
    const air_detector *det = (const air_detector *)air_registry_find(air_detector_list, o->detector);
    char err[256];
    if (mode->adaptive && det->usable && det->usable(err, sizeof err)) {
        fprintf(stderr, "airpdes: %s\n", err);
        return 2;
    }
    if (validate_model(o)) return 2;
    /* the JSON config records the policy a start-up choice (auto) stands for */
    const air_barrier_wait *bw = (const air_barrier_wait *)air_registry_find(air_barrier_wait_list, o->barrier_wait);
    if (bw->resolve) o->barrier_wait = bw->resolve(o)->id.name;
    else if (bw->holds_cpu && !mode->sequential) warn_oversubscribed(o);
    if (o->json && check_writable("json", o->json)) return 2;
    if (o->timeline && check_writable("timeline", o->timeline)) return 2;
    if (o->json && o->timeline && same_output(o->json, o->timeline)) {
        fprintf(stderr, "airpdes: --json and --timeline name the same file\n");
        return 2;
    }
    return 0;
}

int air_options_parse(air_options *o, int argc, char **argv)
{
    if (air_options_defaults(o)) return 2;
    /* --model first: it decides which model options exist. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            air_options_help(stdout);
            return 1;
        }
        if (strncmp(argv[i], "--model=", 8) == 0) o->model = argv[i] + 8;
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) o->model = argv[i + 1];
    }
    o->model_def = air_model_find(o->model);
    if (!o->model_def) {
        for (int i = 0; air_models_planned[i]; i++)
            if (strcmp(air_models_planned[i], o->model) == 0) {
                fprintf(stderr, "airpdes: --model %s is not built yet\n", o->model);
                return 2;
            }
        fprintf(stderr, "airpdes: unknown model '%s'; known:", o->model);
        for (int i = 0; air_models[i]; i++) fprintf(stderr, " %s", air_models[i]->name);
        fprintf(stderr, "\n");
        return 2;
    }
    const air_model *md = o->model_def;
    char err[256];
    for (int k = 0; md->options && md->options[k].name; k++) {
        if (k >= AIR_MAX_MODEL_OPTIONS) break;
        o->model_values[k] = md->options[k].default_value;
        err[0] = 0;
        if (md->set_option(md->options[k].name, md->options[k].default_value, err, sizeof err)) {
            fprintf(stderr, "airpdes: bad default for --%s: %s\n", md->options[k].name, err);
            return 2;
        }
    }
    int pes_given = 0, lps_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) return fail("unexpected argument '%s'%s", a, "");
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const optdef *d = lookup(name, len);
        air_option_value *slot = NULL; /* a policy's option: where its value goes */
        const optdef *dd = d ? NULL : lookup_policy_option(o, name, len, &slot);
        int mk = d || dd ? -1 : model_option_index(md, name, len);
        if (!d && !dd && mk < 0) return fail("unknown option '%s'%s", a, "");
        const char *v = NULL;
        if (d && d->kind == K_FLAG) {
            if (eq) return fail("--%s takes no value%s", d->name, "");
        } else if (eq) {
            v = eq + 1;
        } else {
            /* "--json --quiet" must not write the JSON to a file named --quiet */
            if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0) return fail("%s needs a value%s", a, "");
            v = argv[++i];
        }
        if (d) {
            if (set_value((char *)o + d->off, d, d->kind == K_FLAG ? "1" : v)) return 2;
            if (d->off == O(pes)) pes_given = 1;
            if (d->off == O(lps_per_pe)) lps_given = 1;
        } else if (dd) {
            if (set_value(slot, dd, v)) return 2;
        } else {
            err[0] = 0;
            if (md->set_option(md->options[mk].name, v, err, sizeof err)) {
                if (strncmp(err, "--", 2) == 0) /* the model's message names the option itself */
                    fprintf(stderr, "airpdes: %s\n", err);
                else
                    fprintf(stderr, "airpdes: --%s: %s\n", md->options[mk].name, err[0] ? err : "bad value");
                return 2;
            }
            o->model_values[mk] = v;
        }
    }
    return validate(o, pes_given, lps_given);
}

/* An option's line in --help: name, value, help, the values it takes, its default. */
static void help_line(FILE *f, const optdef *d)
{
    char lhs[64];
    snprintf(lhs, sizeof lhs, "--%s%s%s", d->name, d->metavar ? " " : "", d->metavar ? d->metavar : "");
    char def[48] = "", names[256] = "";
    if (default_of(d)) snprintf(def, sizeof def, " [%s]", default_of(d));
    else if (strcmp(d->name, "pes") == 0) snprintf(def, sizeof def, " [= threads]");
    if (d->reg) {
        names[0] = ':';
        names[1] = ' ';
        air_registry_names(d->reg, " | ", names + 2, sizeof names - 2);
    }
    fprintf(f, "  %-24s %s%s%s\n", lhs, d->help, names, def);
}

/* One kind of policy: its names and help lines, wrapped at 88 columns, a note on them all
 * (NULL: none), then their own options. */
static void section(FILE *f, const char *title, air_policy_kind kind, const char *note)
{
    const air_named *const *list = air_policy_lists[kind].list;
    fprintf(f, "\n%s:\n", title);
    for (int i = 0; list[i]; i++) {
        const char *h = list[i]->help;
        int first = 1;
        while (*h) {
            size_t n = strlen(h);
            if (n > 74) {
                n = 74;
                while (n > 0 && h[n] != ' ') n--;
                if (n == 0) n = 74;
            }
            fprintf(f, "  %-13s %.*s\n", first ? list[i]->name : "", (int)n, h);
            h += n;
            while (*h == ' ') h++;
            first = 0;
        }
    }
    if (note) fputs(note, f);
    int any = 0;
    for (int i = 0; list[i]; i++)
        for (int k = 0; list[i]->options && list[i]->options[k].name; k++) {
            if (!any++) fprintf(f, "  Their options [default] (each read by its own %s; the JSON config records all):\n",
                                air_policy_lists[kind].option);
            help_line(f, &list[i]->options[k]);
        }
}

void air_options_help(FILE *f)
{
    fprintf(f,
            "airpdes - an optimistic (Time Warp) parallel discrete event simulator with fixed,\n"
            "dynamic and adaptive thread-to-PE mappings (FM, DM, ADM, LADM; the AIR paper).\n\n"
            "usage: airpdes [--option VALUE]...   (also --option=VALUE)\n\n"
            "Options [default]:\n");
    for (size_t i = 0; i < NOPT; i++) help_line(f, &table[i]);
    fprintf(f, "  %-24s %s\n", "--help", "this text");
    fprintf(f, "\nModels:\n");
    for (int i = 0; air_models[i]; i++) {
        const air_model *m = air_models[i];
        fprintf(f, "  %-10s %s\n", m->name, m->summary);
        if (m->default_num_lps)
            fprintf(f, "    %-22s by default %llu LPs in all, spread over the PEs (--pes must divide it) [%llu / --pes]\n",
                    "--lps-per-pe N", (unsigned long long)m->default_num_lps,
                    (unsigned long long)m->default_num_lps);
        for (int k = 0; m->options && m->options[k].name; k++) {
            char lhs[64];
            snprintf(lhs, sizeof lhs, "--%s %s", m->options[k].name, m->options[k].metavar);
            fprintf(f, "    %-22s %s [%s]\n", lhs, m->options[k].help, m->options[k].default_value);
        }
    }
    for (int i = 0; air_models_planned[i]; i++) fprintf(f, "  %-10s (not built yet)\n", air_models_planned[i]);
    section(f, "Modes", AIR_MODES, NULL);
    section(f, "Synchronisation", AIR_SYNCS, NULL);
    section(f, "GVT barrier (--barrier-wait; the JSON config records the policy used)", AIR_BARRIER_WAITS, NULL);
    section(f, "Detectors (--detector)", AIR_DETECTORS,
            "  Every detector stays silent for the first --detect-after-ms of a run: a new thread\n"
            "  often starts on its creator's CPU and shares it for 10-25 ms until the kernel's\n"
            "  load balancer moves it, which PI and RQ would otherwise take for a competitor.\n");
    section(f, "Reactivation (--reactivation)", AIR_REACTIVATIONS, NULL);
    fprintf(f,
            "\nDeterminism: the committed event count and the checksum are identical for every\n"
            "mode, thread count, detector and load, given the model options and --seed.\n"
            "\nExamples:\n"
            "  # the sequential reference for a 2-PE PHOLD\n"
            "  airpdes --mode seq --pes 2 --lps-per-pe 1000 --remote 0.4 --end-time 2000\n"
            "  # the same model on 2 threads with LADM, PI detection, RAP reactivation\n"
            "  airpdes --mode ladm --threads 2 --pes 2 --lps-per-pe 1000 --remote 0.4 \\\n"
            "      --end-time 2000 --detector pi --reactivation rap --json out.json --timeline out.csv\n"
            "  # PCS at its default, the AIR paper's size (36,864 cells = a 192 x 192 torus,\n"
            "  # 10 channels), conservative: compare with the optimistic run's wall time (Fig. 3)\n"
            "  airpdes --model pcs --mode fm --threads 2 --end-time 3000 --sync conservative\n"
            "\nExit status: 0 done; 2 bad input (one line on stderr, no output file written);\n"
            "1 the run failed (e.g. an output could not be written at the end: then no output\n"
            "file is left either).\n");
}

void air_options_to_json(const air_options *o, air_json *j)
{
    air_json_obj(j, "config");
    for (size_t i = 0; i < NOPT; i++) {
        const optdef *d = &table[i];
        const char *base = (const char *)o + d->off;
        switch (d->kind) {
        case K_UINT: air_json_u64(j, d->name, *(const uint64_t *)base); break;
        case K_DOUBLE: air_json_f64(j, d->name, *(const double *)base); break;
        case K_CHOICE:
        case K_PATH: air_json_str(j, d->name, *(const char *const *)base); break;
        case K_FLAG: air_json_bool(j, d->name, *(const int *)base); break;
        }
    }
    /* every policy's options, whichever runs (policy_defaults refused any that do not fit) */
    for (int kind = 0; kind < AIR_POLICY_KINDS; kind++)
        for (int i = 0; air_policy_lists[kind].list[i]; i++)
            for (int k = 0; policy_options(kind, i) && policy_options(kind, i)[k].name; k++) {
                const optdef *d = &policy_options(kind, i)[k];
                if (d->kind == K_UINT) air_json_u64(j, d->name, o->policy_values[kind][i][k].u);
                else air_json_f64(j, d->name, o->policy_values[kind][i][k].d);
            }
    const air_model *m = o->model_def;
    for (int k = 0; m && m->options && m->options[k].name && k < AIR_MAX_MODEL_OPTIONS; k++)
        air_json_auto(j, m->options[k].name, o->model_values[k]);
    air_json_end_obj(j);
}

static void model_options_json(const air_model *m, air_json *j)
{
    for (int k = 0; m->options && m->options[k].name && k < AIR_MAX_MODEL_OPTIONS; k++) air_json_str(j, NULL, m->options[k].name);
}

void air_options_work_json(const air_model *m, air_json *j)
{
    air_json_arr(j, "work_options");
    for (size_t i = 0; i < NOPT; i++)
        if (table[i].work) air_json_str(j, NULL, table[i].name);
    /* a model's parameters are its simulated work by definition */
    if (m) model_options_json(m, j);
    else
        for (int i = 0; air_models[i]; i++) model_options_json(air_models[i], j);
    air_json_end_arr(j);
}
