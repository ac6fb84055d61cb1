/* core/monotonic: deadlines are normalised and in the future; a timed wait
 * on a monotonic condition variable ends at its deadline, not before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>

#include "core/monotonic.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t ns_of(struct timespec ts)
{
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_deadlines(void **state)
{
    (void)state;
    const uint64_t spans[] = {0, 1, 999, 1000, 1001, 86400000};
    for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
        uint64_t before = now_ns();
        struct timespec d = tg_mono_deadline_ms(spans[i]);
        uint64_t after = now_ns();
        assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
        assert_true(ns_of(d) >= before + spans[i] * 1000000u);
        assert_true(ns_of(d) <= after + spans[i] * 1000000u);
    }
}

static void test_timed_wait_ends_at_the_deadline(void **state)
{
    (void)state;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c;
    tg_cond_init_monotonic(&c);
    struct timespec d = tg_mono_deadline_ms(20);
    pthread_mutex_lock(&m);
    int rc;
    do /* a spurious wake-up waits again */
        rc = pthread_cond_timedwait(&c, &m, &d);
    while (rc == 0);
    pthread_mutex_unlock(&m);
    assert_int_equal(rc, ETIMEDOUT);
    /* the condition variable reads the same clock as the deadline */
    assert_true(now_ns() >= ns_of(d));
    pthread_cond_destroy(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadlines),
        cmocka_unit_test(test_timed_wait_ends_at_the_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
