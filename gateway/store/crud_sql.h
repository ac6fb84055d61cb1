/* SQL templates for store/crud.h tables. Each expands to a string literal at
 * compile time, so every statement is still fixed text with $n parameters.
 * COLS is the select list shown to clients; SET assigns the columns a PATCH
 * may change from `r` (the stored row merged with the patch). */
#ifndef TG_STORE_CRUD_SQL_H
#define TG_STORE_CRUD_SQL_H

#define TG_CRUD_LIST(TABLE, KEY, COLS)                                                             \
    "SELECT to_jsonb(t) FROM (SELECT " COLS " FROM " TABLE " WHERE $1::text IS NULL OR " KEY       \
    " > $1 ORDER BY " KEY " LIMIT $2::int) t"
#define TG_CRUD_GET(TABLE, KEY, COLS)                                                              \
    "SELECT to_jsonb(t) FROM (SELECT " COLS " FROM " TABLE " WHERE " KEY " = $1) t"
#define TG_CRUD_INSERT(TABLE, INSCOLS, SELECT, COLS)                                               \
    "WITH r AS (SELECT * FROM jsonb_populate_record(NULL::" TABLE ", $1::jsonb)),"                 \
    " ins AS (INSERT INTO " TABLE " (" INSCOLS ") SELECT " SELECT " FROM r RETURNING " COLS ")"    \
    " SELECT to_jsonb(ins) FROM ins"
#define TG_CRUD_UPDATE(TABLE, KEY, SET, COLS)                                                      \
    "WITH cur AS (SELECT to_jsonb(x) AS j FROM " TABLE " x WHERE x." KEY " = $1 FOR UPDATE),"      \
    " r AS (SELECT p.* FROM cur, jsonb_populate_record(NULL::" TABLE ", cur.j || $2::jsonb) p),"   \
    " upd AS (UPDATE " TABLE " t SET " SET ", updated_at = now() FROM r WHERE t." KEY " = $1"      \
    " RETURNING t.*) SELECT to_jsonb(u) FROM (SELECT " COLS " FROM upd) u"
#define TG_CRUD_DELETE(TABLE, KEY) "DELETE FROM " TABLE " WHERE " KEY " = $1 RETURNING " KEY

/* Nested under a workspace: $1 is the workspace, the rest shift by one. */
#define TG_CRUD_N_LIST(TABLE, KEY, COLS)                                                           \
    "SELECT to_jsonb(t) FROM (SELECT " COLS " FROM " TABLE " WHERE workspace = $1 AND"             \
    " ($2::text IS NULL OR " KEY " > $2) ORDER BY " KEY " LIMIT $3::int) t"
#define TG_CRUD_N_GET(TABLE, KEY, COLS)                                                            \
    "SELECT to_jsonb(t) FROM (SELECT " COLS " FROM " TABLE " WHERE workspace = $1 AND " KEY        \
    " = $2) t"
#define TG_CRUD_N_INSERT(TABLE, INSCOLS, SELECT, COLS)                                             \
    "WITH r AS (SELECT * FROM jsonb_populate_record(NULL::" TABLE ","                              \
    " $2::jsonb || jsonb_build_object('workspace', $1::text))),"                                   \
    " ins AS (INSERT INTO " TABLE " (workspace, " INSCOLS ") SELECT workspace, " SELECT            \
    " FROM r RETURNING " COLS ") SELECT to_jsonb(ins) FROM ins"
#define TG_CRUD_N_UPDATE(TABLE, KEY, SET, COLS)                                                    \
    "WITH cur AS (SELECT to_jsonb(x) AS j FROM " TABLE " x WHERE x.workspace = $1 AND x." KEY      \
    " = $2 FOR UPDATE),"                                                                           \
    " r AS (SELECT p.* FROM cur, jsonb_populate_record(NULL::" TABLE ", cur.j || $3::jsonb) p),"   \
    " upd AS (UPDATE " TABLE " t SET " SET ", updated_at = now() FROM r WHERE t.workspace = $1"    \
    " AND t." KEY " = $2 RETURNING t.*) SELECT to_jsonb(u) FROM (SELECT " COLS " FROM upd) u"
#define TG_CRUD_N_DELETE(TABLE, KEY)                                                               \
    "DELETE FROM " TABLE " WHERE workspace = $1 AND " KEY " = $2 RETURNING " KEY

#define TG_CRUD_STMTS(TABLE, KEY, COLS, INSCOLS, SELECT, SET)                                      \
    {                                                                                              \
        .nested = 0, .list = TG_STMT(TG_CRUD_LIST(TABLE, KEY, COLS)),                              \
        .get = TG_STMT(TG_CRUD_GET(TABLE, KEY, COLS)),                                             \
        .insert = TG_STMT(TG_CRUD_INSERT(TABLE, INSCOLS, SELECT, COLS)),                           \
        .update = TG_STMT(TG_CRUD_UPDATE(TABLE, KEY, SET, COLS)),                                  \
        .del = TG_STMT(TG_CRUD_DELETE(TABLE, KEY)),                                                \
    }
#define TG_CRUD_N_STMTS(TABLE, KEY, COLS, INSCOLS, SELECT, SET)                                    \
    {                                                                                              \
        .nested = 1, .list = TG_STMT(TG_CRUD_N_LIST(TABLE, KEY, COLS)),                            \
        .get = TG_STMT(TG_CRUD_N_GET(TABLE, KEY, COLS)),                                           \
        .insert = TG_STMT(TG_CRUD_N_INSERT(TABLE, INSCOLS, SELECT, COLS)),                         \
        .update = TG_STMT(TG_CRUD_N_UPDATE(TABLE, KEY, SET, COLS)),                                \
        .del = TG_STMT(TG_CRUD_N_DELETE(TABLE, KEY)),                                              \
    }

#endif
