/* ray.io/v1 RayJob rendering (engine: rayjob). */
#include "render/rayjob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "render/metadata.h"
#include "spec/digest.h"
#include "spec/units.h"

#define RJ_TUNE_DRIVER "_tau_tune_driver.py"

/* Decodes TAU_PAYLOAD_<i> = "<name>:<sha256>:<base64>" into /script and
 * verifies each digest, so a corrupted template cannot run the wrong code. */
static const char rj_payload_py[] =
    "import base64, hashlib, os, sys\n"
    "i = 0\n"
    "while 'TAU_PAYLOAD_%d' % i in os.environ:\n"
    "    name, digest, data = os.environ['TAU_PAYLOAD_%d' % i].split(':', 2)\n"
    "    raw = base64.b64decode(data)\n"
    "    if hashlib.sha256(raw).hexdigest() != digest:\n"
    "        sys.exit('tau-payload: digest mismatch for ' + name)\n"
    "    with open(os.path.join('/script', os.path.basename(name)), 'wb') as f:\n"
    "        f.write(raw)\n"
    "    i += 1\n"
    "print('tau-payload: %d file(s) in /script' % i)\n";

/* Ray Tune driver: every execution.configs key is a search dimension and a
 * list makes grid points; the user's script provides the trainable. */
static const char rj_tune_py[] =
    "import importlib.util, json, os, sys\n"
    "from ray import tune\n"
    "path = os.environ['TAU_TUNE_TRAIN_PATH']\n"
    "spec = importlib.util.spec_from_file_location(os.environ['TAU_TUNE_TRAIN_MODULE'], path)\n"
    "mod = importlib.util.module_from_spec(spec)\n"
    "sys.modules[spec.name] = mod\n"
    "spec.loader.exec_module(mod)\n"
    "fn = next((getattr(mod, n) for n in ('train_func', 'train_fn', 'train', 'main')\n"
    "           if callable(getattr(mod, n, None))), None)\n"
    "if fn is None:\n"
    "    sys.exit('tau tune: %s defines none of train_func, train_fn, train, main' % path)\n"
    "space = {k: tune.grid_search(v) if isinstance(v, list) else v\n"
    "         for k, v in json.loads(os.environ.get('TAU_TUNE_PARAM_SPACE', '{}')).items()}\n"
    "cfg = tune.TuneConfig(metric=os.environ['TAU_TUNE_METRIC'],\n"
    "                      mode=os.environ.get('TAU_TUNE_MODE', 'min'),\n"
    "                      num_samples=int(os.environ.get('TAU_TUNE_NUM_SAMPLES', '1')),\n"
    "                      max_concurrent_trials=int(os.environ.get("
    "'TAU_TUNE_MAX_CONCURRENT_TRIALS', '1')))\n"
    "result = tune.Tuner(fn, param_space=space, tune_config=cfg).fit()\n"
    "best = result.get_best_result()\n"
    "print('tau tune: best config ' + json.dumps(best.config, sort_keys=True, default=str))\n";

void tg_render_ray_version(const char *image, char *out, size_t n)
{
    const char *p = image;
    while ((p = strstr(p, "-ray")) != NULL) {
        p += 4;
        unsigned a, b, c;
        int used = 0;
        if (sscanf(p, "%u.%u.%u%n", &a, &b, &c, &used) == 3 && used > 0) {
            snprintf(out, n, "%u.%u.%u", a, b, c);
            return;
        }
    }
    const char *colon = strrchr(image, ':');
    const char *slash = strrchr(image, '/');
    if (colon && (!slash || colon > slash) && colon - image >= 4 &&
        strncmp(colon - 4, "/ray", 4) == 0) {
        unsigned a, b, c;
        if (sscanf(colon + 1, "%u.%u.%u", &a, &b, &c) == 3) {
            snprintf(out, n, "%u.%u.%u", a, b, c);
            return;
        }
    }
    snprintf(out, n, "%s", TG_RENDER_RAY_VERSION_DEFAULT);
}

static int rj_version_below(const char *v, unsigned major, unsigned minor)
{
    unsigned a = 0, b = 0;
    if (sscanf(v, "%u.%u", &a, &b) != 2)
        return 0;
    return a < major || (a == major && b < minor);
}

typedef struct rj_payload_s {
    json_t *env;  /* TAU_PAYLOAD_<i> entries for the init container */
    tg_buf_t list; /* "name:sha256\n" lines, hashed into the payload digest */
    size_t n;
} rj_payload_t;

