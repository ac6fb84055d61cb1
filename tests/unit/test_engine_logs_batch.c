/* Unit tests: kubelet timestamps, the resume/skip rule, chunk batching
 * (engine/logs_batch.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/logs_batch.h"

#define T0  "2026-01-02T03:04:05"
#define NS0 1767323045000000000LL /* T0 as ns since the epoch */

static void test_timestamps_parse(void **state)
{
    (void)state;
    int64_t ns = 0;
    const char *s = T0 ".123456789Z rest";
    assert_int_equal(tg_logs_ts_parse(s, strlen(s), &ns), 30);
    assert_int_equal(ns, NS0 + 123456789);
    s = T0 "Z";
    assert_int_equal(tg_logs_ts_parse(s, strlen(s), &ns), 20);
    assert_int_equal(ns, NS0);
    s = T0 ".5Z"; /* kubelets trim trailing zeros */
    assert_int_equal(tg_logs_ts_parse(s, strlen(s), &ns), 22);
    assert_int_equal(ns, NS0 + 500000000);
    s = T0 ".5+02:00";
    assert_int_equal(tg_logs_ts_parse(s, strlen(s), &ns), 27);
    assert_int_equal(ns, NS0 + 500000000 - 7200LL * 1000000000);
    s = "1970-01-01T00:00:00Z";
    assert_int_equal(tg_logs_ts_parse(s, strlen(s), &ns), 20);
    assert_int_equal(ns, 0);
    s = "2999-01-01T00:00:00Z"; /* past int64 nanoseconds: saturates */
    assert_int_equal(tg_logs_ts_parse(s, strlen(s), &ns), 20);
    assert_true(ns == INT64_MAX);
    const char *bad[] = {
        "", "hello world", T0, T0 ".Z", "2026-13-02T03:04:05Z", "2026-01-02 03:04:05Z", T0 ".12x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(tg_logs_ts_parse(bad[i], strlen(bad[i]), &ns), 0);

    char out[48];
    tg_logs_ts_format_ns(NS0 + 42, out, sizeof(out));
    assert_string_equal(out, T0 ".000000042Z");
    tg_logs_ts_format_s(NS0 + 999999999, out, sizeof(out));
    assert_string_equal(out, T0 "Z"); /* rounded down for sinceTime */
}

static void test_line_split(void **state)
{
    (void)state;
    int64_t ns;
    const char *text;
    size_t tlen;
    const char *l = T0 ".1Z hello world";
    assert_int_equal(tg_logs_line_split(l, strlen(l), &ns, &text, &tlen), 1);
    assert_int_equal(tlen, 11);
    assert_memory_equal(text, "hello world", 11);
    l = T0 ".1Z";
    assert_int_equal(tg_logs_line_split(l, strlen(l), &ns, &text, &tlen), 1);
    assert_int_equal(tlen, 0);
    l = "no timestamp here";
    assert_int_equal(tg_logs_line_split(l, strlen(l), &ns, &text, &tlen), 0);
    assert_ptr_equal(text, l);
}

static void test_utf8_is_made_valid(void **state)
{
    (void)state;
    tg_buf_t b;
    tg_buf_init(&b, 16);
    const char in[] = "ok \xc3\xa9 \xff bad \xc0\xaf overlong \xed\xa0\x80 surrogate \x00 nul "
                      "\xf0\x9f\x98\x80";
    assert_int_equal(tg_logs_utf8_append(&b, in, sizeof(in) - 1), TG_ETOOLARGE);
    tg_buf_clean(&b);
    tg_buf_init(&b, 0);
    assert_int_equal(tg_logs_utf8_append(&b, in, sizeof(in) - 1), TG_OK);
    assert_string_equal(b.data, "ok \xc3\xa9 \xef\xbf\xbd bad \xef\xbf\xbd\xef\xbf\xbd overlong "
                                "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd surrogate \xef\xbf\xbd nul "
                                "\xf0\x9f\x98\x80");
    tg_buf_clean(&b);
}

/* Run lines through a resume filter; returns how many were kept and writes
 * the kept indexes to kept[]. */
static int run_filter(tg_logs_resume_t *r, const char *const *lines, int n, int *kept)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        int64_t ns = 0;
        const char *text;
        size_t tlen;
        int has = tg_logs_line_split(lines[i], strlen(lines[i]), &ns, &text, &tlen);
        if (tg_logs_resume_keep(r, has, ns))
            kept[k++] = i;
    }
    return k;
}

static void test_resume_skips_what_is_stored(void **state)
{
    (void)state;
    /* stored: ... a@.1, b@.2, c@.2  (the newest chunk ends with two lines at .2) */
    const char *older = T0 ".0Z x\n" T0 ".1Z a\n";
    const char *newest = T0 ".2Z b\n" T0 ".2Z c\n";
    const char *contents[] = {newest, older};
    size_t lens[] = {strlen(newest), strlen(older)};
    tg_logs_resume_t r;
    tg_logs_resume_from_content(&r, contents, lens, 2);
    assert_true(r.active);
    assert_int_equal(r.last_ns, NS0 + 200000000);
    assert_int_equal(r.equal, 2);

    /* the kubelet answers sinceTime=T0 (rounded down): everything again, plus
     * a third line at .2 and later ones */
    const char *again[] = {T0 ".0Z x", T0 ".1Z a", T0 ".2Z b", T0 ".2Z c",
                           T0 ".2Z d", T0 ".3Z e", "no-ts f"};
    int kept[8];
    int k = run_filter(&r, again, 7, kept);
    assert_int_equal(k, 3);
    assert_int_equal(kept[0], 4); /* d: same timestamp, but not stored yet */
    assert_int_equal(kept[1], 5);
    assert_int_equal(kept[2], 6); /* after the resume point, kept even without a timestamp */
}

