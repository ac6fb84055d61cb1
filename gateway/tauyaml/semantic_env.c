/* Semantic rules for env, storage, metrics, resilience and policy. */
#include "tauyaml/semantic_env.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include "tauyaml/gopath.h"
#include "tauyaml/path.h"
#include "tauyaml/units.h"

#define SE_TAU_ALLOWED "TAU_RESUME_FROM, TAU_RETRY_ATTEMPT, TAU_RETRY_MAX, TAU_RETRY_REASON"

int tg_tauyaml_env_reserved(const char *key, int allow_nccl, int torchrun, char *why, size_t n)
{
    static const char *const tau_ok[] = {"TAU_RESUME_FROM", "TAU_RETRY_ATTEMPT", "TAU_RETRY_MAX",
                                         "TAU_RETRY_REASON"};
    /* TauGrid's rule: the TAU_ namespace and MASTER_* / NCCL_* are matched
     * without regard to case; only the four retry keys, in exactly that
     * case, are the user's (a lowercase one would be a different variable
     * the retry loop never sets). */
    if (strncasecmp(key, "TAU_", 4) == 0) {
        for (size_t i = 0; i < TG_ARRAY_LEN(tau_ok); i++)
            if (strcmp(key, tau_ok[i]) == 0)
                return 0;
        snprintf(why, n,
                 "env \"%s\" is reserved: Tau owns the TAU_ namespace; the only TAU_ keys you can "
                 "set are " SE_TAU_ALLOWED,
                 key);
        return 1;
    }
    if (strcasecmp(key, "MASTER_ADDR") == 0 || strcasecmp(key, "MASTER_PORT") == 0) {
        snprintf(why, n,
                 "runtime.env contains Tau-managed keys that cannot be overridden: %s (Tau sets "
                 "the torch.distributed rendezvous); settable TAU_ keys: " SE_TAU_ALLOWED,
                 key);
        return 1;
    }
    if (strncasecmp(key, "NCCL_", 5) == 0 && !allow_nccl) {
        snprintf(why, n,
                 "runtime.env contains Tau-managed keys that cannot be overridden: %s (NCCL_* keys "
                 "are managed by Tau; set execution.allow_nccl_override: true to override them)",
                 key);
        return 1;
    }
    if (torchrun && strcmp(key, "JOB_COMPLETION_INDEX") == 0) {
        snprintf(why, n, "env \"%s\" is reserved with torchrun: it is the node rank", key);
        return 1;
    }
    return 0;
}