static void rj_payload_add(rj_payload_t *p, const char *name, const void *data, size_t len)
{
    char hex[65], key[32];
    tg_spec_sha256_hex(data, len, hex);
    char *b64 = tg_spec_b64_encode(data, len);
    size_t need = strlen(name) + 66 + strlen(b64) + 2;
    char *val = tg_xmalloc(need);
    snprintf(val, need, "%s:%s:%s", name, hex, b64);
    snprintf(key, sizeof(key), "TAU_PAYLOAD_%zu", p->n++);
    tg_render_env_set(p->env, key, val);
    if (tg_buf_printf(&p->list, "%s:%s\n", name, hex) != TG_OK)
        tg_buf_reset(&p->list);
    free(val);
    free(b64);
}

static const char *rj_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The driver program the dashboard runs on the head (HTTPMode). */
static tg_rc_e rj_entrypoint(tg_render_ctx_t *c, int has_req, const char *wd, tg_buf_t *b)
{
    tg_rc_e rc = tg_buf_puts(b, "set -eu\n");
    if (rc == TG_OK && has_req)
        rc = tg_buf_puts(b, "python3 -m pip install -r /script/requirements.txt || python3 -m pip "
                            "install --user -r /script/requirements.txt\n"
                            "export PATH=\"$(python3 -m site --user-base)/bin:$PATH\"\n");
    if (rc != TG_OK)
        return rc;
    if (strcmp(c->launcher, "ray-tune") == 0)
        return tg_buf_puts(b, "cd /data\nexec python3 /script/" RJ_TUNE_DRIVER "\n");
    if (wd) {
        /* Ray unpacks the archive as the job's working_dir and puts it on
         * PYTHONPATH; the entrypoint runs as a module from there. */
        char mod[512];
        snprintf(mod, sizeof(mod), "%s", c->entrypoint);
        size_t n = strlen(mod);
        if (n > 3 && strcmp(mod + n - 3, ".py") == 0)
            mod[n - 3] = '\0';
        for (char *p = mod; *p; p++)
            if (*p == '/')
                *p = '.';
        return tg_buf_printf(b, "exec python3 -m %s\n", mod);
    }
    return tg_buf_printf(b, "cd /data\nexec python3 /script/%s\n", rj_base(c->entrypoint));
}

static json_t *rj_runtime_env(const json_t *rc, const char *wd)
{
    tg_buf_t b;
    tg_buf_init(&b, 1 << 20);
    const json_t *pip = tg_render_get(rc, "runtime", "pip");
    tg_rc_e r = TG_OK;
    if (json_array_size(pip)) {
        r = tg_buf_puts(&b, "pip:\n");
        size_t i;
        const json_t *p;
        json_array_foreach(pip, i, p)
        {
            char *q = tg_render_json_text(p);
            if (r == TG_OK)
                r = tg_buf_printf(&b, "- %s\n", q ? q : "\"\"");
            free(q);
        }
    }
    if (r == TG_OK && wd)
        r = tg_buf_puts(&b, "working_dir: \"file:///script/" TG_SPEC_PROJECT_ARCHIVE "\"\n");
    json_t *out = (r == TG_OK && b.len) ? json_string(b.data) : NULL;
    tg_buf_clean(&b);
    return out;
}

