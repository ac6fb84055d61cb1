/* The checks, one per rule kind, and the fills of the kinds that support
 * action: default. Each reads the resolved config through eval_int.h and
 * records its decisions there. */
#include <ctype.h>
#include <stdint.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/eval_int.h"
#include "tauyaml/path.h"

#define K_C(...) ((const char *const[]){__VA_ARGS__, NULL})

/* buf = the NULL-terminated strings joined (cut to n - 1); cheaper than
 * snprintf on the evaluation path. Returns buf. */
static char *k_cat(char *buf, size_t n, ...)
{
    va_list ap;
    size_t len = 0;
    const char *part;
    va_start(ap, n);
    while ((part = va_arg(ap, const char *)) != NULL) {
        size_t pl = strlen(part);
        if (pl > n - 1 - len)
            pl = n - 1 - len;
        memcpy(buf + len, part, pl);
        len += pl;
    }
    va_end(ap);
    buf[len] = '\0';
    return buf;
}

/* The rule's list as "a, b, c" for messages (cut at n). */
static const char *k_list(char *buf, size_t n, const json_t *list)
{
    size_t len = 0, i;
    const json_t *v;
    buf[0] = '\0';
    json_array_foreach(list, i, v) {
        int w = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", json_string_value(v));
        if (w < 0 || (size_t)w >= n - len) {
            if (n > 4)
                memcpy(buf + n - 4, "...", 4);
            break;
        }
        len += (size_t)w;
    }
    return buf;
}

/* ---- values a rule cannot evaluate ----------------------------------------------------- */

/* Every check fails closed: a value that is present but cannot be read as
 * what the rule compares (a count that is not a whole number, a quantity
 * that does not parse, a name that is not a string) is a violation, never
 * skipped. */

/* An integer field: 1 and *out when absent (def) or a non-negative integer;
 * 0 when it is anything else. */
static int k_int(const tg_policy_ev_t *e, const char *sect, const char *key, json_int_t def,
                 json_int_t *out)
{
    const json_t *v = tg_policy_ev_get(e, sect, key);
    *out = def;
    if (!v)
        return 1;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return 0;
    *out = json_integer_value(v);
    return 1;
}

/* A string field: 1 and *out (NULL when absent) unless it is present and
 * not a string. */
static int k_str(const tg_policy_ev_t *e, const char *sect, const char *key, const char **out)
{
    const json_t *v = tg_policy_ev_get(e, sect, key);
    *out = json_string_value(v);
    return !v || *out;
}

/* The refusal of a value the rule cannot evaluate. */
static void k_unreadable(tg_policy_ev_t *e, const tg_policy_rule_t *r, const char *rpath,
                         const char *what)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, rpath, K_C(rpath), 1, &at);
    if (at.path == rpath) {
        k_cat(at.buf, sizeof(at.buf), rpath, NULL);
        at.path = at.buf;
    }
    const json_t *v = NULL;
    const char *dot = strchr(rpath, '.');
    if (dot) {
        char sect[32];
        k_cat(sect,
              (size_t)(dot - rpath) + 1 < sizeof(sect) ? (size_t)(dot - rpath) + 1 : sizeof(sect),
              rpath, NULL);
        v = tg_policy_ev_get(e, sect, dot + 1);
    }
    tg_policy_ev_violation(e, r, &at, v ? json_deep_copy(v) : NULL,
                           "%s is not %s, so this rule cannot check it", rpath, what);
}

/* ---- images ---------------------------------------------------------------------------- */

/* `entry` (a registry host, a repository prefix or a glob) covers `img`. A
 * prefix only matches at a path boundary, so ghcr.io/acme does not cover
 * ghcr.io/acme-evil/x, and mcr.microsoft.com does not cover
 * mcr.microsoft.com.evil.io/x. */
static int k_image_match(const char *img, const char *entry)
{
    if (strpbrk(entry, "*?["))
        return fnmatch(entry, img, 0) == 0;
    size_t n = strlen(entry);
    if (n == 0 || strncmp(img, entry, n) != 0)
        return 0;
    if (entry[n - 1] == '/')
        return 1;
    char next = img[n];
    if (!strchr(entry, '/'))
        return next == '/';
    return next == '\0' || next == '/' || next == ':' || next == '@';
}

