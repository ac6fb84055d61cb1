/* Waiting on the monotonic clock: condition variables whose timed waits a
 * wall-clock step (NTP, a suspended VM) cannot stretch or cut short, and the
 * absolute deadlines pthread_cond_timedwait takes. */
#ifndef TG_CORE_MONOTONIC_H
#define TG_CORE_MONOTONIC_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* pthread_cond_init with CLOCK_MONOTONIC; aborts if it cannot (it cannot
 * fail on Linux short of memory, as tg_xmalloc). */
void tg_cond_init_monotonic(pthread_cond_t *cond);

/* The CLOCK_MONOTONIC time `ms` milliseconds from now, for timed waits. */
struct timespec tg_mono_deadline_ms(uint64_t ms);

#endif
