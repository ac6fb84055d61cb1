/* Unit tests: core/ids: UUIDs, request-id validation and RFC 3339 timestamps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/ids.h"

static void test_ids(void **state)
{
    (void)state;
    char a[TG_UUID_LEN + 1], b[TG_UUID_LEN + 1];
    tg_uuid_v4(a);
    tg_uuid_v4(b);
    assert_int_equal(strlen(a), 36);
    assert_int_equal(a[14], '4');
    assert_string_not_equal(a, b);
    assert_true(tg_request_id_valid("abc-123:x.y_z"));
    assert_false(tg_request_id_valid(""));
    assert_false(tg_request_id_valid("a b"));
    assert_false(tg_request_id_valid("x\"y"));
    char ts[40];
    tg_time_rfc3339(1796208235123456LL, ts, sizeof(ts));
    assert_string_equal(ts, "2026-12-02T10:43:55.123456Z");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
