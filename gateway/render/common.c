/* Helpers shared by the Job and RayJob renderers. */
#include "render/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/json_canon.h"
#include "render/pod.h"
#include "core/digest.h"

void tg_render_fail(tg_render_ctx_t *c, const char *fmt, ...)
{
    if (!c->err || !c->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
}

const char *tg_render_cat(char *out, size_t n, const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = c ? strlen(c) : 0;
    if (la + lb + lc + 1 > n) {
        out[0] = '\0';
        return out;
    }
    memcpy(out, a, la);
    memcpy(out + la, b, lb);
    if (lc)
        memcpy(out + la + lb, c, lc);
    out[la + lb + lc] = '\0';
    return out;
}

const char *tg_render_int_text(char out[24], json_int_t v)
{
    (void)tg_json_int_text(out, v);
    return out;
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
    char num[24], sfx[28];
    tg_render_cat(sfx, sizeof(sfx), "-a", tg_render_int_text(num, attempt), NULL);
    /* Services need a leading letter (DNS-1035); keep every object alike. */
    const char *lead = (k == 0 || base[0] < 'a' || base[0] > 'z') ? "r" : "";
    size_t room = 47 - strlen(sfx) - strlen(lead);
    if (k > room) {
        char hex[65];
        tg_sha256_hex(run_id, strlen(run_id), hex);
        size_t keep = room - 9;
        while (keep > 0 && base[keep - 1] == '-')
            keep--;
        snprintf(out, n, "%s%.*s-%.8s%s", lead, (int)keep, base, hex, sfx);
    } else {
        /* At most 47 bytes (room above), so n >= 48 holds it. */
        tg_render_cat(out, n, lead, base, sfx);
    }
    return 0;
}

void tg_render_file_sha256(const tg_render_ctx_t *c, const tg_tauyaml_file_t *f, char hex[65])
{
    for (size_t i = 0; i < c->nchecked; i++)
        if (c->checked[i] == f) {
            /* Equal to a hash computed here, so exactly 64 hex digits. */
            memcpy(hex, c->checked_sha[i], 65);
            return;
        }
    tg_sha256_hex(f->data, f->len, hex);
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
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **tg_render_sorted_keys(const json_t *obj, size_t *n)
{
    *n = json_object_size(obj);
    const char **v = tg_xmalloc((*n ? *n : 1) * sizeof(*v));
    size_t i = 0;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)obj, k, x)
        v[i++] = k;
    qsort(v, *n, sizeof(*v), render_strcmp);
    return v;
}

/* --- env ------------------------------------------------------------------------------------ */

void tg_render_env_init(tg_render_env_t *e)
{
    e->v = NULL;
    e->n = e->cap = 0;
    tg_buf_init(&e->pool, 0);
}

void tg_render_env_clean(tg_render_env_t *e)
{
    free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
    tg_buf_clean(&e->pool);
}

/* Copy s into the pool; its offset. The pool has no ceiling of its own (as
 * strdup had none): only an allocation failure stops it, which aborts. */
static size_t render_env_str(tg_render_env_t *e, const char *s)
{
    size_t off = e->pool.len;
    if (tg_buf_append(&e->pool, s, strlen(s) + 1) != TG_OK)
        abort();
    return off;
}

static const char *render_env_at(const tg_render_env_t *e, size_t off)
{
    return e->pool.data + off;
}

static tg_render_env_ent_t *render_env_slot(tg_render_env_t *e, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < e->n; i++) {
        if (e->v[i].name_len == len && memcmp(render_env_at(e, e->v[i].name), name, len) == 0) {
            memmove(&e->v[i], &e->v[i + 1], (e->n - i - 1) * sizeof(*e->v));
            e->n--;
            break;
        }
    }
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 32;
        e->v = tg_xrealloc(e->v, e->cap * sizeof(*e->v));
    }
    tg_render_env_ent_t *x = &e->v[e->n++];
    x->name = render_env_str(e, name);
    x->name_len = len;
    x->value = x->secret = x->key = TG_RENDER_ENV_NONE;
    return x;
}

