/* Unit tests: GPU node summaries, health rules, pod GPU requests
 * (engine/node_health.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/node_health.h"
#include "kube/cache.h"
#include "engine/nodes.h"

static json_t *load(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (!v)
        fail_msg("bad JSON in test: %s (line %d)", je.text, je.line);
    return v;
}

static void rules(tg_node_rules_t *r)
{
    char err[256];
    assert_int_equal(tg_node_rules_parse(r, TG_NODES_DEFAULT_CONDITIONS,
                                         TG_NODES_DEFAULT_CLASS_LABELS, err, sizeof(err)),
                     0);
}

/* A GPU node with the given extra conditions (JSON array items, may be ""). */
static json_t *gpu_node(const char *extra_conditions, const char *ready_status)
{
    char text[4096];
    snprintf(text, sizeof(text),
             "{\"metadata\": {\"name\": \"gpu-1\", \"labels\": {\"nvidia.com/gpu.product\": "
             "\"NVIDIA-H100-80GB-HBM3\", \"kubernetes.io/hostname\": \"gpu-1\"}},"
             " \"spec\": {\"taints\": [{\"key\": \"nvidia.com/gpu\", \"effect\": "
             "\"NoSchedule\"}]},"
             " \"status\": {\"capacity\": {\"cpu\": \"64\", \"nvidia.com/gpu\": \"8\","
             " \"nvidia.com/mig-1g.10gb\": \"7\"},"
             " \"allocatable\": {\"cpu\": \"63500m\", \"nvidia.com/gpu\": \"7\","
             " \"nvidia.com/mig-1g.10gb\": \"7\"},"
             " \"conditions\": [{\"type\": \"MemoryPressure\", \"status\": \"False\","
             " \"lastHeartbeatTime\": \"2026-01-01T00:05:00Z\","
             " \"lastTransitionTime\": \"2026-01-01T00:00:00Z\"},"
             " {\"type\": \"Ready\", \"status\": \"%s\", \"reason\": \"KubeletReady\","
             " \"lastHeartbeatTime\": \"2026-01-01T00:05:00Z\","
             " \"lastTransitionTime\": \"2026-01-01T00:00:01Z\"}%s%s]}}",
             ready_status, *extra_conditions ? ", " : "", extra_conditions);
    return load(text);
}

static void test_rule_syntax(void **state)
{
    (void)state;
    tg_node_rules_t r;
    char err[256];
    assert_int_equal(tg_node_rules_parse(&r, " XidErrors , GPUHealthy=False,,XIDError* ", "a,b",
                                         err, sizeof(err)),
                     0);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.nclass, 2);
    assert_true(tg_node_rules_match(&r, "XidErrors", "True"));
    assert_false(tg_node_rules_match(&r, "XidErrors", "False"));
    assert_false(tg_node_rules_match(&r, "XidErrorsX", "True"));
    assert_true(tg_node_rules_match(&r, "GPUHealthy", "False"));
    assert_false(tg_node_rules_match(&r, "GPUHealthy", "True"));
    assert_true(tg_node_rules_match(&r, "XIDError79", "True"));
    assert_true(tg_node_rules_match(&r, "XIDError", "True"));
    assert_false(tg_node_rules_match(&r, "Ready", "True"));
    assert_false(tg_node_rules_match(&r, NULL, "True"));

    assert_int_equal(tg_node_rules_parse(&r, "X=Maybe", "", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "X=Maybe"));
    assert_int_equal(tg_node_rules_parse(&r, "A*B", "", err, sizeof(err)), -1);
    assert_int_equal(tg_node_rules_parse(&r, "=True", "", err, sizeof(err)), -1);
    /* the default list parses */
    rules(&r);
    assert_true(tg_node_rules_match(&r, "GpuUnhealthy", "True"));
    assert_true(tg_node_rules_match(&r, "GPUECCDoubleRetired", "True"));
    assert_true(tg_node_rules_match(&r, "IBLinkDown", "True"));
}

