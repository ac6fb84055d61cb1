/* Unit tests: the run states' one list agrees with the database's CHECK on
 * runs.state, and the final-state test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/run_state.h"

/* The CHECK constraint of runs.state in migration 0001, from `state IN (`
 * to its closing parenthesis. */
static void read_check(char *out, size_t outlen)
{
    FILE *f = fopen("migrations/0001_init.sql", "r");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *start = strstr(text, "CHECK (state IN (");
    assert_non_null(start);
    const char *end = strchr(start, ')');
    assert_non_null(end);
    assert_true((size_t)(end - start) < outlen);
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
}

static void test_the_list_is_the_databases_in_order(void **state)
{
    (void)state;
    char check[1024];
    read_check(check, sizeof(check));
    const char *at = check;
    size_t n = 0;
    for (const char *const *s = tg_run_states; *s; s++, n++) {
        char quoted[64];
        snprintf(quoted, sizeof(quoted), "'%s'", *s);
        const char *found = strstr(at, quoted);
        assert_non_null(found); /* present, and after the one before it */
        at = found + strlen(quoted);
    }
    assert_int_equal(n, TG_RUN_STATE_COUNT);
    assert_null(strchr(at, '\'')); /* the CHECK names no state the list lacks */
}

static void test_only_succeeded_failed_and_cancelled_are_final(void **state)
{
    (void)state;
    size_t ended = 0;
    for (const char *const *s = tg_run_states; *s; s++)
        ended += (size_t)tg_run_state_ended(*s);
    assert_int_equal(ended, 3);
    assert_true(tg_run_state_ended("Succeeded"));
    assert_true(tg_run_state_ended("Failed"));
    assert_true(tg_run_state_ended("Cancelled"));
    assert_false(tg_run_state_ended("Recovering"));
    assert_false(tg_run_state_ended("Running"));
    assert_false(tg_run_state_ended("succeeded"));
    assert_false(tg_run_state_ended(""));
    assert_false(tg_run_state_ended(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_list_is_the_databases_in_order),
        cmocka_unit_test(test_only_succeeded_failed_and_cancelled_are_final),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
