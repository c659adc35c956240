/* Optimistic (Time Warp) synchronisation: no bound, rollbacks repair causality. */
#include "engine.h"

const air_sync air_sync_optimistic = { .name = "optimistic" };