static void test_healthy_gpu_node(void **state)
{
    (void)state;
    tg_node_rules_t r;
    rules(&r);
    json_t *node = gpu_node("{\"type\": \"XidErrors\", \"status\": \"False\", "
                            "\"lastTransitionTime\": \"2026-01-01T01:00:00Z\"}",
                            "True");
    json_t *s = tg_node_summarize(node, &r);
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "name")), "gpu-1");
    assert_string_equal(json_string_value(json_object_get(s, "gpu_class")),
                        "NVIDIA-H100-80GB-HBM3");
    assert_string_equal(json_string_value(json_object_get(s, "health")), "Healthy");
    /* healthy since the last watched transition */
    assert_string_equal(json_string_value(json_object_get(s, "health_since")),
                        "2026-01-01T01:00:00Z");
    const json_t *gpus = json_object_get(s, "gpus");
    assert_int_equal(json_integer_value(json_object_get(gpus, "capacity")), 8);
    assert_int_equal(json_integer_value(json_object_get(gpus, "allocatable")), 7);
    const json_t *mig = json_object_get(json_object_get(s, "mig"), "nvidia.com/mig-1g.10gb");
    assert_int_equal(json_integer_value(json_object_get(mig, "capacity")), 7);
    assert_int_equal(json_array_size(json_object_get(s, "problems")), 0);
    assert_int_equal(json_array_size(json_object_get(s, "conditions")), 3);
    assert_true(json_is_true(json_object_get(s, "ready")));
    assert_true(json_is_false(json_object_get(s, "unschedulable")));
    assert_true(json_is_null(json_object_get(s, "cordoned_by")));
    assert_int_equal(json_array_size(json_object_get(s, "taints")), 1);
    /* heartbeats are left out: a new heartbeat gives an equal summary */
    json_t *node2 = json_deep_copy(node);
    json_object_set_new(
        json_array_get(json_object_get(json_object_get(node2, "status"), "conditions"), 0),
        "lastHeartbeatTime", json_string("2026-01-01T09:00:00Z"));
    json_t *s2 = tg_node_summarize(node2, &r);
    assert_true(json_equal(s, s2));
    char text[256];
    tg_node_problem_text(s, text, sizeof(text));
    assert_string_equal(text, "");
    json_decref(s2);
    json_decref(node2);
    json_decref(s);
    json_decref(node);
}

static void test_unhealthy_from_gpu_conditions(void **state)
{
    (void)state;
    tg_node_rules_t r;
    rules(&r);
    json_t *node = gpu_node("{\"type\": \"XidErrors\", \"status\": \"True\", \"reason\": "
                            "\"XidError79\", \"message\": \"GPU has fallen off the bus\","
                            " \"lastTransitionTime\": \"2026-01-01T02:00:00Z\"},"
                            " {\"type\": \"GPUHealthy\", \"status\": \"False\","
                            " \"lastTransitionTime\": \"2026-01-01T01:30:00Z\"}",
                            "True");
    json_object_set_new(json_object_get(node, "spec"), "unschedulable", json_true());
    json_object_set_new(json_object_get(node, "metadata"), "annotations",
                        json_pack("{s:s, s:s, s:s}", TG_NODE_ANN_CORDONED_BY, "taugate@a:1",
                                  TG_NODE_ANN_REASON, "XidErrors=True", TG_NODE_ANN_AT,
                                  "2026-01-01T02:00:01Z"));
    json_t *s = tg_node_summarize(node, &r);
    assert_string_equal(json_string_value(json_object_get(s, "health")), "Unhealthy");
    /* unhealthy since the earliest problem */
    assert_string_equal(json_string_value(json_object_get(s, "health_since")),
                        "2026-01-01T01:30:00Z");
    const json_t *problems = json_object_get(s, "problems");
    assert_int_equal(json_array_size(problems), 2);
    const json_t *p0 = json_array_get(problems, 0);
    assert_string_equal(json_string_value(json_object_get(p0, "type")), "XidErrors");
    assert_string_equal(json_string_value(json_object_get(p0, "reason")), "XidError79");
    assert_string_equal(json_string_value(json_object_get(p0, "since")), "2026-01-01T02:00:00Z");
    assert_true(json_is_true(json_object_get(s, "unschedulable")));
    assert_string_equal(json_string_value(json_object_get(s, "cordoned_by")), "taugate@a:1");
    char text[256];
    tg_node_problem_text(s, text, sizeof(text));
    assert_string_equal(text, "XidErrors=True (XidError79: GPU has fallen off the bus); "
                              "GPUHealthy=False");
    /* cut to fit, always terminated */
    char small[20];
    tg_node_problem_text(s, small, sizeof(small));
    assert_true(strlen(small) < sizeof(small));
    json_decref(s);
    json_decref(node);
}

