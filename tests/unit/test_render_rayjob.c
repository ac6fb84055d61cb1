/* RayJob rendering: rayVersion from the image, probes, head/worker shape,
 * payload init container, runtimeEnvYAML and GPU placement. */
#include "pipeline_test_util.h"

#include "render/rayjob.h"
#include "render/render.h"

static void test_ray_version(void **state)
{
    (void)state;
    char v[32];
    tg_render_ray_version("mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.54.0", v, sizeof(v));
    assert_string_equal(v, "2.54.0");
    tg_render_ray_version("mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.58.0-cuda13.0@sha256:"
                          "e9a329eef15e5a13d50c3186c2b8036cd3728c6e218da860de23e8494b99ddd3",
                          v, sizeof(v));
    assert_string_equal(v, "2.58.0");
    tg_render_ray_version("rayproject/ray:2.9.0-py310-gpu", v, sizeof(v));
    assert_string_equal(v, "2.9.0");
    tg_render_ray_version("mcr.microsoft.com/aks/ai-runtime/ray@sha256:5a5648f3e1b27eaa6e18b345aa",
                          v, sizeof(v));
    assert_string_equal(v, TG_RENDER_RAY_VERSION_DEFAULT);
    tg_render_ray_version("my/ray-rayx:latest", v, sizeof(v));
    assert_string_equal(v, TG_RENDER_RAY_VERSION_DEFAULT);
}

static json_t *render(const char *yaml, const char *script, json_t **out_full)
{
    tu_files_t f;
    tu_files_init(&f);
    tu_files_add_str(&f, script, "print('driver')\n");
    tu_files_add_str(&f, "requirements.txt", "numpy\n");
    json_t *out = NULL;
    tg_rc_e rc = tu_run(yaml, strlen(yaml), NULL, &f.set, "ray-run-1", &out);
    if (rc != TG_OK)
        tu_dump_errors(out);
    assert_int_equal(rc, TG_OK);
    tu_files_clean(&f);
    *out_full = out;
    return json_array_get(json_object_get(out, "manifests"), 0);
}

