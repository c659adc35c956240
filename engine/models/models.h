/* The table of models airpdes knows. Adding a model is one line in models.c. */
#ifndef AIR_MODELS_H
#define AIR_MODELS_H

#include "model.h"

extern const air_model *const air_models[]; /* NULL-terminated */

/* Models that are planned but whose code is not in this build: recognised by --model so
 * the user gets "not built yet" instead of "unknown". */
extern const char *const air_models_planned[]; /* NULL-terminated */

const air_model *air_model_find(const char *name);

#endif
