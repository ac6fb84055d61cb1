/* Unit tests: TAU_METRIC / TAU_CHECKPOINT marker lines (engine/markers.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/markers.h"

#define LINE_AT 1767225600000000LL /* 2026-01-01T00:00:00Z in µs */

static tg_marker_kind_e parse(const char *s, tg_marker_t *m)
{
    return tg_marker_parse(s, strlen(s), LINE_AT, m);
}

static const tg_marker_field_t *field(const tg_marker_t *m, const char *name)
{
    for (size_t i = 0; i < m->nfields; i++)
        if (!strcmp(m->fields[i].name, name))
            return &m->fields[i];
    return NULL;
}

static void test_plain_lines_are_not_markers(void **state)
{
    (void)state;
    tg_marker_t m;
    const char *lines[] = {"",
                           "epoch 1 loss 0.3",
                           "TAU_METRIC",                /* no payload */
                           "TAU_METRICS {\"a\":1}",     /* another word */
                           "tau_metric {\"a\":1}",      /* case matters */
                           "echo TAU_METRIC {\"a\":1}", /* not at the start */
                           "TAU_METRIC{\"a\":1}"};      /* needs a blank */
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        assert_int_equal(parse(lines[i], &m), TG_MARKER_NONE);
        tg_marker_clean(&m);
    }
}

static void test_metric_with_step_and_default_time(void **state)
{
    (void)state;
    tg_marker_t m;
    assert_int_equal(parse("TAU_METRIC {\"_step\": 7, \"loss\": 0.25, \"acc\": 1}", &m),
                     TG_MARKER_METRIC);
    assert_true(m.has_step);
    assert_int_equal(m.step, 7);
    assert_int_equal(m.at_us, LINE_AT);
    assert_int_equal(m.nfields, 2);
    assert_true(field(&m, "loss")->finite);
    assert_true(field(&m, "loss")->value == 0.25);
    assert_true(field(&m, "acc")->value == 1.0);
    assert_null(field(&m, "acc")->raw);
    tg_marker_clean(&m);
}

static void test_metric_alternate_word_prefixes_and_blanks(void **state)
{
    (void)state;
    tg_marker_t m;
    assert_int_equal(parse("##tau-metric {\"x\": -3e2}", &m), TG_MARKER_METRIC);
    assert_true(field(&m, "x")->value == -300.0);
    assert_false(m.has_step);
    tg_marker_clean(&m);
    assert_int_equal(parse("  \tTAU_METRIC\t {\"x\": 1}  ", &m), TG_MARKER_METRIC);
    tg_marker_clean(&m);
    /* Ray's origin prefix on forwarded worker output */
    assert_int_equal(parse("(RayTrainWorker pid=12, ip=10.0.0.1) TAU_METRIC {\"x\": 2}", &m),
                     TG_MARKER_METRIC);
    assert_true(field(&m, "x")->value == 2.0);
    tg_marker_clean(&m);
    /* one prefix only, and it must close */
    assert_int_equal(parse("(a) (b) TAU_METRIC {\"x\": 2}", &m), TG_MARKER_NONE);
    tg_marker_clean(&m);
    assert_int_equal(parse("(unclosed TAU_METRIC {\"x\": 2}", &m), TG_MARKER_NONE);
    tg_marker_clean(&m);
}

static void test_timestamp_rules(void **state)
{
    (void)state;
    tg_marker_t m;
    assert_int_equal(parse("TAU_METRIC {\"_timestamp\": 1700000000.5, \"x\": 1}", &m),
                     TG_MARKER_METRIC);
    assert_int_equal(m.at_us, 1700000000500000LL);
    tg_marker_clean(&m);
    assert_int_equal(parse("TAU_METRIC {\"_timestamp\": 1700000000, \"x\": 1}", &m),
                     TG_MARKER_METRIC);
    assert_int_equal(m.at_us, 1700000000000000LL);
    tg_marker_clean(&m);
    const char *bad[] = {
        "TAU_METRIC {\"_timestamp\": 0, \"x\": 1}",
        "TAU_METRIC {\"_timestamp\": -5, \"x\": 1}",
        "TAU_METRIC {\"_timestamp\": \"1700000000\", \"x\": 1}",
        "TAU_METRIC {\"_timestamp\": \"NaN\", \"x\": 1}",
        "TAU_METRIC {\"_timestamp\": NaN, \"x\": 1}",
        "TAU_METRIC {\"_timestamp\": 1e20, \"x\": 1}",
        "TAU_METRIC {\"_timestamp\": null, \"x\": 1}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(bad[i], &m), TG_MARKER_INVALID);
        assert_non_null(m.error);
        assert_int_equal(m.nfields, 0);
        tg_marker_clean(&m);
    }
}

