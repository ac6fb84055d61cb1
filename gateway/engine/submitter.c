/* Outbox → Kubernetes API. */
#include "engine/submitter.h"

#include "core/run_state.h"
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "kube/verbs.h"
#include "render/metadata.h"
#include "render/render.h"
#include "tauyaml/diag.h"
#include "store/lifecycle.h"
#include "store/outbox.h"
#include "store/recovery.h"

#define SUBMIT_BACKOFF_BASE_MS 500
#define SUBMIT_BACKOFF_MAX_MS  60000
#define SUBMIT_NOTFOUND_TRIES  12 /* about 5 minutes of back-off */

static const tg_kube_gvr_t gvr_services = {"", "v1", "services", 1};

typedef enum { SUBMIT_OK = 0, SUBMIT_RETRY, SUBMIT_REJECTED } submit_outcome_e;

static const tg_kube_gvr_t *submit_gvr(const json_t *obj)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (!kind)
        return NULL;
    if (!strcmp(kind, "Job"))
        return &tg_kube_gvr_jobs;
    if (!strcmp(kind, "RayJob"))
        return &tg_kube_gvr_rayjobs;
    if (!strcmp(kind, "Service"))
        return &gvr_services;
    return NULL;
}

/* Will asking again help? Network trouble, timeouts, 429 and 5xx, and a
 * 409 Conflict (a write raced another), always; a 404 on create (the
 * namespace is being created by the Kueue reconciler, or the cluster is
 * still coming up) for the first SUBMIT_NOTFOUND_TRIES tries, after which
 * it is taken as the definitive answer it then is. */
static int submit_transient(const tg_kube_result_t *res, json_int_t tries)
{
    if (res->rc == TG_EUNAVAILABLE || res->rc == TG_ETIMEOUT || res->http_code == 0 ||
        res->http_code == 429 || res->http_code >= 500)
        return 1;
    if (res->reason == TG_KUBE_R_CONFLICT)
        return 1;
    return res->reason == TG_KUBE_R_NOT_FOUND && tries < SUBMIT_NOTFOUND_TRIES;
}

/* An object with our name exists: ours (same run id) or a stranger's? */
static int submit_is_ours(tg_kube_client_t *kube, const tg_kube_ref_t *ref, const char *run_id)
{
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    int ours = 0;
    if (tg_kube_get(kube, ref, &res) == TG_OK) {
        const char *label = json_string_value(json_object_get(
            json_object_get(json_object_get(res.body, "metadata"), "labels"), TG_LABEL_RUN_ID));
        ours = label && strcmp(label, run_id) == 0;
    }
    tg_kube_result_clean(&res);
    return ours;
}

static submit_outcome_e submit_create(tg_kube_client_t *kube, const json_t *row, char *why,
                                      size_t whylen)
{
    const char *run_id = json_string_value(json_object_get(row, "run_id"));
    json_int_t tries = json_integer_value(json_object_get(row, "tries"));
    size_t i;
    json_t *obj;
    json_array_foreach(json_object_get(row, "manifests"), i, obj) {
        const json_t *meta = json_object_get(obj, "metadata");
        const char *kind = json_string_value(json_object_get(obj, "kind"));
        const char *name = json_string_value(json_object_get(meta, "name"));
        tg_kube_ref_t ref = {.gvr = submit_gvr(obj),
                             .ns = json_string_value(json_object_get(meta, "namespace"))};
        if (!ref.gvr) {
            snprintf(why, whylen, "cannot create a %s", kind ? kind : "(no kind)");
            return SUBMIT_REJECTED;
        }
        tg_kube_result_t res;
        tg_kube_result_init(&res);
        tg_kube_create(kube, &ref, (json_t *)obj, NULL, &res);
        submit_outcome_e out = SUBMIT_OK;
        if (res.rc != TG_OK) {
            tg_kube_ref_t named = ref;
            named.name = name;
            if (res.reason == TG_KUBE_R_ALREADY_EXISTS && submit_is_ours(kube, &named, run_id)) {
                out = SUBMIT_OK; /* an earlier try made it */
            } else {
                snprintf(why, whylen, "%s %s/%s: %s", kind, ref.ns ? ref.ns : "", name ? name : "",
                         res.message ? res.message : "refused");
                out = submit_transient(&res, tries) ? SUBMIT_RETRY : SUBMIT_REJECTED;
            }
        }
        tg_kube_result_clean(&res);
        if (out != SUBMIT_OK)
            return out;
    }
    return SUBMIT_OK;
}

