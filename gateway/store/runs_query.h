/* Reading a workspace's runs: the list (filters, four stable orders), the
 * counts by state, owner and engine, the experiments, and the runs of a
 * comparison. Each is answered from an index of migration 0021.
 *
 * Ownership: JSON results are new references owned by the caller. */
#ifndef TG_STORE_RUNS_QUERY_H
#define TG_STORE_RUNS_QUERY_H

#include <jansson.h>
#include <stddef.h>

#include "store/pool.h"

/* The orders of a runs list; each is total (the run id breaks ties). */
typedef enum {
    TG_RUN_SORT_CREATED_DESC = 0, /* -created_at, the default */
    TG_RUN_SORT_CREATED_ASC,      /* created_at */
    TG_RUN_SORT_UPDATED_DESC,     /* -updated_at */
    TG_RUN_SORT_UPDATED_ASC,      /* updated_at */
    TG_RUN_SORT_COUNT
} tg_run_sort_e;

/* "-created_at", ...; NULL past the end. */
const char *tg_run_sort_name(tg_run_sort_e s);

/* Filters shared by the list and the counts; NULL: no filter. Times are
 * RFC 3339 (a malformed one makes the query TG_EINVAL). */
typedef struct tg_run_filter_s {
    const char *workspace; /* required */
    const char *state, *owner, *engine, *name;
    const char *created_after, *created_before, *updated_since;
    const char *project, *experiment, *group;
} tg_run_filter_t;

typedef struct tg_run_list_query_s {
    tg_run_filter_t f;
    tg_run_sort_e sort;
    const char *cursor_time, *cursor_id; /* the sort key of the last run shown */
    int limit;
} tg_run_list_query_t;

/* Runs in q->sort order, at most q->limit: [Run] as in openapi.yaml. */
tg_rc_e tg_store_runs_list(tg_db_conn_t *conn, const tg_run_list_query_t *q,
                           json_t **out) TG_MUSTCHECK;

/* The matching runs grouped: [{state, owner, engine, count}]. */
tg_rc_e tg_store_runs_count(tg_db_conn_t *conn, const tg_run_filter_t *f,
                            json_t **out) TG_MUSTCHECK;

/* The experiments (project, name) of the workspace's runs after the cursor
 * (cursor_name NULL: from the first; cursor_project NULL with a name: after
 * that experiment without a project), ordered by project (no project last)
 * then name, at most `limit`: one row per (project, name, group, state):
 * [{project, name, group, state, runs, first_at, last_activity_at}] in
 * that order (no group last). */
tg_rc_e tg_store_experiments(tg_db_conn_t *conn, const char *workspace, const char *project,
                             const char *cursor_project, const char *cursor_name, int limit,
                             json_t **out) TG_MUSTCHECK;

/* The runs with these ids that belong to the workspace, each as a RunBase
 * with `experiment` {project, name, group}, `attempts` and `resolved` (the
 * resolved config): {id: run}. */
tg_rc_e tg_store_runs_compared(tg_db_conn_t *conn, const char *workspace, const char *const *ids,
                               size_t n, json_t **out) TG_MUSTCHECK;

#endif