void tg_render_env_set(tg_render_env_t *e, const char *name, const char *value)
{
    tg_render_env_ent_t *x = render_env_slot(e, name);
    x->value = render_env_str(e, value ? value : "");
}

void tg_render_env_set_secret(tg_render_env_t *e, const char *name, const char *secret,
                              const char *key)
{
    tg_render_env_ent_t *x = render_env_slot(e, name);
    x->secret = render_env_str(e, secret);
    x->key = render_env_str(e, key);
}

void tg_render_env_user(tg_render_env_t *e, const json_t *rc)
{
    const json_t *ue = tg_render_get(rc, "runtime", "env");
    size_t n;
    const char **keys = tg_render_sorted_keys(ue, &n);
    for (size_t i = 0; i < n; i++)
        tg_render_env_set(e, keys[i], json_string_value(json_object_get(ue, keys[i])));
    free(keys);
    const json_t *se = tg_render_get(rc, "runtime", "env_secret");
    keys = tg_render_sorted_keys(se, &n);
    for (size_t i = 0; i < n; i++) {
        const char *ref = json_string_value(json_object_get(se, keys[i]));
        const char *colon = ref ? strchr(ref, ':') : NULL;
        if (!colon)
            continue;
        char secret[256];
        size_t sl = (size_t)(colon - ref);
        if (sl >= sizeof(secret))
            continue;
        memcpy(secret, ref, sl);
        secret[sl] = '\0';
        tg_render_env_set_secret(e, keys[i], secret, colon + 1);
    }
    free(keys);
}

static const char *render_utoa(char *buf, size_t n, unsigned long long v)
{
    size_t i = n - 1;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v && i > 0);
    return buf + i;
}

void tg_render_env_platform(tg_render_env_t *e, const tg_render_ctx_t *c)
{
    const json_t *rc = c->rc;
    const char *out = tg_render_str(c->storage, NULL, "output");
    if (out)
        tg_render_env_set(e, "TAU_OUTPUT_DIR", out);
    tg_render_env_set(e, "TAU_RUN_ID", c->opts->run_id);
    tg_render_env_set(e, "TAU_RUN_NAME", tg_render_str(rc, NULL, "name"));
    tg_render_env_set(e, "TAU_WORKSPACE", tg_render_str(c->policy, NULL, "workspace"));
    tg_render_env_set(e, "TAU_ATTEMPT", c->attempt);
    if (c->opts->attempt > 1) {
        /* The retry contract of TauGrid's recovery loop, now server-side. */
        char num[24];
        const char *ck = tg_render_str(c->resilience, NULL, "checkpoint_path");
        if (ck)
            tg_render_env_set(e, "TAU_RESUME_FROM", ck);
        tg_render_env_set(e, "TAU_RETRY_ATTEMPT",
                          render_utoa(num, sizeof(num), c->opts->attempt - 1));
        json_int_t mr = tg_render_int(c->resilience, NULL, "max_retries", 0);
        tg_render_env_set(e, "TAU_RETRY_MAX",
                          render_utoa(num, sizeof(num), mr > 0 ? (unsigned long long)mr : 0));
        tg_render_env_set(e, "TAU_RETRY_REASON",
                          c->opts->retry_reason ? c->opts->retry_reason : "Unknown");
    }
}

void tg_render_k_env(tg_jw_t *w, const tg_render_env_t *e)
{
    if (e->n == 0)
        return;
    tg_jw_karr(w, "env");
    for (size_t i = 0; i < e->n; i++) {
        const tg_render_env_ent_t *x = &e->v[i];
        tg_jw_obj(w);
        tg_jw_kstr(w, "name", render_env_at(e, x->name));
        if (x->value != TG_RENDER_ENV_NONE) {
            tg_jw_kstr(w, "value", render_env_at(e, x->value));
        } else {
            tg_jw_kobj(w, "valueFrom");
            tg_jw_kobj(w, "secretKeyRef");
            tg_jw_kstr(w, "key", render_env_at(e, x->key));
            tg_jw_kstr(w, "name", render_env_at(e, x->secret));
            tg_jw_end_obj(w);
            tg_jw_end_obj(w);
        }
        tg_jw_end_obj(w);
    }
    tg_jw_end_arr(w);
}

