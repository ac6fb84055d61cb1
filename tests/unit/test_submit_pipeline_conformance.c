/* Conformance: each real tau.yaml in $TAUGATE_SHARED/conformance/taugrid gets
 * the outcome its README names, in the fixture workspaces of that README
 * (tests/fixtures/context). */
#include "pipeline_test_util.h"

#define CTX "tests/fixtures/context/"

static json_t *conf_run(const char *file, const char *ws, const char *files_dir, tg_rc_e want)
{
    char path[1024], ctx[256];
    snprintf(path, sizeof(path), "%s/conformance/taugrid/%s", tu_shared(), file);
    snprintf(ctx, sizeof(ctx), CTX "ws-%s.json", ws);
    size_t len = 0;
    char *yaml = tu_slurp(path, &len);
    if (!yaml)
        fail_msg("cannot read %s (set TAUGATE_SHARED)", path);
    tu_files_t f;
    tu_files_init(&f);
    if (files_dir) {
        char dir[512];
        snprintf(dir, sizeof(dir), "tests/fixtures/files/%s", files_dir);
        tu_files_add_dir(&f, dir);
    }
    json_t *out = NULL;
    tg_rc_e rc = tu_run(yaml, len, ctx, &f.set, "conf-run-1", &out);
    if (rc != want) {
        tu_dump_errors(out);
        fail_msg("%s: rc %d, want %d", file, rc, want);
    }
    tu_files_clean(&f);
    free(yaml);
    return out;
}

static const json_t *first_manifest(const json_t *out, const char *kind)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(out, "manifests"), i, m)
        if (strcmp(json_string_value(json_object_get(m, "kind")), kind) == 0)
            return m;
    fail_msg("no %s manifest", kind);
    return NULL;
}

static const char *label(const json_t *obj, const char *key)
{
    return json_string_value(tu_at(obj, "metadata", "labels", key, NULL));
}

static int has_gpu_toleration(const json_t *podspec)
{
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(podspec, "tolerations"), i, t) {
        const char *k = json_string_value(json_object_get(t, "key"));
        if (k && (strcmp(k, "nvidia.com/gpu") == 0 || strcmp(k, "sku") == 0))
            return 1;
    }
    return 0;
}

static void test_01_kind_smoke_job(void **state)
{
    (void)state;
    json_t *out = conf_run("01-kind-smoke_tau.yaml", "ray", "conformance-01", TG_OK);
    const json_t *job = first_manifest(out, "Job");
    assert_string_equal(json_string_value(json_object_get(job, "apiVersion")), "batch/v1");
    assert_string_equal(json_string_value(tu_at(job, "metadata", "namespace", NULL)), "ray");
    assert_string_equal(label(job, "kueue.x-k8s.io/queue-name"), "kind-cpu");
    assert_true(json_is_true(tu_at(job, "spec", "suspend", NULL)));
    const json_t *pod = tu_at(job, "spec", "template", "spec", NULL);
    const json_t *c = tu_at(pod, "containers", "#0", NULL);
    assert_string_equal(json_string_value(json_object_get(c, "image")), "bash:5.2");
    assert_string_equal(json_string_value(tu_at(c, "resources", "requests", "cpu", NULL)), "10m");
    assert_string_equal(json_string_value(tu_at(c, "resources", "requests", "memory", NULL)),
                        "32Mi");
    assert_null(tu_at(c, "resources", "requests", "nvidia.com/gpu", NULL));
    assert_null(tu_at(c, "resources", "limits", "nvidia.com/gpu", NULL));
    assert_false(has_gpu_toleration(pod));
    assert_string_equal(json_string_value(json_object_get(pod, "restartPolicy")), "Never");
    json_decref(out);
}

