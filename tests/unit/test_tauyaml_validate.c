/* Schema and semantic validation: each bad input is reported with its path,
 * line and a message that says how to fix it. */
#include "pipeline_test_util.h"

typedef struct vcase_s {
    const char *what;
    const char *yaml;
    const char *path;
    unsigned line;
    const char *needle;
} vcase_t;

#define JOB "name: demo\nengine: job\nentrypoint: train.py\nruntime:\n  image: python:3.12\n"
#define RAY "name: demo\nengine: rayjob\nentrypoint: train.py\n"

static void run_cases(const vcase_t *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *out = NULL;
        tg_rc_e rc = tu_check(cases[i].yaml, &out);
        if (rc != TG_EUNPROCESSABLE)
            fprintf(stderr, "case \"%s\": rc %d\n", cases[i].what, rc);
        assert_int_equal(rc, TG_EUNPROCESSABLE);
        const json_t *e = tu_find_error(out, cases[i].path, cases[i].line);
        if (!strstr(tu_msg(e), cases[i].needle))
            fprintf(stderr, "case \"%s\"\n", cases[i].what);
        tu_assert_contains(tu_msg(e), cases[i].needle);
        assert_true(json_integer_value(json_object_get(e, "column")) >= 1);
        json_decref(out);
    }
}

