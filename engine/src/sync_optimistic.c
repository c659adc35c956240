/* Optimistic (Time Warp) synchronisation: no bound, rollbacks repair causality. */
#include "engine.h"

const air_sync air_sync_optimistic = {
    .id = { "optimistic", "Time Warp: PEs run ahead, stragglers roll back", 1 },
};
