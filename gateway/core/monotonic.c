/* Waiting on the monotonic clock. */
#include "core/monotonic.h"

#include <stdlib.h>

void tg_cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0 || pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(cond, &ca) != 0)
        abort();
    pthread_condattr_destroy(&ca);
}

struct timespec tg_mono_deadline_ms(uint64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (ms % 1000) * 1000000u;
    ts.tv_sec += (time_t)(ms / 1000 + ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    return ts;
}
