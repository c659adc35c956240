/* airpdes: run one simulation from the command line (see --help). Output files are
 * written to FILE.tmp.PID and renamed, so they are complete or absent. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_api.h"
#include "options.h"
#include "timeline.h"

static int open_tmp(const char *path, char *tmp, size_t n, FILE **f)
{
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    *f = fopen(tmp, "w");
    return *f ? 0 : -1;
}

static int finish_file(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        fprintf(stderr, "airpdes: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
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
    air_engine *e = air_engine_create(&o);
    air_timeline tl;
    memset(&tl, 0, sizeof tl);
    tl.record = o.timeline != NULL;
    tl.progress = !o.quiet && isatty(STDERR_FILENO);
    air_result r;
    air_engine_run(e, &tl, &r);
    int failed = 0;
    char tmp[4200];
    FILE *f;
    if (o.json) {
        if (open_tmp(o.json, tmp, sizeof tmp, &f)) {
            fprintf(stderr, "airpdes: cannot write %s: %s\n", o.json, strerror(errno));
            failed = 1;
        } else {
            air_engine_write_json(e, &r, f);
            failed |= finish_file(f, tmp, o.json) != 0;
        }
    }
    if (o.timeline) {
        if (open_tmp(o.timeline, tmp, sizeof tmp, &f)) {
            fprintf(stderr, "airpdes: cannot write %s: %s\n", o.timeline, strerror(errno));
            failed = 1;
        } else {
            air_timeline_write(&tl, f);
            failed |= finish_file(f, tmp, o.timeline) != 0;
        }
    }
    if (!o.quiet) air_engine_print_summary(e, &r, stdout);
    air_timeline_free(&tl);
    air_engine_destroy(e);
    return failed ? 1 : 0;
}
