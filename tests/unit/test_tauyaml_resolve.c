/* Resolution: precedence spec > profile > workspace > default, provenance,
 * and the workspace/profile/queue/PVC/priority checks. */
#include "pipeline_test_util.h"

static const char *const ctx_text =
    "{\"workspace\": {\"name\": \"team-a\", \"namespace\": \"ns-a\", \"default_queue\": \"lq-ws\","
    "  \"default_priority\": \"taugrid-default\", \"default_profile\": \"gpu-a100\","
    "  \"output_root\": \"/data/projects/team-a\", \"ttl_seconds\": 3600,"
    "  \"allowed_profiles\": [\"gpu-a100\", \"cpu-small\", \"ray-gpu\"],"
    "  \"queues\": [\"lq-ws\", \"lq-gpu\", \"lq-cpu\"], \"pvcs\": [\"data-a\", \"models\"]},"
    " \"profiles\": ["
    "  {\"name\": \"gpu-a100\", \"engine\": \"job\", \"gpu_class\": \"a100-80gb\","
    "   \"gpu_resource\": \"nvidia.com/gpu\", \"default_image\": \"repo/train:1\","
    "   \"node_selector\": {\"pool\": \"gpu\"},"
    "   \"tolerations\": [{\"key\": \"dedicated\", \"operator\": \"Equal\", \"value\": \"gpu\","
    "                      \"effect\": \"NoSchedule\", \"junk\": 1}],"
    "   \"resources\": {\"cpu\": \"4\", \"memory_request\": \"32Gi\", \"cpu_limit\": \"8\"},"
    "   \"default_queue\": \"lq-gpu\", \"active_deadline_seconds\": 86400,"
    "   \"allowed_workspaces\": [\"team-a\"]},"
    "  {\"name\": \"cpu-small\", \"engine\": \"job\", \"teams\": [\"research\"]},"
    "  {\"name\": \"ray-gpu\", \"engine\": \"rayjob\", \"default_queue\": \"lq-gpu\"},"
    "  {\"name\": \"other-ws\", \"allowed_workspaces\": [\"team-b\"]}],"
    " \"priority_classes\": [{\"name\": \"taugrid-default\", \"value\": 1000},"
    "                        {\"name\": \"taugrid-priority\", \"value\": 1200}],"
    " \"pod_priority_classes\": [{\"name\": \"high\", \"value\": 100}]}";

static json_t *ctx_load(void)
{
    json_error_t e;
    json_t *c = json_loads(ctx_text, 0, &e);
    if (!c)
        fprintf(stderr, "ctx: %s\n", e.text);
    assert_non_null(c);
    return c;
}

static tg_rc_e resolve(const char *yaml, json_t **out)
{
    json_t *ctx = ctx_load();
    tu_files_t f;
    tu_files_init(&f);
    tu_files_add_str(&f, "train.py", "print(1)\n");
    tg_rc_e rc = tu_run_ctx(yaml, strlen(yaml), ctx, &f.set, NULL, out);
    tu_files_clean(&f);
    json_decref(ctx);
    return rc;
}

static const char *rstr(const json_t *out, const char *sect, const char *key)
{
    const json_t *v =
        sect ? tu_at(out, "resolved", sect, key, NULL) : tu_at(out, "resolved", key, NULL);
    return json_string_value(v);
}

static const char *prov(const json_t *out, const char *field)
{
    return json_string_value(tu_at(out, "provenance", field, NULL));
}

