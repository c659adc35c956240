#include "models.h"

#include <string.h>

extern const air_model air_model_phold;
extern const air_model air_model_pcs;

/* The first model is the default (--model). */
const air_model *const air_models[] = {
    &air_model_phold,
    &air_model_pcs,
    NULL,
};

const char *const air_models_planned[] = { NULL };

const air_model *air_model_find(const char *name)
{
    for (int i = 0; air_models[i]; i++)
        if (strcmp(air_models[i]->name, name) == 0) return air_models[i];
    return NULL;
}
