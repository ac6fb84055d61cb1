/* Rendering of TauGrid managed workflow manifests. */
#include "render/managed.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "render/metadata.h"
#include "render/payload.h"
#include "render/pod.h"
#include "core/digest.h"
#include "tauyaml/files.h"

/* The pods of TauGrid's templates: the Job's single pod; a RayJob's
 * control-only head and its workers (the GPU actor worker of rayjob-eval);
 * rayjob-eval's CPU fan-out workers. */
typedef enum mr_pod_e { MR_POD_JOB, MR_POD_HEAD, MR_POD_WORKER, MR_POD_EVAL_CPU } mr_pod_t;

/* What one rendering of a managed manifest keeps at hand. */
typedef struct mr_s {
    tg_render_ctx_t *c;
    const json_t *m; /* the managed section */
    const char *tmpl;
    int cpu, eval; /* the rayjob-cpu or rayjob-eval template */
    json_int_t gpus, workers;
    tg_render_payload_t script, manifest;
    tg_render_env_t head_env, worker_env;
    tg_buf_t program;
} mr_t;

const char *tg_render_managed_kind(const json_t *managed)
{
    const char *t = json_string_value(json_object_get(managed, "template"));
    return t && strcmp(t, "job") == 0 ? "Job" : "RayJob";
}

static const char *mr_sz(const mr_t *r, const char *role, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(r->m, "sizing"), role), key));
}

/* pip's arguments, each in single quotes (TauGrid's shellQuote). */
static tg_rc_e mr_pip_args(const mr_t *r, tg_buf_t *b)
{
    size_t i;
    const json_t *p;
    tg_rc_e rc = TG_OK;
    json_array_foreach(json_object_get(r->m, "pip"), i, p) {
        const char *s = json_string_value(p);
        if (rc == TG_OK && i)
            rc = tg_buf_puts(b, " ");
        if (rc == TG_OK)
            rc = tg_buf_puts(b, "'");
        for (; s && *s && rc == TG_OK; s++)
            rc = *s == '\'' ? tg_buf_puts(b, "'\"'\"'") : tg_buf_append(b, s, 1);
        if (rc == TG_OK)
            rc = tg_buf_puts(b, "'");
    }
    return rc;
}

/* The trainer's invocation, as the templates write it. */
static tg_rc_e mr_program(mr_t *r, int job)
{
    tg_buf_t *b = &r->program;
    const char *mname =
        json_string_value(json_object_get(json_object_get(r->m, "manifest"), "name"));
    json_int_t smoke = json_integer_value(json_object_get(r->m, "smoke_pairs"));
    tg_rc_e rc = tg_buf_puts(b, job ? "set -euo pipefail\n" : "set -eu\n");
    if (rc == TG_OK)
        rc = tg_buf_puts(b, "pip install --quiet --no-cache-dir ");
    if (rc == TG_OK)
        rc = mr_pip_args(r, b);
    if (rc == TG_OK)
        rc = tg_buf_puts(b, " \\\n  || pip install --quiet --no-cache-dir --user ");
    if (rc == TG_OK)
        rc = mr_pip_args(r, b);
    if (rc == TG_OK)
        rc = tg_buf_puts(b, "\nPATH=\"$(python3 -m site --user-base)/bin:$PATH\"\nexport PATH\n");
    if (rc != TG_OK)
        return rc;
    if (job && r->gpus > 1)
        return tg_buf_printf(b,
                             "torchrun --standalone --nproc_per_node=%" JSON_INTEGER_FORMAT
                             " /script/train.py --manifest /manifest/%s --smoke-pairs "
                             "%" JSON_INTEGER_FORMAT "\n",
                             r->gpus, mname, smoke);
    return tg_buf_printf(b,
                         "python3 /script/train.py --manifest /manifest/%s --smoke-pairs "
                         "%" JSON_INTEGER_FORMAT "\n",
                         mname, smoke);
}

/* The templates' env: their fixed values, the manifest's runtime.env, the
 * experiment, Ray's execution contract, and taugate's run identity. */
