/* Helpers shared by the Job and RayJob renderers. */
#include "render/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "render/canon.h"
#include "spec/digest.h"

void tg_render_fail(tg_render_ctx_t *c, const char *fmt, ...)
{
    if (!c->err || !c->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
}

int tg_render_object_name(const char *run_id, unsigned attempt, char *out, size_t n)
{
    char base[256];
    size_t k = 0;
    if (!run_id || !*run_id || n < 48)
        return -1;
    for (const char *p = run_id; *p && k + 1 < sizeof(base); p++) {
        char ch = *p;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
            ch = '-';
        if (ch == '-' && (k == 0 || base[k - 1] == '-'))
            continue;
        base[k++] = ch;
    }
    while (k > 0 && base[k - 1] == '-')
        k--;
    base[k] = '\0';
    char sfx[24];
    snprintf(sfx, sizeof(sfx), "-a%u", attempt);
    /* Services need a leading letter (DNS-1035); keep every object alike. */
    const char *lead = (k == 0 || base[0] < 'a' || base[0] > 'z') ? "r" : "";
    size_t room = 47 - strlen(sfx) - strlen(lead);
    if (k > room) {
        char hex[65];
        tg_spec_sha256_hex(run_id, strlen(run_id), hex);
        size_t keep = room - 9;
        while (keep > 0 && base[keep - 1] == '-')
            keep--;
        snprintf(out, n, "%s%.*s-%.8s%s", lead, (int)keep, base, hex, sfx);
    } else {
        snprintf(out, n, "%s%s%s", lead, base, sfx);
    }
    return 0;
}

const json_t *tg_render_get(const json_t *rc, const char *sect, const char *key)
{
    const json_t *s = sect ? json_object_get(rc, sect) : rc;
    const json_t *v = json_is_object(s) ? json_object_get(s, key) : NULL;
    return json_is_null(v) ? NULL : v;
}

const char *tg_render_str(const json_t *rc, const char *sect, const char *key)
{
    const json_t *v = tg_render_get(rc, sect, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

json_int_t tg_render_int(const json_t *rc, const char *sect, const char *key, json_int_t dflt)
{
    const json_t *v = tg_render_get(rc, sect, key);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

int tg_render_bool(const json_t *rc, const char *sect, const char *key)
{
    return json_is_true(tg_render_get(rc, sect, key));
}

static int render_strcmp(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

json_t *tg_render_sorted_keys(const json_t *obj)
{
    size_t n = json_object_size(obj);
    json_t **v = tg_xmalloc((n ? n : 1) * sizeof(*v));
    size_t i = 0;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)obj, k, x) v[i++] = json_string(k);
    qsort(v, n, sizeof(*v), render_strcmp);
    json_t *arr = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
    return arr;
}

static void render_env_drop(json_t *env, const char *name)
{
    for (size_t i = json_array_size(env); i-- > 0;) {
        const char *n = json_string_value(json_object_get(json_array_get(env, i), "name"));
        if (n && strcmp(n, name) == 0)
            json_array_remove(env, i);
    }
}

void tg_render_env_set(json_t *env, const char *name, const char *value)
{
    render_env_drop(env, name);
    json_t *e = json_object();
    json_object_set_new(e, "name", json_string(name));
    json_object_set_new(e, "value", json_string(value));
    json_array_append_new(env, e);
}

void tg_render_env_set_secret(json_t *env, const char *name, const char *secret, const char *key)
{
    render_env_drop(env, name);
    json_array_append_new(env, json_pack("{s:s, s:{s:{s:s, s:s}}}", "name", name, "valueFrom",
                                         "secretKeyRef", "name", secret, "key", key));
}

void tg_render_env_user(json_t *env, const json_t *rc)
{
    const json_t *ue = tg_render_get(rc, "runtime", "env");
    json_t *keys = tg_render_sorted_keys(ue);
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        const char *name = json_string_value(k);
        const char *val = json_string_value(json_object_get(ue, name));
        tg_render_env_set(env, name, val ? val : "");
    }
    json_decref(keys);
    const json_t *se = tg_render_get(rc, "runtime", "env_secret");
    keys = tg_render_sorted_keys(se);
    json_array_foreach(keys, i, k)
    {
        const char *name = json_string_value(k);
        const char *ref = json_string_value(json_object_get(se, name));
        const char *colon = ref ? strchr(ref, ':') : NULL;
        if (!colon)
            continue;
        char secret[256];
        snprintf(secret, sizeof(secret), "%.*s", (int)(colon - ref), ref);
        tg_render_env_set_secret(env, name, secret, colon + 1);
    }
    json_decref(keys);
}

void tg_render_env_platform(json_t *env, const tg_render_ctx_t *c)
{
    const json_t *rc = c->rc;
    const char *out = tg_render_str(rc, "storage", "output");
    if (out)
        tg_render_env_set(env, "TAU_OUTPUT_DIR", out);
    tg_render_env_set(env, "TAU_RUN_ID", c->opts->run_id);
    tg_render_env_set(env, "TAU_RUN_NAME", tg_render_str(rc, NULL, "name"));
    tg_render_env_set(env, "TAU_WORKSPACE", tg_render_str(rc, "policy", "workspace"));
    char num[32];
    snprintf(num, sizeof(num), "%u", c->opts->attempt);
    tg_render_env_set(env, "TAU_ATTEMPT", num);
    if (c->opts->attempt > 1) {
        /* The retry contract of TauGrid's recovery loop, now server-side. */
        const char *ck = tg_render_str(rc, "resilience", "checkpoint_path");
        if (ck)
            tg_render_env_set(env, "TAU_RESUME_FROM", ck);
        snprintf(num, sizeof(num), "%u", c->opts->attempt - 1);
        tg_render_env_set(env, "TAU_RETRY_ATTEMPT", num);
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
                 tg_render_int(rc, "resilience", "max_retries", 0));
        tg_render_env_set(env, "TAU_RETRY_MAX", num);
        tg_render_env_set(env, "TAU_RETRY_REASON",
                          c->opts->retry_reason ? c->opts->retry_reason : "Unknown");
    }
}

json_t *tg_render_resources(const tg_render_ctx_t *c, const char *prefix, json_int_t gpus)
{
    json_t *req = json_object(), *lim = json_object();
    static const char *const res[] = {"cpu", "memory"};
    for (size_t i = 0; i < 2; i++) {
        char k[64];
        snprintf(k, sizeof(k), "%s%s_request", prefix, res[i]);
        const char *v = tg_render_str(c->rc, "compute", k);
        if (v)
            json_object_set_new(req, res[i], json_string(v));
        snprintf(k, sizeof(k), "%s%s_limit", prefix, res[i]);
        v = tg_render_str(c->rc, "compute", k);
        if (v)
            json_object_set_new(lim, res[i], json_string(v));
    }
    if (gpus > 0) {
        /* Extended resources must have requests equal to limits. */
        char n[32];
        snprintf(n, sizeof(n), "%" JSON_INTEGER_FORMAT, gpus);
        json_object_set_new(req, c->gpu_resource, json_string(n));
        json_object_set_new(lim, c->gpu_resource, json_string(n));
    }
    json_t *r = json_object();
    if (json_object_size(req))
        json_object_set(r, "requests", req);
    if (json_object_size(lim))
        json_object_set(r, "limits", lim);
    json_decref(req);
    json_decref(lim);
    return r;
}

void tg_render_gpu_tolerations(json_t *tol)
{
    json_array_append_new(tol, json_pack("{s:s, s:s, s:s, s:s}", "key", "sku", "operator", "Equal",
                                         "value", "gpu", "effect", "NoSchedule"));
    json_array_append_new(tol, json_pack("{s:s, s:s, s:s}", "key", "nvidia.com/gpu", "operator",
                                         "Exists", "effect", "NoSchedule"));
}

void tg_render_profile_tolerations(json_t *tol, const json_t *rc)
{
    const json_t *pt = tg_render_get(rc, "policy", "tolerations");
    size_t i;
    const json_t *t;
    json_array_foreach(pt, i, t)
    {
        /* Keep only the Toleration fields; a DB row may carry more. */
        static const char *const keys[] = {"key", "operator", "value", "effect",
                                           "tolerationSeconds"};
        json_t *o = json_object();
        for (size_t k = 0; k < TG_ARRAY_LEN(keys); k++) {
            const json_t *v = json_object_get(t, keys[k]);
            if ((k < 4 && json_is_string(v)) || (k == 4 && json_is_integer(v)))
                json_object_set_new(o, keys[k], json_deep_copy(v));
        }
        json_array_append_new(tol, o);
    }
}

json_t *tg_render_node_selector(const tg_render_ctx_t *c, int gpu_pod)
{
    json_t *sel = json_object();
    const json_t *ns = tg_render_get(c->rc, "policy", "node_selector");
    json_t *keys = tg_render_sorted_keys(ns);
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        const char *v = json_string_value(json_object_get(ns, json_string_value(k)));
        if (v)
            json_object_set_new(sel, json_string_value(k), json_string(v));
    }
    json_decref(keys);
    if (gpu_pod && c->gpu_class && strcmp(c->gpu_class, "any") != 0 &&
        !tg_render_bool(c->rc, "policy", "clear_node_selector") &&
        !json_object_get(sel, "tau.azure.com/gpu-class"))
        json_object_set_new(sel, "tau.azure.com/gpu-class", json_string(c->gpu_class));
    if (json_object_size(sel) == 0) {
        json_decref(sel);
        return NULL;
    }
    return sel;
}

