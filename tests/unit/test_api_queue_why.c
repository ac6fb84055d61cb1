/* Unit tests: why a run is pending, in plain words (api/queue_why.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "api/queue_why.h"

static json_t *load(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v)
        fail_msg("bad JSON in test: %s (line %d)", je.text, je.line);
    return v;
}

/* A Workload with one pod set of `count` pods asking cpu/memory/gpus. */
static json_t *workload(int count, const char *cpu, const char *mem, const char *gpus)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"metadata\": {\"name\": \"job-x-1\"}, \"spec\": {\"podSets\": [{\"name\": "
             "\"main\", \"count\": %d, \"template\": {\"spec\": {\"containers\": [{\"resources\":"
             " {\"requests\": {\"cpu\": \"%s\", \"memory\": \"%s\"}%s%s%s}}],"
             " \"initContainers\": [{\"resources\": {\"requests\": {\"cpu\": \"1m\"}}}]}}}]}}",
             count, cpu, mem, gpus ? ", \"limits\": {\"nvidia.com/gpu\": \"" : "", gpus ? gpus : "",
             gpus ? "\"}" : "");
    return load(text);
}

/* A ClusterQueue with one flavor; used amounts as flavorsReservation. */
static json_t *cq(const char *name, const char *cohort, const char *cpu, const char *cpu_used,
                  const char *blimit, const char *llimit)
{
    char res[512];
    snprintf(res, sizeof(res), "{\"name\": \"cpu\", \"nominalQuota\": \"%s\"%s%s%s%s%s%s}", cpu,
             blimit ? ", \"borrowingLimit\": \"" : "", blimit ? blimit : "", blimit ? "\"" : "",
             llimit ? ", \"lendingLimit\": \"" : "", llimit ? llimit : "", llimit ? "\"" : "");
    char text[2048];
    snprintf(
        text, sizeof(text),
        "{\"metadata\": {\"name\": \"%s\"}, \"spec\": {%s%s%s \"resourceGroups\": [{"
        "\"coveredResources\": [\"cpu\", \"memory\"], \"flavors\": [{\"name\": \"default\","
        " \"resources\": [%s, {\"name\": \"memory\", \"nominalQuota\": \"1Gi\"}]}]}]},"
        " \"status\": {\"flavorsReservation\": [{\"name\": \"default\", \"resources\": ["
        "{\"name\": \"cpu\", \"total\": \"%s\"}, {\"name\": \"memory\", \"total\": \"0\"}]}]}}",
        name, cohort ? "\"cohort\": \"" : "", cohort ? cohort : "", cohort ? "\"," : "", res,
        cpu_used);
    return load(text);
}

static const json_t *cell(const json_t *why, const char *res)
{
    size_t i;
    json_t *q;
    json_array_foreach(json_object_get(why, "quota"), i, q) {
        if (!strcmp(json_string_value(json_object_get(q, "resource")), res))
            return q;
    }
    return NULL;
}

