/* batch/v1 Job rendering (engine: job), reference/taugrid.md section 2.2:
 * a suspended, Kueue-labelled Job with backoffLimit 0 (taugate retries whole
 * attempts itself), restartPolicy Never, ttlSecondsAfterFinished, optional
 * activeDeadlineSeconds; container "main" running the embedded entrypoint
 * (base64 in env, decoded by /bin/sh + base64, so any image with a POSIX
 * shell works); GPUs as requests == limits; multi-node torchrun as an Indexed
 * Job plus its headless Service. */
#ifndef TG_RENDER_JOB_H
#define TG_RENDER_JOB_H

#include <jansson.h>

#include "core/status.h"
#include "render/common.h"

/* Write the Job (and, for multi-node torchrun, the headless Service first)
 * as elements of the open array in c->w. TG_EINVAL with c->err set when
 * inputs are missing. */
tg_rc_e tg_render_job(tg_render_ctx_t *c) TG_MUSTCHECK;

#endif
