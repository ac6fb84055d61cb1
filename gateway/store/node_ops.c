/* The node row after an admin's node operation (see node_ops.h). */
#include "store/node_ops.h"

static tg_stmt_t stmt_cordon = TG_STMT(
    "INSERT INTO nodes AS n (name, health, unschedulable, cordoned_by, cordon_reason, cordoned_at,"
    "  cordon_source)"
    " VALUES ($1, 'Unknown', $2::text IS NOT NULL, $2, $3, $4::timestamptz,"
    "  COALESCE($5, 'automation'))"
    " ON CONFLICT (name) DO UPDATE SET unschedulable = EXCLUDED.unschedulable,"
    "  cordoned_by = EXCLUDED.cordoned_by, cordon_reason = EXCLUDED.cordon_reason,"
    "  cordoned_at = EXCLUDED.cordoned_at, cordon_source = EXCLUDED.cordon_source,"
    "  updated_at = now()");

tg_rc_e tg_store_node_cordon_set(tg_db_conn_t *conn, const char *name, const char *by,
                                 const char *reason, const char *at, const char *source)
{
    const char *vals[] = {name, by, by ? reason : NULL, by ? at : NULL, by ? source : NULL};
    return tg_db_run(conn, &stmt_cordon, 5, vals);
}
