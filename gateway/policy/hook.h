/* Policy evaluation on a resolved tau.yaml, as the submission pipeline runs it.
 *
 * The pipeline (submit/pipeline.c) resolves a run and then renders it; policy
 * runs in between, on the resolved config, with the spec's positions table
 * at hand so decisions can name a line and column. The caller hands the
 * pipeline a tg_policy_hook_t, which it evaluates with tg_policy_spec_hook:
 *
 *     tg_policy_hook_t ph = {.snapshot = snap, .workspace = ws};
 *     tg_submit_request_t sr = {..., .policy = &ph};
 *     rc = tg_submit_pipeline(schema, &limits, &sr, &out);
 *     json_t *decisions = tg_policy_hook_decisions(&ph);  // for the run's evidence
 *     tg_policy_hook_clean(&ph);
 *
 * Deny violations become pipeline errors (so the run is refused with 422 and
 * every violation listed), warn violations pipeline warnings; both carry
 * "rule_id". When a `default` rule filled values, *resolved is replaced by
 * the patched config and the filled fields' provenance set, so the config
 * hash and the manifests are computed from what policy decided. */
#ifndef TG_POLICY_HOOK_H
#define TG_POLICY_HOOK_H

#include <jansson.h>

#include "core/status.h"
#include "policy/eval.h"
#include "tauyaml/diag.h"
#include "tauyaml/pos.h"

typedef struct tg_policy_hook_s {
    const tg_policy_snapshot_t *snapshot; /* borrowed; the caller holds a reference */
    const char *workspace;                /* the workspace the run is submitted to */
    tg_policy_result_t result;            /* filled by the hook */
    int ran;                              /* the hook ran (the spec resolved cleanly) */
} tg_policy_hook_t;

/* Evaluate the policy on a resolved config. `arg` is a tg_policy_hook_t. *resolved and
 * `provenance` are owned by the pipeline; *resolved may be replaced (the old
 * one released) and `provenance` written to. Errors and warnings are appended to `diag`. Returns
 * TG_OK, or TG_EINTERNAL when the input is unusable (a bug; the pipeline answers 500). */
tg_rc_e tg_policy_spec_hook(void *arg, const tg_tauyaml_pos_t *pos, json_t **resolved,
                            tg_tauyaml_prov_t *provenance, tg_tauyaml_diag_t *diag);

/* The decisions the hook recorded (new reference; [] when it did not run). */
json_t *tg_policy_hook_decisions(const tg_policy_hook_t *h);
/* {"digest", "generation", "decisions"} for evidence (new reference). */
json_t *tg_policy_hook_evidence(const tg_policy_hook_t *h);
void tg_policy_hook_clean(tg_policy_hook_t *h);

/* tg_policy_locate_fn over a tauyaml/pos.h table (`pos` is a const tg_tauyaml_pos_t *). */
int tg_policy_locate_pos(void *pos, const char *spec_path, int want_value, unsigned *line,
                         unsigned *column);

#endif
