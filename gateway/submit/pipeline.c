/* tau.yaml submission pipeline. */
#include "submit/pipeline.h"

#include <string.h>
#include <time.h>

#include "core/log.h"
#include "render/metadata.h"
#include "render/render.h"
#include "tauyaml/diag.h"
#include "tauyaml/managed.h"
#include "tauyaml/resolve.h"
#include "tauyaml/semantic.h"
#include "tauyaml/validate.h"
#include "tauyaml/yaml_tree.h"

/* The stage clock of a request that asked for timing (t != NULL). */
typedef struct pipeline_clock_s {
    tg_submit_timing_t *t;
    tg_submit_stage_e stage;
    uint64_t mark;
} pipeline_clock_t;

static uint64_t pipeline_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Charge the time since the last mark to the current stage; `next` starts. */
static void pipeline_next(pipeline_clock_t *c, tg_submit_stage_e next)
{
    if (!c->t)
        return;
    uint64_t now = pipeline_now_ns();
    c->t->ns[c->stage] += now - c->mark;
    c->mark = now;
    c->stage = next;
}

void tg_submit_texts_init(tg_submit_texts_t *t)
{
    tg_buf_init(&t->manifests, 64u << 20);
    tg_buf_init(&t->resolved, 64u << 20);
}

void tg_submit_texts_clean(tg_submit_texts_t *t)
{
    tg_buf_clean(&t->manifests);
    tg_buf_clean(&t->resolved);
}

static json_t *pipeline_fail(tg_tauyaml_diag_t *d)
{
    tg_tauyaml_diag_sort(d);
    return json_pack("{s:O, s:O}", "errors", d->errors, "warnings", d->warnings);
}

tg_rc_e tg_submit_pipeline(const tg_tauyaml_schema_t *schema, const tg_tauyaml_limits_t *limits,
                           const tg_submit_request_t *req, json_t **out)
{
    tg_rc_e rc;
    tg_tauyaml_diag_t d;
    tg_tauyaml_doc_t doc;
    pipeline_clock_t clk = {.t = req->timing, .stage = TG_SUBMIT_STAGE_PARSE};
    if (clk.t)
        clk.mark = pipeline_now_ns();
    json_t *resolved = NULL, *manifests = NULL, *managed = NULL;
    tg_tauyaml_prov_t prov;
    tg_tauyaml_prov_init(&prov);
    /* the canonical resolved text goes to the caller's buffer when it
     * wants it, else to a scratch one */
    tg_buf_t scratch;
    tg_buf_init(&scratch, 64u << 20);
    tg_buf_t *canon = req->texts ? &req->texts->resolved : &scratch;
    tg_tauyaml_doc_init(&doc);
    tg_tauyaml_diag_init(&d, NULL, limits->max_errors);
    *out = NULL;

    rc = tg_tauyaml_yaml_parse(req->yaml ? req->yaml : "", req->yaml ? req->yaml_len : 0, limits,
                               &doc, &d);
    d.pos = doc.pos;
    if (rc != TG_OK)
        goto fail;
    pipeline_next(&clk, TG_SUBMIT_STAGE_VALIDATE);
    /* The checks and the resolver read the tree's sections many times. */
    tg_tauyaml_sections_bind(doc.root);
    tg_tauyaml_facts_t facts;
    if (tg_tauyaml_managed_detect(doc.root)) {
        tg_tauyaml_managed_check(schema, doc.root, req->files, &facts, &d);
        if (tg_tauyaml_diag_nerrors(&d) == 0)
            managed =
                tg_tauyaml_managed_section(doc.root, &facts, req->files, req->yaml, req->yaml_len);
    } else {
        tg_tauyaml_validate_schema(schema, doc.root, &d);
        tg_tauyaml_facts_collect(doc.root, &facts);
        tg_tauyaml_semantic_check(doc.root, &facts, limits, &d);
        tg_tauyaml_files_check(doc.root, &facts, req->files, limits, &d);
    }
    pipeline_next(&clk, TG_SUBMIT_STAGE_RESOLVE);
    tg_tauyaml_resolve_in_t in = {.schema = schema,
                                  .root = doc.root,
                                  .facts = &facts,
                                  .managed = managed,
                                  .context = req->context,
                                  .files = req->files};
    rc = tg_tauyaml_resolve(&in, &d, &resolved, &prov);
    if (rc != TG_OK) {
        tg_tauyaml_diag_error_at(&d, "", 1, 1, "the gateway could not resolve this run (context)");
        rc = TG_EINTERNAL;
        goto fail;
    }
    if (tg_tauyaml_diag_nerrors(&d) > 0) {
        rc = TG_EUNPROCESSABLE;
        goto fail;
    }
    if (req->policy) {
        if (tg_policy_spec_hook(req->policy, doc.pos, &resolved, &prov, &d) != TG_OK) {
            tg_tauyaml_diag_error_at(&d, "", 1, 1, "the gateway could not apply its policy");
            rc = TG_EINTERNAL;
            goto fail;
        }
        if (tg_tauyaml_diag_nerrors(&d) > 0) {
            rc = TG_EUNPROCESSABLE;
            goto fail;
        }
    }
    pipeline_next(&clk, TG_SUBMIT_STAGE_RENDER);
    char hash[72];
    tg_buf_reset(canon);
    tg_render_config_hash_text(resolved, hash, canon);
    if (req->run_id) {
        char err[256];
        tg_render_opts_t opts = {.run_id = req->run_id,
                                 .attempt = req->attempt ? req->attempt : 1,
                                 .retry_reason = req->retry_reason,
                                 .config_hash = hash};
        if (req->texts)
            tg_buf_reset(&req->texts->manifests);
        tg_rc_e r = req->texts ? tg_render_manifests_text(resolved, &prov, req->files, &opts,
                                                          &req->texts->manifests, err, sizeof(err))
                               : tg_render_manifests(resolved, &prov, req->files, &opts, &manifests,
                                                     err, sizeof(err));
        if (r != TG_OK) {
            tg_log_error("spec", "render failed: %s", err);
            tg_tauyaml_diag_error_at(&d, "", 1, 1, "rendering failed: %s", err);
            rc = TG_EINTERNAL;
            goto fail;
        }
    }
    tg_tauyaml_diag_sort(&d);
    /* Built directly: json_pack parses its format on every call. */
    *out = json_object();
    json_object_set_new_nocheck(*out, "resolved", resolved);
    if (!req->texts)
        json_object_set_new_nocheck(*out, "provenance", tg_tauyaml_prov_json(&prov));
    json_object_set_new_nocheck(*out, "config_hash", json_string(hash));
    json_object_set_nocheck(*out, "warnings", d.warnings);
    resolved = NULL;
    if (manifests)
        json_object_set_new(*out, "manifests", manifests);
    manifests = NULL;
    rc = TG_OK;
    goto out;
fail:
    *out = pipeline_fail(&d);
out:
    pipeline_next(&clk, TG_SUBMIT_STAGE_RELEASE);
    json_decref(resolved);
    json_decref(managed);
    tg_tauyaml_prov_clean(&prov);
    json_decref(manifests);
    tg_buf_clean(&scratch);
    tg_tauyaml_diag_clean(&d);
    tg_tauyaml_sections_unbind();
    tg_tauyaml_doc_clean(&doc);
    pipeline_next(&clk, TG_SUBMIT_STAGE_RELEASE);
    return rc;
}