static void test_resume_scans_back_across_equal_chunks(void **state)
{
    (void)state;
    const char *newest = T0 ".5Z c\n";
    const char *middle = T0 ".5Z a\n" T0 ".5Z b\n";
    const char *oldest = T0 ".4Z z\n" T0 ".5Z y\n";
    const char *contents[] = {newest, middle, oldest};
    size_t lens[] = {strlen(newest), strlen(middle), strlen(oldest)};
    tg_logs_resume_t r;
    tg_logs_resume_from_content(&r, contents, lens, 3);
    assert_int_equal(r.equal, 4); /* y, a, b, c */
    const char *again[] = {T0 ".4Z z", T0 ".5Z y", T0 ".5Z a",
                           T0 ".5Z b", T0 ".5Z c", T0 ".6Z new"};
    int kept[8];
    assert_int_equal(run_filter(&r, again, 6, kept), 1);
    assert_int_equal(kept[0], 5);
}

static void test_resume_without_history_keeps_all(void **state)
{
    (void)state;
    tg_logs_resume_t r;
    tg_logs_resume_from_content(&r, NULL, NULL, 0);
    assert_false(r.active);
    const char *lines[] = {"no ts", T0 ".1Z a"};
    int kept[4];
    assert_int_equal(run_filter(&r, lines, 2, kept), 2);
    /* stored content without any timestamp: no resume point either */
    const char *c[] = {"plain\nlines\n"};
    size_t l[] = {strlen(c[0])};
    tg_logs_resume_from_content(&r, c, l, 1);
    assert_false(r.active);
    /* explicit point: lines before it, and unparseable ones, are dropped */
    tg_logs_resume_at(&r, NS0, 0);
    const char *more[] = {"no ts", T0 "Z at-T-but-k=0", T0 ".1Z later"};
    assert_int_equal(run_filter(&r, more, 3, kept), 2);
    assert_int_equal(kept[0], 1);
}

static void test_batch_fills_and_flushes(void **state)
{
    (void)state;
    tg_logs_batch_t b;
    tg_logs_batch_init(&b, 100, 64);
    assert_false(tg_logs_batch_due(&b, 1000, 10));
    const char *l1 = T0 ".1Z first";
    assert_int_equal(tg_logs_batch_add(&b, l1, strlen(l1), 1000), TG_OK);
    assert_int_equal(b.lines, 1);
    assert_true(b.has_ts);
    assert_int_equal(b.first_ns, NS0 + 100000000);
    assert_false(tg_logs_batch_due(&b, 1500, 1000));
    assert_true(tg_logs_batch_due(&b, 2000, 1000)); /* old enough */
    const char *l2 = T0 ".2Z TAU_METRIC {\"_step\": 1, \"loss\": 0.5, \"bad\": \"x\"}";
    assert_int_equal(tg_logs_batch_add(&b, l2, strlen(l2), 1100), TG_OK);
    assert_int_equal(json_array_size(b.metrics), 1);
    json_t *m = json_array_get(b.metrics, 0);
    assert_string_equal(json_string_value(json_object_get(m, "name")), "loss");
    assert_int_equal(json_integer_value(json_object_get(m, "step")), 1);
    assert_string_equal(json_string_value(json_object_get(m, "at")), T0 ".200000Z");
    const char *l3 = T0 ".3Z TAU_CHECKPOINT {\"path\": \"/data/c1\"}";
    assert_int_equal(tg_logs_batch_add(&b, l3, strlen(l3), 1200), TG_OK);
    assert_int_equal(json_array_size(b.checkpoints), 1);
    assert_int_equal(b.last_ns, NS0 + 300000000);
    assert_true(b.content.len >= 100);
    assert_true(tg_logs_batch_due(&b, 1200, 1000000)); /* full */
    assert_string_equal(b.content.data,
                        T0 ".1Z first\n" T0
                           ".2Z TAU_METRIC {\"_step\": 1, \"loss\": 0.5, \"bad\": \"x\"}\n" T0
                           ".3Z TAU_CHECKPOINT {\"path\": \"/data/c1\"}\n");
    const char *bad = T0 ".4Z TAU_METRIC {oops}";
    assert_int_equal(tg_logs_batch_add(&b, bad, strlen(bad), 1300), TG_OK);
    assert_int_equal(b.invalid_markers, 1);

    /* the hard ceiling: max_bytes + 3 * max_line + slack */
    char big[200];
    memset(big, 'x', sizeof(big));
    size_t n = 0;
    while (tg_logs_batch_add(&b, big, sizeof(big), 1400) == TG_OK)
        n++;
    assert_true(b.content.len <= 100 + 3 * 64 + 256);
    assert_int_equal(b.content.data[b.content.len - 1], '\n'); /* no partial line kept */
    tg_logs_batch_reset(&b);
    assert_int_equal(b.lines, 0);
    assert_int_equal(b.content.len, 0);
    assert_int_equal(json_array_size(b.metrics), 0);
    assert_false(b.has_ts);
    assert_false(tg_logs_batch_due(&b, 99999999, 1));
    tg_logs_batch_clean(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timestamps_parse),
        cmocka_unit_test(test_line_split),
        cmocka_unit_test(test_utf8_is_made_valid),
        cmocka_unit_test(test_resume_skips_what_is_stored),
        cmocka_unit_test(test_resume_scans_back_across_equal_chunks),
        cmocka_unit_test(test_resume_without_history_keeps_all),
        cmocka_unit_test(test_batch_fills_and_flushes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
