/* Submitting runs. A submission is validated, resolved and rendered here,
 * then stored with its outbox row in one transaction; the engine carries it
 * to the cluster. The request never waits on Kubernetes. */
#include "api/runs_submit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/audit.h"
#include "api/authz.h"
#include "api/payload.h"
#include "core/digest.h"
#include "engine/engine.h"
#include "http/problem.h"
#include "api/policies.h"
#include "policy/hook.h"
#include "render/render.h"
#include "submit/pipeline.h"
#include "store/runs.h"
#include "store/tenancy_cache.h"

#define SUBMIT_BATCH_MAX 100
/* Query arguments an idempotency hash covers one by one (more are counted). */
#define SUBMIT_QUERY_MAX 32
/* Dry runs render with this id so their manifests look like a real run's. */
#define SUBMIT_DRY_RUN_ID "00000000-0000-4000-8000-000000000000"

/* Answer a pipeline rejection: the status follows the pipeline's code. */
static void submit_reject(tg_req_t *req, tg_rc_e rc, json_t *out)
{
    json_t *errors = json_incref(json_object_get(out, "errors"));
    size_t n = json_array_size(errors);
    const char *first = json_string_value(json_object_get(json_array_get(errors, 0), "message"));
    if (rc == TG_EINTERNAL)
        tg_problem(req, rc, NULL, "the run could not be rendered; this is a server fault");
    else
        tg_problem_typed(req, rc, rc == TG_EUNPROCESSABLE ? "invalid-run-config" : NULL, errors,
                         "%s%s", n == 1 && first ? "" : "the run config has problems: ",
                         n == 1 && first ? first : tg_arena_printf(req->arena, "%zu found", n));
    if (rc == TG_EINTERNAL)
        json_decref(errors);
}

/* The workspace's resolution context, or an answer and NULL. */
static json_t *submit_context_or_reply(tg_req_t *req, const char *ws)
{
    json_t *ctx = NULL;
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return NULL;
    tg_rc_e rc = tg_tenancy_context(((tg_app_t *)tg_req_app(req))->tenancy, conn, ws, &ctx);
    if (rc == TG_ENOTFOUND)
        tg_problem(req, rc, NULL, "workspace %s does not exist", ws);
    else if (rc != TG_OK)
        tg_problem(req, rc, NULL, "the workspace settings could not be read");
    return ctx;
}

/* What a submission and a dry run start from: the caller a researcher in
 * `ws`, a valid Idempotency-Key in *key when `key` is not NULL, the payload
 * parsed into *p; returns the workspace's resolution context (new
 * reference). Otherwise answers and returns NULL. */
static json_t *submit_begin_or_reply(tg_req_t *req, const char *ws, const char **key,
                                     tg_payload_t *p)
{
    if (tg_authz_workspace_or_reply(req, ws, TG_ROLE_RESEARCHER) == TG_ROLE_NONE)
        return NULL;
    if (key && tg_req_idempotency_key_or_reply(req, key) != 0)
        return NULL;
    if (tg_payload_parse_or_reply(req, p) != 0)
        return NULL;
    return submit_context_or_reply(req, ws);
}

/* What a run keeps of its policy decisions, for its evidence: the
 * decisions as JSON text (written directly; a jansson tree of them only to
 * serialise it cost a tenth of a submission) and the policy digest. */
static tg_rc_e submit_policy_text(const tg_policy_hook_t *ph, json_t *out)
{
    tg_buf_t b;
    tg_buf_init(&b, 16u << 20);
    const tg_policy_result_t *r = ph->ran ? &ph->result : NULL;
    tg_rc_e rc = tg_policy_result_decisions_text(r, &b);
    if (rc == TG_OK) {
        json_object_set_new(out, "policy_decisions_text",
                            json_stringn(b.data ? b.data : "", b.len));
        json_object_set_new(out, "policy_digest", json_string(r ? r->policy_digest : ""));
    }
    tg_buf_clean(&b);
    return rc;
}

/* A run stores its manifests and resolved config as the text written into
 * `texts`; a dry run (texts NULL) answers them as JSON ("manifests"). */
