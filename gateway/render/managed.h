/* Rendering of a TauGrid managed workflow manifest (tauyaml/managed.h) as
 * TauGrid's cli/internal/manifest templates render it, with taugate's
 * object names, metadata contract and payload carriage:
 *
 *   job         batch/v1 Job, container "trainer" on TauGrid's GPU Ray image:
 *               pip install of runtime.pip, then python3 /script/train.py
 *               --manifest /manifest/<name>.yaml --smoke-pairs N (torchrun
 *               --standalone with more than one GPU); requests from
 *               compute.cpus/memory
 *   rayjob      ray.io/v1 RayJob with a control-only head (2/4 CPU, 8Gi/16Gi)
 *               and compute.workers GPU workers "<name>-w" (worker_* sizing),
 *               the pip list also as runtimeEnvYAML, rayVersion 2.54.0
 *   rayjob-cpu  the same with compute.workers CPU workers "<name>-cpu"
 *               (num-cpus = worker_cpus), KubeRay's ray-start command
 *               overridden as TauGrid does, rayVersion 2.40.0
 *
 * compute.workers is the number of execution workers; the head is separate
 * (TauGrid's WorkerReplicas = Workers). The trainer and extra scripts go to
 * /script, the manifest to /manifest, each by its own init container; Ray
 * workers get the scripts only. */
#ifndef TG_RENDER_MANAGED_H
#define TG_RENDER_MANAGED_H

#include "core/status.h"
#include "render/common.h"

/* Render the resolved config's "managed" section into c->w (an open
 * manifests array). */
tg_rc_e tg_render_managed(tg_render_ctx_t *c) TG_MUSTCHECK;

/* The object kind a managed section renders ("Job" or "RayJob"). */
const char *tg_render_managed_kind(const json_t *managed);

#endif
