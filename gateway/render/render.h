/* Rendering of a resolved run config into Kubernetes manifests.
 *
 * Pure and deterministic: the same resolved config, provenance, files and
 * options give byte-identical JSON (dump with JSON_SORT_KEYS). Object names
 * come from the run id and attempt (tg_render_object_name), so resubmitting
 * an attempt is idempotent (an AlreadyExists answer means "already there").
 *
 * Output: a JSON array of manifests in creation order. engine: job gives
 * [Job], or [Service (headless, for torchrun rendezvous), Job] for multi-node
 * torchrun (the submitter may add an ownerReference from the Service to the
 * Job once the Job's uid is known); engine: rayjob gives [RayJob]. */
#ifndef TG_RENDER_RENDER_H
#define TG_RENDER_RENDER_H

#include <jansson.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/status.h"
#include "render/common.h"
#include "tauyaml/files.h"

/* Render as JSON text: the manifests array is appended to `out` (compact,
 * fixed key order; the text the submitter stores and sends to Kubernetes).
 * `resolved` and `provenance` (may be NULL: no provenance annotation) are
 * borrowed, as produced by tg_tauyaml_resolve (`resolved` possibly after a
 * database round trip); `files` must hold
 * the files the resolved config names (the same bytes: their digests are
 * checked). On TG_EINVAL (bad run id, malformed resolved config, missing or
 * changed files) err[errlen] says why and `out` is left as it was. */
tg_rc_e tg_render_manifests_text(const json_t *resolved, const tg_tauyaml_prov_t *provenance,
                                 const tg_tauyaml_files_t *files, const tg_render_opts_t *opts,
                                 tg_buf_t *out, char *err, size_t errlen) TG_MUSTCHECK;

/* The identity of the workload object (the Job or RayJob) that rendering
 * `resolved` for run_id/attempt names, without rendering: *ns (borrowed from
 * `resolved`), name[64] and *kind (a literal), by the lookups the renderer
 * makes (one engine table, tg_render_object_name), so the two cannot
 * disagree. TG_EINVAL when the run id gives no object name or `resolved`
 * lacks a known engine or a namespace. */
tg_rc_e tg_render_workload_ref(const json_t *resolved, const char *run_id, unsigned attempt,
                               const char **ns, char name[64], const char **kind) TG_MUSTCHECK;

/* The same as a jansson array: on TG_OK *manifests is a new reference. */
tg_rc_e tg_render_manifests(const json_t *resolved, const tg_tauyaml_prov_t *provenance,
                            const tg_tauyaml_files_t *files, const tg_render_opts_t *opts,
                            json_t **manifests, char *err, size_t errlen) TG_MUSTCHECK;

#endif
