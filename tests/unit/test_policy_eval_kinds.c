/* Every rule kind with a spec that passes and one that fails: outcome,
 * values compared, spec path, line and column. */
#include "test_policy_util.h"

/* name/engine/entrypoint/image on lines 1-4, policy on 5, profile on 6. */
#define JOB_HEAD "name: demo\nengine: job\nentrypoint: train.py\n"
#define JOB_CPU  JOB_HEAD "image: ghcr.io/acme/train:1\npolicy:\n  profile: cpu-small\n"
#define RAY_GPU  "name: demo\nengine: rayjob\nentrypoint: train.py\npolicy:\n  profile: ray-gpu\n"

/* Evaluate `spec` against a one-rule policy and return the rule's single
 * decision's outcome; *d gets the decision (borrowed from run). */
static const json_t *one(tp_run_t *run, const char *policy, const char *spec)
{
    tg_policy_snapshot_t *snap = tp_snapshot(policy);
    tp_eval(snap, spec, run);
    tg_policy_snapshot_release(snap);
    return tp_decision(run, "r");
}

static void expect_deny(const json_t *d, const char *path, int line, int column)
{
    if (strcmp(tp_outcome(d), "deny") != 0 || strcmp(tp_str(d, "path"), path) != 0 ||
        (line && tp_int(d, "line") != line) || (column && tp_int(d, "column") != column)) {
        char *dump = json_dumps(d, JSON_INDENT(1));
        fprintf(stderr, "expected deny at %s %d:%d, got %s\n", path, line, column, dump);
        free(dump);
        fail();
    }
}

static void test_allowed_images(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n"
                      "  allowed_images: [ghcr.io/acme, mcr.microsoft.com, docker.io/library]\n";
    tp_run_t run;
    const json_t *d = one(&run, pol, JOB_CPU);
    assert_string_equal(tp_outcome(d), "allow");
    assert_string_equal(tp_str(d, "actual"), "ghcr.io/acme/train:1");
    assert_int_equal(json_array_size(json_object_get(d, "expected")), 3);
    assert_int_equal(run.rc, TG_OK);
    tp_run_clean(&run);

    /* A prefix matches at a path boundary only. */
    d = one(&run, pol, JOB_HEAD "image: ghcr.io/acme-evil/x:1\npolicy:\n  profile: cpu-small\n");
    expect_deny(d, "image", 4, 8);
    assert_int_equal(run.rc, TG_EUNPROCESSABLE);
    const json_t *e = json_array_get(run.res.errors, 0);
    assert_string_equal(tp_str(e, "rule_id"), "r");
    assert_string_equal(tp_str(e, "path"), "image");
    assert_int_equal(tp_int(e, "line"), 4);
    tu_assert_contains(tp_str(e, "message"), "ghcr.io/acme-evil/x:1");
    tu_assert_contains(tp_str(e, "message"), "(policy r)");
    tp_run_clean(&run);

    d = one(&run, pol,
            JOB_HEAD "image: mcr.microsoft.com.evil.io/x:1\npolicy:\n  profile: cpu-small\n");
    assert_string_equal(tp_outcome(d), "deny");
    tp_run_clean(&run);

    /* Docker Hub short names are docker.io/library/... */
    d = one(&run, pol, JOB_HEAD "runtime:\n  image: bash:5.2\npolicy:\n  profile: cpu-small\n");
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
    d = one(&run, pol,
            JOB_HEAD "runtime:\n  image: someone/tool:1\npolicy:\n  profile: cpu-small\n");
    expect_deny(d, "runtime.image", 5, 10);
    tp_run_clean(&run);

    /* An image from the compute profile is blamed on policy.profile. */
    d = one(&run, pol, JOB_HEAD "policy:\n  profile: gpu-a100\ncompute:\n  gpus: 1\n");
    expect_deny(d, "runtime.image", 5, 12);
    assert_string_equal(tp_str(d, "actual"), "repo/train:1");
    tp_run_clean(&run);
}

