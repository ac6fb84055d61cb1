/* Strict checks on a request head libmicrohttpd accepted. */
#include "http/head_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "auth/reason.h"
#include "core/mem.h"

typedef struct {
    unsigned content_lengths;
    const char *transfer_encoding;
    const char *bad_name;
    const char *bad_value; /* the name of a header whose value has a control byte */
    size_t bytes;          /* every header but Authorization, as sent */
    size_t authorization;
} head_scan_t;

/* RFC 9110 token characters. */
static int head_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static enum MHD_Result head_scan(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    head_scan_t *h = cls;
    (void)kind;
    if (!key)
        return MHD_YES;
    value = value ? value : "";
    size_t klen = strlen(key), vlen = strlen(value);
    if (!h->bad_name) {
        int ok = klen > 0;
        for (size_t i = 0; ok && i < klen; i++)
            ok = head_tchar((unsigned char)key[i]);
        if (!ok)
            h->bad_name = key;
    }
    for (size_t i = 0; !h->bad_value && i < vlen; i++) {
        unsigned char c = (unsigned char)value[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            h->bad_value = key;
    }
    if (strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION) == 0)
        h->authorization += klen + vlen + 4;
    else
        h->bytes += klen + vlen + 4;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
        h->content_lengths++;
    if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
        h->transfer_encoding = value;
    return MHD_YES;
}

static int head_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A control byte in the target, as sent or percent-encoded. */
static int head_target_has_control(const char *t)
{
    for (size_t i = 0; t[i]; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c < 0x20 || c == 0x7f)
            return 1;
        if (c == '%' && head_hex(t[i + 1]) >= 0 && head_hex(t[i + 2]) >= 0) {
            int v = head_hex(t[i + 1]) * 16 + head_hex(t[i + 2]);
            if (v < 0x20 || v == 0x7f)
                return 1;
        }
    }
    return 0;
}

static int head_fault(tg_head_fault_t *f, unsigned status, const char *slug, const char *title,
                      const char *fmt, ...) TG_PRINTF(5, 6);

static int head_fault(tg_head_fault_t *f, unsigned status, const char *slug, const char *title,
                      const char *fmt, ...)
{
    f->status = status;
    f->slug = slug;
    f->title = title;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
    va_end(ap);
    return -1;
}

int tg_head_check(struct MHD_Connection *conn, const char *raw_target, const char *version,
                  const tg_config_t *cfg, tg_head_fault_t *f)
{
    memset(f, 0, sizeof(*f));
    if (strlen(raw_target) > TG_HEAD_MAX_TARGET_BYTES)
        return head_fault(f, 414, "uri-too-long", "URI Too Long",
                          "the request target is longer than %d bytes", TG_HEAD_MAX_TARGET_BYTES);
    if (head_target_has_control(raw_target))
        return head_fault(f, 400, "bad-request", "Bad Request",
                          "the request target contains a NUL or control byte");
    head_scan_t h = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, head_scan, &h);
    if (h.bad_name)
        return head_fault(f, 400, "bad-request", "Bad Request",
                          "a header name is not an RFC 9110 token (a space before the colon or "
                          "a control byte)");
    if (h.bad_value)
        return head_fault(f, 400, "bad-request", "Bad Request",
                          "the value of a header contains a control byte");
    if (h.content_lengths > 1)
        return head_fault(f, 400, "bad-request", "Bad Request",
                          "the request has %u Content-Length headers; one at most",
                          h.content_lengths);
    if (h.transfer_encoding && h.content_lengths)
        return head_fault(f, 400, "bad-request", "Bad Request",
                          "the request has both Content-Length and Transfer-Encoding");
    if (h.transfer_encoding && strcasecmp(h.transfer_encoding, "chunked") != 0)
        return head_fault(f, 501, "not-implemented", "Not Implemented",
                          "Transfer-Encoding must be chunked");
    if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 &&
        !MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))
        return head_fault(f, 400, "bad-request", "Bad Request",
                          "an HTTP/1.1 request needs a Host header");
    const char *expect = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
    if (expect && strcasecmp(expect, "100-continue") != 0)
        return head_fault(f, 417, "expectation-failed", "Expectation Failed",
                          "the only expectation served is 100-continue");
    if (h.authorization > (size_t)cfg->max_header_bytes) {
        f->www_authenticate = tg_auth_www_authenticate(TG_AUTH_TOO_LARGE);
        return head_fault(f, 401, "unauthorized", "Unauthorized",
                          "the bearer token is larger than max_header_bytes (%ld)",
                          cfg->max_header_bytes);
    }
    if (h.bytes > (size_t)cfg->max_header_bytes)
        return head_fault(
            f, 431, "request-header-fields-too-large", "Request Header Fields Too Large",
            "the request's headers are larger than max_header_bytes (%ld)", cfg->max_header_bytes);
    return 0;
}
