/* Unit tests: core/config: defaults, environment and flags, and out-of-range values named by key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/config.h"

static void test_config_defaults_env_and_flags(void **state)
{
    (void)state;
    tg_config_t cfg;
    char err[256];
    int rest[4];
    char *argv[] = {"taugate", "serve", "--threads=8", "--log-level", "debug", "extra", NULL};
    tg_config_argv_t args = {.argc = 6, .argv = argv, .first = 2, .rest = rest, .restcap = 4};
    setenv("TAUGATE_DB_POOL_SIZE", "3", 1);
    setenv("TAUGATE_THREADS", "2", 1);
    assert_int_equal(tg_config_load(&cfg, &args, err, sizeof(err)), 0);
    assert_int_equal(cfg.threads, 8); /* flag beats env */
    assert_int_equal(cfg.db_pool_size, 3);
    assert_string_equal(cfg.log_level, "debug");
    assert_int_equal(cfg.port, 8080);
    assert_int_equal(args.nrest, 1);
    assert_int_equal(rest[0], 5);
    tg_config_clean(&cfg);
    unsetenv("TAUGATE_DB_POOL_SIZE");
    unsetenv("TAUGATE_THREADS");
}

static void test_config_rejects_out_of_range_naming_the_key(void **state)
{
    (void)state;
    tg_config_t cfg;
    char err[256];
    int rest[4];
    char *argv[] = {"taugate", "--port=70000", NULL};
    assert_int_equal(
        tg_config_load(
            &cfg,
            &(tg_config_argv_t){.argc = 2, .argv = argv, .first = 1, .rest = rest, .restcap = 4},
            err, sizeof(err)),
        -1);
    assert_non_null(strstr(err, "port"));
    assert_non_null(strstr(err, "[0, 65535]"));
    tg_config_clean(&cfg);

    char *argv2[] = {"taugate", "--access-log=maybe", NULL};
    assert_int_equal(
        tg_config_load(
            &cfg,
            &(tg_config_argv_t){.argc = 2, .argv = argv2, .first = 1, .rest = rest, .restcap = 4},
            err, sizeof(err)),
        -1);
    assert_non_null(strstr(err, "access_log"));
    tg_config_clean(&cfg);

    setenv("TAUGATE_MAX_BODY_BYTES", "12abc", 1);
    char *argv3[] = {"taugate", NULL};
    assert_int_equal(
        tg_config_load(
            &cfg,
            &(tg_config_argv_t){.argc = 1, .argv = argv3, .first = 1, .rest = rest, .restcap = 4},
            err, sizeof(err)),
        -1);
    assert_non_null(strstr(err, "TAUGATE_MAX_BODY_BYTES"));
    unsetenv("TAUGATE_MAX_BODY_BYTES");
    tg_config_clean(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_defaults_env_and_flags),
        cmocka_unit_test(test_config_rejects_out_of_range_naming_the_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
