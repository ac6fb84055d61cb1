/* tau.schema.json, compiled for validation. */
#include "tauyaml/schema_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

typedef struct sc_ctx_s {
    tg_tauyaml_schema_t *s;
    char *err;
    size_t errlen;
    int failed;
    unsigned depth;
} sc_ctx_t;

static void sc_fail(sc_ctx_t *c, const char *fmt, ...) TG_PRINTF(2, 3);

static void sc_fail(sc_ctx_t *c, const char *fmt, ...)
{
    if (c->failed)
        return;
    c->failed = 1;
    if (c->err && c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
}

static tg_snode_t *sc_new(sc_ctx_t *c, const json_t *src)
{
    tg_tauyaml_schema_t *s = c->s;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->all = tg_xrealloc(s->all, s->cap * sizeof(*s->all));
        s->srcs = tg_xrealloc(s->srcs, s->cap * sizeof(*s->srcs));
    }
    tg_snode_t *n = tg_xcalloc(1, sizeof(*n));
    n->types = TG_ST_ANY;
    n->min_props = n->max_props = n->min_items = n->max_items = -1;
    n->min_len = n->max_len = -1;
    s->all[s->n] = n;
    s->srcs[s->n] = src;
    s->n++;
    return n;
}

static tg_snode_t *sc_compile(sc_ctx_t *c, const json_t *js);

/* Resolve a local JSON pointer ("#/$defs/x"). */
static const json_t *sc_pointer(const json_t *doc, const char *ref)
{
    if (ref[0] != '#')
        return NULL;
    const json_t *cur = doc;
    const char *p = ref + 1;
    while (*p == '/') {
        p++;
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char seg[256];
        size_t k = 0;
        for (size_t i = 0; i < n && k + 1 < sizeof(seg); i++) {
            if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) {
                seg[k++] = p[i + 1] == '0' ? '~' : '/';
                i++;
            } else {
                seg[k++] = p[i];
            }
        }
        seg[k] = '\0';
        if (json_is_object(cur))
            cur = json_object_get(cur, seg);
        else if (json_is_array(cur)) {
            char *e = NULL;
            unsigned long idx = strtoul(seg, &e, 10);
            cur = (e && *e == '\0') ? json_array_get(cur, idx) : NULL;
        } else
            cur = NULL;
        if (!cur)
            return NULL;
        p += n;
    }
    return *p == '\0' ? cur : NULL;
}

static long sc_uint(sc_ctx_t *c, const json_t *v, const char *kw)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        sc_fail(c, "schema: %s must be a non-negative integer", kw);
        return -1;
    }
    return (long)json_integer_value(v);
}

static int sc_num(sc_ctx_t *c, const json_t *v, const char *kw, double *out)
{
    if (!json_is_number(v)) {
        sc_fail(c, "schema: %s must be a number", kw);
        return 0;
    }
    *out = json_number_value(v);
    return 1;
}

static unsigned sc_type_bit(sc_ctx_t *c, const json_t *t)
{
    static const struct {
        const char *name;
        unsigned bit;
    } map[] = {{"null", TG_ST_NULL},  {"boolean", TG_ST_BOOL}, {"integer", TG_ST_INT},
               {"number", TG_ST_NUM}, {"string", TG_ST_STR},   {"object", TG_ST_OBJ},
               {"array", TG_ST_ARR}};
    if (json_is_string(t))
        for (size_t i = 0; i < TG_ARRAY_LEN(map); i++)
            if (strcmp(json_string_value(t), map[i].name) == 0)
                return map[i].bit;
    sc_fail(c, "schema: unknown type %s",
            json_is_string(t) ? json_string_value(t) : "(non-string)");
    return 0;
}

static int sc_prop_cmp(const void *a, const void *b)
{
    const tg_sprop_t *x = a, *y = b;
    return tg_key_cmp(x->pre, x->name, x->len, y->pre, y->name, y->len);
}

