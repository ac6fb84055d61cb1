/* tau.yaml text -> jansson tree + position table (libyaml event parser). */
#include "tauyaml/yaml_tree.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/buf.h"
#include "core/mem.h"
#include "tauyaml/path.h"

#define YT_TAG_PREFIX "tag:yaml.org,2002:"

void tg_tauyaml_doc_init(tg_tauyaml_doc_t *doc)
{
    doc->root = NULL;
    doc->pos = NULL;
}

void tg_tauyaml_doc_clean(tg_tauyaml_doc_t *doc)
{
    json_decref(doc->root);
    doc->root = NULL;
    tg_tauyaml_pos_free(doc->pos);
    doc->pos = NULL;
}

size_t tg_tauyaml_utf8_check(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        /* Mostly ASCII: skip eight bytes at a time while no high bit is set. */
        uint64_t w;
        if (len - i >= 8 && (memcpy(&w, s + i, 8), (w & 0x8080808080808080u) == 0)) {
            i += 8;
            continue;
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            cp = c & 0x07;
        } else {
            return i;
        }
        if (len - i - 1 < n)
            return i;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        /* Overlong forms, surrogates and code points past U+10FFFF. */
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += n + 1;
    }
    return len;
}

/* --- scalar resolution (yaml.v3 rules) ------------------------------------------------------ */

static int yt_is_one_of(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (strlen(*words) == n && memcmp(*words, s, n) == 0)
            return 1;
    return 0;
}

/* Go strconv.ParseInt(s, 0, 64) on text already stripped of '_'. */
static int yt_parse_int(const char *s, size_t n, json_int_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        neg = s[i] == '-';
        i++;
    }
    if (i >= n)
        return -1;
    unsigned base = 10;
    if (n - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        base = 16;
        i += 2;
    } else if (n - i >= 2 && s[i] == '0' && (s[i + 1] == 'o' || s[i + 1] == 'O')) {
        base = 8;
        i += 2;
    } else if (n - i >= 2 && s[i] == '0' && (s[i + 1] == 'b' || s[i + 1] == 'B')) {
        base = 2;
        i += 2;
    } else if (n - i >= 2 && s[i] == '0') {
        base = 8; /* legacy 0777 octal, still decoded by yaml.v3 */
        i += 1;
    }
    if (i >= n)
        return -1;
    uint64_t v = 0;
    for (; i < n; i++) {
        unsigned d;
        char c = s[i];
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return -1;
        if (d >= base)
            return -1;
        if (v > (UINT64_MAX - d) / base)
            return -1;
        v = v * base + d;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return -1;
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX)
            return -1;
        *out = (json_int_t)v;
    }
    return 0;
}

/* The number of decimal digits at s[*i..n), *i moved past them. */
static size_t yt_digits(const char *s, size_t n, size_t *i)
{
    size_t start = *i;
    while (*i < n && s[*i] >= '0' && s[*i] <= '9')
        (*i)++;
    return *i - start;
}

/* yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int yt_is_float(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    if (i < n && s[i] == '.') {
        i++;
        if (!yt_digits(s, n, &i))
            return 0;
    } else {
        if (!yt_digits(s, n, &i))
            return 0;
        if (i < n && s[i] == '.') {
            i++;
            (void)yt_digits(s, n, &i);
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (!yt_digits(s, n, &i))
            return 0;
    }
    return i == n;
}

json_t *tg_tauyaml_yaml_resolve_plain(const char *s, size_t n, int *nonfinite)
{
    static const char *const nulls[] = {"~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    static const char *const specials[] = {".nan",  ".NaN",  ".NAN",  ".inf",  ".Inf",
                                           ".INF",  "+.inf", "+.Inf", "+.INF", "-.inf",
                                           "-.Inf", "-.INF", NULL};
    *nonfinite = 0;
    if (n == 0)
        return json_null();
    char c = s[0];
    /* Every word below is at most five bytes long and starts with one of
     * these; most scalars are longer or start otherwise. */
    if (n <= 5 && memchr("~nNtTfF.+-", c, 10)) {
        if (yt_is_one_of(s, n, nulls))
            return json_null();
        if (yt_is_one_of(s, n, trues))
            return json_true();
        if (yt_is_one_of(s, n, falses))
            return json_false();
        if (yt_is_one_of(s, n, specials)) {
            *nonfinite = 1;
            return NULL;
        }
    }
    if (!((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') || n > 400)
        return json_stringn_nocheck(s, n);
    /* yaml.v3 drops every '_' before trying the numeric forms. */
    char buf[401];
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '_')
            buf[m++] = s[i];
    buf[m] = '\0';
    json_int_t iv;
    if (m > 0 && yt_parse_int(buf, m, &iv) == 0)
        return json_integer(iv);
    if (m > 0 && yt_is_float(buf, m)) {
        errno = 0;
        double d = strtod(buf, NULL);
        if (errno == 0 && isfinite(d))
            return json_real(d);
    } else if (m > 0) {
        /* Unsigned values past INT64_MAX (yaml.v3 gives uint64): keep the
         * magnitude as a real, since JSON integers here are int64. */
        const char *p = buf[0] == '+' ? buf + 1 : buf;
        size_t pm = strlen(p);
        int digits = pm > 0;
        for (size_t i = 0; i < pm; i++)
            digits &= p[i] >= '0' && p[i] <= '9';
        if (digits) {
            double d = strtod(p, NULL);
            if (isfinite(d))
                return json_real(d);
        }
    }
    return json_stringn_nocheck(s, n);
}

/* --- the event loop ------------------------------------------------------------------------- */

typedef struct yt_frame_s {
    json_t *node; /* own reference */
    int is_map;
    size_t path_len; /* path length of this container (its own segment included) */
    size_t index;    /* next sequence index */
    int have_key;
    size_t key_off; /* pending key: offset into st->keys (a stack of NUL-terminated keys) */
    size_t keylen;
    unsigned kline, kcol;
    int skip_value; /* the pending key is a duplicate: build its value, drop it */
} yt_frame_t;

typedef struct yt_state_s {
    const tg_tauyaml_limits_t *lim;
    tg_tauyaml_diag_t *diag;
    tg_tauyaml_pos_t *pos;
    tg_tauyaml_path_t path;
    yt_frame_t *stack;
    size_t depth, cap;
    size_t nodes;
    json_t *root;
    tg_buf_t keys; /* pending keys of all open mappings, innermost last */
    unsigned root_line, root_col;
    int failed; /* fatal: stop building the tree (the text is still scanned for syntax) */
    int errors; /* non-fatal errors seen */
} yt_state_t;

static unsigned yt_line(yaml_mark_t m)
{
    return (unsigned)m.line + 1;
}

static unsigned yt_col(yaml_mark_t m)
{
    return (unsigned)m.column + 1;
}

static void yt_fatal(yt_state_t *st, yaml_mark_t m, const char *msg)
{
    tg_tauyaml_diag_error_at(st->diag, tg_tauyaml_path_str(&st->path), yt_line(m), yt_col(m), "%s",
                             msg);
    st->failed = 1;
}

static const char *yt_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_ARRAY:
        return "a sequence";
    case JSON_STRING:
        return "a string";
    case JSON_NULL:
        return "empty";
    default:
        return "a scalar";
    }
}

/* Build the JSON value of a scalar event, honouring explicit tags. */
static json_t *yt_scalar(yt_state_t *st, const yaml_event_t *ev, int *is_string)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    unsigned line = yt_line(ev->start_mark), col = yt_col(ev->start_mark);
    const char *path = tg_tauyaml_path_str(&st->path);
    tg_tauyaml_qv_t q;

    *is_string = 0;
    if (memchr(v, '\0', n)) {
        tg_tauyaml_diag_error_at(st->diag, path, line, col,
                                 "strings may not contain NUL characters; remove the \\0 escape");
        st->errors++;
        return json_null();
    }
    const char *kind = NULL;
    if (tag && strncmp(tag, YT_TAG_PREFIX, strlen(YT_TAG_PREFIX)) == 0)
        kind = tag + strlen(YT_TAG_PREFIX);
    if (tag && !kind && strcmp(tag, "!") != 0) {
        tg_tauyaml_diag_error_at(st->diag, path, line, col,
                                 "YAML tag %s is not supported in tau.yaml; remove the tag",
                                 tg_tauyaml_qv(&q, tag));
        st->errors++;
        return json_null();
    }
    if ((!tag && !plain) || (tag && !kind) || (kind && strcmp(kind, "str") == 0)) {
        *is_string = 1;
        /* The document passed tg_tauyaml_utf8_check and libyaml emits only valid
         * UTF-8 (escapes included), so jansson need not check it again. */
        json_t *s = json_stringn_nocheck(v, n);
        return s ? s : json_null();
    }
    int nonfinite = 0;
    json_t *r = tg_tauyaml_yaml_resolve_plain(v, n, &nonfinite);
    if (nonfinite) {
        tg_tauyaml_diag_error_at(st->diag, path, line, col,
                                 "%s: non-finite numbers (.inf, .nan) are not supported; quote the "
                                 "value to make it a string",
                                 tg_tauyaml_qv(&q, v));
        st->errors++;
        return json_null();
    }
    if (kind && strcmp(kind, "str") != 0) {
        int ok = (strcmp(kind, "int") == 0 && json_is_integer(r)) ||
                 (strcmp(kind, "float") == 0 && json_is_number(r)) ||
                 (strcmp(kind, "bool") == 0 && json_is_boolean(r)) ||
                 (strcmp(kind, "null") == 0 && json_is_null(r));
        if (!ok) {
            if (strcmp(kind, "int") && strcmp(kind, "float") && strcmp(kind, "bool") &&
                strcmp(kind, "null"))
                tg_tauyaml_diag_error_at(
                    st->diag, path, line, col,
                    "YAML tag !!%s is not supported in tau.yaml; remove the tag", kind);
            else
                tg_tauyaml_diag_error_at(st->diag, path, line, col,
                                         "value \"%s\" does not match its tag !!%s",
                                         tg_tauyaml_qv(&q, v), kind);
            st->errors++;
            json_decref(r);
            return json_null();
        }
        if (strcmp(kind, "float") == 0 && json_is_integer(r)) {
            json_t *f = json_real((double)json_integer_value(r));
            json_decref(r);
            r = f;
        }
    }
    if (json_is_string(r))
        *is_string = 1;
    return r;
}

