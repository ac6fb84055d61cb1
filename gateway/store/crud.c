/* Generic admin-resource statements runner. */
#include "store/crud.h"

#include <stdio.h>
#include <stdlib.h>

#include "store/json_rows.h"

/* Build the parameter list: the parent first for nested resources. */
static int crud_params(const tg_crud_stmts_t *s, const char *parent, const char **in, int n,
                       const char **out)
{
    int k = 0;
    if (s->nested)
        out[k++] = parent;
    for (int i = 0; i < n; i++)
        out[k++] = in[i];
    return k;
}

tg_rc_e tg_store_crud_list(tg_db_conn_t *conn, tg_crud_stmts_t *s, const char *parent,
                           const char *after, int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof(lim), "%d", limit);
    const char *in[] = {after, lim}, *vals[3];
    int n = crud_params(s, parent, in, 2, vals);
    return tg_db_json_all(conn, &s->list, n, vals, out);
}

tg_rc_e tg_store_crud_get(tg_db_conn_t *conn, tg_crud_stmts_t *s, const char *parent,
                          const char *key, json_t **out)
{
    const char *in[] = {key}, *vals[2];
    int n = crud_params(s, parent, in, 1, vals);
    return tg_db_json_one(conn, &s->get, n, vals, out);
}

tg_rc_e tg_store_crud_insert(tg_db_conn_t *conn, tg_crud_stmts_t *s, const char *parent,
                             const json_t *doc, json_t **out)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    const char *in[] = {text}, *vals[2];
    int n = crud_params(s, parent, in, 1, vals);
    tg_rc_e rc = tg_db_json_one(conn, &s->insert, n, vals, out);
    free(text);
    return rc;
}

tg_rc_e tg_store_crud_update(tg_db_conn_t *conn, tg_crud_stmts_t *s, const char *parent,
                             const char *key, const json_t *patch, json_t **out)
{
    char *text = json_dumps(patch, JSON_COMPACT);
    const char *in[] = {key, text}, *vals[3];
    int n = crud_params(s, parent, in, 2, vals);
    tg_rc_e rc = tg_db_json_one(conn, &s->update, n, vals, out);
    free(text);
    return rc;
}

tg_rc_e tg_store_crud_delete(tg_db_conn_t *conn, tg_crud_stmts_t *s, const char *parent,
                             const char *key)
{
    const char *in[] = {key}, *vals[2];
    int n = crud_params(s, parent, in, 1, vals);
    tg_rc_e rc;
    PGresult *r = tg_db_exec(conn, &s->del, n, vals, &rc);
    if (!r)
        return rc == TG_EUNPROCESSABLE ? TG_ECONFLICT : rc; /* still referenced */
    rc = PQntuples(r) ? TG_OK : TG_ENOTFOUND;
    PQclear(r);
    return rc;
}