static void test_step_rules(void **state)
{
    (void)state;
    tg_marker_t m;
    assert_int_equal(parse("TAU_METRIC {\"_step\": 0, \"x\": 1}", &m), TG_MARKER_METRIC);
    assert_true(m.has_step);
    assert_int_equal(m.step, 0);
    tg_marker_clean(&m);
    assert_int_equal(parse("TAU_METRIC {\"_step\": 9007199254740993, \"x\": 1}", &m),
                     TG_MARKER_METRIC);
    assert_int_equal(m.step, 9007199254740993LL);
    tg_marker_clean(&m);
    const char *bad[] = {
        "TAU_METRIC {\"_step\": 1.0, \"x\": 1}",  "TAU_METRIC {\"_step\": 1.5, \"x\": 1}",
        "TAU_METRIC {\"_step\": -1, \"x\": 1}",   "TAU_METRIC {\"_step\": \"3\", \"x\": 1}",
        "TAU_METRIC {\"_step\": true, \"x\": 1}", "TAU_METRIC {\"_step\": null, \"x\": 1}",
        "TAU_METRIC {\"_step\": 1e3, \"x\": 1}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(bad[i], &m), TG_MARKER_INVALID);
        tg_marker_clean(&m);
    }
}

static void test_non_finite_values(void **state)
{
    (void)state;
    tg_marker_t m;
    assert_int_equal(parse("TAU_METRIC {\"a\": \"NaN\", \"b\": \"Infinity\", \"c\": \"-Infinity\","
                           " \"d\": \"inf\", \"e\": \"nan\", \"f\": \"-INF\", \"g\": 2}",
                           &m),
                     TG_MARKER_METRIC);
    assert_int_equal(m.nfields, 7);
    assert_false(field(&m, "a")->finite);
    assert_string_equal(field(&m, "a")->raw, "NaN");
    assert_true(isnan(field(&m, "a")->value));
    assert_string_equal(field(&m, "b")->raw, "Infinity");
    assert_true(isinf(field(&m, "b")->value) && field(&m, "b")->value > 0);
    assert_true(isinf(field(&m, "c")->value) && field(&m, "c")->value < 0);
    assert_string_equal(field(&m, "d")->raw, "inf");
    assert_string_equal(field(&m, "e")->raw, "nan");
    assert_string_equal(field(&m, "f")->raw, "-INF");
    assert_true(field(&m, "g")->finite);
    tg_marker_clean(&m);
    /* Python's json.dumps writes bare NaN / Infinity: accepted as well */
    assert_int_equal(parse("TAU_METRIC {\"loss\": NaN, \"gn\": Infinity, \"lo\": -Infinity, "
                           "\"s\": \"keep NaN here\", \"_step\": 3}",
                           &m),
                     TG_MARKER_METRIC);
    assert_int_equal(m.nfields, 3);
    assert_string_equal(field(&m, "loss")->raw, "NaN");
    assert_string_equal(field(&m, "lo")->raw, "-Infinity");
    assert_int_equal(m.skipped, 1); /* "s": a string that is not a non-finite spelling */
    tg_marker_clean(&m);
    double v;
    assert_true(tg_marker_nonfinite("+Infinity", 9, &v) && v > 0);
    assert_false(tg_marker_nonfinite("infin", 5, &v));
    assert_false(tg_marker_nonfinite("1.0", 3, &v));
}

