/* Unit tests: core/metrics: rendering the registered collectors into one bounded scrape buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/buf.h"
#include "core/metrics.h"
#include "core/status.h"

/* A collector with more to say than the scrape buffer holds. */
static void big_collector(tg_buf_t *out, void *arg)
{
    const size_t *lines = arg;
    for (size_t i = 0; i < *lines; i++)
        if (tg_buf_printf(out, "test_big_series{i=\"%zu\"} 1\n", i) != TG_OK)
            return;
}

static void test_metrics_render_reports_a_collector_that_overflows(void **state)
{
    (void)state;
    size_t lines = 10;
    tg_metrics_register(big_collector, &lines);
    tg_buf_t out;
    tg_buf_init(&out, 64 * 1024);
    assert_int_equal(tg_metrics_render(&out), TG_OK);
    assert_non_null(strstr(out.data, "test_big_series{i=\"9\"} 1\n"));
    tg_buf_reset(&out);
    lines = 100000; /* ~3 MB: the collector's own appends fail, not core's */
    assert_int_equal(tg_metrics_render(&out), TG_ETOOLARGE);
    tg_metrics_unregister(big_collector, &lines);
    tg_buf_clean(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_render_reports_a_collector_that_overflows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
