/* Log collection storage: claims on pod containers (table log_streams,
 * migration 0004), chunk writes with the metrics and checkpoints found in
 * them, resume points, completion, retention.
 *
 * Claims are leases: a replica owns a container while claimed_by is its id
 * and claimed_until lies in the future (database clock). Every chunk write
 * re-checks and extends the lease in the same transaction, so a replica that
 * lost its lease can never store a chunk, and the UNIQUE (run, attempt, pod,
 * container, seq) key stops two writers from storing the same position.
 *
 * Ownership: strings in tg_log_target_t are borrowed. jansson arrays passed
 * in are borrowed. Results handed out say who frees them. */
#ifndef TG_STORE_LOGS_H
#define TG_STORE_LOGS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/mem.h"
#include "store/pool.h"

/* One container of one pod of one attempt. */
typedef struct tg_log_target_s {
    char run_id[40];
    int attempt;
    char *namespace_; /* owned by whoever filled it (tg_log_targets_free) */
    char *pod;
    char *uid;
    char *container;
    int failures; /* earlier failed follows (for the back-off) */
} tg_log_target_t;

/* Containers whose logs are not complete and that nobody holds: pods not
 * Pending and not log_done, container not done, lease free. At most
 * `limit`. *out is an array the caller frees with tg_log_targets_free. */
tg_rc_e tg_store_log_candidates(tg_db_conn_t *conn, int limit, tg_log_target_t **out,
                                size_t *n) TG_MUSTCHECK;
void tg_log_targets_free(tg_log_target_t *t, size_t n);
/* Deep copy of one target into *dst. */
void tg_log_target_copy(tg_log_target_t *dst, const tg_log_target_t *src);
void tg_log_target_clean(tg_log_target_t *t);

/* Take the lease for `owner` for lease_s seconds. RET: TG_OK when taken,
 * TG_ECONFLICT when someone else holds it or the container is done. */
tg_rc_e tg_store_log_claim(tg_db_conn_t *conn, const tg_log_target_t *t, const char *owner,
                           long lease_s) TG_MUSTCHECK;
/* Extend the leases of `targets` (a JSON array of {namespace, pod, uid,
 * container}; borrowed) held by owner. */
tg_rc_e tg_store_log_renew(tg_db_conn_t *conn, const char *owner, const json_t *targets,
                           long lease_s) TG_MUSTCHECK;
/* Give the lease back. done: the container's log is complete (and the pod's
 * log_done is set once all its containers are). Otherwise the container may
 * be claimed again after retry_s seconds; failed counts a failure with
 * `error` (may be NULL; never a secret). */
tg_rc_e tg_store_log_release(tg_db_conn_t *conn, const tg_log_target_t *t, const char *owner,
                             int done, int failed, const char *error, long retry_s) TG_MUSTCHECK;

/* The newest stored chunks of the target's container (newest first, at most
 * `max`), for the resume rule, and the highest seq (0 when none).
 * contents[i] are malloc'd strings (lens[i] bytes): free each, then the
 * arrays. */
tg_rc_e tg_store_log_tail(tg_db_conn_t *conn, const tg_log_target_t *t, int max, char ***contents,
                          size_t **lens, size_t *n, long *last_seq) TG_MUSTCHECK;

/* The pod's phase ("Pending", "Running", "Succeeded", "Failed"...) into out;
 * TG_ENOTFOUND when the row is gone. */
tg_rc_e tg_store_log_pod_phase(tg_db_conn_t *conn, const tg_log_target_t *t, char *out,
                               size_t outlen) TG_MUSTCHECK;

typedef struct tg_log_chunk_in_s {
    long seq;
    const char *content; /* valid UTF-8 (borrowed) */
    size_t len;
    long lines;
    const char *first_at; /* RFC 3339 or NULL */
    const char *last_at;
    const json_t *metrics;     /* [{name, step, at, value, raw}] or NULL (borrowed) */
    const json_t *checkpoints; /* [{path, step, at}] or NULL (borrowed) */
} tg_log_chunk_in_t;

/* Store one chunk in one transaction: check and extend the lease, insert the
 * chunk, its metrics and checkpoints (upsert on path), add its bytes to
 * run_pods.log_bytes. RET: TG_OK; TG_ECONFLICT when the lease was lost or
 * the seq is taken (someone else wrote: stop and resume); TG_EUNAVAILABLE
 * and others for database trouble (the batch may be retried). */
tg_rc_e tg_store_log_chunk_put(tg_db_conn_t *conn, const tg_log_target_t *t, const char *owner,
                               long lease_s, const tg_log_chunk_in_t *in) TG_MUSTCHECK;

/* Delete chunks older than their workspace's log_retention_days, except
 * those of pods whose logs are still being collected. Works in batches.
 * *deleted gets the number of chunks removed. */
tg_rc_e tg_store_log_prune(tg_db_conn_t *conn, long *deleted) TG_MUSTCHECK;

#endif
