/* Unit tests: the Kueue objects rendered from database rows, their spec
 * hash, and how live objects are compared with them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "render/kueue.h"

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s", e.text);
    return j;
}

/* A string at a dotted path; numeric segments index arrays. */
static const char *str_at(const json_t *o, const char *path)
{
    const json_t *cur = o;
    const char *p = path;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        char seg[128];
        snprintf(seg, sizeof(seg), "%.*s", (int)n, p);
        cur =
            json_is_array(cur) ? json_array_get(cur, (size_t)atoi(seg)) : json_object_get(cur, seg);
        p += n + (dot ? 1 : 0);
    }
    return json_string_value(cur);
}

static const char *CQ_ROW =
    "{\"name\": \"team-a\", \"cohort\": \"research\", \"queueing_strategy\": \"StrictFIFO\","
    " \"preemption\": {\"within_cluster_queue\": \"LowerPriority\","
    "                  \"reclaim_within_cohort\": \"Any\"},"
    " \"resource_groups\": [{\"covered_resources\": [\"cpu\", \"nvidia.com/gpu\"],"
    "   \"flavors\": [{\"name\": \"a100\", \"resources\": ["
    "     {\"name\": \"cpu\", \"nominal_quota\": \"64\"},"
    "     {\"name\": \"nvidia.com/gpu\", \"nominal_quota\": \"8\", \"borrowing_limit\": \"4\","
    "      \"lending_limit\": \"2\"}]}]}]}";

static void test_cluster_queue_renders_kueue_fields(void **state)
{
    (void)state;
    json_t *row = load(CQ_ROW);
    json_t *cq = tg_render_kueue_cluster_queue(row);
    assert_non_null(cq);
    assert_string_equal(str_at(cq, "apiVersion"), "kueue.x-k8s.io/v1beta1");
    assert_string_equal(str_at(cq, "kind"), "ClusterQueue");
    assert_string_equal(str_at(cq, "metadata.name"), "team-a");
    assert_string_equal(str_at(cq, "spec.cohort"), "research");
    assert_string_equal(str_at(cq, "spec.queueingStrategy"), "StrictFIFO");
    assert_string_equal(str_at(cq, "spec.preemption.withinClusterQueue"), "LowerPriority");
    assert_string_equal(str_at(cq, "spec.preemption.reclaimWithinCohort"), "Any");
    assert_string_equal(str_at(cq, "spec.resourceGroups.0.coveredResources.1"), "nvidia.com/gpu");
    assert_string_equal(str_at(cq, "spec.resourceGroups.0.flavors.0.name"), "a100");
    assert_string_equal(str_at(cq, "spec.resourceGroups.0.flavors.0.resources.1.nominalQuota"),
                        "8");
    assert_string_equal(str_at(cq, "spec.resourceGroups.0.flavors.0.resources.1.borrowingLimit"),
                        "4");
    assert_string_equal(str_at(cq, "spec.resourceGroups.0.flavors.0.resources.1.lendingLimit"),
                        "2");
    assert_null(str_at(cq, "spec.resourceGroups.0.flavors.0.resources.0.borrowingLimit"));
    /* a nil selector would admit no namespace */
    assert_true(json_is_object(json_object_get(json_object_get(cq, "spec"), "namespaceSelector")));
    assert_true(tg_reconcile_is_managed(cq));
    const char *h = tg_reconcile_annotated_hash(cq);
    assert_non_null(h);
    assert_int_equal(strncmp(h, "sha256:", 7), 0);
    assert_int_equal(strlen(h), 71);
    json_decref(cq);
    json_decref(row);
}

static void test_objects_carry_the_managed_by_label(void **state)
{
    (void)state;
    json_t *row = load(CQ_ROW);
    json_t *cq = tg_render_kueue_cluster_queue(row);
    json_t *labels = json_object_get(json_object_get(cq, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, TG_RECONCILE_LABEL_MANAGED_BY)),
                        "taugate");
    json_decref(cq);
    json_decref(row);
}

