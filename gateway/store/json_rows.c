/* Rows of jsonb as jansson values. */
#include "store/json_rows.h"

#include "core/log.h"

static json_t *json_rows_parse(PGresult *r, int row)
{
    json_error_t e;
    json_t *j = json_loads(PQgetvalue(r, row, 0), 0, &e);
    if (!j)
        tg_log_error("store", "database returned invalid JSON: %s", e.text);
    return j;
}

char *tg_json_text_compact(char *s)
{
    char *out = s;
    int in_string = 0;
    for (const char *p = s; *p; p++) {
        if (in_string) {
            *out++ = *p;
            if (*p == '\\' && p[1])
                *out++ = *++p;
            else if (*p == '"')
                in_string = 0;
        } else if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r') {
            in_string = *p == '"';
            *out++ = *p;
        }
    }
    *out = '\0';
    return s;
}

tg_rc_e tg_db_json_one(tg_db_conn_t *conn, tg_stmt_t *stmt, int n, const char *const *vals,
                       json_t **out)
{
    tg_rc_e rc;
    *out = NULL;
    PGresult *r = tg_db_exec(conn, stmt, n, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 0 || PQgetisnull(r, 0, 0)) {
        PQclear(r);
        return TG_ENOTFOUND;
    }
    *out = json_rows_parse(r, 0);
    PQclear(r);
    return *out ? TG_OK : TG_EINTERNAL;
}

tg_rc_e tg_db_json_all(tg_db_conn_t *conn, tg_stmt_t *stmt, int n, const char *const *vals,
                       json_t **out)
{
    tg_rc_e rc;
    *out = NULL;
    PGresult *r = tg_db_exec(conn, stmt, n, vals, &rc);
    if (!r)
        return rc;
    json_t *arr = json_array();
    for (int i = 0; i < PQntuples(r); i++) {
        json_t *j = json_rows_parse(r, i);
        if (!j) {
            json_decref(arr);
            PQclear(r);
            return TG_EINTERNAL;
        }
        json_array_append_new(arr, j);
    }
    PQclear(r);
    *out = arr;
    return TG_OK;
}