static void mr_env(mr_t *r, tg_render_env_t *e, int worker)
{
    tg_render_ctx_t *c = r->c;
    int cpu = r->cpu;
    int job = strcmp(r->tmpl, "job") == 0;
    char hist[300];
    tg_render_env_set(e, "HF_HOME", "/tmp/hf");
    /* eval's GPU worker only serves an actor: no NCCL */
    if (job || (worker && !cpu && !r->eval)) {
        tg_render_env_set(e, "NCCL_DEBUG", "WARN");
        tg_render_env_set(e, "NCCL_SOCKET_IFNAME", "eth0");
    }
    tg_render_env_set(e, "GIT_PYTHON_REFRESH", "quiet");
    tg_render_env_set(e, "TAU_DATA_DIR", "/data");
    if (!cpu) {
        tg_render_env_set(e, "TAU_HOT_DIR", "/mnt");
        tg_render_env_set(e, "TAU_DATASETS_DIR", "/mnt/datasets");
        tg_render_env_set(e, "TAU_CHECKPOINTS_DIR", "/mnt/checkpoints");
        tg_render_env_set(e, "TAU_DURABLE_DATASETS_DIR", "/data/datasets");
        tg_render_env_set(e, "TAU_DURABLE_CHECKPOINTS_DIR", "/data/checkpoints");
    }
    if (!job)
        tg_render_env_set(e, "TAU_METRICS_HISTORY",
                          tg_render_cat(hist, sizeof(hist), "/data/checkpoints/finetunes/",
                                        tg_render_str(c->rc, NULL, "name"),
                                        "/metrics-history.jsonl"));
    if (r->eval) /* the wrapper's ctx.upstream_checkpoint (None when empty) */
        tg_render_env_set(e, "TAU_UPSTREAM_CHECKPOINT",
                          json_string_value(json_object_get(r->m, "upstream_checkpoint")));
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(r->m, "env"), i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *secret = json_string_value(json_object_get(v, "secret"));
        if (secret)
            tg_render_env_set_secret(e, name, secret, json_string_value(json_object_get(v, "key")));
        else
            tg_render_env_set(e, name, json_string_value(json_object_get(v, "value")));
    }
    const char *exp = json_string_value(json_object_get(r->m, "experiment"));
    if (exp) {
        tg_render_env_set(e, "TAU_EXPERIMENT", exp);
        tg_render_env_set(e, "TAU_GROUP", exp);
    }
    if (!job) {
        char num[24];
        tg_render_env_set(e, "TAU_DIST_BACKEND", r->gpus > 0 ? "nccl" : "gloo");
        tg_render_int_text(num, r->gpus > 0 ? r->workers * r->gpus : r->workers);
        tg_render_env_set(e, "TAU_NUM_WORKERS", num);
        tg_render_env_set(e, "TAU_WORLD_SIZE", num);
    }
    tg_render_env_platform(e, c);
}

/* requests/limits from a sizing role, with the GPUs (device plugin) and,
 * when `rdma_device`, the RDMA device if set. */
static void mr_resources(mr_t *r, const char *role, json_int_t gpus, int rdma_device)
{
    tg_jw_t *w = r->c->w;
    const json_t *rdma = json_object_get(r->m, "rdma");
    char ng[24], nr[24];
    tg_render_int_text(ng, gpus);
    tg_render_int_text(nr, json_integer_value(json_object_get(rdma, "count")));
    int dra = tg_render_dra(r->c, gpus);
    tg_jw_kobj(w, "resources");
    if (dra) {
        tg_jw_karr(w, "claims");
        tg_jw_obj(w);
        tg_jw_kstr(w, "name", "gpu");
        tg_jw_end_obj(w);
        tg_jw_end_arr(w);
    }
    for (int lim = 1; lim >= 0; lim--) {
        tg_jw_kobj(w, lim ? "limits" : "requests");
        tg_jw_kstr(w, "cpu", mr_sz(r, role, lim ? "cpu_limit" : "cpu"));
        tg_jw_kstr(w, "memory", mr_sz(r, role, lim ? "memory_limit" : "memory"));
        if (gpus > 0 && !dra)
            tg_jw_kstr(w, r->c->gpu_resource, ng);
        if (rdma_device && json_is_object(rdma))
            tg_jw_kstr(w, json_string_value(json_object_get(rdma, "resource_name")), nr);
        tg_jw_end_obj(w);
    }
    tg_jw_end_obj(w);
}

