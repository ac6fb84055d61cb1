/* The evidence key history (see evidence_keys.h). */
#include "store/evidence_keys.h"

#include "store/json_rows.h"

#define EK_FIELDS                                                                                  \
    "jsonb_build_object('key_id', key_id, 'algorithm', algorithm, 'public_key_pem',"               \
    " public_key_pem, 'public_key_b64', public_key_b64, 'ephemeral', ephemeral,"                   \
    " 'first_seen_at', to_char(first_seen_at AT TIME ZONE 'UTC',"                                  \
    "  'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"                                                      \
    " 'last_seen_at', to_char(last_seen_at AT TIME ZONE 'UTC', "                                   \
    "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))"

static tg_stmt_t stmt_register = TG_STMT(
    "INSERT INTO evidence_keys (key_id, algorithm, public_key_b64, public_key_pem, ephemeral)"
    " VALUES ($1, $2, $3, $4, $5::boolean)"
    " ON CONFLICT (key_id) DO UPDATE SET last_seen_at = now()");
static tg_stmt_t stmt_list =
    TG_STMT("SELECT " EK_FIELDS " FROM evidence_keys ORDER BY first_seen_at DESC, key_id");
static tg_stmt_t stmt_get = TG_STMT("SELECT " EK_FIELDS " FROM evidence_keys WHERE key_id = $1");

tg_rc_e tg_evidence_key_register(tg_db_conn_t *conn, const tg_signer_t *signer)
{
    const char *vals[] = {tg_signer_key_id(signer), TG_SIGNER_ALGORITHM,
                          tg_signer_public_b64(signer), tg_signer_public_pem(signer),
                          tg_signer_is_ephemeral(signer) ? "true" : "false"};
    return tg_db_run(conn, &stmt_register, 5, vals);
}

tg_rc_e tg_evidence_keys_list(tg_db_conn_t *conn, json_t **out)
{
    return tg_db_json_all(conn, &stmt_list, 0, NULL, out);
}

tg_rc_e tg_evidence_key_get(tg_db_conn_t *conn, const char *key_id, json_t **out)
{
    const char *vals[] = {key_id};
    return tg_db_json_one(conn, &stmt_get, 1, vals, out);
}
