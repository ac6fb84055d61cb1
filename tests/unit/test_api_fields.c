/* Unit tests: api/fields: request field checks collect every problem. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "api/fields.h"

static void test_field_checks_collect_everything(void **state)
{
    (void)state;
    static const char *const engines[] = {"job", "rayjob", NULL};
    const tg_field_t fields[] = {
        {"name", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_LABEL, NULL},
        {"engine", TG_F_STRING, 1, 0, 0, 0, TG_FP_NONE, engines},
        {"count", TG_F_INT, 0, 0, 1, 10, TG_FP_NONE, NULL},
    };
    json_t *body = json_pack("{s:s, s:s, s:i, s:b}", "name", "-bad", "engine", "spark", "count", 11,
                             "extra", 1);
    json_t *errors = json_array();
    assert_int_equal(tg_fields_check(body, fields, 3, 0, errors), 4);
    assert_int_equal(json_array_size(errors), 4);
    json_decref(errors);
    json_decref(body);
    assert_true(tg_fields_dns_ok("a-b.c", 1));
    assert_false(tg_fields_dns_ok("a..b", 1));
    assert_false(tg_fields_dns_ok("a.b", 0));
    assert_false(tg_fields_dns_ok("ab-", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_checks_collect_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
