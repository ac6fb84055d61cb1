/* Unit tests: the informer cache (kube/cache.h: projection, index,
 * acknowledgements, relist sweeps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "kube/cache.h"

static json_t *pod(const char *name, const char *uid, const char *rv, const char *run,
                   const char *phase)
{
    return json_pack("{s:{s:s, s:s, s:s, s:s, s:{s:s, s:s}}, s:{s:s, s:s}, s:{s:s}}", "metadata",
                     "name", name, "namespace", "ray", "uid", uid, "resourceVersion", rv, "labels",
                     "taugate.io/run-id", run, "other", "dropped", "spec", "nodeName", "n1",
                     "image", "dropped", "status", "phase", phase);
}

static int by_run(const json_t *obj, char *key, size_t len)
{
    const char *run = json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "labels"), "taugate.io/run-id"));
    return run && snprintf(key, len, "%s", run) < (int)len;
}

static tg_kube_cache_t *pod_cache(void)
{
    json_t *mask = json_loads("{\"metadata\":{\"name\":true,\"namespace\":true,\"uid\":true,"
                              "\"labels\":{\"taugate.io/run-id\":true}},"
                              "\"spec\":{\"nodeName\":true},\"status\":{\"phase\":true}}",
                              0, NULL);
    tg_kube_cache_t *c = tg_kube_cache_new(mask, by_run);
    json_decref(mask);
    return c;
}

static int put(tg_kube_cache_t *c, json_t *obj, unsigned gen)
{
    char *old = NULL;
    int r = tg_kube_cache_put(c, obj, gen, &old);
    free(old);
    json_decref(obj);
    return r;
}

static void test_project_keeps_only_the_mask(void **state)
{
    (void)state;
    json_t *obj = json_pack("{s:{s:s, s:i}, s:[{s:s, s:s}, {s:s}], s:s}", "a", "x", "keep", "drop",
                            1, "list", "k", "1", "z", "2", "k", "3", "gone", "g");
    json_t *mask =
        json_loads("{\"a\":{\"x\":true},\"list\":[{\"k\":true}],\"missing\":true}", 0, NULL);
    json_t *p = tg_kube_project(obj, mask);
    char *text = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(text, "{\"a\":{\"x\":\"keep\"},\"list\":[{\"k\":\"1\"},{\"k\":\"3\"}]}");
    free(text);
    json_decref(p);
    json_decref(mask);
    json_decref(obj);
}

static void test_cache_get_index_and_ack(void **state)
{
    (void)state;
    tg_kube_cache_t *c = pod_cache();
    assert_int_equal(put(c, pod("p1", "u1", "10", "run-a", "Pending"), 1), 1);
    assert_int_equal(put(c, pod("p2", "u2", "11", "run-a", "Pending"), 1), 1);
    assert_int_equal(put(c, pod("p3", "u3", "12", "run-b", "Running"), 1), 1);
    char rv[64];
    json_t *got = tg_kube_cache_get(c, "ray/p1", rv, sizeof(rv));
    assert_non_null(got);
    assert_string_equal(rv, "10");
    assert_null(json_object_get(json_object_get(got, "spec"), "image")); /* masked out */
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(got, "spec"), "nodeName")), "n1");
    json_decref(got);
    assert_null(tg_kube_cache_get(c, "ray/nope", NULL, 0));

    json_t *runa = tg_kube_cache_by_index(c, "run-a");
    assert_int_equal(json_array_size(runa), 2);
    json_decref(runa);
    /* nothing committed yet: every object of run-a is unsettled */
    assert_int_equal(tg_kube_cache_index_unacked(c, "run-a"), 2);
    assert_int_equal(tg_kube_cache_acked(c, "ray/p1"), 0);
    tg_kube_cache_ack(c, "ray/p1", "10");
    tg_kube_cache_ack(c, "ray/p2", "11");
    assert_int_equal(tg_kube_cache_acked(c, "ray/p1"), 1);
    assert_int_equal(tg_kube_cache_index_unacked(c, "run-a"), 0);
    assert_int_equal(tg_kube_cache_acked(c, "ray/nope"), -1);

    /* the same version again (a relist): no change, still acknowledged */
    assert_int_equal(put(c, pod("p1", "u1", "10", "run-a", "Pending"), 2), 0);
    assert_int_equal(tg_kube_cache_acked(c, "ray/p1"), 1);
    /* the same version with other contents (a restored API server that did
     * not bump it): a change all the same */
    assert_int_equal(put(c, pod("p1", "u1", "10", "run-a", "Failed"), 2), 1);
    assert_int_equal(tg_kube_cache_acked(c, "ray/p1"), 0); /* what "10" said was committed */
    got = tg_kube_cache_get(c, "ray/p1", NULL, 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(got, "status"), "phase")),
                        "Failed");
    json_decref(got);
    tg_kube_cache_ack(c, "ray/p1", "10");
    /* a new version with a change the mask keeps: not acknowledged */
    assert_int_equal(put(c, pod("p1", "u1", "13", "run-a", "Running"), 0), 1);
    assert_int_equal(tg_kube_cache_acked(c, "ray/p1"), 0);
    /* an acknowledgement of the older version does not cover it */
    tg_kube_cache_ack(c, "ray/p1", "10");
    assert_int_equal(tg_kube_cache_acked(c, "ray/p1"), 0);
    tg_kube_cache_ack(c, "ray/p1", "13");
    /* a new version that changes only what the mask drops: unchanged, and
     * acknowledged with the one before */
    json_t *churn = pod("p1", "u1", "14", "run-a", "Running");
    json_object_set_new(json_object_get(churn, "spec"), "image", json_string("other"));
    assert_int_equal(put(c, churn, 0), 0);
    assert_int_equal(tg_kube_cache_acked(c, "ray/p1"), 1);
    got = tg_kube_cache_get(c, "ray/p1", rv, sizeof(rv));
    assert_non_null(got);
    assert_string_equal(rv, "14");
    json_decref(got);
    tg_kube_cache_free(c);
}