static void test_schema_errors(void **state)
{
    (void)state;
    static const vcase_t cases[] = {
        {"unknown key", JOB "compute:\n  gpuz: 1\n", "compute.gpuz", 7,
         "unknown field \"gpuz\" in compute: it is not a field of the direct run config; did you "
         "mean \"gpus\"?"},
        {"unknown top-level key", JOB "bogus: 1\n", "bogus", 6,
         "unknown top-level field \"bogus\""},
        {"wrong type", JOB "compute:\n  gpus: two\n", "compute.gpus", 7,
         "compute.gpus must be an integer, got the string \"two\""},
        {"wrong type (mapping)", "name: [a]\nengine: job\n", "name", 1,
         "name must be a string, got a list"},
        {"yes is a string", JOB "policy:\n  disable_default_priorities: yes\n",
         "policy.disable_default_priorities", 7, "yes/no/on/off are strings"},
        {"bad engine", "name: demo\nengine: spark\nentrypoint: train.py\n", "engine", 2,
         "engine \"spark\" is not valid; use job or rayjob"},
        {"bad enum", JOB "policy:\n  lane: fast\n", "policy.lane", 7,
         "policy.lane=\"fast\" is invalid (allowed: eval|training|large-memory|elastic)"},
        {"gpus < 0", JOB "compute:\n  gpus: -1\n", "compute.gpus", 7, "compute.gpus must be >= 0"},
        {"ttl range", JOB "run:\n  ttl_seconds_after_finished: 2147483648\n",
         "run.ttl_seconds_after_finished", 7, "Kubernetes int32 maximum"},
        {"ttl zero", JOB "run:\n  ttl_seconds_after_finished: 0\n",
         "run.ttl_seconds_after_finished", 7, "must be > 0"},
        {"dns name", "name: My_Run\nengine: job\nentrypoint: train.py\n", "name", 1,
         "is not a valid DNS-1123 label"},
        {"quantity", JOB "compute:\n  cpu_request: 2 cores\n", "compute.cpu_request", 7,
         "is not a Kubernetes quantity"},
        {"duration", JOB "resilience:\n  backoff_initial: 30 seconds\n",
         "resilience.backoff_initial", 7, "is not a Go duration"},
        {"env name", JOB "  env:\n    1BAD: x\n", "runtime.env.1BAD", 7, "Kubernetes C_IDENTIFIER"},
        {"env_secret form", JOB "  env_secret:\n    TOKEN: just-a-name\n",
         "runtime.env_secret.TOKEN", 7, "must be SECRET_NAME:KEY"},
        {"mig profile", JOB "compute:\n  gpu_resource_mode: mig\n  mig_profile: big\n",
         "compute.mig_profile", 8, "must look like 1g.18gb"},
        {"gpu mode dra", JOB "compute:\n  gpu_resource_mode: dra\n", "compute.gpu_resource_mode", 7,
         "\"dra\" is not supported here; use device-plugin or mig"},
        {"security mode", JOB "  security:\n    mode: privileged\n", "runtime.security.mode", 7,
         "runtime.security.mode must be \"restricted\" or omitted"},
        {"pip whitespace", JOB "  pip:\n    - ' torch'\n", "runtime.pip[0]", 7,
         "may not have surrounding whitespace"},
        {"retry_on enum", JOB "resilience:\n  retry_on: [Crashed]\n", "resilience.retry_on[0]", 7,
         "allowed: Preempted|Evicted|OOMKilled"},
        {"offload.out",
         RAY "metrics:\n  history: [a.jsonl]\n  offload:\n    enabled: true\n"
             "    out: /var/run/x\n",
         "metrics.offload.out", 8, "unknown field \"out\" in metrics.offload"},
    };
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_unsupported_fields(void **state)
{
    (void)state;
    static const vcase_t cases[] = {
        {"profiler", JOB "profiler:\n  mode: nsys\n", "profiler", 6, "does not support"},
        {"workflow", JOB "workflow:\n  file: x.yaml\n", "workflow", 6, "does not support"},
        {"env_kv", JOB "  env_kv:\n    A: b\n", "runtime.env_kv", 6,
         "runtime.env_kv is only supported for workflow.file managed configs"},
        {"run.source image", JOB "run:\n  source:\n    image: x\n    path: /src\n",
         "run.source.image", 8, "pinned by an @sha256"},
        {"task eval", JOB "task: eval\n", "task", 6,
         "task: eval, eval.harness, and eval.model were removed"},
        {"run.task eval", JOB "run:\n  task: eval\n", "run.task", 7, "were removed"},
        {"policy.preset", JOB "policy:\n  preset: x\n", "policy.preset", 7,
         "not a field of the direct run config"},
        {"policy.mode elastic", JOB "policy:\n  mode: elastic\n", "policy.mode", 7,
         "mode=elastic requires checkpoint/restart semantics"},
    };
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* schema_version next to an engine is a direct config, where TauGrid gives
 * it no meaning. */
static void test_schema_version_with_engine(void **state)
{
    (void)state;
    json_t *out = NULL;
    assert_int_equal(tu_check("schema_version: 1\n" JOB, &out), TG_OK);
    json_decref(out);
}

static void test_semantic_errors(void **state)
{
    (void)state;
    static const vcase_t cases[] = {
        {"reserved TAU_", JOB "  env:\n    TAU_OUTPUT_DIR: /x\n", "runtime.env.TAU_OUTPUT_DIR", 7,
         "env \"TAU_OUTPUT_DIR\" is reserved: Tau owns the TAU_ namespace; the only TAU_ keys you "
         "can set are TAU_RESUME_FROM, TAU_RETRY_ATTEMPT, TAU_RETRY_MAX, TAU_RETRY_REASON"},
        {"reserved tau_ lowercase", JOB "  env:\n    tau_x: y\n", "runtime.env.tau_x", 7,
         "is reserved"},
        {"reserved MASTER_", JOB "  env:\n    MASTER_PORT: '1'\n", "runtime.env.MASTER_PORT", 7,
         "cannot be overridden"},
        {"reserved master_ lowercase", JOB "  env:\n    master_addr: x\n",
         "runtime.env.master_addr", 7, "cannot be overridden"},
        {"reserved NCCL_", JOB "  env:\n    NCCL_DEBUG: INFO\n", "runtime.env.NCCL_DEBUG", 7,
         "execution.allow_nccl_override"},
        {"reserved in env_secret", JOB "  env_secret:\n    TAU_TOKEN: s:k\n",
         "runtime.env_secret.TAU_TOKEN", 7, "is reserved"},
        {"env conflict", JOB "  env:\n    TOKEN: x\n  env_secret:\n    TOKEN: s:k\n",
         "runtime.env_secret.TOKEN", 9,
         "runtime.env_secret.TOKEN conflicts with runtime.env.TOKEN; set each env var in only one "
         "place"},
        {"rayjob name too long",
         "name: abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdez\nengine: "
         "rayjob\nentrypoint: train.py\n",
         "name", 1, "is 50 characters; a RayJob name may be at most 47 characters (KubeRay limit)"},
        {"torchrun ppn > gpus",
         JOB "compute:\n  gpus: 2\nexecution:\n  launcher: torchrun\n"
             "  processes_per_node: 4\n",
         "execution.processes_per_node", 10,
         "execution.processes_per_node (4) may not exceed the GPU count (compute.gpus: 2)"},
        {"ppn without torchrun", JOB "execution:\n  processes_per_node: 2\n",
         "execution.processes_per_node", 7,
         "execution.processes_per_node > 1 requires execution.launcher: torchrun"},
        {"nodes without torchrun", JOB "execution:\n  nodes: 2\n", "execution.nodes", 7,
         "engine=job with execution.nodes=2 requires execution.launcher=torchrun"},
        {"ray launcher on job", JOB "execution:\n  launcher: ray-train\n", "execution.launcher", 7,
         "execution.launcher \"ray-train\" requires engine: rayjob (needs a Ray cluster); got "
         "engine: job"},
        {"torchrun on rayjob", RAY "execution:\n  launcher: torchrun\n", "execution.launcher", 5,
         "execution.launcher torchrun is for engine: job; Ray Train manages distributed init via "
         "TorchConfig"},
        {"nodes on rayjob", RAY "execution:\n  nodes: 2\n", "execution.nodes", 5,
         "execution.nodes is for engine: job; use compute.workers for RayJob pod count"},
        {"tune without metric",
         RAY "execution:\n  launcher: ray-tune\n  configs:\n    lr: [1, 2]\n", "execution.launcher",
         5, "execution.metric is required for launcher: ray-tune"},
        {"tune without configs", RAY "execution:\n  launcher: ray-tune\n  metric: loss\n",
         "execution.launcher", 5, "execution.configs is required for launcher: ray-tune"},
        {"tune settings without tune", RAY "execution:\n  metric: loss\n", "execution.metric", 5,
         "require execution.launcher: ray-tune"},
        {"clear selector on ray", RAY "policy:\n  clear_node_selector: true\n",
         "policy.clear_node_selector", 5,
         "policy.clear_node_selector requires engine: job; RayJobs cannot clear profile/topology "
         "node selectors"},
        {"gpus_per_worker on job", JOB "compute:\n  gpus_per_worker: 1\n",
         "compute.gpus_per_worker", 7, "cannot set compute.gpus_per_worker"},
        {"working_dir on job", JOB "run:\n  working_dir: .\n", "run.working_dir", 7,
         "requires engine: rayjob"},
        {"runtime.working_dir relative", JOB "  working_dir: work/dir\n", "runtime.working_dir", 6,
         "must be a clean absolute container path"},
        {"ttl on ray", RAY "run:\n  ttl_seconds_after_finished: 60\n",
         "run.ttl_seconds_after_finished", 5, "requires engine: job"},
        {"mig without profile", JOB "compute:\n  gpus: 1\n  gpu_resource_mode: mig\n",
         "compute.gpu_resource_mode", 8, "compute.mig_profile is required"},
        {"request > limit", JOB "compute:\n  cpu_request: '2'\n  cpu_limit: 500m\n",
         "compute.cpu_request", 7, "a request may not exceed its limit"},
        /* one byte over, beyond what a double tells apart */
        {"request > limit, exactly",
         JOB "compute:\n  memory_request: '9007199254740993'\n  memory_limit: '9007199254740992'\n",
         "compute.memory_request", 7, "a request may not exceed its limit"},
        {"backoff order", JOB "resilience:\n  backoff_initial: 10m\n  backoff_max: 1m\n",
         "resilience.backoff_initial", 7, "is longer than resilience.backoff_max"},
        {"output relative", JOB "storage:\n  output: out/dir\n", "storage.output", 7,
         "must be a clean absolute path"},
        {"checkpoint dots", JOB "storage:\n  data_pvc: pvc\n  checkpoint: ../model\n",
         "storage.checkpoint", 8, "without '.' or '..' segments"},
        {"checkpoint backslash", JOB "storage:\n  data_pvc: pvc\n  checkpoint: 'a\\\\b'\n",
         "storage.checkpoint", 8, "without '.' or '..' segments"},
        {"history outside /data", JOB "metrics:\n  history: [/tmp/m.jsonl]\n", "metrics.history[0]",
         7, "absolute paths must be under /data"},
        {"history escapes",
         JOB "storage:\n  output: /data/out\nmetrics:\n  history: [../../m.jsonl]\n",
         "metrics.history[0]", 9, "must not escape storage.output"},
        {"mount overlaps reserved",
         JOB "storage:\n  volumes: [extra]\n  mounts: ['extra:/data/x']\n", "storage.mounts[0]", 8,
         "overlaps /data, which taugate reserves"},
        {"mount unknown pvc", JOB "storage:\n  mounts: ['other:/models']\n", "storage.mounts[0]", 7,
         "not listed in storage.volumes"},
        {"result_pvc differs", JOB "storage:\n  data_pvc: a\n  result_pvc: b\n",
         "storage.result_pvc", 8, "must equal storage.data_pvc"},
        {"configs null", JOB "execution:\n  configs:\n    lr:\n", "execution.configs.lr", 8,
         "use empty string for a bare flag"},
        {"torchrun denied flag",
         JOB "compute:\n  gpus: 1\nexecution:\n  launcher: torchrun\n"
             "  configs:\n    nnodes: 2\n",
         "execution.configs.nnodes", 11, "is managed by taugate"},
        {"ray-train sections", RAY "execution:\n  configs:\n    lr: 1\n", "execution.configs.lr", 6,
         "takes only torch_config, scaling_config and failure_config"},
        {"ray-train num_workers",
         RAY "execution:\n  configs:\n    scaling_config:\n"
             "      num_workers: 4\n",
         "execution.configs.scaling_config.num_workers", 7, "is managed by taugate"},
        {"name conflict", JOB "run:\n  name: other\n", "run.name", 7,
         "run.name \"other\" conflicts with name \"demo\""},
        {"priority_tier combos",
         JOB "policy:\n  priority_tier: priority\n"
             "  disable_default_priorities: true\n",
         "policy.priority_tier", 7, "cannot be combined"},
        {"gpu_class any + selector",
         JOB "policy:\n  gpu_class: any\n  node_selector:\n"
             "    tau.azure.com/gpu-class: a100-80gb\n",
         "policy.gpu_class", 7, "cannot be combined with a tau.azure.com/gpu-class node selector"},
        {"gpu_class mismatch",
         JOB "policy:\n  gpu_class: h100-80gb\n  node_selector:\n"
             "    tau.azure.com/gpu-class: a100-80gb\n",
         "policy.gpu_class", 7,
         "gpu_class \"h100-80gb\" requires tau.azure.com/gpu-class=\"h100-80gb\", but the workload "
         "node selector uses \"a100-80gb\""},
        {"bad label key", JOB "policy:\n  node_selector:\n    'bad key': x\n",
         "policy.node_selector[\"bad key\"]", 8, "not a valid Kubernetes label key"},
        {"pip without entrypoint", "name: demo\nengine: job\nruntime:\n  image: x\n  pip: [a]\n",
         "runtime.pip", 5, "needs an entrypoint"},
        {"rayjob needs entrypoint", "name: demo\nengine: rayjob\n", "engine", 2,
         "requires entrypoint"},
        {"invalid engine", "name: demo\nengine: ' Kubernetes'\nentrypoint: train.py\n", "engine", 2,
         "engine \"kubernetes\" is not valid; use job or rayjob"},
        {"workload_kind conflict",
         "name: demo\nengine: job\nentrypoint: train.py\ncompute:\n"
         "  workload_kind: ray-train\n",
         "compute.workload_kind", 5, "engine=job conflicts with workload_kind=ray-train"},
        {"missing name", "engine: job\nentrypoint: train.py\n", "", 1, "name is required"},
        {"ray entrypoint path", "name: demo\nengine: rayjob\nentrypoint: dir/train.py\n",
         "entrypoint", 3, "must be a single file name; set run.working_dir"},
    };
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_env_sizes(void **state)
{
    (void)state;
    size_t big = 64 * 1024 + 1;
    char *y = malloc(big + 512);
    int n = snprintf(y, 512, JOB "  env:\n    BIG: '");
    memset(y + n, 'x', big);
    snprintf(y + n + big, 64, "'\n");
    json_t *out = NULL;
    assert_int_equal(tu_check(y, &out), TG_EUNPROCESSABLE);
    const json_t *e = tu_find_error(out, "runtime.env.BIG", 7);
    tu_assert_contains(tu_msg(e), "is 65537 bytes; a literal env value may be at most 65536 bytes");
    assert_int_equal(tu_nerrors(out), 1);
    json_decref(out);

    /* Three 50 KiB values: each fits, the total does not. */
    size_t v = 50 * 1024;
    y = realloc(y, 3 * v + 1024);
    n = snprintf(y, 512, JOB "  env:\n");
    for (int i = 0; i < 3; i++) {
        n += snprintf(y + n, 64, "    V%d: '", i);
        memset(y + n, 'y', v);
        n += (int)v;
        n += snprintf(y + n, 8, "'\n");
    }
    assert_int_equal(tu_check(y, &out), TG_EUNPROCESSABLE);
    e = tu_find_error(out, "runtime.env", 6);
    tu_assert_contains(tu_msg(e), "the limit is 131072 bytes");
    json_decref(out);
    free(y);
}

static void test_accepts_and_normalises(void **state)
{
    (void)state;
    json_t *out = NULL;
    /* Unquoted numbers where strings are expected, TAU_RESUME_FROM, nulls as
     * unset, NCCL unlocked, a rayjob name of exactly 47 characters. */
    const char *y =
        "name: abcdefghij-abcdefghij-abcdefghij-abcdefghij-abz\nengine: ray\n"
        "entrypoint: train.py\nruntime:\n  env:\n    STEPS: 48\n    LR: 2e-3\n"
        "    FLAG: true\n    EMPTY:\n    TAU_RESUME_FROM: /data/ck\n    NCCL_DEBUG: INFO\n"
        "compute:\n  head_cpu_limit: 1\n  head_cpu_request: 0.5\nstorage:\n  output:\n"
        "execution:\n  allow_nccl_override: true\n";
    assert_int_equal(tu_check(y, &out), TG_OK);
    const json_t *env = tu_at(out, "resolved", "runtime", "env", NULL);
    assert_string_equal(json_string_value(json_object_get(env, "STEPS")), "48");
    assert_string_equal(json_string_value(json_object_get(env, "LR")), "2e-3");
    assert_string_equal(json_string_value(json_object_get(env, "FLAG")), "true");
    assert_string_equal(json_string_value(json_object_get(env, "EMPTY")), "");
    assert_string_equal(
        json_string_value(tu_at(out, "resolved", "compute", "head_cpu_limit", NULL)), "1");
    assert_string_equal(
        json_string_value(tu_at(out, "resolved", "compute", "head_cpu_request", NULL)), "0.5");
    assert_string_equal(json_string_value(tu_at(out, "resolved", "engine", NULL)), "rayjob");
    assert_true(json_is_null(tu_at(out, "resolved", "storage", "output", NULL)));
    json_decref(out);
}

static void test_all_errors_together(void **state)
{
    (void)state;
    json_t *out = NULL;
    const char *y = "name: Bad_Name\nengine: job\nentrypoint: train.py\ncompute:\n  gpus: x\n"
                    "policy:\n  lane: nope\nruntime:\n  image: python\n  env:\n    TAU_X: y\n";
    assert_int_equal(tu_check(y, &out), TG_EUNPROCESSABLE);
    assert_int_equal(tu_nerrors(out), 4);
    /* Sorted by position. */
    tu_find_error(out, "name", 1);
    tu_find_error(out, "compute.gpus", 5);
    tu_find_error(out, "policy.lane", 7);
    tu_find_error(out, "runtime.env.TAU_X", 11);
    const json_t *errs = json_object_get(out, "errors");
    for (size_t i = 1; i < json_array_size(errs); i++)
        assert_true(json_integer_value(json_object_get(json_array_get(errs, i - 1), "line")) <=
                    json_integer_value(json_object_get(json_array_get(errs, i), "line")));
    json_decref(out);
}

static void test_warnings(void **state)
{
    (void)state;
    json_t *out = NULL;
    const char *y = RAY "metrics:\n  history: [/data/m/*.jsonl]\n  offload:\n    enabled: true\n"
                        "resilience:\n  retry_on: [Evicted]\n"
                        "experiment:\n  project: demo\n  name: run\n";
    assert_int_equal(tu_check(y, &out), TG_OK);
    tu_assert_contains(tu_msg(tu_find_warning(out, "metrics.offload.enabled", 7)),
                       "taugate collects metrics.history itself");
    tu_assert_contains(tu_msg(tu_find_warning(out, "resilience.retry_on", 9)), "no effect");
    json_decref(out);
}

static void test_files(void **state)
{
    (void)state;
    json_t *out = NULL;
    tu_files_t f;
    tu_files_init(&f);
    const char *y = JOB;
    assert_int_equal(tu_run(y, strlen(y), NULL, &f.set, NULL, &out), TG_EUNPROCESSABLE);
    tu_assert_contains(tu_msg(tu_find_error(out, "entrypoint", 3)),
                       "entrypoint \"train.py\" was not among the submitted files");
    json_decref(out);

    tu_files_add_str(&f, "run.sh", "echo no shebang\n");
    y = "name: demo\nengine: job\nscript: run.sh\nimage: bash:5.2\n";
    assert_int_equal(tu_run(y, strlen(y), NULL, &f.set, NULL, &out), TG_EUNPROCESSABLE);
    tu_assert_contains(tu_msg(tu_find_error(out, "script", 3)),
                       "script \"run.sh\" has no shebang and is not a .py file; add a shebang or "
                       "set execution.launcher: python");
    json_decref(out);

    y = RAY "run:\n  working_dir: .\n";
    assert_int_equal(tu_run(y, strlen(y), NULL, &f.set, NULL, &out), TG_EUNPROCESSABLE);
    tu_assert_contains(tu_msg(tu_find_error(out, "run.working_dir", 5)),
                       "run.working_dir needs the project files");
    json_decref(out);

    tu_files_add_str(&f, TG_TAUYAML_PROJECT_ARCHIVE, "not a zip at all, just text padding....");
    assert_int_equal(tu_run(y, strlen(y), NULL, &f.set, NULL, &out), TG_EUNPROCESSABLE);
    tu_assert_contains(tu_msg(tu_find_error(out, "run.working_dir", 5)), "is not a valid zip");
    json_decref(out);
    tu_files_clean(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_errors),
        cmocka_unit_test(test_unsupported_fields),
        cmocka_unit_test(test_schema_version_with_engine),
        cmocka_unit_test(test_semantic_errors),
        cmocka_unit_test(test_env_sizes),
        cmocka_unit_test(test_accepts_and_normalises),
        cmocka_unit_test(test_all_errors_together),
        cmocka_unit_test(test_warnings),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
