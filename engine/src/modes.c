/* The modes: how threads map to PEs (the mapping), whether the run is the sequential
 * reference, and whether threads adapt to interference. */
#include "engine.h"

const air_mode air_mode_seq = {
    { "seq", "one thread, one event queue, no rollback: the reference result", 1, NULL },
    .sequential = 1,
};
const air_mode air_mode_fm = {
    { "fm", "fixed mapping: thread i runs PE i (--threads = --pes)", 0, NULL },
    .mapping = &air_mapping_fm, .threads_equal_pes = 1,
};
const air_mode air_mode_dm = {
    { "dm", "dynamic mapping: each iteration a thread takes the next free PE", 0, NULL },
    .mapping = &air_mapping_dm,
};
const air_mode air_mode_adm = {
    { "adm", "dm + adaptation: --detector deactivates threads under interference, "
      "--reactivation brings them back; inactive threads sleep", 0, NULL },
    .mapping = &air_mapping_dm, .adaptive = 1,
};
const air_mode air_mode_ladm = {
    { "ladm", "locality-aware adm: each thread keeps a primary PE and helps orphan PEs (of "
      "inactive threads) that are behind it, each for up to --n-batch iterations or until it "
      "has caught up", 0, air_mapping_ladm_options },
    .mapping = &air_mapping_ladm, .adaptive = 1,
};
