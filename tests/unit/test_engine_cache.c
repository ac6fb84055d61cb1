/* Unit tests: the informer cache (kube/cache.h: projection, index,
 * acknowledgements, relist sweeps) and the engine's work queue
 * (engine/workqueue.h: one entry per key, re-queue while processing,
 * delays, back-off). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "engine/workqueue.h"
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

/* ---- the work queue ----------------------------------------------------------- */

static void test_queue_dedups_and_requeues_while_processing(void **state)
{
    (void)state;
    tg_workqueue_t *q = tg_workqueue_new();
    tg_workqueue_add(q, "a");
    tg_workqueue_add(q, "b");
    tg_workqueue_add(q, "a"); /* queued already */
    assert_int_equal(tg_workqueue_len(q), 2);
    char *a = tg_workqueue_get(q);
    assert_string_equal(a, "a");
    tg_workqueue_add(q, "a");                 /* changed while a worker holds it */
    assert_int_equal(tg_workqueue_len(q), 1); /* not handed to a second worker */
    char *b = tg_workqueue_get(q);
    assert_string_equal(b, "b");
    tg_workqueue_done(q, b);
    assert_int_equal(tg_workqueue_len(q), 0);
    tg_workqueue_done(q, a); /* ... so it comes back once done */
    assert_int_equal(tg_workqueue_len(q), 1);
    a = tg_workqueue_get(q);
    assert_string_equal(a, "a");
    tg_workqueue_done(q, a);
    assert_int_equal(tg_workqueue_len(q), 0);
    tg_workqueue_shutdown(q);
    assert_null(tg_workqueue_get(q));
    tg_workqueue_free(q);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_queue_delays_and_backoff(void **state)
{
    (void)state;
    tg_workqueue_t *q = tg_workqueue_new();
    double t0 = now_s();
    tg_workqueue_add_after(q, "late", 200);
    tg_workqueue_add_after(q, "soon", 50);
    assert_int_equal(tg_workqueue_delayed(q), 2);
    char *first = tg_workqueue_get(q); /* blocks until the earliest is due */
    assert_string_equal(first, "soon");
    assert_true(now_s() - t0 >= 0.045);
    char *second = tg_workqueue_get(q);
    assert_string_equal(second, "late");
    assert_true(now_s() - t0 >= 0.195);
    tg_workqueue_done(q, first);
    tg_workqueue_done(q, second);
    /* consecutive failures of one item double its delay; forget resets it */
    assert_int_equal(tg_workqueue_retry(q, "x"), 250);
    assert_int_equal(tg_workqueue_retry(q, "x"), 500);
    assert_int_equal(tg_workqueue_retry(q, "x"), 1000);
    assert_int_equal(tg_workqueue_retry(q, "y"), 250);
    tg_workqueue_forget(q, "x");
    assert_int_equal(tg_workqueue_retry(q, "x"), 250);
    for (int i = 0; i < 20; i++)
        tg_workqueue_retry(q, "z");
    assert_int_equal(tg_workqueue_retry(q, "z"), 30000); /* capped */
    tg_workqueue_shutdown(q);
    tg_workqueue_free(q); /* frees what is still delayed */
}

typedef struct {
    tg_workqueue_t *q;
    int got;
    pthread_mutex_t lock;
} drain_t;

static void *drainer(void *arg)
{
    drain_t *d = arg;
    char *item;
    while ((item = tg_workqueue_get(d->q)) != NULL) {
        pthread_mutex_lock(&d->lock);
        d->got++;
        pthread_mutex_unlock(&d->lock);
        tg_workqueue_done(d->q, item);
    }
    return NULL;
}

static void test_queue_shutdown_wakes_workers(void **state)
{
    (void)state;
    drain_t d = {.q = tg_workqueue_new(), .lock = PTHREAD_MUTEX_INITIALIZER};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, drainer, &d);
    for (int i = 0; i < 1000; i++) {
        char item[16];
        snprintf(item, sizeof(item), "k%d", i);
        tg_workqueue_add(d.q, item);
    }
    for (int spins = 0; spins < 5000 && tg_workqueue_len(d.q); spins++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    tg_workqueue_shutdown(d.q);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    assert_true(d.got >= 1000);
    tg_workqueue_free(d.q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_project_keeps_only_the_mask),
        cmocka_unit_test(test_cache_get_index_and_ack),
        cmocka_unit_test(test_cache_unacked_keys_and_sweep),
        cmocka_unit_test(test_queue_dedups_and_requeues_while_processing),
        cmocka_unit_test(test_queue_delays_and_backoff),
        cmocka_unit_test(test_queue_shutdown_wakes_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