static int sc_is_annotation(const char *k)
{
    static const char *const ann[] = {"$schema",     "$id",      "$comment",   "title",
                                      "description", "examples", "deprecated", "readOnly",
                                      "writeOnly",   NULL};
    if (strncmp(k, "x-", 2) == 0)
        return 1;
    for (size_t i = 0; ann[i]; i++)
        if (strcmp(k, ann[i]) == 0)
            return 1;
    return 0;
}

static void sc_keyword(sc_ctx_t *c, tg_snode_t *n, const char *k, const json_t *v)
{
    if (strcmp(k, "type") == 0) {
        n->types = 0;
        if (json_is_array(v)) {
            size_t i;
            const json_t *t;
            json_array_foreach(v, i, t)
                n->types |= sc_type_bit(c, t);
        } else {
            n->types = sc_type_bit(c, v);
        }
        if (n->types & TG_ST_NUM)
            n->types |= TG_ST_INT;
    } else if (strcmp(k, "$ref") == 0) {
        const json_t *target =
            json_is_string(v) ? sc_pointer(c->s->doc, json_string_value(v)) : NULL;
        if (!target) {
            sc_fail(c, "schema: unresolvable $ref %s",
                    json_is_string(v) ? json_string_value(v) : "");
            return;
        }
        n->ref = sc_compile(c, target);
    } else if (strcmp(k, "$defs") == 0) {
        /* Compiled on demand through $ref. */
    } else if (strcmp(k, "enum") == 0) {
        if (!json_is_array(v) || json_array_size(v) == 0)
            sc_fail(c, "schema: enum must be a non-empty array");
        n->enumv = v;
    } else if (strcmp(k, "const") == 0) {
        n->constv = v;
    } else if (strcmp(k, "default") == 0) {
        n->defaultv = v;
    } else if (strcmp(k, "pattern") == 0) {
        if (!json_is_string(v)) {
            sc_fail(c, "schema: pattern must be a string");
            return;
        }
        n->pattern = json_string_value(v);
        int e = regcomp(&n->re, n->pattern, REG_EXTENDED | REG_NOSUB);
        if (e != 0) {
            sc_fail(c, "schema: pattern %s does not compile as POSIX ERE", n->pattern);
            return;
        }
        n->has_re = 1;
        n->pat = tg_tauyaml_pattern_compile(n->pattern);
    } else if (strcmp(k, "minLength") == 0) {
        n->min_len = sc_uint(c, v, k);
    } else if (strcmp(k, "maxLength") == 0) {
        n->max_len = sc_uint(c, v, k);
    } else if (strcmp(k, "minimum") == 0) {
        n->has_min = sc_num(c, v, k, &n->min);
    } else if (strcmp(k, "maximum") == 0) {
        n->has_max = sc_num(c, v, k, &n->max);
    } else if (strcmp(k, "exclusiveMinimum") == 0) {
        n->has_xmin = sc_num(c, v, k, &n->xmin);
    } else if (strcmp(k, "exclusiveMaximum") == 0) {
        n->has_xmax = sc_num(c, v, k, &n->xmax);
    } else if (strcmp(k, "properties") == 0) {
        if (!json_is_object(v)) {
            sc_fail(c, "schema: properties must be an object");
            return;
        }
        n->nprops = json_object_size(v);
        n->props = tg_xcalloc(n->nprops ? n->nprops : 1, sizeof(*n->props));
        size_t i = 0;
        const char *pk;
        json_t *pv;
        json_object_foreach((json_t *)v, pk, pv) {
            n->props[i].name = pk;
            n->props[i].len = strlen(pk);
            n->props[i].pre = tg_key_prefix(pk, n->props[i].len);
            n->props[i].node = sc_compile(c, pv);
            i++;
        }
        qsort(n->props, n->nprops, sizeof(*n->props), sc_prop_cmp);
    } else if (strcmp(k, "required") == 0) {
        if (!json_is_array(v)) {
            sc_fail(c, "schema: required must be an array");
            return;
        }
        n->nrequired = json_array_size(v);
        n->required = tg_xcalloc(n->nrequired ? n->nrequired : 1, sizeof(char *));
        for (size_t i = 0; i < n->nrequired; i++) {
            const json_t *r = json_array_get(v, i);
            if (!json_is_string(r))
                sc_fail(c, "schema: required entries must be strings");
            n->required[i] = json_string_value(r);
        }
    } else if (strcmp(k, "additionalProperties") == 0) {
        if (json_is_false(v)) {
            n->addl_mode = TG_ADDL_NONE;
        } else if (json_is_true(v)) {
            n->addl_mode = TG_ADDL_ANY;
        } else {
            n->addl_mode = TG_ADDL_SCHEMA;
            n->addl = sc_compile(c, v);
        }
    } else if (strcmp(k, "propertyNames") == 0) {
        n->prop_names = sc_compile(c, v);
    } else if (strcmp(k, "minProperties") == 0) {
        n->min_props = sc_uint(c, v, k);
    } else if (strcmp(k, "maxProperties") == 0) {
        n->max_props = sc_uint(c, v, k);
    } else if (strcmp(k, "items") == 0) {
        n->items = sc_compile(c, v);
    } else if (strcmp(k, "minItems") == 0) {
        n->min_items = sc_uint(c, v, k);
    } else if (strcmp(k, "maxItems") == 0) {
        n->max_items = sc_uint(c, v, k);
    } else if (strcmp(k, "uniqueItems") == 0) {
        n->unique = json_is_true(v);
    } else if (strcmp(k, "x-taugate-unsupported") == 0) {
        if (!json_is_string(v))
            sc_fail(c, "schema: x-taugate-unsupported must be a string");
        n->unsupported = json_string_value(v);
    } else if (strcmp(k, "x-taugate-refused") == 0) {
        if (!json_is_string(v))
            sc_fail(c, "schema: x-taugate-refused must be a string");
        n->refused = json_string_value(v);
    } else if (strcmp(k, "x-taugate-warning") == 0) {
        if (!json_is_string(v))
            sc_fail(c, "schema: x-taugate-warning must be a string");
        n->warning = json_string_value(v);
    } else if (strcmp(k, "x-taugate-messages") == 0) {
        if (!json_is_object(v))
            sc_fail(c, "schema: x-taugate-messages must be an object");
        n->messages = v;
    } else if (!sc_is_annotation(k)) {
        sc_fail(c, "schema: keyword \"%s\" is not supported by the taugate validator", k);
    }
}