static void test_require_image_digest(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n"
                      "  require_image_digest: true\n";
    tp_run_t run;
    const json_t *d =
        one(&run, pol,
            JOB_HEAD "image: ghcr.io/acme/train@sha256:"
                     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
                     "policy:\n  profile: cpu-small\n");
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
    d = one(&run, pol, JOB_CPU);
    expect_deny(d, "image", 4, 8);
    tu_assert_contains(tp_str(d, "message"), "pinned by digest");
    tp_run_clean(&run);
}

static void test_max_gpus_per_run(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n  max_gpus_per_run: 8\n";
    tp_run_t run;
    const json_t *d = one(&run, pol, RAY_GPU "compute:\n  workers: 4\n  gpus_per_worker: 2\n");
    assert_string_equal(tp_outcome(d), "allow");
    assert_int_equal(tp_int(d, "actual"), 8);
    assert_int_equal(tp_int(d, "expected"), 8);
    tp_run_clean(&run);

    d = one(&run, pol, RAY_GPU "compute:\n  workers: 5\n  gpus_per_worker: 2\n");
    expect_deny(d, "compute.gpus_per_worker", 8, 20);
    assert_int_equal(tp_int(d, "actual"), 10);
    tu_assert_contains(tp_str(d, "message"), "10 GPUs (2 per pod x 5 pods)");
    tp_run_clean(&run);

    /* Multi-node Job: gpus x nodes. */
    d = one(&run, pol,
            JOB_HEAD "image: ghcr.io/acme/train:1\ncompute:\n  gpus: 8\nexecution:\n"
                     "  launcher: torchrun\n  nodes: 2\n  processes_per_node: 8\n"
                     "policy:\n  profile: gpu-a100\n");
    expect_deny(d, "compute.gpus", 6, 9);
    assert_int_equal(tp_int(d, "actual"), 16);
    tp_run_clean(&run);
}

static void test_max_gpus_per_worker(void **state)
{
    (void)state;
    const char *pol =
        "rules:\n- id: r\n  description: d\n  action: deny\n  max_gpus_per_worker: 4\n";
    tp_run_t run;
    const char *ok = JOB_HEAD "compute:\n  gpus: 4\npolicy:\n  profile: gpu-a100\n";
    const json_t *d = one(&run, pol, ok);
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
    d = one(&run, pol, JOB_HEAD "compute:\n  gpus: 8\npolicy:\n  profile: gpu-a100\n");
    expect_deny(d, "compute.gpus", 5, 9);
    assert_int_equal(tp_int(d, "actual"), 8);
    tp_run_clean(&run);
    d = one(&run, pol, RAY_GPU "compute:\n  gpus_per_worker: 6\n");
    expect_deny(d, "compute.gpus_per_worker", 7, 20);
    tp_run_clean(&run);
}

static void test_max_nodes(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n  max_nodes: 2\n";
    tp_run_t run;
    const json_t *d = one(&run, pol, RAY_GPU "compute:\n  workers: 2\n");
    assert_string_equal(tp_outcome(d), "allow");
    assert_int_equal(tp_int(d, "actual"), 2);
    tp_run_clean(&run);
    d = one(&run, pol, RAY_GPU "compute:\n  workers: 2\n  cpu_workers: 1\n");
    expect_deny(d, "compute.workers", 7, 12);
    assert_int_equal(tp_int(d, "actual"), 3);
    tp_run_clean(&run);
    d = one(&run, pol,
            JOB_HEAD "image: x/y:1\ncompute:\n  gpus: 1\nexecution:\n  launcher: torchrun\n"
                     "  nodes: 3\npolicy:\n  profile: gpu-a100\n");
    expect_deny(d, "execution.nodes", 9, 10);
    tp_run_clean(&run);
}