static void test_02_kind_smoke_rayjob(void **state)
{
    (void)state;
    json_t *out = conf_run("02-kind-smoke_tau-ray.yaml", "ray", "conformance-02", TG_OK);
    const json_t *rj = first_manifest(out, "RayJob");
    assert_string_equal(json_string_value(json_object_get(rj, "apiVersion")), "ray.io/v1");
    const json_t *groups = tu_at(rj, "spec", "rayClusterSpec", "workerGroupSpecs", NULL);
    assert_int_equal(json_array_size(groups), 1);
    assert_int_equal(json_integer_value(tu_at(groups, "#0", "replicas", NULL)), 2);
    const json_t *head = tu_at(rj, "spec", "rayClusterSpec", "headGroupSpec", "template", "spec",
                               "containers", "#0", NULL);
    const json_t *worker = tu_at(groups, "#0", "template", "spec", "containers", "#0", NULL);
    static const char *const want[][3] = {{"requests", "cpu", "20m"},
                                          {"requests", "memory", "512Mi"},
                                          {"limits", "cpu", "1"},
                                          {"limits", "memory", "6Gi"}};
    static const char *const wantw[][3] = {{"requests", "cpu", "50m"},
                                           {"requests", "memory", "256Mi"},
                                           {"limits", "cpu", "1"},
                                           {"limits", "memory", "768Mi"}};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(
            json_string_value(tu_at(head, "resources", want[i][0], want[i][1], NULL)), want[i][2]);
        assert_string_equal(
            json_string_value(tu_at(worker, "resources", wantw[i][0], wantw[i][1], NULL)),
            wantw[i][2]);
    }
    assert_string_equal(tu_env(head, "KIND_RAY_MARKER"), "tau-kind-ray");
    assert_string_equal(tu_env(worker, "KIND_RAY_MARKER"), "tau-kind-ray");
    assert_string_equal(json_string_value(tu_at(rj, "spec", "rayClusterSpec", "rayVersion", NULL)),
                        "2.54.0");
    assert_true(json_is_true(tu_at(rj, "spec", "shutdownAfterJobFinishes", NULL)));
    json_decref(out);
}

static void test_03_ray_tune(void **state)
{
    (void)state;
    json_t *out =
        conf_run("03-ray-tune-smoke_tau.yaml", "taugrid-default", "conformance-03", TG_OK);
    const json_t *rj = first_manifest(out, "RayJob");
    assert_string_equal(json_string_value(tu_at(rj, "metadata", "annotations",
                                                "taugate.io/workloadspec-execution", NULL)),
                        "{\"launcher\":\"ray-tune\"}");
    assert_null(label(rj, "kueue.x-k8s.io/priority-class"));
    const json_t *pods[2] = {tu_at(rj, "spec", "rayClusterSpec", "headGroupSpec", "template",
                                   "spec", "containers", "#0", NULL),
                             tu_at(rj, "spec", "rayClusterSpec", "workerGroupSpecs", "#0",
                                   "template", "spec", "containers", "#0", NULL)};
    for (int i = 0; i < 2; i++) {
        const char *space = tu_env(pods[i], "TAU_TUNE_PARAM_SPACE");
        assert_non_null(space);
        json_t *s = json_loads(space, 0, NULL);
        assert_non_null(s);
        size_t points = json_array_size(json_object_get(s, "lr")) *
                        json_array_size(json_object_get(s, "batch_size"));
        assert_int_equal(points, 6);
        json_decref(s);
        assert_string_equal(tu_env(pods[i], "TAU_TUNE_METRIC"), "loss");
    }
    json_decref(out);
}

static void test_04_gpu_rayjob_offload_warning(void **state)
{
    (void)state;
    json_t *out =
        conf_run("04-portal-ray-stellar_tau.yaml", "taugrid-default", "conformance-04", TG_OK);
    const json_t *rj = first_manifest(out, "RayJob");
    const json_t *groups = tu_at(rj, "spec", "rayClusterSpec", "workerGroupSpecs", NULL);
    assert_int_equal(json_integer_value(tu_at(groups, "#0", "replicas", NULL)), 1);
    const json_t *wpod = tu_at(groups, "#0", "template", "spec", NULL);
    const json_t *res = tu_at(wpod, "containers", "#0", "resources", NULL);
    assert_string_equal(json_string_value(tu_at(res, "requests", "nvidia.com/gpu", NULL)), "1");
    assert_string_equal(json_string_value(tu_at(res, "limits", "nvidia.com/gpu", NULL)), "1");
    assert_true(has_gpu_toleration(wpod));
    int pvc = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(wpod, "volumes"), i, v) {
        const char *claim = json_string_value(tu_at(v, "persistentVolumeClaim", "claimName", NULL));
        if (claim && strcmp(claim, "blob-training") == 0 &&
            strcmp(json_string_value(json_object_get(v, "name")), "data") == 0)
            pvc = 1;
    }
    assert_true(pvc);
    json_array_foreach(tu_at(wpod, "containers", "#0", "volumeMounts", NULL), i, v) {
        if (strcmp(json_string_value(json_object_get(v, "name")), "data") == 0)
            assert_string_equal(json_string_value(json_object_get(v, "mountPath")), "/data");
    }
    tu_assert_contains(tu_msg(tu_find_warning(out, "metrics.offload.enabled", 56)),
                       "taugate collects metrics.history itself");
    json_decref(out);
}

