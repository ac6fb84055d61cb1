/* The evidence sealer (see evidence.h). */
#include "evidence/sealer.h"

#include "core/run_state.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/monotonic.h"
#include "core/digest.h"
#include "core/ids.h"
#include "core/log.h"
#include "engine/watcher.h"
#include "store/evidence.h"
#include "store/evidence_keys.h"

#define EVIDENCE_RETRY_S         60
#define EVIDENCE_CLUSTER_RETRY_S 5 /* the Workload cache is not listed yet: ask again soon */

/* The signer whose key a committed seal recorded in the key history. */
static _Atomic(const tg_signer_t *) evidence_key_recorded;

/* The Workload and Job watches are separate, so a run can end (its Job
 * Complete) before its Workload's admission is applied, and the watcher
 * drops a Workload seen after the end: the record would then say nothing of
 * the flavors the cluster assigned. Before sealing, find the Workload of
 * each attempt that ran without queue facts (tg_observer_find_workload: the
 * cache, else the cluster by label) and record its admission; a Workload
 * that does not exist gets a note saying so, and the run is sealed with
 * what is known. *retry: 1 when the cluster cannot tell now and the run
 * ended less than log_grace_s ago (seal it a little later rather than
 * without facts). */
static tg_rc_e evidence_queue_facts(tg_db_conn_t *conn, tg_observer_t *obs, const char *run_id,
                                    long log_grace_s, int *retry)
{
    json_t *lacking = NULL;
    *retry = 0;
    tg_rc_e rc = tg_evidence_lacking_queue(conn, run_id, log_grace_s, &lacking);
    size_t i;
    json_t *a;
    json_array_foreach(lacking, i, a) {
        if (rc != TG_OK || *retry)
            break;
        int attempt = (int)json_integer_value(json_object_get(a, "attempt"));
        json_t *wl = NULL;
        int found =
            tg_observer_find_workload(obs, json_string_value(json_object_get(a, "namespace")),
                                      json_string_value(json_object_get(a, "object_name")), &wl);
        json_t *facts = NULL;
        if (found == 1)
            facts = tg_watcher_admission(wl);
        else if (!obs)
            facts = json_pack("{s:s}", "note",
                              "no cluster was configured when the evidence was sealed and the "
                              "Workload's admission had not been seen: flavors unknown");
        else if (found == 0)
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
                        wl ? "admission read from its Workload"
                           : json_string_value(json_object_get(facts, "note")));
        }
        json_decref(facts);
        json_decref(wl);
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
    if (!tg_run_state_ended(
            json_string_value(json_object_get(json_object_get(rec, "run"), "state")))) {
        snprintf(err, errlen, "the run has not ended");
        rc = TG_ECONFLICT;
        goto out;
    }
    snprintf(row.run_id, sizeof(row.run_id), "%s", run_id);
    snprintf(row.key_id, sizeof(row.key_id), "%s", tg_signer_key_id(signer));
    snprintf(row.algorithm, sizeof(row.algorithm), "%s", TG_SIGNER_ALGORITHM);
    tg_time_rfc3339(tg_now_wall_us(), row.sealed_at, sizeof(row.sealed_at));
    json_t *seal = json_pack("{s:s, s:s, s:s}", "algorithm", row.algorithm, "key_id", row.key_id,
                             "sealed_at", row.sealed_at);
    if (tg_signer_is_ephemeral(signer)) /* say so: its private half died with its process */
        json_object_set_new(seal, "ephemeral", json_true());
    json_object_set_new(rec, "seal", seal);
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
    /* the key history holds every key that sealed: recorded with this
     * process's first record (then never again, so replicas sealing at
     * once do not queue on the key's row) */
    if (atomic_load(&evidence_key_recorded) != signer)
        rc = tg_evidence_key_register(conn, signer);
    if (rc == TG_OK)
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
    else
        atomic_store(&evidence_key_recorded, signer);
    return rc;
}

/* Claim and seal one due run. RET: 1 sealed (or put back to wait for its
 * logs), 0 none due, -1 database gone. */
static int evidence_step(tg_db_conn_t *conn, tg_observer_t *obs, const tg_signer_t *signer,
                         long log_grace_s)
{
    char run_id[37] = "", err[256] = "";
    int inserted = 0, retry = 0, logs_pending = 0;
    long grace_s = 0, wait_s = 0;
    tg_rc_e rc = tg_db_begin(conn);
    if (rc == TG_OK)
        rc = tg_evidence_claim(conn, log_grace_s, run_id, &grace_s, &logs_pending);
    if (rc == TG_ENOTFOUND) {
        tg_db_rollback(conn);
        return 0;
    }
    if (logs_pending)
        wait_s = grace_s;
    /* pods whose last events are still being applied: their rows (and so
     * the logs to wait for) may not all be in the store yet */
    else if (grace_s > 0 && tg_observer_pods_unsettled(obs, run_id))
        wait_s = 1;
    if (rc == TG_OK && wait_s > 0) {
        rc = tg_evidence_wait(conn, run_id, wait_s, logs_pending);
        if (rc == TG_OK)
            rc = tg_db_commit(conn);
        if (rc == TG_OK)
            return 1;
    }
    if (rc == TG_OK)
        rc = evidence_queue_facts(conn, obs, run_id, log_grace_s, &retry);
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
        if (rc == TG_OK)
            atomic_store(&evidence_key_recorded, signer);
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

int tg_evidence_seal_pending(tg_db_pool_t *pool, tg_observer_t *obs, const tg_signer_t *signer,
                             long log_grace_s)
{
    if (!tg_signer_can_sign(signer))
        return 0;
    tg_db_conn_t *conn = NULL;
    if (tg_db_checkout(pool, &conn) != TG_OK)
        return -1;
    int sealed = 0;
    for (int i = 0; i < TG_EVIDENCE_BATCH; i++) {
        int did = evidence_step(conn, obs, signer, log_grace_s);
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

/* ---- the sealer thread ------------------------------------------------------ */

struct tg_sealer_s {
    tg_db_pool_t *pool;
    tg_observer_t *obs;
    const tg_signer_t *signer;
    long log_grace_s;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;
};

static void *evidence_sealer_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tg-seal");
    tg_sealer_t *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        pthread_mutex_unlock(&s->lock);
        int sealed = tg_evidence_seal_pending(s->pool, s->obs, s->signer, s->log_grace_s);
        pthread_mutex_lock(&s->lock);
        if (sealed > 0 || s->stop)
            continue; /* more may be due */
        struct timespec until = tg_mono_deadline_ms(1000);
        pthread_cond_timedwait(&s->wake, &s->lock, &until);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

tg_sealer_t *tg_evidence_sealer_start(tg_db_pool_t *pool, tg_observer_t *obs,
                                      const tg_signer_t *signer, long log_grace_s)
{
    tg_sealer_t *s = tg_xcalloc(1, sizeof(*s));
    s->pool = pool;
    s->obs = obs;
    s->signer = signer;
    s->log_grace_s = log_grace_s;
    pthread_mutex_init(&s->lock, NULL);
    tg_cond_init_monotonic(&s->wake);
    if (pthread_create(&s->thread, NULL, evidence_sealer_main, s) != 0) {
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return NULL;
    }
    return s;
}

void tg_evidence_sealer_stop(tg_sealer_t *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
