/* Process mode: container spec to argv/envp/cwd. */
#include "procenv.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "core/base64.h"
#include "rtypes.h"
#include "server.h"
#include "store.h"
#include "util.h"

#define KS_MAX_MAPS 32

typedef struct {
    char from[512];
    char to[1100];
} ks_pmap_t;

typedef struct {
    ks_pmap_t m[KS_MAX_MAPS];
    int n;
} ks_pmaps_t;

void ks_volume_dir(const char *ns, const char *volume, char *out, size_t n)
{
    snprintf(out, n, "%s/volumes/%s/%s", ks_cfg.state_dir, ns, volume);
}

static void add_map(ks_pmaps_t *pm, const char *from, const char *to)
{
    if (pm->n == KS_MAX_MAPS || !from || !from[0] || !strcmp(from, "/"))
        return;
    ks_strlcpy(pm->m[pm->n].from, from, sizeof(pm->m[0].from));
    size_t l = strlen(pm->m[pm->n].from);
    while (l > 1 && pm->m[pm->n].from[l - 1] == '/')
        pm->m[pm->n].from[--l] = '\0';
    ks_strlcpy(pm->m[pm->n].to, to, sizeof(pm->m[0].to));
    ks_mkdirs(to, 0755);
    pm->n++;
}

static int pathchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == '/';
}

/* Rewrite every whole-prefix occurrence of a mapped path. New string. */
static char *rewrite(const ks_pmaps_t *pm, const char *s)
{
    tg_buf_t b;
    tg_buf_init(&b, 1024 * 1024);
    size_t i = 0, len = strlen(s);
    int rc = 0;
    while (i < len) {
        int done = 0;
        if (i == 0 || !pathchar(s[i - 1])) {
            for (int k = 0; k < pm->n && !done; k++) {
                size_t fl = strlen(pm->m[k].from);
                if (strncmp(s + i, pm->m[k].from, fl) == 0 &&
                    (s[i + fl] == '\0' || s[i + fl] == '/' || !pathchar(s[i + fl]))) {
                    rc |= tg_buf_puts(&b, pm->m[k].to);
                    i += fl;
                    done = 1;
                }
            }
        }
        if (!done) {
            rc |= tg_buf_append(&b, s + i, 1);
            i++;
        }
    }
    (void)rc;
    char *out = tg_buf_steal(&b, NULL);
    return out ? out : tg_xstrdup("");
}

static int cmp_len_desc(const void *a, const void *b)
{
    const ks_pmap_t *x = a, *y = b;
    return (int)strlen(y->from) - (int)strlen(x->from);
}

static char *b64dec(const char *in)
{
    unsigned char *out = NULL;
    size_t n = 0;
    if (tg_base64_decode(in, strlen(in), TG_B64_STD, &out, &n) != 0)
        return tg_xstrdup("");
    return (char *)out;
}

/* Value of key in a Secret (decoded) or ConfigMap; new string or NULL. */
static char *ref_value(int rt, const char *ns, const char *name, const char *key)
{
    json_t *o = ks_store_get(rt, ns, name);
    if (!o)
        return NULL;
    if (rt == KS_RT_SECRETS) {
        const char *v = json_string_value(json_object_get(json_object_get(o, "data"), key));
        if (v)
            return b64dec(v);
        v = json_string_value(json_object_get(json_object_get(o, "stringData"), key));
        return v ? tg_xstrdup(v) : NULL;
    }
    const char *v = json_string_value(json_object_get(json_object_get(o, "data"), key));
    return v ? tg_xstrdup(v) : NULL;
}

typedef struct {
    char **v;
    size_t n, cap;
} strvec_t;

static void sv_push(strvec_t *sv, char *s)
{
    if (sv->n + 2 > sv->cap) {
        sv->cap = sv->cap ? sv->cap * 2 : 32;
        sv->v = tg_xrealloc(sv->v, sv->cap * sizeof(char *));
    }
    sv->v[sv->n++] = s;
    sv->v[sv->n] = NULL;
}

static void env_set(strvec_t *env, const char *k, const char *v)
{
    size_t kl = strlen(k);
    char *e = tg_xmalloc(kl + strlen(v) + 2);
    memcpy(e, k, kl);
    e[kl] = '=';
    memcpy(e + kl + 1, v, strlen(v) + 1);
    for (size_t i = 0; i < env->n; i++) {
        if (!strncmp(env->v[i], k, kl) && env->v[i][kl] == '=') {
            free(env->v[i]);
            env->v[i] = e;
            return;
        }
    }
    sv_push(env, e);
}

