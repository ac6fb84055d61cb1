/* multipart/form-data parsing (see multipart.h). */
#include "http/multipart.h"

#include <string.h>
#include <strings.h>

#define MP_MAX_BOUNDARY 70

static int mp_tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* RFC 2046 bchars (a space only inside). */
static int mp_bchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("'()+_,-./:=? ", c));
}

static const char *mp_skip_ows(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* A parameter value at p (a token or a quoted-string, backslash escapes
 * undone) copied into the arena. RET: the position after it, or NULL. */
static const char *mp_value(const char *p, const char *end, tg_arena_t *arena, char **out)
{
    if (p < end && *p == '"') {
        char *buf = tg_arena_alloc(arena, (size_t)(end - p) + 1);
        size_t n = 0;
        for (p++; p < end; p++) {
            if (*p == '"') {
                buf[n] = '\0';
                *out = buf;
                return p + 1;
            }
            if (*p == '\\' && p + 1 < end)
                p++;
            buf[n++] = *p;
        }
        return NULL; /* the quote never closes */
    }
    const char *start = p;
    while (p < end && mp_tchar(*p))
        p++;
    if (p == start)
        return NULL;
    *out = tg_arena_strndup(arena, start, (size_t)(p - start));
    return p;
}

int tg_multipart_boundary(const char *ct, char *out, size_t n, const char **why)
{
    const char *end = ct + strlen(ct);
    const char *p = memchr(ct, ';', (size_t)(end - ct));
    while (p && p < end) {
        p = mp_skip_ows(p + 1, end);
        const char *eq = p;
        while (eq < end && mp_tchar(*eq))
            eq++;
        if (eq == p || eq >= end || *eq != '=') {
            *why = "the Content-Type parameters are malformed";
            return -1;
        }
        size_t namelen = (size_t)(eq - p);
        const char *vstart = eq + 1, *vend;
        if (vstart < end && *vstart == '"') {
            vstart++;
            vend = memchr(vstart, '"', (size_t)(end - vstart));
            if (!vend) {
                *why = "a Content-Type parameter's quote does not close";
                return -1;
            }
            p = vend + 1;
        } else {
            vend = vstart;
            while (vend < end && mp_tchar(*vend))
                vend++;
            p = vend;
        }
        const char *after = mp_skip_ows(p, end);
        if (after < end && *after != ';') {
            *why = "the Content-Type parameters are malformed";
            return -1;
        }
        if (namelen == 8 && strncasecmp(eq - 8, "boundary", 8) == 0) {
            size_t blen = (size_t)(vend - vstart);
            if (blen == 0 || blen > MP_MAX_BOUNDARY || blen >= n || vstart[blen - 1] == ' ') {
                *why = "the multipart boundary is empty, too long or ends in a space";
                return -1;
            }
            for (size_t i = 0; i < blen; i++)
                if (!mp_bchar(vstart[i])) {
                    *why = "the multipart boundary holds a character RFC 2046 does not allow";
                    return -1;
                }
            memcpy(out, vstart, blen);
            out[blen] = '\0';
            return 0;
        }
        p = after < end ? after : NULL;
    }
    *why = "multipart/form-data needs a boundary parameter";
    return -1;
}

/* Content-Disposition: form-data; name="x"; filename="y" */
static int mp_disposition(const char *p, const char *end, tg_arena_t *arena,
                          tg_multipart_part_t *part, const char **why)
{
    p = mp_skip_ows(p, end);
    const char *type = p;
    while (p < end && mp_tchar(*p))
        p++;
    if ((size_t)(p - type) != 9 || strncasecmp(type, "form-data", 9) != 0) {
        *why = "a part's Content-Disposition is not form-data";
        return -1;
    }
    for (;;) {
        p = mp_skip_ows(p, end);
        if (p == end)
            return 0;
        if (*p != ';') {
            *why = "a part's Content-Disposition is malformed";
            return -1;
        }
        p = mp_skip_ows(p + 1, end);
        const char *pname = p;
        while (p < end && mp_tchar(*p))
            p++;
        size_t plen = (size_t)(p - pname);
        if (!plen || p == end || *p != '=') {
            *why = "a part's Content-Disposition is malformed";
            return -1;
        }
        char *value = NULL;
        p = mp_value(p + 1, end, arena, &value);
        if (!p) {
            *why = "a part's Content-Disposition has a malformed or unclosed value";
            return -1;
        }
        const char **slot = NULL;
        if (plen == 4 && strncasecmp(pname, "name", 4) == 0)
            slot = &part->name;
        else if (plen == 8 && strncasecmp(pname, "filename", 8) == 0)
            slot = &part->filename;
        if (slot) {
            if (*slot) {
                *why = "a part's Content-Disposition repeats a parameter";
                return -1;
            }
            *slot = value;
        }
    }
}

/* The header lines of one part, [p, hend): hend is the CRLF that ends the
 * last line (an empty line follows it). */
static int mp_headers(const char *p, const char *hend, tg_arena_t *arena, tg_multipart_part_t *part,
                      const char **why)
{
    int seen = 0;
    while (p < hend) {
        const char *eol = memmem(p, (size_t)(hend - p) + 2, "\r\n", 2);
        if (*p == ' ' || *p == '\t') {
            *why = "a part's header is folded over lines";
            return -1;
        }
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        const char *n = p;
        while (n < eol && mp_tchar(*n))
            n++;
        if (!colon || n != colon || n == p) {
            *why = "a part's header line is not name: value";
            return -1;
        }
        if (colon - p == 19 && strncasecmp(p, "Content-Disposition", 19) == 0) {
            if (seen++) {
                *why = "a part has two Content-Disposition headers";
                return -1;
            }
            if (mp_disposition(colon + 1, eol, arena, part, why) != 0)
                return -1;
        }
        p = eol + 2;
    }
    if (!seen) {
        *why = "a part has no Content-Disposition header";
        return -1;
    }
    return 0;
}

int tg_multipart_parse(const tg_multipart_req_t *r, size_t *nparts, const char **why)
{
    const char *boundary = r->boundary, *body = r->body;
    size_t len = r->len;
    char delim[MP_MAX_BOUNDARY + 5];
    size_t blen = strlen(boundary);
    *nparts = 0;
    if (blen == 0 || blen > MP_MAX_BOUNDARY) {
        *why = "the multipart boundary is empty or too long";
        return -1;
    }
    /* "\r\n--boundary": the first delimiter may also open the body */
    memcpy(delim, "\r\n--", 4);
    memcpy(delim + 4, boundary, blen);
    size_t dlen = blen + 4;
    const char *end = body + len;
    const char *p;
    if (len >= dlen - 2 && memcmp(body, delim + 2, dlen - 2) == 0)
        p = body + dlen - 2;
    else if ((p = memmem(body, len, delim, dlen)) != NULL)
        p += dlen;
    else {
        *why = "the multipart body has no delimiter line";
        return -1;
    }
    for (;;) {
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            return 0;            /* the closing delimiter; an epilogue is ignored */
        p = mp_skip_ows(p, end); /* transport padding */
        if (end - p < 2 || p[0] != '\r' || p[1] != '\n') {
            *why = "a multipart delimiter line is malformed";
            return -1;
        }
        p += 2;
        if (*nparts == r->max_parts) {
            *why = "the multipart body has too many parts";
            return -1;
        }
        /* header lines [p, hend), then CRLF CRLF (or a lone CRLF: none) */
        const char *hend, *content;
        if (end - p >= 2 && p[0] == '\r' && p[1] == '\n') {
            hend = p;
            content = p + 2;
        } else if ((hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4)) != NULL) {
            content = hend + 4;
        } else {
            *why = "a multipart part has no end of headers";
            return -1;
        }
        tg_multipart_part_t *part = &r->parts[*nparts];
        memset(part, 0, sizeof(*part));
        if (mp_headers(p, hend, r->arena, part, why) != 0)
            return -1;
        const char *next = memmem(content, (size_t)(end - content), delim, dlen);
        if (!next) {
            *why = "a multipart part is not terminated by a delimiter";
            return -1;
        }
        part->data = content;
        part->len = (size_t)(next - content);
        (*nparts)++;
        p = next + dlen;
    }
}