/* RDMA: the verbs memlock privileges NCCL needs, as TauGrid grants them. */
static void mr_rdma_security(mr_t *r)
{
    tg_jw_t *w = r->c->w;
    tg_jw_kobj(w, "securityContext");
    tg_jw_kbool(w, "allowPrivilegeEscalation", 0);
    tg_jw_kobj(w, "capabilities");
    tg_jw_karr(w, "add");
    tg_jw_str(w, "IPC_LOCK");
    tg_jw_str(w, "SYS_RESOURCE");
    tg_jw_str(w, "DAC_OVERRIDE");
    tg_jw_end_arr(w);
    tg_jw_karr(w, "drop");
    tg_jw_str(w, "ALL");
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
    tg_jw_kint(w, "runAsGroup", 0);
    tg_jw_kint(w, "runAsUser", 0);
    tg_jw_kobj(w, "seccompProfile");
    tg_jw_kstr(w, "type", "RuntimeDefault");
    tg_jw_end_obj(w);
    tg_jw_end_obj(w);
}

static void mr_exec_probe(tg_jw_t *w, const char *key, int port, int delay, int period)
{
    char py[128];
    snprintf(py, sizeof(py),
             "import socket; socket.create_connection(('127.0.0.1', %d), 2).close()", port);
    tg_jw_kobj(w, key);
    tg_jw_kobj(w, "exec");
    tg_jw_karr(w, "command");
    tg_jw_str(w, "python3");
    tg_jw_str(w, "-c");
    tg_jw_str(w, py);
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
    tg_jw_kint(w, "initialDelaySeconds", delay);
    tg_jw_kint(w, "periodSeconds", period);
    tg_jw_end_obj(w);
}

/* The pod's volume mounts: the payloads, /data, the hot tier (not on the
 * CPU template), /dev/shm when `dshm`, the manifest's PVC mounts. */
static void mr_mounts(mr_t *r, int manifest, int dshm)
{
    tg_jw_t *w = r->c->w;
    tg_jw_karr(w, "volumeMounts");
    tg_render_k_mount(w, "script", "/script", 1);
    if (manifest)
        tg_render_k_mount(w, "manifest", "/manifest", 1);
    tg_render_k_mount(w, "data", "/data", 0);
    if (!r->cpu)
        tg_render_k_mount(w, "tau-hot", "/mnt", 0);
    if (dshm)
        tg_render_k_mount(w, "dshm", "/dev/shm", 0);
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(r->m, "mounts"), i, m)
        tg_render_k_mount(w, json_string_value(json_object_get(m, "name")),
                          json_string_value(json_object_get(m, "path")),
                          json_is_true(json_object_get(m, "read_only")));
    tg_jw_end_arr(w);
}

static void mr_volumes(mr_t *r, int manifest, int dshm)
{
    tg_jw_t *w = r->c->w;
    int cpu = r->cpu;
    const char *pvc = tg_render_str(r->c->storage, NULL, "data_pvc");
    tg_jw_karr(w, "volumes");
    tg_render_k_empty_dir(w, "script", NULL, NULL);
    if (manifest)
        tg_render_k_empty_dir(w, "manifest", NULL, NULL);
    if (pvc)
        tg_render_k_pvc_volume(w, "data", pvc);
    else
        tg_render_k_empty_dir(w, "data", NULL, NULL);
    if (!cpu)
        tg_render_k_empty_dir(w, "tau-hot", NULL, NULL);
    if (dshm)
        tg_render_k_empty_dir(w, "dshm", "Memory", cpu || r->eval ? "4Gi" : "16Gi");
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(r->m, "mounts"), i, m)
        tg_render_k_pvc_volume(w, json_string_value(json_object_get(m, "name")),
                               json_string_value(json_object_get(m, "pvc")));
    tg_jw_end_arr(w);
}

/* KubeRay's ray start, kept but preceded by a Ray install check (the CPU
 * template's command override). */
