/* Helpers shared by the Job and RayJob renderers: object names, ordered env
 * lists, resources, tolerations, volumes, security context, script flags.
 *
 * Everything here is pure and deterministic: object keys are iterated in
 * sorted order, so a resolved config that went through the database (and came
 * back with its keys in another order) renders byte-identically. */
#ifndef TG_RENDER_COMMON_H
#define TG_RENDER_COMMON_H

#include <jansson.h>
#include <stddef.h>

#include "core/status.h"
#include "spec/files.h"

/* Inputs of one rendering. */
typedef struct tg_render_opts_s {
    const char *run_id;       /* label-safe (<= 63, [A-Za-z0-9._-]), required */
    unsigned attempt;         /* 1 for the first submission */
    const char *retry_reason; /* attempt > 1: Preempted | Evicted | OOMKilled | ... */
    const char *config_hash;  /* optional: tg_render_config_hash(resolved), if already known */
} tg_render_opts_t;

/* Everything a renderer needs, decoded once from the resolved config. */
typedef struct tg_render_ctx_s {
    const json_t *rc;          /* resolved config (borrowed) */
    const json_t *prov;        /* provenance (borrowed, may be NULL) */
    const tg_spec_files_t *files;
    const tg_render_opts_t *opts;
    char name[64];             /* object name, <= 47 characters */
    const char *ns;            /* namespace */
    const char *image;
    const char *launcher;
    const char *entrypoint;    /* may be NULL */
    json_int_t gpus;           /* per pod (Job) or per GPU worker (RayJob) */
    const char *gpu_resource;
    const char *gpu_class;
    char config_hash[72];      /* "sha256:<hex>" */
    char *err;
    size_t errlen;
} tg_render_ctx_t;

/* The object name for a run attempt: the run id lowercased with anything not
 * [a-z0-9] turned into '-', prefixed with "r" when it does not start with a
 * letter, then "-a<attempt>"; at most 47 characters (KubeRay's RayJob limit;
 * also leaves room for a Job's "-headless" Service), shortened with an
 * 8-hex sha256 suffix of the run id when needed. 0 on success. */
int tg_render_object_name(const char *run_id, unsigned attempt, char *out, size_t n);

/* Members of a resolved-config section (borrowed; NULL when absent/null). */
const json_t *tg_render_get(const json_t *rc, const char *sect, const char *key);
const char *tg_render_str(const json_t *rc, const char *sect, const char *key);
json_int_t tg_render_int(const json_t *rc, const char *sect, const char *key, json_int_t dflt);
int tg_render_bool(const json_t *rc, const char *sect, const char *key);

/* Sorted keys of an object: a new array of strings (decref it). */
json_t *tg_render_sorted_keys(const json_t *obj);

/* Ordered env list (a JSON array of EnvVar objects). Setting a name that is
 * already present removes the earlier entry, so the last writer wins and
 * platform values set last cannot be overridden. */
void tg_render_env_set(json_t *env, const char *name, const char *value);
void tg_render_env_set_secret(json_t *env, const char *name, const char *secret, const char *key);
/* User env then env_secret, sorted by name. */
void tg_render_env_user(json_t *env, const json_t *rc);
/* Retry values for attempt > 1 and run identity (TAU_RUN_ID, ...). */
void tg_render_env_platform(json_t *env, const tg_render_ctx_t *c);

/* {requests, limits} for a role's quantities ("", "head_", "worker_",
 * "cpu_worker_"), with `gpus` of the GPU resource in both. New reference. */
json_t *tg_render_resources(const tg_render_ctx_t *c, const char *prefix, json_int_t gpus);

/* The two GPU tolerations (sku=gpu, nvidia.com/gpu) appended to `tol`. */
void tg_render_gpu_tolerations(json_t *tol);
/* Profile tolerations (deep copies) appended to `tol`. */
void tg_render_profile_tolerations(json_t *tol, const json_t *rc);

/* Node selector for a pod: profile + policy selectors, plus
 * tau.azure.com/gpu-class when the pod has GPUs and the class is not "any"
 * (unless clear_node_selector). New reference; NULL when empty. */
json_t *tg_render_node_selector(const tg_render_ctx_t *c, int gpu_pod);

/* Volumes and mounts common to every pod: data (PVC or emptyDir) at /data,
 * tau-hot at /mnt, optional dshm at /dev/shm, extra workspace PVCs. */
void tg_render_volumes(const tg_render_ctx_t *c, json_t *volumes, json_t *mounts, int with_dshm);

/* Restricted Pod Security settings, or NULL when runtime.security.mode unset. */
json_t *tg_render_pod_security(const json_t *rc);
json_t *tg_render_container_security(const json_t *rc);

/* Kueue TAS annotations for a worker pod template (into `ann`), when the
 * profile names a Kueue topology and the spec a placement. */
void tg_render_topology_annotations(const json_t *rc, json_t *ann);

/* execution.configs as CLI flags ("--k=v", bare "--k" for ""), sorted by key,
 * appended to `args` (a JSON array). */
void tg_render_config_flags(const json_t *configs, json_t *args);

/* Canonical JSON text (render/canon.h; reals with 15 significant digits, so
 * user-written decimals read back as written). Caller frees. */
char *tg_render_json_text(const json_t *v);

/* Write a message into c->err. */
void tg_render_fail(tg_render_ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
