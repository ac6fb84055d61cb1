/* Cursor pagination helpers. */
#include "api/paging.h"

#include <stdlib.h>
#include <string.h>

#include "core/base64.h"
#include "http/problem.h"

static int paging_bad_cursor(tg_req_t *req)
{
    json_t *errors = json_array();
    json_array_append_new(errors,
                          tg_problem_error("cursor", 0, 0, "is not a cursor this server issued"));
    tg_problem(req, TG_EINVAL, errors, "invalid query parameter cursor");
    return -1;
}

int tg_page_or_reply(tg_req_t *req, tg_page_t *page)
{
    page->limit = TG_PAGE_DEFAULT;
    page->after = NULL;
    const char *lim = tg_req_query(req, "limit");
    if (lim) {
        char *end = NULL;
        long v = strtol(lim, &end, 10);
        if (!*lim || *end || v < 1 || v > TG_PAGE_MAX) {
            json_t *errors = json_array();
            json_array_append_new(
                errors, tg_problem_error("limit", 0, 0, "must be an integer from 1 to 200"));
            tg_problem(req, TG_EINVAL, errors, "invalid query parameter limit");
            return -1;
        }
        page->limit = (int)v;
    }
    const char *cur = tg_req_query(req, "cursor");
    if (cur && *cur) {
        unsigned char *raw = NULL;
        size_t rawlen = 0;
        if (tg_base64_decode(cur, strlen(cur), TG_B64_URL, &raw, &rawlen) != 0 ||
            memchr(raw, '\0', rawlen)) {
            free(raw);
            return paging_bad_cursor(req);
        }
        page->after = tg_arena_strndup(req->arena, (const char *)raw, rawlen);
        free(raw);
    }
    return 0;
}

int tg_page_after_id_or_reply(tg_req_t *req, const tg_page_t *page, long *id)
{
    *id = 0;
    if (!page->after)
        return 0;
    char *end = NULL;
    *id = strtol(page->after, &end, 10);
    return *end || *id <= 0 ? paging_bad_cursor(req) : 0;
}

json_t *tg_page_next(tg_req_t *req, const tg_page_t *page, json_t *items, tg_page_key_fn key,
                     void *arg)
{
    json_t *next = json_null();
    if (json_array_size(items) > (size_t)page->limit) {
        json_array_remove(items, (size_t)page->limit);
        const char *k = key(req, json_array_get(items, (size_t)page->limit - 1), arg);
        if (k) {
            char *enc = tg_base64_encode((const unsigned char *)k, strlen(k), TG_B64_URL);
            next = json_string(enc);
            free(enc);
        }
    }
    return next;
}

const char *tg_page_id_key(tg_req_t *req, const json_t *row, void *arg)
{
    (void)arg;
    return tg_arena_printf(req->arena, "%lld", json_integer_value(json_object_get(row, "id")));
}

void tg_page_reply_fn(tg_req_t *req, const tg_page_t *page, json_t *items, tg_page_key_fn key,
                      void *arg)
{
    json_t *next = tg_page_next(req, page, items, key, arg);
    tg_resp_json(req, 200, json_pack("{s:o, s:o}", "items", items, "next_cursor", next));
}

/* tg_page_reply's key: the string field whose name is `arg`. */
static const char *paging_field_key(tg_req_t *req, const json_t *row, void *arg)
{
    (void)req;
    return json_string_value(json_object_get(row, (const char *)arg));
}

void tg_page_reply(tg_req_t *req, const tg_page_t *page, json_t *items, const char *key_field)
{
    tg_page_reply_fn(req, page, items, paging_field_key, (void *)key_field);
}