static int yt_collection_tag_ok(yt_state_t *st, const yaml_char_t *tag, const char *want,
                                yaml_mark_t m)
{
    if (!tag)
        return 1;
    const char *t = (const char *)tag;
    if (strcmp(t, "!") == 0)
        return 1;
    if (strncmp(t, YT_TAG_PREFIX, strlen(YT_TAG_PREFIX)) == 0 &&
        strcmp(t + strlen(YT_TAG_PREFIX), want) == 0)
        return 1;
    tg_tauyaml_qv_t q;
    tg_tauyaml_diag_error_at(st->diag, tg_tauyaml_path_str(&st->path), yt_line(m), yt_col(m),
                             "YAML tag %s is not supported in tau.yaml; remove the tag",
                             tg_tauyaml_qv(&q, t));
    st->errors++;
    return 0;
}

/* Attach `v` (a new reference, consumed) below the current top frame, or as
 * the root. Path must already name the node. */
static void yt_attach(yt_state_t *st, json_t *v)
{
    if (st->depth == 0) {
        st->root = v;
        return;
    }
    yt_frame_t *f = &st->stack[st->depth - 1];
    if (f->is_map) {
        if (f->skip_value)
            json_decref(v);
        else
            json_object_setn_new_nocheck(f->node, st->keys.data + f->key_off, f->keylen, v);
        st->keys.len = f->key_off; /* pop the key */
        f->have_key = 0;
        f->skip_value = 0;
    } else {
        json_array_append_new(f->node, v);
        f->index++;
    }
}

/* Push the path segment of the node about to start and work out its marks
 * (the key's position for a mapping value). */
static void yt_enter(yt_state_t *st, yaml_mark_t start, tg_tauyaml_mark_t *mk)
{
    memset(mk, 0, sizeof(*mk));
    mk->vline = yt_line(start);
    mk->vcol = yt_col(start);
    if (st->depth == 0) {
        mk->kline = mk->vline;
        mk->kcol = mk->vcol;
        st->root_line = mk->vline;
        st->root_col = mk->vcol;
        return;
    }
    yt_frame_t *f = &st->stack[st->depth - 1];
    if (f->is_map) {
        tg_tauyaml_path_push_key(&st->path, st->keys.data + f->key_off, f->keylen);
        mk->kline = f->kline;
        mk->kcol = f->kcol;
    } else {
        tg_tauyaml_path_push_index(&st->path, f->index);
        mk->kline = mk->vline;
        mk->kcol = mk->vcol;
    }
}

static int yt_record(yt_state_t *st, const tg_tauyaml_mark_t *mk, yaml_mark_t start,
                     const char *raw, size_t rawlen)
{
    if (tg_tauyaml_pos_add(st->pos, st->path.s, st->path.len, mk, raw, rawlen) != TG_OK) {
        yt_fatal(st, start, "the document has too many or too deeply nested fields");
        return -1;
    }
    return 0;
}

static size_t yt_parent_len(yt_state_t *st)
{
    return st->depth ? st->stack[st->depth - 1].path_len : 0;
}

