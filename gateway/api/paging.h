/* Cursor pagination: `limit` (1..200, default 50) and an opaque `cursor`
 * that encodes the sort key of the last item of the previous page. */
#ifndef TG_API_PAGING_H
#define TG_API_PAGING_H

#include <jansson.h>

#include "http/request.h"

#define TG_PAGE_DEFAULT 50
#define TG_PAGE_MAX     200

typedef struct {
    int limit;
    const char *after; /* decoded cursor (arena memory) or NULL */
} tg_page_t;

/* Read limit and cursor; on a bad value answers 400 and returns -1. */
int tg_page_or_reply(tg_req_t *req, tg_page_t *page);
/* For lists ordered by a numeric id: the page's cursor as the positive id
 * of the last row shown (0 on the first page). On a cursor that holds
 * anything else answers 400 and returns -1. */
int tg_page_after_id_or_reply(tg_req_t *req, const tg_page_t *page, long *id);
/* The cursor text for a row (arena memory), e.g. its name; `arg` is what
 * the caller passed with the function. */
typedef const char *(*tg_page_key_fn)(tg_req_t *req, const json_t *row, void *arg);

/* The key of rows ordered by their integer "id" (with
 * tg_page_after_id_or_reply). */
const char *tg_page_id_key(tg_req_t *req, const json_t *row, void *arg);

/* The next_cursor of a page (new reference): the store is asked for
 * limit+1 rows, and an extra row, removed here from `items`, means there is
 * a next page, whose cursor encodes key(last row shown); null otherwise. */
json_t *tg_page_next(tg_req_t *req, const tg_page_t *page, json_t *items, tg_page_key_fn key,
                     void *arg);
/* Answer 200 with {items, next_cursor}; `items` is stolen. The store is
 * asked for limit+1 rows: an extra row means there is a next page, whose
 * cursor encodes key(last row shown). */
void tg_page_reply_fn(tg_req_t *req, const tg_page_t *page, json_t *items, tg_page_key_fn key,
                      void *arg);
/* Same, with the row's string field `key_field` as the cursor text. */
void tg_page_reply(tg_req_t *req, const tg_page_t *page, json_t *items, const char *key_field);

#endif
