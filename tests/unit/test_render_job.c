/* Job rendering: names, metadata contract, GPUs, Indexed torchrun, retries,
 * determinism and the render-time input checks. */
#include "pipeline_test_util.h"

#include "render/metadata.h"
#include "render/render.h"
#include "tauyaml/units.h"

static const char *const job_yaml =
    "name: unit-job\nengine: job\nentrypoint: train.py\nimage: python:3.12\n"
    "compute:\n  gpus: 2\n  cpu_request: '1'\n"
    "execution:\n  launcher: torchrun\n  nodes: 3\n  processes_per_node: 2\n"
    "policy:\n  gpu_class: a100-80gb\n  node_selector:\n    zone: west\n"
    "resilience:\n  max_retries: 2\n";

static json_t *resolve_job(const char *yaml, tu_files_t *f, tg_tauyaml_prov_t *prov)
{
    tu_files_init(f);
    tu_files_add_str(f, "train.py", "print('x')\n");
    json_t *out = NULL;
    tg_rc_e rc = tu_run(yaml, strlen(yaml), NULL, &f->set, NULL, &out);
    if (rc != TG_OK)
        tu_dump_errors(out);
    assert_int_equal(rc, TG_OK);
    json_t *resolved = json_incref(json_object_get(out, "resolved"));
    tg_tauyaml_prov_init(prov);
    tg_tauyaml_prov_add_json(prov, json_object_get(out, "provenance"));
    json_decref(out);
    return resolved;
}

static void test_object_name(void **state)
{
    (void)state;
    char n[64];
    assert_int_equal(tg_render_object_name("0b6f7c2e-1d7a-4f53-9a43-0c1e5a0d3b01", 1, n, sizeof(n)),
                     0);
    assert_string_equal(n, "r0b6f7c2e-1d7a-4f53-9a43-0c1e5a0d3b01-a1");
    assert_int_equal(tg_render_object_name("My_Run..X", 12, n, sizeof(n)), 0);
    assert_string_equal(n, "my-run-x-a12");
    const char *longid = "a-very-long-run-identifier-that-keeps-going-and-going-forever";
    assert_int_equal(tg_render_object_name(longid, 3, n, sizeof(n)), 0);
    assert_true(strlen(n) <= 47);
    assert_true(tg_tauyaml_dns_label(n, 47));
    char n2[64];
    assert_int_equal(tg_render_object_name(longid, 3, n2, sizeof(n2)), 0);
    assert_string_equal(n, n2); /* stable, so resubmission is idempotent */
    assert_int_equal(tg_render_object_name("", 1, n, sizeof(n)), -1);
}

