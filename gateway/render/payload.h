/* Files carried inside a pod template: each is an env entry of an init
 * container that decodes it into an emptyDir and checks its digest, so a
 * workload needs no ConfigMap (and a corrupted template cannot run the
 * wrong code). Used for the RayJob driver and project archive, and for a
 * managed manifest's trainer, extra scripts and manifest copy. */
#ifndef TG_RENDER_PAYLOAD_H
#define TG_RENDER_PAYLOAD_H

#include <stddef.h>

#include "core/buf.h"
#include "render/common.h"

#define TG_RENDER_SCRIPT_DIR   "/script"
#define TG_RENDER_MANIFEST_DIR "/manifest"

typedef struct tg_render_payload_s {
    tg_render_env_t env; /* TAU_PAYLOAD_DIR and TAU_PAYLOAD_<i> = "<name>:<sha256>:<base64>" */
    tg_buf_t list;       /* "name:sha256\n" lines, hashed into the payload digest */
    size_t n;
} tg_render_payload_t;

/* A payload decoded into `dir` (which the init container mounts). */
void tg_render_payload_init(tg_render_payload_t *p, const char *dir);
void tg_render_payload_clean(tg_render_payload_t *p);
/* Add a file under its base name; hex: the sha256 of the bytes. */
void tg_render_payload_add(tg_render_payload_t *p, const char *name, const void *data, size_t len,
                           const char hex[65]);
/* "sha256:<hex>" over the payload's list into out[72]. */
void tg_render_payload_digest(const tg_render_payload_t *p, char out[72]);

/* One init container `name` decoding `env` (a payload's) into its
 * directory, mounting the volume of the same last path segment ("script",
 * "manifest"), written as an element of an open "initContainers" array. */
void tg_render_k_payload_container(tg_render_ctx_t *c, const char *name,
                                   const tg_render_payload_t *p);
/* "initContainers": [that one container]. */
void tg_render_k_payload_init(tg_render_ctx_t *c, const char *name, const tg_render_env_t *env);

#endif