void tg_tauyaml_semantic_env(const json_t *root, const tg_tauyaml_facts_t *f,
                             const tg_tauyaml_limits_t *limits, tg_tauyaml_diag_t *d)
{
    int allow_nccl = 0;
    tg_tauyaml_get_bool(root, "execution", "allow_nccl_override", &allow_nccl);
    int torchrun = strcmp(f->launcher, "torchrun") == 0;
    const json_t *env = tg_tauyaml_get(root, "runtime", "env");
    const json_t *sec = tg_tauyaml_get(root, "runtime", "env_secret");
    tg_tauyaml_path_t p;
    tg_tauyaml_path_init(&p);
    size_t total = 0;
    const char *k;
    const json_t *v;
    char why[512];
    tg_tauyaml_qv_t q;
    if (json_is_object(env)) {
        tg_tauyaml_path_push_key(&p, "runtime", 7);
        size_t base = tg_tauyaml_path_push_key(&p, "env", 3);
        (void)base;
        size_t envlen = p.len;
        json_object_foreach((json_t *)env, k, v) {
            tg_tauyaml_path_push_key(&p, k, strlen(k));
            if (tg_tauyaml_env_reserved(k, allow_nccl, torchrun, why, sizeof(why)))
                tg_tauyaml_diag_error(d, tg_tauyaml_path_str(&p), TG_AT_KEY, "%s", why);
            if (json_is_string(v)) {
                size_t vl = json_string_length(v);
                if (vl > limits->max_env_value_bytes)
                    tg_tauyaml_diag_error(d, tg_tauyaml_path_str(&p), TG_AT_VALUE,
                                          "runtime.env value of \"%s\" is %zu bytes; a literal env "
                                          "value may be at most %zu bytes (64 KiB by default); put "
                                          "large data in a file under /data",
                                          tg_tauyaml_qv(&q, k), vl, limits->max_env_value_bytes);
                total += strlen(k) + 1 + vl + 1;
            }
            tg_tauyaml_path_pop(&p, envlen);
        }
        if (total > limits->max_env_total_bytes)
            tg_tauyaml_diag_error(d, "runtime.env", TG_AT_KEY,
                                  "runtime.env totals %zu bytes (name=value plus NUL each); the "
                                  "limit is %zu bytes (128 KiB by default)",
                                  total, limits->max_env_total_bytes);
        tg_tauyaml_path_pop(&p, 0);
    }
    if (json_is_object(sec)) {
        tg_tauyaml_path_push_key(&p, "runtime", 7);
        tg_tauyaml_path_push_key(&p, "env_secret", 10);
        size_t seclen = p.len;
        json_object_foreach((json_t *)sec, k, v) {
            tg_tauyaml_path_push_key(&p, k, strlen(k));
            if (tg_tauyaml_env_reserved(k, allow_nccl, torchrun, why, sizeof(why)))
                tg_tauyaml_diag_error(d, tg_tauyaml_path_str(&p), TG_AT_KEY, "%s", why);
            if (json_is_object(env) && json_object_get(env, k))
                tg_tauyaml_diag_error(
                    d, tg_tauyaml_path_str(&p), TG_AT_KEY,
                    "runtime.env_secret.%s conflicts with runtime.env.%s; set each "
                    "env var in only one place",
                    tg_tauyaml_qv(&q, k), q.s);
            tg_tauyaml_path_pop(&p, seclen);
        }
    }
    tg_tauyaml_path_clean(&p);
}

static const char *const se_reserved_paths[] = {"/data", "/mnt",     "/script",      "/manifest",
                                                "/tmp",  "/dev/shm", "/var/run/tau", "/tau/source"};

static void se_mounts(const json_t *root, tg_tauyaml_diag_t *d)
{
    const json_t *vols = tg_tauyaml_get(root, "storage", "volumes");
    const json_t *mnts = tg_tauyaml_get(root, "storage", "mounts");
    const char *data = tg_tauyaml_get_str(root, "storage", "data_pvc");
    tg_tauyaml_qv_t q;
    char path[64];
    size_t i, j;
    const json_t *v;
    json_array_foreach(vols, i, v) {
        if (!json_is_string(v))
            continue;
        snprintf(path, sizeof(path), "storage.volumes[%zu]", i);
        if (data && strcmp(data, json_string_value(v)) == 0)
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "storage.volumes lists \"%s\", which is already mounted at /data "
                                  "as storage.data_pvc",
                                  tg_tauyaml_qv(&q, data));
        for (j = 0; j < i; j++)
            if (json_equal(json_array_get(vols, j), (json_t *)v))
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "storage.volumes lists \"%s\" twice",
                                      tg_tauyaml_qv(&q, json_string_value(v)));
    }
    json_array_foreach(mnts, i, v) {
        if (!json_is_string(v))
            continue;
        snprintf(path, sizeof(path), "storage.mounts[%zu]", i);
        const char *s = json_string_value(v);
        const char *colon = strchr(s, ':');
        if (!colon)
            continue; /* the schema pattern reported it */
        char pvc[256], mp[512];
        size_t pl = (size_t)(colon - s);
        if (pl >= sizeof(pvc) || strlen(colon + 1) >= sizeof(mp))
            continue;
        memcpy(pvc, s, pl);
        pvc[pl] = '\0';
        snprintf(mp, sizeof(mp), "%s", colon + 1);
        char *ro = strstr(mp, ":ro");
        if (ro && ro[3] == '\0')
            *ro = '\0';
        int listed = 0;
        size_t k;
        const json_t *x;
        json_array_foreach(vols, k, x)
            listed |= json_is_string(x) && strcmp(json_string_value(x), pvc) == 0;
        if (!listed)
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "storage.mounts[%zu] names PVC \"%s\", which is not listed in "
                                  "storage.volumes",
                                  i, tg_tauyaml_qv(&q, pvc));
        if (!tg_tauyaml_path_clean_abs(mp) || strcmp(mp, "/") == 0) {
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "storage.mounts[%zu] mount path \"%s\" must be a clean absolute "
                                  "path",
                                  i, tg_tauyaml_qv(&q, mp));
            continue;
        }
        for (k = 0; k < TG_ARRAY_LEN(se_reserved_paths); k++)
            if (tg_tauyaml_path_overlap(mp, se_reserved_paths[k]))
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                      "storage.mounts[%zu] mount path \"%s\" overlaps %s, which "
                                      "taugate reserves",
                                      i, tg_tauyaml_qv(&q, mp), se_reserved_paths[k]);
        for (j = 0; j < i; j++) {
            const char *o = json_string_value(json_array_get(mnts, j));
            const char *oc = o ? strchr(o, ':') : NULL;
            if (!oc)
                continue;
            char op[512];
            snprintf(op, sizeof(op), "%s", oc + 1);
            char *oro = strstr(op, ":ro");
            if (oro && oro[3] == '\0')
                *oro = '\0';
            if (tg_tauyaml_path_overlap(mp, op))
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                      "storage.mounts[%zu] mount path \"%s\" overlaps "
                                      "storage.mounts[%zu]",
                                      i, tg_tauyaml_qv(&q, mp), j);
        }
    }
}