static tg_snode_t *sc_compile(sc_ctx_t *c, const json_t *js)
{
    /* Memoise by source object so $ref cycles terminate and shared $defs
     * compile once. */
    for (size_t i = 0; i < c->s->n; i++)
        if (c->s->srcs[i] == js)
            return c->s->all[i];
    tg_snode_t *n = sc_new(c, js);
    if (c->failed)
        return n;
    if (++c->depth > 64) {
        sc_fail(c, "schema: nested too deeply");
        return n;
    }
    if (json_is_boolean(js)) {
        n->never = json_is_false(js);
    } else if (!json_is_object(js)) {
        sc_fail(c, "schema: a schema must be an object or a boolean");
    } else {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)js, k, v)
            sc_keyword(c, n, k, v);
    }
    c->depth--;
    return n;
}

void tg_tauyaml_schema_free(tg_tauyaml_schema_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        tg_snode_t *n = s->all[i];
        if (n->has_re)
            regfree(&n->re);
        tg_tauyaml_pattern_free(n->pat);
        free(n->props);
        free(n->required);
        free(n);
    }
    free(s->all);
    free(s->srcs);
    json_decref(s->doc);
    free(s);
}

tg_tauyaml_schema_t *tg_tauyaml_schema_load_json(json_t *doc, char *err, size_t errlen)
{
    tg_tauyaml_schema_t *s = tg_xcalloc(1, sizeof(*s));
    s->doc = json_incref(doc);
    sc_ctx_t c = {.s = s, .err = err, .errlen = errlen};
    if (!json_is_object(doc))
        sc_fail(&c, "schema: the document must be a JSON object");
    else
        s->root = sc_compile(&c, doc);
    if (c.failed) {
        tg_tauyaml_schema_free(s);
        return NULL;
    }
    return s;
}