/* Delete an attempt's objects by the names recorded for that attempt (the
 * run's manifests may already be those of a later attempt). */
static submit_outcome_e submit_delete(tg_kube_client_t *kube, const json_t *row, char *why,
                                      size_t whylen)
{
    const char *ns = json_string_value(json_object_get(row, "namespace"));
    const char *name = json_string_value(json_object_get(row, "object_name"));
    const char *kind = json_string_value(json_object_get(row, "object_kind"));
    if (!ns || !name || !kind)
        return SUBMIT_OK; /* never rendered: nothing in the cluster */
    char service[96];
    snprintf(service, sizeof(service), "%s-headless", name);
    const struct {
        const tg_kube_gvr_t *gvr;
        const char *name;
    } targets[] = {
        {!strcmp(kind, "RayJob") ? &tg_kube_gvr_rayjobs : &tg_kube_gvr_jobs, name},
        {&gvr_services, service}, /* multi-node torchrun's rendezvous Service */
    };
    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
        tg_kube_ref_t ref = {.gvr = targets[i].gvr, .ns = ns, .name = targets[i].name};
        tg_kube_result_t res;
        tg_kube_result_init(&res);
        tg_kube_delete(kube, &ref, TG_KUBE_PROPAGATION_BACKGROUND, -1, NULL, &res);
        int transient =
            res.rc != TG_OK && res.reason != TG_KUBE_R_NOT_FOUND && submit_transient(&res, 0);
        if (transient)
            snprintf(why, whylen, "deleting %s: %s", ref.name, res.message ? res.message : "");
        tg_kube_result_clean(&res);
        if (transient)
            return SUBMIT_RETRY;
    }
    return SUBMIT_OK;
}

/* Render a later attempt from the stored resolved config and files, with the
 * latest checkpoint as TAU_RESUME_FROM; store its manifests as the run's. On
 * success *manifests is a new reference. */
static submit_outcome_e submit_render_retry(tg_db_conn_t *conn, const json_t *row,
                                            json_t **manifests, char *why, size_t whylen)
{
    const char *run_id = json_string_value(json_object_get(row, "run_id"));
    int attempt = (int)json_integer_value(json_object_get(row, "attempt"));
    json_t *in = NULL;
    submit_outcome_e out = SUBMIT_RETRY;
    tg_tauyaml_files_t files = {0};
    tg_tauyaml_diag_t diag;
    tg_tauyaml_diag_init(&diag, NULL, 8);
    if (tg_store_recovery_render_inputs(conn, run_id, attempt, &in) != TG_OK) {
        snprintf(why, whylen, "the run's inputs could not be read");
        goto out;
    }
    json_t *resolved = json_deep_copy(json_object_get(in, "resolved"));
    const char *ck = json_string_value(json_object_get(in, "latest_checkpoint"));
    if (ck) /* resume from what the last attempt saved */
        json_object_set_new(json_object_get(resolved, "resilience"), "checkpoint_path",
                            json_string(ck));
    out = SUBMIT_REJECTED;
    if (tg_tauyaml_files_from_json(json_object_get(in, "files"), &files, &diag) != TG_OK) {
        snprintf(why, whylen, "the run's stored files could not be decoded");
    } else {
        tg_render_opts_t opts = {
            .run_id = run_id,
            .attempt = (unsigned)attempt,
            .retry_reason = json_string_value(json_object_get(in, "retry_reason")),
            .config_hash = json_string_value(json_object_get(in, "config_hash"))};
        if (tg_render_manifests(resolved, NULL, &files, &opts, manifests, why, whylen) == TG_OK)
            out = tg_store_recovery_set_manifests(conn, run_id, *manifests) == TG_OK ? SUBMIT_OK
                                                                                     : SUBMIT_RETRY;
    }
    json_decref(resolved);
out:
    tg_tauyaml_files_clean(&files);
    tg_tauyaml_diag_clean(&diag);
    json_decref(in);
    return out;
}

