/* Schema validation of a parsed tau.yaml tree, driven by tau.schema.json. */
#include "tauyaml/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tauyaml/path.h"
#include "tauyaml/schema_int.h"

typedef struct v_ctx_s {
    tg_tauyaml_diag_t *diag;
    tg_tauyaml_path_t path;
    size_t errors;
    int lenient; /* unknown keys are left alone (a managed manifest reports them itself) */
} v_ctx_t;

/* Where a value lives, so normalisation can replace or unset it. */
typedef struct v_slot_s {
    json_t *parent; /* object or array; NULL for the root */
    const char *key;
    size_t index;
    int is_map_value; /* reached through additionalProperties */
} v_slot_t;

static const char *v_path(v_ctx_t *c)
{
    return tg_tauyaml_path_str(&c->path);
}

/* Text of a scalar for messages. */
static const char *v_text(const json_t *v, char *buf, size_t n)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return json_string_value(v);
    case JSON_INTEGER:
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    case JSON_REAL:
        snprintf(buf, n, "%g", json_real_value(v));
        return buf;
    case JSON_TRUE:
        return "true";
    case JSON_FALSE:
        return "false";
    case JSON_NULL:
        return "null";
    case JSON_OBJECT:
        return "(mapping)";
    default:
        return "(list)";
    }
}

static const char *v_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return "the string";
    case JSON_INTEGER:
        return "the integer";
    case JSON_REAL:
        return "the number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "the boolean";
    case JSON_NULL:
        return "an empty value";
    case JSON_OBJECT:
        return "a mapping";
    default:
        return "a list";
    }
}

static void v_want(unsigned types, tg_buf_t *b)
{
    static const struct {
        unsigned bit;
        const char *text;
    } names[] = {{TG_ST_STR, "a string"},       {TG_ST_NUM, "a number"},  {TG_ST_INT, "an integer"},
                 {TG_ST_BOOL, "true or false"}, {TG_ST_OBJ, "a mapping"}, {TG_ST_ARR, "a list"},
                 {TG_ST_NULL, "empty"}};
    int first = 1;
    for (size_t i = 0; i < TG_ARRAY_LEN(names); i++) {
        if (!(types & names[i].bit))
            continue;
        if (names[i].bit == TG_ST_INT && (types & TG_ST_NUM))
            continue;
        if (tg_buf_puts(b, first ? "" : " or ") != TG_OK || tg_buf_puts(b, names[i].text) != TG_OK)
            return;
        first = 0;
    }
}

/* Report `keyword` failing at the current path: the schema's message template
 * when it has one ({path} {value} {allowed} {limit}), else `fallback`. */
static void v_report(v_ctx_t *c, const tg_snode_t *n, const char *keyword, tg_tauyaml_at_e at,
                     const char *value, const char *allowed, long limit, const char *fallback)
{
    const char *tpl = tg_snode_message(n, keyword);
    tg_tauyaml_qv_t q;
    tg_buf_t b;
    tg_buf_init(&b, 2048);
    const char *t = tpl ? tpl : fallback;
    tg_rc_e rc = TG_OK;
    while (*t && rc == TG_OK) {
        if (*t == '{') {
            const char *end = strchr(t, '}');
            size_t len = end ? (size_t)(end - t - 1) : 0;
            if (end && len == 4 && strncmp(t + 1, "path", 4) == 0) {
                rc = tg_buf_puts(&b, v_path(c));
                t = end + 1;
                continue;
            }
            if (end && len == 5 && strncmp(t + 1, "value", 5) == 0) {
                rc = tg_buf_puts(&b, tg_tauyaml_qv(&q, value ? value : ""));
                t = end + 1;
                continue;
            }
            if (end && len == 7 && strncmp(t + 1, "allowed", 7) == 0) {
                rc = tg_buf_puts(&b, allowed ? allowed : "");
                t = end + 1;
                continue;
            }
            if (end && len == 5 && strncmp(t + 1, "limit", 5) == 0) {
                rc = tg_buf_printf(&b, "%ld", limit);
                t = end + 1;
                continue;
            }
        }
        rc = tg_buf_append(&b, t, 1);
        t++;
    }
    tg_tauyaml_diag_error(c->diag, v_path(c), at, "%s", b.data ? b.data : "");
    tg_buf_clean(&b);
    c->errors++;
}

static size_t v_utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