/* The full reference as Docker reads it: an image whose first component is
 * not a host (no '.', no ':', not localhost) is Docker Hub's. NULL when it
 * is already full or does not fit. */
static const char *k_image_full(const char *img, char *buf, size_t n)
{
    const char *slash = strchr(img, '/');
    int w;
    if (slash) {
        size_t hl = (size_t)(slash - img);
        if (memchr(img, '.', hl) || memchr(img, ':', hl) ||
            (hl == 9 && strncmp(img, "localhost", 9) == 0))
            return NULL;
        w = snprintf(buf, n, "docker.io/%s", img);
    } else {
        w = snprintf(buf, n, "docker.io/library/%s", img);
    }
    return w > 0 && (size_t)w < n ? buf : NULL;
}

static void k_allowed_images(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "runtime.image", K_C("runtime.image", "run.image", "image"), 1, &at);
    const char *img;
    if (!k_str(e, "runtime", "image", &img)) {
        k_unreadable(e, r, "runtime.image", "a string");
        return;
    }
    if (!img) {
        tg_policy_ev_allow(e, r, &at, NULL);
        return;
    }
    char full[1024];
    const char *alt = NULL;
    size_t i;
    const json_t *p;
    /* As written first; Docker's full form only when that does not match. */
    for (int pass = 0; pass < 2; pass++) {
        const char *name = pass == 0 ? img : (alt = k_image_full(img, full, sizeof(full)));
        json_array_foreach(r->param, i, p) {
            const char *entry = json_string_value(p);
            if (name && entry && k_image_match(name, entry)) {
                tg_policy_ev_allow(e, r, &at, tg_policy_ev_ref(e, "runtime", "image"));
                return;
            }
        }
    }
    (void)alt;
    char list[512];
    tg_policy_ev_violation(e, r, &at, json_string(img),
                           "image \"%s\" is not from an allowed registry (allowed: %s)", img,
                           k_list(list, sizeof(list), r->param));
}

static int k_digest_pinned(const char *img)
{
    const char *at = strstr(img, "@sha256:");
    if (!at)
        return 0;
    const char *h = at + 8;
    size_t n = 0;
    for (; h[n]; n++)
        if (!isdigit((unsigned char)h[n]) && !(h[n] >= 'a' && h[n] <= 'f'))
            return 0;
    return n == 64;
}

static void k_require_image_digest(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "runtime.image", K_C("runtime.image", "run.image", "image"), 1, &at);
    const char *img = tg_policy_ev_str(e, "runtime", "image");
    if (img && k_digest_pinned(img))
        tg_policy_ev_allow(e, r, &at, tg_policy_ev_ref(e, "runtime", "image"));
    else
        tg_policy_ev_violation(e, r, &at, img ? json_string(img) : NULL,
                               "image \"%s\" must be pinned by digest (name@sha256:<64 hex>), "
                               "not by a tag",
                               img ? img : "");
}

/* ---- GPUs and pods --------------------------------------------------------------------- */

typedef struct k_shape_s {
    json_int_t per_pod, pods, cpu_pods, total;
} k_shape_t;

/* The run's shape; 0 (after refusing for r) when a count is unreadable. */
static int k_shape(tg_policy_ev_t *e, const tg_policy_rule_t *r, k_shape_t *s)
{
    const char *bad = NULL;
    if (!k_int(e, "compute", "gpu_count", 0, &s->per_pod))
        bad = "compute.gpu_count";
    s->cpu_pods = 0;
    if (e->is_ray) {
        if (!k_int(e, "compute", "workers", 1, &s->pods))
            bad = "compute.workers";
        if (!k_int(e, "compute", "cpu_workers", 0, &s->cpu_pods))
            bad = "compute.cpu_workers";
    } else if (!k_int(e, "execution", "nodes", 1, &s->pods)) {
        bad = "execution.nodes";
    }
    if (bad) {
        k_unreadable(e, r, bad, "a whole number of at least 0");
        return 0;
    }
    if (__builtin_mul_overflow(s->per_pod, s->pods, &s->total))
        s->total = INT64_MAX;
    return 1;
}

