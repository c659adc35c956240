/* airpdes: run one simulation from the command line (see --help). Output files are
 * written to FILE.tmp.PID and renamed only when every one of them was written, so after
 * a run they are all complete or all absent. The JSON is renamed last: it is the run's
 * record of success, so a reader never sees it for a run whose other output then fails. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_api.h"
#include "options.h"
#include "registry.h"
#include "timeline.h"

typedef struct out_file {
    const char *path;
    char tmp[4200];
    int written; /* the temporary is complete */
} out_file;

/* Write one output to its temporary name with write_fn; report and clean up on failure. */
static int write_tmp(out_file *o, void (*write_fn)(void *, FILE *), void *arg)
{
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->path, (long)getpid());
    FILE *f = fopen(o->tmp, "w");
    if (f) {
        write_fn(arg, f);
        int bad = ferror(f);
        if (fclose(f) == 0 && !bad) {
            o->written = 1;
            return 0;
        }
        if (bad) errno = EIO;
    }
    fprintf(stderr, "airpdes: cannot write %s: %s\n", o->path, strerror(errno));
    unlink(o->tmp);
    return -1;
}

typedef struct json_arg { air_engine *e; air_result *r; } json_arg;
static void write_json(void *a, FILE *f) { json_arg *j = a; air_engine_write_json(j->e, j->r, f); }
static void write_timeline(void *a, FILE *f) { air_timeline_write(a, f); }

/* All temporaries written: rename them in order; if a rename fails, remove what was renamed. */
static int publish(out_file *outs, int n)
{
    for (int i = 0; i < n; i++) {
        if (rename(outs[i].tmp, outs[i].path) == 0) continue;
        fprintf(stderr, "airpdes: cannot write %s: %s\n", outs[i].path, strerror(errno));
        for (int k = i; k < n; k++) unlink(outs[k].tmp);
        for (int k = 0; k < i; k++) unlink(outs[k].path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    air_options o;
    int rc = air_options_parse(&o, argc, argv);
    if (rc == 1) return 0;
    if (rc) return 2;
    if (o.check) return 0;
    if (o.describe) {
        air_registry_describe(stdout);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    air_engine *e = air_engine_create(&o);
    air_timeline tl;
    memset(&tl, 0, sizeof tl);
    tl.record = o.timeline != NULL;
    tl.progress = !o.quiet && isatty(STDERR_FILENO);
    air_result r;
    air_engine_run(e, &tl, &r);
    out_file outs[2];
    int n = 0, failed = 0;
    json_arg ja = { e, &r };
    if (o.timeline) {
        outs[n] = (out_file){ .path = o.timeline };
        failed |= write_tmp(&outs[n++], write_timeline, &tl) != 0;
    }
    if (o.json && !failed) { /* last, so that publish() renames it last */
        outs[n] = (out_file){ .path = o.json };
        failed |= write_tmp(&outs[n++], write_json, &ja) != 0;
    }
    if (failed) {
        for (int i = 0; i < n; i++)
            if (outs[i].written) unlink(outs[i].tmp);
    } else {
        failed = publish(outs, n) != 0;
    }
    if (!o.quiet) air_engine_print_summary(e, &r, stdout);
    air_timeline_free(&tl);
    air_engine_destroy(e);
    return failed ? 1 : 0;
}