/* storage.checkpoint: TauGrid's Storage.ValidateCheckpoint (an empty value
 * is none), and its renderers' rule that the artifact index needs a
 * writable durable PVC. */
static void se_checkpoint(const json_t *root, const char *data, tg_tauyaml_diag_t *d)
{
    const char *ck = tg_tauyaml_get_str(root, "storage", "checkpoint");
    if (!ck)
        return;
    tg_tauyaml_qv_t q;
    size_t n = strlen(ck), a = 0, b = n;
    while (a < n && isspace((unsigned char)ck[a]))
        a++;
    while (b > a && isspace((unsigned char)ck[b - 1]))
        b--;
    if (a == b)
        return; /* blank: no checkpoint declared */
    if (a != 0 || b != n) {
        tg_tauyaml_diag_error(
            d, "storage.checkpoint", TG_AT_VALUE,
            "storage.checkpoint: must not have surrounding whitespace (got \"%s\")",
            tg_tauyaml_qv(&q, ck));
        return;
    }
    int bad = ck[0] == '/' || strchr(ck, '\\') != NULL;
    for (const char *seg = ck; !bad;) {
        const char *sl = strchr(seg, '/');
        size_t sn = sl ? (size_t)(sl - seg) : strlen(seg);
        bad = sn == 0 || (sn == 1 && seg[0] == '.') || (sn == 2 && seg[0] == '.' && seg[1] == '.');
        if (!sl)
            break;
        seg = sl + 1;
    }
    if (bad)
        tg_tauyaml_diag_error(d, "storage.checkpoint", TG_AT_VALUE,
                              "storage.checkpoint: must be a relative path inside the run's "
                              "checkpoint dir, without '.' or '..' segments (got \"%s\")",
                              tg_tauyaml_qv(&q, ck));
    if (!data)
        tg_tauyaml_diag_error(
            d, "storage.checkpoint", TG_AT_KEY,
            "storage.checkpoint requires writable durable PVC storage to write the "
            "artifact index: set storage.data_pvc");
}

/* storage.publish: staged, or nothing; staging needs the output on the
 * durable PVC it is copied to. */