static json_t *rj_ray_env(tg_render_ctx_t *c)
{
    const json_t *rc = c->rc;
    json_t *env = json_array();
    tg_render_env_set(env, "TAU_DATA_DIR", "/data");
    tg_render_env_set(env, "TAU_HOT_DIR", "/mnt");
    tg_render_env_set(env, "HF_HOME", "/tmp/hf");
    tg_render_env_set(env, "NCCL_DEBUG", "WARN");
    tg_render_env_set(env, "NCCL_SOCKET_IFNAME", "eth0");
    tg_render_env_user(env, rc);
    json_int_t workers = tg_render_int(rc, "compute", "workers", 1);
    char num[32];
    tg_render_env_set(env, "TAU_DIST_BACKEND", c->gpus > 0 ? "nccl" : "gloo");
    snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, c->gpus > 0 ? workers * c->gpus : workers);
    tg_render_env_set(env, "TAU_NUM_WORKERS", num);
    tg_render_env_set(env, "TAU_WORLD_SIZE", num);
    const json_t *cfg = tg_render_get(rc, "execution", "configs");
    char *cj = tg_render_json_text(cfg ? cfg : json_object());
    if (strcmp(c->launcher, "ray-tune") == 0) {
        char path[300], mod[300];
        snprintf(path, sizeof(path), "/script/%s", rj_base(c->entrypoint));
        snprintf(mod, sizeof(mod), "%s", rj_base(c->entrypoint));
        char *dot = strrchr(mod, '.');
        if (dot)
            *dot = '\0';
        tg_render_env_set(env, "TAU_TUNE_TRAIN_PATH", path);
        tg_render_env_set(env, "TAU_TUNE_TRAIN_MODULE", mod);
        const char *metric = tg_render_str(rc, "execution", "metric");
        tg_render_env_set(env, "TAU_TUNE_METRIC", metric ? metric : "");
        const char *mode = tg_render_str(rc, "execution", "mode");
        tg_render_env_set(env, "TAU_TUNE_MODE", mode ? mode : "min");
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
                 tg_render_int(rc, "execution", "num_samples", 1));
        tg_render_env_set(env, "TAU_TUNE_NUM_SAMPLES", num);
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
                 tg_render_int(rc, "execution", "max_concurrent_trials", 1));
        tg_render_env_set(env, "TAU_TUNE_MAX_CONCURRENT_TRIALS", num);
        tg_render_env_set(env, "TAU_TUNE_PARAM_SPACE", cj ? cj : "{}");
    } else {
        tg_render_env_set(env, "TAU_RAY_TRAIN_CONFIG_JSON", cj ? cj : "{}");
    }
    free(cj);
    tg_render_env_platform(env, c);
    return env;
}

static json_t *rj_port(const char *name, int port)
{
    return json_pack("{s:s, s:i, s:s}", "name", name, "containerPort", port, "protocol", "TCP");
}

static json_t *rj_payload_init(tg_render_ctx_t *c, const json_t *penv)
{
    json_t *ic = json_object();
    json_object_set_new(ic, "name", json_string("tau-payload"));
    json_object_set_new(ic, "image", json_string(c->image));
    json_object_set_new(ic, "command", json_pack("[s, s, s]", "python3", "-c", rj_payload_py));
    json_object_set_new(ic, "env", json_deep_copy(penv));
    json_object_set_new(ic, "resources",
                        json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}", "requests", "cpu", "50m",
                                  "memory", "64Mi", "limits", "cpu", "500m", "memory", "256Mi"));
    json_object_set_new(ic, "volumeMounts",
                        json_pack("[{s:s, s:s}]", "name", "script", "mountPath", "/script"));
    json_t *sec = tg_render_container_security(c->rc);
    if (sec)
        json_object_set_new(ic, "securityContext", sec);
    return ic;
}

