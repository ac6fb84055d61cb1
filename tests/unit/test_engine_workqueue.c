/* Unit tests: the engine's work queue (engine/workqueue.h: one entry per
 * key, re-queue while processing, delays, back-off). */
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
        cmocka_unit_test(test_queue_dedups_and_requeues_while_processing),
        cmocka_unit_test(test_queue_delays_and_backoff),
        cmocka_unit_test(test_queue_shutdown_wakes_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