static void se_publish(const json_t *root, const char *data, const char *out, tg_tauyaml_diag_t *d)
{
    const char *pub = tg_tauyaml_get_str(root, "storage", "publish");
    if (!pub || !*pub)
        return;
    if (strcmp(pub, "staged") != 0) {
        tg_tauyaml_diag_error(d, "storage.publish", TG_AT_VALUE,
                              "storage.publish must be one of: staged");
        return;
    }
    if (!data || !out || !tg_tauyaml_path_clean_abs(out) || !tg_tauyaml_path_within(out, "/data"))
        tg_tauyaml_diag_error(d, "storage.publish", TG_AT_VALUE,
                              "storage.publish=staged requires storage.output backed by a writable "
                              "PVC: set storage.data_pvc and a storage.output under /data");
}

/* TauGrid's exptelemetry.ValidateID: lowercase alphanumerics with internal
 * '-', '_' or '.'. The reason into why[n], or 0 when valid. */
static int se_bad_id(const char *kind, const char *v, char *why, size_t n)
{
    tg_tauyaml_qv_t q;
    size_t len = strlen(v);
    for (size_t i = 0; i < len; i++) {
        char c = v[i];
        int ok =
            (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
        if (!ok) {
            snprintf(why, n,
                     "%s \"%s\" is invalid (use lowercase alphanumerics with internal '-', '_' "
                     "or '.')",
                     kind, tg_tauyaml_qv(&q, v));
            return 1;
        }
        if ((i == 0 || i == len - 1) && (c == '-' || c == '_' || c == '.')) {
            snprintf(why, n, "%s \"%s\" is invalid (must start and end with an alphanumeric)", kind,
                     tg_tauyaml_qv(&q, v));
            return 1;
        }
    }
    return 0;
}

/* `s` without surrounding blanks into out[n] (cut to fit). */
static const char *se_trim(const char *s, char *out, size_t n)
{
    if (!s)
        return NULL;
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    if (len >= n)
        len = n - 1;
    memcpy(out, s, len);
    out[len] = '\0';
    return out;
}

void tg_tauyaml_experiment_id_from_title(const char *title, char *out, size_t n)
{
    size_t w = 0;
    int dash = 0;
    for (const char *p = title; *p && w + 1 < n && w < 63; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash && w > 0)
                out[w++] = '-';
            if (w + 1 < n && w < 63)
                out[w++] = c;
            dash = 0;
        } else {
            dash = 1;
        }
    }
    out[w] = '\0';
}

/* metrics.history and, when metrics.offload is enabled, TauGrid's identity
 * rules (Metrics.Validate). */
