/* Unit tests: platform metrics rendering and watch lag
 * (engine/platform_metrics.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "core/ids.h"
#include "engine/platform_metrics.h"
#include "kube/cache.h"

static json_t *load(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v)
        fail_msg("bad JSON in test: %s (line %d)", je.text, je.line);
    return v;
}

/* The value of one series line, or -1 when absent. */
static double series(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, name, n) && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return -1;
}

static void test_parse_time(void **state)
{
    (void)state;
    assert_true(tg_platform_metrics_parse_time("1970-01-01T00:00:10Z") == 10.0);
    assert_true(tg_platform_metrics_parse_time("2026-01-01T00:00:00Z") == 1767225600.0);
    assert_true(tg_platform_metrics_parse_time("2026-01-01T00:00:00.5Z") == 1767225600.5);
    assert_true(tg_platform_metrics_parse_time("2026-01-01T01:00:00+01:00") == 1767225600.0);
    assert_true(tg_platform_metrics_parse_time("2026-01-01") < 0);
    assert_true(tg_platform_metrics_parse_time("2026-01-01T00:00:00") < 0);
    assert_true(tg_platform_metrics_parse_time(NULL) < 0);
}

static void test_newest_time(void **state)
{
    (void)state;
    json_t *o = load("{\"metadata\": {\"creationTimestamp\": \"2026-01-01T00:00:00Z\","
                     " \"managedFields\": [{\"time\": \"2026-01-01T00:00:30Z\"}]},"
                     " \"status\": {\"conditions\": [{\"lastTransitionTime\": "
                     "\"2026-01-01T00:00:20Z\"}],"
                     " \"containerStatuses\": [{\"state\": {\"terminated\": {\"finishedAt\": "
                     "\"2026-01-01T00:00:40Z\"}}}]}}");
    assert_true(tg_platform_metrics_newest_time(o) == 1767225640.0);
    json_decref(o);
    o = load("{}");
    assert_true(tg_platform_metrics_newest_time(o) == 0);
    json_decref(o);
}

/* Informers decode only tg_platform_metrics_time_mask of a watched object:
 * every timestamp the lag reads must survive it. */
static void test_time_mask_keeps_every_timestamp(void **state)
{
    (void)state;
    static const char *const objs[] = {
        "{\"metadata\": {\"creationTimestamp\": \"2026-01-01T00:00:01Z\"}}",
        "{\"metadata\": {\"deletionTimestamp\": \"2026-01-01T00:00:02Z\"}}",
        "{\"metadata\": {\"managedFields\": [{\"manager\": \"k\", \"time\": "
        "\"2026-01-01T00:00:03Z\", \"fieldsV1\": {}}]}}",
        "{\"status\": {\"startTime\": \"2026-01-01T00:00:04Z\"}}",
        "{\"status\": {\"completionTime\": \"2026-01-01T00:00:05Z\"}}",
        "{\"status\": {\"conditions\": [{\"type\": \"x\", \"lastTransitionTime\": "
        "\"2026-01-01T00:00:06Z\"}]}}",
        "{\"status\": {\"containerStatuses\": [{\"state\": {\"running\": {\"startedAt\": "
        "\"2026-01-01T00:00:07Z\"}}}]}}",
        "{\"status\": {\"containerStatuses\": [{\"state\": {\"terminated\": {\"finishedAt\": "
        "\"2026-01-01T00:00:08Z\"}}}]}}",
    };
    json_t *mask = tg_platform_metrics_time_mask();
    for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
        json_t *o = load(objs[i]);
        json_t *kept = tg_kube_project(o, mask);
        assert_true(tg_platform_metrics_newest_time(o) == 1767225600.0 + (double)(i + 1));
        assert_true(tg_platform_metrics_newest_time(kept) == tg_platform_metrics_newest_time(o));
        json_decref(kept);
        json_decref(o);
    }
    json_decref(mask);
}

