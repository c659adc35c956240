/* Two helpers of the lab's small probes and benchmarks (airprobe, bench/handoff_after_wait):
 * a clock in seconds, and pinning the calling thread to one CPU. */
#ifndef AIR_CPU_AND_CLOCK_H
#define AIR_CPU_AND_CLOCK_H
#include <pthread.h>
#include <sched.h>
#include <time.h>

static inline double seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* 0, or the error pthread_setaffinity_np gave */
static inline int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}
#endif