static void se_metrics(const json_t *root, tg_tauyaml_diag_t *d)
{
    tg_tauyaml_qv_t q;
    const json_t *hist = tg_tauyaml_get(root, "metrics", "history");
    size_t i;
    const json_t *h;
    json_array_foreach(hist, i, h) {
        if (!json_is_string(h))
            continue;
        char path[48], val[1100], clean[1100];
        snprintf(path, sizeof(path), "metrics.history[%zu]", i);
        const char *s = se_trim(json_string_value(h), val, sizeof(val));
        if (!*s) {
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "%s must not be empty", path);
            continue;
        }
        if (tg_tauyaml_gopath_clean(s, clean, sizeof(clean)) == (size_t)-1)
            continue;
        if (clean[0] == '/') {
            if (!tg_tauyaml_path_within(clean, "/data"))
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                      "%s \"%s\": absolute paths must be under /data", path,
                                      tg_tauyaml_qv(&q, json_string_value(h)));
        } else if (strcmp(clean, "..") == 0 || strncmp(clean, "../", 3) == 0) {
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "%s \"%s\": relative paths must not escape storage.output", path,
                                  tg_tauyaml_qv(&q, json_string_value(h)));
        }
    }
    int on = 0;
    tg_tauyaml_get_bool(tg_tauyaml_get(root, "metrics", "offload"), NULL, "enabled", &on);
    if (!on)
        return;
    if (json_array_size(hist) == 0) {
        tg_tauyaml_diag_error(d, "metrics.offload.enabled", TG_AT_VALUE,
                              "metrics.history requires at least one JSONL path when "
                              "metrics.offload.enabled is true");
        return;
    }
    char project[300], name[300], title[300], group[300], why[512];
    se_trim(tg_tauyaml_get_str(root, "experiment", "project"), project, sizeof(project));
    const char *pr = tg_tauyaml_get_str(root, "experiment", "project") ? project : "";
    if (!*pr) {
        tg_tauyaml_diag_error(
            d, "metrics.offload.enabled", TG_AT_VALUE,
            "experiment.project is required when metrics.offload.enabled is true");
        return;
    }
    /* The experiment id: name, else one derived from the legacy title, else
     * the group. */
    const char *nm = se_trim(tg_tauyaml_get_str(root, "experiment", "name"), name, sizeof(name));
    const char *id_path = "experiment.name";
    if (!nm || !*nm) {
        const char *t =
            se_trim(tg_tauyaml_get_str(root, "experiment", "title"), title, sizeof(title));
        if (t && *t) {
            tg_tauyaml_experiment_id_from_title(t, name, sizeof(name));
            nm = name;
            id_path = "experiment.title";
        } else {
            nm = se_trim(tg_tauyaml_get_str(root, "experiment", "group"), name, sizeof(name));
            id_path = "experiment.group";
        }
    }
    if (!nm || !*nm) {
        tg_tauyaml_diag_error(d, "metrics.offload.enabled", TG_AT_VALUE,
                              "experiment.name is required when metrics.offload.enabled is true");
        return;
    }
    if (se_bad_id("project", pr, why, sizeof(why)))
        tg_tauyaml_diag_error(d, "experiment.project", TG_AT_VALUE, "experiment.project: %s", why);
    if (se_bad_id("experiment", nm, why, sizeof(why)))
        tg_tauyaml_diag_error(d, id_path, TG_AT_VALUE, "experiment.name: %s", why);
    const char *g = se_trim(tg_tauyaml_get_str(root, "experiment", "group"), group, sizeof(group));
    if (g && *g && se_bad_id("group", g, why, sizeof(why)))
        tg_tauyaml_diag_error(d, "experiment.group", TG_AT_VALUE, "experiment.group: %s", why);
    (void)q;
}

void tg_tauyaml_semantic_storage(const json_t *root, const tg_tauyaml_facts_t *f,
                                 tg_tauyaml_diag_t *d)
{
    (void)f;
    tg_tauyaml_qv_t q, q2;
    const char *data = tg_tauyaml_get_str(root, "storage", "data_pvc");
    const char *result = tg_tauyaml_get_str(root, "storage", "result_pvc");
    if (result && !data)
        tg_tauyaml_diag_error(
            d, "storage.result_pvc", TG_AT_KEY,
            "storage.result_pvc needs storage.data_pvc: taugate writes results to "
            "the PVC mounted at /data");
    else if (result && strcmp(result, data) != 0)
        tg_tauyaml_diag_error(
            d, "storage.result_pvc", TG_AT_VALUE,
            "storage.result_pvc \"%s\" must equal storage.data_pvc \"%s\": taugate "
            "writes results to the PVC mounted at /data",
            tg_tauyaml_qv(&q, result), tg_tauyaml_qv(&q2, data));
    const char *out = tg_tauyaml_get_str(root, "storage", "output");
    if (out && !tg_tauyaml_path_clean_abs(out))
        tg_tauyaml_diag_error(d, "storage.output", TG_AT_VALUE,
                              "storage.output \"%s\" must be a clean absolute path (for example "
                              "/data/projects/<name>)",
                              tg_tauyaml_qv(&q, out));
    else if (out && !tg_tauyaml_path_within(out, "/data"))
        tg_tauyaml_diag_warn(d, "storage.output", TG_AT_VALUE,
                             "storage.output \"%s\" is not under /data, so it will not outlive the "
                             "pod",
                             tg_tauyaml_qv(&q, out));
    se_checkpoint(root, data, d);
    se_publish(root, data, out, d);
    se_mounts(root, d);

    se_metrics(root, d);

    const char *cp = tg_tauyaml_get_str(root, "resilience", "checkpoint_path");
    if (cp && (!tg_tauyaml_path_clean_abs(cp) || !tg_tauyaml_path_within(cp, "/data") ||
               strcmp(cp, "/data") == 0))
        tg_tauyaml_diag_error(
            d, "resilience.checkpoint_path", TG_AT_VALUE,
            "resilience.checkpoint_path \"%s\" must be a clean absolute path under "
            "/data (a resume needs a durable checkpoint)",
            tg_tauyaml_qv(&q, cp));
    const char *bi = tg_tauyaml_get_str(root, "resilience", "backoff_initial");
    const char *bm = tg_tauyaml_get_str(root, "resilience", "backoff_max");
    int64_t ni = 30000000000LL, nm = 300000000000LL;
    int oki = 1, okm = 1;
    if (bi && (oki = tg_tauyaml_duration_parse(bi, &ni) == 0) == 0)
        tg_tauyaml_diag_error(d, "resilience.backoff_initial", TG_AT_VALUE,
                              "resilience.backoff_initial \"%s\" is not a Go duration (examples: "
                              "30s, 5m, 1h30m)",
                              tg_tauyaml_qv(&q, bi));
    if (bm && (okm = tg_tauyaml_duration_parse(bm, &nm) == 0) == 0)
        tg_tauyaml_diag_error(d, "resilience.backoff_max", TG_AT_VALUE,
                              "resilience.backoff_max \"%s\" is not a Go duration (examples: 30s, "
                              "5m, 1h30m)",
                              tg_tauyaml_qv(&q, bm));
    if (oki && okm && (bi || bm) && ni > nm)
        tg_tauyaml_diag_error(
            d, bi ? "resilience.backoff_initial" : "resilience.backoff_max", TG_AT_VALUE,
            "resilience.backoff_initial (%s) is longer than "
            "resilience.backoff_max (%s)",
            bi ? tg_tauyaml_qv(&q, bi) : "30s", bm ? tg_tauyaml_qv(&q2, bm) : "5m");
    json_int_t mr = 0;
    tg_tauyaml_get_int(root, "resilience", "max_retries", &mr);
    if (mr == 0 && tg_tauyaml_get(root, "resilience", "retry_on"))
        tg_tauyaml_diag_warn(d, "resilience.retry_on", TG_AT_KEY,
                             "resilience.retry_on has no effect while resilience.max_retries is 0");
}