static void k_max_gpus_per_run(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    k_shape_t s;
    if (!k_shape(e, r, &s))
        return;
    tg_policy_at_t at;
    if (e->is_ray)
        tg_policy_ev_locate(e, "compute.gpus_per_worker",
                            K_C("compute.gpus_per_worker", "compute.workers"), 1, &at);
    else
        tg_policy_ev_locate(e, "compute.gpus", K_C("compute.gpus", "execution.nodes"), 1, &at);
    if (s.total <= r->ilimit)
        tg_policy_ev_allow_int(e, r, &at, s.total);
    else
        tg_policy_ev_violation(e, r, &at, json_integer(s.total),
                               "the run asks for %lld GPUs (%lld per pod x %lld pods); at most "
                               "%lld are allowed per run",
                               (long long)s.total, (long long)s.per_pod, (long long)s.pods,
                               (long long)r->ilimit);
}

static void k_max_gpus_per_worker(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    k_shape_t s;
    if (!k_shape(e, r, &s))
        return;
    const char *path = e->is_ray ? "compute.gpus_per_worker" : "compute.gpus";
    tg_policy_at_t at;
    tg_policy_ev_locate(e, path, K_C(path), 1, &at);
    if (s.per_pod <= r->ilimit)
        tg_policy_ev_allow_int(e, r, &at, s.per_pod);
    else
        tg_policy_ev_violation(e, r, &at, json_integer(s.per_pod),
                               "%s is %lld; at most %lld GPUs per pod are allowed", path,
                               (long long)s.per_pod, (long long)r->ilimit);
}

static void k_max_nodes(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    k_shape_t s;
    if (!k_shape(e, r, &s))
        return;
    json_int_t n;
    if (__builtin_add_overflow(s.pods, s.cpu_pods, &n))
        n = INT64_MAX;
    tg_policy_at_t at;
    if (e->is_ray)
        tg_policy_ev_locate(e, "compute.workers", K_C("compute.workers", "compute.cpu_workers"), 1,
                            &at);
    else
        tg_policy_ev_locate(e, "execution.nodes", K_C("execution.nodes"), 1, &at);
    if (n <= r->ilimit)
        tg_policy_ev_allow_int(e, r, &at, n);
    else
        tg_policy_ev_violation(e, r, &at, json_integer(n),
                               "the run asks for %lld %s; at most %lld are allowed", (long long)n,
                               e->is_ray ? "Ray worker pods" : "nodes", (long long)r->ilimit);
}

static void k_allowed_gpu_classes(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "policy.gpu_class", K_C("policy.gpu_class"), 1, &at);
    const char *gc;
    k_shape_t s;
    if (!k_shape(e, r, &s))
        return;
    if (!k_str(e, "policy", "gpu_class", &gc)) {
        k_unreadable(e, r, "policy.gpu_class", "a string");
        return;
    }
    if (s.per_pod == 0 || tg_policy_match_any(r->param, gc)) {
        tg_policy_ev_allow(e, r, &at, tg_policy_ev_ref(e, "policy", "gpu_class"));
        return;
    }
    char list[512];
    tg_policy_ev_violation(e, r, &at, gc ? json_string(gc) : NULL,
                           "GPU class \"%s\" is not allowed here (allowed: %s)", gc ? gc : "",
                           k_list(list, sizeof(list), r->param));
}

static void k_fill_gpu_class(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "policy.gpu_class", K_C("policy.gpu_class"), 1, &at);
    k_shape_t s;
    if (!k_shape(e, r, &s))
        return;
    const char *first = json_string_value(json_array_get(r->param, 0));
    /* Only GPU runs: a class on a CPU run would pin it to GPU nodes. */
    if (s.per_pod > 0 && first && tg_policy_ev_fillable(e, "policy", "gpu_class")) {
        tg_policy_ev_set(e, "policy", "gpu_class", json_incref(json_array_get(r->param, 0)), r);
        tg_policy_ev_filled(e, r, &at, "policy", "gpu_class");
        return;
    }
    tg_policy_ev_allow(e, r, &at, tg_policy_ev_ref(e, "policy", "gpu_class"));
}

