/* Unit tests: core/buf: appends bounded by the buffer's ceiling, and cuts that are meant. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/buf.h"
#include "core/status.h"

static void test_buf_respects_its_ceiling(void **state)
{
    (void)state;
    tg_buf_t b;
    tg_buf_init(&b, 8);
    assert_int_equal(tg_buf_puts(&b, "12345"), TG_OK);
    assert_int_equal(b.overflowed, 0);
    assert_int_equal(tg_buf_puts(&b, "6789"), TG_ETOOLARGE);
    assert_string_equal(b.data, "12345"); /* unchanged by the failed append */
    assert_int_equal(b.overflowed, 1);    /* and the failure is remembered */
    assert_int_equal(tg_buf_printf(&b, "%d", 678), TG_OK);
    assert_int_equal(b.len, 8);
    assert_int_equal(tg_buf_printf(&b, "x"), TG_ETOOLARGE);
    size_t len = 0;
    char *s = tg_buf_steal(&b, &len);
    assert_string_equal(s, "12345678");
    assert_int_equal(len, 8);
    assert_null(b.data);
    free(s);
    tg_buf_clean(&b);
}

static void test_buf_cut_text_stops_at_the_ceiling(void **state)
{
    (void)state;
    tg_buf_t b;
    tg_buf_init(&b, 8);
    tg_buf_printf_cut(&b, "%s", "1234");
    tg_buf_printf_cut(&b, "%s-%d", "abc", 12345); /* only "abc-" fits */
    assert_string_equal(b.data, "1234abc-");
    tg_buf_printf_cut(&b, "more");
    assert_string_equal(b.data, "1234abc-");
    assert_int_equal(b.overflowed, 0); /* a cut is the intent, not a failure */
    assert_int_equal(tg_buf_puts(&b, "x"), TG_ETOOLARGE);
    assert_int_equal(b.overflowed, 1);
    tg_buf_reset(&b);
    assert_int_equal(b.overflowed, 0);
    tg_buf_clean(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_respects_its_ceiling),
        cmocka_unit_test(test_buf_cut_text_stops_at_the_ceiling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