static long submit_backoff_ms(json_int_t tries)
{
    long d = SUBMIT_BACKOFF_BASE_MS;
    for (json_int_t i = 0; i < tries && d < SUBMIT_BACKOFF_MAX_MS; i++)
        d *= 2;
    return d < SUBMIT_BACKOFF_MAX_MS ? d : SUBMIT_BACKOFF_MAX_MS;
}

/* Record the outcome in the same transaction that claimed the row. A run
 * whose objects cannot be created yet says why in its reason while it
 * waits (no event: the words change, not the state). */
static tg_rc_e submit_settle(tg_db_conn_t *conn, const json_t *row, submit_outcome_e out,
                             const char *why)
{
    long id = (long)json_integer_value(json_object_get(row, "id"));
    const char *run_id = json_string_value(json_object_get(row, "run_id"));
    int attempt = (int)json_integer_value(json_object_get(row, "attempt"));
    int create = strcmp(json_string_value(json_object_get(row, "action")), "delete") != 0;
    if (out == SUBMIT_RETRY) {
        json_int_t tries = json_integer_value(json_object_get(row, "tries"));
        long delay = submit_backoff_ms(tries);
        tg_log_warn("engine", "run %s: %s; trying again in %ld ms", run_id, why, delay);
        tg_rc_e rc = tg_store_outbox_retry(conn, id, delay, why);
        if (rc == TG_OK && create) {
            char words[768];
            snprintf(words, sizeof(words), "waiting for the cluster: %s; trying again", why);
            rc = tg_store_run_words(conn, run_id, "Accepted", "WaitingForCluster", words);
        }
        return rc;
    }
    tg_rc_e rc = tg_store_outbox_done(conn, id);
    if (rc != TG_OK || !create)
        return rc;
    int applied = 0;
    if (out == SUBMIT_REJECTED) {
        tg_log_error("engine", "run %s: the cluster refused its objects: %s", run_id, why);
        tg_event_t ev = {
            .state = "Failed", .reason = "SubmissionRejected", .message = why, .source = "engine"};
        return tg_store_run_transition_locked(conn, run_id, attempt, &ev, NULL, &applied);
    }
    tg_event_t ev = {.reason = "Created",
                     .message = "the run's objects were created in the cluster",
                     .source = "engine"};
    rc = tg_store_event_append(conn, run_id, &ev);
    if (rc == TG_OK) /* it no longer waits for the cluster */
        rc = tg_store_run_waited(conn, run_id, "Created",
                                 "the run's objects are in the cluster; waiting for Kueue");
    return rc;
}

int tg_submitter_step(tg_db_pool_t *pool, tg_kube_client_t *kube)
{
    tg_db_conn_t *conn = NULL;
    if (tg_db_checkout(pool, &conn) != TG_OK)
        return -1;
    json_t *rows = NULL;
    int did = 0;
    tg_rc_e rc = tg_db_begin(conn);
    if (rc == TG_OK)
        rc = tg_store_outbox_claim(conn, 1, &rows);
    if (rc == TG_OK && json_array_size(rows) == 1) {
        json_t *row = json_array_get(rows, 0);
        const char *action = json_string_value(json_object_get(row, "action"));
        const char *state = json_string_value(json_object_get(row, "state"));
        int ended = tg_run_state_ended(state);
        char why[512] = "";
        submit_outcome_e out = SUBMIT_OK;
        if (strcmp(action, "delete") != 0 && ended) {
            /* cancelled (or ended) before it reached the cluster: nothing to do */
            rc = tg_store_outbox_done(conn, (long)json_integer_value(json_object_get(row, "id")));
        } else {
            if (!strcmp(action, "retry")) {
                json_t *manifests = NULL;
                out = submit_render_retry(conn, row, &manifests, why, sizeof(why));
                if (out == SUBMIT_OK)
                    json_object_set_new(row, "manifests", manifests);
            }
            if (out == SUBMIT_OK)
                out = strcmp(action, "delete") ? submit_create(kube, row, why, sizeof(why))
                                               : submit_delete(kube, row, why, sizeof(why));
            rc = submit_settle(conn, row, out, why);
        }
        did = 1;
    }
    if (rc == TG_OK)
        rc = tg_db_commit(conn);
    if (rc != TG_OK) {
        tg_db_rollback(conn);
        tg_log_warn("engine", "submitter: the database step failed; will retry");
    }
    json_decref(rows);
    tg_db_release(pool, conn);
    return rc == TG_OK ? did : -1;
}