static void mr_ray_start(tg_jw_t *w)
{
    tg_jw_karr(w, "args");
    tg_jw_str(w, "if ! python3 -c \"import ray\" >/dev/null 2>&1; then\n"
                 "  python3 -m pip install --quiet --no-cache-dir \"ray[default]==2.40.0\"\n"
                 "fi\n"
                 "ulimit -n 65536\n"
                 "exec bash -lc \"${KUBERAY_GEN_RAY_START_CMD}\"\n");
    tg_jw_end_arr(w);
    tg_jw_karr(w, "command");
    tg_jw_str(w, "/bin/bash");
    tg_jw_str(w, "-lc");
    tg_jw_str(w, "--");
    tg_jw_end_arr(w);
}

/* One pod template of a managed workload. */
static void mr_pod(mr_t *r, mr_pod_t role)
{
    tg_render_ctx_t *c = r->c;
    tg_jw_t *w = c->w;
    int job = role == MR_POD_JOB, head = role == MR_POD_HEAD;
    json_int_t gpus = role == MR_POD_JOB || role == MR_POD_WORKER ? r->gpus : 0;
    int manifest = head || job;
    /* Ray's probes, except on the CPU template's workers; /dev/shm on every
     * pod but rayjob-eval's workers */
    int probes = !job && (head || !r->cpu);
    int dshm = job || head || !r->eval;
    /* the sizing role: rayjob-eval sizes its GPU actor worker as "head" */
    const char *size = job || (r->eval && role == MR_POD_WORKER) ? "head"
                       : head                                    ? "control"
                                                                 : "worker";
    /* RDMA: the verbs privileges on workers; the device on the Job's pod
     * and the training workers (not in the eval template) */
    int rdma = role == MR_POD_WORKER && json_is_object(json_object_get(r->m, "rdma"));
    int rdma_device = (job || role == MR_POD_WORKER) && !r->eval;
    tg_jw_kobj(w, "template");
    tg_jw_kobj(w, "metadata");
    tg_render_k_pod_labels(c, gpus);
    tg_jw_end_obj(w);
    tg_jw_kobj(w, "spec");
    if (head)
        tg_render_k_system_affinity(c);
    else
        tg_render_k_packing_affinity(c, gpus);
    tg_jw_karr(w, "containers");
    tg_jw_obj(w);
    if (job) {
        tg_jw_karr(w, "args");
        tg_jw_str(w, r->program.data);
        tg_jw_end_arr(w);
        tg_jw_karr(w, "command");
        tg_jw_str(w, "bash");
        tg_jw_str(w, "-lc");
        tg_jw_end_arr(w);
    } else if (r->cpu) {
        mr_ray_start(w);
    }
    tg_render_k_env(w, head || job ? &r->head_env : &r->worker_env);
    tg_jw_kstr(w, "image", c->image);
    if (probes)
        mr_exec_probe(w, "livenessProbe", head ? 8265 : 52365, 30, 20);
    tg_jw_kstr(w, "name",
               job                   ? "trainer"
               : head                ? "ray-head"
               : r->eval && gpus > 0 ? "ray-gpu-worker"
                                     : "ray-worker");
    if (probes)
        mr_exec_probe(w, "readinessProbe", head ? 8265 : 52365, 10, 10);
    mr_resources(r, size, gpus, rdma_device);
    if (rdma)
        mr_rdma_security(r);
    else
        tg_render_k_container_security(c);
    mr_mounts(r, manifest, dshm);
    tg_jw_end_obj(w);
    tg_jw_end_arr(w); /* containers */
    tg_render_k_image_pull_secrets(c);
    tg_jw_karr(w, "initContainers");
    tg_render_k_payload_container(c, "tau-script-payload", &r->script);
    if (manifest)
        tg_render_k_payload_container(c, "tau-manifest-payload", &r->manifest);
    tg_jw_end_arr(w);
    tg_render_k_scheduling(c, !head, gpus);
    tg_jw_kstr(w, "restartPolicy", "Never");
    tg_render_k_pod_security(c);
    tg_render_k_service_account(c);
    tg_jw_kint(w, "terminationGracePeriodSeconds", 600);
    tg_render_k_tolerations(c, head, gpus > 0);
    mr_volumes(r, manifest, dshm);
    tg_jw_end_obj(w); /* spec */
    tg_jw_end_obj(w); /* template */
}

