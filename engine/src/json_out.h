/* A minimal streaming JSON writer (objects, arrays, numbers, strings) that places commas
 * itself, so callers only say what to write. */
#ifndef AIR_JSON_OUT_H
#define AIR_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>
#include "model.h"

struct air_json {
    FILE *f;
    int depth;
    int count[32]; /* items written at each nesting level */
};

void air_json_start(air_json *j, FILE *f);       /* opens the top-level object */
void air_json_finish(air_json *j);               /* closes it, adds a newline */
void air_json_obj(air_json *j, const char *key); /* key NULL inside arrays */
void air_json_arr(air_json *j, const char *key);
void air_json_end_obj(air_json *j);
void air_json_end_arr(air_json *j);
void air_json_i64(air_json *j, const char *key, int64_t v);
void air_json_bool(air_json *j, const char *key, int v);
void air_json_null(air_json *j, const char *key);
/* A value given as text: written as a number when it is one, else as a string. */
void air_json_auto(air_json *j, const char *key, const char *text);

#endif
