/* tauyaml/units: Go durations, container paths, names and labels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tauyaml/units.h"

static void test_units(void **state)
{
    (void)state;
    int64_t ns;
    assert_int_equal(tg_tauyaml_duration_parse("1h30m", &ns), 0);
    assert_true(ns == 5400LL * 1000000000LL);
    assert_int_equal(tg_tauyaml_duration_parse("1.5s", &ns), 0);
    assert_int_equal(tg_tauyaml_duration_parse("300ms", &ns), 0);
    assert_int_equal(tg_tauyaml_duration_parse("5", &ns), -1);
    assert_int_equal(tg_tauyaml_duration_parse("0", &ns), 0);
    assert_true(tg_tauyaml_path_clean_abs("/data/x"));
    assert_false(tg_tauyaml_path_clean_abs("/data/../x"));
    assert_false(tg_tauyaml_path_clean_abs("/data/"));
    assert_true(tg_tauyaml_path_rel_stays_inside("a/../b"));
    assert_false(tg_tauyaml_path_rel_stays_inside("a/../../b"));
    assert_true(tg_tauyaml_label_key("tau.azure.com/gpu-class"));
    assert_false(tg_tauyaml_label_key("-bad"));
    assert_true(tg_tauyaml_dns_label("a-b", 63));
    assert_false(tg_tauyaml_dns_label("a-", 63));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