/* One worker group: `replicas` pods named after the workload plus
 * `suffix`, registering `cpus` (when set) and `gpus` with Ray. */
static void mr_worker_group(mr_t *r, const char *suffix, json_int_t replicas, const char *cpus,
                            json_int_t gpus, mr_pod_t role)
{
    tg_jw_t *w = r->c->w;
    char gname[80], num[24];
    tg_jw_obj(w);
    tg_jw_kstr(w, "groupName", tg_render_cat(gname, sizeof(gname), r->c->name, suffix, NULL));
    tg_jw_kint(w, "maxReplicas", replicas);
    tg_jw_kint(w, "minReplicas", replicas);
    tg_jw_kobj(w, "rayStartParams");
    if (cpus)
        tg_jw_kstr(w, "num-cpus", cpus);
    tg_jw_kstr(w, "num-gpus", tg_render_int_text(num, gpus));
    tg_jw_end_obj(w);
    tg_jw_kint(w, "replicas", replicas);
    mr_pod(r, role);
    tg_jw_end_obj(w);
}

static void mr_runtime_env_yaml(const mr_t *r, tg_buf_t *b)
{
    size_t i;
    const json_t *p;
    if (tg_buf_puts(b, "pip:\n") != TG_OK)
        return;
    json_array_foreach(json_object_get(r->m, "pip"), i, p) {
        char *q = tg_render_json_text(p);
        if (tg_buf_printf(b, "- %s\n", q) != TG_OK) {
            free(q);
            return;
        }
        free(q);
    }
}

/* The trainer, the extra scripts and the manifest copy into the two
 * payloads. */
static int mr_payloads(mr_t *r)
{
    tg_render_ctx_t *c = r->c;
    char hex[65];
    const char *trainer = json_string_value(json_object_get(r->m, "main_script"));
    const tg_tauyaml_file_t *f = tg_tauyaml_files_find(c->files, trainer);
    if (!f) {
        tg_render_fail(c, "the trainer \"%s\" is not among the files", trainer ? trainer : "");
        return -1;
    }
    tg_render_file_sha256(c, f, hex);
    tg_render_payload_add(&r->script, "train.py", f->data, f->len, hex);
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(r->m, "extra_scripts"), i, x) {
        const char *file = json_string_value(json_object_get(x, "file"));
        const tg_tauyaml_file_t *xf = tg_tauyaml_files_find(c->files, file);
        if (!xf) {
            tg_render_fail(c, "extra script \"%s\" is not among the files", file ? file : "");
            return -1;
        }
        tg_sha256_hex(xf->data, xf->len, hex);
        tg_render_payload_add(&r->script, json_string_value(json_object_get(x, "name")), xf->data,
                              xf->len, hex);
    }
    const json_t *man = json_object_get(r->m, "manifest");
    const char *text = json_string_value(json_object_get(man, "text"));
    size_t tl = json_string_length(json_object_get(man, "text"));
    tg_sha256_hex(text ? text : "", tl, hex);
    tg_render_payload_add(&r->manifest, json_string_value(json_object_get(man, "name")),
                          text ? text : "", tl, hex);
    return 0;
}

