/* Reading a workspace's runs (see runs_query.h). */
#include "store/runs_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "store/json_rows.h"

#define RUN_COLS                                                                                   \
    "id, workspace, name, owner, engine, state, reason, message, attempt, config_hash,"            \
    " created_at, updated_at, started_at, finished_at"

/* $1..$11: tg_run_filter_t, in its order. Every column named here is in
 * the runs_workspace_counts index, so the counts never read the table. */
#define RUN_FILTER                                                                                 \
    " WHERE workspace = $1 AND ($2::text IS NULL OR state = $2)"                                   \
    " AND ($3::text IS NULL OR owner = $3) AND ($4::text IS NULL OR engine = $4)"                  \
    " AND ($5::text IS NULL OR name = $5)"                                                         \
    " AND ($6::timestamptz IS NULL OR created_at >= $6::timestamptz)"                              \
    " AND ($7::timestamptz IS NULL OR created_at < $7::timestamptz)"                               \
    " AND ($8::timestamptz IS NULL OR updated_at >= $8::timestamptz)"                              \
    " AND ($9::text IS NULL OR exp_project = $9) AND ($10::text IS NULL OR exp_name = $10)"        \
    " AND ($11::text IS NULL OR exp_group = $11)"

/* One statement per order, so each walks its index: $12/$13 the cursor's
 * time and id, $14 the limit. */
#define RUN_LIST(COL, CMP, DIR)                                                                    \
    TG_STMT("SELECT to_jsonb(v) FROM (SELECT " RUN_COLS " FROM runs" RUN_FILTER                    \
            " AND ($12::timestamptz IS NULL OR (" COL ", id) " CMP                                 \
            " ($12::timestamptz, $13::uuid))"                                                      \
            " ORDER BY " COL " " DIR ", id " DIR " LIMIT $14::int) v")

static tg_stmt_t stmt_list[TG_RUN_SORT_COUNT] = {
    [TG_RUN_SORT_CREATED_DESC] = RUN_LIST("created_at", "<", "DESC"),
    [TG_RUN_SORT_CREATED_ASC] = RUN_LIST("created_at", ">", "ASC"),
    [TG_RUN_SORT_UPDATED_DESC] = RUN_LIST("updated_at", "<", "DESC"),
    [TG_RUN_SORT_UPDATED_ASC] = RUN_LIST("updated_at", ">", "ASC"),
};

static const char *const sort_names[TG_RUN_SORT_COUNT] = {
    [TG_RUN_SORT_CREATED_DESC] = "-created_at",
    [TG_RUN_SORT_CREATED_ASC] = "created_at",
    [TG_RUN_SORT_UPDATED_DESC] = "-updated_at",
    [TG_RUN_SORT_UPDATED_ASC] = "updated_at",
};

static tg_stmt_t stmt_count =
    TG_STMT("SELECT json_build_object('state', state, 'owner', owner, 'engine', engine,"
            " 'count', count(*)) FROM runs" RUN_FILTER " GROUP BY state, owner, engine");

/* Experiments in index order (project, name; no project last); the cursor
 * is the last experiment of the previous page ($3 project, $4 name). */
static tg_stmt_t stmt_experiments = TG_STMT(
    "WITH e AS (SELECT exp_project AS p, exp_name AS n FROM runs"
    "  WHERE workspace = $1 AND exp_name IS NOT NULL AND ($2::text IS NULL OR exp_project = $2)"
    "  AND ($4::text IS NULL"
    "   OR ($3::text IS NULL AND exp_project IS NULL AND exp_name > $4)"
    "   OR ($3::text IS NOT NULL AND (exp_project > $3 OR (exp_project = $3 AND exp_name > $4)"
    "       OR exp_project IS NULL)))"
    "  GROUP BY exp_project, exp_name ORDER BY exp_project NULLS LAST, exp_name LIMIT $5::int)"
    " SELECT json_build_object('project', e.p, 'name', e.n, 'group', r.exp_group,"
    "  'state', r.state, 'runs', count(*), 'first_at', min(r.created_at),"
    "  'last_activity_at', max(r.updated_at))"
    " FROM e JOIN runs r ON r.workspace = $1 AND r.exp_name = e.n"
    "  AND r.exp_project IS NOT DISTINCT FROM e.p"
    " GROUP BY e.p, e.n, r.exp_group, r.state"
    " ORDER BY e.p NULLS LAST, e.n, r.exp_group NULLS LAST, r.state");