static tg_rc_e submit_pipeline(tg_req_t *req, const tg_payload_t *p, const json_t *ctx,
                               const char *run_id, tg_submit_texts_t *texts, json_t **out)
{
    tg_app_t *app = tg_req_app(req);
    tg_tauyaml_file_t *files = tg_arena_alloc(req->arena, sizeof(*files) * (p->nfiles + 1));
    for (size_t i = 0; i < p->nfiles; i++) {
        files[i].name = p->files[i].name;
        files[i].data = p->files[i].data;
        files[i].len = p->files[i].len;
    }
    tg_tauyaml_files_t set = {.v = files, .n = p->nfiles};
    tg_policy_snapshot_t *snap = tg_policy_registry_acquire(app->policies);
    tg_policy_hook_t ph = {.snapshot = snap, .workspace = tg_req_param(req, "ws")};
    tg_submit_request_t sr = {.yaml = p->spec,
                              .yaml_len = p->spec_len,
                              .files = &set,
                              .context = ctx,
                              .run_id = run_id,
                              .attempt = 1,
                              .texts = texts,
                              .policy = &ph};
    tg_rc_e rc = tg_submit_pipeline(app->schema, &app->limits, &sr, out);
    if (rc == TG_OK && !texts) /* a dry run shows {digest, generation, decisions} */
        json_object_set_new(*out, "policy", tg_policy_hook_evidence(&ph));
    else if (rc == TG_OK)
        rc = submit_policy_text(&ph, *out);
    tg_policy_hook_clean(&ph);
    tg_policy_snapshot_release(snap);
    return rc;
}

void tg_api_runs_validate(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    tg_payload_t p;
    json_t *ctx = submit_begin_or_reply(req, ws, NULL, &p);
    if (!ctx)
        return;
    json_t *out = NULL;
    tg_rc_e rc = submit_pipeline(req, &p, ctx, SUBMIT_DRY_RUN_ID, NULL, &out);
    json_decref(ctx);
    if (rc != TG_OK)
        submit_reject(req, rc, out);
    else
        tg_resp_json(req, 200, json_incref(out));
    json_decref(out);
}

/* Order of two (name, value) pairs, names first, bytewise; a NULL value
 * (a bare `?flag`) before any text. */
static int submit_pair_cmp(const char *an, const char *av, const char *bn, const char *bv)
{
    int c = strcmp(an, bn);
    if (c || av == bv)
        return c;
    return !av ? -1 : !bv ? 1 : strcmp(av, bv);
}

static void submit_sort_pairs(const char **names, const char **values, size_t n)
{
    for (size_t i = 1; i < n; i++) /* insertion sort: a handful of entries */
        for (size_t j = i;
             j > 0 && submit_pair_cmp(names[j - 1], values[j - 1], names[j], values[j]) > 0; j--) {
            const char *tn = names[j], *tv = values[j];
            names[j] = names[j - 1];
            values[j] = values[j - 1];
            names[j - 1] = tn;
            values[j - 1] = tv;
        }
}

/* sha256 over what a submission means, whatever its encoding: the spec
 * text, each file's name and sha256 (by name) and the query arguments (by
 * name). A retried multipart upload (curl picks a new boundary each time),
 * the same files in another order or the same run sent as JSON hash alike; a
 * changed byte of the spec or of a file does not. Each piece is length-
 * prefixed so that no two requests share an encoding. NULL when out of
 * memory. */
static const char *submit_request_hash(tg_req_t *req, const tg_payload_t *p)
{
    const char *qn[SUBMIT_QUERY_MAX], *qv[SUBMIT_QUERY_MAX];
    size_t nq = tg_req_query_args(req, qn, qv, SUBMIT_QUERY_MAX);
    const char *fname[TG_PAYLOAD_MAX_FILES], *fsha[TG_PAYLOAD_MAX_FILES];
    for (size_t i = 0; i < p->nfiles; i++) {
        char *hex = tg_arena_alloc(req->arena, 65);
        tg_sha256_hex(p->files[i].data, p->files[i].len, hex);
        fname[i] = p->files[i].name;
        fsha[i] = hex;
    }
    submit_sort_pairs(fname, fsha, p->nfiles);
    submit_sort_pairs(qn, qv, nq < SUBMIT_QUERY_MAX ? nq : SUBMIT_QUERY_MAX);
    tg_buf_t b;
    tg_buf_init(&b, 0);
    tg_rc_e rc = tg_buf_printf(&b, "taugate-submission/1\nspec %zu\n", p->spec_len);
    if (rc == TG_OK)
        rc = tg_buf_append(&b, p->spec, p->spec_len);
    if (rc == TG_OK)
        rc = tg_buf_printf(&b, "\nfiles %zu\n", p->nfiles);
    for (size_t i = 0; rc == TG_OK && i < p->nfiles; i++)
        rc = tg_buf_printf(&b, "%zu %s %s\n", strlen(fname[i]), fname[i], fsha[i]);
    if (rc == TG_OK)
        rc = tg_buf_printf(&b, "query %zu\n", nq);
    for (size_t i = 0; rc == TG_OK && i < nq && i < SUBMIT_QUERY_MAX; i++)
        rc = qv[i]
                 ? tg_buf_printf(&b, "%zu %s %zu %s\n", strlen(qn[i]), qn[i], strlen(qv[i]), qv[i])
                 : tg_buf_printf(&b, "%zu %s -\n", strlen(qn[i]), qn[i]);
    char *hash = NULL;
    if (rc == TG_OK) {
        hash = tg_arena_alloc(req->arena, 65);
        tg_sha256_hex(b.data, b.len, hash);
    }
    tg_buf_clean(&b);
    return hash;
}

