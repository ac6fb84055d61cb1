/* KubeRay (v1.7): the RayJob state machine and the RayCluster controller.
 *
 * The head and worker pods run a long-lived placeholder for `ray start`;
 * the entrypoint runs as the Ray driver inside the head pod's sandbox
 * (pods.c), and in K8sJobMode the submitter Job's pod follows the driver's
 * output and exits with its status, as `ray job submit` does. */
#include "rayjob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "gc.h"
#include "pods.h"
#include "quantity.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"
#include "validate.h"
#include "yamljson.h"

#define RJ_FINALIZER "ray.io/rayjob-finalizer"

static const char *keepalive =
    "echo \"kubesim: ray start ($RAY_NODE_TYPE) for cluster $RAY_CLUSTER_NAME\"; "
    "exec sleep 2147483647";

/* Ray's job manager sets up the runtime environment before it runs the
 * entrypoint. A working_dir that is a file:// zip is unpacked into a fresh
 * folder (its one top-level folder stripped, as Ray does), which becomes the
 * driver's current folder and the head of PYTHONPATH. Other runtime_env
 * fields (pip, remote URIs) are not simulated. The paths in the program are
 * the container's: the kubelet maps them to the sandbox. New string. */
static char *driver_program(json_t *rj, const char *entrypoint)
{
    const char *renv = ks_jstr(rj, "spec.runtimeEnvYAML");
    char err[128];
    json_t *env = renv ? ks_yaml_to_json(renv, strlen(renv), err, sizeof(err)) : NULL;
    const char *wd = json_string_value(json_object_get(env, "working_dir"));
    char *out = NULL;
    if (wd && !strncmp(wd, "file://", 7) && strlen(wd) > 11 &&
        !strcmp(wd + strlen(wd) - 4, ".zip") && !strchr(wd, '\'')) {
        static const char unzip_py[] =
            "import os, sys, tempfile, zipfile\n"
            "d = tempfile.mkdtemp(prefix=\"ray-working-dir-\", dir=sys.argv[2])\n"
            "zipfile.ZipFile(sys.argv[1]).extractall(d)\n"
            "e = os.listdir(d)\n"
            "one = len(e) == 1 and os.path.isdir(os.path.join(d, e[0]))\n"
            "print(os.path.join(d, e[0]) if one else d)\n";
        tg_buf_t b;
        tg_buf_init(&b, 0);
        if (tg_buf_printf(&b,
                          "wd=$(python3 -c '%s' '%s' /tmp) || exit 1\n"
                          "cd \"$wd\" || exit 1\n"
                          "export PYTHONPATH=\"$wd${PYTHONPATH:+:$PYTHONPATH}\"\n%s",
                          unzip_py, wd + 7, entrypoint) == TG_OK)
            out = tg_buf_steal(&b, NULL);
        tg_buf_clean(&b);
    }
    json_decref(env);
    return out ? out : tg_xstrdup(entrypoint);
}

/* ---- RayCluster ---- */

