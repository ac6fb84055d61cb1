/* The resolution context of a workspace, in one round trip. Empty lists are
 * left out: tauyaml/resolve.h treats an absent list as "no restriction". */
#include "store/context.h"

#include "store/json_rows.h"

static tg_stmt_t stmt_context = TG_STMT(
    "WITH w AS (SELECT * FROM workspaces WHERE name = $1),"
    " p AS (SELECT * FROM compute_profiles"
    "       WHERE allowed_workspaces = '{}' OR $1 = ANY (allowed_workspaces)),"
    " q AS (SELECT name FROM local_queues WHERE workspace = $1)"
    " SELECT jsonb_build_object("
    "  'workspace', jsonb_strip_nulls(jsonb_build_object("
    "     'name', w.name, 'namespace', w.namespace, 'default_queue', w.default_queue,"
    "     'default_priority', w.default_priority, 'default_profile', w.default_profile,"
    "     'output_root', w.output_root, 'ttl_seconds', w.ttl_seconds,"
    "     'pvcs', CASE WHEN w.pvcs = '{}' THEN NULL ELSE to_jsonb(w.pvcs) END,"
    "     'queues', (SELECT jsonb_agg(name ORDER BY name) FROM q),"
    "     'allowed_profiles', (SELECT jsonb_agg(name ORDER BY name) FROM p))),"
    "  'profiles', COALESCE((SELECT jsonb_agg(p.settings || jsonb_strip_nulls(jsonb_build_object("
    "     'name', p.name, 'engine', p.engine,"
    "     'allowed_workspaces', CASE WHEN p.allowed_workspaces = '{}' THEN NULL"
    "                           ELSE to_jsonb(p.allowed_workspaces) END)) ORDER BY p.name)"
    "     FROM p), '[]'::jsonb),"
    "  'priority_classes', COALESCE((SELECT jsonb_agg(jsonb_build_object('name', name,"
    "     'value', value) ORDER BY name) FROM priority_classes), '[]'::jsonb))"
    " FROM w");

tg_rc_e tg_store_resolve_context(tg_db_conn_t *conn, const char *workspace, json_t **out)
{
    const char *vals[] = {workspace};
    return tg_db_json_one(conn, &stmt_context, 1, vals, out);
}
