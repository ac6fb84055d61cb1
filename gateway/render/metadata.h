/* The metadata contract of rendered workloads: taugate's own keys, and next
 * to them TauGrid's (core/workloadmeta), so TauGrid's Portal and `tau run
 * status` on the same cluster see taugate's runs.
 *
 * Labels on the Job/RayJob (and, minus the Kueue ones, on its pods):
 *   kueue.x-k8s.io/queue-name      LocalQueue (Kueue admits by it)
 *   kueue.x-k8s.io/priority-class  WorkloadPriorityClass, when one applies
 *   app.kubernetes.io/managed-by   "taugate"
 *   tau.azure.com/managed-by       "tau" (TauGrid's ownership label)
 *   taugate.io/run-id, tau.azure.com/run-id   the run id (the engine's
 *                                  watches select on taugate.io/run-id)
 *   taugate.io/attempt             attempt number
 *   taugate.io/workspace, tau.azure.com/workspace   workspace name
 *   taugate.io/run-name, tau.azure.com/run          tau.yaml name
 *   tau.azure.com/workload-kind    job | rayjob
 *   taugate.io/ and tau.azure.com/ profile, team, lane, gpu-class (workload
 *   only; when set and label-safe); tau.azure.com/stellar-project,
 *   stellar-experiment, stellar-group (from experiment.*)
 * Pods also carry tau.azure.com/job (the workload object's name) and, for a
 * profile with workload identity and a service account,
 * azure.workload.identity/use: "true".
 * Annotations on the Job/RayJob:
 *   taugate.io/config-hash, tau.azure.com/config-hash   "sha256:<hex>"
 *   taugate.io/provenance          compact JSON: field -> spec|profile|workspace|default
 *   taugate.io/payload-digest, tau.azure.com/payload-digest   over the embedded files
 *   taugate.io/workloadspec-execution, tau.azure.com/...      {"launcher":...}
 *   taugate.io/image, tau.azure.com/image
 *   taugate.io/experiment          compact JSON {project, name, group}, when set
 *   tau.azure.com/ submission-id (run id), workspace-id, namespace,
 *   workload-profile, workload-/pod-priority-class, result-path, result-pvc,
 *   checkpoint-artifact, gpu-count, storage-mounts (JSON list),
 *   stellar-project-value, stellar-experiment-id, stellar-group-value
 *
 * The config hash is sha256 over the canonical JSON text of the resolved
 * config (core/json_canon.h: compact, keys sorted bytewise, UTF-8, reals with 17
 * significant digits), so it survives a database round trip. */
#ifndef TG_RENDER_METADATA_H
#define TG_RENDER_METADATA_H

#include <jansson.h>

#include "render/common.h"

#define TG_LABEL_QUEUE      "kueue.x-k8s.io/queue-name"
#define TG_LABEL_PRIORITY   "kueue.x-k8s.io/priority-class"
#define TG_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"
#define TG_TAU_MANAGED_BY   "tau.azure.com/managed-by"
#define TG_LABEL_RUN_ID     "taugate.io/run-id"
#define TG_LABEL_ATTEMPT    "taugate.io/attempt"
#define TG_LABEL_WORKSPACE  "taugate.io/workspace"
#define TG_LABEL_RUN_NAME   "taugate.io/run-name"
#define TG_ANN_CONFIG_HASH  "taugate.io/config-hash"
#define TG_ANN_PROVENANCE   "taugate.io/provenance"
#define TG_ANN_PAYLOAD      "taugate.io/payload-digest"

/* "sha256:<hex>" of the canonical JSON of `resolved` into out[72]. */
void tg_render_config_hash(const json_t *resolved, char out[72]);

/* The same, appending the canonical JSON it hashed to `text` (a valid JSON
 * text of the resolved config, which a submission stores as it is rather
 * than serialising the tree a second time). On failure `text` is reset and
 * the hash is that of the empty string. */
void tg_render_config_hash_text(const json_t *resolved, char out[72], tg_buf_t *text);

/* The provenance annotation's value: the canonical JSON of a provenance
 * table (`arg`, a tg_tauyaml_prov_t: {"field":"source",...}, fields in byte
 * order, the table's own), escaped as a JSON string's contents, appended to
 * `b`. A tg_jw_fill_fn. */
tg_rc_e tg_render_provenance_text(const void *arg, tg_buf_t *b) TG_MUSTCHECK;

/* "labels": {...} for the workload object (with_kueue=1) or its Service (0). */
void tg_render_k_labels(const tg_render_ctx_t *c, int with_kueue);
/* "labels" for a pod template with `gpus` GPUs per pod: the Service's, plus
 * tau.azure.com/job, the workload identity label, and for GPU pods
 * tau.azure.com/gpu-count and gpu-placement. */
void tg_render_k_pod_labels(const tg_render_ctx_t *c, json_int_t gpus);

/* "annotations": {...} for the workload object. `execution` is the JSON text
 * of taugate.io/workloadspec-execution; `payload_digest` may be NULL. */
void tg_render_k_annotations(const tg_render_ctx_t *c, const char *execution,
                             const char *payload_digest);

/* apiVersion, kind and metadata {name, namespace, labels, annotations} of the
 * workload object, written into the open manifest object. */
void tg_render_k_workload_header(const tg_render_ctx_t *c, const char *api, const char *kind,
                                 const char *execution, const char *payload_digest);
/* The same with more annotations: `extra` is a NULL-terminated list of
 * key, value pairs (empty values are left out). */
void tg_render_k_workload_header_x(const tg_render_ctx_t *c, const char *api, const char *kind,
                                   const char *execution, const char *payload_digest,
                                   const char *const *extra);

#endif