static void test_allowed_gpu_classes(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n"
                      "  allowed_gpu_classes: [h100-80gb, \"h200-*\"]\n";
    tp_run_t run;
    const json_t *d = one(&run, pol,
                          JOB_HEAD "compute:\n  gpus: 1\npolicy:\n  profile: gpu-a100\n"
                                   "  gpu_class: h200-141gb\n");
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
    /* The profile's class: named policy.gpu_class, located at policy.profile. */
    d = one(&run, pol, JOB_HEAD "compute:\n  gpus: 1\npolicy:\n  profile: gpu-a100\n");
    expect_deny(d, "policy.gpu_class", 7, 12);
    assert_string_equal(tp_str(d, "actual"), "a100-80gb");
    tp_run_clean(&run);
    /* CPU runs are not checked. */
    d = one(&run, pol, JOB_CPU);
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
}

static void test_allowed_profiles(void **state)
{
    (void)state;
    const char *pol =
        "rules:\n- id: r\n  description: d\n  action: warn\n"
        "  allowed_profiles: [cpu-small]\n  message: \"use {expected}, not {actual}\"\n";
    tp_run_t run;
    const json_t *d = one(&run, pol, JOB_CPU);
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
    d = one(&run, pol, JOB_HEAD "compute:\n  gpus: 1\npolicy:\n  profile: gpu-a100\n");
    assert_string_equal(tp_outcome(d), "warn");
    assert_string_equal(tp_str(d, "path"), "policy.profile");
    assert_int_equal(tp_int(d, "line"), 7);
    assert_string_equal(tp_str(d, "message"), "use cpu-small, not gpu-a100 (policy r)");
    /* warn: the run passes, the finding is a warning */
    assert_int_equal(run.rc, TG_OK);
    assert_int_equal(json_array_size(run.res.errors), 0);
    assert_int_equal(json_array_size(run.res.warnings), 1);
    tp_run_clean(&run);
}

static void test_max_active_deadline(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n"
                      "  max_active_deadline_seconds: 3600\n";
    tp_run_t run;
    const json_t *d = one(&run, pol, JOB_CPU);
    assert_string_equal(tp_outcome(d), "allow");
    assert_true(json_is_null(json_object_get(d, "actual")));
    tp_run_clean(&run);
    d = one(&run, pol, JOB_HEAD "compute:\n  gpus: 1\npolicy:\n  profile: gpu-a100\n");
    expect_deny(d, "run.active_deadline_seconds", 7, 12);
    assert_int_equal(tp_int(d, "actual"), 86400);
    tu_assert_contains(tp_str(d, "message"), "from the profile");
    tp_run_clean(&run);
}

static void test_require_active_deadline(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n"
                      "  require_active_deadline: true\n";
    tp_run_t run;
    const json_t *d =
        one(&run, pol, JOB_HEAD "compute:\n  gpus: 1\npolicy:\n  profile: gpu-a100\n");
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
    d = one(&run, pol, JOB_CPU);
    expect_deny(d, "run.active_deadline_seconds", 1, 1);
    tp_run_clean(&run);
}

static void test_require_security_mode(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n"
                      "  require_security_mode: restricted\n";
    tp_run_t run;
    const json_t *d = one(&run, pol, JOB_CPU "runtime:\n  security:\n    mode: restricted\n");
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
    d = one(&run, pol, JOB_CPU "runtime:\n  env:\n    A: b\n");
    /* Not written: named as the spec would write it, at the section. */
    expect_deny(d, "runtime.security.mode", 7, 1);
    tp_run_clean(&run);
}

