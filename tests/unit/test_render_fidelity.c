/* TauGrid fidelity of the rendered pods: a compute profile's pod settings
 * (pull secrets, service account and workload identity, DRA claims,
 * restricted security, GPU packing, rayVersion) on every pod and container,
 * one of each GPU toleration, and TauGrid's workload metadata contract next
 * to taugate's own labels, a managed eval manifest's rayjob-eval shape and
 * its guards, and the staged publication's shell program run for real. The upstream corpus
 * (test_submit_pipeline_upstream) and the goldens (job-pod-settings, managed-*) cover the
 * rest of the rendering. */
#include "pipeline_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include "core/buf.h"
#include "render/common.h"

/* ws-ray with a profile "pods" (engine `engine`) carrying `settings`. */
static json_t *fid_context(const char *engine, const char *settings)
{
    json_t *ctx = tu_load_json("tests/fixtures/context/ws-ray.json");
    assert_non_null(ctx);
    json_t *p = json_loads(settings, 0, NULL);
    assert_non_null(p);
    json_object_set_new(p, "name", json_string("pods"));
    json_object_set_new(p, "engine", json_string(engine));
    json_array_append_new(json_object_get(ctx, "profiles"), p);
    json_array_append_new(json_object_get(json_object_get(ctx, "workspace"), "allowed_profiles"),
                          json_string("pods"));
    return ctx;
}

static json_t *fid_render(const char *yaml, const json_t *ctx)
{
    tu_files_t f;
    tu_files_init(&f);
    tu_files_add_str(&f, "train.py", "print('train')\n");
    json_t *out = NULL;
    tg_rc_e rc = tu_run_ctx(yaml, strlen(yaml), ctx, &f.set, "fid-run-1", &out);
    if (rc != TG_OK)
        tu_dump_errors(out);
    assert_int_equal(rc, TG_OK);
    tu_files_clean(&f);
    return out;
}

static const json_t *fid_workload(const json_t *out)
{
    const json_t *m = tu_workload(out);
    if (!m)
        fail_msg("no workload rendered");
    return m;
}

/* Every container of `list` runs restricted. */
static void fid_assert_restricted(const json_t *list)
{
    size_t i;
    const json_t *c;
    json_array_foreach(list, i, c) {
        const json_t *sc = json_object_get(c, "securityContext");
        assert_true(json_is_false(json_object_get(sc, "allowPrivilegeEscalation")));
        assert_true(json_is_true(json_object_get(sc, "runAsNonRoot")));
        assert_string_equal(json_string_value(tu_at(sc, "capabilities", "drop", "#0", NULL)),
                            "ALL");
    }
}

static void fid_assert_pod_settings(const json_t *tmpl, const char *claim_template)
{
    const json_t *pod = json_object_get(tmpl, "spec");
    assert_string_equal(json_string_value(json_object_get(pod, "serviceAccountName")), "trainer");
    assert_string_equal(json_string_value(tu_at(pod, "imagePullSecrets", "#0", "name", NULL)),
                        "acr-pull");
    assert_int_equal(json_array_size(json_object_get(pod, "imagePullSecrets")), 2);
    assert_string_equal(
        json_string_value(tu_at(tmpl, "metadata", "labels", "azure.workload.identity/use", NULL)),
        "true");
    assert_true(json_is_true(tu_at(pod, "securityContext", "runAsNonRoot", NULL)));
    fid_assert_restricted(json_object_get(pod, "containers"));
    fid_assert_restricted(json_object_get(pod, "initContainers"));
    if (claim_template) {
        assert_string_equal(json_string_value(tu_at(pod, "resourceClaims", "#0",
                                                    "resourceClaimTemplateName", NULL)),
                            claim_template);
        assert_string_equal(json_string_value(tu_at(pod, "containers", "#0", "resources", "claims",
                                                    "#0", "name", NULL)),
                            "gpu");
        /* the GPUs are claimed, not requested as an extended resource */
        assert_null(tu_at(pod, "containers", "#0", "resources", "limits", "nvidia.com/gpu", NULL));
    }
}

static const char SETTINGS[] =
    "{\"service_account\": \"trainer\", \"workload_identity\": true,"
    " \"image_pull_secrets\": [\"acr-pull\", \"mirror-pull\"], \"security_mode\": \"restricted\","
    " \"dra_claim_template\": \"gpu-claim\", \"gpu_placement\": \"single-device\","
    " \"ray_version\": \"2.47.1\", \"gpu_class\": \"a100-80gb\","
    " \"tolerations\": [{\"key\": \"nvidia.com/gpu\", \"operator\": \"Exists\","
    " \"effect\": \"NoSchedule\"}]}";

