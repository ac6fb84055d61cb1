/* Semantic rules: identity, engine scope, launcher, compute, configs. The
 * env/storage/metrics/resilience/policy rules are in semantic_env.c. */
#include "tauyaml/semantic.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tauyaml/path.h"
#include "tauyaml/semantic_env.h"
#include "tauyaml/semantic_sources.h"
#include "tauyaml/units.h"
#include "core/quantity.h"

/* The sections of the tree being checked, remembered as they are looked up:
 * the semantic rules and the resolver ask for "policy", "compute", ... more
 * than a hundred times per request, each a jansson hash look-up. Slots are
 * picked by the address of the name (callers mostly pass literals) and hold
 * a copy of it, so a reused buffer with another name only misses. */
#define SPEC_SECT_SLOTS 32
#define SPEC_SECT_NAME  24

typedef struct spec_sect_slot_s {
    char name[SPEC_SECT_NAME]; /* "" when empty */
    const json_t *obj;         /* root[name], possibly NULL */
} spec_sect_slot_t;

/* Per thread, and only a cache: a look-up for any other tree (or none
 * bound) goes to the tree itself, so a stale or missing binding costs time,
 * never a wrong answer. Passing it explicitly would thread a context
 * through the 137 tg_tauyaml_get* calls of the rules. */
static __thread struct {
    const json_t *root; /* the bound tree, or NULL */
    spec_sect_slot_t slot[SPEC_SECT_SLOTS];
} spec_sects;

void tg_tauyaml_sections_bind(const json_t *root)
{
    memset(&spec_sects, 0, sizeof(spec_sects));
    spec_sects.root = root;
}

void tg_tauyaml_sections_unbind(void)
{
    spec_sects.root = NULL;
}

static const json_t *spec_section(const json_t *root, const char *sect)
{
    if (root != spec_sects.root)
        return json_object_get(root, sect);
    spec_sect_slot_t *s = &spec_sects.slot[((uintptr_t)sect >> 3) % SPEC_SECT_SLOTS];
    if (strcmp(s->name, sect) == 0 && s->name[0])
        return s->obj;
    const json_t *obj = json_object_get(root, sect);
    size_t n = strlen(sect);
    if (n > 0 && n < SPEC_SECT_NAME) {
        memcpy(s->name, sect, n + 1);
        s->obj = obj;
    }
    return obj;
}

const json_t *tg_tauyaml_get(const json_t *root, const char *sect, const char *key)
{
    if (!json_is_object(root))
        return NULL;
    if (sect) {
        root = spec_section(root, sect);
        if (!json_is_object(root))
            return NULL;
    }
    return json_object_get(root, key);
}