/* --- resources, placement ------------------------------------------------------------------- */

static void render_quantities(const tg_render_ctx_t *c, const char *prefix, const char *kind,
                              json_int_t gpus, const char *gpu_text)
{
    static const char *const res[] = {"cpu", "memory"};
    const char *vals[2];
    char k[64];
    int any = gpus > 0;
    for (size_t i = 0; i < 2; i++) {
        tg_render_cat(k, sizeof(k), prefix, res[i], kind);
        vals[i] = tg_render_str(c->compute, NULL, k);
        any |= vals[i] != NULL;
    }
    if (!any)
        return;
    tg_jw_kobj(c->w, kind[1] == 'r' ? "requests" : "limits");
    for (size_t i = 0; i < 2; i++)
        if (vals[i])
            tg_jw_kstr(c->w, res[i], vals[i]);
    /* Extended resources must have requests equal to limits. */
    if (gpus > 0)
        tg_jw_kstr(c->w, c->gpu_resource, gpu_text);
    tg_jw_end_obj(c->w);
}

void tg_render_k_resources(const tg_render_ctx_t *c, const char *prefix, json_int_t gpus)
{
    char num[24];
    const char *gt = render_utoa(num, sizeof(num), gpus > 0 ? (unsigned long long)gpus : 0);
    int dra = tg_render_dra(c, gpus);
    tg_jw_kobj(c->w, "resources");
    if (dra) {
        /* the GPUs come from the profile's ResourceClaimTemplate */
        tg_jw_karr(c->w, "claims");
        tg_jw_obj(c->w);
        tg_jw_kstr(c->w, "name", "gpu");
        tg_jw_end_obj(c->w);
        tg_jw_end_arr(c->w);
        gpus = 0;
    }
    render_quantities(c, prefix, "_limit", gpus, gt);
    render_quantities(c, prefix, "_request", gpus, gt);
    tg_jw_end_obj(c->w);
}

static const char *render_pvc_volume(const json_t *vols, size_t upto, const char *claim, char *buf,
                                     size_t n, int *first)
{
    size_t distinct = 0;
    for (size_t j = 0; j < upto; j++) {
        const char *cj = json_string_value(json_object_get(json_array_get(vols, j), "pvc"));
        if (!cj)
            continue;
        int seen = 0;
        for (size_t k = 0; k < j && !seen; k++) {
            const char *ck = json_string_value(json_object_get(json_array_get(vols, k), "pvc"));
            seen = ck && strcmp(ck, cj) == 0;
        }
        if (seen)
            continue;
        if (strcmp(cj, claim) == 0) {
            *first = 0;
            snprintf(buf, n, "pvc-%zu", distinct);
            return buf;
        }
        distinct++;
    }
    *first = 1;
    snprintf(buf, n, "pvc-%zu", distinct);
    return buf;
}

void tg_render_k_mount(tg_jw_t *w, const char *name, const char *path, int read_only)
{
    tg_jw_obj(w);
    tg_jw_kstr(w, "mountPath", path);
    tg_jw_kstr(w, "name", name);
    if (read_only)
        tg_jw_kbool(w, "readOnly", 1);
    tg_jw_end_obj(w);
}

void tg_render_k_empty_dir(tg_jw_t *w, const char *name, const char *medium, const char *size)
{
    tg_jw_obj(w);
    tg_jw_kobj(w, "emptyDir");
    if (medium)
        tg_jw_kstr(w, "medium", medium);
    if (size)
        tg_jw_kstr(w, "sizeLimit", size);
    tg_jw_end_obj(w);
    tg_jw_kstr(w, "name", name);
    tg_jw_end_obj(w);
}