/* Fill a run record from a pipeline result (borrowed, as are its texts). */
static void submit_record(tg_req_t *req, const char *ws, const tg_payload_t *p, const json_t *out,
                          const tg_submit_texts_t *texts, const char *id, tg_run_new_t *rec)
{
    const json_t *resolved = json_object_get(out, "resolved");
    tg_run_file_t *files = tg_arena_alloc(req->arena, sizeof(*files) * (p->nfiles + 1));
    for (size_t i = 0; i < p->nfiles; i++) {
        files[i].name = p->files[i].name;
        files[i].data = p->files[i].data;
        files[i].len = p->files[i].len;
    }
    memset(rec, 0, sizeof(*rec));
    rec->id = id;
    rec->workspace = ws;
    rec->name = json_string_value(json_object_get(resolved, "name"));
    rec->owner = tg_who(req)->subject;
    rec->engine = json_string_value(json_object_get(resolved, "engine"));
    rec->spec_text = p->spec;
    rec->resolved_text = texts->resolved.data;
    rec->manifests_text = texts->manifests.data;
    /* The object rendering named, without parsing the manifests; left NULL
     * (never after a rendering that succeeded), the store refuses the run as
     * a server fault. */
    char *object = tg_arena_alloc(req->arena, 64);
    if (tg_render_workload_ref(resolved, id, 1, &rec->object_ns, object, &rec->object_kind) ==
        TG_OK)
        rec->object_name = object;
    rec->config_hash = json_string_value(json_object_get(out, "config_hash"));
    rec->policy_decisions_text = json_string_value(json_object_get(out, "policy_decisions_text"));
    rec->policy_digest = json_string_value(json_object_get(out, "policy_digest"));
    rec->files = files;
    rec->nfiles = p->nfiles;
}

void tg_api_runs_submit(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    const char *key = NULL;
    tg_payload_t p;
    json_t *ctx = submit_begin_or_reply(req, ws, &key, &p);
    if (!ctx)
        return;
    char id[TG_UUID_LEN + 1];
    tg_uuid_v4(id);
    json_t *out = NULL;
    tg_submit_texts_t texts;
    tg_submit_texts_init(&texts);
    tg_rc_e rc = submit_pipeline(req, &p, ctx, id, &texts, &out);
    json_decref(ctx);
    if (rc != TG_OK) {
        submit_reject(req, rc, out);
        json_decref(out);
        tg_submit_texts_clean(&texts);
        return;
    }
    tg_run_new_t rec;
    submit_record(req, ws, &p, out, &texts, id, &rec);
    if (key) {
        rec.idempotency_key = key;
        rec.request_hash = submit_request_hash(req, &p);
        if (!rec.request_hash) {
            tg_problem(req, TG_EINTERNAL, NULL, "the submission could not be hashed");
            json_decref(out);
            tg_submit_texts_clean(&texts);
            return;
        }
    }
    tg_audit_entry_t audit;
    tg_audit_entry_of(req, 201, &audit);
    rec.audit = &audit;
    json_t *run = NULL;
    int existed = 0;
    rc = tg_store_run_create(tg_app_db_or_reply(req), &rec, &run, &existed);
    if (rc == TG_ECONFLICT)
        tg_problem(req, rc, NULL,
                   "Idempotency-Key %s was already used with a different request; use a new "
                   "key for a new run",
                   key);
    else if (rc != TG_OK)
        tg_problem(req, rc, NULL, "the run could not be stored");
    else {
        if (!existed)
            json_object_set(run, "warnings", json_object_get(out, "warnings"));
        const char *loc = tg_arena_printf(req->arena, "/v1/runs/%s",
                                          json_string_value(json_object_get(run, "id")));
        tg_resp_json(req, 201, run);
        tg_resp_header(req, "Location", loc);
        if (existed)
            tg_resp_header(req, "Idempotency-Replayed", "true");
        else
            tg_engine_kick(((tg_app_t *)tg_req_app(req))->engine);
        req->audited = !existed;
    }
    json_decref(out);
    tg_submit_texts_clean(&texts);
}

