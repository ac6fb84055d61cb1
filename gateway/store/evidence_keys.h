/* The evidence key history (table evidence_keys, migration 0013): the
 * public half of every key that ever sealed a record, so records outlive
 * key rotations, replicas and ephemeral keys.
 *
 * jansson: returned values are NEW references. */
#ifndef TG_STORE_EVIDENCE_KEYS_H
#define TG_STORE_EVIDENCE_KEYS_H

#include <jansson.h>

#include "evidence/signer.h"
#include "store/pool.h"

/* Record signer's public key (borrowed), or note that it is still in use. */
tg_rc_e tg_evidence_key_register(tg_db_conn_t *conn, const tg_signer_t *signer) TG_MUSTCHECK;
/* Every key, newest first: [{key_id, algorithm, public_key_pem,
 * public_key_b64, ephemeral, first_seen_at, last_seen_at}]. */
tg_rc_e tg_evidence_keys_list(tg_db_conn_t *conn, json_t **out) TG_MUSTCHECK;
/* One key by id (same fields). TG_ENOTFOUND when unknown. */
tg_rc_e tg_evidence_key_get(tg_db_conn_t *conn, const char *key_id, json_t **out) TG_MUSTCHECK;

#endif