/* One pod template (head when `group` is NULL). */
static json_t *rj_template(tg_render_ctx_t *c, const char *role, const char *res_prefix,
                           json_int_t gpus, const json_t *env, const json_t *penv, int payload,
                           const char *ray_version)
{
    int head = strcmp(role, "head") == 0;
    json_t *volumes = json_array(), *mounts = json_array();
    if (payload)
        json_array_append_new(volumes, json_pack("{s:s, s:{}}", "name", "script", "emptyDir"));
    if (payload)
        json_array_append_new(mounts, json_pack("{s:s, s:s, s:b}", "name", "script", "mountPath",
                                                "/script", "readOnly", 1));
    tg_render_volumes(c, volumes, mounts, 1);

    json_t *ctr = json_object();
    json_object_set_new(ctr, "name", json_string(head ? "ray-head" : "ray-worker"));
    json_object_set_new(ctr, "image", json_string(c->image));
    json_object_set_new(ctr, "env", json_deep_copy(env));
    json_t *ports = json_array();
    json_array_append_new(ports, rj_port("metrics", 8080));
    if (head) {
        json_array_append_new(ports, rj_port("gcs", 6379));
        json_array_append_new(ports, rj_port("dashboard", 8265));
        json_array_append_new(ports, rj_port("client", 10001));
    }
    json_object_set_new(ctr, "ports", ports);
    json_object_set_new(ctr, "resources", tg_render_resources(c, res_prefix, gpus));
    json_object_set_new(ctr, "volumeMounts", mounts);
    json_t *csec = tg_render_container_security(c->rc);
    if (csec)
        json_object_set_new(ctr, "securityContext", csec);
    if (!head) {
        const char *hz =
            rj_version_below(ray_version, 2, 53) ? "/api/local_raylet_healthz" : "/api/healthz";
        json_object_set_new(ctr, "startupProbe",
                            json_pack("{s:{s:s, s:i}, s:i, s:i, s:i}", "httpGet", "path", hz,
                                      "port", 52365, "periodSeconds", 5, "timeoutSeconds", 2,
                                      "failureThreshold", 60));
        json_object_set_new(ctr, "readinessProbe",
                            json_pack("{s:{s:i}, s:i, s:i, s:i, s:i}", "tcpSocket", "port", 52365,
                                      "initialDelaySeconds", 60, "periodSeconds", 10,
                                      "failureThreshold", 3, "timeoutSeconds", 10));
        json_object_set_new(ctr, "livenessProbe",
                            json_pack("{s:{s:i}, s:i, s:i, s:i, s:i}", "tcpSocket", "port", 52365,
                                      "initialDelaySeconds", 60, "periodSeconds", 30,
                                      "failureThreshold", 6, "timeoutSeconds", 10));
    }

    json_t *pod = json_object();
    json_object_set_new(pod, "containers", json_pack("[o]", ctr));
    if (payload)
        json_object_set_new(pod, "initContainers", json_pack("[o]", rj_payload_init(c, penv)));
    json_object_set_new(pod, "volumes", volumes);
    json_object_set_new(pod, "terminationGracePeriodSeconds", json_integer(600));
    const char *ppc = tg_render_str(c->rc, "policy", "pod_priority_class");
    if (ppc)
        json_object_set_new(pod, "priorityClassName", json_string(ppc));
    json_t *tol = json_array();
    tg_render_profile_tolerations(tol, c->rc);
    if (head) {
        json_array_append_new(tol, json_pack("{s:s, s:s, s:s}", "key", "CriticalAddonsOnly",
                                             "operator", "Exists", "effect", "NoSchedule"));
        /* Control-only head: prefer the AKS system pool, or any node without
         * the pool label (every non-AKS cluster). */
        json_object_set_new(
            pod, "affinity",
            json_pack("{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}, {s:[{s:s, s:s}]}]}}}", "nodeAffinity",
                      "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
                      "matchExpressions", "key", "kubernetes.azure.com/mode", "operator", "In",
                      "values", "system", "matchExpressions", "key", "kubernetes.azure.com/mode",
                      "operator", "DoesNotExist"));
    } else {
        json_t *sel = tg_render_node_selector(c, gpus > 0);
        if (sel)
            json_object_set_new(pod, "nodeSelector", sel);
        if (gpus > 0)
            tg_render_gpu_tolerations(tol);
    }
    if (json_array_size(tol))
        json_object_set_new(pod, "tolerations", tol);
    else
        json_decref(tol);
    json_t *psec = tg_render_pod_security(c->rc);
    if (psec)
        json_object_set_new(pod, "securityContext", psec);

    json_t *ann = json_pack("{s:s, s:s}", "adx-mon/scrape", "true", "adx-mon/port", "8080");
    if (!head)
        tg_render_topology_annotations(c->rc, ann);
    json_t *meta = json_pack("{s:o, s:o}", "labels", tg_render_labels(c, 0), "annotations", ann);
    return json_pack("{s:o, s:o}", "metadata", meta, "spec", pod);
}

static json_t *rj_group(tg_render_ctx_t *c, const char *suffix, json_int_t replicas,
                        json_int_t gpus, const char *res_prefix, const json_t *env,
                        const json_t *penv, int payload, const char *ray_version)
{
    char gname[80], ng[32];
    snprintf(gname, sizeof(gname), "%s-%s", c->name, suffix);
    snprintf(ng, sizeof(ng), "%" JSON_INTEGER_FORMAT, gpus);
    return json_pack("{s:s, s:I, s:I, s:I, s:{s:s}, s:o}", "groupName", gname, "replicas",
                     (json_int_t)replicas, "minReplicas", (json_int_t)replicas, "maxReplicas",
                     (json_int_t)replicas, "rayStartParams", "num-gpus", ng, "template",
                     rj_template(c, "worker", res_prefix, gpus, env, penv, payload, ray_version));
}

