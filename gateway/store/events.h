/* A run's history: append-only events, each carrying the sha256 of the one
 * before it, so editing or deleting a stored event breaks the chain.
 *
 *   hash = sha256(prev_hash + "\n" + canonical JSON of
 *                 {run_id, seq, at, state, reason, message, source, data})
 *
 * where prev_hash is "" for the first event, canonical JSON has sorted keys
 * and no spaces, and `at` is RFC 3339 UTC with microseconds. */
#ifndef TG_STORE_EVENTS_H
#define TG_STORE_EVENTS_H

#include <jansson.h>

#include "store/pool.h"

typedef struct {
    const char *state;   /* the run state after the event, or NULL */
    const char *reason;  /* machine-friendly reason (Kueue's, Job's...), or NULL */
    const char *message; /* plain words, or NULL */
    const char *source;  /* "api", "kueue", "job", "pod", "user", "engine"... */
    const json_t *data;  /* borrowed; NULL for {} */
} tg_event_t;

/* Lock the run for the caller's transaction, in a statement of its own,
 * as every writer of a run does. *state (32 bytes) and *attempt (both may
 * be NULL): the run as locked. TG_ENOTFOUND: no such run.
 *
 * The lock is FOR NO KEY UPDATE: writers of one run queue behind each
 * other, and the foreign-key checks of rows inserted for the run (FOR KEY
 * SHARE) do not. With FOR UPDATE, a transition holding the run and waiting
 * for its attempt's row deadlocked with a pod upsert holding that row and
 * checking its foreign key to the run (PostgreSQL broke each cycle after
 * deadlock_timeout, 1 s: 46 times in 10,000 runs of the engine bench).
 *
 * What the run's writer reads next, it reads in later statements: a
 * statement that waited for the lock reads the other tables as its
 * snapshot, taken before the wait, shows them, and misses what the writer
 * it waited for committed (an event appended meanwhile: its seq was taken
 * twice). */
tg_rc_e tg_store_run_lock(tg_db_conn_t *conn, const char *run_id, char *state,
                          int *attempt) TG_MUSTCHECK;

/* Append inside the caller's transaction. Locks the run row, so appends to
 * one run are serialised across replicas. */
tg_rc_e tg_store_event_append(tg_db_conn_t *conn, const char *run_id,
                              const tg_event_t *ev) TG_MUSTCHECK;
/* The same for a caller that holds the run's lock already. */
tg_rc_e tg_store_event_append_locked(tg_db_conn_t *conn, const char *run_id,
                                     const tg_event_t *ev) TG_MUSTCHECK;

/* The end of a run's chain: the last event's seq (0: none yet) and hash. */
typedef struct {
    long seq;
    char hash[65];
} tg_event_chain_t;

/* Read the end of a run's chain, in the caller's transaction, which holds
 * the run's lock (tg_store_run_lock). */
tg_rc_e tg_store_event_chain_end(tg_db_conn_t *conn, const char *run_id,
                                 tg_event_chain_t *chain) TG_MUSTCHECK;
/* Append after *chain (read by tg_store_event_chain_end in this
 * transaction) and advance it: several events in a row (a transition's
 * implied ones) cost one INSERT each, not a look-up and an INSERT. */
tg_rc_e tg_store_event_append_chained(tg_db_conn_t *conn, const char *run_id, const tg_event_t *ev,
                                      tg_event_chain_t *chain) TG_MUSTCHECK;
/* An event to be written after a chain's end, for a statement that inserts
 * it beside other work (store/lifecycle.c's transition): the INSERT's ten
 * values in run_events column order (run_id, seq, at, state, reason,
 * message, source, data, prev_hash, hash), borrowing run_id, ev's strings
 * and chain's hash, which must outlive it. */
typedef struct {
    const char *vals[10];
    long seq;
    char seqs[24], at[40], hash[65];
    char *data; /* owned */
} tg_event_row_t;

void tg_store_event_row(const char *run_id, const tg_event_t *ev, const tg_event_chain_t *chain,
                        tg_event_row_t *row);
/* The row was written: *chain ends at it now. Frees the row. */
void tg_store_event_row_written(tg_event_row_t *row, tg_event_chain_t *chain);
/* Frees the row (NULL-safe). */
void tg_store_event_row_clean(tg_event_row_t *row);

/* The hash of an event from its fields (used by the verifier too). */
void tg_store_event_hash(const char *prev_hash, const char *run_id, long seq, const char *at,
                         const tg_event_t *ev, char out[65]);
/* A run's events in order: [{seq, at, state, reason, message, source, data,
 * prev_hash, hash}], new reference in *out. After `after_seq` when > 0. */
tg_rc_e tg_store_events_list(tg_db_conn_t *conn, const char *run_id, long after_seq, int limit,
                             json_t **out) TG_MUSTCHECK;

#endif