static void test_profile_settings_on_job_pods(void **state)
{
    (void)state;
    json_t *ctx = fid_context("job", SETTINGS);
    json_t *out = fid_render("name: fid-job\nengine: job\nentrypoint: train.py\n"
                             "runtime:\n  image: repo/train:1\npolicy:\n  profile: pods\n"
                             "compute:\n  gpus: 1\n",
                             ctx);
    const json_t *job = fid_workload(out);
    const json_t *tmpl = tu_at(job, "spec", "template", NULL);
    fid_assert_pod_settings(tmpl, "gpu-claim");
    /* single-device packing: the GPU count label and a preference for
     * nodes already running small GPU pods */
    assert_string_equal(
        json_string_value(tu_at(tmpl, "metadata", "labels", "tau.azure.com/gpu-count", NULL)), "1");
    assert_non_null(tu_at(tmpl, "spec", "affinity", "podAffinity",
                          "preferredDuringSchedulingIgnoredDuringExecution", NULL));
    json_decref(out);
    json_decref(ctx);
}

static void test_profile_settings_on_rayjob_pods(void **state)
{
    (void)state;
    json_t *ctx = fid_context("rayjob", SETTINGS);
    json_t *out = fid_render("name: fid-ray\nengine: rayjob\nentrypoint: train.py\n"
                             "runtime:\n  image: repo/ray:py3.12-ray2.54.0\n"
                             "policy:\n  profile: pods\n"
                             "compute:\n  workers: 2\n  gpus_per_worker: 1\n",
                             ctx);
    const json_t *rcs = tu_at(fid_workload(out), "spec", "rayClusterSpec", NULL);
    /* the profile pins KubeRay's rayVersion over the image tag's */
    assert_string_equal(json_string_value(json_object_get(rcs, "rayVersion")), "2.47.1");
    fid_assert_pod_settings(tu_at(rcs, "headGroupSpec", "template", NULL), NULL);
    fid_assert_pod_settings(tu_at(rcs, "workerGroupSpecs", "#0", "template", NULL), "gpu-claim");
    json_decref(out);
    json_decref(ctx);
}

/* A profile that lists the GPU toleration gets it once: the built-in one
 * is added only when the profile lacks it. */
static void test_one_gpu_toleration(void **state)
{
    (void)state;
    json_t *ctx = fid_context("job", SETTINGS);
    json_t *out = fid_render("name: fid-tol\nengine: job\nentrypoint: train.py\n"
                             "runtime:\n  image: repo/train:1\npolicy:\n  profile: pods\n"
                             "compute:\n  gpus: 2\n",
                             ctx);
    const json_t *tols = tu_at(fid_workload(out), "spec", "template", "spec", "tolerations", NULL);
    size_t i, gpu = 0, sku = 0;
    const json_t *t;
    json_array_foreach(tols, i, t) {
        const char *key = json_string_value(json_object_get(t, "key"));
        gpu += key && strcmp(key, "nvidia.com/gpu") == 0;
        sku += key && strcmp(key, "sku") == 0;
    }
    assert_int_equal(gpu, 1);
    assert_int_equal(sku, 1);
    json_decref(out);
    json_decref(ctx);
}

/* TauGrid's workload metadata contract next to taugate's labels and the
 * Kueue labels the engine selects on. */