/* execution.beta_features: acknowledgements TauGrid knows, each once. */
static void se_beta_features(const json_t *root, tg_tauyaml_diag_t *d)
{
    const json_t *bf = tg_tauyaml_get(root, "execution", "beta_features");
    size_t i;
    const json_t *v;
    tg_tauyaml_qv_t q;
    int bad = 0;
    json_array_foreach(bf, i, v) {
        const char *s = json_string_value(v);
        char path[48];
        snprintf(path, sizeof(path), "execution.beta_features[%zu]", i);
        if (!s)
            continue;
        if (strcmp(s, "multikueue") != 0) {
            bad++;
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "execution.beta_features \"%s\" is unsupported (supported: "
                                  "multikueue)",
                                  tg_tauyaml_qv(&q, s));
            continue;
        }
        for (size_t j = 0; j < i; j++)
            if (json_equal(json_array_get(bf, j), (json_t *)v)) {
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                      "execution.beta_features lists \"%s\" twice (duplicate)",
                                      tg_tauyaml_qv(&q, s));
                bad++;
                break;
            }
    }
    if (json_array_size(bf) > 0 && !bad)
        tg_tauyaml_diag_warn(
            d, "execution.beta_features", TG_AT_KEY,
            "execution.beta_features acknowledges TauGrid's MultiKueue dispatch; "
            "taugate dispatches every run to its own cluster, so it has no effect");
}