static int v_type_ok(unsigned types, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return types & TG_ST_STR;
    case JSON_INTEGER:
        return types & (TG_ST_INT | TG_ST_NUM);
    case JSON_REAL:
        return types & TG_ST_NUM;
    case JSON_TRUE:
    case JSON_FALSE:
        return types & TG_ST_BOOL;
    case JSON_NULL:
        return types & TG_ST_NULL;
    case JSON_OBJECT:
        return types & TG_ST_OBJ;
    default:
        return types & TG_ST_ARR;
    }
}

static void v_replace(v_slot_t *slot, json_t *nv)
{
    if (json_is_object(slot->parent))
        json_object_set_new(slot->parent, slot->key, nv);
    else if (json_is_array(slot->parent))
        json_array_set_new(slot->parent, slot->index, nv);
    else
        json_decref(nv);
}

static json_t *v_value(v_ctx_t *c, const tg_snode_t *n, json_t *v, v_slot_t *slot,
                       tg_tauyaml_at_e at);

static void v_enum(v_ctx_t *c, const tg_snode_t *n, const json_t *v)
{
    size_t i;
    const json_t *e;
    json_array_foreach(n->enumv, i, e)
        if (json_equal((json_t *)e, (json_t *)v))
            return;
    tg_buf_t allowed;
    tg_buf_init(&allowed, 4096);
    json_array_foreach(n->enumv, i, e) {
        char tb[64];
        if (tg_buf_puts(&allowed, i ? "|" : "") != TG_OK ||
            tg_buf_puts(&allowed, v_text(e, tb, sizeof(tb))) != TG_OK)
            break;
    }
    char tb[64];
    v_report(c, n, "enum", TG_AT_VALUE, v_text(v, tb, sizeof(tb)), allowed.data, 0,
             "{path}=\"{value}\" is invalid (allowed: {allowed})");
    tg_buf_clean(&allowed);
}

static void v_string(v_ctx_t *c, const tg_snode_t *n, const char *s, tg_tauyaml_at_e at)
{
    if (n->min_len >= 0 || n->max_len >= 0) {
        size_t len = v_utf8_len(s);
        if (n->min_len >= 0 && len < (size_t)n->min_len) {
            v_report(c, n, "minLength", at, s, NULL, n->min_len,
                     n->min_len == 1 ? "{path} may not be empty"
                                     : "{path} must be at least {limit} characters long");
            return;
        }
        if (n->max_len >= 0 && len > (size_t)n->max_len) {
            v_report(c, n, "maxLength", at, s, NULL, n->max_len,
                     "{path} is too long: at most {limit} characters are allowed");
            return;
        }
    }
    if (n->has_re &&
        !(n->pat ? tg_tauyaml_pattern_match(n->pat, s) : regexec(&n->re, s, 0, NULL, 0) == 0))
        v_report(c, n, "pattern", at, s, n->pattern, 0,
                 "{path} \"{value}\" does not match the pattern {allowed}");
}

static void v_number(v_ctx_t *c, const tg_snode_t *n, const json_t *v)
{
    double d = json_number_value(v);
    char tb[64];
    const char *txt = v_text(v, tb, sizeof(tb));
    if (n->has_min && d < n->min)
        v_report(c, n, "minimum", TG_AT_VALUE, txt, NULL, (long)n->min,
                 "{path} must be >= {limit}");
    else if (n->has_max && d > n->max)
        v_report(c, n, "maximum", TG_AT_VALUE, txt, NULL, (long)n->max,
                 "{path} must be <= {limit}");
    else if (n->has_xmin && d <= n->xmin)
        v_report(c, n, "exclusiveMinimum", TG_AT_VALUE, txt, NULL, (long)n->xmin,
                 "{path} must be > {limit}");
    else if (n->has_xmax && d >= n->xmax)
        v_report(c, n, "exclusiveMaximum", TG_AT_VALUE, txt, NULL, (long)n->xmax,
                 "{path} must be < {limit}");
}

/* Edit distance, bounded, for "did you mean" hints. */
static size_t v_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40)
        return 99;
    size_t row[41];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = prev + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[lb];
}