void tg_api_runs_batch(tg_req_t *req)
{
    const char *ws = tg_req_param(req, "ws");
    if (tg_authz_workspace_or_reply(req, ws, TG_ROLE_RESEARCHER) == TG_ROLE_NONE)
        return;
    json_t *body = tg_req_json_body_or_reply(req);
    if (!body)
        return;
    json_t *items = json_object_get(body, "runs");
    if (!json_is_array(items) || json_array_size(items) == 0 ||
        json_array_size(items) > SUBMIT_BATCH_MAX || json_object_size(body) != 1) {
        json_t *errors = json_array();
        json_array_append_new(errors, tg_problem_error("runs", 0, 0,
                                                       "must be an array of 1 to 100 "
                                                       "{spec, files} submissions"));
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the batch is not valid");
        json_decref(body);
        return;
    }
    json_t *ctx = submit_context_or_reply(req, ws);
    if (!ctx) {
        json_decref(body);
        return;
    }
    size_t n = json_array_size(items);
    tg_run_new_t *recs = tg_arena_alloc(req->arena, sizeof(*recs) * n);
    json_t **outs = tg_arena_alloc(req->arena, sizeof(json_t *) * n); /* owned, per valid run */
    tg_submit_texts_t *texts = tg_arena_alloc(req->arena, sizeof(*texts) * n); /* the same */
    int *slot = tg_arena_alloc(req->arena, sizeof(int) * n);
    const char *key = tg_req_header(req, "Idempotency-Key");
    json_t *results = json_array();
    size_t nvalid = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *res = json_pack("{s:I}", "index", (json_int_t)i);
        json_array_append_new(results, res);
        slot[i] = -1;
        tg_payload_t p;
        json_t *errors = NULL, *out = NULL;
        if (tg_payload_from_json(req, json_array_get(items, i), &p, &errors) != 0) {
            json_object_set_new(res, "status", json_integer(422));
            json_object_set_new(res, "errors", errors);
            continue;
        }
        char *id = tg_arena_alloc(req->arena, TG_UUID_LEN + 1);
        tg_uuid_v4(id);
        tg_submit_texts_init(&texts[nvalid]);
        tg_rc_e rc = submit_pipeline(req, &p, ctx, id, &texts[nvalid], &out);
        if (rc != TG_OK) {
            json_object_set_new(res, "status", json_integer(tg_rc_http_status(rc)));
            json_object_set(res, "errors", json_object_get(out, "errors"));
            json_decref(out);
            tg_submit_texts_clean(&texts[nvalid]);
            continue;
        }
        submit_record(req, ws, &p, out, &texts[nvalid], id, &recs[nvalid]);
        if (key) {
            /* each item gets its own key, derived from the request's; a
             * hash that could not be made (no memory) never matches */
            recs[nvalid].idempotency_key = tg_arena_printf(req->arena, "%s#%zu", key, i);
            const char *h = submit_request_hash(req, &p);
            recs[nvalid].request_hash = h ? h : "";
        }
        outs[nvalid] = out;
        slot[i] = (int)nvalid++;
    }
    json_t **runs = tg_arena_alloc(req->arena, sizeof(json_t *) * (nvalid + 1));
    tg_rc_e rc =
        nvalid ? tg_store_runs_create_batch(tg_app_db_or_reply(req), recs, nvalid, runs) : TG_OK;
    if (rc == TG_ECONFLICT)
        tg_problem(req, rc, NULL, "Idempotency-Key %s was already used with a different batch",
                   key);
    else if (rc != TG_OK)
        tg_problem(req, rc, NULL, "the batch could not be stored; nothing was submitted");
    else {
        for (size_t i = 0; i < n; i++)
            if (slot[i] >= 0) {
                json_t *res = json_array_get(results, i);
                json_object_set_new(res, "status", json_integer(201));
                json_object_set_new(res, "run", runs[slot[i]]);
            }
        tg_resp_json(req, 200, json_pack("{s:O}", "results", results));
        tg_engine_kick(((tg_app_t *)tg_req_app(req))->engine);
    }
    json_decref(results);
    for (size_t i = 0; i < nvalid; i++) {
        json_decref(outs[i]);
        tg_submit_texts_clean(&texts[i]);
    }
    json_decref(ctx);
    json_decref(body);
}