static void test_denied_env_names(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n"
                      "  denied_env_names: [LD_PRELOAD, \"AWS_*\"]\n";
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    tp_run_t run;
    tp_eval(snap, JOB_CPU "runtime:\n  env:\n    FOO: bar\n", &run);
    assert_string_equal(tp_outcome(tp_decision(&run, "r")), "allow");
    tp_run_clean(&run);
    tp_eval(snap,
            JOB_CPU "runtime:\n  env:\n    FOO: bar\n    LD_PRELOAD: /x.so\n"
                    "  env_secret:\n    AWS_SECRET_ACCESS_KEY: aws:key\n",
            &run);
    json_t *all = tp_decisions_of(&run, "r");
    assert_int_equal(json_array_size(all), 2);
    expect_deny(json_array_get(all, 0), "runtime.env.LD_PRELOAD", 10, 5);
    expect_deny(json_array_get(all, 1), "runtime.env_secret.AWS_SECRET_ACCESS_KEY", 12, 5);
    assert_string_equal(tp_str(json_array_get(all, 0), "actual"), "LD_PRELOAD");
    assert_int_equal(json_array_size(run.res.errors), 2);
    json_decref(all);
    tp_run_clean(&run);
    tg_policy_snapshot_release(snap);
}

static void test_required_experiment_fields(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n"
                      "  required_experiment_fields: [project, name]\n";
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    tp_run_t run;
    tp_eval(snap, JOB_CPU "experiment:\n  project: p\n  name: n\n", &run);
    const json_t *d = tp_decision(&run, "r");
    assert_string_equal(tp_outcome(d), "allow");
    assert_string_equal(tp_str(json_object_get(d, "actual"), "project"), "p");
    tp_run_clean(&run);
    tp_eval(snap, JOB_CPU "experiment:\n  project: p\n", &run);
    expect_deny(tp_decision(&run, "r"), "experiment.name", 7, 1);
    tp_run_clean(&run);
    tp_eval(snap, JOB_CPU, &run);
    json_t *all = tp_decisions_of(&run, "r");
    assert_int_equal(json_array_size(all), 2);
    json_decref(all);
    tp_run_clean(&run);
    tg_policy_snapshot_release(snap);
}

static void test_max_retries(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n  max_retries: 3\n";
    tp_run_t run;
    const json_t *d = one(&run, pol, JOB_CPU "resilience:\n  max_retries: 2\n");
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
    d = one(&run, pol, JOB_CPU "resilience:\n  max_retries: 5\n");
    expect_deny(d, "resilience.max_retries", 8, 16);
    assert_int_equal(tp_int(d, "actual"), 5);
    tp_run_clean(&run);
}

static void test_allowed_priority_tiers(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n"
                      "  allowed_priority_tiers: [default]\n";
    tp_run_t run;
    const json_t *d = one(&run, pol, JOB_CPU);
    assert_string_equal(tp_outcome(d), "allow");
    assert_string_equal(tp_str(d, "actual"), "default");
    tp_run_clean(&run);
    d = one(&run, pol, JOB_CPU "  priority: priority\n");
    expect_deny(d, "policy.priority", 7, 13);
    tp_run_clean(&run);
}

static void test_max_cpu_per_pod(void **state)
{
    (void)state;
    const char *pol =
        "rules:\n- id: r\n  description: d\n  action: deny\n  max_cpu_per_pod: \"8\"\n";
    tp_run_t run;
    const json_t *d = one(&run, pol, JOB_CPU "compute:\n  cpu_request: 4\n  cpu_limit: 8000m\n");
    assert_string_equal(tp_outcome(d), "allow");
    assert_string_equal(tp_str(d, "actual"), "8000m");
    tp_run_clean(&run);
    d = one(&run, pol, JOB_CPU "compute:\n  cpu_request: \"16\"\n");
    expect_deny(d, "compute.cpu_request", 8, 16);
    tp_run_clean(&run);
    /* A Ray GPU worker's built-in limit is 16 cores: named where the spec
     * would set it, located at compute. */
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    tp_eval(snap, RAY_GPU "compute:\n  workers: 1\n  head_cpu_request: \"2\"\n", &run);
    json_t *all = tp_decisions_of(&run, "r");
    assert_int_equal(json_array_size(all), 1);
    expect_deny(json_array_get(all, 0), "compute.worker_cpu_limit", 6, 1);
    json_decref(all);
    tp_run_clean(&run);
    tg_policy_snapshot_release(snap);
}