static void k_allowed_profiles(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "policy.profile", K_C("policy.profile"), 1, &at);
    const char *p = tg_policy_ev_str(e, "policy", "profile");
    if (tg_policy_match_any(r->param, p)) {
        tg_policy_ev_allow(e, r, &at, tg_policy_ev_ref(e, "policy", "profile"));
        return;
    }
    char list[512];
    if (p)
        tg_policy_ev_violation(e, r, &at, json_string(p),
                               "compute profile \"%s\" is not allowed here (allowed: %s)", p,
                               k_list(list, sizeof(list), r->param));
    else
        tg_policy_ev_violation(e, r, &at, NULL,
                               "the run has no compute profile; set policy.profile to one of: "
                               "%s",
                               k_list(list, sizeof(list), r->param));
}

/* ---- deadline, security, env, experiment, retries, priority ---------------------------- */

static void k_max_active_deadline(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "run.active_deadline_seconds", NULL, 1, &at);
    const json_t *v = tg_policy_ev_get(e, "run", "active_deadline_seconds");
    json_int_t ads;
    if (!k_int(e, "run", "active_deadline_seconds", 0, &ads)) {
        k_unreadable(e, r, "run.active_deadline_seconds", "a whole number of seconds");
        return;
    }
    if (!v || ads <= r->ilimit)
        tg_policy_ev_allow(e, r, &at, tg_policy_ev_ref(e, "run", "active_deadline_seconds"));
    else
        tg_policy_ev_violation(e, r, &at, json_integer(ads),
                               "run.active_deadline_seconds is %lld (from the %s); at most %lld "
                               "seconds are allowed",
                               (long long)ads,
                               tg_policy_ev_prov(e, "run.active_deadline_seconds")
                                   ? tg_policy_ev_prov(e, "run.active_deadline_seconds")
                                   : "run config",
                               (long long)r->ilimit);
}

static void k_fill_active_deadline(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "run.active_deadline_seconds", NULL, 1, &at);
    if (tg_policy_ev_fillable(e, "run", "active_deadline_seconds")) {
        tg_policy_ev_set(e, "run", "active_deadline_seconds", json_incref((json_t *)r->param), r);
        tg_policy_ev_filled(e, r, &at, "run", "active_deadline_seconds");
        return;
    }
    tg_policy_ev_allow(e, r, &at, tg_policy_ev_ref(e, "run", "active_deadline_seconds"));
}

static void k_require_active_deadline(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "run.active_deadline_seconds", NULL, 1, &at);
    const json_t *v = tg_policy_ev_get(e, "run", "active_deadline_seconds");
    if (json_is_integer(v) && json_integer_value(v) > 0)
        tg_policy_ev_allow(e, r, &at, json_incref((json_t *)v));
    else
        tg_policy_ev_violation(e, r, &at, NULL,
                               "the run has no deadline (run.active_deadline_seconds); use a "
                               "compute profile that sets one");
}

static void k_require_security_mode(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "runtime.security_mode",
                        K_C("runtime.security.mode", "runtime.security"), 1, &at);
    const char *want = json_string_value(r->param);
    const char *mode = tg_policy_ev_str(e, "runtime", "security_mode");
    if (mode && want && strcmp(mode, want) == 0)
        tg_policy_ev_allow(e, r, &at, tg_policy_ev_ref(e, "runtime", "security_mode"));
    else
        tg_policy_ev_violation(e, r, &at, mode ? json_string(mode) : NULL,
                               "runtime.security.mode must be %s", want ? want : "restricted");
}

static void k_fill_security_mode(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "runtime.security_mode",
                        K_C("runtime.security.mode", "runtime.security"), 1, &at);
    const char *want = json_string_value(r->param);
    if (want && tg_policy_ev_fillable(e, "runtime", "security_mode")) {
        tg_policy_ev_set(e, "runtime", "security_mode", json_incref((json_t *)r->param), r);
        tg_policy_ev_filled(e, r, &at, "runtime", "security_mode");
        return;
    }
    tg_policy_ev_allow(e, r, &at, tg_policy_ev_ref(e, "runtime", "security_mode"));
}

