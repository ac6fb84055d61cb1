/* Unit tests: core/arena: zeroed, aligned allocations and the cleanups run when it is freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/arena.h"

static int cleanup_calls;
static void count_cleanup(void *arg)
{
    cleanup_calls += *(int *)arg;
}

static void test_arena_allocates_zeroed_aligned_and_runs_cleanups(void **state)
{
    (void)state;
    tg_arena_t *a = tg_arena_new(64);
    for (int i = 0; i < 100; i++) {
        unsigned char *p = tg_arena_alloc(a, (size_t)i * 7 + 1);
        assert_int_equal((uintptr_t)p % 16, 0);
        for (int k = 0; k < i * 7 + 1; k++)
            assert_int_equal(p[k], 0);
        memset(p, 0xab, (size_t)i * 7 + 1);
    }
    char *big = tg_arena_alloc(a, 100000);
    memset(big, 1, 100000);
    assert_string_equal(tg_arena_printf(a, "%s-%d", "run", 7), "run-7");
    assert_string_equal(tg_arena_strndup(a, "abcdef", 3), "abc");
    static int one = 1, ten = 10;
    cleanup_calls = 0;
    tg_arena_on_free(a, count_cleanup, &one);
    tg_arena_on_free(a, count_cleanup, &ten);
    tg_arena_free(a);
    assert_int_equal(cleanup_calls, 11);
    tg_arena_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena_allocates_zeroed_aligned_and_runs_cleanups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
