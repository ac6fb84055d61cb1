/* Reading stored logs for GET /v1/runs/{id}/logs.
 *
 * A selection is one attempt of one run, optionally one pod and/or one
 * container. Its "streams" are the (pod, container) pairs it covers. A
 * reader's position is, per stream, the highest chunk seq already sent (a
 * JSON array [{pod, container, seq}]); one container's chunks are written
 * by one collector at a time in seq order, so "seq > position" finds new
 * chunks exactly, whatever order concurrent transactions commit in. Chunk
 * ids (the SSE event ids) order chunks across streams.
 *
 * Ownership: JSON results are new references; tg_log_chunk_t arrays are
 * freed with tg_log_chunks_free. Selections are borrowed. */
#ifndef TG_STORE_LOGS_READ_H
#define TG_STORE_LOGS_READ_H

#include <jansson.h>
#include <stddef.h>

#include "core/mem.h"
#include "store/pool.h"

typedef struct tg_log_sel_s {
    const char *run_id;
    int attempt;
    const char *pod;       /* NULL: every pod */
    const char *container; /* NULL: every container */
} tg_log_sel_t;

typedef struct tg_log_chunk_s {
    long long id;
    char *pod;
    char *container;
    long seq;
    char *content; /* "<ts> <text>\n" lines */
    size_t len;
} tg_log_chunk_t;

/* The streams of the selection as positions at seq 0, sorted by pod and
 * container: every container run_pods lists, plus (with_chunks) every one
 * that has stored chunks. */
tg_rc_e tg_store_log_streams(tg_db_conn_t *conn, const tg_log_sel_t *sel, int with_chunks,
                             json_t **out) TG_MUSTCHECK;
/* Per stream, the highest seq of chunks with id < before_id. */
tg_rc_e tg_store_log_positions_before(tg_db_conn_t *conn, const tg_log_sel_t *sel,
                                      long long before_id, json_t **out) TG_MUSTCHECK;
/* Per stream, the highest seq of chunks whose last line is before `since`
 * (RFC 3339). */
tg_rc_e tg_store_log_positions_since(tg_db_conn_t *conn, const tg_log_sel_t *sel, const char *since,
                                     json_t **out) TG_MUSTCHECK;
/* Where the last n lines start: the id of the first chunk to send
 * (*start_id, 0 = from the beginning) and how many of its leading lines to
 * drop (*skip). Only chunks ending at or after `since` count (NULL: all). */
tg_rc_e tg_store_log_tail_start(tg_db_conn_t *conn, const tg_log_sel_t *sel, long n,
                                const char *since, long long *start_id, long *skip) TG_MUSTCHECK;
/* Chunks after `positions` (borrowed), in id order: at most max_rows, and
 * no more than max_bytes of content (but always at least one chunk). */
tg_rc_e tg_store_log_fetch(tg_db_conn_t *conn, const tg_log_sel_t *sel, const json_t *positions,
                           int max_rows, size_t max_bytes, tg_log_chunk_t **out,
                           size_t *n) TG_MUSTCHECK;
void tg_log_chunks_free(tg_log_chunk_t *c, size_t n);
/* Will the selection's log grow no more? 1 when every pod of the attempt
 * (of `pod`, when set) has log_done and the attempt is over (the run
 * finished or moved to a later attempt), or when the run finished without
 * any pod. Ask before the last fetch: everything stored before log_done was
 * set is then visible to it. */
tg_rc_e tg_store_log_complete(tg_db_conn_t *conn, const tg_log_sel_t *sel,
                              int *complete) TG_MUSTCHECK;

#endif