static void k_denied_env_names(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    static const char *const sects[] = {"env", "env_secret"};
    int found = 0;
    char list[512];
    for (size_t s = 0; s < TG_ARRAY_LEN(sects); s++) {
        const json_t *env = tg_policy_ev_get(e, "runtime", sects[s]);
        const char *name;
        const json_t *v;
        json_object_foreach((json_t *)env, name, v) {
            if (!tg_policy_match_any(r->param, name))
                continue;
            char parent[32];
            snprintf(parent, sizeof(parent), "runtime.%s", sects[s]);
            char *path = tg_tauyaml_path_join(parent, name);
            tg_policy_at_t at;
            tg_policy_ev_locate(e, path, K_C(path), 0, &at);
            if (at.path == path) {
                snprintf(at.buf, sizeof(at.buf), "%s", path);
                at.path = at.buf;
            }
            tg_policy_ev_violation(e, r, &at, json_string(name),
                                   "env %s may not be set here (denied: %s)", name,
                                   k_list(list, sizeof(list), r->param));
            free(path);
            found = 1;
        }
    }
    if (!found) {
        tg_policy_at_t at;
        tg_policy_ev_locate(e, "runtime.env", K_C("runtime.env"), 0, &at);
        tg_policy_ev_allow(e, r, &at, NULL);
    }
}

static void k_required_experiment_fields(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    int missing = 0;
    size_t i;
    const json_t *f;
    json_array_foreach(r->param, i, f) {
        const char *field = json_string_value(f);
        const char *v = field ? tg_policy_ev_str(e, "experiment", field) : NULL;
        if (!field)
            continue;
        if (v && *v)
            continue;
        char path[64];
        snprintf(path, sizeof(path), "experiment.%s", field);
        tg_policy_at_t at;
        tg_policy_ev_locate(e, path, K_C(path), 1, &at);
        if (at.path == path) {
            snprintf(at.buf, sizeof(at.buf), "%s", path);
            at.path = at.buf;
        }
        tg_policy_ev_violation(e, r, &at, NULL, "experiment.%s is required here", field);
        missing = 1;
    }
    if (!missing) {
        tg_policy_at_t at;
        tg_policy_ev_locate(e, "experiment", K_C("experiment"), 0, &at);
        tg_policy_ev_allow(e, r, &at, tg_policy_ev_ref(e, NULL, "experiment"));
    }
}

static void k_max_retries(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "resilience.max_retries", K_C("resilience.max_retries"), 1, &at);
    json_int_t n;
    if (!k_int(e, "resilience", "max_retries", 0, &n)) {
        k_unreadable(e, r, "resilience.max_retries", "a whole number of at least 0");
        return;
    }
    if (n <= r->ilimit)
        tg_policy_ev_allow_int(e, r, &at, n);
    else
        tg_policy_ev_violation(e, r, &at, json_integer(n),
                               "resilience.max_retries is %lld; at most %lld retries are allowed",
                               (long long)n, (long long)r->ilimit);
}

static void k_fill_max_retries(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "resilience.max_retries", K_C("resilience.max_retries"), 1, &at);
    if (tg_policy_ev_fillable(e, "resilience", "max_retries")) {
        tg_policy_ev_set(e, "resilience", "max_retries", json_incref((json_t *)r->param), r);
        tg_policy_ev_filled(e, r, &at, "resilience", "max_retries");
        return;
    }
    tg_policy_ev_allow_int(e, r, &at, tg_policy_ev_int(e, "resilience", "max_retries", 0));
}

static void k_allowed_priority_tiers(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    tg_policy_at_t at;
    tg_policy_ev_locate(e, "policy.priority_tier", K_C("policy.priority_tier", "policy.priority"),
                        1, &at);
    const char *tier;
    if (!k_str(e, "policy", "priority_tier", &tier)) {
        k_unreadable(e, r, "policy.priority_tier", "a string");
        return;
    }
    if (!tier)
        tier = "default";
    char list[128];
    if (tg_policy_match_any(r->param, tier))
        tg_policy_ev_allow(e, r, &at, json_string(tier));
    else
        tg_policy_ev_violation(e, r, &at, json_string(tier),
                               "priority tier %s is not allowed here (allowed: %s)", tier,
                               k_list(list, sizeof(list), r->param));
}

