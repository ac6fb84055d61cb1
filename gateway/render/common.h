/* Helpers shared by the Job and RayJob renderers: object names, ordered env
 * lists, resources, tolerations, node selectors, volumes, security context,
 * script flags. They write JSON text through the writer in c->w.
 *
 * Everything here is pure and deterministic: object keys of the resolved
 * config are iterated in sorted order, so a resolved config that went through
 * the database (and came back with its keys in another order) renders
 * byte-identically. */
#ifndef TG_RENDER_COMMON_H
#define TG_RENDER_COMMON_H

#include <jansson.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/status.h"
#include "core/json_writer.h"
#include "tauyaml/files.h"
#include "tauyaml/prov.h"

/* Inputs of one rendering. */
typedef struct tg_render_opts_s {
    const char *run_id;       /* label-safe (<= 63, [A-Za-z0-9._-]), required */
    unsigned attempt;         /* 1 for the first submission */
    const char *retry_reason; /* attempt > 1: Preempted | Evicted | OOMKilled | ... */
    const char *config_hash;  /* optional: tg_render_config_hash(resolved), if already known */
} tg_render_opts_t;

/* Everything a renderer needs, decoded once from the resolved config. */
typedef struct tg_render_ctx_s {
    const json_t *rc;              /* resolved config (borrowed) */
    const tg_tauyaml_prov_t *prov; /* provenance (borrowed, may be NULL) */
    /* Sections of rc, looked up once (borrowed; NULL when absent): most
     * fields are read from these, and every lookup hashes its key. */
    const json_t *policy, *runtime, *compute, *storage, *execution, *experiment, *resilience, *run;
    const tg_tauyaml_files_t *files;
    const tg_render_opts_t *opts;
    tg_jw_t *w;       /* output */
    char name[64];    /* object name, <= 47 characters */
    char attempt[24]; /* attempt number as text */
    const char *ns;   /* namespace */
    const char *image;
    const char *launcher;
    const char *entrypoint; /* may be NULL */
    json_int_t gpus;        /* per pod (Job) or per GPU worker (RayJob) */
    const char *gpu_resource;
    const char *gpu_class;
    char config_hash[72]; /* "sha256:<hex>" */
    /* Files whose bytes were just checked against the digests the resolved
     * config records (borrowed from files and rc): the renderers reuse those
     * digests instead of hashing the same bytes again. */
    const tg_tauyaml_file_t *checked[4];
    const char *checked_sha[4];
    size_t nchecked;
    char *err;
    size_t errlen;
} tg_render_ctx_t;

/* The object name for a run attempt: the run id lowercased with anything not
 * [a-z0-9] turned into '-', prefixed with "r" when it does not start with a
 * letter, then "-a<attempt>"; at most 47 characters (KubeRay's RayJob limit;
 * also leaves room for a Job's "-headless" Service), shortened with an
 * 8-hex sha256 suffix of the run id when needed. 0 on success. */
int tg_render_object_name(const char *run_id, unsigned attempt, char *out, size_t n);

/* Lowercase hex sha256 of file f (one of c->files) into hex[65]. */
void tg_render_file_sha256(const tg_render_ctx_t *c, const tg_tauyaml_file_t *f, char hex[65]);

/* Members of a resolved-config section (borrowed; NULL when absent/null). */
const json_t *tg_render_get(const json_t *rc, const char *sect, const char *key);
const char *tg_render_str(const json_t *rc, const char *sect, const char *key);
json_int_t tg_render_int(const json_t *rc, const char *sect, const char *key, json_int_t dflt);
int tg_render_bool(const json_t *rc, const char *sect, const char *key);

/* Sorted keys of an object (borrowed strings) into a new array of n entries
 * (free()); *n receives the count. */
const char **tg_render_sorted_keys(const json_t *obj, size_t *n);

/* An ordered env list. Setting a name that is already present removes the
 * earlier entry, so the last writer wins and platform values set last cannot
 * be overridden. Values passed to _set are copied (into one pool, not one
 * allocation per string). */
#define TG_RENDER_ENV_NONE ((size_t)-1)

typedef struct tg_render_env_ent_s {
    size_t name;  /* offsets into the pool */
    size_t value; /* TG_RENDER_ENV_NONE for a secret reference */
    size_t secret;
    size_t key;
    size_t name_len; /* compared before the bytes when a name is set again */
} tg_render_env_ent_t;

typedef struct tg_render_env_s {
    tg_render_env_ent_t *v;
    size_t n, cap;
    tg_buf_t pool; /* the strings, each NUL-terminated */
} tg_render_env_t;

void tg_render_env_init(tg_render_env_t *e);
void tg_render_env_clean(tg_render_env_t *e);
void tg_render_env_set(tg_render_env_t *e, const char *name, const char *value);
void tg_render_env_set_secret(tg_render_env_t *e, const char *name, const char *secret,
                              const char *key);
