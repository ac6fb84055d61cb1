/* GET /v1/runs/{id}/evidence and GET /v1/evidence/public-key. */
#include "api/evidence.h"

#include "core/run_state.h"
#include <string.h>

#include "api/app.h"
#include "api/authz.h"
#include "api/etag.h"
#include "api/health.h"
#include "api/runs_read.h"
#include "http/problem.h"
#include "store/evidence.h"
#include "store/evidence_keys.h"

/* The sealed envelope; the row is borrowed. New reference, or NULL when the
 * stored text is not JSON (a broken row: the verifier says more). */
static json_t *evidence_envelope(const tg_evidence_row_t *row)
{
    json_t *rec = json_loadb(row->canonical, row->canonical_len, 0, NULL);
    if (!rec)
        return NULL;
    return json_pack("{s:s, s:b, s:s, s:s, s:s, s:s, s:s, s:s%, s:o}", "run_id", row->run_id,
                     "sealed", 1, "sealed_at", row->sealed_at, "algorithm", row->algorithm,
                     "key_id", row->key_id, "sha256", row->sha256, "signature", row->signature,
                     "canonical", row->canonical, row->canonical_len, "record", rec);
}

void tg_api_run_evidence(tg_req_t *req)
{
    json_t *run = tg_api_run_load_or_reply(req, TG_ROLE_VIEWER, NULL);
    if (!run)
        return;
    const char *id = json_string_value(json_object_get(run, "id"));
    const char *state = json_string_value(json_object_get(run, "state"));
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    tg_evidence_row_t row;
    json_t *rec = NULL;
    tg_rc_e rc = conn ? tg_evidence_get(conn, id, &row) : TG_EUNAVAILABLE;
    if (!conn)
        goto out_run;
    if (rc == TG_OK) {
        json_t *env = evidence_envelope(&row);
        if (env) /* sealed: it never changes */
            tg_resp_json_conditional(req, env, "private, no-cache");
        else
            tg_problem(req, TG_EINTERNAL, NULL,
                       "the sealed record of run %s is not readable JSON; run `taugate verify %s`",
                       id, id);
        tg_evidence_row_clean(&row);
        goto out_run;
    }
    if (rc != TG_ENOTFOUND) {
        tg_problem(req, rc, NULL, "the evidence could not be read");
        goto out_run;
    }
    if (!tg_run_state_ended(state)) {
        tg_problem_typed(req, TG_ECONFLICT, "evidence-not-sealed", NULL,
                         "run %s is %s; its evidence is sealed when it ends", id, state);
        goto out_run;
    }
    rc = tg_evidence_build(conn, id, &rec);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the evidence preview could not be built");
        goto out_run;
    }
    tg_resp_json_conditional(
        req,
        json_pack("{s:s, s:b, s:s, s:o}", "run_id", id, "sealed", 0, "detail",
                  "the run has ended; its record is sealed (hashed and signed) once the "
                  "logs of its pods are collected. This preview is neither.",
                  "record", rec),
        "private, no-cache");
out_run:
    json_decref(run);
}

/* The key history from the database (new reference), or NULL when it
 * cannot be read (still starting, or the database is away). */
static json_t *evidence_key_history(tg_req_t *req)
{
    char why[600];
    tg_app_t *app = tg_req_app(req);
    tg_db_conn_t *conn = NULL;
    json_t *keys = NULL;
    if (!tg_health_is_started(app->health, why, sizeof(why)) ||
        tg_db_checkout(app->pool, &conn) != TG_OK)
        return NULL;
    if (tg_evidence_keys_list(conn, &keys) != TG_OK)
        keys = NULL;
    tg_db_release(app->pool, conn);
    return keys;
}

static json_t *evidence_key_json(const tg_signer_t *s)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:b}", "key_id", tg_signer_key_id(s), "algorithm",
                     TG_SIGNER_ALGORITHM, "public_key_pem", tg_signer_public_pem(s),
                     "public_key_b64", tg_signer_public_b64(s), "ephemeral",
                     tg_signer_is_ephemeral(s));
}

void tg_api_evidence_public_key(tg_req_t *req)
{
    const tg_app_t *app = tg_req_app(req);
    const tg_signer_t *s = app->signer;
    if (!s) {
        tg_problem(req, TG_EUNAVAILABLE, NULL, "no evidence signing key is configured");
        return;
    }
    const char *want = tg_req_query(req, "key_id");
    json_t *history = evidence_key_history(req);
    if (want && *want) {
        json_t *found = NULL;
        size_t i;
        json_t *k;
        json_array_foreach(history, i, k) {
            const char *id = json_string_value(json_object_get(k, "key_id"));
            if (id && !strcmp(id, want))
                found = json_incref(k);
        }
        if (!found && !strcmp(want, tg_signer_key_id(s)))
            found = evidence_key_json(s);
        int unreadable = !history;
        json_decref(history);
        if (found)
            tg_resp_json(req, 200, found);
        else if (unreadable)
            tg_problem(req, TG_EUNAVAILABLE, NULL,
                       "the key history cannot be read now (key_id %s is not this gateway's "
                       "key); retry shortly",
                       want);
        else
            tg_problem(req, TG_ENOTFOUND, NULL, "no key with key_id %s ever sealed evidence here",
                       want);
        return;
    }
    json_t *out = evidence_key_json(s);
    if (!history) { /* at least the key in use */
        history = json_array();
        json_array_append_new(history, evidence_key_json(s));
    }
    json_object_set_new(out, "keys", history);
    tg_resp_json_conditional(req, out, "no-cache");
}
