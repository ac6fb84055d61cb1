/* TauGrid managed workflow manifests: detection, checks, resolution. */
#include "tauyaml/managed.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tauyaml/managed_sizing.h"
#include "tauyaml/path.h"
#include "tauyaml/semantic_env.h"
#include "tauyaml/suggest.h"
#include "tauyaml/units.h"
#include "tauyaml/validate.h"

#define MG_MAX_RESOURCE_NAME 63
#define MG_MAX_RAYJOB_NAME   47
#define MG_RDMA_DEFAULT      "rdma/rdma_shared_device_a"

/* The direct config sections a managed manifest shares with it, typed as
 * there (TauGrid's managedConfigProjection). */
static const char *const mg_shared_sections[] = {"policy",    "experiment", "resilience",
                                                 "execution", "metrics",    NULL};

static const char *mg_str(const json_t *o, const char *sect, const char *key)
{
    return tg_tauyaml_get_str(o, sect, key);
}

int tg_tauyaml_managed_detect(const json_t *root)
{
    const json_t *sv = tg_tauyaml_get(root, NULL, "schema_version");
    if (!sv || json_is_null(sv))
        return 0;
    /* a non-string engine (engine: 5) is text for yaml.v3's string field */
    const json_t *e1 = tg_tauyaml_get(root, "run", "engine"),
                 *e2 = tg_tauyaml_get(root, NULL, "engine");
    int e1set = e1 && !json_is_null(e1) &&
                (!json_is_string(e1) || tg_tauyaml_nonblank(json_string_value(e1)));
    int e2set = e2 && !json_is_null(e2) &&
                (!json_is_string(e2) || tg_tauyaml_nonblank(json_string_value(e2)));
    return !e1set && !e2set;
}

const tg_tauyaml_file_t *tg_tauyaml_managed_file(const tg_tauyaml_files_t *files, const char *path)
{
    const tg_tauyaml_file_t *f = tg_tauyaml_files_find(files, path);
    if (f)
        return f;
    const char *base = strrchr(path, '/');
    return base && base[1] ? tg_tauyaml_files_find(files, base + 1) : NULL;
}

/* TauGrid's workload kind of a manifest: job, rayjob, or rayjob-eval; NULL
 * for anything else. Unset: rayjob-eval for an eval shape, rayjob when
 * multi-node, else job. */
static const char *mg_kind(const json_t *root, const char *raw, json_int_t workers, int eval)
{
    char b[32];
    size_t n = 0;
    if (tg_tauyaml_nonblank(raw)) {
        while (isspace((unsigned char)*raw))
            raw++;
        for (; *raw && !isspace((unsigned char)*raw) && n + 1 < sizeof(b); raw++)
            b[n++] = (char)tolower((unsigned char)*raw);
        b[n] = '\0';
        if (strcmp(b, "job") == 0)
            return "job";
        if (strcmp(b, "rayjob") == 0 || strcmp(b, "ray") == 0 || strcmp(b, "ray-train") == 0 ||
            strcmp(b, "ray_train") == 0)
            return "rayjob";
        if (strcmp(b, "rayjob-eval") == 0)
            return "rayjob-eval";
        return NULL;
    }
    (void)root;
    return eval ? "rayjob-eval" : workers > 1 ? "rayjob" : "job";
}

/* The removed eval feature, refused before anything else as TauGrid does
 * (rejectRemovedEvalFields): task: eval, run.task: eval, eval.harness,
 * eval.model. An eval block with other keys is the manifest's own. */