static void test_not_ready_and_unknown(void **state)
{
    (void)state;
    tg_node_rules_t r;
    rules(&r);
    json_t *node = gpu_node("", "False");
    json_t *s = tg_node_summarize(node, &r);
    assert_string_equal(json_string_value(json_object_get(s, "health")), "NotReady");
    assert_true(json_is_false(json_object_get(s, "ready")));
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(s, "problems"), 0), "type")),
                        "Ready");
    json_decref(s);
    json_decref(node);

    node = gpu_node("", "Unknown");
    s = tg_node_summarize(node, &r);
    assert_string_equal(json_string_value(json_object_get(s, "health")), "Unknown");
    json_decref(s);
    json_decref(node);

    /* a GPU problem wins over NotReady: that node is the one to cordon */
    node = gpu_node("{\"type\": \"EccErrors\", \"status\": \"True\"}", "False");
    s = tg_node_summarize(node, &r);
    assert_string_equal(json_string_value(json_object_get(s, "health")), "Unhealthy");
    json_decref(s);
    json_decref(node);

    /* a watched GPU condition without telemetry: Unknown, not Healthy */
    node = gpu_node("{\"type\": \"XidErrors\", \"status\": \"Unknown\", "
                    "\"lastTransitionTime\": \"2026-01-01T03:00:00Z\"}",
                    "True");
    s = tg_node_summarize(node, &r);
    assert_string_equal(json_string_value(json_object_get(s, "health")), "Unknown");
    assert_string_equal(json_string_value(json_object_get(s, "health_since")),
                        "2026-01-01T03:00:00Z");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(s, "problems"), 0), "type")),
                        "XidErrors");
    json_decref(s);
    json_decref(node);

    /* no conditions at all */
    node = load("{\"metadata\": {\"name\": \"bare\"}}");
    s = tg_node_summarize(node, &r);
    assert_string_equal(json_string_value(json_object_get(s, "health")), "Unknown");
    assert_true(json_is_null(json_object_get(s, "gpu_class")));
    assert_true(json_is_null(json_object_get(s, "ready")));
    json_decref(s);
    json_decref(node);
    /* no name, no summary */
    node = load("{\"metadata\": {}}");
    assert_null(tg_node_summarize(node, &r));
    json_decref(node);
}

static void test_gpu_class_labels(void **state)
{
    (void)state;
    tg_node_rules_t r;
    char err[128];
    assert_int_equal(tg_node_rules_parse(&r, "", "taugate.io/gpu-class,nvidia.com/gpu.product", err,
                                         sizeof(err)),
                     0);
    json_t *node = load("{\"metadata\": {\"name\": \"n\", \"labels\": {\"taugate.io/gpu-class\":"
                        " \"h100\", \"nvidia.com/gpu.product\": \"X\"}},"
                        " \"status\": {\"allocatable\": {\"amd.com/gpu\": \"4\"}}}");
    json_t *s = tg_node_summarize(node, &r);
    assert_string_equal(json_string_value(json_object_get(s, "gpu_class")), "h100");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(s, "gpus"), "allocatable")),
                     4);
    json_decref(s);
    json_decref(node);
    node = load("{\"metadata\": {\"name\": \"n\"}, \"status\": {\"capacity\": "
                "{\"nvidia.com/gpu\": 2}}}");
    s = tg_node_summarize(node, &r);
    assert_string_equal(json_string_value(json_object_get(s, "gpu_class")), "unlabelled");
    json_decref(s);
    json_decref(node);
}

