/* Performance-indicator detection (the paper's PI): the thread times sched_yield()
 * (a short burst of them, see air_probe_yield_us).
 * With no other runnable task on its CPU the call returns in about a microsecond; when a
 * competitor shares the CPU, the scheduler runs it and the call takes milliseconds (a
 * scheduling slice). Above --pi-threshold-us the thread asks to be deactivated. */
#include "engine.h"

static void pi_check(air_engine *e, air_thread *t)
{
    if (air_probe_yield_us() > e->opt->pi_threshold_us) atomic_store(&t->want_deactivate, 1);
}

const air_detector air_detector_pi = { "pi", NULL, pi_check };