static void test_gpu_rayjob(void **state)
{
    (void)state;
    json_t *out = NULL;
    const json_t *rj = render("name: r1\nengine: rayjob\nentrypoint: main.py\n"
                              "runtime:\n  image: repo/ray:py3.11-ray2.40.0-gpu\n  pip: [scipy]\n"
                              "compute:\n  workers: 3\n  gpus_per_worker: 4\n"
                              "policy:\n  gpu_class: h100-80gb\n",
                              "main.py", &out);
    const json_t *spec = json_object_get(rj, "spec");
    assert_true(json_is_true(json_object_get(spec, "suspend")));
    assert_true(json_is_true(json_object_get(spec, "shutdownAfterJobFinishes")));
    assert_int_equal(json_integer_value(json_object_get(spec, "ttlSecondsAfterFinished")), 15);
    assert_string_equal(json_string_value(json_object_get(spec, "submissionMode")), "HTTPMode");
    tu_assert_contains(json_string_value(json_object_get(spec, "entrypoint")),
                       "exec python3 /script/main.py");
    tu_assert_contains(json_string_value(json_object_get(spec, "entrypoint")),
                       "pip install -r /script/requirements.txt");
    assert_string_equal(json_string_value(json_object_get(spec, "runtimeEnvYAML")),
                        "pip:\n- \"scipy\"\n");
    const json_t *rcs = json_object_get(spec, "rayClusterSpec");
    assert_string_equal(json_string_value(json_object_get(rcs, "rayVersion")), "2.40.0");
    const json_t *head = tu_at(rcs, "headGroupSpec", NULL);
    assert_string_equal(json_string_value(tu_at(head, "rayStartParams", "num-gpus", NULL)), "0");
    const json_t *hpod = tu_at(head, "template", "spec", NULL);
    assert_string_equal(json_string_value(tu_at(hpod, "initContainers", "#0", "name", NULL)),
                        "tau-payload");
    const char *p0 = tu_env(tu_at(hpod, "initContainers", "#0", NULL), "TAU_PAYLOAD_0");
    assert_non_null(p0);
    assert_true(strncmp(p0, "main.py:", 8) == 0);
    assert_non_null(tu_env(tu_at(hpod, "initContainers", "#0", NULL), "TAU_PAYLOAD_1"));
    assert_null(json_object_get(hpod, "nodeSelector"));
    assert_string_equal(json_string_value(tu_at(hpod, "tolerations", "#0", "key", NULL)),
                        "CriticalAddonsOnly");
    const json_t *g = tu_at(rcs, "workerGroupSpecs", "#0", NULL);
    assert_string_equal(json_string_value(json_object_get(g, "groupName")), "ray-run-1-a1-w");
    assert_int_equal(json_integer_value(json_object_get(g, "replicas")), 3);
    assert_int_equal(json_integer_value(json_object_get(g, "minReplicas")), 3);
    assert_int_equal(json_integer_value(json_object_get(g, "maxReplicas")), 3);
    assert_string_equal(json_string_value(tu_at(g, "rayStartParams", "num-gpus", NULL)), "4");
    const json_t *wpod = tu_at(g, "template", "spec", NULL);
    assert_null(json_object_get(wpod, "initContainers")); /* plain script: head only */
    const json_t *w = tu_at(wpod, "containers", "#0", NULL);
    assert_string_equal(json_string_value(tu_at(w, "resources", "limits", "nvidia.com/gpu", NULL)),
                        "4");
    assert_string_equal(
        json_string_value(tu_at(w, "resources", "requests", "nvidia.com/gpu", NULL)), "4");
    assert_string_equal(json_string_value(tu_at(w, "resources", "requests", "memory", NULL)),
                        "64Gi");
    assert_string_equal(json_string_value(tu_at(w, "startupProbe", "httpGet", "path", NULL)),
                        "/api/local_raylet_healthz");
    assert_int_equal(json_integer_value(tu_at(w, "readinessProbe", "tcpSocket", "port", NULL)),
                     52365);
    assert_string_equal(tu_env(w, "TAU_WORLD_SIZE"), "12");
    assert_string_equal(tu_env(w, "TAU_DIST_BACKEND"), "nccl");
    assert_string_equal(tu_env(w, "TAU_RAY_TRAIN_CONFIG_JSON"), "{}");
    assert_string_equal(
        json_string_value(tu_at(wpod, "nodeSelector", "tau.azure.com/gpu-class", NULL)),
        "h100-80gb");
    json_decref(out);
}

static void test_user_cannot_override_platform_env(void **state)
{
    (void)state;
    json_t *out = NULL;
    const json_t *rj = render("name: r2\nengine: rayjob\nentrypoint: main.py\n"
                              "runtime:\n  env:\n    NCCL_SOCKET_IFNAME: ib0\n"
                              "compute:\n  gpus_per_worker: 0\n"
                              "execution:\n  allow_nccl_override: true\n",
                              "main.py", &out);
    const json_t *w = tu_at(rj, "spec", "rayClusterSpec", "workerGroupSpecs", "#0", "template",
                            "spec", "containers", "#0", NULL);
    /* The user's NCCL override replaces the base value (and appears once). */
    assert_string_equal(tu_env(w, "NCCL_SOCKET_IFNAME"), "ib0");
    size_t n = 0, i;
    const json_t *e;
    json_array_foreach(json_object_get(w, "env"), i, e)
        if (strcmp(json_string_value(json_object_get(e, "name")), "NCCL_SOCKET_IFNAME") == 0)
            n++;
    assert_int_equal(n, 1);
    /* The platform's values come last. */
    const json_t *last =
        json_array_get(json_object_get(w, "env"), json_array_size(json_object_get(w, "env")) - 1);
    assert_string_equal(json_string_value(json_object_get(last, "name")), "TAU_ATTEMPT");
    assert_string_equal(tu_env(w, "TAU_DIST_BACKEND"), "gloo");
    assert_string_equal(json_string_value(tu_at(rj, "spec", "rayClusterSpec", "rayVersion", NULL)),
                        "2.54.0"); /* the CPU default image */
    json_decref(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ray_version),
        cmocka_unit_test(test_gpu_rayjob),
        cmocka_unit_test(test_user_cannot_override_platform_env),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