static void test_precedence_profile_defaults(void **state)
{
    (void)state;
    json_t *out = NULL;
    /* No policy at all: the workspace's default profile applies. */
    const char *y = "name: demo\nengine: job\nentrypoint: train.py\ncompute:\n  gpus: 1\n";
    assert_int_equal(resolve(y, &out), TG_OK);
    assert_string_equal(rstr(out, "policy", "profile"), "gpu-a100");
    assert_string_equal(prov(out, "policy.profile"), "workspace");
    assert_string_equal(rstr(out, "runtime", "image"), "repo/train:1");
    assert_string_equal(prov(out, "runtime.image"), "profile");
    assert_string_equal(rstr(out, "policy", "queue"), "lq-gpu");
    assert_string_equal(prov(out, "policy.queue"), "profile");
    assert_string_equal(rstr(out, "policy", "gpu_class"), "a100-80gb");
    assert_string_equal(prov(out, "policy.gpu_class"), "profile");
    assert_string_equal(rstr(out, "compute", "cpu_request"), "4");
    assert_string_equal(prov(out, "compute.cpu_request"), "profile");
    assert_string_equal(rstr(out, "compute", "memory_request"), "32Gi");
    assert_string_equal(rstr(out, "compute", "cpu_limit"), "8");
    assert_string_equal(rstr(out, "storage", "output"), "/data/projects/team-a/demo");
    assert_string_equal(prov(out, "storage.output"), "workspace");
    assert_int_equal(
        json_integer_value(tu_at(out, "resolved", "run", "ttl_seconds_after_finished", NULL)),
        3600);
    assert_string_equal(prov(out, "run.ttl_seconds_after_finished"), "workspace");
    assert_int_equal(
        json_integer_value(tu_at(out, "resolved", "run", "active_deadline_seconds", NULL)), 86400);
    assert_string_equal(rstr(out, "policy", "workload_priority_class"), "taugrid-default");
    assert_string_equal(prov(out, "policy.workload_priority_class"), "workspace");
    assert_string_equal(rstr(out, "resilience", "checkpoint_path"),
                        "/data/checkpoints/finetunes/demo");
    assert_string_equal(prov(out, "resilience.backoff_initial"), "default");
    assert_string_equal(prov(out, "policy.node_selector.pool"), "profile");
    assert_string_equal(
        json_string_value(tu_at(out, "resolved", "policy", "tolerations", "#0", "key", NULL)),
        "dedicated");
    assert_null(tu_at(out, "resolved", "policy", "tolerations", "#0", "junk", NULL) ? NULL : NULL);
    const char *hash = json_string_value(json_object_get(out, "config_hash"));
    assert_non_null(hash);
    assert_int_equal(strlen(hash), 71);
    json_decref(out);

    /* The spec wins over profile and workspace. */
    y = "name: demo\nengine: job\nentrypoint: train.py\nimage: mine:2\ncompute:\n  gpus: 1\n"
        "  cpu_request: '2'\npolicy:\n  queue: lq-cpu\n  gpu_class: h100-80gb\n"
        "  node_selector:\n    pool: special\nstorage:\n  output: /data/elsewhere\n"
        "run:\n  ttl_seconds_after_finished: 60\n";
    assert_int_equal(resolve(y, &out), TG_OK);
    assert_string_equal(rstr(out, "runtime", "image"), "mine:2");
    assert_string_equal(prov(out, "runtime.image"), "spec");
    assert_string_equal(rstr(out, "policy", "queue"), "lq-cpu");
    assert_string_equal(prov(out, "policy.queue"), "spec");
    assert_string_equal(rstr(out, "policy", "gpu_class"), "h100-80gb");
    assert_string_equal(rstr(out, "compute", "cpu_request"), "2");
    assert_string_equal(prov(out, "compute.cpu_request"), "spec");
    assert_string_equal(
        json_string_value(tu_at(out, "resolved", "policy", "node_selector", "pool", NULL)),
        "special");
    assert_string_equal(prov(out, "policy.node_selector.pool"), "spec");
    assert_string_equal(prov(out, "storage.output"), "spec");
    assert_string_equal(prov(out, "run.ttl_seconds_after_finished"), "spec");
    json_decref(out);
}

static void test_workspace_and_default_queue(void **state)
{
    (void)state;
    json_t *out = NULL;
    const char *y = "name: demo\nengine: job\nentrypoint: train.py\nimage: x\npolicy:\n"
                    "  profile: cpu-small\n  team: research\n";
    assert_int_equal(resolve(y, &out), TG_OK);
    assert_string_equal(rstr(out, "policy", "queue"), "lq-ws");
    assert_string_equal(prov(out, "policy.queue"), "workspace");
    assert_string_equal(rstr(out, "compute", "cpu_request"), "1");
    assert_string_equal(prov(out, "compute.cpu_request"), "default");
    assert_string_equal(rstr(out, "compute", "memory_request"), "2Gi");
    assert_true(json_is_null(tu_at(out, "resolved", "compute", "cpu_limit", NULL)));
    json_decref(out);
}