const char *tg_tauyaml_get_str(const json_t *root, const char *sect, const char *key)
{
    const json_t *v = tg_tauyaml_get(root, sect, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

int tg_tauyaml_get_int(const json_t *root, const char *sect, const char *key, json_int_t *out)
{
    const json_t *v = tg_tauyaml_get(root, sect, key);
    if (!json_is_integer(v))
        return 0;
    *out = json_integer_value(v);
    return 1;
}

int tg_tauyaml_get_bool(const json_t *root, const char *sect, const char *key, int *out)
{
    const json_t *v = tg_tauyaml_get(root, sect, key);
    if (!json_is_boolean(v))
        return 0;
    *out = json_is_true(v);
    return 1;
}

/* `s` without surrounding blanks and lowercased, into out[n]; NULL when it
 * does not fit (no canonical value is that long). */
static const char *sm_fold(const char *s, char *out, size_t n)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len >= n)
        return NULL;
    for (size_t i = 0; i < len; i++)
        out[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
    out[len] = '\0';
    return out;
}

/* TauGrid's NormalizeEngine: "job", "rayjob" and its alias "ray", in any
 * case. */
static const char *sm_canon_engine(const char *e)
{
    char b[16];
    if (!e || !sm_fold(e, b, sizeof(b)))
        return NULL;
    if (strcmp(b, "job") == 0)
        return "job";
    if (strcmp(b, "rayjob") == 0 || strcmp(b, "ray") == 0)
        return "rayjob";
    return NULL;
}

/* TauGrid's workload_kind aliases for a direct run config. */
static const char *sm_kind_engine(const char *k, int *valid)
{
    char b[16];
    *valid = 1;
    if (!k || !sm_fold(k, b, sizeof(b)) || !*b)
        return NULL;
    if (strcmp(b, "job") == 0)
        return "job";
    if (strcmp(b, "ray") == 0 || strcmp(b, "rayjob") == 0 || strcmp(b, "ray-train") == 0 ||
        strcmp(b, "ray_train") == 0)
        return "rayjob";
    *valid = 0;
    return NULL;
}

const char *tg_tauyaml_launcher_canon(const char *s)
{
    static const char *const known[] = {"python", "torchrun", "ray-train", "ray-tune"};
    char b[16];
    if (!s || !sm_fold(s, b, sizeof(b)))
        return NULL;
    for (size_t i = 0; i < TG_ARRAY_LEN(known); i++)
        if (strcmp(b, known[i]) == 0)
            return known[i];
    return NULL;
}

void tg_tauyaml_facts_collect(const json_t *root, tg_tauyaml_facts_t *f)
{
    memset(f, 0, sizeof(*f));
    /* Precedence as TauGrid: run.* aliases first for engine and entrypoint. */
    if ((f->name = tg_tauyaml_get_str(root, NULL, "name")))
        f->name_path = "name";
    else if ((f->name = tg_tauyaml_get_str(root, "run", "name")))
        f->name_path = "run.name";
    const char *e = NULL;
    if ((e = tg_tauyaml_get_str(root, "run", "engine")) && *e)
        f->engine_path = "run.engine";
    else if ((e = tg_tauyaml_get_str(root, NULL, "engine")) && *e)
        f->engine_path = "engine";
    else
        e = NULL;
    f->engine_raw = e;
    f->engine = sm_canon_engine(e);
    if ((f->workload_kind = tg_tauyaml_get_str(root, "run", "workload_kind")) && *f->workload_kind)
        f->workload_kind_path = "run.workload_kind";
    else if ((f->workload_kind = tg_tauyaml_get_str(root, "compute", "workload_kind")) &&
             *f->workload_kind)
        f->workload_kind_path = "compute.workload_kind";
    else
        f->workload_kind = NULL;
    static const struct {
        const char *sect, *key, *path;
    } ep[] = {{"run", "entrypoint", "run.entrypoint"},
              {"run", "script", "run.script"},
              {NULL, "entrypoint", "entrypoint"},
              {NULL, "script", "script"}};
    for (size_t i = 0; i < TG_ARRAY_LEN(ep); i++) {
        const char *v = tg_tauyaml_get_str(root, ep[i].sect, ep[i].key);
        if (v && *v) {
            f->entrypoint = v;
            f->entrypoint_path = ep[i].path;
            break;
        }
    }
    static const struct {
        const char *sect, *key, *path;
    } im[] = {{"runtime", "image", "runtime.image"},
              {"run", "image", "run.image"},
              {NULL, "image", "image"}};
    for (size_t i = 0; i < TG_ARRAY_LEN(im); i++) {
        const char *v = tg_tauyaml_get_str(root, im[i].sect, im[i].key);
        if (v && *v) {
            f->image = v;
            f->image_path = im[i].path;
            break;
        }
    }
    f->gpus = 0;
    tg_tauyaml_get_int(root, "compute", "gpus", &f->gpus);
    f->gpus_per_worker = 1;
    int gpw_set = tg_tauyaml_get_int(root, "compute", "gpus_per_worker", &f->gpus_per_worker);
    f->workers = 1;
    tg_tauyaml_get_int(root, "compute", "workers", &f->workers);
    tg_tauyaml_get_int(root, "compute", "cpu_workers", &f->cpu_workers);
    f->nodes = 1;
    tg_tauyaml_get_int(root, "execution", "nodes", &f->nodes);
    f->ppn = 1;
    tg_tauyaml_get_int(root, "execution", "processes_per_node", &f->ppn);
    /* No engine written: TauGrid's dispatch takes it from workload_kind,
     * else a RayJob when Ray-only fields are set, else a Job. */
    if (!e) {
        int valid;
        f->engine = sm_kind_engine(f->workload_kind, &valid);
        if (!f->engine && valid) {
            const json_t *pip = tg_tauyaml_get(root, "runtime", "pip");
            f->engine = (f->workers > 1 || gpw_set || json_array_size(pip) > 0) ? "rayjob" : "job";
        }
        f->engine_inferred = f->engine != NULL;
    }
    f->is_job = f->engine && strcmp(f->engine, "job") == 0;
    f->is_ray = f->engine && strcmp(f->engine, "rayjob") == 0;
    f->launcher_raw = tg_tauyaml_get_str(root, "execution", "launcher");
    const char *l = tg_tauyaml_launcher_canon(f->launcher_raw);
    f->launcher_explicit = l != NULL;
    if (l) {
        memcpy(f->launcher_buf, l, strlen(l) + 1);
        f->launcher = f->launcher_buf;
    } else {
        f->launcher = f->is_ray ? "ray-train" : "python";
    }
    f->working_dir = tg_tauyaml_get_str(root, "run", "working_dir");
}

/* --- identity ------------------------------------------------------------------------------- */

static void sm_alias_conflicts(const json_t *root, tg_tauyaml_diag_t *d)
{
    static const struct {
        const char *sect, *key, *path;
        int group;
    } al[] = {
        {NULL, "name", "name", 0},
        {"run", "name", "run.name", 0},
        {"run", "engine", "run.engine", 1},
        {NULL, "engine", "engine", 1},
        {"run", "entrypoint", "run.entrypoint", 2},
        {"run", "script", "run.script", 2},
        {NULL, "entrypoint", "entrypoint", 2},
        {NULL, "script", "script", 2},
        {"runtime", "image", "runtime.image", 3},
        {"run", "image", "run.image", 3},
        {NULL, "image", "image", 3},
    };
    const char *val[TG_ARRAY_LEN(al)]; /* each looked up once, not once per pair */
    for (size_t i = 0; i < TG_ARRAY_LEN(al); i++)
        val[i] = tg_tauyaml_get_str(root, al[i].sect, al[i].key);
    for (size_t i = 0; i < TG_ARRAY_LEN(al); i++) {
        const char *vi = val[i];
        if (!vi)
            continue;
        for (size_t j = 0; j < i; j++) {
            if (al[j].group != al[i].group)
                continue;
            const char *vj = val[j];
            if (!vj)
                continue;
            int same = strcmp(vi, vj) == 0;
            if (al[i].group == 1)
                same = sm_canon_engine(vi) == sm_canon_engine(vj);
            if (!same) {
                tg_tauyaml_qv_t q1, q2;
                tg_tauyaml_diag_error(d, al[i].path, TG_AT_VALUE,
                                      "%s \"%s\" conflicts with %s \"%s\"; set it in one place",
                                      al[i].path, tg_tauyaml_qv(&q1, vi), al[j].path,
                                      tg_tauyaml_qv(&q2, vj));
            }
            break;
        }
    }
}

/* How TauGrid's dispatch names the engine choice in its messages. */
static const char *sm_intent(const tg_tauyaml_facts_t *f, char *buf, size_t n)
{
    char b[40];
    if (f->engine_raw && sm_fold(f->engine_raw, b, sizeof(b)))
        snprintf(buf, n, "engine=%s", b);
    else if (f->workload_kind && sm_fold(f->workload_kind, b, sizeof(b)))
        snprintf(buf, n, "workload_kind=%s", b);
    else
        snprintf(buf, n, "implicit dispatch");
    return buf;
}

static void sm_identity(const json_t *root, const tg_tauyaml_facts_t *f, tg_tauyaml_diag_t *d)
{
    sm_alias_conflicts(root, d);
    tg_tauyaml_qv_t q, q2;
    char fold[64];
    if (!f->name && !tg_tauyaml_get(root, NULL, "name") && !tg_tauyaml_get(root, "run", "name"))
        tg_tauyaml_diag_error(d, "", TG_AT_KEY,
                              "name is required: set name to a DNS-1123 label (lowercase letters, "
                              "digits and '-')");
    if (f->engine_raw && !f->engine) {
        const char *shown = sm_fold(f->engine_raw, fold, sizeof(fold));
        tg_tauyaml_diag_error(d, f->engine_path, TG_AT_VALUE,
                              "engine \"%s\" is not valid; use job or rayjob",
                              tg_tauyaml_qv(&q, shown ? shown : f->engine_raw));
    }
    if (f->workload_kind) {
        int valid;
        const char *ke = sm_kind_engine(f->workload_kind, &valid);
        if (!valid)
            tg_tauyaml_diag_error(d, f->workload_kind_path, TG_AT_VALUE,
                                  "%s \"%s\": workload_kind must be one of: job, rayjob for "
                                  "non-managed run configs",
                                  f->workload_kind_path, tg_tauyaml_qv(&q, f->workload_kind));
        else if (ke && f->engine && !f->engine_inferred && strcmp(ke, f->engine) != 0)
            tg_tauyaml_diag_error(d, f->workload_kind_path, TG_AT_VALUE,
                                  "engine=%s conflicts with workload_kind=%s",
                                  tg_tauyaml_qv(&q, sm_fold(f->engine_raw, fold, sizeof(fold))),
                                  tg_tauyaml_qv(&q2, f->workload_kind));
    }
    if (f->is_ray && f->name && strlen(f->name) > 47)
        tg_tauyaml_diag_error(d, f->name_path, TG_AT_VALUE,
                              "%s \"%s\" is %zu characters; a RayJob name may be at most 47 "
                              "characters (KubeRay limit)",
                              f->name_path, tg_tauyaml_qv(&q, f->name), strlen(f->name));
    if (f->is_job && !f->entrypoint) {
        static const char *const needs[][2] = {{"runtime", "pip"}, {"execution", "configs"}};
        for (size_t i = 0; i < TG_ARRAY_LEN(needs); i++) {
            if (!tg_tauyaml_get(root, needs[i][0], needs[i][1]))
                continue;
            char path[48];
            snprintf(path, sizeof(path), "%s.%s", needs[i][0], needs[i][1]);
            tg_tauyaml_diag_error(d, path, TG_AT_KEY,
                                  "%s needs an entrypoint: without one the image's own command "
                                  "runs unchanged",
                                  path);
        }
    }
    if (f->is_ray && !f->entrypoint)
        tg_tauyaml_diag_error(d, f->engine_path ? f->engine_path : "", TG_AT_VALUE,
                              "engine: rayjob requires entrypoint (the driver script)");
}

/* --- engine scope and launcher -------------------------------------------------------------- */

static void sm_only(const json_t *root, tg_tauyaml_diag_t *d, const char *sect, const char *key,
                    const char *msg)
{
    if (!tg_tauyaml_get(root, sect, key))
        return;
    char path[96];
    snprintf(path, sizeof(path), "%s.%s", sect, key);
    tg_tauyaml_diag_error(d, path, TG_AT_KEY, "%s", msg);
}

static void sm_engine_scope(const json_t *root, const tg_tauyaml_facts_t *f, tg_tauyaml_diag_t *d)
{
    static const char *const ray_quantities[] = {
        "head_cpu_request",   "head_memory_request",   "head_cpu_limit",   "head_memory_limit",
        "worker_cpu_request", "worker_memory_request", "worker_cpu_limit", "worker_memory_limit"};
    char intent[64];
    sm_intent(f, intent, sizeof(intent));
    if (f->is_ray) {
        sm_only(root, d, "run", "ttl_seconds_after_finished",
                "run.ttl_seconds_after_finished requires engine: job (a RayJob releases its "
                "cluster 15 s after it finishes)");
        sm_only(root, d, "runtime", "working_dir",
                "runtime.working_dir requires engine: job; for a RayJob ship the project with "
                "run.working_dir");
        sm_only(root, d, "policy", "clear_node_selector",
                "policy.clear_node_selector requires engine: job; RayJobs cannot clear "
                "profile/topology node selectors");
        sm_only(root, d, "compute", "gpus",
                "compute.gpus is only supported for engine: job; use compute.gpus_per_worker for "
                "RayJob");
        if (f->nodes > 1)
            tg_tauyaml_diag_error(d, "execution.nodes", TG_AT_VALUE,
                                  "execution.nodes is for engine: job; use compute.workers for "
                                  "RayJob pod count");
    }
    if (f->is_job) {
        sm_only(root, d, "run", "working_dir",
                "run.working_dir requires engine: rayjob (Ray ships the project directory to "
                "every pod); a Job runs the entrypoint script");
        sm_only(root, d, "run", "working_dir_excludes",
                "run.working_dir_excludes requires engine: rayjob and run.working_dir");
        if (f->workers > 1)
            tg_tauyaml_diag_error(d, "compute.workers", TG_AT_VALUE,
                                  "%s cannot set compute.workers=%" JSON_INTEGER_FORMAT
                                  "; use engine: rayjob or remove compute.workers",
                                  intent, f->workers);
        if (tg_tauyaml_get(root, "compute", "gpus_per_worker"))
            tg_tauyaml_diag_error(d, "compute.gpus_per_worker", TG_AT_KEY,
                                  "%s cannot set compute.gpus_per_worker; use compute.gpus for a "
                                  "direct Job or switch to engine: rayjob",
                                  intent);
        sm_only(root, d, "compute", "cpu_workers", "compute.cpu_workers is for engine: rayjob");
        for (size_t i = 0; i < TG_ARRAY_LEN(ray_quantities); i++) {
            if (!tg_tauyaml_get(root, "compute", ray_quantities[i]))
                continue;
            char path[64];
            snprintf(path, sizeof(path), "compute.%s", ray_quantities[i]);
            tg_tauyaml_diag_error(d, path, TG_AT_KEY,
                                  "%s cannot set %s; jobs are single-pod, so use "
                                  "compute.cpu_request, compute.memory_request, compute.cpu_limit, "
                                  "and compute.memory_limit or switch to engine: rayjob",
                                  intent, path);
        }
    }
    if (tg_tauyaml_get(root, "run", "working_dir_excludes") && !f->working_dir && f->is_ray)
        tg_tauyaml_diag_error(d, "run.working_dir_excludes", TG_AT_KEY,
                              "run.working_dir_excludes needs run.working_dir");
}

/* execution.* against the engine, in the order and words of TauGrid's
 * ValidateExecution (core/runconfig) and its Job dispatch (cli run.go). */
static void sm_launcher(const json_t *root, const tg_tauyaml_facts_t *f, tg_tauyaml_diag_t *d)
{
    const char *l = f->launcher;
    tg_tauyaml_qv_t q;
    char fold[64], intent[64];
    if (f->launcher_raw && !f->launcher_explicit) {
        const char *shown = sm_fold(f->launcher_raw, fold, sizeof(fold));
        shown = tg_tauyaml_qv(&q, shown ? shown : f->launcher_raw);
        if (!f->engine_raw)
            tg_tauyaml_diag_error(d, "execution.launcher", TG_AT_VALUE,
                                  "execution.launcher \"%s\" is not valid; use python, torchrun "
                                  "(engine: job) or ray-train, ray-tune (engine: rayjob)",
                                  shown);
        else if (f->is_ray)
            tg_tauyaml_diag_error(d, "execution.launcher", TG_AT_VALUE,
                                  "execution.launcher \"%s\" is not valid for engine: rayjob; use "
                                  "ray-train or ray-tune",
                                  shown);
        else if (f->is_job)
            tg_tauyaml_diag_error(d, "execution.launcher", TG_AT_VALUE,
                                  "execution.launcher \"%s\" is not valid for engine: job; use "
                                  "python or torchrun",
                                  shown);
    }
    int ray_launcher = f->launcher_explicit && strncmp(l, "ray-", 4) == 0;
    if (ray_launcher && !f->engine_raw)
        tg_tauyaml_diag_error(
            d, "execution.launcher", TG_AT_VALUE,
            "execution.launcher \"%s\" requires engine: rayjob; set engine: rayjob "
            "explicitly",
            l);
    else if (ray_launcher && f->is_job)
        tg_tauyaml_diag_error(d, "execution.launcher", TG_AT_VALUE,
                              "execution.launcher \"%s\" requires engine: rayjob (needs a Ray "
                              "cluster); got engine: job",
                              l);
    if (f->launcher_explicit && f->is_ray && strcmp(l, "torchrun") == 0)
        tg_tauyaml_diag_error(d, "execution.launcher", TG_AT_VALUE,
                              "execution.launcher torchrun is for engine: job; Ray Train manages "
                              "distributed init via TorchConfig");
    if (f->launcher_explicit && f->is_ray && strcmp(l, "python") == 0)
        tg_tauyaml_diag_error(d, "execution.launcher", TG_AT_VALUE,
                              "execution.launcher python is for engine: job; use ray-train for "
                              "engine: rayjob");
    int torchrun = strcmp(l, "torchrun") == 0;
    if (f->is_job && f->nodes > 1 && !torchrun)
        tg_tauyaml_diag_error(d, "execution.nodes", TG_AT_VALUE,
                              "%s with execution.nodes=%" JSON_INTEGER_FORMAT
                              " requires execution.launcher=torchrun",
                              sm_intent(f, intent, sizeof(intent)), f->nodes);
    if (f->ppn > 1 && !torchrun)
        tg_tauyaml_diag_error(d, "execution.processes_per_node", TG_AT_VALUE,
                              "execution.processes_per_node > 1 requires execution.launcher: "
                              "torchrun");
    else if (f->ppn > 1 && f->gpus > 0 && f->ppn > f->gpus)
        tg_tauyaml_diag_error(d, "execution.processes_per_node", TG_AT_VALUE,
                              "execution.processes_per_node (%" JSON_INTEGER_FORMAT
                              ") may not exceed the GPU count (compute.gpus: %" JSON_INTEGER_FORMAT
                              "); lower processes_per_node or request more GPUs",
                              f->ppn, f->gpus);
    if (torchrun && f->entrypoint && strcmp(tg_tauyaml_ext(f->entrypoint), ".py") != 0)
        tg_tauyaml_diag_error(d, f->entrypoint_path, TG_AT_VALUE,
                              "execution.launcher torchrun needs a .py entrypoint; got \"%s\"",
                              tg_tauyaml_qv(&q, f->entrypoint));
    if (torchrun && !f->entrypoint && f->is_job)
        tg_tauyaml_diag_error(d, "execution.launcher", TG_AT_VALUE,
                              "execution.launcher torchrun needs an entrypoint (.py)");
    int tune = f->launcher_explicit && strcmp(l, "ray-tune") == 0;
    static const char *const tune_keys[] = {"metric", "mode", "num_samples",
                                            "max_concurrent_trials"};
    for (size_t i = 0; i < TG_ARRAY_LEN(tune_keys); i++) {
        if (!tune && tg_tauyaml_get(root, "execution", tune_keys[i])) {
            char path[64];
            snprintf(path, sizeof(path), "execution.%s", tune_keys[i]);
            tg_tauyaml_diag_error(d, path, TG_AT_KEY,
                                  "execution.metric/mode/num_samples/max_concurrent_trials require "
                                  "execution.launcher: ray-tune");
        }
    }
    if (tune) {
        const char *metric = tg_tauyaml_get_str(root, "execution", "metric");
        if (!metric || !*metric)
            tg_tauyaml_diag_error(d, "execution.launcher", TG_AT_VALUE,
                                  "execution.metric is required for launcher: ray-tune");
        if (json_object_size(tg_tauyaml_get(root, "execution", "configs")) == 0)
            tg_tauyaml_diag_error(d, "execution.launcher", TG_AT_VALUE,
                                  "execution.configs is required for launcher: ray-tune (defines "
                                  "the search space)");
        const char *mode = tg_tauyaml_get_str(root, "execution", "mode");
        if (mode && strcasecmp(mode, "min") != 0 && strcasecmp(mode, "max") != 0 && *mode)
            tg_tauyaml_diag_error(d, "execution.mode", TG_AT_VALUE,
                                  "execution.mode must be min or max, got \"%s\"",
                                  tg_tauyaml_qv(&q, mode));
    }
}

/* --- compute -------------------------------------------------------------------------------- */

/* `compute` is the spec's compute section (or NULL). */
static void sm_request_limit(const json_t *compute, tg_tauyaml_diag_t *d, const char *prefix,
                             const char *res)
{
    char rk[64], lk[64];
    tg_tauyaml_path_cat(rk, sizeof(rk), prefix, res, "_request");
    tg_tauyaml_path_cat(lk, sizeof(lk), prefix, res, "_limit");
    const char *r = tg_tauyaml_get_str(compute, NULL, rk);
    const char *l = tg_tauyaml_get_str(compute, NULL, lk);
    int cmp;
    if (!r || !l || tg_qty_cmp_text(r, l, &cmp) != TG_QTY_OK)
        return; /* the syntax check reports a bad quantity */
    if (cmp > 0) {
        char path[80];
        snprintf(path, sizeof(path), "compute.%s", rk);
        tg_tauyaml_qv_t q1, q2;
        tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                              "compute.%s (%s) is larger than compute.%s (%s); a request may not "
                              "exceed its limit",
                              rk, tg_tauyaml_qv(&q1, r), lk, tg_tauyaml_qv(&q2, l));
    }
}

