/* auth/list: the configured comma-separated lists (audiences, groups). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "auth/list.h"

static void test_lists(void **state)
{
    (void)state;
    tg_auth_list_t l;
    tg_auth_list_parse(&l, " a ,b,,\tc\t, ");
    assert_int_equal(l.n, 3);
    assert_string_equal(l.v[0], "a");
    assert_string_equal(l.v[2], "c");
    assert_true(tg_auth_list_has(&l, "b"));
    assert_false(tg_auth_list_has(&l, "B"));
    assert_false(tg_auth_list_has(&l, NULL));
    tg_auth_list_clean(&l);
    tg_auth_list_parse(&l, NULL);
    assert_int_equal(l.n, 0);
    tg_auth_list_clean(&l);
    tg_auth_list_parse(&l, "");
    assert_int_equal(l.n, 0);
    tg_auth_list_clean(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
