/* The single table that maps taugate statuses to HTTP and problem types. */
#include "core/status.h"

static const struct {
    unsigned http;
    const char *slug;
    const char *title;
} status_table[TG_RC_COUNT] = {
    [TG_OK] = {200, "ok", "OK"},
    [TG_EINVAL] = {400, "bad-request", "Bad Request"},
    [TG_EUNPROCESSABLE] = {422, "validation-failed", "Unprocessable Content"},
    [TG_EUNAUTH] = {401, "unauthorized", "Unauthorized"},
    [TG_EFORBIDDEN] = {403, "forbidden", "Forbidden"},
    [TG_ENOTFOUND] = {404, "not-found", "Not Found"},
    [TG_EMETHOD] = {405, "method-not-allowed", "Method Not Allowed"},
    [TG_ENOTACCEPT] = {406, "not-acceptable", "Not Acceptable"},
    [TG_ECONFLICT] = {409, "conflict", "Conflict"},
    [TG_ETOOLARGE] = {413, "payload-too-large", "Content Too Large"},
    [TG_EMEDIATYPE] = {415, "unsupported-media-type", "Unsupported Media Type"},
    [TG_ERATELIMIT] = {429, "rate-limited", "Too Many Requests"},
    [TG_EINTERNAL] = {500, "internal", "Internal Server Error"},
    [TG_EUNAVAILABLE] = {503, "unavailable", "Service Unavailable"},
    [TG_EUPSTREAM] = {502, "upstream", "Bad Gateway"},
    [TG_ETIMEOUT] = {504, "timeout", "Gateway Timeout"},
};

unsigned tg_rc_http_status(tg_rc_e rc)
{
    return (unsigned)rc < TG_RC_COUNT ? status_table[rc].http : 500;
}

const char *tg_rc_slug(tg_rc_e rc)
{
    return (unsigned)rc < TG_RC_COUNT ? status_table[rc].slug : "internal";
}

const char *tg_rc_title(tg_rc_e rc)
{
    return (unsigned)rc < TG_RC_COUNT ? status_table[rc].title : "Internal Server Error";
}