static void v_unknown_key(v_ctx_t *c, const tg_snode_t *n, const char *key, const char *parent)
{
    /* Gather the fields a user may write here (not the unsupported ones). */
    tg_buf_t allowed;
    tg_buf_init(&allowed, 4096);
    const char *best = NULL;
    size_t bestd = 3;
    int first = 1;
    for (const tg_snode_t *m = n; m; m = m->ref) {
        for (size_t i = 0; i < m->nprops; i++) {
            const tg_snode_t *p = m->props[i].node;
            if (p->unsupported || (p->ref && p->ref->unsupported))
                continue;
            if (tg_buf_puts(&allowed, first ? "" : ", ") != TG_OK ||
                tg_buf_puts(&allowed, m->props[i].name) != TG_OK)
                break;
            first = 0;
            size_t d = v_distance(key, m->props[i].name);
            if (d < bestd) {
                bestd = d;
                best = m->props[i].name;
            }
        }
    }
    tg_tauyaml_qv_t q;
    char hint[160] = "";
    if (best)
        snprintf(hint, sizeof(hint), "did you mean \"%s\"? ", best);
    if (*parent)
        tg_tauyaml_diag_error(c->diag, v_path(c), TG_AT_KEY,
                              "unknown field \"%s\" in %s: it is not a field of the direct run "
                              "config; %sallowed fields: %s",
                              tg_tauyaml_qv(&q, key), parent, hint,
                              allowed.data ? allowed.data : "");
    else
        tg_tauyaml_diag_error(c->diag, v_path(c), TG_AT_KEY,
                              "unknown top-level field \"%s\": it is not a field of the direct run "
                              "config; %sallowed fields: %s",
                              tg_tauyaml_qv(&q, key), hint, allowed.data ? allowed.data : "");
    c->errors++;
    tg_buf_clean(&allowed);
}

static int v_is_unsupported(const tg_snode_t *p)
{
    for (; p; p = p->ref)
        if (p->unsupported || p->refused)
            return 1;
    return 0;
}

static int v_unsupported(v_ctx_t *c, const tg_snode_t *p)
{
    for (; p; p = p->ref) {
        if (p->refused) {
            tg_tauyaml_diag_error(c->diag, v_path(c), TG_AT_KEY, "%s", p->refused);
            c->errors++;
            return 1;
        }
        if (p->unsupported) {
            tg_tauyaml_diag_error(c->diag, v_path(c), TG_AT_KEY,
                                  "%s is a TauGrid field that taugate does not support: %s",
                                  v_path(c), p->unsupported);
            c->errors++;
            return 1;
        }
    }
    return 0;
}

/* Check a mapping key against propertyNames (a string schema), without
 * building a JSON value for it. */
static void v_key(v_ctx_t *c, const tg_snode_t *n, const char *key)
{
    for (const tg_snode_t *m = n; m; m = m->ref) {
        if (m->enumv) {
            json_t *ks = json_string(key);
            v_slot_t none = {0};
            json_decref(v_value(c, n, ks, &none, TG_AT_KEY));
            return;
        }
    }
    size_t before = c->errors;
    for (const tg_snode_t *m = n; m && c->errors == before; m = m->ref)
        v_string(c, m, key, TG_AT_KEY);
}

/* The types a value may have after every schema on the $ref chain. */
static unsigned v_types(const tg_snode_t *n)
{
    unsigned t = TG_ST_ANY;
    for (; n; n = n->ref)
        t &= n->types;
    return t;
}

static int v_has_object_rules(const tg_snode_t *n)
{
    return n->nprops || n->addl_mode != TG_ADDL_ANY || n->prop_names || n->nrequired ||
           n->min_props >= 0 || n->max_props >= 0;
}

