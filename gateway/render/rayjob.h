/* ray.io/v1 RayJob rendering (engine: rayjob), reference/taugrid.md section
 * 2.3: suspended, shutdownAfterJobFinishes, ttlSecondsAfterFinished 15,
 * HTTPMode submission of a generated entrypoint, runtimeEnvYAML for pip and
 * the run.working_dir archive, rayVersion from the image tag; a control-only
 * head (num-cpus/num-gpus 0, system-pool affinity, CriticalAddonsOnly) and a
 * worker group of compute.workers replicas with KubeRay-style probes, GPUs as
 * requests == limits and GPU tolerations. Files travel in the pod template
 * (no ConfigMap): an init container "tau-payload" decodes and verifies them
 * into /script. */
#ifndef TG_RENDER_RAYJOB_H
#define TG_RENDER_RAYJOB_H

#include <jansson.h>

#include "core/status.h"
#include "render/common.h"

#define TG_RENDER_RAY_VERSION_DEFAULT "2.56.0"

/* Write the RayJob as an element of the open array in c->w. TG_EINVAL with
 * c->err set when inputs are missing. */
tg_rc_e tg_render_rayjob(tg_render_ctx_t *c) TG_MUSTCHECK;

/* "X.Y.Z" from an image tag containing "-rayX.Y.Z" (or a rayproject/ray:X.Y.Z
 * tag), else the default, into out[n]. */
void tg_render_ray_version(const char *image, char *out, size_t n);

#endif