/* ---- CPU and memory per pod ------------------------------------------------------------ */

typedef struct k_role_s {
    const char *prefix; /* resolved key prefix */
    const char *what;   /* for messages */
} k_role_t;

static size_t k_roles(const tg_policy_ev_t *e, k_role_t *roles)
{
    if (!e->is_ray) {
        roles[0] = (k_role_t){"", "the container"};
        return 1;
    }
    roles[0] = (k_role_t){"head_", "the Ray head"};
    roles[1] = (k_role_t){"worker_", "each Ray worker"};
    if (tg_policy_ev_int(e, "compute", "cpu_workers", 0) > 0) {
        roles[2] = (k_role_t){"cpu_worker_", "each Ray CPU worker"};
        return 3;
    }
    return 2;
}

/* Locate compute.<prefix><res>_<which>: the spec keys that feed it, as
 * tauyaml/resolve.c chooses them (a role key, the generic key, and for a Ray
 * limit the request it was copied from). */
static void k_locate_q(const tg_policy_ev_t *e, const char *prefix, const char *res,
                       const char *which, tg_policy_at_t *at)
{
    char c[4][64];
    const char *cands[5] = {0};
    size_t n = 0;
    int limit = which[0] == 'l';
    int cpu_worker = strcmp(prefix, "cpu_worker_") == 0;
    if (!cpu_worker)
        cands[n] = k_cat(c[n], sizeof(c[n]), "compute.", prefix, res, "_", which, NULL), n++;
    if (*prefix)
        cands[n] = k_cat(c[n], sizeof(c[n]), "compute.", res, "_", which, NULL), n++;
    if (limit && e->is_ray) {
        if (!cpu_worker)
            cands[n] = k_cat(c[n], sizeof(c[n]), "compute.", prefix, res, "_request", NULL), n++;
        cands[n] = k_cat(c[n], sizeof(c[n]), "compute.", res, "_request", NULL), n++;
    }
    char rpath[64];
    k_cat(rpath, sizeof(rpath), "compute.", prefix, res, "_", which, NULL);
    tg_policy_ev_locate(e, rpath, cands, 1, at);
    /* at->path may point at a local buffer: keep a copy in at->buf. */
    if (at->path != at->buf)
        k_cat(at->buf, sizeof(at->buf), at->path, NULL);
    at->path = at->buf;
}

/* A quantity field of compute: 1 with *present and *q; 0 when it is set
 * but not a quantity (nor a JSON number, read as its decimal text). */
static int k_qty(const tg_policy_ev_t *e, const char *key, int *present, tg_qty_t *q)
{
    const json_t *v = tg_policy_ev_get(e, "compute", key);
    *present = v != NULL;
    if (!v)
        return 1;
    char num[64];
    const char *text = json_string_value(v);
    if (json_is_integer(v)) {
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        text = num;
    } else if (json_is_real(v)) {
        snprintf(num, sizeof(num), "%.17g", json_real_value(v));
        text = num;
    }
    return text && tg_qty_parse(text, q) == TG_QTY_OK;
}

