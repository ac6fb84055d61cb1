/* Unit tests: the client formatting of stored log chunks
 * (api/run_logs_stream.h): plain and SSE framing, prefixes, the since and
 * skip filters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "api/run_logs_stream.h"

#define T0  "2026-01-02T03:04:05"
#define NS0 1767323045000000000LL /* T0 as ns since the epoch */

static long format(tg_buf_t *out, long long id, const tg_run_logs_fmt_t *fmt, long *skip)
{
    static char content[] = T0 ".1Z one\n" T0 ".2Z two\r\n" T0 ".3Z three\n";
    tg_log_chunk_t c = {
        .id = id, .pod = "p", .container = "main", .content = content, .len = strlen(content)};
    return tg_run_logs_format(out, &c, fmt, skip);
}

static void test_format_plain_sse_and_filters(void **state)
{
    (void)state;
    tg_buf_t out;
    tg_buf_init(&out, 0);
    long skip = 0;
    assert_int_equal(format(&out, 7, &(tg_run_logs_fmt_t){0}, &skip), 3);
    assert_string_equal(out.data, "one\ntwo\r\nthree\n");
    tg_buf_reset(&out);
    skip = 1;
    assert_int_equal(format(&out, 7, &(tg_run_logs_fmt_t){.sse = 1, .prefix = 1}, &skip), 2);
    assert_int_equal(skip, 0);
    assert_string_equal(out.data, "id: 7\ndata: [p/main] two \ndata: [p/main] three\n\n");
    tg_buf_reset(&out);
    tg_run_logs_fmt_t since = {.timestamps = 1, .has_since = 1, .since_ns = NS0 + 200000000};
    assert_int_equal(format(&out, 8, &since, NULL), 2);
    assert_string_equal(out.data, T0 ".2Z two\r\n" T0 ".3Z three\n");
    tg_buf_reset(&out);
    skip = 5; /* everything dropped: an SSE chunk leaves nothing behind */
    assert_int_equal(format(&out, 9, &(tg_run_logs_fmt_t){.sse = 1}, &skip), 0);
    assert_int_equal(out.len, 0);
    assert_int_equal(skip, 2);
    tg_buf_clean(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_plain_sse_and_filters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
