/* Semantic rules of a tau.yaml that the schema cannot express: identity
 * aliases, engine scope, launcher/engine compatibility, reserved and
 * oversized env, GPU and process counts, quantities, durations, storage and
 * metrics paths, priority and placement combinations. Messages follow
 * TauGrid's wording (reference/taugrid.md section 1.4) where it has one.
 *
 * The rules run on the schema-normalised tree even when the schema found
 * errors, so every getter is type-defensive. */
#ifndef TG_TAUYAML_SEMANTIC_H
#define TG_TAUYAML_SEMANTIC_H

#include <jansson.h>

#include "tauyaml/diag.h"
#include "tauyaml/limits.h"

/* What the spec says once aliases are folded. Strings are borrowed from the
 * tree unless noted; *_path name where the value came from (static strings,
 * NULL for an inferred value). */
typedef struct tg_tauyaml_facts_s {
    const char *name, *name_path;
    const char *engine, *engine_path; /* canonical "job" / "rayjob", or NULL when invalid */
    const char *engine_raw;           /* as written (run.engine or engine), or NULL */
    int engine_inferred;              /* no engine written: inferred as TauGrid infers it */
    const char *workload_kind, *workload_kind_path; /* run/compute.workload_kind as written */
    const char *entrypoint, *entrypoint_path;
    const char *image, *image_path;
    const char *launcher;     /* canonical (lowercase) explicit one, else the engine's default;
                                 points into launcher_buf or a literal */
    const char *launcher_raw; /* execution.launcher as written, or NULL */
    int launcher_explicit;    /* a valid launcher is written */
    char launcher_buf[16];
    const char *working_dir; /* run.working_dir */
    int is_job, is_ray;
    int managed;                /* a TauGrid managed workflow manifest (tauyaml/managed.h) */
    json_int_t gpus;            /* compute.gpus (job) */
    json_int_t gpus_per_worker; /* compute.gpus_per_worker (ray; default 1) */
    json_int_t workers, cpu_workers;
    json_int_t nodes, ppn;
} tg_tauyaml_facts_t;

/* Fold aliases and defaults that later stages share. `root` borrowed. */
void tg_tauyaml_facts_collect(const json_t *root, tg_tauyaml_facts_t *f);

/* Canonical launcher for `s` (case and surrounding blanks ignored, as
 * TauGrid): "python", "torchrun", "ray-train", "ray-tune", or NULL. */
const char *tg_tauyaml_launcher_canon(const char *s);

/* Run every semantic rule; errors/warnings go to `diag`. */
void tg_tauyaml_semantic_check(const json_t *root, const tg_tauyaml_facts_t *f,
                               const tg_tauyaml_limits_t *limits, tg_tauyaml_diag_t *diag);

/* Small typed getters used across the spec modules (all borrowed, NULL/0 when
 * absent or of another type). `sect` may be NULL for top-level keys. */
const json_t *tg_tauyaml_get(const json_t *root, const char *sect, const char *key);

/* While `root` is bound (on this thread), tg_tauyaml_get remembers its sections
 * instead of looking them up again. Bind a tree only while nothing modifies
 * it, and unbind before it is freed. */
void tg_tauyaml_sections_bind(const json_t *root);
void tg_tauyaml_sections_unbind(void);
const char *tg_tauyaml_get_str(const json_t *root, const char *sect, const char *key);
int tg_tauyaml_get_int(const json_t *root, const char *sect, const char *key, json_int_t *out);
int tg_tauyaml_get_bool(const json_t *root, const char *sect, const char *key, int *out);

#endif