static void test_workload_metadata_contract(void **state)
{
    (void)state;
    json_t *ctx = fid_context("job", "{}");
    json_t *out = fid_render("name: fid-meta\nengine: job\nentrypoint: train.py\n"
                             "runtime:\n  image: repo/train:1\npolicy:\n  lane: training\n"
                             "experiment:\n  project: Tau Local\n  name: meta-exp\n",
                             ctx);
    const json_t *job = fid_workload(out);
    const json_t *labels = tu_at(job, "metadata", "labels", NULL);
    const json_t *ann = tu_at(job, "metadata", "annotations", NULL);
    assert_string_equal(json_string_value(json_object_get(labels, "tau.azure.com/managed-by")),
                        "tau");
    assert_string_equal(json_string_value(json_object_get(labels, "tau.azure.com/run-id")),
                        "fid-run-1");
    assert_string_equal(json_string_value(json_object_get(labels, "tau.azure.com/workspace")),
                        "ray");
    assert_string_equal(json_string_value(json_object_get(labels, "tau.azure.com/lane")),
                        "training");
    assert_string_equal(json_string_value(json_object_get(labels, "taugate.io/lane")), "training");
    assert_string_equal(json_string_value(json_object_get(labels, "kueue.x-k8s.io/queue-name")),
                        "kind-cpu");
    assert_non_null(json_object_get(labels, "kueue.x-k8s.io/priority-class"));
    assert_string_equal(
        json_string_value(json_object_get(labels, "tau.azure.com/stellar-experiment")), "meta-exp");
    assert_non_null(json_object_get(ann, "tau.azure.com/config-hash"));
    assert_string_equal(json_string_value(json_object_get(ann, "tau.azure.com/image")),
                        "repo/train:1");
    assert_string_equal(json_string_value(json_object_get(ann, "tau.azure.com/namespace")), "ray");
    /* the pods name their workload, as TauGrid's pod selector expects */
    assert_string_equal(json_string_value(tu_at(job, "spec", "template", "metadata", "labels",
                                                "tau.azure.com/job", NULL)),
                        json_string_value(tu_at(job, "metadata", "name", NULL)));
    json_decref(out);
    json_decref(ctx);
}

/* Run `command` between the publication's head and tail with /bin/sh, the
 * staging and output directories as given; returns the exit status. */
/* A managed eval manifest (TauGrid's rayjob-eval): a control-only head,
 * one GPU actor worker sized as TauGrid sizes it (4/8 CPUs, 32Gi/64Gi), and
 * eval.cpu_workers CPU pods (1/2 CPUs, 4Gi/8Gi) without GPUs, NCCL or
 * /dev/shm; workflow.upstream_checkpoint reaches every pod. */
#define EVAL_BASE                                                                                  \
    "schema_version: 1\nname: eval-run\nruntime:\n  pip: [torch]\nrun:\n  entrypoint: "            \
    "train.py\n"

static void test_managed_eval(void **state)
{
    (void)state;
    json_t *ctx = tu_load_json("tests/fixtures/context/ws-ray.json");
    assert_non_null(ctx);
    json_t *out = fid_render(EVAL_BASE "compute:\n  gpus: 2\neval:\n  cpu_workers: 3\n"
                                       "workflow:\n  upstream_checkpoint: /data/ck/best\n",
                             ctx);
    const json_t *wl = fid_workload(out);
    const json_t *groups = tu_at(wl, "spec", "rayClusterSpec", "workerGroupSpecs", NULL);
    assert_int_equal(json_array_size(groups), 2);
    const json_t *gpu = json_array_get(groups, 0), *fan = json_array_get(groups, 1);
    assert_int_equal(json_integer_value(json_object_get(gpu, "replicas")), 1);
    assert_string_equal(json_string_value(tu_at(gpu, "rayStartParams", "num-gpus", NULL)), "2");
    assert_int_equal(json_integer_value(json_object_get(fan, "replicas")), 3);
    assert_string_equal(json_string_value(tu_at(fan, "rayStartParams", "num-gpus", NULL)), "0");
    const json_t *gc = tu_at(gpu, "template", "spec", "containers", "#0", NULL);
    const json_t *fc = tu_at(fan, "template", "spec", "containers", "#0", NULL);
    const json_t *hc = tu_at(wl, "spec", "rayClusterSpec", "headGroupSpec", "template", "spec",
                             "containers", "#0", NULL);
    assert_string_equal(json_string_value(json_object_get(gc, "name")), "ray-gpu-worker");
    assert_string_equal(json_string_value(tu_at(gc, "resources", "requests", "cpu", NULL)), "4");
    assert_string_equal(json_string_value(tu_at(gc, "resources", "limits", "memory", NULL)),
                        "64Gi");
    assert_string_equal(json_string_value(tu_at(gc, "resources", "limits", "nvidia.com/gpu", NULL)),
                        "2");
    assert_string_equal(json_string_value(json_object_get(fc, "name")), "ray-worker");
    assert_string_equal(json_string_value(tu_at(fc, "resources", "requests", "memory", NULL)),
                        "4Gi");
    assert_null(tu_at(fc, "resources", "limits", "nvidia.com/gpu", NULL));
    assert_null(tu_env(gc, "NCCL_DEBUG"));
    assert_null(tu_env(fc, "NCCL_DEBUG"));
    for (const json_t *const *c = (const json_t *const[]){hc, gc, fc, NULL}; *c; c++)
        assert_string_equal(tu_env(*c, "TAU_UPSTREAM_CHECKPOINT"), "/data/ck/best");
    assert_int_equal(json_array_size(json_object_get(fc, "volumeMounts")), 3); /* no dshm */
    /* the policy engine sees the same shape: GPU worker, CPU fan-out */
    const json_t *rc = tu_at(out, "resolved", "compute", NULL);
    assert_int_equal(json_integer_value(json_object_get(rc, "cpu_workers")), 3);
    assert_string_equal(json_string_value(json_object_get(rc, "worker_cpu_request")), "4");
    assert_string_equal(json_string_value(json_object_get(rc, "cpu_worker_memory_limit")), "8Gi");
    json_decref(out);

    /* TauGrid's guards before its eval template */
    static const struct {
        const char *yaml, *path, *words;
    } bad[] = {
        {EVAL_BASE "compute:\n  gpus: 1\nworkflow:\n  workload_kind: rayjob-eval\n",
         "workflow.workload_kind", "requires eval.cpu_workers > 0"},
        {EVAL_BASE "compute:\n  gpus: 0\nworkflow:\n  workload_kind: rayjob-eval\n",
         "workflow.workload_kind", "requires compute.gpus > 0"},
        {EVAL_BASE "compute:\n  gpus: 1\n  workers: 2\neval:\n  cpu_workers: 2\n",
         "compute.workers", "cannot be multi-node"},
        {EVAL_BASE "compute:\n  gpus: 1\neval:\n  cpu_workers: 2\nworkflow:\n  workload_kind: "
                   "rayjob\n",
         "eval", "use workload_kind: rayjob-eval"},
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(bad); i++) {
        tu_files_t f;
        tu_files_init(&f);
        tu_files_add_str(&f, "train.py", "print('eval')\n");
        out = NULL;
        assert_int_not_equal(tu_run_ctx(bad[i].yaml, strlen(bad[i].yaml), ctx, &f.set, "e", &out),
                             TG_OK);
        tu_assert_contains(tu_msg(tu_find_error(out, bad[i].path, 0)), bad[i].words);
        json_decref(out);
        tu_files_clean(&f);
    }
    json_decref(ctx);
}