static void test_max_memory_per_pod(void **state)
{
    (void)state;
    const char *pol =
        "rules:\n- id: r\n  description: d\n  action: deny\n  max_memory_per_pod: 16Gi\n";
    tp_run_t run;
    const json_t *d = one(&run, pol, JOB_CPU "compute:\n  memory_request: 8Gi\n");
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
    /* The profile asks for 32Gi. */
    d = one(&run, pol, JOB_HEAD "compute:\n  gpus: 1\npolicy:\n  profile: gpu-a100\n");
    expect_deny(d, "compute.memory_request", 7, 12);
    assert_string_equal(tp_str(d, "actual"), "32Gi");
    tp_run_clean(&run);
}

/* Issue #17: 300 cores and an exabyte, however they are spelt, are refused
 * by a per-pod limit (the parser used to fail on them and the check skipped
 * the value). */
static void test_per_pod_limits_see_every_spelling(void **state)
{
    (void)state;
    const char *cpu =
        "rules:\n- id: r\n  description: d\n  action: deny\n  max_cpu_per_pod: \"16\"\n";
    const char *mem =
        "rules:\n- id: r\n  description: d\n  action: deny\n  max_memory_per_pod: 2T\n";
    static const char *const cores[] = {"\"300\"", "0.0000000000000003E", "3e2", "300000000000n"};
    tp_run_t run;
    char spec[256];
    for (size_t i = 0; i < sizeof(cores) / sizeof(cores[0]); i++) {
        snprintf(spec, sizeof(spec), JOB_CPU "compute:\n  cpu_request: %s\n", cores[i]);
        expect_deny(one(&run, cpu, spec), "compute.cpu_request", 8, 16);
        tp_run_clean(&run);
    }
    static const char *const bytes[] = {"3T", "0.000003E", "1Ei", "9Ei"};
    for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
        snprintf(spec, sizeof(spec), JOB_CPU "compute:\n  memory_request: %s\n", bytes[i]);
        expect_deny(one(&run, mem, spec), "compute.memory_request", 8, 19);
        tp_run_clean(&run);
    }
    /* exactly the limit passes; one nano-core more does not */
    const json_t *d = one(&run, cpu, JOB_CPU "compute:\n  cpu_request: 16000000000n\n");
    assert_string_equal(tp_outcome(d), "allow");
    tp_run_clean(&run);
    d = one(&run, cpu, JOB_CPU "compute:\n  cpu_request: 16000000001n\n");
    expect_deny(d, "compute.cpu_request", 8, 16);
    tp_run_clean(&run);
}

/* A value a rule cannot read is refused, never skipped (the resolved config
 * is built here by hand: the spec pipeline would stop such values first). */