static const char *field_ref(json_t *pod, const char *path)
{
    if (ks_streq(path, "metadata.name"))
        return ks_meta_name(pod);
    if (ks_streq(path, "metadata.namespace"))
        return ks_meta_ns(pod);
    if (ks_streq(path, "metadata.uid"))
        return ks_meta_uid(pod);
    if (ks_streq(path, "spec.nodeName"))
        return ks_jstr(pod, "spec.nodeName");
    if (ks_streq(path, "status.podIP"))
        return ks_jstr(pod, "status.podIP");
    if (ks_streq(path, "spec.serviceAccountName"))
        return ks_jstr(pod, "spec.serviceAccountName");
    if (path && !strncmp(path, "metadata.labels['", 17)) {
        char key[256];
        ks_strlcpy(key, path + 17, sizeof(key));
        char *q = strchr(key, '\'');
        if (q)
            *q = '\0';
        return ks_label(pod, key);
    }
    if (path && !strncmp(path, "metadata.annotations['", 22)) {
        char key[256];
        ks_strlcpy(key, path + 22, sizeof(key));
        char *q = strchr(key, '\'');
        if (q)
            *q = '\0';
        return ks_annotation(pod, key);
    }
    return NULL;
}

/* Volumes: PVCs and hostPaths are per-namespace folders shared by pods;
 * emptyDir, configMap and secret volumes live in the sandbox. */
static void volume_maps(ks_pmaps_t *pm, json_t *pod, json_t *cspec, const char *sandbox)
{
    const char *ns = ks_meta_ns(pod);
    char dir[1100];
    size_t i;
    json_t *vm;
    json_array_foreach(json_object_get(cspec, "volumeMounts"), i, vm)
    {
        const char *vname = ks_jstr(vm, "name");
        const char *mp = ks_jstr(vm, "mountPath");
        json_t *vol = NULL;
        size_t j;
        json_t *v;
        json_array_foreach(ks_jget(pod, "spec.volumes"), j,
                           v) if (ks_streq(ks_jstr(v, "name"), vname)) vol = v;
        if (!vol || !mp)
            continue;
        const char *claim = ks_jstr(vol, "persistentVolumeClaim.claimName");
        if (claim) {
            ks_volume_dir(ns, claim, dir, sizeof(dir));
        } else if (ks_jget(vol, "hostPath")) {
            char hp[600];
            ks_strlcpy(hp, ks_jstr(vol, "hostPath.path"), sizeof(hp));
            for (char *p = hp; *p; p++)
                if (*p == '/')
                    *p = '_';
            ks_fmt(dir, sizeof(dir), "%s/hostpath/%s", ks_cfg.state_dir, hp);
        } else {
            snprintf(dir, sizeof(dir), "%s/volumes/%s", sandbox, vname);
            json_t *data = NULL;
            int rt = -1;
            const char *src = ks_jstr(vol, "configMap.name");
            if (src)
                rt = KS_RT_CONFIGMAPS;
            else if ((src = ks_jstr(vol, "secret.secretName")))
                rt = KS_RT_SECRETS;
            json_t *o = rt >= 0 ? ks_store_get(rt, ns, src) : NULL;
            data = o ? json_object_get(o, "data") : NULL;
            ks_mkdirs(dir, 0755);
            const char *k;
            json_t *val;
            json_object_foreach(data, k, val)
            {
                char f[1400];
                snprintf(f, sizeof(f), "%s/%s", dir, k);
                char *content = rt == KS_RT_SECRETS ? b64dec(json_string_value(val))
                                                    : tg_xstrdup(json_string_value(val));
                int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd >= 0) {
                    ssize_t w = write(fd, content, strlen(content));
                    (void)w; /* best effort, like a projected volume */
                    close(fd);
                }
                free(content);
            }
        }
        const char *sp = ks_jstr(vm, "subPath");
        if (sp && sp[0]) {
            size_t l = strlen(dir);
            snprintf(dir + l, sizeof(dir) - l, "/%s", sp);
        }
        add_map(pm, mp, dir);
    }
    /* Every container has a /tmp of its own, as in a real pod: two pods that
     * write /tmp/run.sh at the same moment must not share one file. */
    int tmp_mounted = 0;
    for (int k = 0; k < pm->n; k++)
        tmp_mounted |= !strcmp(pm->m[k].from, "/tmp");
    if (!tmp_mounted) {
        snprintf(dir, sizeof(dir), "%s/tmp", sandbox);
        add_map(pm, "/tmp", dir);
    }
    char paths[512];
    ks_strlcpy(paths, ks_cfg.map_paths, sizeof(paths));
    char *p = paths;
    while (p && *p) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        int exists = 0;
        for (int k = 0; k < pm->n; k++)
            if (!strcmp(pm->m[k].from, p))
                exists = 1;
        if (!exists && p[0] == '/') {
            const char *base = strrchr(p, '/') + 1;
            ks_volume_dir(ns, base[0] ? base : "root", dir, sizeof(dir));
            add_map(pm, p, dir);
        }
        p = c ? c + 1 : NULL;
    }
    qsort(pm->m, (size_t)pm->n, sizeof(pm->m[0]), cmp_len_desc);
}