static void sm_compute(const json_t *root, const tg_tauyaml_facts_t *f, tg_tauyaml_diag_t *d)
{
    (void)f;
    const char *mode = tg_tauyaml_get_str(root, "compute", "gpu_resource_mode");
    const char *mig = tg_tauyaml_get_str(root, "compute", "mig_profile");
    int is_mig = mode && strcmp(mode, "mig") == 0;
    if (is_mig && !mig)
        tg_tauyaml_diag_error(d, "compute.gpu_resource_mode", TG_AT_VALUE,
                              "compute.mig_profile is required when compute.gpu_resource_mode is "
                              "mig (for example 1g.18gb)");
    if (mig && !is_mig)
        tg_tauyaml_diag_error(d, "compute.mig_profile", TG_AT_KEY,
                              "compute.mig_profile needs compute.gpu_resource_mode: mig");
    static const char *const prefixes[] = {"", "head_", "worker_"};
    const json_t *compute = tg_tauyaml_get(root, NULL, "compute");
    for (size_t i = 0; i < TG_ARRAY_LEN(prefixes); i++) {
        sm_request_limit(compute, d, prefixes[i], "cpu");
        sm_request_limit(compute, d, prefixes[i], "memory");
    }
}

/* --- execution.configs ---------------------------------------------------------------------- */

