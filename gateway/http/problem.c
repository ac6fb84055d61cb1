/* RFC 9457 problem+json answers. */
#include "http/problem.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/mem.h"

json_t *tg_problem_error(const char *path, int line, int column, const char *message)
{
    json_t *e = json_object();
    json_object_set_new(e, "path", json_string(path ? path : ""));
    if (line > 0)
        json_object_set_new(e, "line", json_integer(line));
    if (column > 0)
        json_object_set_new(e, "column", json_integer(column));
    json_object_set_new(e, "message", json_string(message ? message : ""));
    return e;
}

static void problem_vsend_http(tg_req_t *req, unsigned status, const char *slug, const char *title,
                               json_t *errors, const char *fmt, va_list ap)
{
    char detail[1024];
    vsnprintf(detail, sizeof(detail), fmt, ap);
    char type[160];
    snprintf(type, sizeof(type), TG_PROBLEM_TYPE_BASE "%s", slug);

    json_t *p = json_object();
    json_object_set_new(p, "type", json_string(type));
    json_object_set_new(p, "title", json_string(title));
    json_object_set_new(p, "status", json_integer(status));
    json_t *d = json_string(detail);
    json_object_set_new(p, "detail", d ? d : json_string("(detail was not valid UTF-8)"));
    json_object_set_new(p, "instance", json_string(req->request_id));
    if (errors)
        json_object_set_new(p, "errors", errors);
    tg_resp_json(req, status, p);
}

static void problem_vsend(tg_req_t *req, tg_rc_e rc, const char *slug, json_t *errors,
                          const char *fmt, va_list ap)
{
    problem_vsend_http(req, tg_rc_http_status(rc), slug ? slug : tg_rc_slug(rc), tg_rc_title(rc),
                       errors, fmt, ap);
}

void tg_problem_http(tg_req_t *req, unsigned status, const char *slug, const char *title,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    problem_vsend_http(req, status, slug, title, NULL, fmt, ap);
    va_end(ap);
}

void tg_problem(tg_req_t *req, tg_rc_e rc, json_t *errors, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    problem_vsend(req, rc, NULL, errors, fmt, ap);
    va_end(ap);
}

void tg_problem_typed(tg_req_t *req, tg_rc_e rc, const char *type_slug, json_t *errors,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    problem_vsend(req, rc, type_slug, errors, fmt, ap);
    va_end(ap);
}
