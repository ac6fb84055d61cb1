/* Dotted field paths for diagnostics. */
#include "tauyaml/path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

void tg_tauyaml_path_init(tg_tauyaml_path_t *p)
{
    p->cap = 128;
    p->s = tg_xmalloc(p->cap);
    p->s[0] = '\0';
    p->len = 0;
}

void tg_tauyaml_path_clean(tg_tauyaml_path_t *p)
{
    TG_FREE_NULL(p->s);
    p->len = p->cap = 0;
}

static void path_reserve(tg_tauyaml_path_t *p, size_t extra)
{
    size_t need = p->len + extra + 1;
    if (need <= p->cap)
        return;
    size_t cap = p->cap ? p->cap : 128;
    while (cap < need)
        cap *= 2;
    p->s = tg_xrealloc(p->s, cap);
    p->cap = cap;
}

static int path_key_is_plain(const char *key, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)key[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

size_t tg_tauyaml_path_push_key(tg_tauyaml_path_t *p, const char *key, size_t keylen)
{
    size_t old = p->len;
    if (path_key_is_plain(key, keylen)) {
        path_reserve(p, keylen + 1);
        if (p->len)
            p->s[p->len++] = '.';
        memcpy(p->s + p->len, key, keylen);
        p->len += keylen;
    } else {
        /* Worst case every byte becomes \u00XX (6 bytes). */
        path_reserve(p, keylen * 6 + 4);
        p->s[p->len++] = '[';
        p->s[p->len++] = '"';
        for (size_t i = 0; i < keylen; i++) {
            unsigned char c = (unsigned char)key[i];
            if (c == '"' || c == '\\') {
                p->s[p->len++] = '\\';
                p->s[p->len++] = (char)c;
            } else if (c < 0x20) {
                snprintf(p->s + p->len, 7, "\\u%04x", c);
                p->len += 6;
            } else {
                p->s[p->len++] = (char)c;
            }
        }
        p->s[p->len++] = '"';
        p->s[p->len++] = ']';
    }
    p->s[p->len] = '\0';
    return old;
}

size_t tg_tauyaml_path_push_index(tg_tauyaml_path_t *p, size_t i)
{
    size_t old = p->len;
    path_reserve(p, 24);
    int n = snprintf(p->s + p->len, 24, "[%zu]", i);
    p->len += (size_t)n;
    return old;
}

void tg_tauyaml_path_pop(tg_tauyaml_path_t *p, size_t oldlen)
{
    if (oldlen <= p->len) {
        p->len = oldlen;
        p->s[p->len] = '\0';
    }
}

const char *tg_tauyaml_path_str(const tg_tauyaml_path_t *p)
{
    return p->s ? p->s : "";
}

size_t tg_tauyaml_path_parent(const char *path, size_t len)
{
    /* Walk forward so quoted segments (which may contain '.' or '[') are
     * skipped as a whole; remember where the last segment started. */
    size_t i = 0, last = 0;
    while (i < len) {
        last = i;
        if (path[i] == '[') {
            if (i + 1 < len && path[i + 1] == '"') {
                i += 2;
                while (i < len && path[i] != '"') {
                    if (path[i] == '\\' && i + 1 < len)
                        i++;
                    i++;
                }
                i += 2; /* closing quote and bracket */
            } else {
                while (i < len && path[i] != ']')
                    i++;
                i++;
            }
        } else {
            if (path[i] == '.')
                i++;
            while (i < len && path[i] != '.' && path[i] != '[')
                i++;
        }
    }
    return last;
}

const char *tg_tauyaml_path_cat(char *buf, size_t n, const char *a, const char *b, const char *c)
{
    const char *parts[3] = {a, b, c};
    size_t len = 0;
    for (size_t i = 0; i < 3; i++)
        for (const char *q = parts[i]; *q && len + 1 < n; q++)
            buf[len++] = *q;
    buf[len] = '\0';
    return buf;
}

char *tg_tauyaml_path_join(const char *parent, const char *key)
{
    tg_tauyaml_path_t p;
    tg_tauyaml_path_init(&p);
    size_t n = strlen(parent);
    path_reserve(&p, n);
    memcpy(p.s, parent, n + 1);
    p.len = n;
    tg_tauyaml_path_push_key(&p, key, strlen(key));
    return p.s;
}

size_t tg_tauyaml_path_field(char *buf, size_t n, const char *sect, const char *key)
{
    size_t sl = sect ? strlen(sect) : 0, kl = strlen(key);
    if (sl + kl + 2 > n) {
        if (n)
            buf[0] = '\0';
        return 0;
    }
    if (sl) {
        memcpy(buf, sect, sl);
        buf[sl++] = '.';
    }
    memcpy(buf + sl, key, kl + 1);
    return sl + kl;
}