static const char *s(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void test_requests_sum_pod_sets_and_take_init_max(void **state)
{
    (void)state;
    json_t *wl = workload(3, "250m", "64Mi", "2");
    json_t *r = tg_queue_why_requests(wl);
    assert_int_equal(json_integer_value(json_object_get(r, "cpu")), 750);
    assert_int_equal(json_integer_value(json_object_get(r, "memory")), 3LL * 64 * 1048576 * 1000);
    assert_int_equal(json_integer_value(json_object_get(r, "nvidia.com/gpu")), 6000);
    json_decref(r);
    json_decref(wl);
    json_t *none = tg_queue_why_requests(NULL);
    assert_int_equal(json_object_size(none), 0);
    json_decref(none);
}

static void test_quota_blocked_names_resource_and_amount(void **state)
{
    (void)state;
    json_t *wl = workload(1, "10m", "32Mi", NULL);
    json_t *q = cq("tiny-cq", NULL, "5m", "0", NULL, NULL);
    tg_queue_why_in_t in = {.state = "Queued",
                            .kueue_message = "insufficient quota for cpu",
                            .local_queue = "tiny",
                            .cluster_queue = "tiny-cq",
                            .position = 1,
                            .pending = 2,
                            .position_in_cq = 3,
                            .workload = wl,
                            .cq = q};
    json_t *why = tg_queue_why(&in);
    const char *text = s(why, "why");
    assert_non_null(strstr(text, "Not enough quota in ClusterQueue tiny-cq"));
    assert_non_null(strstr(
        text, "flavor default has 5m cpu free of 5m but the run needs 10m (5m cpu missing)"));
    assert_null(strstr(text, "memory missing"));
    assert_non_null(strstr(text, "Borrowing is not possible: tiny-cq is in no cohort."));
    assert_non_null(strstr(text, "Position 1 of 2 in LocalQueue tiny."));
    assert_non_null(strstr(text, "Kueue says: insufficient quota for cpu"));
    assert_true(json_is_false(json_object_get(why, "fits")));
    assert_true(json_is_false(json_object_get(why, "can_borrow")));
    const json_t *c = cell(why, "cpu");
    assert_string_equal(s(c, "request"), "10m");
    assert_string_equal(s(c, "free"), "5m");
    assert_string_equal(s(c, "missing"), "5m");
    assert_string_equal(s(cell(why, "memory"), "missing"), "0");
    assert_string_equal(s(json_object_get(why, "requests"), "memory"), "32Mi");
    json_decref(why);
    json_decref(q);
    json_decref(wl);
}

static void test_usage_counts_and_binary_units(void **state)
{
    (void)state;
    json_t *wl = workload(2, "1", "600Mi", NULL);
    json_t *q = cq("team", NULL, "4", "3", NULL, NULL);
    tg_queue_why_in_t in = {.state = "Queued", .cluster_queue = "team", .workload = wl, .cq = q};
    json_t *why = tg_queue_why(&in);
    const char *text = s(why, "why");
    /* cpu: 2 needed, 1 free of 4 → 1 missing; memory: 1200Mi of 1Gi → 176Mi missing */
    assert_non_null(strstr(text, "has 1 cpu free of 4 but the run needs 2 (1 cpu missing)"));
    assert_non_null(strstr(text, "(176Mi memory missing)"));
    assert_string_equal(s(cell(why, "memory"), "request"), "1200Mi");
    json_decref(why);
    json_decref(q);
    json_decref(wl);
}

static void test_fits_says_it_waits_for_kueue(void **state)
{
    (void)state;
    json_t *wl = workload(1, "10m", "32Mi", NULL);
    json_t *q = cq("big", NULL, "4", "0", NULL, NULL);
    tg_queue_why_in_t in = {.state = "Queued",
                            .cluster_queue = "big",
                            .local_queue = "lq",
                            .position = 2,
                            .position_in_cq = 5,
                            .workload = wl,
                            .cq = q};
    json_t *why = tg_queue_why(&in);
    assert_true(json_is_true(json_object_get(why, "fits")));
    assert_non_null(strstr(s(why, "why"), "Quota is free in ClusterQueue big"));
    assert_non_null(strstr(s(why, "why"), "behind 4 workload(s) ahead"));
    assert_non_null(strstr(s(why, "why"), "Position 2 in LocalQueue lq."));
    json_decref(why);
    json_decref(q);
    json_decref(wl);
}

static void test_borrowing(void **state)
{
    (void)state;
    json_t *wl = workload(1, "10m", "32Mi", NULL);
    json_t *me = cq("borrower", "pool", "5m", "0", "8m", NULL);
    json_t *peers = json_array();
    json_array_append_new(peers, cq("lender", "pool", "100m", "40m", NULL, "20m"));
    json_array_append_new(peers, cq("stranger", "other", "100m", "0", NULL, NULL));
    json_array_append(peers, me);
    tg_queue_why_in_t in = {
        .state = "Queued", .cluster_queue = "borrower", .workload = wl, .cq = me, .peers = peers};
    json_t *why = tg_queue_why(&in);
    /* lender has 60m unused but lends at most 20m; our borrowing limit is 8m */
    assert_true(json_is_true(json_object_get(why, "can_borrow")));
    assert_string_equal(s(cell(why, "cpu"), "borrowable"), "8m");
    assert_non_null(strstr(s(why, "why"), "Borrowing from cohort pool could cover it (8m cpu"));
    json_decref(why);

    json_t *quota = tg_queue_why_quota(me, peers);
    assert_string_equal(s(json_array_get(quota, 0), "borrowing_limit"), "8m");
    assert_string_equal(s(json_array_get(quota, 0), "borrowable"), "8m");
    assert_true(json_is_null(json_object_get(json_array_get(quota, 1), "borrowing_limit")));
    json_decref(quota);

    /* a tighter borrowing limit: the gap stays */
    json_t *me2 = cq("borrower", "pool", "5m", "0", "2m", NULL);
    in.cq = me2;
    why = tg_queue_why(&in);
    assert_true(json_is_false(json_object_get(why, "can_borrow")));
    assert_non_null(
        strstr(s(why, "why"), "Borrowing cannot close the gap: cohort pool can lend only 2m cpu."));
    json_decref(why);
    json_decref(me2);
    json_decref(peers);
    json_decref(me);
    json_decref(wl);
}

static void test_uncovered_resource_and_other_states(void **state)
{
    (void)state;
    json_t *wl = workload(1, "10m", "32Mi", "1");
    json_t *q = cq("cpu-only", NULL, "4", "0", NULL, NULL);
    tg_queue_why_in_t in = {
        .state = "Queued", .cluster_queue = "cpu-only", .workload = wl, .cq = q};
    json_t *why = tg_queue_why(&in);
    assert_true(json_is_false(json_object_get(why, "fits")));
    assert_non_null(strstr(s(why, "why"), "cpu-only has no quota for nvidia.com/gpu"));
    json_decref(why);

    tg_queue_why_in_t acc = {.state = "Accepted", .submit_after = "2026-01-01T00:00:00Z"};
    why = tg_queue_why(&acc);
    assert_non_null(strstr(s(why, "why"), "has not submitted it to the cluster yet (next try at "
                                          "2026-01-01T00:00:00Z)"));
    assert_true(json_is_null(json_object_get(why, "fits")));
    json_decref(why);

    tg_queue_why_in_t rec = {.state = "Recovering", .reason = "Preempted"};
    why = tg_queue_why(&rec);
    assert_string_equal(s(why, "why"),
                        "Recovering after Preempted; the next attempt is submitted soon.");
    json_decref(why);

    tg_queue_why_in_t nowl = {.state = "Queued", .cluster_queue = "x", .cq = q, .live = 1};
    why = tg_queue_why(&nowl);
    assert_string_equal(s(why, "why"), "Waiting for Kueue to queue its Workload.");
    json_decref(why);
    /* the cluster could not be asked: say so, and keep Kueue's stored words */
    tg_queue_why_in_t away = {.state = "Queued",
                              .cluster_queue = "x",
                              .local_queue = "lq",
                              .position = 4,
                              .kueue_message = "insufficient unused quota for cpu"};
    why = tg_queue_why(&away);
    assert_string_equal(s(why, "why"),
                        "Waiting in ClusterQueue x (the cluster could not be asked for details). "
                        "Position 4 in LocalQueue lq. Kueue says: insufficient unused quota for "
                        "cpu");
    json_decref(why);

    tg_queue_why_in_t nocq = {.state = "Queued", .cluster_queue = "x", .workload = wl};
    why = tg_queue_why(&nocq);
    assert_non_null(strstr(s(why, "why"), "its quota could not be read"));
    json_decref(why);
    json_decref(q);
    json_decref(wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_sum_pod_sets_and_take_init_max),
        cmocka_unit_test(test_quota_blocked_names_resource_and_amount),
        cmocka_unit_test(test_usage_counts_and_binary_units),
        cmocka_unit_test(test_fits_says_it_waits_for_kueue),
        cmocka_unit_test(test_borrowing),
        cmocka_unit_test(test_uncovered_resource_and_other_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
