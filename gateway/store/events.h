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

/* Append inside the caller's transaction. Locks the run row, so appends to
 * one run are serialised across replicas. */
tg_rc_e tg_store_event_append(tg_db_conn_t *conn, const char *run_id,
                              const tg_event_t *ev) TG_MUSTCHECK;

/* The end of a run's chain as a transaction that holds the run's row lock
 * sees it: the last event's seq (0: none yet) and hash. */
typedef struct {
    long seq;
    char hash[65];
} tg_event_chain_t;

/* The SQL that reads a chain's end with the run's row: a LATERAL join on
 * the run (alias r) giving e.seq and e.hash (NULL seq: no event yet), for
 * statements that lock the run and need its chain in the same round trip. */
#define TG_EVENT_CHAIN_JOIN                                                                        \
    " LEFT JOIN LATERAL (SELECT seq, hash FROM run_events WHERE run_id = r.id"                     \
    " ORDER BY seq DESC LIMIT 1) e ON true"
/* Fill *chain from a row's seq and hash columns (as TG_EVENT_CHAIN_JOIN gives them). */
void tg_store_event_chain_read(const PGresult *r, int row, int seq_col, tg_event_chain_t *chain);
/* Append after *chain, which the caller read under the run's row lock in this
 * transaction, and advance it: no round trip to find the chain's end, so a
 * transition that records several events costs one INSERT each. */
tg_rc_e tg_store_event_append_chained(tg_db_conn_t *conn, const char *run_id, const tg_event_t *ev,
                                      tg_event_chain_t *chain) TG_MUSTCHECK;
/* The hash of an event from its fields (used by the verifier too). */
void tg_store_event_hash(const char *prev_hash, const char *run_id, long seq, const char *at,
                         const tg_event_t *ev, char out[65]);
/* A run's events in order: [{seq, at, state, reason, message, source, data,
 * prev_hash, hash}], new reference in *out. After `after_seq` when > 0. */
tg_rc_e tg_store_events_list(tg_db_conn_t *conn, const char *run_id, long after_seq, int limit,
                             json_t **out) TG_MUSTCHECK;

#endif
