/* Resolution of a validated tau.yaml against its workspace and compute
 * profile, into a complete run config with provenance.
 *
 * Precedence, as TauGrid's: the spec, then the compute profile, then the
 * workspace, then built-in defaults (the schema's `default` values and the
 * engine defaults documented below).
 *
 * CONTEXT (borrowed JSON built by the caller from the database):
 * {
 *   "workspace": {
 *     "name": "ray",                      required
 *     "namespace": "ray",                 required
 *     "default_queue": "kind-cpu",        LocalQueue when neither spec nor profile names one
 *     "default_priority": "taugrid-default",  WorkloadPriorityClass default
 *     "default_profile": "kind-cpu-job",  profile when the spec names none
 *     "output_root": "/data/projects/ray",    storage.output default = <output_root>/<name>
 *     "ttl_seconds": 3600,                Job ttlSecondsAfterFinished default
 *     "allowed_profiles": ["kind-cpu-job"],   when present, policy.profile must be listed
 *     "queues": ["kind-cpu"],             when present, the queue must be listed
 *     "pvcs": ["blob-training"]           when present, data_pvc/volumes must be listed
 *   },
 *   "profiles": [ {                       every profile the workspace may use
 *     "name": "kind-cpu-job",             required
 *     "engine": "job",                    when set, the spec's engine must match
 *     "gpu_class": "a100-80gb",           default policy.gpu_class
 *     "gpu_resource": "nvidia.com/gpu",   extended resource for device-plugin GPUs
 *     "node_selector": {...},             merged under policy.node_selector
 *     "tolerations": [ {key, operator, value, effect, tolerationSeconds} ],
 *     "default_image": "repo/img:tag",    runtime.image default
 *     "resources": {"cpu_request": "1", "memory_request": "4Gi", "cpu_limit": ..., any
 *                   compute.* quantity name; "cpu"/"memory" mean *_request},
 *     "default_queue": "kind-cpu",
 *     "workload_priority_class": "...", "pod_priority_class": "...",
 *     "active_deadline_seconds": 86400,
 *     "topology": "same-host", "topology_name": "taugrid-gpu-topology",
 *     "teams": ["research"], "lanes": ["training"],   applicability, when non-empty
 *     "allowed_workspaces": ["ray"]       when present, must list the workspace
 *   } ],
 *   "priority_classes": [ {"name": "taugrid-default", "value": 1000} ],  WorkloadPriorityClasses
 *   "pod_priority_classes": [ {"name": "...", "value": N} ]              optional
 * }
 *
 * RESOLVED (new reference): the tau.yaml sections with every field decided
 * and aliases folded: name, engine ("job"|"rayjob"), entrypoint, run{...},
 * runtime{image, env, env_secret, pip, working_dir, security_mode},
 * compute{...every quantity of the engine..., gpu_resource, gpu_count},
 * policy{workspace, namespace, profile, queue, team, lane, gpu_class,
 * topology, topology_name, priority_tier, workload_priority_class,
 * workload_priority_value, pod_priority_class, node_selector, tolerations,
 * clear_node_selector, disable_default_priorities}, storage{data_pvc, output,
 * checkpoint, volumes[{pvc, path, read_only}]}, execution{...},
 * resilience{...}, metrics{history, offload_enabled}, experiment{project,
 * name, group}, files{entrypoint|requirements|project: {name,size,sha256}}.
 * Absent optional values are JSON null. PROVENANCE (tauyaml/prov.h): each
 * decided field's "dotted.field" -> "spec" | "profile" | "workspace" |
 * "default". */
#ifndef TG_TAUYAML_RESOLVE_H
#define TG_TAUYAML_RESOLVE_H

#include <jansson.h>

#include "core/status.h"
#include "tauyaml/diag.h"
#include "tauyaml/files.h"
#include "tauyaml/prov.h"
#include "tauyaml/schema.h"
#include "tauyaml/semantic.h"

/* What a run config is resolved from; all borrowed. */
typedef struct tg_tauyaml_resolve_in_s {
    const tg_tauyaml_schema_t *schema;
    const json_t *root;              /* the validated tau.yaml */
    const tg_tauyaml_facts_t *facts; /* collected from root */
    /* A managed workflow manifest's section (tauyaml/managed.h), which then
     * supplies the compute sizing and is kept as the resolved config's
     * "managed"; NULL for a direct run config. */
    const json_t *managed;
    const json_t *context;           /* CONTEXT above */
    const tg_tauyaml_files_t *files; /* the submitted files */
} tg_tauyaml_resolve_in_t;

/* Resolve in->root in in->context. User-facing problems (wrong workspace,
 * unknown queue, profile not allowed...) are added to `diag` and the
 * function still returns TG_OK; check the error count. TG_EINVAL means the
 * context itself is malformed (a caller bug; logged). On TG_OK *resolved is
 * a new reference, which shares immutable nodes with in->root (treat it as
 * read-only), and `provenance` (initialised by the caller) has a source for
 * each field it decided. */
tg_rc_e tg_tauyaml_resolve(const tg_tauyaml_resolve_in_t *in, tg_tauyaml_diag_t *diag,
                           json_t **resolved, tg_tauyaml_prov_t *provenance) TG_MUSTCHECK;

/* Built-in images for a RayJob without one (TauGrid's defaults). */
#define TG_TAUYAML_RAY_IMAGE_GPU       "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.56.0-cuda13.0"
#define TG_TAUYAML_RAY_IMAGE_CPU       "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.54.0"
#define TG_TAUYAML_DEFAULT_QUEUE       "jobqueue"
#define TG_TAUYAML_DEFAULT_PRIORITY    "taugrid-default"
#define TG_TAUYAML_PRIORITY_TIER_CLASS "taugrid-priority"

#endif