static void render_mount(json_t *mounts, const char *name, const char *path, int ro)
{
    json_t *m = json_pack("{s:s, s:s}", "name", name, "mountPath", path);
    if (ro)
        json_object_set_new(m, "readOnly", json_true());
    json_array_append_new(mounts, m);
}

void tg_render_volumes(const tg_render_ctx_t *c, json_t *volumes, json_t *mounts, int with_dshm)
{
    const char *pvc = tg_render_str(c->rc, "storage", "data_pvc");
    if (pvc)
        json_array_append_new(volumes, json_pack("{s:s, s:{s:s}}", "name", "data",
                                                 "persistentVolumeClaim", "claimName", pvc));
    else
        json_array_append_new(volumes, json_pack("{s:s, s:{}}", "name", "data", "emptyDir"));
    render_mount(mounts, "data", "/data", 0);
    json_array_append_new(volumes, json_pack("{s:s, s:{}}", "name", "tau-hot", "emptyDir"));
    render_mount(mounts, "tau-hot", "/mnt", 0);
    if (with_dshm) {
        json_array_append_new(volumes, json_pack("{s:s, s:{s:s, s:s}}", "name", "dshm", "emptyDir",
                                                 "medium", "Memory", "sizeLimit", "16Gi"));
        render_mount(mounts, "dshm", "/dev/shm", 0);
    }
    const json_t *vols = tg_render_get(c->rc, "storage", "volumes");
    size_t i;
    const json_t *v;
    json_t *seen = json_object();
    json_array_foreach(vols, i, v)
    {
        const char *claim = json_string_value(json_object_get(v, "pvc"));
        const char *path = json_string_value(json_object_get(v, "path"));
        if (!claim || !path)
            continue;
        char vname[64];
        snprintf(vname, sizeof(vname), "pvc-%zu", json_object_size(seen));
        const json_t *known = json_object_get(seen, claim);
        if (known) {
            snprintf(vname, sizeof(vname), "%s", json_string_value(known));
        } else {
            json_object_set_new(seen, claim, json_string(vname));
            json_array_append_new(volumes, json_pack("{s:s, s:{s:s}}", "name", vname,
                                                     "persistentVolumeClaim", "claimName", claim));
        }
        render_mount(mounts, vname, path, json_is_true(json_object_get(v, "read_only")));
    }
    json_decref(seen);
}