static void test_indexed_torchrun(void **state)
{
    (void)state;
    tu_files_t f;
    tg_tauyaml_prov_t prov;
    json_t *rc = resolve_job(job_yaml, &f, &prov);
    tg_render_opts_t opts = {.run_id = "run-7", .attempt = 1};
    json_t *m = NULL;
    char err[256];
    assert_int_equal(tg_render_manifests(rc, &prov, &f.set, &opts, &m, err, sizeof(err)), TG_OK);
    assert_int_equal(json_array_size(m), 2);
    const json_t *svc = json_array_get(m, 0), *job = json_array_get(m, 1);
    assert_string_equal(json_string_value(json_object_get(svc, "kind")), "Service");
    assert_string_equal(json_string_value(tu_at(svc, "metadata", "name", NULL)),
                        "run-7-a1-headless");
    assert_string_equal(json_string_value(tu_at(svc, "spec", "clusterIP", NULL)), "None");
    assert_string_equal(json_string_value(tu_at(job, "spec", "completionMode", NULL)), "Indexed");
    assert_int_equal(json_integer_value(tu_at(job, "spec", "completions", NULL)), 3);
    assert_int_equal(json_integer_value(tu_at(job, "spec", "parallelism", NULL)), 3);
    assert_int_equal(json_integer_value(tu_at(job, "spec", "backoffLimit", NULL)), 0);
    const json_t *pod = tu_at(job, "spec", "template", "spec", NULL);
    assert_string_equal(json_string_value(json_object_get(pod, "subdomain")), "run-7-a1-headless");
    const json_t *c = tu_at(pod, "containers", "#0", NULL);
    assert_string_equal(
        json_string_value(tu_at(c, "resources", "requests", "nvidia.com/gpu", NULL)), "2");
    assert_string_equal(json_string_value(tu_at(c, "resources", "limits", "nvidia.com/gpu", NULL)),
                        "2");
    assert_string_equal(tu_env(c, "MASTER_ADDR"), "run-7-a1-0.run-7-a1-headless");
    assert_string_equal(tu_env(c, "TAU_WORLD_SIZE"), "6");
    tu_assert_contains(json_string_value(tu_at(c, "command", "#2", NULL)),
                       "--rdzv-endpoint=run-7-a1-0.run-7-a1-headless:29500");
    assert_string_equal(
        json_string_value(tu_at(pod, "nodeSelector", "tau.azure.com/gpu-class", NULL)),
        "a100-80gb");
    assert_string_equal(json_string_value(tu_at(pod, "nodeSelector", "zone", NULL)), "west");
    assert_string_equal(json_string_value(tu_at(job, "metadata", "labels", TG_LABEL_RUN_ID, NULL)),
                        "run-7");
    const char *hash =
        json_string_value(tu_at(job, "metadata", "annotations", TG_ANN_CONFIG_HASH, NULL));
    char want[72];
    tg_render_config_hash(rc, want);
    assert_string_equal(hash, want);
    json_t *p = json_loads(
        json_string_value(tu_at(job, "metadata", "annotations", TG_ANN_PROVENANCE, NULL)), 0, NULL);
    assert_string_equal(json_string_value(json_object_get(p, "compute.gpus")), "spec");
    json_decref(p);

    /* Same input, same bytes. */
    json_t *m2 = NULL;
    assert_int_equal(tg_render_manifests(rc, &prov, &f.set, &opts, &m2, err, sizeof(err)), TG_OK);
    char *a = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
    char *b = json_dumps(m2, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(a, b);
    free(a);
    free(b);
    json_decref(m2);

    /* Attempt 2 gets a new name and the retry env, set last. */
    tg_render_opts_t retry = {.run_id = "run-7", .attempt = 2, .retry_reason = "Evicted"};
    assert_int_equal(tg_render_manifests(rc, &prov, &f.set, &retry, &m2, err, sizeof(err)), TG_OK);
    c = tu_at(m2, "#1", "spec", "template", "spec", "containers", "#0", NULL);
    assert_string_equal(json_string_value(tu_at(m2, "#1", "metadata", "name", NULL)), "run-7-a2");
    assert_string_equal(tu_env(c, "TAU_RETRY_ATTEMPT"), "1");
    assert_string_equal(tu_env(c, "TAU_RETRY_MAX"), "2");
    assert_string_equal(tu_env(c, "TAU_RETRY_REASON"), "Evicted");
    assert_string_equal(tu_env(c, "TAU_RESUME_FROM"), "/data/checkpoints/finetunes/unit-job");
    json_decref(m2);

    json_decref(m);
    json_decref(rc);
    tg_tauyaml_prov_clean(&prov);
    tu_files_clean(&f);
}

static void test_render_input_checks(void **state)
{
    (void)state;
    tu_files_t f;
    tg_tauyaml_prov_t prov;
    json_t *rc = resolve_job(job_yaml, &f, &prov);
    json_t *m = NULL;
    char err[256];
    tg_render_opts_t bad = {.run_id = "has space", .attempt = 1};
    assert_int_equal(tg_render_manifests(rc, &prov, &f.set, &bad, &m, err, sizeof(err)), TG_EINVAL);
    tu_assert_contains(err, "run id");
    tg_render_opts_t zero = {.run_id = "ok", .attempt = 0};
    assert_int_equal(tg_render_manifests(rc, &prov, &f.set, &zero, &m, err, sizeof(err)),
                     TG_EINVAL);

    /* A changed script no longer matches the digest recorded at resolve time. */
    tu_files_t other;
    tu_files_init(&other);
    tu_files_add_str(&other, "train.py", "print('changed')\n");
    tg_render_opts_t ok = {.run_id = "ok", .attempt = 1};
    assert_int_equal(tg_render_manifests(rc, &prov, &other.set, &ok, &m, err, sizeof(err)),
                     TG_EINVAL);
    tu_assert_contains(err, "differs from the one the config was resolved with");
    assert_int_equal(tg_render_manifests(rc, &prov, NULL, &ok, &m, err, sizeof(err)), TG_EINVAL);
    tu_assert_contains(err, "was not supplied");
    tu_files_clean(&other);

    json_t *broken = json_deep_copy(rc);
    json_object_del(json_object_get(broken, "policy"), "queue");
    assert_int_equal(tg_render_manifests(broken, &prov, &f.set, &ok, &m, err, sizeof(err)),
                     TG_EINVAL);
    json_decref(broken);
    json_decref(rc);
    tg_tauyaml_prov_clean(&prov);
    tu_files_clean(&f);
}

static void test_cpu_job_defaults(void **state)
{
    (void)state;
    tu_files_t f;
    tg_tauyaml_prov_t prov;
    json_t *rc = resolve_job("name: cpu\nengine: job\nentrypoint: train.py\nimage: python:3.12\n",
                             &f, &prov);
    json_t *m = NULL;
    char err[256];
    tg_render_opts_t o = {.run_id = "cpu-1", .attempt = 1};
    assert_int_equal(tg_render_manifests(rc, &prov, &f.set, &o, &m, err, sizeof(err)), TG_OK);
    assert_int_equal(json_array_size(m), 1);
    const json_t *pod = tu_at(m, "#0", "spec", "template", "spec", NULL);
    assert_null(json_object_get(pod, "tolerations"));
    assert_null(json_object_get(pod, "nodeSelector"));
    const json_t *c = tu_at(pod, "containers", "#0", NULL);
    assert_string_equal(json_string_value(tu_at(c, "resources", "requests", "cpu", NULL)), "1");
    assert_null(tu_at(c, "resources", "limits", NULL));
    tu_assert_contains(json_string_value(tu_at(c, "command", "#2", NULL)),
                       "exec python3 /tmp/tau-entrypoint.py \"$@\"");
    assert_non_null(tu_at(pod, "volumes", "#0", "emptyDir", NULL)); /* no PVC: /data is scratch */
    assert_null(json_object_get(c, "workingDir"));
    assert_int_equal(json_integer_value(tu_at(m, "#0", "spec", "ttlSecondsAfterFinished", NULL)),
                     28800);
    json_decref(m);
    json_decref(rc);
    tg_tauyaml_prov_clean(&prov);
    tu_files_clean(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_object_name),
        cmocka_unit_test(test_indexed_torchrun),
        cmocka_unit_test(test_render_input_checks),
        cmocka_unit_test(test_cpu_job_defaults),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
