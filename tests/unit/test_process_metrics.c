/* Unit tests: the process_* metrics read this very process. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/buf.h"
#include "core/process_metrics.h"

static void test_stats_describe_this_process(void **state)
{
    (void)state;
    tg_process_stats_t st;
    tg_process_stats_read(&st);
    /* started within the last hour, not in the future */
    double now = (double)time(NULL);
    assert_true(st.start_time_seconds > now - 3600 && st.start_time_seconds <= now + 2);
    assert_true(st.cpu_seconds >= 0);
    assert_true(st.resident_bytes > 1024 * 1024); /* a process maps at least a MiB */
    assert_true(st.virtual_bytes >= st.resident_bytes);
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    assert_true(st.max_fds == (double)rl.rlim_cur);
    assert_true(st.open_fds >= 3 && st.open_fds <= st.max_fds);
}

static void test_open_fds_follow_what_the_process_opens(void **state)
{
    (void)state;
    tg_process_stats_t before, during, after;
    tg_process_stats_read(&before);
    int fds[7];
    for (int i = 0; i < 7; i++)
        assert_true((fds[i] = open("/dev/null", O_RDONLY)) >= 0);
    tg_process_stats_read(&during);
    for (int i = 0; i < 7; i++)
        close(fds[i]);
    tg_process_stats_read(&after);
    assert_true(during.open_fds == before.open_fds + 7);
    assert_true(after.open_fds == before.open_fds);
}

static void test_cpu_seconds_grow_with_work(void **state)
{
    (void)state;
    tg_process_stats_t a, b;
    tg_process_stats_read(&a);
    /* spin until the CPU clock (ticks of 10 ms) has moved: a fact, not a sleep */
    volatile uint64_t x = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    do {
        for (int i = 0; i < 1000000; i++)
            x += (uint64_t)i * 2654435761u;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < 0.05);
    tg_process_stats_read(&b);
    assert_true(b.cpu_seconds > a.cpu_seconds);
}

static void test_render_names_each_family_once_with_help_and_type(void **state)
{
    (void)state;
    tg_buf_t out;
    tg_buf_init(&out, 1 << 20);
    assert_int_equal(tg_process_metrics_render(&out), TG_OK);
    static const char *const fams[][2] = {
        {"process_cpu_seconds_total", "counter"},
        {"process_resident_memory_bytes", "gauge"},
        {"process_virtual_memory_bytes", "gauge"},
        {"process_open_fds", "gauge"},
        {"process_max_fds", "gauge"},
        {"process_start_time_seconds", "gauge"},
    };
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
        char want[160];
        snprintf(want, sizeof(want), "# TYPE %s %s\n%s ", fams[i][0], fams[i][1], fams[i][0]);
        const char *at = strstr(out.data, want);
        assert_non_null(at);
        assert_null(strstr(at + 1, want)); /* once */
        snprintf(want, sizeof(want), "# HELP %s ", fams[i][0]);
        assert_non_null(strstr(out.data, want));
    }
    tg_buf_clean(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_describe_this_process),
        cmocka_unit_test(test_open_fds_follow_what_the_process_opens),
        cmocka_unit_test(test_cpu_seconds_grow_with_work),
        cmocka_unit_test(test_render_names_each_family_once_with_help_and_type),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
