/* Unit tests: bounded buffers, metrics rendering into one, the arena, the config table, status
 * mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/ids.h"
#include "core/metrics.h"
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

/* A collector with more to say than the scrape buffer holds. */
static void big_collector(tg_buf_t *out, void *arg)
{
    const size_t *lines = arg;
    for (size_t i = 0; i < *lines; i++)
        if (tg_buf_printf(out, "test_big_series{i=\"%zu\"} 1\n", i) != TG_OK)
            return;
}

static void test_metrics_render_reports_a_collector_that_overflows(void **state)
{
    (void)state;
    size_t lines = 10;
    tg_metrics_register(big_collector, &lines);
    tg_buf_t out;
    tg_buf_init(&out, 64 * 1024);
    assert_int_equal(tg_metrics_render(&out), TG_OK);
    assert_non_null(strstr(out.data, "test_big_series{i=\"9\"} 1\n"));
    tg_buf_reset(&out);
    lines = 100000; /* ~3 MB: the collector's own appends fail, not core's */
    assert_int_equal(tg_metrics_render(&out), TG_ETOOLARGE);
    tg_metrics_unregister(big_collector, &lines);
    tg_buf_clean(&out);
}

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
        cmocka_unit_test(test_buf_respects_its_ceiling),
        cmocka_unit_test(test_buf_cut_text_stops_at_the_ceiling),
        cmocka_unit_test(test_metrics_render_reports_a_collector_that_overflows),
        cmocka_unit_test(test_arena_allocates_zeroed_aligned_and_runs_cleanups),
        cmocka_unit_test(test_config_defaults_env_and_flags),
        cmocka_unit_test(test_config_rejects_out_of_range_naming_the_key),
        cmocka_unit_test(test_status_maps_to_http_in_one_place),
        cmocka_unit_test(test_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