static void k_max_per_pod(tg_policy_ev_t *e, const tg_policy_rule_t *r, const char *res)
{
    k_role_t roles[3];
    size_t nroles = k_roles(e, roles);
    static const char *const which[2] = {"request", "limit"};
    tg_qty_t biggest = {0, 0, 0, TG_QTY_DECIMAL_SI};
    char biggest_key[48] = "";
    int bad = 0;
    for (size_t i = 0; i < nroles; i++) {
        for (int w = 0; w < 2; w++) {
            char key[48];
            k_cat(key, sizeof(key), roles[i].prefix, res, "_", which[w], NULL);
            tg_qty_t v;
            int present;
            if (!k_qty(e, key, &present, &v)) {
                char path[64];
                k_cat(path, sizeof(path), "compute.", key, NULL);
                k_unreadable(e, r, path, "a Kubernetes quantity");
                bad = 1;
                continue;
            }
            if (!present)
                continue;
            if (!*biggest_key || tg_qty_cmp(&v, &biggest) > 0) {
                biggest = v;
                memcpy(biggest_key, key, sizeof(biggest_key));
            }
            if (tg_qty_cmp(&v, &r->qlimit) <= 0)
                continue;
            tg_policy_at_t at;
            k_locate_q(e, roles[i].prefix, res, which[w], &at);
            const char *q = tg_policy_ev_str(e, "compute", key);
            char text[TG_QTY_MAX_TEXT];
            if (!q)
                q = tg_qty_format(&v, text, sizeof(text)) == TG_QTY_OK ? text : "?";
            tg_policy_ev_violation(e, r, &at, json_string(q),
                                   "the %s %s of %s is %s; at most %s per pod is allowed", res,
                                   which[w], roles[i].what, q, json_string_value(r->param));
            bad = 1;
        }
    }
    if (!bad) {
        tg_policy_at_t at;
        k_locate_q(e, roles[0].prefix, res, "request", &at);
        tg_policy_ev_allow(e, r, &at,
                           *biggest_key ? tg_policy_ev_ref(e, "compute", biggest_key) : NULL);
    }
}

static void k_max_cpu_per_pod(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    k_max_per_pod(e, r, "cpu");
}

static void k_max_memory_per_pod(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    k_max_per_pod(e, r, "memory");
}

/* Lower built-in requests above the cap to it; give unset limits the cap,
 * and lower built-in limits above it, where the request fits under it. */
static void k_fill_per_pod(tg_policy_ev_t *e, const tg_policy_rule_t *r, const char *res)
{
    k_role_t roles[3];
    size_t nroles = k_roles(e, roles);
    int filled = 0;
    for (size_t i = 0; i < nroles; i++) {
        char rk[48], lk[48];
        k_cat(rk, sizeof(rk), roles[i].prefix, res, "_request", NULL);
        k_cat(lk, sizeof(lk), roles[i].prefix, res, "_limit", NULL);
        tg_qty_t v;
        int present;
        /* An unreadable request is replaced when it may be (else the check
         * refuses it). */
        int req_ok = k_qty(e, rk, &present, &v) && (!present || tg_qty_cmp(&v, &r->qlimit) <= 0);
        tg_policy_at_t at;
        if (!req_ok && tg_policy_ev_fillable(e, "compute", rk)) {
            k_locate_q(e, roles[i].prefix, res, "request", &at);
            tg_policy_ev_set(e, "compute", rk, json_incref((json_t *)r->param), r);
            tg_policy_ev_filled(e, r, &at, "compute", rk);
            req_ok = filled = 1;
        }
        /* An unset limit gets the cap; a built-in one only when above it. */
        tg_qty_t lv;
        int lim_set;
        int lim_over = !k_qty(e, lk, &lim_set, &lv) || (lim_set && tg_qty_cmp(&lv, &r->qlimit) > 0);
        if (req_ok && (!lim_set || lim_over) && tg_policy_ev_fillable(e, "compute", lk)) {
            k_locate_q(e, roles[i].prefix, res, "limit", &at);
            tg_policy_ev_set(e, "compute", lk, json_incref((json_t *)r->param), r);
            tg_policy_ev_filled(e, r, &at, "compute", lk);
            filled = 1;
        }
    }
    if (!filled) {
        tg_policy_at_t at;
        k_locate_q(e, roles[0].prefix, res, "limit", &at);
        tg_policy_ev_allow(e, r, &at, NULL);
    }
}

static void k_fill_cpu_per_pod(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    k_fill_per_pod(e, r, "cpu");
}

static void k_fill_memory_per_pod(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    k_fill_per_pod(e, r, "memory");
}

/* ---- storage --------------------------------------------------------------------------- */

