/* Runs in PostgreSQL: submission (run, files, first attempt, first event and
 * outbox row in one transaction, with Idempotency-Key handling) and reads. */
#ifndef TG_STORE_RUNS_H
#define TG_STORE_RUNS_H

#include <jansson.h>
#include <stddef.h>

#include "store/audit.h"
#include "store/pool.h"

typedef struct {
    const char *name;
    const unsigned char *data;
    size_t len;
} tg_run_file_t;

typedef struct {
    const char *id; /* a v4 UUID chosen by the caller */
    const char *workspace;
    const char *name;
    const char *owner;
    const char *engine; /* "job" | "rayjob" */
    const char *spec_text;
    /* the resolved config as JSON text (the canonical text its config hash
     * was computed over), stored as it is */
    const char *resolved_text;
    /* the rendered manifests as JSON text, stored as they are: rendering
     * writes text, and a jansson tree of them would only be dumped again */
    const char *manifests_text;
    /* the workload object among them (tg_render_workload_ref), for the
     * first attempt's row */
    const char *object_ns, *object_name, *object_kind;
    const char *config_hash;
    const char *idempotency_key; /* NULL when the client sent none */
    const char *request_hash;    /* sha256 of the request, with a key */
    const tg_run_file_t *files;
    size_t nfiles;
    /* the policy decisions as a JSON array text (policy/eval.h) and the
     * policy digest; NULL stores none */
    const char *policy_decisions_text, *policy_digest;
    /* the submission's audit row, stored with the run (one commit); NULL
     * when the request is audited on its own */
    const tg_audit_entry_t *audit;
} tg_run_new_t;

/* Store a new run, or find the one an earlier request with the same
 * Idempotency-Key created. *out gets the run (new reference); *existed is 1
 * when it was found rather than created. TG_ECONFLICT when the key was used
 * with a different request. Runs its own transaction: the connection must
 * not be in one. */
tg_rc_e tg_store_run_create(tg_db_conn_t *conn, const tg_run_new_t *in, json_t **out,
                            int *existed) TG_MUSTCHECK;

/* Store several runs in one transaction (all or none). runs[i] gets each
 * run (new references); a run whose Idempotency-Key was already used with
 * the same request is returned as it was. TG_ECONFLICT when a key was used
 * with a different request. */
tg_rc_e tg_store_runs_create_batch(tg_db_conn_t *conn, const tg_run_new_t *in, size_t n,
                                   json_t **runs) TG_MUSTCHECK;

/* The public view of a run (no spec text or manifests). TG_ENOTFOUND when
 * absent. When `workspace` is not NULL the run must belong to it. */
tg_rc_e tg_store_run_get(tg_db_conn_t *conn, const char *id, json_t **out) TG_MUSTCHECK;

/* The same view as JSON text, straight from PostgreSQL (compact), with the
 * run's workspace: for answering a read without a parse and a serialise.
 * Both strings are the caller's to free. */
tg_rc_e tg_store_run_get_text(tg_db_conn_t *conn, const char *id, char **workspace,
                              char **json) TG_MUSTCHECK;

#endif
