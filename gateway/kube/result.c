/* Kubernetes `Status` objects and HTTP codes mapped to one result struct. */
#include "kube/result.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESULT_TEXT_MAX 256

static const struct {
    const char *name;
    long http; /* the code that implies this reason when the body says nothing */
    tg_rc_e rc;
    int transient;
} reason_table[TG_KUBE_R_COUNT] = {
    [TG_KUBE_R_NONE] = {"", 200, TG_OK, 0},
    [TG_KUBE_R_UNKNOWN] = {"Unknown", 0, TG_EUPSTREAM, 0},
    [TG_KUBE_R_BAD_REQUEST] = {"BadRequest", 400, TG_EINVAL, 0},
    [TG_KUBE_R_UNAUTHORIZED] = {"Unauthorized", 401, TG_EUPSTREAM, 0},
    [TG_KUBE_R_FORBIDDEN] = {"Forbidden", 403, TG_EUPSTREAM, 0},
    [TG_KUBE_R_NOT_FOUND] = {"NotFound", 404, TG_ENOTFOUND, 0},
    [TG_KUBE_R_METHOD_NOT_ALLOWED] = {"MethodNotAllowed", 405, TG_EUPSTREAM, 0},
    [TG_KUBE_R_NOT_ACCEPTABLE] = {"NotAcceptable", 406, TG_EUPSTREAM, 0},
    [TG_KUBE_R_ALREADY_EXISTS] = {"AlreadyExists", 0, TG_ECONFLICT, 0},
    [TG_KUBE_R_CONFLICT] = {"Conflict", 409, TG_ECONFLICT, 0},
    [TG_KUBE_R_GONE] = {"Gone", 410, TG_EUPSTREAM, 0},
    [TG_KUBE_R_EXPIRED] = {"Expired", 0, TG_EUPSTREAM, 0},
    [TG_KUBE_R_REQUEST_ENTITY_TOO_LARGE] = {"RequestEntityTooLarge", 413, TG_ETOOLARGE, 0},
    [TG_KUBE_R_UNSUPPORTED_MEDIA_TYPE] = {"UnsupportedMediaType", 415, TG_EUPSTREAM, 0},
    [TG_KUBE_R_INVALID] = {"Invalid", 422, TG_EUNPROCESSABLE, 0},
    [TG_KUBE_R_TOO_MANY_REQUESTS] = {"TooManyRequests", 429, TG_EUNAVAILABLE, 1},
    [TG_KUBE_R_INTERNAL_ERROR] = {"InternalError", 500, TG_EUPSTREAM, 1},
    [TG_KUBE_R_SERVICE_UNAVAILABLE] = {"ServiceUnavailable", 503, TG_EUNAVAILABLE, 1},
    [TG_KUBE_R_TIMEOUT] = {"Timeout", 504, TG_ETIMEOUT, 1},
    [TG_KUBE_R_SERVER_TIMEOUT] = {"ServerTimeout", 0, TG_ETIMEOUT, 1},
    [TG_KUBE_R_NETWORK] = {"Network", 0, TG_EUNAVAILABLE, 1},
    [TG_KUBE_R_CLIENT_TIMEOUT] = {"ClientTimeout", 0, TG_ETIMEOUT, 1},
    [TG_KUBE_R_TOO_LARGE] = {"TooLarge", 0, TG_ETOOLARGE, 0},
    [TG_KUBE_R_DECODE] = {"Decode", 0, TG_EUPSTREAM, 0},
    [TG_KUBE_R_CANCELLED] = {"Cancelled", 0, TG_EUNAVAILABLE, 0},
    [TG_KUBE_R_CONFIG] = {"Config", 0, TG_EINVAL, 0},
};

void tg_kube_result_init(tg_kube_result_t *r)
{
    memset(r, 0, sizeof(*r));
    r->retry_after_s = -1;
}

void tg_kube_result_clean(tg_kube_result_t *r)
{
    if (!r)
        return;
    json_decref(r->body);
    free(r->message);
    tg_kube_result_init(r);
}

json_t *tg_kube_result_take_body(tg_kube_result_t *r)
{
    json_t *b = r->body;
    r->body = NULL;
    r->status = NULL;
    r->causes = NULL;
    return b;
}