static void test_other_kinds_render(void **state)
{
    (void)state;
    json_t *row = load("{\"name\": \"a100\", \"node_labels\": {\"gpu\": \"a100\"},"
                       " \"node_taints\": [{\"key\": \"gpu\", \"value\": \"a100\","
                       "   \"effect\": \"NoSchedule\"}], \"tolerations\": []}");
    json_t *rf = tg_render_kueue_flavor(row);
    assert_string_equal(str_at(rf, "kind"), "ResourceFlavor");
    assert_string_equal(str_at(rf, "spec.nodeLabels.gpu"), "a100");
    assert_string_equal(str_at(rf, "spec.nodeTaints.0.effect"), "NoSchedule");
    assert_null(json_object_get(json_object_get(rf, "spec"), "tolerations")); /* empty: left out */
    json_decref(rf);
    json_decref(row);

    row = load("{\"workspace\": \"vision\", \"name\": \"gpu\", \"cluster_queue\": \"team-a\","
               " \"namespace\": \"vision-ns\"}");
    json_t *lq = tg_render_kueue_local_queue(row);
    assert_string_equal(str_at(lq, "kind"), "LocalQueue");
    assert_string_equal(str_at(lq, "metadata.namespace"), "vision-ns");
    assert_string_equal(str_at(lq, "spec.clusterQueue"), "team-a");
    json_t *labels = json_object_get(json_object_get(lq, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, TG_RECONCILE_LABEL_WORKSPACE)),
                        "vision");
    json_decref(lq);
    json_decref(row);

    row = load("{\"name\": \"urgent\", \"value\": 1000, \"description\": \"deadlines\"}");
    json_t *pc = tg_render_kueue_priority_class(row);
    assert_string_equal(str_at(pc, "kind"), "WorkloadPriorityClass");
    assert_int_equal(json_integer_value(json_object_get(pc, "value")), 1000);
    assert_string_equal(str_at(pc, "description"), "deadlines");
    assert_null(json_object_get(pc, "spec"));
    json_decref(pc);
    json_decref(row);

    json_t *ns = tg_render_kueue_namespace("vision-ns", "vision");
    assert_string_equal(str_at(ns, "apiVersion"), "v1");
    assert_string_equal(str_at(ns, "kind"), "Namespace");
    assert_true(tg_reconcile_is_managed(ns));
    json_decref(ns);

    /* rows without their keys render nothing */
    row = load("{\"value\": 1}");
    assert_null(tg_render_kueue_priority_class(row));
    assert_null(tg_render_kueue_local_queue(row));
    json_decref(row);
}

/* The live object as an API server returns it: defaults filled in, quantities
 * in another spelling, status and server metadata added. */
static void test_server_defaults_do_not_change_the_hash(void **state)
{
    (void)state;
    json_t *row = load(CQ_ROW);
    json_t *want = tg_render_kueue_cluster_queue(row);
    json_t *live = json_deep_copy(want);
    json_t *spec = json_object_get(live, "spec");
    json_object_set_new(spec, "stopPolicy", json_string("None"));
    json_object_set_new(
        spec, "flavorFungibility",
        load("{\"whenCanBorrow\": \"Borrow\", \"whenCanPreempt\": \"TryNextFlavor\"}"));
    json_object_set_new(json_object_get(spec, "preemption"), "borrowWithinCohort",
                        load("{\"policy\": \"Never\"}"));
    json_t *cpu = json_array_get(
        json_object_get(
            json_array_get(
                json_object_get(json_array_get(json_object_get(spec, "resourceGroups"), 0),
                                "flavors"),
                0),
            "resources"),
        0);
    json_object_set_new(cpu, "nominalQuota", json_integer(64)); /* int-or-string */
    json_object_set_new(live, "status", load("{\"admittedWorkloads\": 3}"));
    json_object_set_new(json_object_get(live, "metadata"), "resourceVersion", json_string("42"));
    char a[TG_RECONCILE_HASH_LEN], b[TG_RECONCILE_HASH_LEN];
    tg_reconcile_hash(TG_RK_CLUSTER_QUEUE, want, a);
    tg_reconcile_hash(TG_RK_CLUSTER_QUEUE, live, b);
    assert_string_equal(a, b);
    assert_string_equal(a, tg_reconcile_annotated_hash(want));
    char diff[512];
    json_t *lp = tg_reconcile_managed_part(TG_RK_CLUSTER_QUEUE, live);
    json_t *wp = tg_reconcile_managed_part(TG_RK_CLUSTER_QUEUE, want);
    assert_int_equal(tg_reconcile_diff(lp, wp, 8, diff, sizeof(diff)), 0);
    assert_string_equal(diff, "");
    json_decref(lp);
    json_decref(wp);

    /* default strategy and empty preemption hash like their absence */
    json_t *plain = load("{\"name\": \"q\", \"queueing_strategy\": \"BestEffortFIFO\","
                         " \"preemption\": {}, \"resource_groups\": []}");
    json_t *pq = tg_render_kueue_cluster_queue(plain);
    json_t *bare = json_deep_copy(pq);
    json_object_del(json_object_get(bare, "spec"), "queueingStrategy");
    tg_reconcile_hash(TG_RK_CLUSTER_QUEUE, pq, a);
    tg_reconcile_hash(TG_RK_CLUSTER_QUEUE, bare, b);
    assert_string_equal(a, b);
    /* ... but namespaceSelector {} is not the same as none */
    json_object_del(json_object_get(bare, "spec"), "namespaceSelector");
    tg_reconcile_hash(TG_RK_CLUSTER_QUEUE, bare, b);
    assert_string_not_equal(a, b);
    json_decref(bare);
    json_decref(pq);
    json_decref(plain);
    json_decref(live);
    json_decref(want);
    json_decref(row);
}