static void test_non_numeric_fields_are_skipped(void **state)
{
    (void)state;
    tg_marker_t m;
    assert_int_equal(parse("TAU_METRIC {\"x\": 1, \"tag\": \"a\", \"ok\": true, \"n\": null,"
                           " \"arr\": [1], \"obj\": {\"y\": 1}, \"_runtime\": 5, \"\": 3}",
                           &m),
                     TG_MARKER_METRIC);
    assert_int_equal(m.nfields, 1);
    assert_int_equal(m.skipped, 6); /* _runtime is reserved, not skipped */
    tg_marker_clean(&m);
    assert_int_equal(parse("TAU_METRIC {\"tag\": \"a\", \"_step\": 1}", &m), TG_MARKER_INVALID);
    assert_string_equal(m.error, "no numeric metric fields");
    tg_marker_clean(&m);
    assert_int_equal(parse("TAU_METRIC {}", &m), TG_MARKER_INVALID);
    tg_marker_clean(&m);
    /* a name with a control character is skipped */
    assert_int_equal(parse("TAU_METRIC {\"a\\tb\": 1, \"c\": 2}", &m), TG_MARKER_METRIC);
    assert_int_equal(m.nfields, 1);
    tg_marker_clean(&m);
}

static void test_bad_json(void **state)
{
    (void)state;
    tg_marker_t m;
    const char *bad[] = {
        "TAU_METRIC {\"x\": 1",            /* unterminated */
        "TAU_METRIC {\"x\": 1} trailing",  /* garbage after the object */
        "TAU_METRIC [1, 2]",               /* not an object */
        "TAU_METRIC 42",                   /* not an object */
        "TAU_METRIC {\"x\": 1, \"x\": 2}", /* duplicate key */
        "TAU_METRIC {x: 1}",               /* not JSON */
        "TAU_METRIC {\"x\": 1e999}",       /* overflow */
        "TAU_CHECKPOINT {\"path\": ",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(bad[i], &m), TG_MARKER_INVALID);
        assert_non_null(m.error);
        tg_marker_clean(&m);
    }
}

static void test_too_many_fields(void **state)
{
    (void)state;
    char buf[20000];
    size_t n = 0;
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "TAU_METRIC {");
    for (int i = 0; i < TG_MARKER_FIELDS_MAX + 10; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s\"m%d\": %d", i ? ", " : "", i, i);
    snprintf(buf + n, sizeof(buf) - n, "}");
    tg_marker_t m;
    assert_int_equal(parse(buf, &m), TG_MARKER_METRIC);
    assert_int_equal(m.nfields, TG_MARKER_FIELDS_MAX);
    assert_int_equal(m.skipped, 10);
    tg_marker_clean(&m);
}

static void test_checkpoints(void **state)
{
    (void)state;
    tg_marker_t m;
    assert_int_equal(parse("TAU_CHECKPOINT {\"path\": \"/data/ckpt/step-100\", \"step\": 100}", &m),
                     TG_MARKER_CHECKPOINT);
    assert_string_equal(m.path, "/data/ckpt/step-100");
    assert_true(m.has_step);
    assert_int_equal(m.step, 100);
    assert_int_equal(m.at_us, LINE_AT);
    tg_marker_clean(&m);
    assert_int_equal(parse("##tau-checkpoint {\"path\": \"s3://b/k\", \"extra\": 1}", &m),
                     TG_MARKER_CHECKPOINT);
    assert_false(m.has_step);
    tg_marker_clean(&m);
    const char *bad[] = {
        "TAU_CHECKPOINT {\"step\": 1}",
        "TAU_CHECKPOINT {\"path\": \"\"}",
        "TAU_CHECKPOINT {\"path\": 5}",
        "TAU_CHECKPOINT {\"path\": \"a\\nb\"}",
        "TAU_CHECKPOINT {\"path\": \"/x\", \"step\": -2}",
        "TAU_CHECKPOINT {\"path\": \"/x\", \"step\": 2.5}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(parse(bad[i], &m), TG_MARKER_INVALID);
        assert_null(m.path);
        tg_marker_clean(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_lines_are_not_markers),
        cmocka_unit_test(test_metric_with_step_and_default_time),
        cmocka_unit_test(test_metric_alternate_word_prefixes_and_blanks),
        cmocka_unit_test(test_timestamp_rules),
        cmocka_unit_test(test_step_rules),
        cmocka_unit_test(test_non_finite_values),
        cmocka_unit_test(test_non_numeric_fields_are_skipped),
        cmocka_unit_test(test_bad_json),
        cmocka_unit_test(test_too_many_fields),
        cmocka_unit_test(test_checkpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