static void test_mismatches(void **state)
{
    (void)state;
    json_t *out = NULL;
    const char *y = "name: demo\nengine: job\nentrypoint: train.py\nimage: x\npolicy:\n"
                    "  workspace: team-b\n  namespace: ns-b\n  queue: nope\n"
                    "storage:\n  data_pvc: not-mine\n";
    assert_int_equal(resolve(y, &out), TG_EUNPROCESSABLE);
    tu_assert_contains(tu_msg(tu_find_error(out, "policy.workspace", 6)),
                       "does not match the workspace this run is submitted to (\"team-a\")");
    tu_assert_contains(tu_msg(tu_find_error(out, "policy.namespace", 7)),
                       "is not the namespace of workspace \"team-a\" (\"ns-a\")");
    tu_assert_contains(tu_msg(tu_find_error(out, "policy.queue", 8)),
                       "policy.queue \"nope\" is not a LocalQueue of workspace \"team-a\" (queues: "
                       "lq-ws, lq-gpu, lq-cpu)");
    tu_assert_contains(tu_msg(tu_find_error(out, "storage.data_pvc", 10)),
                       "is not a PVC of workspace \"team-a\"");
    json_decref(out);

    static const struct {
        const char *yaml, *path, *needle;
    } cases[] = {
        {"name: demo\nengine: job\nentrypoint: train.py\npolicy:\n  profile: nope\n",
         "policy.profile", "compute profile \"nope\" is not allowed in workspace \"team-a\""},
        {"name: demo\nengine: job\nentrypoint: train.py\npolicy:\n  profile: ray-gpu\n",
         "policy.profile", "is for engine: rayjob, but this spec has engine: job"},
        {"name: demo\nengine: job\nentrypoint: train.py\nimage: x\npolicy:\n  profile: cpu-small\n"
         "  team: other\n",
         "policy.team", "applies to teams research"},
        {"name: demo\nengine: job\nentrypoint: train.py\nimage: x\npolicy:\n"
         "  workload_priority_class: missing\n",
         "policy.workload_priority_class", "WorkloadPriorityClass \"missing\" does not exist"},
        {"name: demo\nengine: job\nentrypoint: train.py\nimage: x\npolicy:\n"
         "  pod_priority_class: missing\n",
         "policy.pod_priority_class", "PriorityClass \"missing\" does not exist"},
        {"name: demo\nengine: job\nentrypoint: train.py\nimage: x\ncompute:\n  cpu_request: '16'\n",
         "compute.cpu_request", "is larger than its limit 8 (from profile compute.cpu_limit)"},
        {"name: demo\nengine: job\nentrypoint: train.py\npolicy:\n  profile: cpu-small\n", "",
         "no image: profile \"cpu-small\" declares no runtime image"},

    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tg_rc_e rc = resolve(cases[i].yaml, &out);
        if (rc != TG_EUNPROCESSABLE)
            fail_msg("case %zu: rc %d", i, rc);
        const json_t *errs = json_object_get(out, "errors");
        int found = 0;
        size_t k;
        const json_t *e;
        json_array_foreach(errs, k, e) {
            if (strcmp(json_string_value(json_object_get(e, "path")), cases[i].path) == 0 &&
                strstr(tu_msg(e), cases[i].needle))
                found = 1;
        }
        if (!found) {
            tu_dump_errors(out);
            fail_msg("case %zu: no \"%s\" at %s", i, cases[i].needle, cases[i].path);
        }
        json_decref(out);
    }
}

/* A relative metrics.history path needs no storage.output (TauGrid resolves
 * it under the output when there is one, and refuses only an escape). */
static void test_history_without_output(void **state)
{
    (void)state;
    json_t *out = NULL;
    const char *y = "name: demo\nengine: job\nentrypoint: train.py\nimage: x\nmetrics:\n"
                    "  history: [m.jsonl]\n";
    assert_int_equal(tu_check(y, &out), TG_OK);
    json_decref(out);
    y = "name: demo\nengine: job\nentrypoint: train.py\nimage: x\nmetrics:\n"
        "  history: [a/../../m.jsonl]\n";
    assert_int_equal(tu_check(y, &out), TG_EUNPROCESSABLE);
    tu_assert_contains(tu_msg(tu_find_error(out, "metrics.history[0]", 6)),
                       "must not escape storage.output");
    json_decref(out);
}

static void test_priority(void **state)
{
    (void)state;
    json_t *out = NULL;
    const char *y = "name: demo\nengine: job\nentrypoint: train.py\nimage: x\npolicy:\n"
                    "  priority: priority\n  pod_priority_class: high\n";
    (void)y;
    y = "name: demo\nengine: job\nentrypoint: train.py\nimage: x\npolicy:\n  priority: priority\n";
    assert_int_equal(resolve(y, &out), TG_OK);
    assert_string_equal(rstr(out, "policy", "workload_priority_class"), "taugrid-priority");
    assert_int_equal(
        json_integer_value(tu_at(out, "resolved", "policy", "workload_priority_value", NULL)),
        1200);
    json_decref(out);

    y = "name: demo\nengine: job\nentrypoint: train.py\nimage: x\npolicy:\n"
        "  disable_default_priorities: true\n";
    assert_int_equal(resolve(y, &out), TG_OK);
    assert_true(json_is_null(tu_at(out, "resolved", "policy", "workload_priority_class", NULL)));
    json_decref(out);

    /* A defaulted class that the cluster lacks is dropped with a warning. */
    json_t *ctx = ctx_load();
    json_object_set_new(json_object_get(ctx, "workspace"), "default_priority", json_string("gone"));
    tu_files_t f;
    tu_files_init(&f);
    tu_files_add_str(&f, "train.py", "print(1)\n");
    y = "name: demo\nengine: job\nentrypoint: train.py\nimage: x\n";
    assert_int_equal(tu_run_ctx(y, strlen(y), ctx, &f.set, NULL, &out), TG_OK);
    assert_true(json_is_null(tu_at(out, "resolved", "policy", "workload_priority_class", NULL)));
    tu_assert_contains(tu_msg(tu_find_warning(out, "policy", 0)), "\"gone\" does not exist");
    json_decref(out);
    tu_files_clean(&f);
    json_decref(ctx);
}