static int mg_removed_eval(const json_t *root, tg_tauyaml_diag_t *d)
{
    const char *task = mg_str(root, "run", "task");
    const char *where = "run.task";
    if (!tg_tauyaml_nonblank(task)) {
        task = mg_str(root, NULL, "task");
        where = "task";
    }
    char b[16];
    size_t n = 0;
    if (task) {
        while (isspace((unsigned char)*task))
            task++;
        for (; *task && n + 1 < sizeof(b); task++)
            b[n++] = (char)tolower((unsigned char)*task);
        while (n > 0 && isspace((unsigned char)b[n - 1]))
            n--;
    }
    b[n] = '\0';
    const json_t *ev = tg_tauyaml_get(root, NULL, "eval");
    int harness = json_is_object(ev) && json_object_get(ev, "harness");
    int model = json_is_object(ev) && json_object_get(ev, "model");
    if (strcmp(b, "eval") != 0 && !harness && !model)
        return 0;
    tg_tauyaml_diag_error(
        d,
        strcmp(b, "eval") == 0 ? where
        : harness              ? "eval.harness"
                               : "eval.model",
        TG_AT_KEY,
        "task: eval, eval.harness, and eval.model were removed; evaluation is an "
        "ordinary run. Drop task/eval.harness/eval.model from the config, keep "
        "engine: job, and pass the checkpoint and results paths to your image "
        "through runtime.env (for example MODEL_PATH: /data/checkpoints/my-7b, "
        "RESULTS_PATH: /data/evals/mmlu.json); keep storage.output pointing at the "
        "same results path so the results can be retrieved");
    return 1;
}

static int mg_c_identifier(const char *s)
{
    if (!*s || isdigit((unsigned char)*s))
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

/* runtime.env: TauGrid's envspec list of {name, value} or {name,
 * valueFrom: {secretKeyRef: {name, key}}}. */
static void mg_env(const json_t *root, tg_tauyaml_diag_t *d)
{
    const json_t *env = tg_tauyaml_get(root, "runtime", "env");
    if (!env || json_is_null(env))
        return;
    if (!json_is_array(env)) {
        tg_tauyaml_diag_error(d, "runtime.env", TG_AT_VALUE,
                              "runtime.env in a managed manifest is a list of {name, value} or "
                              "{name, valueFrom: {secretKeyRef: {name, key}}}");
        return;
    }
    size_t i, total = 0;
    const json_t *e;
    tg_tauyaml_qv_t q;
    json_array_foreach(env, i, e) {
        char path[48];
        snprintf(path, sizeof(path), "runtime.env[%zu]", i);
        const char *name = json_string_value(json_object_get(e, "name"));
        const json_t *val = json_object_get(e, "value");
        const json_t *ref = tg_tauyaml_get(json_object_get(e, "valueFrom"), NULL, "secretKeyRef");
        if (!json_is_object(e) || !name || !mg_c_identifier(name)) {
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "%s needs a name that is a C identifier (letters, digits, '_')",
                                  path);
            continue;
        }
        for (size_t j = 0; j < i; j++)
            if (json_equal(json_object_get(json_array_get(env, j), "name"),
                           json_object_get(e, "name")))
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "runtime.env lists \"%s\" twice",
                                      tg_tauyaml_qv(&q, name));
        if (ref) {
            if (!json_is_string(json_object_get(ref, "name")) ||
                !json_is_string(json_object_get(ref, "key")))
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                      "%s.valueFrom.secretKeyRef needs name and key", path);
        } else if (val && !json_is_string(val) && !json_is_null(val)) {
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "%s.value must be a string", path);
        } else {
            total += strlen(name) + 2 + json_string_length(val);
        }
    }
    if (total > 128 * 1024)
        tg_tauyaml_diag_error(d, "runtime.env", TG_AT_KEY,
                              "literal environment payload is %zu bytes; maximum is %d bytes",
                              total, 128 * 1024);
}