static tg_stmt_t stmt_compared = TG_STMT(
    "SELECT COALESCE(jsonb_object_agg(v.id, to_jsonb(v) - 'exp_project' - 'exp_name' - 'exp_group'"
    "  - 'resolved' || jsonb_build_object("
    "  'experiment', jsonb_build_object('project', v.exp_project, 'name', v.exp_name,"
    "   'group', v.exp_group),"
    "  'resolved', v.resolved,"
    "  'attempts', COALESCE((SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt,"
    "   'state', a.state, 'reason', a.reason, 'retry_reason', a.retry_reason,"
    "   'object', a.object_name, 'node_names', a.node_names, 'exit_code', a.exit_code,"
    "   'created_at', a.created_at, 'started_at', a.started_at, 'finished_at', a.finished_at)"
    "   ORDER BY a.attempt) FROM run_attempts a WHERE a.run_id = v.id), '[]'::jsonb))), '{}')"
    " FROM (SELECT " RUN_COLS ", exp_project, exp_name, exp_group, resolved FROM runs"
    "  WHERE workspace = $1 AND id = ANY ($2::uuid[])) v");

const char *tg_run_sort_name(tg_run_sort_e s)
{
    return (int)s >= 0 && s < TG_RUN_SORT_COUNT ? sort_names[s] : NULL;
}

tg_rc_e tg_store_runs_list(tg_db_conn_t *conn, const tg_run_list_query_t *q, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", q->limit);
    const tg_run_filter_t *f = &q->f;
    const char *vals[] = {
        f->workspace,     f->state,          f->owner,         f->engine,  f->name,
        f->created_after, f->created_before, f->updated_since, f->project, f->experiment,
        f->group,         q->cursor_time,    q->cursor_id,     lim};
    int s = (int)q->sort >= 0 && q->sort < TG_RUN_SORT_COUNT ? (int)q->sort : 0;
    return tg_db_json_all(conn, &stmt_list[s], 14, vals, out);
}

tg_rc_e tg_store_runs_count(tg_db_conn_t *conn, const tg_run_filter_t *f, json_t **out)
{
    const char *vals[] = {f->workspace, f->state,         f->owner,          f->engine,
                          f->name,      f->created_after, f->created_before, f->updated_since,
                          f->project,   f->experiment,    f->group};
    return tg_db_json_all(conn, &stmt_count, 11, vals, out);
}

tg_rc_e tg_store_experiments(tg_db_conn_t *conn, const char *workspace, const char *project,
                             const char *cursor_project, const char *cursor_name, int limit,
                             json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", limit);
    const char *vals[] = {workspace, project, cursor_name ? cursor_project : NULL, cursor_name,
                          lim};
    return tg_db_json_all(conn, &stmt_experiments, 5, vals, out);
}

tg_rc_e tg_store_runs_compared(tg_db_conn_t *conn, const char *workspace, const char *const *ids,
                               size_t n, json_t **out)
{
    /* the ids as a PostgreSQL array literal; the caller checked they are UUIDs */
    tg_buf_t b;
    tg_buf_init(&b, 4096);
    tg_rc_e rc = TG_EINVAL; /* too many ids */
    if (tg_buf_puts(&b, "{") != TG_OK)
        goto done;
    for (size_t i = 0; i < n; i++)
        if (tg_buf_printf(&b, "%s%s", i ? "," : "", ids[i]) != TG_OK)
            goto done;
    if (tg_buf_puts(&b, "}") != TG_OK)
        goto done;
    const char *vals[] = {workspace, b.data};
    rc = tg_db_json_one(conn, &stmt_compared, 2, vals, out);
done:
    tg_buf_clean(&b);
    return rc;
}
