/* The evidence sealer (see evidence.h). */
#include "engine/evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "core/ids.h"
#include "core/log.h"
#include "store/evidence.h"

#define EVIDENCE_RETRY_S 60

static int evidence_ended(const char *state)
{
    return state &&
           (!strcmp(state, "Succeeded") || !strcmp(state, "Failed") || !strcmp(state, "Cancelled"));
}

/* Build, seal and store one run's record inside the caller's transaction.
 * *inserted: 1 when this call stored it, 0 when a record was already there. */
static tg_rc_e evidence_seal_locked(tg_db_conn_t *conn, const tg_signer_t *signer,
                                    const char *run_id, int *inserted, char *err, size_t errlen)
{
    json_t *rec = NULL;
    tg_evidence_row_t row;
    memset(&row, 0, sizeof(row));
    *inserted = 0;
    tg_rc_e rc = tg_evidence_build(conn, run_id, &rec);
    if (rc != TG_OK) {
        snprintf(err, errlen, "the record cannot be built (%s)", tg_rc_slug(rc));
        goto out;
    }
    if (!evidence_ended(json_string_value(json_object_get(json_object_get(rec, "run"), "state")))) {
        snprintf(err, errlen, "the run has not ended");
        rc = TG_ECONFLICT;
        goto out;
    }
    snprintf(row.run_id, sizeof(row.run_id), "%s", run_id);
    snprintf(row.key_id, sizeof(row.key_id), "%s", tg_signer_key_id(signer));
    snprintf(row.algorithm, sizeof(row.algorithm), "%s", TG_SIGNER_ALGORITHM);
    tg_time_rfc3339(tg_now_wall_us(), row.sealed_at, sizeof(row.sealed_at));
    json_object_set_new(rec, "seal",
                        json_pack("{s:s, s:s, s:s}", "algorithm", row.algorithm, "key_id",
                                  row.key_id, "sealed_at", row.sealed_at));
    row.canonical = tg_evidence_canonical(rec, &row.canonical_len);
    if (!row.canonical) {
        snprintf(err, errlen, "the record cannot be encoded as JSON");
        rc = TG_EUNPROCESSABLE;
        goto out;
    }
    tg_sha256_hex(row.canonical, row.canonical_len, row.sha256);
    rc = tg_signer_sign(signer, row.canonical, row.canonical_len, &row.signature);
    if (rc != TG_OK) {
        snprintf(err, errlen, "the record cannot be signed");
        goto out;
    }
    rc = tg_evidence_insert(conn, &row, inserted);
    if (rc == TG_OK)
        rc = tg_evidence_dequeue(conn, run_id);
    if (rc != TG_OK)
        snprintf(err, errlen, "the record cannot be stored (%s)", tg_rc_slug(rc));
    else if (*inserted)
        tg_log_info("evidence", "run %s sealed: sha256 %s, key %s, %zu bytes", run_id, row.sha256,
                    row.key_id, row.canonical_len);
out:
    json_decref(rec);
    tg_evidence_row_clean(&row);
    return rc;
}

tg_rc_e tg_evidence_seal_run(tg_db_conn_t *conn, const tg_signer_t *signer, const char *run_id)
{
    char err[256] = "";
    int inserted = 0;
    tg_rc_e rc = tg_db_begin(conn);
    if (rc != TG_OK)
        return rc;
    rc = evidence_seal_locked(conn, signer, run_id, &inserted, err, sizeof(err));
    if (rc == TG_OK)
        rc = tg_db_commit(conn);
    if (rc != TG_OK)
        tg_db_rollback(conn);
    return rc;
}

/* Claim and seal one due run. RET: 1 sealed, 0 none due, -1 database gone. */
static int evidence_step(tg_db_conn_t *conn, const tg_signer_t *signer, long log_grace_s)
{
    char run_id[37] = "", err[256] = "";
    int inserted = 0;
    tg_rc_e rc = tg_db_begin(conn);
    if (rc == TG_OK)
        rc = tg_evidence_claim(conn, log_grace_s, run_id);
    if (rc == TG_ENOTFOUND) {
        tg_db_rollback(conn);
        return 0;
    }
    if (rc == TG_OK) {
        rc = evidence_seal_locked(conn, signer, run_id, &inserted, err, sizeof(err));
        if (rc == TG_OK)
            rc = tg_db_commit(conn);
    }
    if (rc == TG_OK)
        return 1;
    tg_db_rollback(conn);
    if (rc == TG_EUNAVAILABLE)
        return -1;
    if (!*run_id) {
        tg_log_warn("evidence", "cannot look for runs to seal (%s)", tg_rc_slug(rc));
        return -1;
    }
    /* Something about this run (not the database) is wrong: try it again
     * later rather than on every tick. */
    tg_log_warn("evidence", "run %s not sealed: %s; retrying in %d s", run_id,
                *err ? err : tg_rc_slug(rc), EVIDENCE_RETRY_S);
    if (tg_evidence_defer(conn, run_id, EVIDENCE_RETRY_S, *err ? err : tg_rc_slug(rc)) != TG_OK)
        return -1;
    return 0;
}

int tg_evidence_seal_pending(tg_db_pool_t *pool, const tg_signer_t *signer, long log_grace_s)
{
    if (!tg_signer_can_sign(signer))
        return 0;
    tg_db_conn_t *conn = NULL;
    if (tg_db_checkout(pool, &conn) != TG_OK)
        return -1;
    int sealed = 0;
    for (int i = 0; i < TG_EVIDENCE_BATCH; i++) {
        int did = evidence_step(conn, signer, log_grace_s);
        if (did < 0) {
            sealed = sealed ? sealed : -1;
            break;
        }
        if (did == 0)
            break;
        sealed++;
    }
    tg_db_release(pool, conn);
    return sealed;
}