static void collect(const char *key, void *arg)
{
    json_array_append_new(arg, json_string(key));
}

static void test_cache_unacked_keys_and_sweep(void **state)
{
    (void)state;
    tg_kube_cache_t *c = pod_cache();
    for (int i = 0; i < 200; i++) { /* past the first table size: it grows */
        char name[16], uid[16];
        snprintf(name, sizeof(name), "p%d", i);
        snprintf(uid, sizeof(uid), "u%d", i);
        put(c, pod(name, uid, "1", i % 2 ? "odd" : "even", "Running"), 1);
    }
    for (int i = 0; i < 200; i++) {
        char key[32];
        snprintf(key, sizeof(key), "ray/p%d", i);
        if (i % 10)
            tg_kube_cache_ack(c, key, "1");
    }
    json_t *keys = json_array();
    assert_int_equal(tg_kube_cache_each_unacked(c, collect, keys), 20);
    json_decref(keys);
    json_t *even = tg_kube_cache_by_index(c, "even");
    assert_int_equal(json_array_size(even), 100);
    json_decref(even);
    assert_int_equal(tg_kube_cache_count(c), 200);
    assert_true(tg_kube_cache_bytes(c) > 200 * 20);

    /* a relist (generation 2) sees only p0..p49: the rest is swept as gone,
     * index entries with it */
    for (int i = 0; i < 50; i++) {
        char name[16], uid[16];
        snprintf(name, sizeof(name), "p%d", i);
        snprintf(uid, sizeof(uid), "u%d", i);
        put(c, pod(name, uid, "1", i % 2 ? "odd" : "even", "Running"), 2);
    }
    assert_int_equal(tg_kube_cache_current(c), 0);
    json_t *gone = tg_kube_cache_sweep(c, 2);
    tg_kube_cache_mark_current(c, 1);
    assert_int_equal(tg_kube_cache_current(c), 1);
    assert_int_equal(json_array_size(gone), 150);
    json_t *stub = json_array_get(gone, 0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(stub, "metadata"), "namespace")), "ray");
    json_decref(gone);
    assert_int_equal(tg_kube_cache_count(c), 50);
    even = tg_kube_cache_by_index(c, "even");
    assert_int_equal(json_array_size(even), 25);
    json_decref(even);

    /* recreated under the same name: the old uid comes back to the caller */
    char *old = NULL;
    json_t *again = pod("p1", "other-uid", "5", "odd", "Running");
    assert_int_equal(tg_kube_cache_put(c, again, 0, &old), 1);
    assert_string_equal(old, "u1");
    free(old);
    json_decref(again);
    assert_int_equal(tg_kube_cache_acked(c, "ray/p1"), 0);
    json_t *stub1 = json_pack("{s:{s:s, s:s}}", "metadata", "name", "p1", "namespace", "ray");
    tg_kube_cache_remove(c, stub1);
    json_decref(stub1);
    assert_null(tg_kube_cache_get(c, "ray/p1", NULL, 0));
    tg_kube_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_project_keeps_only_the_mask),
        cmocka_unit_test(test_cache_get_index_and_ack),
        cmocka_unit_test(test_cache_unacked_keys_and_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