static void test_unreadable_values_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *rule, *resolved, *path;
    } cases[] = {
        {"max_cpu_per_pod: \"16\"", "{\"compute\": {\"cpu_request\": \"lots\"}}",
         "compute.cpu_request"},
        {"max_memory_per_pod: 1Gi", "{\"compute\": {\"memory_limit\": true}}",
         "compute.memory_limit"},
        {"max_gpus_per_run: 8", "{\"compute\": {\"gpu_count\": \"2\"}}", "compute.gpu_count"},
        {"max_gpus_per_worker: 8", "{\"compute\": {\"gpu_count\": -1}}", "compute.gpu_count"},
        {"max_nodes: 4", "{\"execution\": {\"nodes\": 2.5}}", "execution.nodes"},
        {"max_retries: 3", "{\"resilience\": {\"max_retries\": \"1\"}}", "resilience.max_retries"},
        {"max_active_deadline_seconds: 60", "{\"run\": {\"active_deadline_seconds\": 1e9}}",
         "run.active_deadline_seconds"},
        {"allowed_images: [ghcr.io/acme]", "{\"runtime\": {\"image\": 7}}", "runtime.image"},
        {"allowed_priority_tiers: [default]", "{\"policy\": {\"priority_tier\": [1]}}",
         "policy.priority_tier"},
        {"allowed_pvcs: [data-a]", "{\"storage\": {\"data_pvc\": {}}}", "storage.data_pvc"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char pol[256];
        snprintf(pol, sizeof(pol), "rules:\n- id: r\n  description: d\n  action: deny\n  %s\n",
                 cases[i].rule);
        tg_policy_snapshot_t *snap = tp_snapshot(pol);
        json_t *resolved = json_loads(cases[i].resolved, 0, NULL);
        assert_non_null(resolved);
        json_object_set_new(resolved, "engine", json_string("job"));
        tg_policy_input_t in = {.resolved = resolved};
        tg_policy_result_t res;
        assert_int_equal(tg_policy_evaluate(snap, &in, &res), TG_EUNPROCESSABLE);
        json_t *decisions = tg_policy_result_decisions(&res);
        const json_t *d = json_array_get(decisions, 0);
        if (json_array_size(decisions) != 1 || strcmp(tp_outcome(d), "deny") != 0 ||
            strcmp(tp_str(d, "path"), cases[i].path) != 0)
            fail_msg("%s on %s was not refused at %s", cases[i].rule, cases[i].resolved,
                     cases[i].path);
        json_decref(decisions);
        tg_policy_result_clean(&res);
        json_decref(resolved);
        tg_policy_snapshot_release(snap);
    }
}

static void test_allowed_pvcs(void **state)
{
    (void)state;
    const char *pol = "rules:\n- id: r\n  description: d\n  action: deny\n"
                      "  allowed_pvcs: [data-a, \"scratch-*\"]\n";
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    tp_run_t run;
    tp_eval(snap, JOB_CPU "storage:\n  data_pvc: data-a\n  volumes: [scratch-1]\n", &run);
    const json_t *d = tp_decision(&run, "r");
    assert_string_equal(tp_outcome(d), "allow");
    assert_int_equal(json_array_size(json_object_get(d, "actual")), 2);
    tp_run_clean(&run);
    tp_eval(snap,
            JOB_CPU "storage:\n  data_pvc: data-a\n  volumes:\n    - scratch-1\n    - models\n",
            &run);
    expect_deny(tp_decision(&run, "r"), "storage.volumes[1]", 11, 7);
    tp_run_clean(&run);
    tp_eval(snap, JOB_CPU "storage:\n  data_pvc: models\n", &run);
    expect_deny(tp_decision(&run, "r"), "storage.data_pvc", 8, 13);
    assert_string_equal(tp_str(tp_decision(&run, "r"), "actual"), "models");
    tp_run_clean(&run);
    tg_policy_snapshot_release(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allowed_images),
        cmocka_unit_test(test_require_image_digest),
        cmocka_unit_test(test_max_gpus_per_run),
        cmocka_unit_test(test_max_gpus_per_worker),
        cmocka_unit_test(test_max_nodes),
        cmocka_unit_test(test_allowed_gpu_classes),
        cmocka_unit_test(test_allowed_profiles),
        cmocka_unit_test(test_max_active_deadline),
        cmocka_unit_test(test_require_active_deadline),
        cmocka_unit_test(test_require_security_mode),
        cmocka_unit_test(test_denied_env_names),
        cmocka_unit_test(test_required_experiment_fields),
        cmocka_unit_test(test_max_retries),
        cmocka_unit_test(test_allowed_priority_tiers),
        cmocka_unit_test(test_max_cpu_per_pod),
        cmocka_unit_test(test_max_memory_per_pod),
        cmocka_unit_test(test_per_pod_limits_see_every_spelling),
        cmocka_unit_test(test_unreadable_values_are_refused),
        cmocka_unit_test(test_allowed_pvcs),
    };
    return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
