#include "rq_rule.h"

int air_rq_window(air_rq_windows *w, uint32_t *streak, double wait_s, double span_s, double threshold)
{
    if (wait_s <= 0.5 * threshold * span_s) {
        *streak = 0;
        return 0;
    }
    uint32_t slot = (*streak)++ % AIR_RQ_CONFIRM;
    w->wait_s[slot] = wait_s;
    w->span_s[slot] = span_s;
    if (*streak < AIR_RQ_CONFIRM) return 0;
    double waited = 0, span = 0;
    for (int i = 0; i < AIR_RQ_CONFIRM; i++) {
        waited += w->wait_s[i];
        span += w->span_s[i];
    }
    return waited > threshold * span;
}