static void mg_storage(const json_t *root, tg_tauyaml_diag_t *d)
{
    const json_t *mounts = tg_tauyaml_get(root, "storage", "mounts");
    static const char *const rnames[] = {"script", "manifest", "data", "tau-hot", "dshm"};
    static const char *const rpaths[] = {"/script", "/manifest", "/data", "/mnt", "/dev/shm"};
    size_t i;
    const json_t *m;
    tg_tauyaml_qv_t q;
    if (mounts && !json_is_null(mounts) && !json_is_array(mounts)) {
        tg_tauyaml_diag_error(d, "storage.mounts", TG_AT_VALUE,
                              "storage.mounts in a managed manifest is a list of {name, mountPath, "
                              "pvc, readOnly}");
        return;
    }
    json_array_foreach(mounts, i, m) {
        char path[48];
        snprintf(path, sizeof(path), "storage.mounts[%zu]", i);
        const char *name = json_string_value(json_object_get(m, "name"));
        const char *mp = json_string_value(json_object_get(m, "mountPath"));
        const char *pvc = json_string_value(json_object_get(m, "pvc"));
        int bad = !name || !*name ||
                  strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
                               "UVWXYZ0123456789._-") != strlen(name) ||
                  strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
        if (bad) {
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "%s.name: invalid volume name \"%s\"", path,
                                  tg_tauyaml_qv(&q, name ? name : ""));
            continue;
        }
        for (size_t k = 0; k < TG_ARRAY_LEN(rnames); k++)
            if (strcmp(name, rnames[k]) == 0)
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "%s.name: \"%s\" is reserved by Tau",
                                      path, name);
        if (!mp || mp[0] != '/') {
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "%s.mountPath: must be an absolute pod path", path);
        } else {
            for (size_t k = 0; k < TG_ARRAY_LEN(rpaths); k++)
                if (strcmp(mp, rpaths[k]) == 0)
                    tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                          "%s.mountPath: \"%s\" is reserved by Tau", path, mp);
        }
        for (size_t j = 0; j < i; j++) {
            const json_t *o = json_array_get(mounts, j);
            if (json_equal(json_object_get(o, "name"), json_object_get(m, "name")))
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "%s.name: duplicate volume name \"%s\"",
                                      path, tg_tauyaml_qv(&q, name));
            if (mp && json_equal(json_object_get(o, "mountPath"), json_object_get(m, "mountPath")))
                tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                      "%s.mountPath: duplicate mount path \"%s\"", path,
                                      tg_tauyaml_qv(&q, mp));
        }
        if (!tg_tauyaml_nonblank(pvc))
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "%s.pvc: required", path);
    }
    const char *ck = mg_str(root, "artifacts", "checkpoint");
    if (ck) {
        int bad = !tg_tauyaml_nonblank(ck) || ck[0] == '/';
        for (const char *seg = ck; !bad;) {
            const char *sl = strchr(seg, '/');
            size_t sn = sl ? (size_t)(sl - seg) : strlen(seg);
            bad = sn == 0 || (sn == 1 && seg[0] == '.') ||
                  (sn == 2 && seg[0] == '.' && seg[1] == '.');
            if (!sl)
                break;
            seg = sl + 1;
        }
        if (bad)
            tg_tauyaml_diag_error(
                d, "artifacts.checkpoint", TG_AT_VALUE,
                "artifacts.checkpoint: must be a relative pod path without '.' or "
                "'..' segments (got \"%s\")",
                tg_tauyaml_qv(&q, ck));
    }
}

/* Fields TauGrid refuses, or taugate cannot serve, in a managed manifest. */
static void mg_refusals(const json_t *root, tg_tauyaml_diag_t *d)
{
    static const struct {
        const char *sect, *key, *msg;
    } no[] = {
        {"storage", "publish", "storage.publish is not supported for managed workflow configs"},
        {"run", "source",
         "run.source requires direct Job dispatch and cannot be used with workflow.file"},
        {"storage", "image_assets",
         "storage.image_assets requires direct Job dispatch and cannot be used with workflow.file"},
        {"run", "ttl_seconds_after_finished",
         "run.ttl_seconds_after_finished requires direct Job dispatch and cannot be used with "
         "workflow.file"},
        {"runtime", "working_dir",
         "runtime.working_dir requires direct Job dispatch and cannot be used with workflow.file"},
        {"policy", "clear_node_selector",
         "policy.clear_node_selector requires native job dispatch; managed workflow dispatch "
         "cannot clear profile/topology node selectors"},
        {"workflow", "file",
         "workflow.file names a manifest in another file, which the gateway cannot read: submit "
         "that manifest itself as the tau.yaml"},
        {"runtime", "env_kv",
         "runtime.env_kv needs a Key Vault, an Entra tenant and a workload identity client ID "
         "that TauGrid's CLI takes from its command line; taugate has none of them: use "
         "runtime.env with valueFrom.secretKeyRef and a Kubernetes Secret in the workspace "
         "namespace"},
        {NULL, "profiler",
         "the Nsight profiler wrapper (nsys/ncu) needs TauGrid's in-pod profiler runtime, which "
         "taugate does not ship; run nsys from the trainer instead"},
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(no); i++) {
        const json_t *v = tg_tauyaml_get(root, no[i].sect, no[i].key);
        if (!v || json_is_null(v) ||
            (json_is_string(v) && !tg_tauyaml_nonblank(json_string_value(v))) ||
            (json_is_object(v) && json_object_size(v) == 0) ||
            (json_is_array(v) && json_array_size(v) == 0) || json_is_false(v))
            continue;
        char path[64];
        snprintf(path, sizeof(path), "%s%s%s", no[i].sect ? no[i].sect : "", no[i].sect ? "." : "",
                 no[i].key);
        tg_tauyaml_diag_error(d, path, TG_AT_KEY, "%s", no[i].msg);
    }
    if (tg_tauyaml_get(root, "runtime", "env_secret"))
        tg_tauyaml_diag_warn(d, "runtime.env_secret", TG_AT_KEY,
                             "runtime.env_secret is not read from a managed manifest (TauGrid's "
                             "manifest renderer ignores it); use runtime.env with "
                             "valueFrom.secretKeyRef");
}

