/* Unit tests: core/status: every status code maps to its HTTP status and slug in one table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/status.h"

static void test_status_maps_to_http_in_one_place(void **state)
{
    (void)state;
    assert_int_equal(tg_rc_http_status(TG_OK), 200);
    assert_int_equal(tg_rc_http_status(TG_EUNPROCESSABLE), 422);
    assert_int_equal(tg_rc_http_status(TG_ENOTFOUND), 404);
    assert_int_equal(tg_rc_http_status(TG_EUNAVAILABLE), 503);
    assert_int_equal(tg_rc_http_status((tg_rc_e)999), 500);
    assert_string_equal(tg_rc_slug(TG_ECONFLICT), "conflict");
    for (int rc = 0; rc < TG_RC_COUNT; rc++) {
        assert_non_null(tg_rc_slug((tg_rc_e)rc));
        assert_true(tg_rc_http_status((tg_rc_e)rc) >= 200);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_maps_to_http_in_one_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
