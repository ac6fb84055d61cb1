/* Unit tests: masked JSON decoding (kube/json_mask.h) against jansson's
 * whole parse followed by tg_kube_project, on valid and invalid text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/cache.h"
#include "kube/json_mask.h"

/* A Pod as an API server sends it: managedFields, escapes, numbers of every
 * shape, empty containers, a key that needs unescaping. */
static const char pod[] =
    "{ \"apiVersion\":\"v1\",\"kind\":\"Pod\",\n"
    " \"metadata\":{\"name\":\"r-1-0\",\"namespace\":\"ws\",\"uid\":\"u1\","
    "\"resourceVersion\":\"42\",\"creationTimestamp\":\"2026-01-02T03:04:05Z\","
    "\"labels\":{\"taugate.io/run-id\":\"r-1\",\"x\\u002fy\":\"esc\\\"aped\",\"e\":\"\"},"
    "\"managedFields\":[{\"manager\":\"kubelet\",\"time\":\"2026-01-02T03:04:06Z\","
    "\"fieldsV1\":{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"Ready\\\"}\":{}}}}},"
    "{\"manager\":\"kueue\",\"time\":\"2026-01-02T03:04:07Z\",\"fieldsV1\":{}}],"
    "\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"r-1\",\"controller\":true}]},"
    " \"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"main\",\"resources\":{\"limits\":"
    "{\"nvidia.com/gpu\":\"2\"}},\"args\":[-1,0,0.5,1e3,-2.5E-7,true,false,null,[],{}]},"
    "{\"name\":\"side\"}],\"initContainers\":[]},\r\n"
    " \"status\":{\"phase\":\"Succeeded\",\"startTime\":\"2026-01-02T03:04:08Z\","
    "\"message\":\"caf\\u00e9 \\ud83d\\ude00 \\\\ \\/ \\b\\f\\n\\r\\t\","
    "\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":{\"exitCode\":0,"
    "\"reason\":\"Completed\",\"finishedAt\":\"2026-01-02T03:04:09Z\"}}}]} }\n";

static const char *const masks[] = {
    "true",
    "{}",
    "{\"metadata\":{\"name\":true,\"namespace\":true,\"uid\":true,\"resourceVersion\":true}}",
    "{\"metadata\":{\"labels\":{\"taugate.io/run-id\":true,\"x/y\":true,\"none\":true},"
    "\"ownerReferences\":[{\"name\":true,\"kind\":true}],\"managedFields\":[{\"time\":true}]},"
    "\"spec\":{\"nodeName\":true,\"containers\":[{\"name\":true,\"resources\":true}],"
    "\"initContainers\":[{\"resources\":true}]},"
    "\"status\":{\"phase\":true,\"message\":true,\"containerStatuses\":[{\"name\":true,"
    "\"state\":{\"terminated\":{\"exitCode\":true,\"finishedAt\":true}}}]}}",
    /* masks whose shape the object does not have keep nothing there */
    "{\"metadata\":[{\"name\":true}],\"spec\":{\"nodeName\":{\"x\":true}},\"kind\":[true]}",
    "[true]",
};

static void test_masked_equals_whole_parse_then_project(void **state)
{
    (void)state;
    json_t *whole = json_loads(pod, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(whole);
    for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
        json_t *mask = json_loads(masks[i], JSON_DECODE_ANY, NULL);
        assert_non_null(mask);
        json_t *want = tg_kube_project(whole, mask);
        json_error_t err;
        json_t *got = tg_kube_json_load_masked(pod, strlen(pod), mask, &err);
        if (!want) {
            assert_null(got);
            assert_string_equal(err.text, ""); /* not a fault: nothing kept */
        } else {
            assert_non_null(got);
            if (!json_equal(want, got)) {
                char *a = json_dumps(want, JSON_SORT_KEYS), *b = json_dumps(got, JSON_SORT_KEYS);
                fail_msg("mask %s:\nwant %s\ngot  %s", masks[i], a, b);
            }
        }
        json_decref(got);
        json_decref(want);
        json_decref(mask);
    }
    json_decref(whole);
}

static void test_invalid_text_rejected_where_skipped_too(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "{",
        "{\"a\":1",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{\"skip\":[1 2]}",
        "{\"skip\":[1,]}",
        "{\"skip\":{\"x\":}}",
        "{\"skip\":\"unterminated}",
        "{\"skip\":\"bad \\x escape\"}",
        "{\"skip\":\"bad \\u12 escape\"}",
        "{\"skip\":\"raw \n newline\"}",
        "{\"skip\":01}",
        "{\"skip\":1.}",
        "{\"skip\":-}",
        "{\"skip\":1e}",
        "{\"skip\":tru}",
        "{\"skip\":nul}",
        "{\"skip\":[}",
        "{\"skip\":{]}",
        "{\"keep\":1} x",
        "{\"keep\":1}{}",
        "{\"keep\":1,\"keep\":2}",
        "{\"keep\":\"\xff\"}", /* jansson checks UTF-8 in what is kept */
    };
    json_t *mask = json_loads("{\"keep\":true}", 0, NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_error_t err;
        json_t *got = tg_kube_json_load_masked(bad[i], strlen(bad[i]), mask, &err);
        if (got)
            fail_msg("accepted: %s", bad[i]);
        assert_true(err.text[0] != '\0');
        /* jansson agrees they are invalid */
        assert_null(json_loadb(bad[i], strlen(bad[i]), JSON_REJECT_DUPLICATES, NULL));
    }
    /* depth is bounded as jansson bounds it */
    size_t n = 3000;
    char *deep = malloc(2 * n + 16);
    memcpy(deep, "{\"skip\":", 8);
    memset(deep + 8, '[', n);
    memset(deep + 8 + n, ']', n);
    memcpy(deep + 8 + 2 * n, "}", 2);
    json_error_t err;
    assert_null(tg_kube_json_load_masked(deep, strlen(deep), mask, &err));
    assert_non_null(strstr(err.text, "deep"));
    free(deep);
    json_decref(mask);
}

static void test_mask_union(void **state)
{
    (void)state;
    json_t *a =
        json_loads("{\"m\":{\"name\":true},\"l\":[{\"x\":true}],\"s\":{\"p\":true}}", 0, NULL);
    json_t *b =
        json_loads("{\"m\":{\"uid\":true},\"l\":[{\"y\":true}],\"s\":true,\"t\":[true]}", 0, NULL);
    json_t *u = tg_kube_mask_union(a, b);
    json_t *want = json_loads("{\"m\":{\"name\":true,\"uid\":true},\"l\":[{\"x\":true,\"y\":true}],"
                              "\"s\":true,\"t\":[true]}",
                              0, NULL);
    assert_true(json_equal(u, want));
    json_t *same = tg_kube_mask_union(a, NULL);
    assert_ptr_equal(same, a);
    json_decref(same);
    assert_null(tg_kube_mask_union(NULL, NULL));
    json_decref(want);
    json_decref(u);
    json_decref(b);
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_masked_equals_whole_parse_then_project),
        cmocka_unit_test(test_invalid_text_rejected_where_skipped_too),
        cmocka_unit_test(test_mask_union),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