static int sm_scalar(const json_t *v)
{
    return json_is_string(v) || json_is_number(v) || json_is_boolean(v);
}

static void sm_no_nulls(const json_t *v, tg_tauyaml_path_t *p, tg_tauyaml_diag_t *d)
{
    if (json_is_null(v)) {
        tg_tauyaml_diag_error(d, tg_tauyaml_path_str(p), TG_AT_VALUE,
                              "%s is null; give it a value (use empty string for a bare flag)",
                              tg_tauyaml_path_str(p));
    } else if (json_is_object(v)) {
        const char *k;
        const json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            size_t old = tg_tauyaml_path_push_key(p, k, strlen(k));
            sm_no_nulls(x, p, d);
            tg_tauyaml_path_pop(p, old);
        }
    } else if (json_is_array(v)) {
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x) {
            size_t old = tg_tauyaml_path_push_index(p, i);
            sm_no_nulls(x, p, d);
            tg_tauyaml_path_pop(p, old);
        }
    }
}

static int sm_torchrun_denied(const char *k)
{
    static const char *const deny[] = {
        "standalone", "nnodes",      "nproc-per-node", "node-rank", "rdzv-backend", "rdzv-endpoint",
        "rdzv-id",    "master-addr", "master-port",    "module",    "no-python",    "run-path"};
    char norm[130];
    size_t n = strlen(k);
    if (n >= sizeof(norm))
        return 0;
    for (size_t i = 0; i <= n; i++)
        norm[i] = k[i] == '_' ? '-' : k[i];
    for (size_t i = 0; i < TG_ARRAY_LEN(deny); i++)
        if (strcmp(norm, deny[i]) == 0)
            return 1;
    return 0;
}