static void test_watch_lag_histogram(void **state)
{
    (void)state;
    char ts[40];
    int64_t now = tg_now_wall_us();
    tg_time_rfc3339(now - 3 * 1000000LL, ts, sizeof(ts)); /* 3 s ago */
    json_t *o = json_pack("{s:{s:s}}", "metadata", "creationTimestamp", ts);
    tg_platform_metrics_watch_event("Job", 1, o);    /* MODIFIED: counted */
    tg_platform_metrics_watch_event("Job", 0, o);    /* ADDED: not a lag sample */
    tg_platform_metrics_watch_event("Gizmo", 2, o);  /* unknown kinds go to "other" */
    tg_platform_metrics_watch_event("Pod", 4, NULL); /* SYNC */
    json_decref(o);
    tg_time_rfc3339(now - 7200 * 1000000LL, ts, sizeof(ts)); /* not timestamped recently */
    o = json_pack("{s:{s:s}}", "metadata", "creationTimestamp", ts);
    tg_platform_metrics_watch_event("Job", 1, o);
    json_decref(o);

    tg_buf_t b;
    tg_buf_init(&b, 1 << 20);
    assert_int_equal(tg_platform_metrics_render_watch(&b), TG_OK);
    assert_true(series(b.data, "taugate_watch_lag_seconds_count{kind=\"Job\"}") == 1);
    assert_true(series(b.data, "taugate_watch_lag_seconds_bucket{kind=\"Job\",le=\"2\"}") == 0);
    assert_true(series(b.data, "taugate_watch_lag_seconds_bucket{kind=\"Job\",le=\"5\"}") == 1);
    assert_true(series(b.data, "taugate_watch_lag_seconds_bucket{kind=\"Job\",le=\"+Inf\"}") == 1);
    assert_true(series(b.data, "taugate_watch_lag_seconds_count{kind=\"other\"}") == 1);
    double sum = series(b.data, "taugate_watch_lag_seconds_sum{kind=\"Job\"}");
    assert_true(sum >= 3.0 && sum < 5.0);
    assert_true(series(b.data, "taugate_watch_last_event_timestamp_seconds{kind=\"Job\"}") >
                (double)(now / 1000000) - 5);
    /* SYNC events carry no object: no timestamp either */
    assert_true(series(b.data, "taugate_watch_last_event_timestamp_seconds{kind=\"Pod\"}") == 0);
    assert_non_null(strstr(b.data, "# TYPE taugate_watch_lag_seconds histogram\n"));
    tg_buf_clean(&b);
}