/* User env then env_secret, sorted by name. */
void tg_render_env_user(tg_render_env_t *e, const json_t *rc);
/* Run identity (TAU_RUN_ID, ...) and, for attempt > 1, the retry values. */
void tg_render_env_platform(tg_render_env_t *e, const tg_render_ctx_t *c);
/* "env": [...] (nothing when empty). */
void tg_render_k_env(tg_jw_t *w, const tg_render_env_t *e);

/* "resources": {requests, limits} for a role's quantities ("", "head_",
 * "worker_", "cpu_worker_"), with `gpus` of the GPU resource in both, or,
 * when the profile names a DRA claim template, a claim "gpu" instead. */
void tg_render_k_resources(const tg_render_ctx_t *c, const char *prefix, json_int_t gpus);
/* A RayJob spec's "entrypoint", then "rayClusterSpec" and its
 * "headGroupSpec" left open after the head's rayStartParams: a control-only
 * head (no CPUs or GPUs for tasks) with the dashboard on every address. */
void tg_render_k_ray_head_open(tg_jw_t *w, const char *entrypoint);
/* A RayJob spec's submission: created suspended (Kueue admits it), the
 * entrypoint sent over HTTP, the cluster shut down when the job ends and the
 * RayJob kept run.ttl_seconds_after_finished (default 15 s). */
void tg_render_k_ray_submission(const tg_render_ctx_t *c);
/* One entry of "volumeMounts" ("readOnly" only when read_only). */
void tg_render_k_mount(tg_jw_t *w, const char *name, const char *path, int read_only);
/* One emptyDir entry of "volumes" (medium and sizeLimit when not NULL). */
void tg_render_k_empty_dir(tg_jw_t *w, const char *name, const char *medium, const char *size);
/* One persistentVolumeClaim entry of "volumes". */
void tg_render_k_pvc_volume(tg_jw_t *w, const char *name, const char *claim);
/* "volumes" and "volumeMounts" for every pod: optional script emptyDir (at
 * /script, read-only), data (PVC or emptyDir) at /data, tau-hot at /mnt,
 * optional dshm at /dev/shm, extra workspace PVCs. */
void tg_render_k_volumes(const tg_render_ctx_t *c, int script, int dshm);
void tg_render_k_mounts(const tg_render_ctx_t *c, int script, int dshm);
/* The same, leaving the array open for more entries (close it with
 * tg_jw_end_arr). */
void tg_render_k_volumes_open(const tg_render_ctx_t *c, int script, int dshm);
void tg_render_k_mounts_open(const tg_render_ctx_t *c, int script, int dshm);

/* "resources" of a helper init container (a copy or a decode). */
void tg_render_k_small_resources(const tg_render_ctx_t *c);

/* storage.publish: staged. The workload writes to TAU_OUTPUT_STAGING_DIR
 * (pod-local); after a successful command the shell program copies it into
 * TAU_OUTPUT_DIR and writes the marker. */
#define TG_RENDER_STAGING_DIR      "/mnt/tau-staging"
#define TG_RENDER_PUBLISHED_MARKER ".tau-published"
int tg_render_publishes(const tg_render_ctx_t *c);
/* The lines that precede the command: the staging directory exists and a
 * failing command does not end the script. */
tg_rc_e tg_render_publish_head(tg_buf_t *b) TG_MUSTCHECK;
/* The lines that follow the (not exec'd) command: publish on success,
 * exit with the command's status, or with the copy's when publishing
 * fails (no marker is written then). */
tg_rc_e tg_render_publish_tail(tg_buf_t *b) TG_MUSTCHECK;

/* Kueue TAS annotation (key + value) for a worker pod template, when the
 * profile names a Kueue topology and the spec a placement. */
void tg_render_topology_annotation(const tg_render_ctx_t *c);

/* execution.configs as CLI flags ("--k=v", bare "--k" for ""), sorted by
 * key, as array elements. Returns how many were written. */
size_t tg_render_config_flags(tg_jw_t *w, const json_t *configs);

/* Canonical JSON text (core/json_canon.h; reals with 15 significant digits, so
 * user-written decimals read back as written). Caller frees. */
char *tg_render_json_text(const json_t *v);

/* Write a message into c->err. */
void tg_render_fail(tg_render_ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "a" + "b" (+ "c") into out[n] without printf; returns out. */
const char *tg_render_cat(char *out, size_t n, const char *a, const char *b, const char *c);

/* v in decimal into out[24] without printf (as "%" JSON_INTEGER_FORMAT
 * writes it); returns out. */
const char *tg_render_int_text(char out[24], json_int_t v);

#endif