static json_t *ray_pod(json_t *rc, json_t *tmpl, const char *type, const char *group)
{
    char gen[400], ident[400];
    const char *cn = ks_meta_name(rc);
    if (!strcmp(type, "head")) {
        ks_fmt(gen, sizeof(gen), "%s-head-", cn);
        ks_fmt(ident, sizeof(ident), "%s-head", cn);
    } else {
        ks_fmt(gen, sizeof(gen), "%s-%s-worker-", cn, group);
        ks_fmt(ident, sizeof(ident), "%s-worker", cn);
    }
    char sfx[8], name[420];
    ks_rand_suffix(sfx, sizeof(sfx));
    ks_fmt(name, sizeof(name), "%s%s", gen, sfx);
    json_t *meta = json_deep_copy(json_object_get(tmpl, "metadata"));
    if (!json_is_object(meta)) {
        json_decref(meta);
        meta = json_object();
    }
    json_t *labels = ks_jobj(meta, "labels");
    json_object_set_new(labels, "ray.io/cluster", json_string(cn));
    json_object_set_new(labels, "ray.io/node-type", json_string(type));
    json_object_set_new(labels, "ray.io/group", json_string(group));
    json_object_set_new(labels, "ray.io/is-ray-node", json_string("yes"));
    json_object_set_new(labels, "ray.io/identifier", json_string(ident));
    json_object_set_new(labels, "app.kubernetes.io/name", json_string("kuberay"));
    json_object_set_new(labels, "app.kubernetes.io/created-by", json_string("kuberay-operator"));
    /* Ray nodes live until the cluster goes; simulated ones too. */
    json_object_set_new(ks_jobj(meta, "annotations"), "kubesim.io/duration-seconds",
                        json_string("1000000000"));
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "generateName", json_string(gen));
    json_object_set_new(meta, "namespace", json_string(ks_meta_ns(rc)));
    json_object_set_new(meta, "ownerReferences",
                        json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion", "ray.io/v1", "kind",
                                  "RayCluster", "name", cn, "uid", ks_meta_uid(rc), "controller", 1,
                                  "blockOwnerDeletion", 1));
    json_t *spec = json_deep_copy(json_object_get(tmpl, "spec"));
    if (!json_is_object(spec)) {
        json_decref(spec);
        spec = json_object();
    }
    json_t *c0 = json_array_get(json_object_get(spec, "containers"), 0);
    if (c0) {
        json_object_set_new(c0, "command", json_pack("[s,s,s]", "/bin/sh", "-c", keepalive));
        json_object_del(c0, "args");
        json_t *env = json_object_get(c0, "env");
        if (!json_is_array(env)) {
            env = json_array();
            json_object_set_new(c0, "env", env);
        }
        json_array_append_new(env, json_pack("{s:s,s:s}", "name", "RAY_CLUSTER_NAME", "value", cn));
        json_array_append_new(env, json_pack("{s:s,s:s}", "name", "RAY_NODE_TYPE", "value", type));
    }
    json_t *pod = json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind", "Pod", "metadata",
                            meta, "spec", spec);
    ks_defaults(KS_RT_PODS, pod, NULL);
    return pod;
}

static void ensure_service(json_t *rc)
{
    char name[400];
    ks_fmt(name, sizeof(name), "%s-head-svc", ks_meta_name(rc));
    if (ks_store_get(KS_RT_SERVICES, ks_meta_ns(rc), name))
        return;
    unsigned h = 0;
    for (const char *p = ks_meta_uid(rc); *p; p++)
        h = h * 31 + (unsigned char)*p;
    char ip[32];
    ks_fmt(ip, sizeof(ip), "10.96.%u.%u", (h >> 8) % 250, h % 250 + 2);
    json_t *svc = json_pack(
        "{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s},s:[{s:s,s:s,s:s,s:s,s:b,s:b}]},"
        "s:{s:s,s:s,s:{s:s,s:s},s:[{s:s,s:i},{s:s,s:i},{s:s,s:i}]}}",
        "apiVersion", "v1", "kind", "Service", "metadata", "name", name, "namespace",
        ks_meta_ns(rc), "labels", "ray.io/cluster", ks_meta_name(rc), "ray.io/node-type", "head",
        "ownerReferences", "apiVersion", "ray.io/v1", "kind", "RayCluster", "name",
        ks_meta_name(rc), "uid", ks_meta_uid(rc), "controller", 1, "blockOwnerDeletion", 1, "spec",
        "type", "ClusterIP", "clusterIP", ip, "selector", "ray.io/cluster", ks_meta_name(rc),
        "ray.io/node-type", "head", "ports", "name", "dashboard", "port", 8265, "name", "client",
        "port", 10001, "name", "gcs", "port", 6379);
    ks_store_create(KS_RT_SERVICES, svc, NULL);
}

static int pod_running(json_t *p)
{
    return ks_streq(ks_jstr(p, "status.phase"), "Running") &&
           !ks_jget(p, "metadata.deletionTimestamp");
}