json_t *tg_render_pod_security(const json_t *rc)
{
    if (!tg_render_str(rc, "runtime", "security_mode"))
        return NULL;
    return json_pack("{s:b, s:i, s:i, s:i, s:{s:s}}", "runAsNonRoot", 1, "runAsUser", 65532,
                     "runAsGroup", 65532, "fsGroup", 65532, "seccompProfile", "type",
                     "RuntimeDefault");
}

json_t *tg_render_container_security(const json_t *rc)
{
    if (!tg_render_str(rc, "runtime", "security_mode"))
        return NULL;
    return json_pack("{s:b, s:b, s:{s:[s]}, s:{s:s}}", "allowPrivilegeEscalation", 0,
                     "runAsNonRoot", 1, "capabilities", "drop", "ALL", "seccompProfile", "type",
                     "RuntimeDefault");
}

void tg_render_topology_annotations(const json_t *rc, json_t *ann)
{
    const char *topo = tg_render_str(rc, "policy", "topology");
    if (!topo || !tg_render_str(rc, "policy", "topology_name"))
        return; /* no TAS flavor: Kueue would reject the annotation */
    static const char *const map[][2] = {{"same-host", "kubernetes.io/hostname"},
                                         {"single-node-nvlink", "kubernetes.io/hostname"},
                                         {"same-accelerator-domain",
                                          "tau.azure.com/accelerator-domain"},
                                         {"same-network-domain", "tau.azure.com/network-domain"},
                                         {"multi-node-nccl", "tau.azure.com/network-domain"},
                                         {"same-site", "tau.azure.com/site"}};
    for (size_t i = 0; i < TG_ARRAY_LEN(map); i++) {
        if (strcmp(topo, map[i][0]) == 0) {
            json_object_set_new(ann, "kueue.x-k8s.io/podset-required-topology",
                                json_string(map[i][1]));
            return;
        }
    }
    json_object_set_new(ann, "kueue.x-k8s.io/podset-unconstrained-topology", json_string("true"));
}

char *tg_render_json_text(const json_t *v)
{
    return tg_render_canon_text(v);
}

void tg_render_config_flags(const json_t *configs, json_t *args)
{
    json_t *keys = tg_render_sorted_keys(configs);
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        const char *name = json_string_value(k);
        const json_t *v = json_object_get(configs, name);
        char buf[1200];
        if (json_is_string(v) && json_string_length(v) == 0) {
            snprintf(buf, sizeof(buf), "--%s", name);
            json_array_append_new(args, json_string(buf));
            continue;
        }
        char *txt = json_is_string(v) ? NULL : tg_render_json_text(v);
        const char *val = json_is_string(v) ? json_string_value(v) : (txt ? txt : "");
        size_t need = strlen(name) + strlen(val) + 4;
        char *flag = tg_xmalloc(need);
        snprintf(flag, need, "--%s=%s", name, val);
        json_array_append_new(args, json_string(flag));
        free(flag);
        free(txt);
    }
    json_decref(keys);
}