static void test_hand_edits_change_the_hash_and_are_summarised(void **state)
{
    (void)state;
    json_t *row = load(CQ_ROW);
    json_t *want = tg_render_kueue_cluster_queue(row);
    json_t *live = json_deep_copy(want);
    json_t *spec = json_object_get(live, "spec");
    json_t *gpu = json_array_get(
        json_object_get(
            json_array_get(
                json_object_get(json_array_get(json_object_get(spec, "resourceGroups"), 0),
                                "flavors"),
                0),
            "resources"),
        1);
    json_object_set_new(gpu, "nominalQuota", json_string("99"));
    json_object_set_new(spec, "stopPolicy", json_string("Hold"));
    char a[TG_RECONCILE_HASH_LEN];
    tg_reconcile_hash(TG_RK_CLUSTER_QUEUE, live, a);
    assert_string_not_equal(a, tg_reconcile_annotated_hash(want));
    json_t *lp = tg_reconcile_managed_part(TG_RK_CLUSTER_QUEUE, live);
    json_t *wp = tg_reconcile_managed_part(TG_RK_CLUSTER_QUEUE, want);
    char diff[512];
    assert_int_equal(tg_reconcile_diff(lp, wp, 8, diff, sizeof(diff)), 2);
    assert_non_null(strstr(diff, "resourceGroups[0].flavors[0].resources[1].nominalQuota: live "
                                 "\"99\", desired \"8\""));
    assert_non_null(strstr(diff, "stopPolicy: live \"Hold\", desired (absent)"));
    /* a cap on entries, and on the text */
    assert_int_equal(tg_reconcile_diff(lp, wp, 1, diff, sizeof(diff)), 2);
    assert_non_null(strstr(diff, "(1 more)"));
    char tiny[24];
    assert_int_equal(tg_reconcile_diff(lp, wp, 8, tiny, sizeof(tiny)), 2);
    assert_true(strlen(tiny) < sizeof(tiny));
    json_decref(lp);
    json_decref(wp);
    json_decref(live);
    json_decref(want);
    json_decref(row);
}

static void test_hashes_track_the_rows(void **state)
{
    (void)state;
    json_t *row = load(CQ_ROW);
    json_t *a = tg_render_kueue_cluster_queue(row);
    json_t *again = tg_render_kueue_cluster_queue(row);
    assert_string_equal(tg_reconcile_annotated_hash(a), tg_reconcile_annotated_hash(again));
    json_object_set_new(row, "cohort", json_string("elsewhere"));
    json_t *b = tg_render_kueue_cluster_queue(row);
    assert_string_not_equal(tg_reconcile_annotated_hash(a), tg_reconcile_annotated_hash(b));
    /* "64Gi" and its byte count are one quota */
    json_t *m1 = load("{\"name\": \"m\", \"resource_groups\": [{\"covered_resources\":"
                      " [\"memory\"], \"flavors\": [{\"name\": \"f\", \"resources\": [{\"name\":"
                      " \"memory\", \"nominal_quota\": \"64Gi\"}]}]}]}");
    json_t *m2 = load("{\"name\": \"m\", \"resource_groups\": [{\"covered_resources\":"
                      " [\"memory\"], \"flavors\": [{\"name\": \"f\", \"resources\": [{\"name\":"
                      " \"memory\", \"nominal_quota\": \"65536Mi\"}]}]}]}");
    json_t *q1 = tg_render_kueue_cluster_queue(m1);
    json_t *q2 = tg_render_kueue_cluster_queue(m2);
    assert_string_equal(tg_reconcile_annotated_hash(q1), tg_reconcile_annotated_hash(q2));
    /* a priority class hashes its value and description */
    json_t *p1 = load("{\"name\": \"p\", \"value\": 1}");
    json_t *p2 = load("{\"name\": \"p\", \"value\": 2}");
    json_t *r1 = tg_render_kueue_priority_class(p1);
    json_t *r2 = tg_render_kueue_priority_class(p2);
    assert_string_not_equal(tg_reconcile_annotated_hash(r1), tg_reconcile_annotated_hash(r2));
    assert_string_equal(tg_reconcile_kind_name(TG_RK_LOCAL_QUEUE), "LocalQueue");
    assert_string_equal(tg_reconcile_kind_name(TG_RK_COUNT), "Unknown");
    json_t *v[] = {a, again, b, m1, m2, q1, q2, p1, p2, r1, r2, row};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        json_decref(v[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_queue_renders_kueue_fields),
        cmocka_unit_test(test_objects_carry_the_managed_by_label),
        cmocka_unit_test(test_other_kinds_render),
        cmocka_unit_test(test_server_defaults_do_not_change_the_hash),
        cmocka_unit_test(test_hand_edits_change_the_hash_and_are_summarised),
        cmocka_unit_test(test_hashes_track_the_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