static void mg_files(const json_t *root, tg_tauyaml_facts_t *f, const tg_tauyaml_files_t *files,
                     tg_tauyaml_diag_t *d)
{
    tg_tauyaml_qv_t q;
    if (!f->entrypoint) {
        tg_tauyaml_diag_error(d, "run", TG_AT_KEY,
                              "a managed manifest needs its trainer: set run.entrypoint (tau ships "
                              "no fallback trainer)");
    } else if (!tg_tauyaml_managed_file(files, f->entrypoint)) {
        tg_tauyaml_diag_error(d, f->entrypoint_path, TG_AT_VALUE,
                              "%s \"%s\" was not among the submitted files; send the trainer with "
                              "the manifest (by that name or its base name)",
                              f->entrypoint_path, tg_tauyaml_qv(&q, f->entrypoint));
    }
    const json_t *extra = tg_tauyaml_get(root, "workflow", "extra_scripts");
    size_t i;
    const json_t *x;
    json_array_foreach(extra, i, x) {
        char path[64];
        snprintf(path, sizeof(path), "workflow.extra_scripts[%zu]", i);
        const char *spec = json_string_value(x);
        char src[512];
        const char *colon = spec ? strrchr(spec, ':') : NULL;
        size_t sl = colon ? (size_t)(colon - spec) : spec ? strlen(spec) : 0;
        const char *dest = colon ? colon + 1 : NULL;
        if (!spec || sl == 0 || sl >= sizeof(src)) {
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "%s must be SRC or SRC:DEST", path);
            continue;
        }
        memcpy(src, spec, sl);
        src[sl] = '\0';
        if (dest &&
            (!*dest || strchr(dest, '/') || strcmp(dest, ".") == 0 || strcmp(dest, "..") == 0))
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "%s: DEST must be a single filename mounted under /script", path);
        else if (strcmp(dest ? dest : "", "train.py") == 0)
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "extra script \"train.py\" collides with the trainer");
        if (!tg_tauyaml_managed_file(files, src))
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE,
                                  "extra script \"%s\" was not among the submitted files",
                                  tg_tauyaml_qv(&q, src));
    }
}