tg_tauyaml_schema_t *tg_tauyaml_schema_load_text(const char *text, size_t len, char *err,
                                                 size_t errlen)
{
    json_error_t je;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        if (err && errlen)
            snprintf(err, errlen, "schema: line %d: %s", je.line, je.text);
        return NULL;
    }
    tg_tauyaml_schema_t *s = tg_tauyaml_schema_load_json(doc, err, errlen);
    json_decref(doc);
    return s;
}

tg_tauyaml_schema_t *tg_tauyaml_schema_load_file(const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        if (err && errlen)
            snprintf(err, errlen, "schema %s: line %d: %s", path, je.line, je.text);
        return NULL;
    }
    tg_tauyaml_schema_t *s = tg_tauyaml_schema_load_json(doc, err, errlen);
    json_decref(doc);
    return s;
}

const tg_snode_t *tg_snode_own_prop(const tg_snode_t *n, const char *name, size_t len)
{
    uint64_t pre = tg_key_prefix(name, len);
    size_t lo = 0, hi = n->nprops;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const tg_sprop_t *p = &n->props[mid];
        int r = tg_key_cmp(pre, name, len, p->pre, p->name, p->len);
        if (r == 0)
            return p->node;
        if (r < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const tg_snode_t *tg_snode_prop_n(const tg_snode_t *n, const char *name, size_t len)
{
    for (; n; n = n->ref) {
        const tg_snode_t *p = tg_snode_own_prop(n, name, len);
        if (p)
            return p;
    }
    return NULL;
}

const char *tg_snode_message(const tg_snode_t *n, const char *keyword)
{
    for (; n; n = n->ref) {
        const json_t *m = n->messages ? json_object_get(n->messages, keyword) : NULL;
        if (json_is_string(m))
            return json_string_value(m);
    }
    return NULL;
}

const json_t *tg_tauyaml_schema_default(const tg_tauyaml_schema_t *s, const char *dotted)
{
    const tg_snode_t *n = s->root;
    const char *p = dotted;
    while (n && *p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len >= 128)
            return NULL;
        n = tg_snode_prop_n(n, p, len);
        p += len + (dot ? 1 : 0);
    }
    for (; n; n = n->ref)
        if (n->defaultv)
            return n->defaultv;
    return NULL;
}

/* The node that lists n's fields: n or the first on its $ref chain that has
 * properties. */
static const tg_snode_t *sc_props_of(const tg_snode_t *n)
{
    for (; n; n = n->ref)
        if (n->nprops)
            return n;
    return NULL;
}

static int sc_refused(const tg_snode_t *n)
{
    for (; n; n = n->ref)
        if (n->refused)
            return 1;
    return 0;
}

static const tg_snode_t *sc_items_of(const tg_snode_t *n)
{
    for (; n; n = n->ref)
        if (n->items)
            return n->items;
    return NULL;
}

static void sc_paths(const tg_snode_t *n, char *buf, size_t len, size_t cap,
                     tg_tauyaml_schema_path_fn fn, void *arg)
{
    const tg_snode_t *o = sc_props_of(n);
    for (size_t i = 0; o && i < o->nprops; i++) {
        const tg_sprop_t *p = &o->props[i];
        if (sc_refused(p->node))
            continue;
        size_t need = len + (len ? 1 : 0) + p->len;
        if (need + 1 > cap)
            continue;
        size_t at = len;
        if (len)
            buf[at++] = '.';
        memcpy(buf + at, p->name, p->len);
        buf[need] = '\0';
        const tg_snode_t *child = sc_props_of(p->node);
        const tg_snode_t *items = child ? NULL : sc_items_of(p->node);
        const tg_snode_t *elem = items ? sc_props_of(items) : NULL;
        fn(arg, buf, child || elem);
        if (child)
            sc_paths(p->node, buf, need, cap, fn, arg);
        else if (elem)
            sc_paths(items, buf, need, cap, fn, arg);
        buf[len] = '\0';
    }
}

void tg_tauyaml_schema_paths(const tg_tauyaml_schema_t *s, tg_tauyaml_schema_path_fn fn, void *arg)
{
    char buf[512];
    buf[0] = '\0';
    sc_paths(s->root, buf, 0, sizeof(buf), fn, arg);
}