static void v_object(v_ctx_t *c, const tg_snode_t *n, json_t *obj)
{
    if (!v_has_object_rules(n))
        return;
    size_t parent_len = c->path.len;
    const char *key;
    json_t *val, *tmp;
    json_t *unset = NULL;

    if (n->max_props >= 0 && json_object_size(obj) > (size_t)n->max_props) {
        v_report(c, n, "maxProperties", TG_AT_KEY, NULL, NULL, n->max_props,
                 "{path} has too many entries: at most {limit} are allowed");
    }
    if (n->min_props >= 0 && json_object_size(obj) < (size_t)n->min_props) {
        v_report(c, n, "minProperties", TG_AT_KEY, NULL, NULL, n->min_props,
                 "{path} needs at least {limit} entries");
    }
    json_object_foreach_safe(obj, tmp, key, val) {
        size_t klen = strlen(key);
        tg_tauyaml_path_push_key(&c->path, key, klen);
        if (n->prop_names)
            v_key(c, n->prop_names, key);
        /* $ref targets get their own pass */
        const tg_snode_t *p = tg_snode_own_prop(n, key, klen);
        v_slot_t slot = {.parent = obj, .key = key};
        if (p) {
            if (json_is_null(val) && !p->never &&
                (!v_type_ok(v_types(p), val) || v_is_unsupported(p))) {
                /* `key: ~` means "not set", as yaml.v3 leaves the zero value
                 * (also for a field taugate does not support). */
                if (!unset)
                    unset = json_array();
                json_array_append_new(unset, json_string(key));
            } else if (!v_unsupported(c, p)) {
                v_value(c, p, val, &slot, TG_AT_VALUE);
            }
        } else if (n->addl_mode == TG_ADDL_SCHEMA) {
            slot.is_map_value = 1;
            v_value(c, n->addl, val, &slot, TG_AT_VALUE);
        } else if (n->addl_mode == TG_ADDL_NONE) {
            /* The parent path is the prefix of the current one. */
            char parent[512];
            size_t pl = parent_len < sizeof(parent) - 1 ? parent_len : sizeof(parent) - 1;
            memcpy(parent, c->path.s, pl);
            parent[pl] = '\0';
            if (!c->lenient)
                v_unknown_key(c, n, key, parent);
        }
        tg_tauyaml_path_pop(&c->path, parent_len);
    }
    for (size_t i = 0; i < json_array_size(unset); i++)
        json_object_del(obj, json_string_value(json_array_get(unset, i)));
    json_decref(unset);
    for (size_t i = 0; i < n->nrequired; i++) {
        if (!json_object_get(obj, n->required[i])) {
            tg_tauyaml_qv_t q;
            const char *parent = v_path(c);
            tg_tauyaml_diag_error(c->diag, parent, TG_AT_KEY, "%s%s%s is required", parent,
                                  *parent ? "." : "", tg_tauyaml_qv(&q, n->required[i]));
            c->errors++;
        }
    }
}

static void v_array(v_ctx_t *c, const tg_snode_t *n, json_t *arr)
{
    size_t len = json_array_size(arr);
    if (n->max_items >= 0 && len > (size_t)n->max_items)
        v_report(c, n, "maxItems", TG_AT_VALUE, NULL, NULL, n->max_items,
                 "{path} has too many items: at most {limit} are allowed");
    if (n->min_items >= 0 && len < (size_t)n->min_items)
        v_report(c, n, "minItems", TG_AT_VALUE, NULL, NULL, n->min_items,
                 "{path} needs at least {limit} items");
    size_t base = c->path.len;
    for (size_t i = 0; i < len; i++) {
        tg_tauyaml_path_push_index(&c->path, i);
        json_t *item = json_array_get(arr, i);
        if (n->items) {
            v_slot_t slot = {.parent = arr, .index = i};
            item = v_value(c, n->items, item, &slot, TG_AT_VALUE);
        }
        if (n->unique) {
            for (size_t j = 0; j < i; j++) {
                if (json_equal(json_array_get(arr, j), item)) {
                    char tb[64];
                    v_report(c, n, "uniqueItems", TG_AT_VALUE, v_text(item, tb, sizeof(tb)), NULL,
                             0, "{path}: \"{value}\" is listed twice");
                    break;
                }
            }
        }
        tg_tauyaml_path_pop(&c->path, base);
    }
}

/* Validate one value; returns the value now in the slot (it may have been
 * replaced by normalisation). */