void tg_tauyaml_managed_check(const tg_tauyaml_schema_t *schema, json_t *root,
                              const tg_tauyaml_files_t *files, tg_tauyaml_facts_t *f,
                              tg_tauyaml_diag_t *d)
{
    tg_tauyaml_qv_t q;
    tg_tauyaml_facts_collect(root, f);
    f->managed = 1;
    if (mg_removed_eval(root, d))
        return;
    tg_tauyaml_suggest_unknown_keys(schema, root, d);
    tg_tauyaml_validate_sections(schema, root, mg_shared_sections, d);
    const json_t *sv = tg_tauyaml_get(root, NULL, "schema_version");
    if (!json_is_integer(sv) || json_integer_value(sv) != 1)
        tg_tauyaml_diag_error(d, "schema_version", TG_AT_VALUE,
                              "schema_version: want 1 (a managed workflow manifest), got %s",
                              json_is_integer(sv) ? "another number" : "a value that is not 1");
    /* identity */
    const char *name = mg_str(root, NULL, "name");
    f->name = name;
    f->name_path = "name";
    if (!tg_tauyaml_nonblank(name))
        tg_tauyaml_diag_error(d, "", TG_AT_KEY, "name: required (kebab-case)");
    else if (!tg_tauyaml_dns_label(name, 63))
        tg_tauyaml_diag_error(d, "name", TG_AT_VALUE,
                              "name: \"%s\" is invalid (use lowercase alphanumerics with internal "
                              "hyphens)",
                              tg_tauyaml_qv(&q, name));
    const char *prefix = mg_str(root, "resource_naming", "prefix");
    if (!tg_tauyaml_nonblank(prefix))
        prefix = "tau";
    else if (!tg_tauyaml_dns_label(prefix, 63))
        tg_tauyaml_diag_error(
            d, "resource_naming.prefix", TG_AT_VALUE,
            "resource_naming.prefix: \"%s\" is invalid (use lowercase alphanumerics "
            "with internal hyphens)",
            tg_tauyaml_qv(&q, prefix));
    size_t rlen = strlen(prefix) + 1 + (name ? strlen(name) : 0);
    if (name && rlen > MG_MAX_RESOURCE_NAME)
        tg_tauyaml_diag_error(
            d, "name", TG_AT_VALUE,
            "resource name \"%s-%s\" is too long (%zu chars; Kubernetes name limit "
            "is %d)",
            prefix, tg_tauyaml_qv(&q, name), rlen, MG_MAX_RESOURCE_NAME);
    /* compute and kind */
    json_int_t cpu_workers = 0;
    tg_tauyaml_managed_int(root, "eval", "cpu_workers", &cpu_workers, d);
    if (cpu_workers < 0)
        tg_tauyaml_diag_error(d, "eval.cpu_workers", TG_AT_VALUE,
                              "eval.cpu_workers: want >= 0, got %" JSON_INTEGER_FORMAT,
                              cpu_workers);
    int eval = cpu_workers > 0 || tg_tauyaml_nonblank(mg_str(root, "eval", "upstream"));
    tg_tauyaml_mcompute_t c;
    tg_tauyaml_managed_compute(root, eval, &c, d);
    const char *raw = mg_str(root, "workflow", "workload_kind");
    const char *kind_path = "workflow.workload_kind";
    if (!tg_tauyaml_nonblank(raw)) {
        raw = mg_str(root, "run", "workload_kind");
        kind_path = "run.workload_kind";
    }
    if (!tg_tauyaml_nonblank(raw)) {
        raw = mg_str(root, "compute", "workload_kind");
        kind_path = "compute.workload_kind";
    }
    const char *kind = mg_kind(root, raw, c.workers, eval);
    if (!kind) {
        tg_tauyaml_diag_error(d, kind_path, TG_AT_VALUE,
                              "workload kind \"%s\" is not supported (use \"job\", \"rayjob\", or "
                              "\"rayjob-eval\")",
                              tg_tauyaml_qv(&q, raw));
    } else if (strcmp(kind, "rayjob-eval") == 0) {
        /* TauGrid's guards before its eval template (manifest.Render); an
         * eval shape with compute.gpus=0 is refused by the sizing already */
        if (c.gpus <= 0 && !eval)
            tg_tauyaml_diag_error(d, kind_path, TG_AT_VALUE,
                                  "workload kind \"rayjob-eval\" requires compute.gpus > 0 for the "
                                  "eval GPU worker; use workload_kind: rayjob for CPU-only work");
        else if (cpu_workers <= 0)
            tg_tauyaml_diag_error(
                d, tg_tauyaml_get(root, NULL, "eval") ? "eval" : kind_path, TG_AT_VALUE,
                "workload kind \"rayjob-eval\" requires eval.cpu_workers > 0 in "
                "the manifest; the eval RayJob shape is a system head, 1 GPU actor "
                "worker, and N CPU worker pods");
        else if (c.workers > 1)
            tg_tauyaml_diag_error(d, "compute.workers", TG_AT_VALUE,
                                  "workload kind \"rayjob-eval\" cannot be multi-node "
                                  "(compute.workers=%" JSON_INTEGER_FORMAT
                                  "); eval has one GPU actor worker plus CPU-worker fanout",
                                  c.workers);
    } else if (strcmp(kind, "job") == 0 && c.workers > 1) {
        tg_tauyaml_diag_error(
            d, "compute.workers", TG_AT_VALUE,
            "workload kind \"job\" cannot be multi-node (compute.workers=%" JSON_INTEGER_FORMAT
            "); use workload_kind: rayjob or omit it",
            c.workers);
    } else if (eval) {
        tg_tauyaml_diag_error(d, "eval", TG_AT_KEY,
                              "workload kind \"%s\" cannot serve eval manifests (eval.cpu_workers, "
                              "eval.upstream); use workload_kind: rayjob-eval",
                              kind);
    }
    f->engine = kind && strcmp(kind, "job") == 0 ? "job" : kind ? "rayjob" : NULL;
    f->engine_inferred = 1;
    f->is_job = f->engine && strcmp(f->engine, "job") == 0;
    f->is_ray = f->engine && strcmp(f->engine, "rayjob") == 0;
    f->launcher = f->is_ray ? "ray-train" : "python";
    f->launcher_explicit = 0;
    f->gpus = f->gpus_per_worker = c.gpus;
    f->workers = c.workers;
    f->nodes = f->ppn = 1;
    f->working_dir = NULL;
    if (f->is_ray && name && rlen > MG_MAX_RAYJOB_NAME)
        tg_tauyaml_diag_error(d, "name", TG_AT_VALUE,
                              "RayJob name \"%s-%s\" is too long (%zu chars; KubeRay limit is %d); "
                              "shorten name or resource_naming.prefix",
                              prefix, tg_tauyaml_qv(&q, name), rlen, MG_MAX_RAYJOB_NAME);
    /* the trainer: run.main_script, workflow.main_script/script, else the entrypoint */
    static const struct {
        const char *sect, *key, *path;
    } trainer[] = {{"run", "main_script", "run.main_script"},
                   {"workflow", "main_script", "workflow.main_script"},
                   {"workflow", "script", "workflow.script"}};
    for (size_t i = 0; i < TG_ARRAY_LEN(trainer); i++) {
        const char *v = mg_str(root, trainer[i].sect, trainer[i].key);
        if (tg_tauyaml_nonblank(v)) {
            f->entrypoint = v;
            f->entrypoint_path = trainer[i].path;
            break;
        }
    }
    /* runtime */
    const json_t *pip = tg_tauyaml_get(root, "runtime", "pip");
    if (json_array_size(pip) == 0)
        tg_tauyaml_diag_error(d, "runtime", TG_AT_KEY,
                              "runtime.pip: required (declare the per-pod Python environment your "
                              "trainer needs; tau ships no default), for example runtime: {pip: "
                              "[torch==2.4.0, transformers]}");
    size_t i;
    const json_t *p;
    json_array_foreach(pip, i, p) {
        char path[48];
        snprintf(path, sizeof(path), "runtime.pip[%zu]", i);
        if (!json_is_string(p) || !tg_tauyaml_nonblank(json_string_value(p)))
            tg_tauyaml_diag_error(d, path, TG_AT_VALUE, "runtime.pip[%zu]: blank entry", i);
    }
    f->image = tg_tauyaml_nonblank(mg_str(root, "runtime", "image"))
                   ? mg_str(root, "runtime", "image")
                   : NULL;
    f->image_path = f->image ? "runtime.image" : NULL;
    if (f->is_ray && c.gpus == 0 && !f->image)
        tg_tauyaml_diag_error(
            d, "runtime", TG_AT_KEY,
            "workload kind \"rayjob\" with compute.gpus=0 requires runtime.image; "
            "CPU RayJobs do not have a stable default image");
    const json_t *rdma = tg_tauyaml_get(root, "runtime", "rdma");
    if (json_is_object(rdma)) {
        const char *rn = json_string_value(json_object_get(rdma, "resource_name"));
        if (rn && (strchr(rn, '/') == NULL || isspace((unsigned char)rn[0])))
            tg_tauyaml_diag_error(d, "runtime.rdma.resource_name", TG_AT_VALUE,
                                  "runtime.rdma.resource_name: \"%s\" is invalid (want an extended "
                                  "resource name like \"" MG_RDMA_DEFAULT "\")",
                                  tg_tauyaml_qv(&q, rn));
        const json_t *cnt = json_object_get(rdma, "count");
        if (cnt && (!json_is_integer(cnt) || json_integer_value(cnt) < 1))
            tg_tauyaml_diag_error(d, "runtime.rdma.count", TG_AT_VALUE,
                                  "runtime.rdma.count: want >= 1 when set");
    }
    mg_env(root, d);
    mg_storage(root, d);
    mg_refusals(root, d);
    mg_files(root, f, files, d);
    /* the policy and execution sections are the direct config's */
    tg_tauyaml_semantic_policy(root, f, d);
}