static int fid_publish(const char *command, const char *staging, const char *output)
{
    tg_buf_t b;
    tg_buf_init(&b, 0);
    assert_int_equal(tg_render_publish_head(&b), TG_OK);
    assert_int_equal(tg_buf_puts(&b, command), TG_OK);
    assert_int_equal(tg_render_publish_tail(&b), TG_OK);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("TAU_OUTPUT_STAGING_DIR", staging, 1);
        setenv("TAU_OUTPUT_DIR", output, 1);
        setenv("TAU_RUN_ID", "fid-run-1", 1);
        execl("/bin/sh", "sh", "-c", b.data, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    tg_buf_clean(&b);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int fid_exists(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

/* Outputs appear complete with the marker after a success; a failed run
 * publishes nothing; a copy that fails fails the run and writes no
 * marker. */
static void test_staged_publication(void **state)
{
    (void)state;
    char root[] = "/tmp/tg-publish-XXXXXX";
    assert_non_null(mkdtemp(root));
    char staging[300], out[300], blocked[300];
    snprintf(staging, sizeof(staging), "%s/staging", root);
    snprintf(out, sizeof(out), "%s/out", root);
    snprintf(blocked, sizeof(blocked), "%s/file/out", root);

    assert_int_equal(fid_publish("echo ok > \"$TAU_OUTPUT_STAGING_DIR/model.bin\"\n", staging, out),
                     0);
    assert_true(fid_exists(out, "model.bin"));
    assert_true(fid_exists(out, ".tau-published"));

    char out2[300];
    snprintf(out2, sizeof(out2), "%s/out2", root);
    assert_int_equal(fid_publish("sh -c 'exit 3'\n", staging, out2), 3);
    assert_false(fid_exists(out2, ".tau-published"));

    char file[300], cmd[400];
    snprintf(file, sizeof(file), "%s/file", root);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_not_equal(fid_publish("true\n", staging, blocked), 0);

    snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", root);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_settings_on_job_pods),
        cmocka_unit_test(test_profile_settings_on_rayjob_pods),
        cmocka_unit_test(test_one_gpu_toleration),
        cmocka_unit_test(test_workload_metadata_contract),
        cmocka_unit_test(test_managed_eval),
        cmocka_unit_test(test_staged_publication),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