static json_t *v_value(v_ctx_t *c, const tg_snode_t *n, json_t *v, v_slot_t *slot,
                       tg_tauyaml_at_e at)
{
    if (n->ref) {
        size_t before = c->errors;
        v = v_value(c, n->ref, v, slot, at);
        if (c->errors != before)
            return v;
    }
    if (n->never) {
        tg_tauyaml_diag_error(c->diag, v_path(c), at, "%s is not allowed here", v_path(c));
        c->errors++;
        return v;
    }
    if (n->warning)
        tg_tauyaml_diag_warn(c->diag, v_path(c), TG_AT_KEY, "%s", n->warning);
    if (!v_type_ok(n->types, v) && (n->types & TG_ST_INT) && json_is_real(v) && slot->parent) {
        /* yaml.v3 decodes a float into an integer field; a whole number
         * (2.0, 1e3) is taken as the integer it is. A fraction is refused
         * below rather than truncated as yaml.v3 would. */
        double d = json_real_value(v);
        if (d >= -9.2e18 && d <= 9.2e18 && d == (double)(json_int_t)d) {
            json_t *i = json_integer((json_int_t)d);
            v_replace(slot, i);
            v = i;
        }
    }
    if (!v_type_ok(n->types, v)) {
        if ((n->types & TG_ST_STR) && slot->parent &&
            (json_is_number(v) || json_is_boolean(v) || (json_is_null(v) && slot->is_map_value))) {
            /* yaml.v3 decodes any scalar into a string field as written. */
            const tg_tauyaml_mark_t *mk = tg_tauyaml_pos_get(c->diag->pos, v_path(c));
            char tb[64];
            json_t *s = json_is_null(v) ? json_string("")
                        : mk && mk->raw ? json_string(mk->raw)
                                        : json_string(v_text(v, tb, sizeof(tb)));
            v_replace(slot, s);
            v = s;
        } else {
            tg_buf_t want;
            tg_buf_init(&want, 256);
            v_want(n->types, &want);
            char tb[64];
            tg_tauyaml_qv_t q;
            const char *hint = "";
            if ((n->types & TG_ST_BOOL) && json_is_string(v))
                hint = " (yes/no/on/off are strings in YAML 1.2; write true or false)";
            else if ((n->types & (TG_ST_INT | TG_ST_NUM)) && json_is_string(v))
                hint = " (write the number without quotes)";
            if (json_is_object(v) || json_is_array(v) || json_is_null(v))
                tg_tauyaml_diag_error(c->diag, v_path(c), at, "%s must be %s, got %s", v_path(c),
                                      want.data ? want.data : "", v_kind(v));
            else
                tg_tauyaml_diag_error(c->diag, v_path(c), at, "%s must be %s, got %s \"%s\"%s",
                                      v_path(c), want.data ? want.data : "", v_kind(v),
                                      tg_tauyaml_qv(&q, v_text(v, tb, sizeof(tb))), hint);
            c->errors++;
            tg_buf_clean(&want);
            return v;
        }
    }
    if (n->enumv) {
        size_t before = c->errors;
        v_enum(c, n, v);
        if (c->errors != before)
            return v;
    }
    if (n->constv && !json_equal((json_t *)n->constv, v)) {
        char tb[64], tc[64];
        v_report(c, n, "const", at, v_text(v, tb, sizeof(tb)), v_text(n->constv, tc, sizeof(tc)), 0,
                 "{path} must be {allowed}");
        return v;
    }
    switch (json_typeof(v)) {
    case JSON_STRING:
        v_string(c, n, json_string_value(v), at);
        break;
    case JSON_INTEGER:
    case JSON_REAL:
        v_number(c, n, v);
        break;
    case JSON_OBJECT:
        v_object(c, n, v);
        break;
    case JSON_ARRAY:
        v_array(c, n, v);
        break;
    default:
        break;
    }
    return v;
}

size_t tg_tauyaml_validate_schema(const tg_tauyaml_schema_t *schema, json_t *root,
                                  tg_tauyaml_diag_t *diag)
{
    v_ctx_t c = {.diag = diag};
    tg_tauyaml_path_init(&c.path);
    v_slot_t slot = {0};
    v_value(&c, schema->root, root, &slot, TG_AT_VALUE);
    tg_tauyaml_path_clean(&c.path);
    return c.errors;
}

size_t tg_tauyaml_validate_sections(const tg_tauyaml_schema_t *schema, json_t *root,
                                    const char *const *sections, tg_tauyaml_diag_t *diag)
{
    v_ctx_t c = {.diag = diag, .lenient = 1};
    tg_tauyaml_path_init(&c.path);
    for (; *sections; sections++) {
        json_t *v = json_object_get(root, *sections);
        const tg_snode_t *n = tg_snode_prop(schema->root, *sections);
        if (!v || !n)
            continue;
        if (json_is_null(v)) {
            json_object_del(root, *sections);
            continue;
        }
        size_t old = tg_tauyaml_path_push_key(&c.path, *sections, strlen(*sections));
        v_slot_t slot = {.parent = root, .key = *sections};
        v_value(&c, n, v, &slot, TG_AT_VALUE);
        tg_tauyaml_path_pop(&c.path, old);
    }
    tg_tauyaml_path_clean(&c.path);
    return c.errors;
}
