/* TauGrid managed workflow manifests: the schema_version: 1 files TauGrid's
 * Python SDK (`tau python build`) writes and its AKS quickstarts ship.
 *
 * A tau.yaml is one when schema_version is set and neither engine nor
 * run.engine is (TauGrid's rawLooksLikeManagedWorkflow). TauGrid parses it
 * permissively: keys neither the direct run config nor the manifest schema
 * knows are warnings with "did you mean" (tauyaml/suggest.h), the manifest's
 * own fields are checked as cli/internal/manifest's Validate checks them,
 * and it renders through that package's templates (render/managed.h):
 *
 *   run.workload_kind  job (default; rayjob when compute.workers > 1) or
 *                      rayjob (ray, ray-train, ray_train); rayjob-eval is
 *                      refused (the tau-py eval fan-out is not offered)
 *   run.entrypoint     the trainer, embedded as /script/train.py (also
 *                      run.main_script, workflow.main_script/script); found
 *                      among the submitted files by its name or base name
 *   workflow.extra_scripts  SRC[:DEST] files embedded as /script/DEST
 *   compute.gpus       0..8 per worker (0: CPU-only); workers >= 1;
 *                      cpus/cpu_limit/worker_cpus/worker_cpu_limit (integers),
 *                      memory/memory_limit/worker_memory/worker_memory_limit
 *   runtime.pip        required; runtime.image; runtime.env as a list of
 *                      {name, value} or {name, valueFrom.secretKeyRef};
 *                      runtime.rdma {enabled, resource_name, count}
 *   storage.data_pvc, storage.mounts [{name, mountPath, pvc, readOnly}]
 *   artifacts.checkpoint, research.experiment, resource_naming.prefix
 *   policy.*           as in a direct config
 *
 * What TauGrid refuses for managed manifests is refused with its words
 * (storage.publish, run.source, storage.image_assets, ...); what needs
 * something the gateway cannot have is refused with the reason (workflow.file,
 * runtime.env_kv, profiler, rayjob-eval). */
#ifndef TG_TAUYAML_MANAGED_H
#define TG_TAUYAML_MANAGED_H

#include <jansson.h>
#include <stddef.h>

#include "tauyaml/diag.h"
#include "tauyaml/files.h"
#include "tauyaml/schema.h"
#include "tauyaml/semantic.h"

/* Is `root` a managed workflow manifest? */
int tg_tauyaml_managed_detect(const json_t *root);

/* Check a managed manifest (root borrowed; the shared sections are
 * normalised in place as the direct schema normalises them) and fill
 * `facts` (f->managed set, engine from the workload kind, entrypoint the
 * trainer). Errors and warnings go to `diag`. */
void tg_tauyaml_managed_check(const tg_tauyaml_schema_t *schema, json_t *root,
                              const tg_tauyaml_files_t *files, tg_tauyaml_facts_t *facts,
                              tg_tauyaml_diag_t *diag);

/* The "managed" section of the resolved config (a new object): what the
 * templates need beyond the shared sections: template, resource_name,
 * manifest {name, text}, main_script, extra_scripts, smoke_pairs, gpus,
 * workers, sizing {control, head, worker} {cpu, cpu_limit, memory,
 * memory_limit}, pip, env, mounts, rdma, checkpoint_artifact, experiment.
 * `yaml` is the manifest text, embedded for the trainer (secret references
 * redacted). Call only after tg_tauyaml_managed_check found no error. */
json_t *tg_tauyaml_managed_section(const json_t *root, const tg_tauyaml_facts_t *facts,
                                   const tg_tauyaml_files_t *files, const char *yaml,
                                   size_t yaml_len);

/* The submitted file a managed manifest names (`path` as written: its
 * exact name, else its base name), or NULL. */
const tg_tauyaml_file_t *tg_tauyaml_managed_file(const tg_tauyaml_files_t *files, const char *path);

#endif