static void sm_configs(const json_t *root, const tg_tauyaml_facts_t *f, tg_tauyaml_diag_t *d)
{
    const json_t *cfg = tg_tauyaml_get(root, "execution", "configs");
    if (!json_is_object(cfg))
        return;
    tg_tauyaml_path_t p;
    tg_tauyaml_path_init(&p);
    tg_tauyaml_path_push_key(&p, "execution", 9);
    tg_tauyaml_path_push_key(&p, "configs", 7);
    sm_no_nulls(cfg, &p, d);
    const char *l = f->launcher;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)cfg, k, v) {
        size_t old = tg_tauyaml_path_push_key(&p, k, strlen(k));
        const char *path = tg_tauyaml_path_str(&p);
        tg_tauyaml_qv_t q;
        if (json_is_null(v)) {
            /* reported by sm_no_nulls */
        } else if (strcmp(l, "python") == 0 || strcmp(l, "torchrun") == 0) {
            if (!sm_scalar(v))
                tg_tauyaml_diag_error(
                    d, path, TG_AT_VALUE,
                    "%s must be a string, number or boolean: for launcher %s each "
                    "entry becomes a --%s=value flag",
                    path, l, tg_tauyaml_qv(&q, k));
            if (strcmp(l, "torchrun") == 0 && sm_torchrun_denied(k))
                tg_tauyaml_diag_error(d, path, TG_AT_KEY,
                                      "torchrun flag \"%s\" is managed by taugate (from "
                                      "execution.nodes and processes_per_node); remove it",
                                      tg_tauyaml_qv(&q, k));
        } else if (strcmp(l, "ray-train") == 0) {
            if (strcmp(k, "torch_config") && strcmp(k, "scaling_config") &&
                strcmp(k, "failure_config")) {
                tg_tauyaml_diag_error(d, path, TG_AT_KEY,
                                      "execution.configs for launcher ray-train takes only "
                                      "torch_config, scaling_config and failure_config; got \"%s\"",
                                      tg_tauyaml_qv(&q, k));
            } else if (!json_is_object(v)) {
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "%s must be a mapping", path);
            } else if (strcmp(k, "scaling_config") == 0) {
                static const char *const managed[] = {"num_workers", "resources_per_worker"};
                for (size_t i = 0; i < TG_ARRAY_LEN(managed); i++) {
                    if (!json_object_get(v, managed[i]))
                        continue;
                    size_t o2 = tg_tauyaml_path_push_key(&p, managed[i], strlen(managed[i]));
                    tg_tauyaml_diag_error(d, tg_tauyaml_path_str(&p), TG_AT_KEY,
                                          "%s is managed by taugate (from compute.workers and "
                                          "compute.gpus_per_worker); remove it",
                                          tg_tauyaml_path_str(&p));
                    tg_tauyaml_path_pop(&p, o2);
                }
            }
        } else if (strcmp(l, "ray-tune") == 0) {
            int ok = sm_scalar(v);
            if (json_is_array(v)) {
                ok = json_array_size(v) > 0;
                size_t i;
                const json_t *x;
                json_array_foreach(v, i, x)
                    ok &= sm_scalar(x);
            }
            if (!ok)
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                      "%s must be a value or a non-empty list of values (each list "
                                      "entry is a grid point of the search)",
                                      path);
        }
        tg_tauyaml_path_pop(&p, old);
    }
    tg_tauyaml_path_clean(&p);
}