int ks_procspec_build(ks_procspec_t *ps, json_t *pod, json_t *cspec, const char *sandbox)
{
    ks_pmaps_t pm;
    strvec_t argv = {0}, env = {0};
    char port[16];
    memset(&pm, 0, sizeof(pm));
    memset(ps, 0, sizeof(*ps));
    volume_maps(&pm, pod, cspec, sandbox);
    const char *ns = ks_meta_ns(pod);
    const char *path = getenv("PATH");
    env_set(&env, "PATH", path ? path : "/usr/local/bin:/usr/bin:/bin");
    env_set(&env, "HOME", sandbox);
    env_set(&env, "HOSTNAME", ks_meta_name(pod));
    env_set(&env, "KUBESIM", "1");
    const char *simid = getenv("KUBESIM_INSTANCE");
    if (simid)
        env_set(&env, "KUBESIM_INSTANCE", simid);
    env_set(&env, "KUBESIM_POD_DIR", sandbox);
    for (int k = 0; k < pm.n; k++)
        if (!strcmp(pm.m[k].from, "/tmp"))
            env_set(&env, "TMPDIR", pm.m[k].to);
    env_set(&env, "KUBERNETES_SERVICE_HOST", "127.0.0.1");
    snprintf(port, sizeof(port), "%d", ks_server_port());
    env_set(&env, "KUBERNETES_SERVICE_PORT", port);
    size_t i;
    json_t *ef;
    json_array_foreach(json_object_get(cspec, "envFrom"), i, ef)
    {
        int rt = ks_jget(ef, "secretRef") ? KS_RT_SECRETS : KS_RT_CONFIGMAPS;
        const char *nm = ks_jstr(ef, rt == KS_RT_SECRETS ? "secretRef.name" : "configMapRef.name");
        const char *pfx = ks_jstr(ef, "prefix");
        json_t *o = nm ? ks_store_get(rt, ns, nm) : NULL;
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(o, "data"), k, v)
        {
            char key[512];
            snprintf(key, sizeof(key), "%s%s", pfx ? pfx : "", k);
            char *val = rt == KS_RT_SECRETS ? b64dec(json_string_value(v))
                                            : tg_xstrdup(json_string_value(v));
            env_set(&env, key, val);
            free(val);
        }
    }
    json_t *e;
    json_array_foreach(json_object_get(cspec, "env"), i, e)
    {
        const char *k = ks_jstr(e, "name");
        if (!k)
            continue;
        char *val = NULL;
        if (ks_jstr(e, "value")) {
            val = rewrite(&pm, ks_jstr(e, "value"));
        } else if (ks_jget(e, "valueFrom.secretKeyRef")) {
            val = ref_value(KS_RT_SECRETS, ns, ks_jstr(e, "valueFrom.secretKeyRef.name"),
                            ks_jstr(e, "valueFrom.secretKeyRef.key"));
        } else if (ks_jget(e, "valueFrom.configMapKeyRef")) {
            val = ref_value(KS_RT_CONFIGMAPS, ns, ks_jstr(e, "valueFrom.configMapKeyRef.name"),
                            ks_jstr(e, "valueFrom.configMapKeyRef.key"));
        } else if (ks_jget(e, "valueFrom.fieldRef")) {
            const char *fv = field_ref(pod, ks_jstr(e, "valueFrom.fieldRef.fieldPath"));
            val = tg_xstrdup(fv ? fv : "");
        }
        env_set(&env, k, val ? val : "");
        free(val);
    }
    json_t *cmd = json_object_get(cspec, "command");
    json_t *args = json_object_get(cspec, "args");
    json_t *x;
    json_array_foreach(cmd, i, x)
        sv_push(&argv, rewrite(&pm, json_string_value(x) ? json_string_value(x) : ""));
    json_array_foreach(args, i, x)
        sv_push(&argv, rewrite(&pm, json_string_value(x) ? json_string_value(x) : ""));
    if (!argv.n) {
        /* The image's entrypoint is unknown here: the container exits 0. */
        sv_push(&argv, tg_xstrdup("/bin/sh"));
        sv_push(&argv, tg_xstrdup("-c"));
        sv_push(&argv, tg_xstrdup("exit 0"));
    }
    const char *wd = ks_jstr(cspec, "workingDir");
    if (wd && wd[0]) {
        char *w = rewrite(&pm, wd);
        if (strcmp(w, wd))
            ks_strlcpy(ps->cwd, w, sizeof(ps->cwd));
        else
            snprintf(ps->cwd, sizeof(ps->cwd), "%s/workdir%s", sandbox, wd);
        free(w);
        ks_mkdirs(ps->cwd, 0755);
    } else {
        ks_strlcpy(ps->cwd, sandbox, sizeof(ps->cwd));
    }
    ps->argv = argv.v;
    ps->envp = env.v;
    return 0;
}

void ks_procspec_clean(ks_procspec_t *ps)
{
    for (size_t i = 0; ps->argv && ps->argv[i]; i++)
        free(ps->argv[i]);
    for (size_t i = 0; ps->envp && ps->envp[i]; i++)
        free(ps->envp[i]);
    free(ps->argv);
    free(ps->envp);
    ps->argv = ps->envp = NULL;
}
