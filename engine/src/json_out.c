#include "json_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void sep(air_json *j, const char *key)
{
    if (j->count[j->depth]++) fputc(',', j->f);
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
    if (key) fprintf(j->f, "\"%s\": ", key);
}

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

void air_json_start(air_json *j, FILE *f)
{
    j->f = f;
    j->depth = 1;
    j->count[1] = 0;
    fputc('{', f);
}

void air_json_finish(air_json *j)
{
    fputs("\n}\n", j->f);
}

static void open_(air_json *j, const char *key, char c)
{
    sep(j, key);
    fputc(c, j->f);
    j->count[++j->depth] = 0;
}

static void close_(air_json *j, char c)
{
    int had = j->count[j->depth];
    j->depth--;
    if (had) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++) fputs("  ", j->f);
    }
    fputc(c, j->f);
}

void air_json_obj(air_json *j, const char *key) { open_(j, key, '{'); }
void air_json_arr(air_json *j, const char *key) { open_(j, key, '['); }
void air_json_end_obj(air_json *j) { close_(j, '}'); }
void air_json_end_arr(air_json *j) { close_(j, ']'); }

void air_json_u64(air_json *j, const char *key, uint64_t v)
{
    sep(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void air_json_i64(air_json *j, const char *key, int64_t v)
{
    sep(j, key);
    fprintf(j->f, "%lld", (long long)v);
}

void air_json_f64(air_json *j, const char *key, double v)
{
    sep(j, key);
    if (isfinite(v)) fprintf(j->f, "%.17g", v);
    else fputs("null", j->f); /* JSON has no infinity; a GVT of +inf means "no events left" */
}

void air_json_str(air_json *j, const char *key, const char *v)
{
    sep(j, key);
    if (v) put_string(j->f, v);
    else fputs("null", j->f);
}

void air_json_bool(air_json *j, const char *key, int v)
{
    sep(j, key);
    fputs(v ? "true" : "false", j->f);
}

void air_json_null(air_json *j, const char *key)
{
    sep(j, key);
    fputs("null", j->f);
}

void air_json_auto(air_json *j, const char *key, const char *text)
{
    char *end;
    double d = strtod(text, &end);
    int plain = (*text == '-' || (*text >= '0' && *text <= '9')) && !strpbrk(text, "xXpP");
    if (plain && !*end && isfinite(d)) {
        sep(j, key);
        if (d == (double)(long long)d && fabs(d) < 9e15) fprintf(j->f, "%lld", (long long)d);
        else fprintf(j->f, "%.17g", d);
    } else {
        air_json_str(j, key, text);
    }
}