void tg_render_k_pvc_volume(tg_jw_t *w, const char *name, const char *claim)
{
    tg_jw_obj(w);
    tg_jw_kstr(w, "name", name);
    tg_jw_kobj(w, "persistentVolumeClaim");
    tg_jw_kstr(w, "claimName", claim);
    tg_jw_end_obj(w);
    tg_jw_end_obj(w);
}

void tg_render_k_ray_head_open(tg_jw_t *w, const char *entrypoint)
{
    tg_jw_kstr(w, "entrypoint", entrypoint);
    tg_jw_kobj(w, "rayClusterSpec");
    tg_jw_kobj(w, "headGroupSpec");
    tg_jw_kobj(w, "rayStartParams");
    tg_jw_kstr(w, "dashboard-host", "0.0.0.0");
    tg_jw_kstr(w, "num-cpus", "0");
    tg_jw_kstr(w, "num-gpus", "0");
    tg_jw_end_obj(w);
}

void tg_render_k_ray_submission(const tg_render_ctx_t *c)
{
    tg_jw_t *w = c->w;
    tg_jw_kbool(w, "shutdownAfterJobFinishes", 1);
    tg_jw_kstr(w, "submissionMode", "HTTPMode");
    tg_jw_kbool(w, "suspend", 1);
    tg_jw_kint(w, "ttlSecondsAfterFinished",
               tg_render_int(c->run, NULL, "ttl_seconds_after_finished", 15));
}

void tg_render_k_volumes(const tg_render_ctx_t *c, int script, int dshm)
{
    tg_render_k_volumes_open(c, script, dshm);
    tg_jw_end_arr(c->w);
}

void tg_render_k_volumes_open(const tg_render_ctx_t *c, int script, int dshm)
{
    tg_jw_t *w = c->w;
    tg_jw_karr(w, "volumes");
    if (script)
        tg_render_k_empty_dir(w, "script", NULL, NULL);
    const char *pvc = tg_render_str(c->storage, NULL, "data_pvc");
    if (pvc)
        tg_render_k_pvc_volume(w, "data", pvc);
    else
        tg_render_k_empty_dir(w, "data", NULL, NULL);
    tg_render_k_empty_dir(w, "tau-hot", NULL, NULL);
    if (dshm)
        tg_render_k_empty_dir(w, "dshm", "Memory", "16Gi");
    const json_t *vols = tg_render_get(c->storage, NULL, "volumes");
    for (size_t i = 0; i < json_array_size(vols); i++) {
        const char *claim = json_string_value(json_object_get(json_array_get(vols, i), "pvc"));
        if (!claim)
            continue;
        char vname[32];
        int first;
        render_pvc_volume(vols, i, claim, vname, sizeof(vname), &first);
        if (!first)
            continue;
        tg_render_k_pvc_volume(w, vname, claim);
    }
}

void tg_render_k_mounts(const tg_render_ctx_t *c, int script, int dshm)
{
    tg_render_k_mounts_open(c, script, dshm);
    tg_jw_end_arr(c->w);
}

void tg_render_k_mounts_open(const tg_render_ctx_t *c, int script, int dshm)
{
    tg_jw_t *w = c->w;
    tg_jw_karr(w, "volumeMounts");
    if (script)
        tg_render_k_mount(w, "script", "/script", 1);
    tg_render_k_mount(w, "data", "/data", 0);
    tg_render_k_mount(w, "tau-hot", "/mnt", 0);
    if (dshm)
        tg_render_k_mount(w, "dshm", "/dev/shm", 0);
    const json_t *vols = tg_render_get(c->storage, NULL, "volumes");
    for (size_t i = 0; i < json_array_size(vols); i++) {
        const json_t *v = json_array_get(vols, i);
        const char *claim = json_string_value(json_object_get(v, "pvc"));
        const char *path = json_string_value(json_object_get(v, "path"));
        if (!claim || !path)
            continue;
        char vname[32];
        int first;
        render_pvc_volume(vols, i, claim, vname, sizeof(vname), &first);
        tg_render_k_mount(w, vname, path, json_is_true(json_object_get(v, "read_only")));
    }
}