void tg_tauyaml_semantic_policy(const json_t *root, const tg_tauyaml_facts_t *f,
                                tg_tauyaml_diag_t *d)
{
    (void)f;
    tg_tauyaml_qv_t q, q2;
    se_beta_features(root, d);
    const char *mode = tg_tauyaml_get_str(root, "policy", "mode");
    if (mode && strcmp(mode, "elastic") == 0)
        tg_tauyaml_diag_error(d, "policy.mode", TG_AT_VALUE,
                              "mode=elastic requires checkpoint/restart semantics (TauGrid removed "
                              "policy.checkpoint_every, so no elastic run can be admitted); use "
                              "mode fixed or omit it");
    const char *pr = tg_tauyaml_get_str(root, "policy", "priority");
    const char *pt = tg_tauyaml_get_str(root, "policy", "priority_tier");
    if (pr && pt && strcmp(pr, pt) != 0)
        tg_tauyaml_diag_error(d, "policy.priority", TG_AT_VALUE,
                              "policy.priority \"%s\" conflicts with policy.priority_tier \"%s\"; "
                              "policy.priority is an alias, set only one",
                              tg_tauyaml_qv(&q, pr), tg_tauyaml_qv(&q2, pt));
    const char *tier = pt ? pt : pr;
    const char *tier_path = pt ? "policy.priority_tier" : "policy.priority";
    int dis = 0;
    tg_tauyaml_get_bool(root, "policy", "disable_default_priorities", &dis);
    if (tier && (tg_tauyaml_get(root, "policy", "workload_priority_class") ||
                 tg_tauyaml_get(root, "policy", "pod_priority_class") ||
                 tg_tauyaml_get(root, "policy", "disable_default_priorities")))
        tg_tauyaml_diag_error(d, tier_path, TG_AT_KEY,
                              "%s cannot be combined with explicit class names "
                              "(policy.workload_priority_class, policy.pod_priority_class) or with "
                              "policy.disable_default_priorities",
                              tier_path);
    const char *lane = tg_tauyaml_get_str(root, "policy", "lane");
    if (tier && strcmp(tier, "priority") == 0 && lane && strcmp(lane, "elastic") == 0)
        tg_tauyaml_diag_error(d, tier_path, TG_AT_VALUE,
                              "%s: priority is not allowed for lane=elastic", tier_path);

    const char *gc = tg_tauyaml_get_str(root, "policy", "gpu_class");
    const json_t *ns = tg_tauyaml_get(root, "policy", "node_selector");
    const char *sel = json_is_object(ns)
                          ? json_string_value(json_object_get(ns, "tau.azure.com/gpu-class"))
                          : NULL;
    if (gc && sel && strcmp(gc, "any") == 0)
        tg_tauyaml_diag_error(d, "policy.gpu_class", TG_AT_VALUE,
                              "policy.gpu_class \"any\" cannot be combined with a "
                              "tau.azure.com/gpu-class node selector; remove one of them");
    else if (gc && sel && strcmp(gc, sel) != 0)
        tg_tauyaml_diag_error(d, "policy.gpu_class", TG_AT_VALUE,
                              "gpu_class \"%s\" requires tau.azure.com/gpu-class=\"%s\", but the "
                              "workload node selector uses \"%s\"",
                              tg_tauyaml_qv(&q, gc), q.s, tg_tauyaml_qv(&q2, sel));
    if (json_is_object(ns)) {
        tg_tauyaml_path_t p;
        tg_tauyaml_path_init(&p);
        tg_tauyaml_path_push_key(&p, "policy", 6);
        tg_tauyaml_path_push_key(&p, "node_selector", 13);
        size_t base = p.len;
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)ns, k, v) {
            tg_tauyaml_path_push_key(&p, k, strlen(k));
            if (!tg_tauyaml_label_key(k))
                tg_tauyaml_diag_error(d, tg_tauyaml_path_str(&p), TG_AT_KEY,
                                      "policy.node_selector key \"%s\" is not a valid Kubernetes "
                                      "label key ([prefix/]name)",
                                      tg_tauyaml_qv(&q, k));
            if (json_is_string(v) && !tg_tauyaml_label_value(json_string_value(v)))
                tg_tauyaml_diag_error(d, tg_tauyaml_path_str(&p), TG_AT_VALUE,
                                      "policy.node_selector value \"%s\" is not a valid Kubernetes "
                                      "label value",
                                      tg_tauyaml_qv(&q, json_string_value(v)));
            tg_tauyaml_path_pop(&p, base);
        }
        tg_tauyaml_path_clean(&p);
    }
}