static void yt_key(yt_state_t *st, const yaml_event_t *ev)
{
    yt_frame_t *f = &st->stack[st->depth - 1];
    const char *k = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    if (n > st->lim->max_key_bytes) {
        yt_fatal(st, ev->start_mark, "mapping key is too long");
        return;
    }
    if (memchr(k, '\0', n)) {
        yt_fatal(st, ev->start_mark, "mapping keys may not contain NUL characters");
        return;
    }
    f->key_off = st->keys.len;
    if (tg_buf_append(&st->keys, k, n) != TG_OK || tg_buf_append(&st->keys, "", 1) != TG_OK) {
        yt_fatal(st, ev->start_mark, "mapping keys are too long");
        return;
    }
    const char *key = st->keys.data + f->key_off;
    f->keylen = n;
    f->have_key = 1;
    f->kline = yt_line(ev->start_mark);
    f->kcol = yt_col(ev->start_mark);
    if (json_object_getn(f->node, key, n)) {
        /* Report at the second definition; the first keeps its place. */
        size_t old = tg_tauyaml_path_push_key(&st->path, k, n);
        const tg_tauyaml_mark_t *first = tg_tauyaml_pos_get(st->pos, st->path.s);
        tg_tauyaml_qv_t q;
        tg_tauyaml_diag_error_at(
            st->diag, st->path.s, f->kline, f->kcol,
            "mapping key \"%s\" already defined at line %u; remove one of them",
            tg_tauyaml_qv(&q, key), first ? first->kline : 0);
        tg_tauyaml_path_pop(&st->path, old);
        st->errors++;
        f->skip_value = 1;
    }
}

static void yt_push(yt_state_t *st, json_t *node, int is_map)
{
    if (st->depth == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 16;
        st->stack = tg_xrealloc(st->stack, st->cap * sizeof(*st->stack));
    }
    yt_frame_t *f = &st->stack[st->depth++];
    memset(f, 0, sizeof(*f));
    f->node = node;
    f->is_map = is_map;
    f->path_len = st->path.len;
}

static void yt_pop(yt_state_t *st)
{
    yt_frame_t *f = &st->stack[--st->depth];
    json_t *node = f->node;
    tg_tauyaml_path_pop(&st->path, yt_parent_len(st));
    yt_attach(st, node);
}

static void yt_node(yt_state_t *st, const yaml_event_t *ev)
{
    if (++st->nodes > st->lim->max_nodes) {
        yt_fatal(st, ev->start_mark, "the document has too many nodes");
        return;
    }
    if (st->depth > 0) {
        yt_frame_t *f = &st->stack[st->depth - 1];
        if (f->is_map && !f->have_key) {
            if (ev->type != YAML_SCALAR_EVENT) {
                yt_fatal(st, ev->start_mark,
                         "mapping keys must be plain scalars, not sequences or mappings");
                return;
            }
            yt_key(st, ev);
            return;
        }
    }
    tg_tauyaml_mark_t mk;
    yt_enter(st, ev->start_mark, &mk);
    if (ev->type == YAML_ALIAS_EVENT) {
        char msg[160];
        tg_tauyaml_qv_t q;
        snprintf(msg, sizeof(msg),
                 "YAML aliases (*%s) are not supported in tau.yaml; write the value out",
                 tg_tauyaml_qv(&q, (const char *)ev->data.alias.anchor));
        yt_fatal(st, ev->start_mark, msg);
        return;
    }
    if (ev->type == YAML_SCALAR_EVENT) {
        int is_string = 0;
        json_t *v = yt_scalar(st, ev, &is_string);
        const char *raw = is_string ? NULL : (const char *)ev->data.scalar.value;
        if (yt_record(st, &mk, ev->start_mark, raw, raw ? ev->data.scalar.length : 0) != 0) {
            json_decref(v);
            return;
        }
        tg_tauyaml_path_pop(&st->path, yt_parent_len(st));
        yt_attach(st, v);
        return;
    }
    if (st->depth + 1 > st->lim->max_depth) {
        char msg[96];
        snprintf(msg, sizeof(msg), "the document is nested deeper than %u levels",
                 st->lim->max_depth);
        yt_fatal(st, ev->start_mark, msg);
        return;
    }
    int is_map = ev->type == YAML_MAPPING_START_EVENT;
    const yaml_char_t *tag = is_map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    (void)yt_collection_tag_ok(st, tag, is_map ? "map" : "seq", ev->start_mark);
    if (yt_record(st, &mk, ev->start_mark, NULL, 0) != 0)
        return;
    yt_push(st, is_map ? json_object() : json_array(), is_map);
}

/* The text is not YAML: report the parser's error, and only it (what was
 * found in the part read before it is moot). libyaml's wording for a tab in
 * indentation never says "tab", so the offending byte is looked at. */