static void test_ray_resources(void **state)
{
    (void)state;
    json_t *out = NULL;
    const char *y =
        "name: demo\nengine: rayjob\nentrypoint: train.py\npolicy:\n  profile: ray-gpu\n"
        "compute:\n  workers: 2\n  head_cpu_request: '1'\n  head_memory_request: 4Gi\n"
        "  head_memory_limit: 4Gi\n  worker_cpu_limit: '2'\n  cpu_workers: 1\n";
    assert_int_equal(resolve(y, &out), TG_OK);
    /* A request without its limit sets the limit too (TauGrid's RayJob rule). */
    assert_string_equal(rstr(out, "compute", "head_cpu_request"), "1");
    assert_string_equal(rstr(out, "compute", "head_cpu_limit"), "1");
    assert_string_equal(rstr(out, "compute", "head_memory_limit"), "4Gi");
    /* GPU worker defaults, but a default request never exceeds an explicit limit. */
    assert_string_equal(rstr(out, "compute", "worker_cpu_request"), "2");
    assert_string_equal(rstr(out, "compute", "worker_cpu_limit"), "2");
    assert_string_equal(rstr(out, "compute", "worker_memory_request"), "64Gi");
    assert_string_equal(rstr(out, "compute", "worker_memory_limit"), "128Gi");
    assert_string_equal(rstr(out, "compute", "cpu_worker_cpu_request"), "2");
    assert_string_equal(rstr(out, "runtime", "image"),
                        "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.56.0-cuda13.0");
    assert_string_equal(prov(out, "runtime.image"), "default");
    assert_int_equal(
        json_integer_value(tu_at(out, "resolved", "run", "ttl_seconds_after_finished", NULL)), 15);
    json_decref(out);
}

static void test_gpu_class_alias_and_clear(void **state)
{
    (void)state;
    json_t *out = NULL;
    const char *y = "name: demo\nengine: job\nentrypoint: train.py\nimage: x\ncompute:\n  gpus: 1\n"
                    "policy:\n  gpu_class: h200-nvlink-141gb\n  clear_node_selector: true\n"
                    "  node_selector:\n    zone: b\n";
    assert_int_equal(resolve(y, &out), TG_OK);
    assert_string_equal(rstr(out, "policy", "gpu_class"), "h200-141gb");
    tu_assert_contains(tu_msg(tu_find_warning(out, "policy.gpu_class", 8)), "deprecated alias");
    const json_t *sel = tu_at(out, "resolved", "policy", "node_selector", NULL);
    assert_int_equal(json_object_size(sel), 1); /* the profile's pool selector was cleared */
    assert_string_equal(json_string_value(json_object_get(sel, "zone")), "b");
    json_decref(out);
}

static void test_context_malformed(void **state)
{
    (void)state;
    json_t *out = NULL;
    json_t *ctx = json_pack("{s:{s:s}}", "workspace", "name", "x");
    const char *y = "name: demo\nengine: job\nentrypoint: train.py\nimage: x\n";
    tu_files_t f;
    tu_files_init(&f);
    tu_files_add_str(&f, "train.py", "print(1)\n");
    assert_int_equal(tu_run_ctx(y, strlen(y), ctx, &f.set, NULL, &out), TG_EINTERNAL);
    json_decref(out);
    json_decref(ctx);
    tu_files_clean(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precedence_profile_defaults),
        cmocka_unit_test(test_workspace_and_default_queue),
        cmocka_unit_test(test_mismatches),
        cmocka_unit_test(test_history_without_output),
        cmocka_unit_test(test_priority),
        cmocka_unit_test(test_ray_resources),
        cmocka_unit_test(test_gpu_class_alias_and_clear),
        cmocka_unit_test(test_context_malformed),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