static void sync_cluster(json_t *rc, json_t **pods, size_t np)
{
    if (ks_jget(rc, "metadata.deletionTimestamp") || ks_jbool(rc, "spec.suspend", 0))
        return;
    const char *cn = ks_meta_name(rc);
    json_t *head = NULL;
    long long workers_run = 0, workers_want = 0;
    json_t *counts = json_object();
    for (size_t i = 0; i < np; i++) {
        json_t *p = pods[i];
        if (!ks_streq(ks_label(p, "ray.io/cluster"), cn) ||
            !ks_streq(ks_meta_ns(p), ks_meta_ns(rc)))
            continue;
        const char *ph = ks_jstr(p, "status.phase");
        if (ks_jget(p, "metadata.deletionTimestamp") || ks_streq(ph, "Succeeded") ||
            ks_streq(ph, "Failed")) {
            /* A dead Ray node is replaced, like the operator does. */
            if (!ks_jget(p, "metadata.deletionTimestamp"))
                ks_delete(KS_RT_PODS, ks_meta_ns(p), ks_meta_name(p), "Background", 0, NULL);
            continue;
        }
        if (ks_streq(ks_label(p, "ray.io/node-type"), "head")) {
            head = p;
        } else {
            const char *g = ks_label(p, "ray.io/group");
            json_object_set_new(
                counts, g ? g : "",
                json_integer(json_integer_value(json_object_get(counts, g ? g : "")) + 1));
            if (pod_running(p))
                workers_run++;
        }
    }
    if (!head) {
        json_t *pod = ray_pod(rc, ks_jget(rc, "spec.headGroupSpec.template"), "head", "headgroup");
        ks_store_create(KS_RT_PODS, pod, NULL);
    }
    long long cpu = 0, mem = 0, gpu = 0;
    size_t i;
    json_t *wg;
    json_array_foreach(ks_jget(rc, "spec.workerGroupSpecs"), i, wg)
    {
        const char *g = ks_jstr(wg, "groupName");
        long long want = ks_jint(wg, "replicas", 0) * ks_jint(wg, "numOfHosts", 1);
        workers_want += want;
        json_t *req = ks_pod_requests(ks_jget(wg, "template.spec"));
        cpu += json_integer_value(json_object_get(req, "cpu")) * want;
        mem += json_integer_value(json_object_get(req, "memory")) * want;
        gpu += json_integer_value(json_object_get(req, "nvidia.com/gpu")) * want;
        json_decref(req);
        for (long long k = json_integer_value(json_object_get(counts, g ? g : "")); k < want; k++) {
            json_t *pod = ray_pod(rc, json_object_get(wg, "template"), "worker", g ? g : "workers");
            ks_store_create(KS_RT_PODS, pod, NULL);
        }
    }
    json_decref(counts);
    ensure_service(rc);
    json_t *req = ks_pod_requests(ks_jget(rc, "spec.headGroupSpec.template.spec"));
    cpu += json_integer_value(json_object_get(req, "cpu"));
    mem += json_integer_value(json_object_get(req, "memory"));
    gpu += json_integer_value(json_object_get(req, "nvidia.com/gpu"));
    json_decref(req);
    json_t *c = json_deep_copy(rc);
    json_t *st = ks_jobj(c, "status");
    char q[64];
    json_object_set_new(st, "desiredWorkerReplicas", json_integer(workers_want));
    json_object_set_new(st, "availableWorkerReplicas", json_integer(workers_run));
    json_object_set_new(st, "readyWorkerReplicas", json_integer(workers_run));
    ks_qty_fmt(cpu, q, sizeof(q));
    json_object_set_new(st, "desiredCPU", json_string(q));
    ks_qty_fmt(mem, q, sizeof(q));
    json_object_set_new(st, "desiredMemory", json_string(q));
    ks_qty_fmt(gpu, q, sizeof(q));
    json_object_set_new(st, "desiredGPU", json_string(q));
    json_object_set_new(st, "desiredTPU", json_string("0"));
    char svc[400];
    ks_fmt(svc, sizeof(svc), "%s-head-svc", cn);
    json_t *so = ks_store_get(KS_RT_SERVICES, ks_meta_ns(rc), svc);
    int ready = head && pod_running(head) && workers_run >= workers_want;
    if (head) {
        json_t *h =
            json_pack("{s:s?,s:s?,s:s?}", "podIP", ks_jstr(head, "status.podIP"), "serviceIP",
                      ks_jstr(so, "spec.clusterIP"), "podName", ks_meta_name(head));
        json_object_set_new(st, "head", h);
    }
    json_object_set_new(
        st, "endpoints",
        json_pack("{s:s,s:s,s:s}", "client", "10001", "dashboard", "8265", "gcs-server", "6379"));
    ks_cond_set(st, "HeadPodReady", head && pod_running(head) ? "True" : "False",
                head && pod_running(head) ? "HeadPodRunningAndReady" : "HeadPodNotFound", "", 0);
    if (ready) {
        ks_cond_set(st, "RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime",
                    "All Ray Pods are ready for the first time", 0);
        json_object_set_new(st, "state", json_string("ready"));
        /* KubeRay 1.7 records when each state was entered; its CRD
         * declares no readyTime (the server would prune it). */
        if (!ks_jget(st, "stateTransitionTimes.ready"))
            ks_jset(st, "stateTransitionTimes.ready", ks_json_now());
    }
    ks_store_update(KS_RT_RAYCLUSTERS, c, NULL);
}

/* ---- RayJob ---- */

