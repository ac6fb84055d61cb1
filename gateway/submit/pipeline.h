/* tau.yaml submission pipeline: the one call the HTTP handler makes.
 *
 *   YAML text + files -> tree with positions (yaml_tree) -> managed-manifest
 *   check -> schema validation (validate, driven by schema/tau.schema.json)
 *   -> semantic rules (semantic) -> file checks (files) -> resolution against
 *   workspace/profile context (resolve) -> policy (policy/hook.h) ->
 *   manifests (render/). The stages live in tauyaml/, policy/ and render/;
 *   this module only runs them in order.
 *
 * Every stage adds to one diagnostics list, so a rejection lists all the
 * problems found, each {"path", "line", "column", "message"}, sorted by
 * position. Handler sketch:
 *
 *     json_t *out = NULL;
 *     tg_submit_request_t req = {.yaml = body, .yaml_len = n, .files = &files,
 *                              .context = ctx, .run_id = id, .attempt = 1};
 *     tg_rc_e rc = tg_submit_pipeline(schema, &limits, &req, &out);
 *     // rc != TG_OK: problem+json with status tg_rc_http_status(rc) and
 *     //              errors = json_object_get(out, "errors")
 *     json_decref(out);
 */
#ifndef TG_SUBMIT_PIPELINE_H
#define TG_SUBMIT_PIPELINE_H

#include <jansson.h>

#include "core/buf.h"
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "policy/hook.h"
#include "render/common.h"
#include "tauyaml/files.h"
#include "tauyaml/limits.h"
#include "tauyaml/diag.h"
#include "tauyaml/pos.h"
#include "tauyaml/prov.h"
#include "tauyaml/schema.h"

/* Stages of the pipeline, for tg_submit_timing_t. */
typedef enum {
    TG_SUBMIT_STAGE_PARSE,    /* YAML text -> tree with positions */
    TG_SUBMIT_STAGE_VALIDATE, /* managed check, schema, semantic rules, file checks */
    TG_SUBMIT_STAGE_RESOLVE,  /* resolution against the context, and policy */
    TG_SUBMIT_STAGE_RENDER,   /* config hash, manifests, the result object */
    TG_SUBMIT_STAGE_RELEASE,  /* freeing the tree, positions and scratch buffers */
    TG_SUBMIT_STAGES
} tg_submit_stage_e;

/* Nanoseconds spent in each stage, added to by the pipeline when a request
 * asks for them (benchmarks, profiling): one clock read per stage. A failing
 * request charges the rest of its work to the stage that failed. */
typedef struct tg_submit_timing_s {
    uint64_t ns[TG_SUBMIT_STAGES];
} tg_submit_timing_t;

/* A submission's texts, written once by the pipeline into the caller's
 * buffers: the bytes to store and send, never built as a jansson tree nor
 * copied into one. */
typedef struct tg_submit_texts_s {
    tg_buf_t manifests; /* the rendered manifests, a JSON array */
    tg_buf_t resolved;  /* the canonical JSON of the resolved config: what its config hash
                           was computed over */
} tg_submit_texts_t;

void tg_submit_texts_init(tg_submit_texts_t *t);
void tg_submit_texts_clean(tg_submit_texts_t *t);

typedef struct tg_submit_request_s {
    const char *yaml; /* the tau.yaml text (need not be NUL-terminated) */
    size_t yaml_len;
    const tg_tauyaml_files_t *files; /* submitted files; may be NULL */
    const json_t *context;           /* borrowed; see tauyaml/resolve.h for its shape */
    const char *run_id;              /* render manifests for this run id; NULL: validate only */
    unsigned attempt;                /* >= 1 when run_id is set */
    const char *retry_reason;        /* attempt > 1 */
    tg_submit_texts_t *texts;        /* with run_id: write the manifests here as text instead
                                      of giving "manifests" (and the resolved config's
                                      canonical text) */
    tg_policy_hook_t *policy;        /* may be NULL (no policy); else evaluated on the resolved
                                        config, before the config hash and the manifests, and
                                        left holding its decisions (policy/hook.h) */
    tg_submit_timing_t *timing;      /* may be NULL; when set, stage times are added to it */
} tg_submit_request_t;

/* Run the pipeline. *out is always set to a new reference:
 *   TG_OK: {"resolved": {...}, "provenance": {...} (only without texts: a
 *           submission's is in its manifests' provenance annotation),
 *           "config_hash": "sha256:...", "manifests": [...] (only with run_id
 *           and without texts; with texts they are in texts->manifests),
 *           "warnings": [...]}
 *   otherwise: {"errors": [...], "warnings": [...]} with
 *   TG_ETOOLARGE       the document is over limits->max_doc_bytes (413)
 *   TG_EINVAL          the text is not YAML at all: a syntax error or bytes that
 *                      are not UTF-8 (400)
 *   TG_EUNPROCESSABLE  well-formed YAML whose content is refused: aliases,
 *                      duplicate keys, tags, depth, several or no documents, or an
 *                      invalid or unresolvable run config (422)
 *   TG_EINTERNAL       the context or rendering failed (a server bug; logged)
 * "resolved" shares immutable nodes with the parsed spec; treat it as read-only
 * (json_deep_copy before editing). `schema` and `limits` are shared read-only;
 * the call is thread-safe. */
tg_rc_e tg_submit_pipeline(const tg_tauyaml_schema_t *schema, const tg_tauyaml_limits_t *limits,
                           const tg_submit_request_t *req, json_t **out) TG_MUSTCHECK;

#endif