static void test_pod_gpu_requests(void **state)
{
    (void)state;
    assert_int_equal(tg_node_gpu_resource("nvidia.com/gpu"), 1);
    assert_int_equal(tg_node_gpu_resource("amd.com/gpu"), 1);
    assert_int_equal(tg_node_gpu_resource("nvidia.com/mig-3g.40gb"), 2);
    assert_int_equal(tg_node_gpu_resource("nvidia.com/mig-"), 0);
    assert_int_equal(tg_node_gpu_resource("cpu"), 0);
    assert_int_equal(tg_node_gpu_resource(NULL), 0);
    json_t *pod =
        load("{\"spec\": {\"nodeName\": \"gpu-1\", \"containers\": ["
             " {\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"2\", \"cpu\": \"4\"}}},"
             " {\"resources\": {\"requests\": {\"nvidia.com/gpu\": \"1\"}, \"limits\": "
             "{\"nvidia.com/gpu\": \"1\"}}},"
             " {\"resources\": {\"limits\": {\"nvidia.com/mig-1g.10gb\": \"1\"}}}],"
             " \"initContainers\": [{\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"4\"}}},"
             " {\"resources\": {\"limits\": {\"nvidia.com/mig-1g.10gb\": \"0\"}}}]},"
             " \"status\": {\"phase\": \"Running\"}}");
    /* the nodes loop's Pod informer decodes only tg_node_pod_mask: the same answers */
    json_t *mask = tg_node_pod_mask();
    json_t *kept = tg_kube_project(pod, mask);
    json_t *g = tg_node_pod_gpus(kept);
    json_t *whole = tg_node_pod_gpus(pod);
    assert_true(json_equal(g, whole));
    assert_int_equal(tg_node_pod_holds(kept), tg_node_pod_holds(pod));
    json_decref(whole);
    json_decref(g);
    json_decref(kept);
    json_decref(mask);
    g = tg_node_pod_gpus(pod);
    /* max(sum of containers 3, init 4) */
    assert_int_equal(json_integer_value(json_object_get(g, "nvidia.com/gpu")), 4);
    assert_int_equal(json_integer_value(json_object_get(g, "nvidia.com/mig-1g.10gb")), 1);
    assert_null(json_object_get(g, "cpu"));
    assert_true(tg_node_pod_holds(pod));
    json_decref(g);
    json_object_set_new(json_object_get(pod, "status"), "phase", json_string("Succeeded"));
    assert_false(tg_node_pod_holds(pod));
    json_object_set_new(json_object_get(pod, "status"), "phase", json_string("Pending"));
    json_object_del(json_object_get(pod, "spec"), "nodeName");
    assert_false(tg_node_pod_holds(pod)); /* not bound yet */
    json_decref(pod);
    pod = load("{\"spec\": {\"containers\": [{\"resources\": {\"limits\": "
               "{\"nvidia.com/gpu\": \"1.5\"}}}]}}");
    g = tg_node_pod_gpus(pod);
    assert_int_equal(json_object_size(g), 0); /* not a whole number: ignored */
    json_decref(g);
    json_decref(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_syntax),
        cmocka_unit_test(test_healthy_gpu_node),
        cmocka_unit_test(test_unhealthy_from_gpu_conditions),
        cmocka_unit_test(test_not_ready_and_unknown),
        cmocka_unit_test(test_gpu_class_labels),
        cmocka_unit_test(test_pod_gpu_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