static void test_render_stats(void **state)
{
    (void)state;
    json_t *stats =
        load("{\"workspaces\": [\"vision\", \"nlp\"], \"cluster_queues\": [\"gpu-a\", \"idle\"],"
             " \"runs\": [[\"vision\", \"Queued\", 3], [\"vision\", \"Running\", 2]],"
             " \"outbox\": [[\"create\", 4, 2, 1, 12.5], [\"retry\", 0, 0, 0, 0],"
             "              [\"delete\", 1, 1, 0, 0.25]],"
             " \"waits\": [[\"gpu-a\", 0, 2, 0.9], [\"gpu-a\", 3, 1, 20.0], [\"gpu-a\", 13, 1, "
             "90000]],"
             " \"preemptions\": [[\"gpu-a\", 2]],"
             " \"retries\": [[\"NodeFault\", 1], [\"Custom\", 4]],"
             " \"nodes\": [[\"h100\", \"Healthy\", false, 3, 24, 24, 10],"
             "             [\"h100\", \"Unhealthy\", true, 1, 8, 8, 0],"
             "             [\"h100\", \"Healthy\", true, 1, 8, 8, 2],"
             "             [null, \"Healthy\", false, 2, 0, 0, 0]],"
             " \"node_events\": [[\"cordon\", true, \"\", 2], [\"evict\", false, \"\", 1],"
             "                   [\"health\", true, \"Unhealthy\", 3], [\"note\", true, \"\", 9]],"
             " \"node_fault_runs\": 5, \"evidence\": [7, 42.5]}");
    tg_buf_t b;
    /* by default no workspace name reaches /metrics: runs by state only */
    tg_buf_init(&b, 1 << 20);
    assert_int_equal(tg_platform_metrics_render_stats(stats, 0, &b), TG_OK);
    assert_null(strstr(b.data, "vision"));
    assert_null(strstr(b.data, "nlp"));
    assert_true(series(b.data, "taugate_runs{state=\"Queued\"}") == 3);
    assert_true(series(b.data, "taugate_runs{state=\"Running\"}") == 2);
    assert_true(series(b.data, "taugate_runs{state=\"Cancelled\"}") == 0);
    tg_buf_clean(&b);
    tg_buf_init(&b, 1 << 20); /* the operator opted in */
    assert_int_equal(tg_platform_metrics_render_stats(stats, 1, &b), TG_OK);
    const char *t = b.data;
    assert_true(series(t, "taugate_runs{workspace=\"vision\",state=\"Queued\"}") == 3);
    assert_true(series(t, "taugate_runs{workspace=\"nlp\",state=\"Queued\"}") == 0);
    assert_true(series(t, "taugate_runs{workspace=\"nlp\",state=\"Cancelled\"}") == 0);
    /* cumulative buckets: 2 under 1 s, 1 under 30 s, 1 over a day */
    assert_true(series(t, "taugate_queue_wait_seconds_bucket{cluster_queue=\"gpu-a\",le=\"1\"}") ==
                2);
    assert_true(series(t, "taugate_queue_wait_seconds_bucket{cluster_queue=\"gpu-a\",le=\"15\"}") ==
                2);
    assert_true(series(t, "taugate_queue_wait_seconds_bucket{cluster_queue=\"gpu-a\",le=\"30\"}") ==
                3);
    assert_true(series(t, "taugate_queue_wait_seconds_bucket{cluster_queue=\"gpu-a\","
                          "le=\"86400\"}") == 3);
    assert_true(series(t, "taugate_queue_wait_seconds_bucket{cluster_queue=\"gpu-a\","
                          "le=\"+Inf\"}") == 4);
    assert_true(series(t, "taugate_queue_wait_seconds_count{cluster_queue=\"gpu-a\"}") == 4);
    assert_true(series(t, "taugate_admissions_total{cluster_queue=\"gpu-a\"}") == 4);
    assert_true(series(t, "taugate_admissions_total{cluster_queue=\"idle\"}") == 0);
    assert_true(series(t, "taugate_preemptions_total{cluster_queue=\"gpu-a\"}") == 2);
    assert_true(series(t, "taugate_retries_total{reason=\"NodeFault\"}") == 1);
    assert_true(series(t, "taugate_retries_total{reason=\"Preempted\"}") == 0);
    assert_true(series(t, "taugate_retries_total{reason=\"Custom\"}") == 4);
    assert_true(series(t, "taugate_outbox_rows{action=\"create\"}") == 4);
    assert_true(series(t, "taugate_outbox_due_rows{action=\"create\"}") == 2);
    assert_true(series(t, "taugate_outbox_failing_rows{action=\"create\"}") == 1);
    assert_true(series(t, "taugate_outbox_oldest_due_age_seconds{action=\"create\"}") == 12.5);
    assert_true(series(t, "taugate_nodes{gpu_class=\"h100\",health=\"Healthy\"}") == 4);
    assert_true(series(t, "taugate_nodes{gpu_class=\"h100\",health=\"Unhealthy\"}") == 1);
    assert_true(series(t, "taugate_nodes{gpu_class=\"h100\",health=\"NotReady\"}") == 0);
    assert_true(series(t, "taugate_nodes{gpu_class=\"none\",health=\"Healthy\"}") == 2);
    assert_true(series(t, "taugate_nodes_cordoned{gpu_class=\"h100\"}") == 2);
    assert_true(series(t, "taugate_gpu_capacity{gpu_class=\"h100\"}") == 40);
    assert_true(series(t, "taugate_gpu_allocated{gpu_class=\"h100\"}") == 12);
    /* free: only healthy, schedulable nodes (24 - 10) */
    assert_true(series(t, "taugate_gpu_free{gpu_class=\"h100\"}") == 14);
    assert_true(series(t, "taugate_gpu_unhealthy{gpu_class=\"h100\"}") == 8);
    assert_true(series(t, "taugate_gpu_free{gpu_class=\"none\"}") < 0); /* no GPU series */
    assert_true(series(t, "taugate_node_actions_total{action=\"cordon\",result=\"ok\"}") == 2);
    assert_true(series(t, "taugate_node_actions_total{action=\"evict\",result=\"failed\"}") == 1);
    assert_true(series(t, "taugate_node_actions_total{action=\"uncordon\",result=\"ok\"}") == 0);
    assert_true(series(t, "taugate_node_health_transitions_total{health=\"Unhealthy\"}") == 3);
    assert_true(series(t, "taugate_node_fault_runs_total") == 5);
    /* the sealing backlog */
    assert_true(series(t, "taugate_evidence_pending_runs") == 7);
    assert_true(series(t, "taugate_evidence_oldest_pending_age_seconds") == 42.5);
    /* every family has HELP and TYPE once */
    const char *fams[] = {"taugate_runs", "taugate_queue_wait_seconds", "taugate_gpu_free",
                          "taugate_node_actions_total", "taugate_evidence_pending_runs"};
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
        char help[128];
        snprintf(help, sizeof(help), "# HELP %s ", fams[i]);
        const char *first = strstr(t, help);
        assert_non_null(first);
        assert_null(strstr(first + 1, help));
    }
    tg_buf_clean(&b);
    json_decref(stats);

    /* an empty database renders the families with no data */
    stats = load("{\"workspaces\": null, \"runs\": null, \"node_fault_runs\": 0}");
    tg_buf_init(&b, 1 << 20);
    assert_int_equal(tg_platform_metrics_render_stats(stats, 1, &b), TG_OK);
    assert_true(series(b.data, "taugate_retries_total{reason=\"Evicted\"}") == 0);
    assert_true(series(b.data, "taugate_outbox_rows{action=\"retry\"}") == 0);
    tg_buf_clean(&b);
    json_decref(stats);
}

static void test_label_values_are_escaped(void **state)
{
    (void)state;
    json_t *stats = load("{\"workspaces\": [\"a\\\"b\"], \"cluster_queues\": [\"q\\\\x\"]}");
    tg_buf_t b;
    tg_buf_init(&b, 1 << 20);
    assert_int_equal(tg_platform_metrics_render_stats(stats, 1, &b), TG_OK);
    assert_non_null(strstr(b.data, "taugate_runs{workspace=\"a\\\"b\",state=\"Queued\"} 0"));
    assert_non_null(strstr(b.data, "taugate_admissions_total{cluster_queue=\"q\\\\x\"} 0"));
    tg_buf_clean(&b);
    json_decref(stats);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_newest_time),
        cmocka_unit_test(test_time_mask_keeps_every_timestamp),
        cmocka_unit_test(test_watch_lag_histogram),
        cmocka_unit_test(test_render_stats),
        cmocka_unit_test(test_label_values_are_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
