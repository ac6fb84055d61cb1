/* Helpers for statements that answer with one jsonb column per row. */
#ifndef TG_STORE_JSON_ROWS_H
#define TG_STORE_JSON_ROWS_H

#include <jansson.h>

#include "store/pool.h"

/* Run stmt; the first column of the first row parsed as JSON into *out (new
 * reference). TG_ENOTFOUND when no row comes back. */
tg_rc_e tg_db_json_one(tg_db_conn_t *conn, tg_stmt_t *stmt, int n, const char *const *vals,
                       json_t **out) TG_MUSTCHECK;
/* Run stmt; every row's first column parsed into a new JSON array in *out. */
tg_rc_e tg_db_json_all(tg_db_conn_t *conn, tg_stmt_t *stmt, int n, const char *const *vals,
                       json_t **out) TG_MUSTCHECK;

/* Drop the blanks PostgreSQL puts after ',' and ':' in jsonb text (any
 * whitespace outside strings), in place; returns s. */
char *tg_json_text_compact(char *s);

#endif