/* --- paths of the entrypoint and project ---------------------------------------------------- */

static void sm_paths(const json_t *root, const tg_tauyaml_facts_t *f, tg_tauyaml_diag_t *d)
{
    tg_tauyaml_qv_t q;
    const char *rwd = tg_tauyaml_get_str(root, "runtime", "working_dir");
    if (rwd && !tg_tauyaml_path_clean_abs(rwd))
        tg_tauyaml_diag_error(d, "runtime.working_dir", TG_AT_VALUE,
                              "runtime.working_dir \"%s\" must be a clean absolute container path",
                              tg_tauyaml_qv(&q, rwd));
    if (rwd && f->working_dir)
        tg_tauyaml_diag_error(d, "runtime.working_dir", TG_AT_KEY,
                              "runtime.working_dir cannot be combined with run.working_dir: the "
                              "project directory already sets where the entrypoint runs");
    if (f->working_dir && !tg_tauyaml_path_clean_rel(f->working_dir))
        tg_tauyaml_diag_error(d, "run.working_dir", TG_AT_VALUE,
                              "run.working_dir \"%s\" must be a clean relative path to the project "
                              "directory (for example \".\")",
                              tg_tauyaml_qv(&q, f->working_dir));
    if (!f->entrypoint)
        return;
    if (!tg_tauyaml_path_clean_rel(f->entrypoint) || strcmp(f->entrypoint, ".") == 0) {
        tg_tauyaml_diag_error(d, f->entrypoint_path, TG_AT_VALUE,
                              "%s \"%s\" must be a clean relative path to a file (no \"..\")",
                              f->entrypoint_path, tg_tauyaml_qv(&q, f->entrypoint));
        return;
    }
    if (f->is_ray && f->working_dir && strcmp(tg_tauyaml_ext(f->entrypoint), ".py") != 0)
        tg_tauyaml_diag_error(d, f->entrypoint_path, TG_AT_VALUE,
                              "with run.working_dir the entrypoint must be a .py file inside the "
                              "project (it runs as python3 -m <module>); got \"%s\"",
                              tg_tauyaml_qv(&q, f->entrypoint));
    if (f->is_ray && !f->working_dir && strchr(f->entrypoint, '/'))
        tg_tauyaml_diag_error(d, f->entrypoint_path, TG_AT_VALUE,
                              "%s \"%s\" must be a single file name; set run.working_dir to ship a "
                              "project directory",
                              f->entrypoint_path, tg_tauyaml_qv(&q, f->entrypoint));
}

void tg_tauyaml_semantic_check(const json_t *root, const tg_tauyaml_facts_t *f,
                               const tg_tauyaml_limits_t *limits, tg_tauyaml_diag_t *diag)
{
    sm_identity(root, f, diag);
    sm_engine_scope(root, f, diag);
    sm_launcher(root, f, diag);
    sm_compute(root, f, diag);
    sm_configs(root, f, diag);
    sm_paths(root, f, diag);
    tg_tauyaml_semantic_env(root, f, limits, diag);
    tg_tauyaml_semantic_storage(root, f, diag);
    tg_tauyaml_semantic_policy(root, f, diag);
    tg_tauyaml_semantic_sources(root, f, diag);
}
