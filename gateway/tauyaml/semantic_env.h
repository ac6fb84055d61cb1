/* Semantic rules for runtime env, storage/metrics/resilience paths and policy
 * combinations (split from semantic.c to keep modules small). */
#ifndef TG_TAUYAML_SEMANTIC_ENV_H
#define TG_TAUYAML_SEMANTIC_ENV_H

#include <jansson.h>

#include "tauyaml/diag.h"
#include "tauyaml/limits.h"
#include "tauyaml/semantic.h"

/* Reserved keys, C_IDENTIFIER leftovers, env vs env_secret conflicts, sizes. */
void tg_tauyaml_semantic_env(const json_t *root, const tg_tauyaml_facts_t *f,
                             const tg_tauyaml_limits_t *limits, tg_tauyaml_diag_t *diag);
/* storage.*, metrics.history, resilience.* path and duration rules. */
void tg_tauyaml_semantic_storage(const json_t *root, const tg_tauyaml_facts_t *f,
                                 tg_tauyaml_diag_t *diag);
/* priority, gpu_class and node_selector combinations. */
void tg_tauyaml_semantic_policy(const json_t *root, const tg_tauyaml_facts_t *f,
                                tg_tauyaml_diag_t *diag);

/* The experiment id TauGrid derives from a legacy experiment.title (a
 * label value: lowercase alphanumerics, other runs turned into one '-',
 * at most 63) into out[n]. */
void tg_tauyaml_experiment_id_from_title(const char *title, char *out, size_t n);

/* Is `key` reserved (taugate owns it)? Writes the reason into why[n] when so.
 * `allow_nccl` unlocks NCCL_*; `torchrun` reserves JOB_COMPLETION_INDEX. */
int tg_tauyaml_env_reserved(const char *key, int allow_nccl, int torchrun, char *why, size_t n);

#endif
