/* Hash-chained run events. */
#include "store/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "core/ids.h"
#include "store/json_rows.h"

static tg_stmt_t stmt_lock =
    TG_STMT("SELECT state, attempt FROM runs WHERE id = $1::uuid FOR NO KEY UPDATE");
static tg_stmt_t stmt_last =
    TG_STMT("SELECT seq, hash FROM run_events WHERE run_id = $1::uuid ORDER BY seq DESC LIMIT 1");
static tg_stmt_t stmt_insert = TG_STMT(
    "INSERT INTO run_events (run_id, seq, at, state, reason, message, source, data, prev_hash,"
    " hash) VALUES ($1::uuid, $2::int, $3::timestamptz, $4, $5, $6, $7, $8::jsonb, $9, $10)");
static tg_stmt_t stmt_list = TG_STMT(
    "SELECT jsonb_build_object('seq', seq,"
    " 'at', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
    " 'state', state, 'reason', reason, 'message', message, 'source', source, 'data', data,"
    " 'prev_hash', prev_hash, 'hash', hash)"
    " FROM run_events WHERE run_id = $1::uuid AND seq > $2::int ORDER BY seq LIMIT $3::int");

void tg_store_event_hash(const char *prev_hash, const char *run_id, long seq, const char *at,
                         const tg_event_t *ev, char out[65])
{
    json_t *o = json_object();
    json_object_set_new(o, "run_id", json_string(run_id));
    json_object_set_new(o, "seq", json_integer(seq));
    json_object_set_new(o, "at", json_string(at));
    json_object_set_new(o, "state", ev->state ? json_string(ev->state) : json_null());
    json_object_set_new(o, "reason", ev->reason ? json_string(ev->reason) : json_null());
    json_object_set_new(o, "message", ev->message ? json_string(ev->message) : json_null());
    json_object_set_new(o, "source", json_string(ev->source ? ev->source : ""));
    json_object_set_new(o, "data", ev->data ? json_incref((json_t *)ev->data) : json_object());
    char *canon = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(o);
    size_t plen = prev_hash ? strlen(prev_hash) : 0;
    size_t clen = canon ? strlen(canon) : 0;
    char *buf = tg_xmalloc(plen + 1 + clen + 1);
    memcpy(buf, prev_hash ? prev_hash : "", plen);
    buf[plen] = '\n';
    memcpy(buf + plen + 1, canon ? canon : "", clen);
    tg_sha256_hex(buf, plen + 1 + clen, out);
    free(buf);
    free(canon);
}

tg_rc_e tg_store_run_lock(tg_db_conn_t *conn, const char *run_id, char *state, int *attempt)
{
    tg_rc_e rc;
    const char *id[] = {run_id};
    PGresult *r = tg_db_exec(conn, &stmt_lock, 1, id, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return TG_ENOTFOUND;
    }
    if (state)
        snprintf(state, 32, "%s", PQgetvalue(r, 0, 0));
    if (attempt)
        *attempt = atoi(PQgetvalue(r, 0, 1));
    PQclear(r);
    return TG_OK;
}

tg_rc_e tg_store_event_chain_end(tg_db_conn_t *conn, const char *run_id, tg_event_chain_t *chain)
{
    tg_rc_e rc;
    const char *id[] = {run_id};
    chain->seq = 0;
    chain->hash[0] = '\0';
    PGresult *r = tg_db_exec(conn, &stmt_last, 1, id, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 1) {
        chain->seq = atol(PQgetvalue(r, 0, 0));
        snprintf(chain->hash, sizeof(chain->hash), "%s", PQgetvalue(r, 0, 1));
    }
    PQclear(r);
    return TG_OK;
}

void tg_store_event_row(const char *run_id, const tg_event_t *ev, const tg_event_chain_t *chain,
                        tg_event_row_t *row)
{
    row->seq = chain->seq + 1;
    tg_time_rfc3339(tg_now_wall_us(), row->at, sizeof(row->at));
    snprintf(row->seqs, sizeof(row->seqs), "%ld", row->seq);
    tg_store_event_hash(chain->hash, run_id, row->seq, row->at, ev, row->hash);
    row->data = ev->data ? json_dumps(ev->data, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    const char *vals[] = {run_id,
                          row->seqs,
                          row->at,
                          ev->state,
                          ev->reason,
                          ev->message,
                          ev->source,
                          row->data ? row->data : "{}",
                          row->seq > 1 ? chain->hash : NULL,
                          row->hash};
    memcpy(row->vals, vals, sizeof(vals));
}

void tg_store_event_row_clean(tg_event_row_t *row)
{
    if (!row)
        return;
    free(row->data);
    row->data = NULL;
}

void tg_store_event_row_written(tg_event_row_t *row, tg_event_chain_t *chain)
{
    chain->seq = row->seq;
    memcpy(chain->hash, row->hash, sizeof(chain->hash));
    tg_store_event_row_clean(row);
}

tg_rc_e tg_store_event_append_chained(tg_db_conn_t *conn, const char *run_id, const tg_event_t *ev,
                                      tg_event_chain_t *chain)
{
    tg_event_row_t row;
    tg_store_event_row(run_id, ev, chain, &row);
    tg_rc_e rc = tg_db_run(conn, &stmt_insert, 10, row.vals);
    if (rc == TG_OK)
        tg_store_event_row_written(&row, chain);
    tg_store_event_row_clean(&row);
    return rc;
}

tg_rc_e tg_store_event_append_locked(tg_db_conn_t *conn, const char *run_id, const tg_event_t *ev)
{
    tg_event_chain_t chain;
    tg_rc_e rc = tg_store_event_chain_end(conn, run_id, &chain);
    return rc == TG_OK ? tg_store_event_append_chained(conn, run_id, ev, &chain) : rc;
}

tg_rc_e tg_store_event_append(tg_db_conn_t *conn, const char *run_id, const tg_event_t *ev)
{
    tg_rc_e rc = tg_store_run_lock(conn, run_id, NULL, NULL);
    return rc == TG_OK ? tg_store_event_append_locked(conn, run_id, ev) : rc;
}

tg_rc_e tg_store_events_list(tg_db_conn_t *conn, const char *run_id, long after_seq, int limit,
                             json_t **out)
{
    char after[24], lim[16];
    snprintf(after, sizeof(after), "%ld", after_seq > 0 ? after_seq : 0);
    snprintf(lim, sizeof(lim), "%d", limit);
    const char *vals[] = {run_id, after, lim};
    return tg_db_json_all(conn, &stmt_list, 3, vals, out);
}