static void yt_syntax_error(yt_state_t *st, const yaml_parser_t *parser, const char *text,
                            size_t len)
{
    yaml_mark_t m = parser->problem_mark;
    json_array_clear(st->diag->errors);
    st->failed = 1;
    if (m.index < len && text[m.index] == '\t') {
        tg_tauyaml_diag_error_at(st->diag, "", yt_line(m), yt_col(m),
                                 "YAML syntax error: a tab character is not allowed here (YAML "
                                 "indents with spaces only); replace the tab with spaces");
        return;
    }
    tg_tauyaml_diag_error_at(st->diag, tg_tauyaml_path_str(&st->path), yt_line(m), yt_col(m),
                             "YAML syntax error: %s%s%s", parser->problem ? parser->problem : "",
                             parser->context ? " " : "", parser->context ? parser->context : "");
}

tg_rc_e tg_tauyaml_yaml_parse(const char *text, size_t len, const tg_tauyaml_limits_t *limits,
                              tg_tauyaml_doc_t *doc, tg_tauyaml_diag_t *diag)
{
    tg_rc_e rc = TG_EINVAL;
    yaml_parser_t parser;
    int parser_ready = 0;
    yt_state_t st;
    memset(&st, 0, sizeof(st));
    st.lim = limits;
    st.diag = diag;
    tg_tauyaml_path_init(&st.path);
    tg_buf_init(&st.keys, limits->max_doc_bytes + 1024);

    if (len > limits->max_doc_bytes) {
        tg_tauyaml_diag_error_at(diag, "", 1, 1,
                                 "the document is %zu bytes; the limit is %zu bytes", len,
                                 limits->max_doc_bytes);
        rc = TG_ETOOLARGE;
        goto out;
    }
    size_t bad = tg_tauyaml_utf8_check(text, len);
    if (bad < len) {
        unsigned line = 1, col = 1;
        for (size_t i = 0; i < bad; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
                col++;
            }
        }
        tg_tauyaml_diag_error_at(diag, "", line, col,
                                 "the document is not valid UTF-8 (bad byte 0x%02x at offset %zu); "
                                 "save the file as UTF-8",
                                 (unsigned char)text[bad], bad);
        goto out;
    }
    /* A leading byte-order mark is not content (yaml.v3 skips it too);
     * positions are counted from after it, as editors show them. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    /* Paths are stored per node; cap their total so a small document with
     * long keys nested deep cannot make the table huge. */
    size_t cap = len * 16 + 65536;
    doc->pos = tg_tauyaml_pos_new(cap < ((size_t)8 << 20) ? cap : ((size_t)8 << 20));
    st.pos = doc->pos;

    if (!yaml_parser_initialize(&parser)) {
        rc = TG_EINTERNAL;
        goto out;
    }
    parser_ready = 1;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);

    int ndocs = 0, done = 0, syntax = 0;
    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            yt_syntax_error(&st, &parser, text, len);
            syntax = 1;
            break;
        }
        /* After an error found inside the document the rest is only read
         * through, so a syntax error further down still makes it 400. */
        switch (st.failed ? (ev.type == YAML_STREAM_END_EVENT ? ev.type : YAML_NO_EVENT)
                          : ev.type) {
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
        case YAML_NO_EVENT:
            break;
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++ndocs > 1)
                yt_fatal(&st, ev.start_mark,
                         "only one YAML document is allowed; remove the '---' separator and "
                         "submit each run config separately");
            break;
        case YAML_ALIAS_EVENT:
        case YAML_SCALAR_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            yt_node(&st, &ev);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            yt_pop(&st);
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    if (syntax)
        goto out;
    /* A well-formed document: what is wrong inside it is 422. */
    rc = TG_EUNPROCESSABLE;
    if (st.failed || st.errors)
        goto out;
    if (!st.root || json_is_null(st.root)) {
        tg_tauyaml_diag_error_at(diag, "", st.root ? st.root_line : 1, st.root ? st.root_col : 1,
                                 "the document is empty; a tau.yaml needs at least name, engine "
                                 "and entrypoint");
        goto out;
    }
    if (!json_is_object(st.root)) {
        tg_tauyaml_diag_error_at(diag, "", st.root_line, st.root_col,
                                 "the top level of tau.yaml must be a mapping of fields "
                                 "(name: ..., engine: ...), not %s",
                                 yt_kind(st.root));
        goto out;
    }
    doc->root = st.root;
    st.root = NULL;
    rc = TG_OK;
out:
    while (st.depth > 0)
        json_decref(st.stack[--st.depth].node);
    tg_buf_clean(&st.keys);
    free(st.stack);
    json_decref(st.root);
    tg_tauyaml_path_clean(&st.path);
    if (parser_ready)
        yaml_parser_delete(&parser);
    return rc;
}