static void test_05_offload_out_rejected(void **state)
{
    (void)state;
    json_t *out =
        conf_run("05-market-policy_tau.yaml", "default", "conformance-04", TG_EUNPROCESSABLE);
    const json_t *e = tu_find_error(out, "metrics.offload.out", 43);
    tu_assert_contains(tu_msg(e), "not a field of the direct run config");
    assert_int_equal(json_integer_value(json_object_get(e, "column")), 5);
    assert_int_equal(tu_nerrors(out), 1);
    json_decref(out);
}

static void test_06_working_dir(void **state)
{
    (void)state;
    const char *f = "06-aks-cpu-quickstart_stellar-demo_sweep-lr-baseline.yaml";
    json_t *out = conf_run(f, "taugrid-default", "conformance-06", TG_OK);
    const json_t *rj = first_manifest(out, "RayJob");
    tu_assert_contains(json_string_value(tu_at(rj, "spec", "runtimeEnvYAML", NULL)),
                       "working_dir: \"file:///script/_tau_project.zip\"");
    json_decref(out);

    out = conf_run(f, "taugrid-default", NULL, TG_EUNPROCESSABLE);
    const json_t *e = tu_find_error(out, "run.working_dir", 14);
    tu_assert_contains(tu_msg(e), "run.working_dir needs the project files");
    assert_int_equal(tu_nerrors(out), 1);
    json_decref(out);
}

static void test_07_placeholder_name(void **state)
{
    (void)state;
    json_t *out = conf_run("07-e2e_tau-native-nightly_tau.yaml", "taugrid-default",
                           "conformance-07", TG_EUNPROCESSABLE);
    const json_t *e = tu_find_error(out, "name", 4);
    tu_assert_contains(tu_msg(e), "is not a valid DNS-1123 label");
    assert_int_equal(tu_nerrors(out), 1);
    json_decref(out);
}

/* A managed workflow manifest is accepted as TauGrid accepts it (this
 * supersedes the shared README's older refusal, per issue #20) and rendered
 * as TauGrid's CPU RayJob template renders it: a control-only head and
 * compute.workers CPU workers. */
static void test_08_managed_manifest(void **state)
{
    (void)state;
    json_t *out =
        conf_run("08-aks-cpu-quickstart_tau.yaml", "taugrid-default", "conformance-04", TG_OK);
    size_t i;
    const json_t *w;
    json_array_foreach(json_object_get(out, "warnings"), i, w)
        assert_null(strstr(tu_msg(w), "unknown config key"));
    const json_t *rj = first_manifest(out, "RayJob");
    assert_string_equal(label(rj, "tau.azure.com/managed-by"), "tau");
    tu_assert_contains(json_string_value(tu_at(rj, "spec", "entrypoint", NULL)),
                       "python3 /script/train.py --manifest /manifest/aks-cpu-quickstart.yaml "
                       "--smoke-pairs 0");
    tu_assert_contains(json_string_value(tu_at(rj, "spec", "runtimeEnvYAML", NULL)),
                       "- \"torch>=2.4.0\"");
    const json_t *cluster = tu_at(rj, "spec", "rayClusterSpec", NULL);
    assert_string_equal(json_string_value(json_object_get(cluster, "rayVersion")), "2.40.0");
    const json_t *head = tu_at(cluster, "headGroupSpec", "template", "spec", NULL);
    const json_t *hc = tu_at(head, "containers", "#0", NULL);
    assert_string_equal(json_string_value(tu_at(hc, "resources", "requests", "memory", NULL)),
                        "8Gi");
    assert_string_equal(json_string_value(tu_at(head, "initContainers", "#1", "name", NULL)),
                        "tau-manifest-payload");
    const json_t *grp = tu_at(cluster, "workerGroupSpecs", "#0", NULL);
    assert_int_equal(json_integer_value(json_object_get(grp, "replicas")), 5);
    tu_assert_contains(json_string_value(json_object_get(grp, "groupName")), "-cpu");
    assert_string_equal(json_string_value(tu_at(grp, "rayStartParams", "num-cpus", NULL)), "2");
    const json_t *wc = tu_at(grp, "template", "spec", "containers", "#0", NULL);
    assert_string_equal(json_string_value(tu_at(wc, "resources", "limits", "memory", NULL)), "4Gi");
    assert_int_equal(json_array_size(tu_at(grp, "template", "spec", "initContainers", NULL)), 1);
    json_decref(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_01_kind_smoke_job),
        cmocka_unit_test(test_02_kind_smoke_rayjob),
        cmocka_unit_test(test_03_ray_tune),
        cmocka_unit_test(test_04_gpu_rayjob_offload_warning),
        cmocka_unit_test(test_05_offload_out_rejected),
        cmocka_unit_test(test_06_working_dir),
        cmocka_unit_test(test_07_placeholder_name),
        cmocka_unit_test(test_08_managed_manifest),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
