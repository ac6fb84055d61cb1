/* Unit tests: the provenance table (tauyaml/prov.c): bytewise path order
 * (prefixes, long shared prefixes), the last source of a path winning,
 * look-ups, copies and the JSON form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "tauyaml/prov.h"

static const char *path_at(const tg_tauyaml_prov_t *p, size_t i)
{
    size_t n;
    const char *s = tg_tauyaml_prov_path(p, i, &n);
    assert_int_equal(strlen(s), n);
    return s;
}

static const char *source_at(const tg_tauyaml_prov_t *p, size_t i)
{
    size_t n;
    const char *s = tg_tauyaml_prov_source(p, i, &n);
    assert_int_equal(strlen(s), n);
    return s;
}

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_order_and_last_source_wins(void **state)
{
    (void)state;
    tg_tauyaml_prov_t p;
    tg_tauyaml_prov_init(&p);
    assert_null(tg_tauyaml_prov_get(&p, "name"));
    /* out of order, with a key that is another's prefix, keys sharing their
     * first eight bytes and more, a top-level field and sect.key pairs */
    tg_tauyaml_prov_set(&p, "policy", "queue", "workspace");
    tg_tauyaml_prov_set(&p, NULL, "name", "spec");
    tg_tauyaml_prov_set(&p, "compute", "worker_cpu_request", "profile");
    tg_tauyaml_prov_set(&p, "compute", "worker_cpu", "default");
    tg_tauyaml_prov_set(&p, "compute", "worker_cpu_limit", "default");
    tg_tauyaml_prov_set(&p, "run", "ttl", "default");
    tg_tauyaml_prov_set(&p, "runtime", "image", "profile");
    tg_tauyaml_prov_set(&p, "compute", "gpus", "spec");
    tg_tauyaml_prov_set_path(&p, "policy.node_selector.zone", 25, "profile");
    /* set again: the last word wins, the entry stays single */
    tg_tauyaml_prov_set(&p, "policy", "queue", "policy:q");
    tg_tauyaml_prov_set(&p, "compute", "worker_cpu", "spec");

    const char *want[] = {"compute.gpus",
                          "compute.worker_cpu",
                          "compute.worker_cpu_limit",
                          "compute.worker_cpu_request",
                          "name",
                          "policy.node_selector.zone",
                          "policy.queue",
                          "run.ttl",
                          "runtime.image"};
    size_t n = sizeof(want) / sizeof(want[0]);
    qsort(want, n, sizeof(want[0]), by_bytes); /* already so: strcmp is bytewise */
    assert_int_equal(p.n, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(path_at(&p, i), want[i]);
    assert_string_equal(tg_tauyaml_prov_get(&p, "policy.queue"), "policy:q");
    assert_string_equal(source_at(&p, 6), "policy:q");
    assert_string_equal(tg_tauyaml_prov_get(&p, "compute.worker_cpu"), "spec");
    assert_string_equal(tg_tauyaml_prov_get(&p, "compute.worker_cpu_limit"), "default");
    assert_string_equal(tg_tauyaml_prov_get(&p, "name"), "spec");
    /* neither a prefix nor an extension of a recorded path matches it */
    assert_null(tg_tauyaml_prov_get(&p, "compute.worker"));
    assert_null(tg_tauyaml_prov_get(&p, "compute.worker_cpu_"));
    assert_null(tg_tauyaml_prov_get(&p, "nam"));
    assert_null(tg_tauyaml_prov_get(&p, ""));
    /* a section and key too long together for a field are not recorded */
    char longkey[300];
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    tg_tauyaml_prov_set(&p, "compute", longkey, "spec");
    assert_int_equal(p.n, n);
    tg_tauyaml_prov_clean(&p);
    assert_int_equal(p.n, 0);
}

/* Many paths in random order come out sorted, whatever the growth steps. */
static void test_many_paths_sorted(void **state)
{
    (void)state;
    tg_tauyaml_prov_t p;
    tg_tauyaml_prov_init(&p);
    unsigned seed = 3;
    enum { N = 700 };
    static char paths[N][24];
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        /* few letters, so prefixes and near-duplicates are common */
        size_t len = 1 + (seed >> 16) % 20;
        for (size_t j = 0; j < len; j++) {
            seed = seed * 1103515245u + 12345u;
            paths[i][j] = "ab."[(seed >> 16) % 3];
        }
        paths[i][len] = '\0';
        char src[16];
        snprintf(src, sizeof(src), "s%d", i);
        tg_tauyaml_prov_set_path(&p, paths[i], len, src);
    }
    for (size_t i = 1; i < p.n; i++)
        assert_true(strcmp(path_at(&p, i - 1), path_at(&p, i)) < 0);
    /* every path is there with its last source */
    for (int i = 0; i < N; i++) {
        int last = i;
        for (int j = i + 1; j < N; j++)
            if (strcmp(paths[j], paths[i]) == 0)
                last = j;
        char src[16];
        snprintf(src, sizeof(src), "s%d", last);
        assert_string_equal(tg_tauyaml_prov_get(&p, paths[i]), src);
    }
    tg_tauyaml_prov_clean(&p);
}

static void test_copy_and_json(void **state)
{
    (void)state;
    tg_tauyaml_prov_t a, b;
    tg_tauyaml_prov_init(&a);
    tg_tauyaml_prov_init(&b);
    tg_tauyaml_prov_set(&a, "storage", "output", "workspace");
    tg_tauyaml_prov_set(&a, NULL, "engine", "spec");
    tg_tauyaml_prov_set(&b, NULL, "stale", "spec"); /* dropped by the copy */
    tg_tauyaml_prov_copy(&b, &a);
    tg_tauyaml_prov_set(&b, "policy", "lane", "policy:lane");
    assert_int_equal(a.n, 2);
    assert_null(tg_tauyaml_prov_get(&a, "policy.lane"));
    assert_null(tg_tauyaml_prov_get(&b, "stale"));
    assert_int_equal(b.n, 3);

    json_t *j = tg_tauyaml_prov_json(&b);
    char *text = json_dumps(j, JSON_COMPACT);
    /* in path order, as the annotation writes it */
    assert_string_equal(text, "{\"engine\":\"spec\",\"policy.lane\":\"policy:lane\","
                              "\"storage.output\":\"workspace\"}");
    free(text);
    /* back from JSON (non-strings skipped): the same table */
    json_object_set_new(j, "bad", json_integer(1));
    tg_tauyaml_prov_t c;
    tg_tauyaml_prov_init(&c);
    tg_tauyaml_prov_add_json(&c, j);
    assert_int_equal(c.n, 3);
    for (size_t i = 0; i < c.n; i++) {
        assert_string_equal(path_at(&c, i), path_at(&b, i));
        assert_string_equal(source_at(&c, i), source_at(&b, i));
    }
    json_decref(j);
    tg_tauyaml_prov_clean(&a);
    tg_tauyaml_prov_clean(&b);
    tg_tauyaml_prov_clean(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_last_source_wins),
        cmocka_unit_test(test_many_paths_sorted),
        cmocka_unit_test(test_copy_and_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