tg_rc_e tg_render_rayjob(tg_render_ctx_t *c, json_t *out)
{
    tg_rc_e rc = TG_EINVAL;
    const json_t *r = c->rc;
    rj_payload_t pl = {.env = json_array()};
    tg_buf_init(&pl.list, 1 << 20);
    tg_buf_t ep;
    tg_buf_init(&ep, 1 << 20);
    json_t *env = NULL;
    const char *wd = tg_render_str(r, "run", "working_dir");
    int tune = strcmp(c->launcher, "ray-tune") == 0;

    if (!c->entrypoint) {
        tg_render_fail(c, "a RayJob needs an entrypoint");
        goto out;
    }
    const tg_spec_file_t *req = tg_spec_files_find(c->files, TG_SPEC_REQUIREMENTS);
    if (wd) {
        const tg_spec_file_t *zip = tg_spec_files_find(c->files, TG_SPEC_PROJECT_ARCHIVE);
        if (!zip) {
            tg_render_fail(c, "run.working_dir needs the project archive");
            goto out;
        }
        rj_payload_add(&pl, TG_SPEC_PROJECT_ARCHIVE, zip->data, zip->len);
    } else {
        const tg_spec_file_t *script = tg_spec_files_find(c->files, c->entrypoint);
        if (!script) {
            tg_render_fail(c, "entrypoint \"%s\" is not among the files", c->entrypoint);
            goto out;
        }
        rj_payload_add(&pl, rj_base(c->entrypoint), script->data, script->len);
    }
    if (req)
        rj_payload_add(&pl, TG_SPEC_REQUIREMENTS, req->data, req->len);
    if (tune)
        rj_payload_add(&pl, RJ_TUNE_DRIVER, rj_tune_py, strlen(rj_tune_py));
    if (rj_entrypoint(c, req != NULL, wd, &ep) != TG_OK) {
        tg_render_fail(c, "entrypoint program too large");
        goto out;
    }
    char ray_version[32];
    tg_render_ray_version(c->image, ray_version, sizeof(ray_version));
    env = rj_ray_env(c);
    /* Workers need the files too when Ray reads the project archive or the
     * Tune trainable from /script on every node. */
    int worker_payload = wd != NULL || tune;

    json_t *groups = json_array();
    json_int_t workers = tg_render_int(r, "compute", "workers", 1);
    json_array_append_new(groups, rj_group(c, "w", workers, c->gpus, "worker_", env, pl.env,
                                           worker_payload, ray_version));
    json_int_t cpu_workers = tg_render_int(r, "compute", "cpu_workers", 0);
    if (cpu_workers > 0)
        json_array_append_new(groups, rj_group(c, "cpu", cpu_workers, 0, "cpu_worker_", env,
                                               pl.env, worker_payload, ray_version));
    json_t *head = json_pack("{s:{s:s, s:s, s:s}, s:o}", "rayStartParams", "dashboard-host",
                             "0.0.0.0", "num-cpus", "0", "num-gpus", "0", "template",
                             rj_template(c, "head", "head_", 0, env, pl.env, 1, ray_version));

    json_t *spec = json_object();
    json_object_set_new(spec, "suspend", json_true());
    json_object_set_new(spec, "shutdownAfterJobFinishes", json_true());
    json_object_set_new(spec, "ttlSecondsAfterFinished",
                        json_integer(tg_render_int(r, "run", "ttl_seconds_after_finished", 15)));
    json_object_set_new(spec, "backoffLimit", json_integer(0));
    json_int_t ads = tg_render_int(r, "run", "active_deadline_seconds", 0);
    if (ads > 0)
        json_object_set_new(spec, "activeDeadlineSeconds", json_integer(ads));
    json_object_set_new(spec, "submissionMode", json_string("HTTPMode"));
    json_object_set_new(spec, "entrypoint", json_string(ep.data));
    json_t *renv = rj_runtime_env(r, wd);
    if (renv)
        json_object_set_new(spec, "runtimeEnvYAML", renv);
    json_object_set_new(spec, "rayClusterSpec",
                        json_pack("{s:s, s:o, s:o}", "rayVersion", ray_version, "headGroupSpec",
                                  head, "workerGroupSpecs", groups));

    char hex[65], digest[72];
    tg_spec_sha256_hex(pl.list.data ? pl.list.data : "", pl.list.len, hex);
    snprintf(digest, sizeof(digest), "sha256:%s", hex);
    json_t *execution = json_pack("{s:s}", "launcher", c->launcher);
    json_t *obj = json_object();
    json_object_set_new(obj, "apiVersion", json_string("ray.io/v1"));
    json_object_set_new(obj, "kind", json_string("RayJob"));
    json_object_set_new(obj, "metadata",
                        json_pack("{s:s, s:s, s:o, s:o}", "name", c->name, "namespace", c->ns,
                                  "labels", tg_render_labels(c, 1), "annotations",
                                  tg_render_annotations(c, execution, digest)));
    json_decref(execution);
    json_object_set_new(obj, "spec", spec);
    json_array_append_new(out, obj);
    rc = TG_OK;
out:
    json_decref(env);
    json_decref(pl.env);
    tg_buf_clean(&pl.list);
    tg_buf_clean(&ep);
    return rc;
}