static void set_ds(json_t *st, const char *ds)
{
    json_object_set_new(st, "jobDeploymentStatus", json_string(ds));
}

static json_t *head_pod(json_t *rj, const char *cluster)
{
    json_t **pods = NULL;
    json_t *found = NULL;
    size_t n = ks_store_list(KS_RT_PODS, ks_meta_ns(rj), &pods);
    for (size_t i = 0; i < n && !found; i++)
        if (ks_streq(ks_label(pods[i], "ray.io/cluster"), cluster) &&
            ks_streq(ks_label(pods[i], "ray.io/node-type"), "head") && pod_running(pods[i]))
            found = pods[i];
    free(pods);
    return found;
}

static void create_cluster(json_t *rj, const char *name)
{
    json_t *labels = json_deep_copy(ks_jget(rj, "metadata.labels"));
    if (!json_is_object(labels)) {
        json_decref(labels);
        labels = json_object();
    }
    json_object_set_new(labels, "ray.io/originated-from-cr-name", json_string(ks_meta_name(rj)));
    json_object_set_new(labels, "ray.io/originated-from-crd", json_string("RayJob"));
    const char *mode = ks_jstr(rj, "spec.submissionMode");
    json_object_set_new(labels, "ray.io/job-submission-mode",
                        json_string(mode ? mode : "K8sJobMode"));
    json_t *rc = json_pack(
        "{s:s,s:s,s:{s:s,s:s,s:o,s:[{s:s,s:s,s:s,s:s,s:b,s:b}]},s:O}", "apiVersion", "ray.io/v1",
        "kind", "RayCluster", "metadata", "name", name, "namespace", ks_meta_ns(rj), "labels",
        labels, "ownerReferences", "apiVersion", "ray.io/v1", "kind", "RayJob", "name",
        ks_meta_name(rj), "uid", ks_meta_uid(rj), "controller", 1, "blockOwnerDeletion", 1, "spec",
        ks_jget(rj, "spec.rayClusterSpec") ? ks_jget(rj, "spec.rayClusterSpec") : json_object());
    ks_defaults(KS_RT_RAYCLUSTERS, rc, NULL);
    if (ks_store_create(KS_RT_RAYCLUSTERS, rc, NULL) == KS_OK)
        ks_event_emit(KS_RT_RAYJOBS, rj, "Normal", "Created", "Created RayCluster %s/%s",
                      ks_meta_ns(rj), name);
}

static void create_submitter(json_t *rj, json_t *head)
{
    json_t *tmpl = json_deep_copy(ks_jget(rj, "spec.submitterPodTemplate"));
    if (!tmpl) {
        const char *img = ks_jstr(json_array_get(ks_jget(rj, "spec.rayClusterSpec.headGroupSpec."
                                                             "template.spec.containers"),
                                                 0),
                                  "image");
        tmpl = json_pack("{s:{s:[{s:s,s:s,s:{s:{s:s,s:s},s:{s:s,s:s}}}],s:s}}", "spec",
                         "containers", "name", "ray-job-submitter", "image", img ? img : "ray",
                         "resources", "requests", "cpu", "500m", "memory", "200Mi", "limits", "cpu",
                         "1", "memory", "1Gi", "restartPolicy", "Never");
    }
    if (!ks_jget(tmpl, "spec.restartPolicy"))
        ks_jset(tmpl, "spec.restartPolicy", json_string("Never"));
    json_object_set_new(ks_jobj(tmpl, "metadata.annotations"), "kubesim.io/follow-driver",
                        json_string(ks_meta_uid(head)));
    json_t *sel = ks_jget(rj, "metadata.labels");
    (void)sel;
    json_t *job = json_pack(
        "{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s,s:s},s:[{s:s,s:s,s:s,s:s,s:b,s:b}]},s:{s:I,s:o}}",
        "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", ks_meta_name(rj), "namespace",
        ks_meta_ns(rj), "labels", "ray.io/originated-from-cr-name", ks_meta_name(rj),
        "ray.io/originated-from-crd", "RayJob", "app.kubernetes.io/created-by", "kuberay-operator",
        "ownerReferences", "apiVersion", "ray.io/v1", "kind", "RayJob", "name", ks_meta_name(rj),
        "uid", ks_meta_uid(rj), "controller", 1, "blockOwnerDeletion", 1, "spec", "backoffLimit",
        (json_int_t)ks_jint(rj, "spec.submitterConfig.backoffLimit", 2), "template", tmpl);
    char uid[40];
    ks_uuid(uid, sizeof(uid));
    ks_jset(job, "metadata.uid", json_string(uid));
    ks_defaults(KS_RT_JOBS, job, NULL);
    ks_store_create(KS_RT_JOBS, job, NULL);
}