tg_kube_reason_e tg_kube_reason_parse(const char *s)
{
    if (!s || !*s)
        return TG_KUBE_R_UNKNOWN;
    /* Client-side names are ours and never come from a server. */
    for (int i = TG_KUBE_R_UNKNOWN + 1; i < TG_KUBE_R_NETWORK; i++)
        if (strcmp(s, reason_table[i].name) == 0)
            return (tg_kube_reason_e)i;
    return TG_KUBE_R_UNKNOWN;
}

const char *tg_kube_reason_name(tg_kube_reason_e reason)
{
    if ((unsigned)reason >= TG_KUBE_R_COUNT)
        return "Unknown";
    return reason == TG_KUBE_R_NONE ? "Success" : reason_table[reason].name;
}

tg_kube_reason_e tg_kube_reason_from_http(long code)
{
    if (code >= 200 && code < 300)
        return TG_KUBE_R_NONE;
    for (int i = TG_KUBE_R_UNKNOWN + 1; i < TG_KUBE_R_NETWORK; i++)
        if (reason_table[i].http == code)
            return (tg_kube_reason_e)i;
    if (code == 502)
        return TG_KUBE_R_SERVICE_UNAVAILABLE; /* a proxy in front of the apiserver */
    if (code >= 500)
        return TG_KUBE_R_INTERNAL_ERROR;
    return TG_KUBE_R_UNKNOWN;
}

tg_rc_e tg_kube_reason_rc(tg_kube_reason_e reason)
{
    if ((unsigned)reason >= TG_KUBE_R_COUNT)
        return TG_EUPSTREAM;
    return reason_table[reason].rc;
}

int tg_kube_reason_transient(tg_kube_reason_e reason)
{
    return (unsigned)reason < TG_KUBE_R_COUNT && reason_table[reason].transient;
}

static void result_set_message(tg_kube_result_t *r, const char *s, size_t n)
{
    free(r->message);
    r->message = tg_xstrndup(s, n);
}

void tg_kube_result_fail(tg_kube_result_t *r, tg_kube_reason_e reason, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    r->reason = reason;
    r->rc = tg_kube_reason_rc(reason);
    result_set_message(r, msg, strlen(msg));
}

/* Both core/v1 Status and metav1.Status come as kind "Status"; a watch ERROR
 * object and a failed request's body have the same shape. */
static int result_is_status(const json_t *body)
{
    const char *kind = json_string_value(json_object_get(body, "kind"));
    return kind && strcmp(kind, "Status") == 0 && json_is_string(json_object_get(body, "status"));
}

void tg_kube_result_from_http(tg_kube_result_t *r, long http_code, json_t *body, const char *text,
                              size_t text_len)
{
    json_decref(r->body);
    r->body = body;
    r->status = NULL;
    r->causes = NULL;
    TG_FREE_NULL(r->message);
    r->http_code = http_code;
    r->reason = tg_kube_reason_from_http(http_code);

    if (body && result_is_status(body)) {
        r->status = body;
        const char *st = json_string_value(json_object_get(body, "status"));
        const char *reason = json_string_value(json_object_get(body, "reason"));
        const char *msg = json_string_value(json_object_get(body, "message"));
        json_t *causes = json_object_get(json_object_get(body, "details"), "causes");
        if (json_is_array(causes))
            r->causes = causes;
        if (msg)
            result_set_message(r, msg, strlen(msg));
        /* A failed answer's reason wins over what the code implies, so a 409
         * says AlreadyExists or Conflict and a 410 says Expired or Gone. */
        if (strcmp(st, "Failure") == 0 && !(http_code >= 200 && http_code < 300)) {
            tg_kube_reason_e parsed = tg_kube_reason_parse(reason);
            if (parsed != TG_KUBE_R_UNKNOWN)
                r->reason = parsed;
        }
    } else if (r->reason != TG_KUBE_R_NONE && text && text_len) {
        /* e.g. "404 page not found" from outside /api, or a proxy's page. */
        size_t n = text_len < RESULT_TEXT_MAX ? text_len : RESULT_TEXT_MAX;
        while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
            n--;
        result_set_message(r, text, n);
    }
    if (r->reason != TG_KUBE_R_NONE && !r->message) {
        char msg[64];
        snprintf(msg, sizeof(msg), "HTTP %ld", http_code);
        result_set_message(r, msg, strlen(msg));
    }
    r->rc = tg_kube_reason_rc(r->reason);
}