/* The manifest as the trainer reads it at /manifest/<name>.yaml: the text
 * submitted, or, when runtime.env names Secrets, the document with their
 * names and keys redacted (as JSON, which YAML readers take as well). */
static json_t *mg_manifest_text(const json_t *root, const char *yaml, size_t len)
{
    const json_t *env = tg_tauyaml_get(root, "runtime", "env");
    int refs = 0;
    size_t i;
    const json_t *e;
    json_array_foreach(env, i, e)
        refs |= tg_tauyaml_get(json_object_get(e, "valueFrom"), NULL, "secretKeyRef") != NULL;
    if (!refs)
        return json_stringn(yaml ? yaml : "", yaml ? len : 0);
    json_t *copy = json_deep_copy(root);
    json_t *cenv = json_object_get(json_object_get(copy, "runtime"), "env");
    json_array_foreach(cenv, i, e) {
        json_t *ref = json_object_get(json_object_get(e, "valueFrom"), "secretKeyRef");
        if (json_is_object(ref)) {
            json_object_set_new(ref, "name", json_string("<redacted>"));
            json_object_set_new(ref, "key", json_string("<redacted>"));
        }
    }
    char *text = json_dumps(copy, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_t *out = json_string(text ? text : "{}");
    free(text);
    json_decref(copy);
    return out;
}

json_t *tg_tauyaml_managed_section(const json_t *root, const tg_tauyaml_facts_t *f,
                                   const tg_tauyaml_files_t *files, const char *yaml,
                                   size_t yaml_len)
{
    tg_tauyaml_diag_t scratch;
    tg_tauyaml_diag_init(&scratch, NULL, 1000);
    /* the check refused an eval shape under any kind but rayjob-eval */
    json_int_t cpu_workers = 0;
    tg_tauyaml_managed_int(root, "eval", "cpu_workers", &cpu_workers, &scratch);
    int eval = cpu_workers > 0 || tg_tauyaml_nonblank(mg_str(root, "eval", "upstream"));
    tg_tauyaml_mcompute_t c;
    tg_tauyaml_managed_compute(root, eval, &c, &scratch);
    json_t *m = json_object();
    const char *prefix = mg_str(root, "resource_naming", "prefix");
    char rname[160];
    snprintf(rname, sizeof(rname), "%s-%s", tg_tauyaml_nonblank(prefix) ? prefix : "tau", f->name);
    json_object_set_new(m, "template",
                        json_string(f->is_job    ? "job"
                                    : eval       ? "rayjob-eval"
                                    : c.gpus > 0 ? "rayjob"
                                                 : "rayjob-cpu"));
    if (eval) {
        const char *up = mg_str(root, "workflow", "upstream_checkpoint");
        json_object_set_new(m, "cpu_workers", json_integer(cpu_workers));
        json_object_set_new(m, "upstream_checkpoint", json_string(up ? up : ""));
    }
    json_object_set_new(m, "resource_name", json_string(rname));
    char mname[128];
    snprintf(mname, sizeof(mname), "%s.yaml", f->name);
    json_object_set_new(
        m, "manifest",
        json_pack("{s:s, s:o}", "name", mname, "text", mg_manifest_text(root, yaml, yaml_len)));
    const tg_tauyaml_file_t *trainer = tg_tauyaml_managed_file(files, f->entrypoint);
    json_object_set_new(m, "main_script", json_string(trainer ? trainer->name : f->entrypoint));
    json_t *extra = json_array();
    size_t i;
    const json_t *x;
    json_array_foreach(tg_tauyaml_get(root, "workflow", "extra_scripts"), i, x) {
        const char *spec = json_string_value(x);
        const char *colon = spec ? strrchr(spec, ':') : NULL;
        char src[512];
        size_t sl = colon ? (size_t)(colon - spec) : spec ? strlen(spec) : 0;
        if (!spec || sl >= sizeof(src))
            continue;
        memcpy(src, spec, sl);
        src[sl] = '\0';
        const tg_tauyaml_file_t *fl = tg_tauyaml_managed_file(files, src);
        const char *base = strrchr(src, '/');
        json_array_append_new(extra, json_pack("{s:s, s:s}", "file", fl ? fl->name : src, "name",
                                               colon  ? colon + 1
                                               : base ? base + 1
                                                      : src));
    }
    json_object_set_new(m, "extra_scripts", extra);
    json_int_t smoke = 0;
    tg_tauyaml_managed_int(root, "workflow", "smoke_pairs", &smoke, &scratch);
    if (!smoke)
        tg_tauyaml_managed_int(root, "run", "smoke_pairs", &smoke, &scratch);
    json_object_set_new(m, "smoke_pairs", json_integer(smoke));
    json_object_set_new(m, "gpus", json_integer(c.gpus));
    json_object_set_new(m, "workers", json_integer(c.workers));
    json_object_set_new(m, "sizing",
                        json_pack("{s:o, s:o, s:o}", "control",
                                  tg_tauyaml_managed_sizing_json(&c.control), "head",
                                  tg_tauyaml_managed_sizing_json(&c.head), "worker",
                                  tg_tauyaml_managed_sizing_json(&c.worker)));
    json_t *pip = json_array();
    json_array_foreach(tg_tauyaml_get(root, "runtime", "pip"), i, x)
        json_array_append_new(pip, json_string(json_string_value(x)));
    json_object_set_new(m, "pip", pip);
    json_t *env = json_array();
    json_array_foreach(tg_tauyaml_get(root, "runtime", "env"), i, x) {
        const char *n = json_string_value(json_object_get(x, "name"));
        const json_t *ref = tg_tauyaml_get(json_object_get(x, "valueFrom"), NULL, "secretKeyRef");
        if (!n)
            continue;
        if (ref)
            json_array_append_new(env,
                                  json_pack("{s:s, s:s, s:s}", "name", n, "secret",
                                            json_string_value(json_object_get(ref, "name")), "key",
                                            json_string_value(json_object_get(ref, "key"))));
        else
            json_array_append_new(env,
                                  json_pack("{s:s, s:s}", "name", n, "value",
                                            json_string_value(json_object_get(x, "value"))
                                                ? json_string_value(json_object_get(x, "value"))
                                                : ""));
    }
    json_object_set_new(m, "env", env);
    json_t *mounts = json_array();
    json_array_foreach(tg_tauyaml_get(root, "storage", "mounts"), i, x)
        json_array_append_new(mounts,
                              json_pack("{s:s, s:s, s:s, s:b}", "name",
                                        json_string_value(json_object_get(x, "name")), "path",
                                        json_string_value(json_object_get(x, "mountPath")), "pvc",
                                        json_string_value(json_object_get(x, "pvc")), "read_only",
                                        json_is_true(json_object_get(x, "readOnly"))));
    json_object_set_new(m, "mounts", mounts);
    const json_t *rdma = tg_tauyaml_get(root, "runtime", "rdma");
    if (json_is_true(json_object_get(rdma, "enabled"))) {
        const char *rn = json_string_value(json_object_get(rdma, "resource_name"));
        const json_t *cnt = json_object_get(rdma, "count");
        json_object_set_new(
            m, "rdma",
            json_pack("{s:s, s:I}", "resource_name", tg_tauyaml_nonblank(rn) ? rn : MG_RDMA_DEFAULT,
                      "count", json_is_integer(cnt) ? json_integer_value(cnt) : (json_int_t)1));
    } else {
        json_object_set_new(m, "rdma", json_null());
    }
    const char *ck = mg_str(root, "artifacts", "checkpoint");
    json_object_set_new(m, "checkpoint_artifact",
                        tg_tauyaml_nonblank(ck) ? json_string(ck) : json_null());
    const char *exp = mg_str(root, "research", "experiment");
    json_object_set_new(m, "experiment", tg_tauyaml_nonblank(exp) ? json_string(exp) : json_null());
    tg_tauyaml_diag_clean(&scratch);
    return m;
}