static void k_allowed_pvcs(tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    char list[512];
    json_t *seen = NULL; /* the PVCs compared, for the allow decision */
    int bad = 0;
    tg_policy_at_t at;
    const char *data;
    if (!k_str(e, "storage", "data_pvc", &data)) {
        k_unreadable(e, r, "storage.data_pvc", "a string");
        return;
    }
    if (data) {
        seen = json_array();
        json_array_append_new(seen, json_string(data));
        if (!tg_policy_match_any(r->param, data)) {
            tg_policy_ev_locate(e, "storage.data_pvc", K_C("storage.data_pvc"), 1, &at);
            tg_policy_ev_violation(e, r, &at, json_string(data),
                                   "PVC \"%s\" is not allowed here (allowed: %s)", data,
                                   k_list(list, sizeof(list), r->param));
            bad = 1;
        }
    }
    /* Resolved volumes follow the spec's storage.volumes order; a PVC mounted
     * at several paths gives consecutive entries. */
    const json_t *vols = tg_policy_ev_get(e, "storage", "volumes");
    const char *prev = NULL;
    size_t spec_index = 0, i;
    const json_t *v;
    json_array_foreach(vols, i, v) {
        const char *pvc = json_string_value(json_object_get(v, "pvc"));
        if (!pvc || (prev && strcmp(prev, pvc) == 0))
            continue;
        if (prev)
            spec_index++;
        prev = pvc;
        if (!seen)
            seen = json_array();
        json_array_append_new(seen, json_string(pvc));
        if (tg_policy_match_any(r->param, pvc))
            continue;
        char cand[48];
        snprintf(cand, sizeof(cand), "storage.volumes[%zu]", spec_index);
        tg_policy_ev_locate(e, "storage.volumes", K_C(cand, "storage.volumes"), 1, &at);
        snprintf(at.buf, sizeof(at.buf), "%s", at.path);
        at.path = at.buf;
        tg_policy_ev_violation(e, r, &at, json_string(pvc),
                               "PVC \"%s\" is not allowed here (allowed: %s)", pvc,
                               k_list(list, sizeof(list), r->param));
        bad = 1;
    }
    if (!bad) {
        tg_policy_ev_locate(e, "storage", K_C("storage"), 0, &at);
        tg_policy_ev_allow(e, r, &at, seen);
        seen = NULL;
    }
    json_decref(seen);
}

const tg_policy_kind_fn tg_policy_kind_check[TG_PK_COUNT] = {
    [TG_PK_ALLOWED_IMAGES] = k_allowed_images,
    [TG_PK_REQUIRE_IMAGE_DIGEST] = k_require_image_digest,
    [TG_PK_MAX_GPUS_PER_RUN] = k_max_gpus_per_run,
    [TG_PK_MAX_GPUS_PER_WORKER] = k_max_gpus_per_worker,
    [TG_PK_MAX_NODES] = k_max_nodes,
    [TG_PK_ALLOWED_GPU_CLASSES] = k_allowed_gpu_classes,
    [TG_PK_ALLOWED_PROFILES] = k_allowed_profiles,
    [TG_PK_MAX_ACTIVE_DEADLINE] = k_max_active_deadline,
    [TG_PK_REQUIRE_ACTIVE_DEADLINE] = k_require_active_deadline,
    [TG_PK_REQUIRE_SECURITY_MODE] = k_require_security_mode,
    [TG_PK_DENIED_ENV_NAMES] = k_denied_env_names,
    [TG_PK_REQUIRED_EXPERIMENT_FIELDS] = k_required_experiment_fields,
    [TG_PK_MAX_RETRIES] = k_max_retries,
    [TG_PK_ALLOWED_PRIORITY_TIERS] = k_allowed_priority_tiers,
    [TG_PK_MAX_CPU_PER_POD] = k_max_cpu_per_pod,
    [TG_PK_MAX_MEMORY_PER_POD] = k_max_memory_per_pod,
    [TG_PK_ALLOWED_PVCS] = k_allowed_pvcs,
};

const tg_policy_kind_fn tg_policy_kind_fill[TG_PK_COUNT] = {
    [TG_PK_ALLOWED_GPU_CLASSES] = k_fill_gpu_class,
    [TG_PK_MAX_ACTIVE_DEADLINE] = k_fill_active_deadline,
    [TG_PK_REQUIRE_SECURITY_MODE] = k_fill_security_mode,
    [TG_PK_MAX_RETRIES] = k_fill_max_retries,
    [TG_PK_MAX_CPU_PER_POD] = k_fill_cpu_per_pod,
    [TG_PK_MAX_MEMORY_PER_POD] = k_fill_memory_per_pod,
};