tg_rc_e tg_render_managed(tg_render_ctx_t *c)
{
    tg_rc_e rc = TG_EINVAL;
    tg_jw_t *w = c->w;
    mr_t r = {.c = c, .m = json_object_get(c->rc, "managed")};
    r.tmpl = json_string_value(json_object_get(r.m, "template"));
    r.gpus = json_integer_value(json_object_get(r.m, "gpus"));
    r.workers = json_integer_value(json_object_get(r.m, "workers"));
    tg_render_payload_init(&r.script, TG_RENDER_SCRIPT_DIR);
    tg_render_payload_init(&r.manifest, TG_RENDER_MANIFEST_DIR);
    tg_render_env_init(&r.head_env);
    tg_render_env_init(&r.worker_env);
    tg_buf_init(&r.program, 1 << 20);
    tg_buf_t renv;
    tg_buf_init(&renv, 1 << 20);
    if (!r.tmpl || r.workers < 1) {
        tg_render_fail(c, "the managed section lacks its template or workers");
        goto out;
    }
    int job = strcmp(r.tmpl, "job") == 0, cpu = strcmp(r.tmpl, "rayjob-cpu") == 0;
    r.cpu = cpu;
    r.eval = strcmp(r.tmpl, "rayjob-eval") == 0;
    if (mr_payloads(&r) != 0)
        goto out;
    if (mr_program(&r, job) != TG_OK) {
        tg_render_fail(c, "the trainer program is too large");
        goto out;
    }
    mr_env(&r, &r.head_env, 0);
    mr_env(&r, &r.worker_env, 1);
    char sd[72], md[72];
    tg_render_payload_digest(&r.script, sd);
    tg_render_payload_digest(&r.manifest, md);
    const char *extra[] = {"tau.azure.com/script-payload-digest",
                           sd,
                           "tau.azure.com/manifest-payload-digest",
                           md,
                           "tau.azure.com/checkpoint-artifact",
                           json_string_value(json_object_get(r.m, "checkpoint_artifact")),
                           "tau.azure.com/experiment",
                           json_string_value(json_object_get(r.m, "experiment")),
                           cpu ? "ray.io/overwrite-container-cmd" : NULL,
                           "true",
                           NULL};
    const char *exec = job ? "{\"launcher\":\"python\"}" : "{\"launcher\":\"ray-train\"}";
    tg_jw_obj(w);
    tg_render_k_workload_header_x(c, job ? "batch/v1" : "ray.io/v1", job ? "Job" : "RayJob", exec,
                                  sd, extra);
    tg_jw_kobj(w, "spec");
    json_int_t ads = tg_render_int(c->run, NULL, "active_deadline_seconds", 0);
    if (ads > 0)
        tg_jw_kint(w, "activeDeadlineSeconds", ads);
    tg_jw_kint(w, "backoffLimit", 0);
    if (job) {
        tg_jw_kbool(w, "suspend", 1);
        mr_pod(&r, MR_POD_JOB);
        tg_jw_kint(w, "ttlSecondsAfterFinished",
                   tg_render_int(c->run, NULL, "ttl_seconds_after_finished", 86400));
    } else {
        tg_render_k_ray_head_open(w, r.program.data);
        mr_pod(&r, MR_POD_HEAD);
        tg_jw_end_obj(w); /* headGroupSpec */
        const char *rv = tg_render_str(c->policy, NULL, "ray_version");
        tg_jw_kstr(w, "rayVersion", rv ? rv : cpu ? "2.40.0" : "2.54.0");
        tg_jw_karr(w, "workerGroupSpecs");
        if (r.eval) { /* one GPU actor worker, then the CPU fan-out */
            mr_worker_group(&r, "-gpu", 1, NULL, r.gpus, MR_POD_WORKER);
            mr_worker_group(&r, "-cpu", json_integer_value(json_object_get(r.m, "cpu_workers")),
                            mr_sz(&r, "worker", "cpu"), 0, MR_POD_EVAL_CPU);
        } else {
            mr_worker_group(&r, cpu ? "-cpu" : "-w", r.workers,
                            cpu ? mr_sz(&r, "worker", "cpu") : NULL, r.gpus, MR_POD_WORKER);
        }
        tg_jw_end_arr(w);
        tg_jw_end_obj(w); /* rayClusterSpec */
        mr_runtime_env_yaml(&r, &renv);
        tg_jw_kstr(w, "runtimeEnvYAML", renv.data ? renv.data : "");
        tg_render_k_ray_submission(c);
    }
    tg_jw_end_obj(w); /* spec */
    tg_jw_end_obj(w);
    rc = TG_OK;
out:
    tg_render_payload_clean(&r.script);
    tg_render_payload_clean(&r.manifest);
    tg_render_env_clean(&r.head_env);
    tg_render_env_clean(&r.worker_env);
    tg_buf_clean(&r.program);
    tg_buf_clean(&renv);
    return rc;
}
