/* Pod-level settings of every rendered pod: where it may run (tolerations,
 * node selector, GPU packing and system-pool affinity), who it runs as
 * (service account, pull secrets, restricted security) and how it gets DRA
 * GPUs. Most come from the compute profile (tauyaml/resolve.c puts them under
 * "policy"). */
#ifndef TG_RENDER_POD_H
#define TG_RENDER_POD_H

#include "render/common.h"

/* Whether a pod with `gpus` GPUs gets them through a DRA claim. */
int tg_render_dra(const tg_render_ctx_t *c, json_int_t gpus);
/* Pod "resourceClaims" for the DRA claim (nothing without one). */
void tg_render_k_resource_claims(const tg_render_ctx_t *c, json_int_t gpus);
/* Pod "imagePullSecrets" and "serviceAccountName" from the profile. */
void tg_render_k_image_pull_secrets(const tg_render_ctx_t *c);
void tg_render_k_service_account(const tg_render_ctx_t *c);
/* Whether a pod with `gpus` GPUs is packed (profile gpu_placement
 * single-device or same-node), and its "affinity": TauGrid's preferred pod
 * affinity to nodes already running such pods. */
int tg_render_packs(const tg_render_ctx_t *c, json_int_t gpus);
void tg_render_k_packing_affinity(const tg_render_ctx_t *c, json_int_t gpus);

/* "tolerations": profile tolerations, then CriticalAddonsOnly (head) or the
 * two GPU tolerations (sku=gpu, nvidia.com/gpu) when `gpu`, each unless the
 * profile already lists it; nothing if empty. */
void tg_render_k_tolerations(const tg_render_ctx_t *c, int head, int gpu);

/* "nodeSelector": profile + policy selectors, plus tau.azure.com/gpu-class
 * when the pod has GPUs and the class is not "any" (unless
 * clear_node_selector); nothing when empty. */
void tg_render_k_node_selector(const tg_render_ctx_t *c, int gpu_pod);

/* The pod's scheduling keys in the order every pod writes them:
 * "nodeSelector" (when `with_node_selector`; a control-only Ray head has
 * none), the profile's "priorityClassName", then "resourceClaims". */
void tg_render_k_scheduling(const tg_render_ctx_t *c, int with_node_selector, json_int_t gpus);

/* "affinity" of a control-only Ray head: the AKS system pool, or any node
 * without its label. */
void tg_render_k_system_affinity(const tg_render_ctx_t *c);

/* Restricted Pod Security settings; nothing when runtime.security.mode is unset. */
void tg_render_k_pod_security(const tg_render_ctx_t *c);
void tg_render_k_container_security(const tg_render_ctx_t *c);

#endif