static double ann_num(json_t *o, const char *key, double dflt)
{
    const char *v = ks_annotation(o, key);
    return v ? strtod(v, NULL) : dflt;
}

static void reset_for_new(json_t *st)
{
    const char *drop[] = {"rayClusterName", "dashboardURL",     "jobId",  "message", "reason",
                          "rayJobInfo",     "rayClusterStatus", "endTime"};
    for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
        json_object_del(st, drop[i]);
    json_object_set_new(st, "jobStatus", json_string(""));
}

static void sync_rayjob(json_t *rj)
{
    json_t *c = json_deep_copy(rj);
    json_t *st = ks_jobj(c, "status");
    const char *ds = ks_jstr(st, "jobDeploymentStatus");
    const char *cluster = ks_jstr(st, "rayClusterName");
    char cname[300], buf[600];
    int suspend = ks_jbool(rj, "spec.suspend", 0);
    if (ks_jget(rj, "metadata.deletionTimestamp")) {
        ks_finalizer_remove(c, RJ_FINALIZER);
        ks_store_update(KS_RT_RAYJOBS, c, NULL);
        return;
    }
    if (!ds || !ds[0]) {
        ks_finalizer_add(c, RJ_FINALIZER);
        char sfx[8];
        ks_rand_suffix(sfx, sizeof(sfx));
        ks_fmt(cname, sizeof(cname), "%s-%s", ks_meta_name(rj), sfx);
        const char *jid = ks_jstr(rj, "spec.jobId");
        ks_rand_suffix(sfx, sizeof(sfx));
        ks_fmt(buf, sizeof(buf), "%s-%s", ks_meta_name(rj), sfx);
        json_object_set_new(st, "jobId", json_string(jid ? jid : buf));
        json_object_set_new(st, "rayClusterName", json_string(cname));
        json_object_set_new(st, "jobStatus", json_string(""));
        json_object_set_new(st, "startTime", ks_json_now());
        json_object_set_new(st, "observedGeneration",
                            json_integer(ks_jint(rj, "metadata.generation", 1)));
        set_ds(st, "Initializing");
        ks_store_update(KS_RT_RAYJOBS, c, NULL);
        return;
    }
    if (suspend && (ks_streq(ds, "Initializing") || ks_streq(ds, "Running")))
        set_ds(st, ds = "Suspending");
    json_t *rc = cluster ? ks_store_get(KS_RT_RAYCLUSTERS, ks_meta_ns(rj), cluster) : NULL;
    if (ks_streq(ds, "Initializing")) {
        if (!rc) {
            create_cluster(rj, cluster);
        } else {
            json_object_set(st, "rayClusterStatus",
                            json_object_get(rc, "status") ? json_object_get(rc, "status")
                                                          : json_object());
            json_t *head = head_pod(rj, cluster);
            if (ks_streq(ks_jstr(rc, "status.state"), "ready") && head) {
                ks_fmt(buf, sizeof(buf), "%s-head-svc.%s.svc.cluster.local:8265", cluster,
                       ks_meta_ns(rj));
                json_object_set_new(st, "dashboardURL", json_string(buf));
                const char *ep = ks_jstr(rj, "spec.entrypoint");
                char *program = driver_program(rj, ep ? ep : "true");
                json_t *c0 = json_array_get(ks_jget(head, "spec.containers"), 0);
                ks_pods_start_driver(ks_meta_uid(head), program, c0,
                                     ann_num(rj, "kubesim.io/duration-seconds", 1),
                                     (int)ann_num(rj, "kubesim.io/exit-code", 0));
                free(program);
                const char *mode = ks_jstr(rj, "spec.submissionMode");
                if (!mode || !strcmp(mode, "K8sJobMode"))
                    create_submitter(rj, head);
                json_object_set_new(st, "jobStatus", json_string("RUNNING"));
                json_object_set_new(st, "rayJobInfo",
                                    json_pack("{s:o}", "startTime", ks_json_now()));
                set_ds(st, "Running");
            }
        }
    } else if (ks_streq(ds, "Running")) {
        json_t *head = cluster ? head_pod(rj, cluster) : NULL;
        int code = 0;
        int drv = head ? ks_pods_driver_state(ks_meta_uid(head), &code) : 2;
        if (!head)
            code = 1;
        if (rc)
            json_object_set(st, "rayClusterStatus",
                            json_object_get(rc, "status") ? json_object_get(rc, "status")
                                                          : json_object());
        json_t *sub = ks_store_get(KS_RT_JOBS, ks_meta_ns(rj), ks_meta_name(rj));
        const char *mode = ks_jstr(rj, "spec.submissionMode");
        int k8s = !mode || !strcmp(mode, "K8sJobMode");
        json_t *sst = json_object_get(sub, "status");
        int sub_done = !k8s || ks_cond_true(sst, "Complete") || ks_cond_true(sst, "Failed");
        if (drv == 2 && sub_done) {
            int ok = code == 0;
            json_object_set_new(st, "jobStatus", json_string(ok ? "SUCCEEDED" : "FAILED"));
            ks_fmt(buf, sizeof(buf),
                   ok ? "Job finished successfully."
                      : "Job entrypoint command failed with exit code %d",
                   code);
            json_object_set_new(st, "message", json_string(buf));
            json_object_set_new(ks_jobj(st, "rayJobInfo"), "endTime", ks_json_now());
            json_object_set_new(st, "endTime", ks_json_now());
            json_object_set_new(st, ok ? "succeeded" : "failed",
                                json_integer(ks_jint(st, ok ? "succeeded" : "failed", 0) + 1));
            if (ok) {
                set_ds(st, "Complete");
            } else {
                set_ds(st, "Failed");
                json_object_set_new(st, "reason", json_string("AppFailed"));
            }
            ks_event_emit(KS_RT_RAYJOBS, rj, ok ? "Normal" : "Warning", ok ? "Completed" : "Failed",
                          "%s", buf);
        }
    } else if (ks_streq(ds, "Complete") || ks_streq(ds, "Failed")) {
        double end = ks_parse_time(ks_jstr(st, "endTime"));
        long long ttl = ks_jint(rj, "spec.ttlSecondsAfterFinished", 0);
        if (rc && ks_jbool(rj, "spec.shutdownAfterJobFinishes", 0) && end > 0 &&
            ks_now() >= end + (double)ttl && !ks_jget(rc, "metadata.deletionTimestamp"))
            ks_delete(KS_RT_RAYCLUSTERS, ks_meta_ns(rj), cluster, "Background", -1, NULL);
    } else if (ks_streq(ds, "Suspending")) {
        json_t *sub = ks_store_get(KS_RT_JOBS, ks_meta_ns(rj), ks_meta_name(rj));
        if (rc && !ks_jget(rc, "metadata.deletionTimestamp"))
            ks_delete(KS_RT_RAYCLUSTERS, ks_meta_ns(rj), cluster, "Foreground", -1, NULL);
        if (sub && !ks_jget(sub, "metadata.deletionTimestamp"))
            ks_delete(KS_RT_JOBS, ks_meta_ns(rj), ks_meta_name(rj), "Background", -1, NULL);
        if (!rc && !sub) {
            reset_for_new(st);
            set_ds(st, "Suspended");
        }
    } else if (ks_streq(ds, "Suspended")) {
        if (!suspend)
            set_ds(st, ""); /* back to New: new cluster name, job id, start time */
    }
    ks_store_update(KS_RT_RAYJOBS, c, NULL);
}

int ks_rayjob_active(void)
{
    return ks_store_count(KS_RT_RAYJOBS) + ks_store_count(KS_RT_RAYCLUSTERS) > 0;
}

void ks_rayjob_pass(void)
{
    json_t **items = NULL;
    size_t n = ks_store_list(KS_RT_RAYJOBS, NULL, &items);
    for (size_t i = 0; i < n; i++)
        json_incref(items[i]);
    for (size_t i = 0; i < n; i++) {
        sync_rayjob(items[i]);
        json_decref(items[i]);
    }
    free(items);
    n = ks_store_list(KS_RT_RAYCLUSTERS, NULL, &items);
    if (!n) {
        free(items);
        return;
    }
    json_t **pods = NULL;
    size_t np = ks_store_list(KS_RT_PODS, NULL, &pods);
    for (size_t i = 0; i < n; i++)
        json_incref(items[i]);
    for (size_t i = 0; i < np; i++)
        json_incref(pods[i]);
    for (size_t i = 0; i < n; i++) {
        sync_cluster(items[i], pods, np);
        json_decref(items[i]);
    }
    for (size_t i = 0; i < np; i++)
        json_decref(pods[i]);
    free(items);
    free(pods);
}
