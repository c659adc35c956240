/* Conservative synchronisation (lookahead windows): see sync_conservative.c. */
#ifndef AIR_SYNC_CONSERVATIVE_H
#define AIR_SYNC_CONSERVATIVE_H

#include "engine.h"

extern const air_sync air_sync_conservative;

#endif
