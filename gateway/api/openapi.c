/* GET /v1/openapi.yaml: the REST contract, served from memory. */
#include "api/openapi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "http/problem.h"

/* Written only by load/unload, which run while no request is served. */
static struct {
    char *data;
    size_t len;
    char etag[80]; /* "\"sha256:<64 hex>\"" */
} openapi_doc;

tg_rc_e tg_api_openapi_load(const char *path, char *err, size_t errlen)
{
    tg_rc_e rc = TG_OK;
    char *data = NULL;
    size_t len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return TG_ENOTFOUND;
    }
    data = tg_xmalloc(TG_OPENAPI_MAX_BYTES + 1);
    len = fread(data, 1, TG_OPENAPI_MAX_BYTES + 1, f);
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        rc = TG_EINTERNAL;
    } else if (len > TG_OPENAPI_MAX_BYTES) {
        snprintf(err, errlen, "%s is larger than %u bytes", path, TG_OPENAPI_MAX_BYTES);
        rc = TG_ETOOLARGE;
    } else if (len == 0 || memchr(data, '\0', len)) {
        snprintf(err, errlen, "%s is empty or holds a NUL byte; it is not a YAML document", path);
        rc = TG_EINVAL;
    }
    fclose(f);
    if (rc != TG_OK) {
        free(data);
        return rc;
    }
    data = tg_xrealloc(data, len + 1);
    data[len] = '\0';
    tg_api_openapi_unload();
    char hex[65];
    tg_sha256_hex(data, len, hex);
    snprintf(openapi_doc.etag, sizeof(openapi_doc.etag), "\"sha256:%s\"", hex);
    openapi_doc.data = data;
    openapi_doc.len = len;
    return TG_OK;
}

void tg_api_openapi_unload(void)
{
    free(openapi_doc.data);
    memset(&openapi_doc, 0, sizeof(openapi_doc));
}

/* 1 when an If-None-Match value ("*", or a list of entity tags, weak ones
 * compared weakly as RFC 9110 says for GET) names the document's tag. */
static int openapi_etag_matches(const char *inm)
{
    size_t tlen = strlen(openapi_doc.etag);
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
        if (n == tlen && memcmp(p, openapi_doc.etag, tlen) == 0)
            return 1;
        p += strcspn(p, ",");
    }
    return 0;
}

void tg_api_openapi(tg_req_t *req)
{
    if (!openapi_doc.data) {
        tg_problem(req, TG_EUNAVAILABLE, NULL, "the OpenAPI document was not loaded at start");
        return;
    }
    const char *inm = tg_req_header(req, "If-None-Match");
    if (inm && openapi_etag_matches(inm)) {
        tg_resp_bytes(req, 304, NULL, "", 0);
    } else {
        tg_resp_bytes(req, 200, "application/yaml", openapi_doc.data, openapi_doc.len);
        tg_resp_header(req, "Cache-Control", "no-cache");
    }
    tg_resp_header(req, "ETag", openapi_doc.etag);
}
