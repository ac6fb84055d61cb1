/* The run change log (migration 0020): reading it in commit order, exactly.
 *
 * Triggers on runs append one row per new run and per change of a run's
 * state, reason or attempt; ids come from a sequence. An id is handed out
 * before its transaction commits, so id 11 can be visible while id 10 is
 * still in flight: a reader that moved past 11 would lose 10. Readers
 * therefore stop at a horizon below which every id is final (committed and
 * visible, or rolled back for good):
 *
 *   1. read S, the sequence's last value, then (next statement) take X, a
 *      transaction id of the reader's own that commits at once: every
 *      transaction that had taken an id <= S by then had a transaction id
 *      (the triggers run after the row is written, so the writer holds
 *      one), assigned before X, so below it;
 *   2. once a later snapshot's xmin is >= X, each of those transactions has
 *      ended, so every id <= S is final: S becomes the horizon.
 *
 * X must be assigned, not read off a snapshot: a snapshot's xmax is one past
 * the newest *completed* transaction, so a writer that began after it and
 * is still open is below no snapshot bound at all (issue #18: a change was
 * skipped when an older transaction committed the next id first). Taking X
 * costs one transaction id per look that finds new changes (a few a second
 * at most, per replica with streams open).
 *
 * One pending (S, X) pair is kept; when no older transaction is running,
 * step 2 holds at once. The horizon lags the newest change by one call (the
 * notifier's tick) plus the longest write transaction still open. It is a
 * property of the database, not of a replica: a client may resume on any
 * replica with the last id it saw.
 *
 * Ownership: fetched rows are the caller's (tg_store_run_changes_free). */
#ifndef TG_STORE_RUN_CHANGES_H
#define TG_STORE_RUN_CHANGES_H

#include <stddef.h>

#include "store/pool.h"

typedef struct tg_run_changes_horizon_s {
    long long horizon; /* every change id <= horizon is final; -1 before the first advance */
    long long pending_seq, pending_xid;
    int pending;
} tg_run_changes_horizon_t;

void tg_run_changes_horizon_init(tg_run_changes_horizon_t *h);
/* Move h->horizon forward as far as the database allows (one to four short
 * statements, each its own transaction; `conn` must not be in one). */
tg_rc_e tg_store_run_changes_advance(tg_db_conn_t *conn, tg_run_changes_horizon_t *h) TG_MUSTCHECK;

/* The highest id pruned so far (0 when none): a resume below it has lost
 * changes. */
tg_rc_e tg_store_run_changes_pruned(tg_db_conn_t *conn, long long *upto) TG_MUSTCHECK;

typedef struct tg_run_change_row_s {
    long long id;
    char *json; /* a RunChange (openapi.yaml), compact */
} tg_run_change_row_t;

/* The workspace's changes with after < id <= upto, oldest first, at most
 * `limit`. */
tg_rc_e tg_store_run_changes_fetch(tg_db_conn_t *conn, const char *workspace, long long after,
                                   long long upto, int limit, tg_run_change_row_t **rows,
                                   size_t *n) TG_MUSTCHECK;
void tg_store_run_changes_free(tg_run_change_row_t *rows, size_t n);

/* Delete up to `batch` of the oldest changes older than retention_s and
 * record the highest id deleted. *deleted: rows removed. */
tg_rc_e tg_store_run_changes_prune(tg_db_conn_t *conn, long retention_s, int batch,
                                   long *deleted) TG_MUSTCHECK;

#endif
