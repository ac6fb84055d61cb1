/* ray.io/v1 RayJob rendering (engine: rayjob). */
#include "render/rayjob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "render/metadata.h"
#include "render/payload.h"
#include "render/pod.h"
#include "core/digest.h"
#include "tauyaml/units.h"

#define RJ_TUNE_DRIVER "_tau_tune_driver.py"

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

/* "<digits>.<digits>[.<digits>]" at p, each at most 9 digits: what sscanf
 * "%u.%u[.%u]" reads there in the plain case, without its cost (it ran for
 * every RayJob). 0 when the text is anything else; callers then ask sscanf,
 * which also takes signs, blanks and overflow its own way. */
static int rj_plain_version(const char *p, unsigned *v, int parts)
{
    for (int i = 0; i < parts; i++) {
        if (i > 0 && *p++ != '.')
            return 0;
        unsigned x = 0;
        int d = 0;
        for (; *p >= '0' && *p <= '9'; p++, d++)
            x = x * 10 + (unsigned)(*p - '0');
        if (d == 0 || d > 9)
            return 0;
        v[i] = x;
    }
    return 1;
}

void tg_render_ray_version(const char *image, char *out, size_t n)
{
    const char *p = image;
    while ((p = strstr(p, "-ray")) != NULL) {
        p += 4;
        unsigned v[3];
        int used = 0;
        if (rj_plain_version(p, v, 3) ||
            (sscanf(p, "%u.%u.%u%n", &v[0], &v[1], &v[2], &used) == 3 && used > 0)) {
            snprintf(out, n, "%u.%u.%u", v[0], v[1], v[2]);
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
    unsigned x[2] = {0, 0};
    if (!rj_plain_version(v, x, 2) && sscanf(v, "%u.%u", &x[0], &x[1]) != 2)
        return 0;
    return x[0] < major || (x[0] == major && x[1] < minor);
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
    /* With staged publishing the driver's status decides the publication,
     * so it is run, not exec'd. */
    int publish = tg_render_publishes(c);
    const char *lead = publish ? "" : "exec ";
    if (rc == TG_OK && publish)
        rc = tg_buf_puts(b, "export TAU_OUTPUT_STAGING_DIR=" TG_RENDER_STAGING_DIR "\n");
    if (rc == TG_OK && publish)
        rc = tg_render_publish_head(b);
    if (rc != TG_OK)
        return rc;
    if (strcmp(c->launcher, "ray-tune") == 0) {
        rc = tg_buf_printf(b, "cd /data\n%spython3 /script/" RJ_TUNE_DRIVER "\n", lead);
    } else if (wd) {
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
        rc = tg_buf_printf(b, "%spython3 -m %s\n", lead, mod);
    } else {
        rc = tg_buf_printf(b, "cd /data\n%spython3 /script/%s\n", lead, rj_base(c->entrypoint));
    }
    if (rc == TG_OK && publish)
        rc = tg_render_publish_tail(b);
    return rc;
}

/* runtimeEnvYAML text into b (empty when there is nothing to say). */
static tg_rc_e rj_runtime_env(const json_t *rc, const char *wd, tg_buf_t *b)
{
    const json_t *pip = tg_render_get(rc, "runtime", "pip");
    tg_rc_e r = TG_OK;
    if (json_array_size(pip)) {
        r = tg_buf_puts(b, "pip:\n");
        size_t i;
        const json_t *p;
        json_array_foreach(pip, i, p) {
            char *q = tg_render_json_text(p);
            if (r == TG_OK)
                r = tg_buf_printf(b, "- %s\n", q);
            free(q);
        }
    }
    if (r == TG_OK && wd)
        r = tg_buf_puts(b, "working_dir: \"file:///script/" TG_TAUYAML_PROJECT_ARCHIVE "\"\n");
    return r;
}

static void rj_ray_env(tg_render_ctx_t *c, tg_render_env_t *env)
{
    const json_t *rc = c->rc;
    tg_render_env_set(env, "TAU_DATA_DIR", "/data");
    tg_render_env_set(env, "TAU_HOT_DIR", "/mnt");
    tg_render_env_set(env, "HF_HOME", "/tmp/hf");
    tg_render_env_set(env, "NCCL_DEBUG", "WARN");
    tg_render_env_set(env, "NCCL_SOCKET_IFNAME", "eth0");
    tg_render_env_user(env, rc);
    json_int_t workers = tg_render_int(c->compute, NULL, "workers", 1);
    char num[32];
    tg_render_env_set(env, "TAU_DIST_BACKEND", c->gpus > 0 ? "nccl" : "gloo");
    tg_render_int_text(num, c->gpus > 0 ? workers * c->gpus : workers);
    tg_render_env_set(env, "TAU_NUM_WORKERS", num);
    tg_render_env_set(env, "TAU_WORLD_SIZE", num);
    const json_t *cfg = tg_render_get(c->execution, NULL, "configs");
    char *cj = cfg ? tg_render_json_text(cfg) : NULL;
    if (strcmp(c->launcher, "ray-tune") == 0) {
        char path[300], mod[300];
        snprintf(path, sizeof(path), "/script/%s", rj_base(c->entrypoint));
        snprintf(mod, sizeof(mod), "%s", rj_base(c->entrypoint));
        char *dot = strrchr(mod, '.');
        if (dot)
            *dot = '\0';
        tg_render_env_set(env, "TAU_TUNE_TRAIN_PATH", path);
        tg_render_env_set(env, "TAU_TUNE_TRAIN_MODULE", mod);
        const char *metric = tg_render_str(c->execution, NULL, "metric");
        tg_render_env_set(env, "TAU_TUNE_METRIC", metric ? metric : "");
        const char *mode = tg_render_str(c->execution, NULL, "mode");
        tg_render_env_set(env, "TAU_TUNE_MODE", mode ? mode : "min");
        tg_render_int_text(num, tg_render_int(c->execution, NULL, "num_samples", 1));
        tg_render_env_set(env, "TAU_TUNE_NUM_SAMPLES", num);
        tg_render_int_text(num, tg_render_int(c->execution, NULL, "max_concurrent_trials", 1));
        tg_render_env_set(env, "TAU_TUNE_MAX_CONCURRENT_TRIALS", num);
        tg_render_env_set(env, "TAU_TUNE_PARAM_SPACE", cj ? cj : "{}");
    } else {
        tg_render_env_set(env, "TAU_RAY_TRAIN_CONFIG_JSON", cj ? cj : "{}");
    }
    free(cj);
    tg_render_env_platform(env, c);
}

static void rj_port(tg_jw_t *w, const char *name, int port)
{
    tg_jw_obj(w);
    tg_jw_kint(w, "containerPort", port);
    tg_jw_kstr(w, "name", name);
    tg_jw_kstr(w, "protocol", "TCP");
    tg_jw_end_obj(w);
}

static void rj_probe_tcp(tg_jw_t *w, const char *key, int delay, int period, int failures)
{
    tg_jw_kobj(w, key);
    tg_jw_kint(w, "failureThreshold", failures);
    tg_jw_kint(w, "initialDelaySeconds", delay);
    tg_jw_kint(w, "periodSeconds", period);
    tg_jw_kobj(w, "tcpSocket");
    tg_jw_kint(w, "port", 52365);
    tg_jw_end_obj(w);
    tg_jw_kint(w, "timeoutSeconds", 10);
    tg_jw_end_obj(w);
}

/* "template": one pod template (the head when `head`). */
static void rj_template(tg_render_ctx_t *c, int head, const char *res_prefix, json_int_t gpus,
                        const tg_render_env_t *env, const tg_render_env_t *penv, int payload,
                        const char *ray_version)
{
    tg_jw_t *w = c->w;
    tg_jw_kobj(w, "template");
    tg_jw_kobj(w, "metadata");
    tg_jw_kobj(w, "annotations");
    tg_jw_kstr(w, "adx-mon/port", "8080");
    tg_jw_kstr(w, "adx-mon/scrape", "true");
    if (!head)
        tg_render_topology_annotation(c);
    tg_jw_end_obj(w);
    tg_render_k_pod_labels(c, gpus);
    tg_jw_end_obj(w);

    tg_jw_kobj(w, "spec");
    if (!head)
        tg_render_k_packing_affinity(c, gpus);
    if (head)
        tg_render_k_system_affinity(c);
    tg_jw_karr(w, "containers");
    tg_jw_obj(w);
    tg_render_k_env(w, env);
    tg_jw_kstr(w, "image", c->image);
    if (!head)
        rj_probe_tcp(w, "livenessProbe", 60, 30, 6);
    tg_jw_kstr(w, "name", head ? "ray-head" : "ray-worker");
    tg_jw_karr(w, "ports");
    rj_port(w, "metrics", 8080);
    if (head) {
        rj_port(w, "gcs", 6379);
        rj_port(w, "dashboard", 8265);
        rj_port(w, "client", 10001);
    }
    tg_jw_end_arr(w);
    if (!head)
        rj_probe_tcp(w, "readinessProbe", 60, 10, 3);
    tg_render_k_resources(c, res_prefix, gpus);
    tg_render_k_container_security(c);
    if (!head) {
        tg_jw_kobj(w, "startupProbe");
        tg_jw_kint(w, "failureThreshold", 60);
        tg_jw_kobj(w, "httpGet");
        tg_jw_kstr(w, "path",
                   rj_version_below(ray_version, 2, 53) ? "/api/local_raylet_healthz"
                                                        : "/api/healthz");
        tg_jw_kint(w, "port", 52365);
        tg_jw_end_obj(w);
        tg_jw_kint(w, "periodSeconds", 5);
        tg_jw_kint(w, "timeoutSeconds", 2);
        tg_jw_end_obj(w);
    }
    tg_render_k_mounts(c, payload, 1);
    tg_jw_end_obj(w);
    tg_jw_end_arr(w); /* containers */
    tg_render_k_image_pull_secrets(c);
    if (payload)
        tg_render_k_payload_init(c, "tau-payload", penv);
    tg_render_k_scheduling(c, !head, gpus);
    tg_render_k_pod_security(c);
    tg_render_k_service_account(c);
    tg_jw_kint(w, "terminationGracePeriodSeconds", 600);
    tg_render_k_tolerations(c, head, !head && gpus > 0);
    tg_render_k_volumes(c, payload, 1);
    tg_jw_end_obj(w); /* spec */
    tg_jw_end_obj(w); /* template */
}

static void rj_group(tg_render_ctx_t *c, const char *suffix, json_int_t replicas, json_int_t gpus,
                     const char *res_prefix, const tg_render_env_t *env,
                     const tg_render_env_t *penv, int payload, const char *ray_version)
{
    tg_jw_t *w = c->w;
    char gname[80], ng[32];
    tg_render_cat(gname, sizeof(gname), c->name, "-", suffix);
    tg_render_int_text(ng, gpus);
    tg_jw_obj(w);
    tg_jw_kstr(w, "groupName", gname);
    tg_jw_kint(w, "maxReplicas", replicas);
    tg_jw_kint(w, "minReplicas", replicas);
    tg_jw_kobj(w, "rayStartParams");
    tg_jw_kstr(w, "num-gpus", ng);
    tg_jw_end_obj(w);
    tg_jw_kint(w, "replicas", replicas);
    rj_template(c, 0, res_prefix, gpus, env, penv, payload, ray_version);
    tg_jw_end_obj(w);
}

tg_rc_e tg_render_rayjob(tg_render_ctx_t *c)
{
    tg_rc_e rc = TG_EINVAL;
    const json_t *r = c->rc;
    tg_jw_t *w = c->w;
    tg_render_payload_t pl;
    tg_render_payload_init(&pl, TG_RENDER_SCRIPT_DIR);
    tg_buf_t ep, renv;
    tg_buf_init(&ep, 1 << 20);
    tg_buf_init(&renv, 1 << 20);
    tg_render_env_t env;
    tg_render_env_init(&env);
    const char *wd = tg_render_str(c->run, NULL, "working_dir");
    int tune = strcmp(c->launcher, "ray-tune") == 0;

    if (!c->entrypoint) {
        tg_render_fail(c, "a RayJob needs an entrypoint");
        goto out;
    }
    const tg_tauyaml_file_t *req = tg_tauyaml_files_find(c->files, TG_TAUYAML_REQUIREMENTS);
    char fhex[65];
    if (wd) {
        const tg_tauyaml_file_t *zip = tg_tauyaml_files_find(c->files, TG_TAUYAML_PROJECT_ARCHIVE);
        if (!zip) {
            tg_render_fail(c, "run.working_dir needs the project archive");
            goto out;
        }
        tg_render_file_sha256(c, zip, fhex);
        tg_render_payload_add(&pl, TG_TAUYAML_PROJECT_ARCHIVE, zip->data, zip->len, fhex);
    } else {
        const tg_tauyaml_file_t *script = tg_tauyaml_files_find(c->files, c->entrypoint);
        if (!script) {
            tg_render_fail(c, "entrypoint \"%s\" is not among the files", c->entrypoint);
            goto out;
        }
        tg_render_file_sha256(c, script, fhex);
        tg_render_payload_add(&pl, rj_base(c->entrypoint), script->data, script->len, fhex);
    }
    if (req) {
        tg_render_file_sha256(c, req, fhex);
        tg_render_payload_add(&pl, TG_TAUYAML_REQUIREMENTS, req->data, req->len, fhex);
    }
    if (tune) {
        tg_sha256_hex(rj_tune_py, strlen(rj_tune_py), fhex);
        tg_render_payload_add(&pl, RJ_TUNE_DRIVER, rj_tune_py, strlen(rj_tune_py), fhex);
    }
    if (rj_entrypoint(c, req != NULL, wd, &ep) != TG_OK || rj_runtime_env(r, wd, &renv) != TG_OK) {
        tg_render_fail(c, "entrypoint program too large");
        goto out;
    }
    char ray_version[32];
    const char *pinned = tg_render_str(c->policy, NULL, "ray_version");
    if (pinned && strlen(pinned) < sizeof(ray_version))
        memcpy(ray_version, pinned, strlen(pinned) + 1); /* the profile's KubeRay rayVersion */
    else
        tg_render_ray_version(c->image, ray_version, sizeof(ray_version));
    rj_ray_env(c, &env);
    /* Workers need the files too when Ray reads the project archive or the
     * Tune trainable from /script on every node. */
    int worker_payload = wd != NULL || tune;

    char hex[65], digest[72];
    tg_sha256_hex(pl.list.data ? pl.list.data : "", pl.list.len, hex);
    memcpy(digest, "sha256:", 7);
    memcpy(digest + 7, hex, 65);
    char exec[64];
    tg_render_cat(exec, sizeof(exec), "{\"launcher\":\"", c->launcher, "\"}");

    tg_jw_obj(w);
    tg_render_k_workload_header(c, "ray.io/v1", "RayJob", exec, digest);
    tg_jw_kobj(w, "spec");
    json_int_t ads = tg_render_int(c->run, NULL, "active_deadline_seconds", 0);
    if (ads > 0)
        tg_jw_kint(w, "activeDeadlineSeconds", ads);
    tg_jw_kint(w, "backoffLimit", 0);
    tg_render_k_ray_head_open(w, ep.data);
    rj_template(c, 1, "head_", 0, &env, &pl.env, 1, ray_version);
    tg_jw_end_obj(w); /* headGroupSpec */
    tg_jw_kstr(w, "rayVersion", ray_version);
    tg_jw_karr(w, "workerGroupSpecs");
    rj_group(c, "w", tg_render_int(c->compute, NULL, "workers", 1), c->gpus, "worker_", &env,
             &pl.env, worker_payload, ray_version);
    json_int_t cpu_workers = tg_render_int(c->compute, NULL, "cpu_workers", 0);
    if (cpu_workers > 0)
        rj_group(c, "cpu", cpu_workers, 0, "cpu_worker_", &env, &pl.env, worker_payload,
                 ray_version);
    tg_jw_end_arr(w);
    tg_jw_end_obj(w); /* rayClusterSpec */
    if (renv.len)
        tg_jw_kstr(w, "runtimeEnvYAML", renv.data);
    tg_render_k_ray_submission(c);
    tg_jw_end_obj(w); /* spec */
    tg_jw_end_obj(w); /* RayJob */
    rc = TG_OK;
out:
    tg_render_env_clean(&env);
    tg_render_payload_clean(&pl);
    tg_buf_clean(&ep);
    tg_buf_clean(&renv);
    return rc;
}
