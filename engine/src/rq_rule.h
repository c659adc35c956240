/* RQ's rule, apart from how the wait is read (detector_rq.c), so that it can be tested on
 * made-up windows: the run-queue wait over the last AIR_RQ_CONFIRM windows together above
 * the threshold, with the competitor there in each (more than half the threshold). */
#ifndef AIR_RQ_RULE_H
#define AIR_RQ_RULE_H

#include <stdint.h>

#define AIR_RQ_CONFIRM 5 /* windows a competitor must last */

typedef struct {
    double wait_s[AIR_RQ_CONFIRM], span_s[AIR_RQ_CONFIRM]; /* the last windows (a ring) */
} air_rq_windows;

/* One more window: span_s of wall time, wait_s of it runnable but not running. *streak
 * counts the windows in a row with the competitor there (the caller zeroes it to start
 * afresh). Returns 1 when the thread should ask to be deactivated. */
int air_rq_window(air_rq_windows *w, uint32_t *streak, double wait_s, double span_s, double threshold);

#endif
