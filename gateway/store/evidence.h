/* Evidence records: gathering everything known about one run into a JSON
 * record, its canonical text, and the sealed rows (table evidence, queue
 * evidence_queue; migrations 0003 and 0006). docs/evidence.md describes the
 * record field by field.
 *
 * Canonical text (what is hashed and signed):
 *   json_dumps(record, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17))
 * that is: no whitespace; object keys sorted bytewise (UTF-8); strings in
 * UTF-8 with only '"', '\\' and control characters escapes (\b \f \n \r \t,
 * else \u00XX); integers in decimal; reals as printf "%.17g", then ".0"
 * appended when that has neither '.' nor 'e', and the exponent stripped of
 * '+' and leading zeros (0.1 -> 0.10000000000000001, 1e17 -> 1e17,
 * 1e-5 -> 1.0000000000000001e-5, 3.0 -> 3.0). The text is stored verbatim
 * (evidence.canonical), so verifiers hash the stored bytes and never need to
 * re-serialise. The form is a fixed point: parsing the text with jansson and
 * dumping it again gives the same bytes.
 *
 * Log digest of one (attempt, pod, container) stream:
 *   sha256 over the concatenation, in seq order, of each chunk's lowercase
 *   hex sha256 followed by "\n"; each chunk's sha256 is over its content. */
#ifndef TG_STORE_EVIDENCE_H
#define TG_STORE_EVIDENCE_H

#include <jansson.h>
#include <stddef.h>

#include "core/digest.h"
#include "store/pool.h"

#define TG_EVIDENCE_SCHEMA "taugate.evidence/v1"

/* Build the live record of a run (every section but "seal") in one SQL
 * statement, so it is one consistent snapshot. *record: new reference.
 * TG_ENOTFOUND when the run does not exist. */
tg_rc_e tg_evidence_build(tg_db_conn_t *conn, const char *run_id, json_t **record) TG_MUSTCHECK;

/* The canonical text of `record` (borrowed) as a malloc'd string; *len gets
 * its length. NULL when jansson cannot encode it (invalid UTF-8). */
char *tg_evidence_canonical(const json_t *record, size_t *len);

/* Log digest over an ordered list of chunk sha256 hex strings (see above):
 * feed each with _add, then _final into out[65]. */
typedef struct tg_evidence_logsum_s {
    tg_sha256_t sha;
} tg_evidence_logsum_t;
void tg_evidence_logsum_init(tg_evidence_logsum_t *s);
void tg_evidence_logsum_add(tg_evidence_logsum_t *s, const char *chunk_sha256_hex);
void tg_evidence_logsum_final(tg_evidence_logsum_t *s, char out[65]);

/* One sealed row. Strings are owned by the row (tg_evidence_row_clean). */
typedef struct tg_evidence_row_s {
    char run_id[37];
    char sealed_at[40]; /* RFC 3339 UTC, microseconds */
    char sha256[65];
    char key_id[40];
    char algorithm[16];
    char *signature; /* base64 */
    char *canonical; /* the exact bytes hashed and signed */
    size_t canonical_len;
} tg_evidence_row_t;

void tg_evidence_row_clean(tg_evidence_row_t *row);

/* Read a run's sealed row. TG_ENOTFOUND when not sealed. */
tg_rc_e tg_evidence_get(tg_db_conn_t *conn, const char *run_id,
                        tg_evidence_row_t *row) TG_MUSTCHECK;
/* *matches: 1 when the stored jsonb record equals the stored canonical text
 * as PostgreSQL reads it; 0 when it differs or the text is not JSON. */
tg_rc_e tg_evidence_record_matches(tg_db_conn_t *conn, const char *run_id,
                                   int *matches) TG_MUSTCHECK;
/* Insert a sealed row (record = canonical::jsonb); a row already there wins
 * (another replica sealed first): *inserted tells which happened. */
tg_rc_e tg_evidence_insert(tg_db_conn_t *conn, const tg_evidence_row_t *row,
                           int *inserted) TG_MUSTCHECK;

/* Claim the next queued run, inside the caller's transaction (other
 * replicas skip it until it commits). It may be sealed once every pod that
 * ran has its log collected (run_pods.log_done), or `log_grace_s` after it
 * finished: *grace_s gets the seconds left of that grace (0 once over),
 * *logs_pending whether a pod that ran has its log uncollected; to wait,
 * put it back with tg_evidence_wait. TG_ENOTFOUND when none is due. */
tg_rc_e tg_evidence_claim(tg_db_conn_t *conn, long log_grace_s, char run_id[37], long *grace_s,
                          int *logs_pending) TG_MUSTCHECK;
/* Put a claimed run back until wait_s from now, without counting a
 * failure. With for_logs, only while a pod's log is still uncollected
 * (checked afresh; a pod's log_done brings it forward: migration 0013). */
tg_rc_e tg_evidence_wait(tg_db_conn_t *conn, const char *run_id, long wait_s,
                         int for_logs) TG_MUSTCHECK;
/* The run's attempts that ran but whose queue facts (run_attempts.queue_info)
 * have no flavors and no note: *out (new reference) an array of
 * {attempt, namespace, object_name, within_grace}, within_grace true while
 * the run ended less than grace_s seconds ago. */
tg_rc_e tg_evidence_lacking_queue(tg_db_conn_t *conn, const char *run_id, long grace_s,
                                  json_t **out) TG_MUSTCHECK;
/* Merge `facts` (borrowed) into an attempt's queue_info, key by key. */
tg_rc_e tg_evidence_merge_queue(tg_db_conn_t *conn, const char *run_id, int attempt,
                                const json_t *facts) TG_MUSTCHECK;
/* Take a sealed run off the queue (inside the sealing transaction). */
tg_rc_e tg_evidence_dequeue(tg_db_conn_t *conn, const char *run_id) TG_MUSTCHECK;
/* Retry a run later: not before delay_s seconds, recording why (no secret). */
tg_rc_e tg_evidence_defer(tg_db_conn_t *conn, const char *run_id, long delay_s,
                          const char *error) TG_MUSTCHECK;

#endif
