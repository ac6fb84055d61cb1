/* The evidence sealer (see evidence.h). */
#include "engine/evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "core/ids.h"
#include "core/log.h"
#include "engine/watcher.h"
#include "kube/verbs.h"
#include "store/evidence.h"

#define EVIDENCE_RETRY_S         60
#define EVIDENCE_CLUSTER_RETRY_S 5    /* the cluster did not answer: ask again soon */
#define EVIDENCE_CLUSTER_MS      5000 /* the most one Workload lookup may take */

static int evidence_ended(const char *state)
{
    return state &&
           (!strcmp(state, "Succeeded") || !strcmp(state, "Failed") || !strcmp(state, "Cancelled"));
}

typedef struct {
    const char *owner; /* the attempt's Job or RayJob */
    json_t *found;     /* its Workload (new reference) */
} evidence_wl_t;

static int evidence_wl_match(json_t *wl, void *arg)
{
    evidence_wl_t *m = arg;
    size_t i;
    json_t *ref;
    json_array_foreach(json_object_get(json_object_get(wl, "metadata"), "ownerReferences"), i, ref)
    {
        const char *name = json_string_value(json_object_get(ref, "name"));
        if (name && !strcmp(name, m->owner)) {
            m->found = json_incref(wl);
            return 1;
        }
    }
    return 0;
}

/* The Workload and Job watches run on separate threads, so a run can end
 * (its Job Complete) before its Workload's admission is seen, and the watcher
 * drops a Workload seen after the end: the record would then say nothing of
 * the flavors the cluster assigned. Before sealing, read the Workload of each
 * attempt that ran without queue facts from the cluster and record them; a
 * Workload that is gone gets a note saying so, and the run is sealed with what
 * is known. *retry: 1 when the cluster did not answer and the run ended less
 * than log_grace_s ago (seal it a little later rather than without facts). */
static tg_rc_e evidence_queue_facts(tg_db_conn_t *conn, tg_kube_client_t *kube, const char *run_id,
                                    long log_grace_s, int *retry)
{
    json_t *lacking = NULL;
    *retry = 0;
    tg_rc_e rc = tg_evidence_lacking_queue(conn, run_id, log_grace_s, &lacking);
    size_t i;
    json_t *a;
    json_array_foreach(lacking, i, a)
    {
        if (rc != TG_OK || *retry)
            break;
        const char *ns = json_string_value(json_object_get(a, "namespace"));
        int attempt = (int)json_integer_value(json_object_get(a, "attempt"));
        evidence_wl_t m = {.owner = json_string_value(json_object_get(a, "object_name"))};
        tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_workloads, .ns = ns};
        tg_kube_list_opts_t o = {.limit = 100, .timeout_ms = EVIDENCE_CLUSTER_MS};
        tg_kube_result_t res;
        tg_kube_result_init(&res);
        tg_rc_e krc = tg_kube_list_all(kube, &ref, &o, evidence_wl_match, &m, NULL, 0, &res);
        tg_kube_result_clean(&res);
        json_t *facts = NULL;
        if (m.found)
            facts = tg_watcher_admission(m.found);
        else if (krc == TG_OK || krc == TG_ENOTFOUND)
            facts = json_pack("{s:s}", "note",
                              "the Workload was gone when the evidence was sealed and its "
                              "admission had not been seen: flavors unknown");
        else if (json_is_true(json_object_get(a, "within_grace")))
            *retry = 1;
        else
            facts = json_pack("{s:s}", "note",
                              "the cluster could not be read when the evidence was sealed and "
                              "the Workload's admission had not been seen: flavors unknown");
        if (facts) {
            rc = tg_evidence_merge_queue(conn, run_id, attempt, facts);
            tg_log_info("evidence", "run %s attempt %d: %s", run_id, attempt,
                        m.found ? "admission read from its Workload"
                                : json_string_value(json_object_get(facts, "note")));
        }
        json_decref(facts);
        json_decref(m.found);
    }
    json_decref(lacking);
    return rc;
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
static int evidence_step(tg_db_conn_t *conn, tg_kube_client_t *kube, const tg_signer_t *signer,
                         long log_grace_s)
{
    char run_id[37] = "", err[256] = "";
    int inserted = 0, retry = 0;
    tg_rc_e rc = tg_db_begin(conn);
    if (rc == TG_OK)
        rc = tg_evidence_claim(conn, log_grace_s, run_id);
    if (rc == TG_ENOTFOUND) {
        tg_db_rollback(conn);
        return 0;
    }
    if (rc == TG_OK && kube)
        rc = evidence_queue_facts(conn, kube, run_id, log_grace_s, &retry);
    if (rc == TG_OK && retry) {
        tg_db_rollback(conn);
        if (tg_evidence_defer(conn, run_id, EVIDENCE_CLUSTER_RETRY_S,
                              "the cluster could not be read for the Workload's admission") !=
            TG_OK)
            return -1;
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

int tg_evidence_seal_pending(tg_db_pool_t *pool, tg_kube_client_t *kube, const tg_signer_t *signer,
                             long log_grace_s)
{
    if (!tg_signer_can_sign(signer))
        return 0;
    tg_db_conn_t *conn = NULL;
    if (tg_db_checkout(pool, &conn) != TG_OK)
        return -1;
    int sealed = 0;
    for (int i = 0; i < TG_EVIDENCE_BATCH; i++) {
        int did = evidence_step(conn, kube, signer, log_grace_s);
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