void tg_render_topology_annotation(const tg_render_ctx_t *c)
{
    const char *topo = tg_render_str(c->policy, NULL, "topology");
    if (!topo || !tg_render_str(c->policy, NULL, "topology_name"))
        return; /* no TAS flavor: Kueue would reject the annotation */
    static const char *const map[][2] = {
        {"same-host", "kubernetes.io/hostname"},
        {"single-node-nvlink", "kubernetes.io/hostname"},
        {"same-accelerator-domain", "tau.azure.com/accelerator-domain"},
        {"same-network-domain", "tau.azure.com/network-domain"},
        {"multi-node-nccl", "tau.azure.com/network-domain"},
        {"same-site", "tau.azure.com/site"}};
    for (size_t i = 0; i < TG_ARRAY_LEN(map); i++) {
        if (strcmp(topo, map[i][0]) == 0) {
            tg_jw_kstr(c->w, "kueue.x-k8s.io/podset-required-topology", map[i][1]);
            return;
        }
    }
    tg_jw_kstr(c->w, "kueue.x-k8s.io/podset-unconstrained-topology", "true");
}

char *tg_render_json_text(const json_t *v)
{
    return tg_json_canon_text(v);
}

size_t tg_render_config_flags(tg_jw_t *w, const json_t *configs)
{
    size_t n;
    const char **keys = tg_render_sorted_keys(configs, &n);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_object_get(configs, keys[i]);
        char *txt = json_is_string(v) ? NULL : tg_render_json_text(v);
        const char *val = json_is_string(v) ? json_string_value(v) : txt;
        size_t need = strlen(keys[i]) + strlen(val) + 4;
        char *flag = tg_xmalloc(need);
        if (json_is_string(v) && json_string_length(v) == 0)
            snprintf(flag, need, "--%s", keys[i]);
        else
            snprintf(flag, need, "--%s=%s", keys[i], val);
        tg_jw_str(w, flag);
        free(flag);
        free(txt);
    }
    free(keys);
    return n;
}

void tg_render_k_small_resources(const tg_render_ctx_t *c)
{
    tg_jw_t *w = c->w;
    tg_jw_kobj(w, "resources");
    tg_jw_kobj(w, "limits");
    tg_jw_kstr(w, "cpu", "500m");
    tg_jw_kstr(w, "memory", "256Mi");
    tg_jw_end_obj(w);
    tg_jw_kobj(w, "requests");
    tg_jw_kstr(w, "cpu", "50m");
    tg_jw_kstr(w, "memory", "64Mi");
    tg_jw_end_obj(w);
    tg_jw_end_obj(w);
}

int tg_render_publishes(const tg_render_ctx_t *c)
{
    const char *p = tg_render_str(c->storage, NULL, "publish");
    return p && strcmp(p, "staged") == 0 && tg_render_str(c->storage, NULL, "output");
}

tg_rc_e tg_render_publish_head(tg_buf_t *b)
{
    return tg_buf_puts(b, "mkdir -p \"$TAU_OUTPUT_STAGING_DIR\"\nset +e\n");
}

tg_rc_e tg_render_publish_tail(tg_buf_t *b)
{
    /* TauGrid's staged publication: outputs appear in storage.output only
     * complete, after a successful run, with a marker readers wait for; a
     * copy that fails fails the run instead of marking a partial tree. */
    return tg_buf_puts(
        b, "status=$?\n"
           "if [ \"$status\" -eq 0 ]; then\n"
           "  { mkdir -p \"$TAU_OUTPUT_DIR\" &&\n"
           "    cp -a \"$TAU_OUTPUT_STAGING_DIR\"/. \"$TAU_OUTPUT_DIR\"/ &&\n"
           "    printf '%s\\n' \"$TAU_RUN_ID\" > \"$TAU_OUTPUT_DIR/" TG_RENDER_PUBLISHED_MARKER
           "\"; } || status=$?\n"
           "fi\n"
           "exit \"$status\"\n");
}
