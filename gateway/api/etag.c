/* Conditional GETs (see etag.h). */
#include "api/etag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "http/problem.h"

void tg_etag_of(const void *data, size_t len, char out[TG_ETAG_LEN])
{
    char hex[65];
    tg_sha256_hex(data, len, hex);
    snprintf(out, TG_ETAG_LEN, "\"sha256:%s\"", hex);
}

int tg_etag_matches(const char *inm, const char *etag)
{
    size_t tlen = strlen(etag);
    const char *p = inm;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p == '*')
            return 1;
        if (p[0] == 'W' && p[1] == '/')
            p += 2;
        size_t n = strcspn(p, ",");
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n == tlen && memcmp(p, etag, tlen) == 0)
            return 1;
        p += strcspn(p, ",");
    }
    return 0;
}

void tg_resp_conditional(tg_req_t *req, const char *content_type, const void *data, size_t len,
                         const char *etag, const char *cache_control)
{
    char tag[TG_ETAG_LEN];
    if (!etag) {
        tg_etag_of(data, len, tag);
        etag = tag;
    }
    const char *inm = tg_req_header(req, "If-None-Match");
    if (inm && tg_etag_matches(inm, etag))
        tg_resp_bytes(req, 304, NULL, "", 0);
    else
        tg_resp_bytes(req, 200, content_type, data, len);
    tg_resp_header(req, "ETag", etag);
    tg_resp_header(req, "Cache-Control", cache_control ? cache_control : "no-cache");
}

void tg_resp_json_conditional(tg_req_t *req, json_t *body, const char *cache_control)
{
    /* the flags of tg_resp_json, so a conditional answer is byte for byte
     * what an unconditional one would be */
    char *s = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY |
                                   JSON_REAL_PRECISION(15));
    json_decref(body);
    if (!s) {
        tg_problem(req, TG_EINTERNAL, NULL, "the answer could not be written");
        return;
    }
    tg_resp_conditional(req, "application/json", s, strlen(s), NULL, cache_control);
    free(s);
}
