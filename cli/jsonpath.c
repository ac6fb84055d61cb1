/* -o jsonpath=TEMPLATE (see jsonpath.h). */
#include "jsonpath.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JP_MAX_DEPTH   64 /* nested ranges and filters */
#define JP_MAX_RESULTS 1000000

typedef enum { JP_FIELD = 0, JP_ALL, JP_INDEX, JP_SLICE, JP_DESCEND, JP_FILTER } jp_step_e;
typedef enum { JP_EXISTS = 0, JP_EQ, JP_NE, JP_LT, JP_LE, JP_GT, JP_GE } jp_op_e;

typedef struct jp_path_s jp_path_t;

typedef struct {
    jp_step_e kind;
    char *name;       /* JP_FIELD; JP_DESCEND (NULL: every descendant) */
    long a, b;        /* JP_INDEX (a); JP_SLICE [a:b] */
    int has_a, has_b; /* JP_SLICE: bounds given */
    jp_path_t *rel;   /* JP_FILTER: the path after @ */
    jp_op_e op;       /* JP_FILTER */
    json_t *lit;      /* JP_FILTER: the right-hand side (owned) */
} jp_step_t;

struct jp_path_s {
    jp_step_t *steps;
    size_t n;
    int from_root; /* starts with $ */
};

typedef enum { JP_TEXT = 0, JP_EXPR, JP_RANGE } jp_node_e;

typedef struct jp_node_s jp_node_t;
typedef struct {
    jp_node_t *v;
    size_t n;
} jp_list_t;

struct jp_node_s {
    jp_node_e kind;
    char *text;     /* JP_TEXT */
    jp_path_t path; /* JP_EXPR, JP_RANGE */
    jp_list_t body; /* JP_RANGE */
};

struct tau_jsonpath_s {
    jp_list_t top;
};

/* ---- freeing --------------------------------------------------------------------------- */

static void jp_path_clean(jp_path_t *p);

static void jp_step_clean(jp_step_t *s)
{
    free(s->name);
    if (s->rel) {
        jp_path_clean(s->rel);
        free(s->rel);
    }
    json_decref(s->lit);
}

static void jp_path_clean(jp_path_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        jp_step_clean(&p->steps[i]);
    free(p->steps);
    memset(p, 0, sizeof(*p));
}

static void jp_list_clean(jp_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].text);
        jp_path_clean(&l->v[i].path);
        jp_list_clean(&l->v[i].body);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

void tau_jsonpath_free(tau_jsonpath_t *jp)
{
    if (!jp)
        return;
    jp_list_clean(&jp->top);
    free(jp);
}

/* ---- parsing --------------------------------------------------------------------------- */

typedef struct {
    char *err;
    size_t errlen;
} jp_parser_t;

static int jp_fail(jp_parser_t *ps, const char *fmt, ...) TG_PRINTF(2, 3);
static int jp_fail(jp_parser_t *ps, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err, ps->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static jp_step_t *jp_add_step(jp_path_t *p, jp_step_e kind)
{
    p->steps = tg_xrealloc(p->steps, (p->n + 1) * sizeof(jp_step_t));
    jp_step_t *s = &p->steps[p->n++];
    memset(s, 0, sizeof(*s));
    s->kind = kind;
    return s;
}

static jp_node_t *jp_add_node(jp_list_t *l, jp_node_e kind)
{
    l->v = tg_xrealloc(l->v, (l->n + 1) * sizeof(jp_node_t));
    jp_node_t *n = &l->v[l->n++];
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    return n;
}

/* A member name after '.': anything up to the next '.', '[' or operator. */
static size_t jp_ident_len(const char *s)
{
    size_t n = 0;
    while (s[n] && !strchr(".[]()@=!<> \t'\"", s[n]))
        n++;
    return n;
}

/* A quoted string at s (' or "), escapes decoded, into a new string; *end
 * after the closing quote. NULL when unterminated. */
static char *jp_quoted(const char *s, const char **end)
{
    char q = *s++;
    tg_buf_t b;
    tg_buf_init(&b, 64 * 1024);
    for (; *s && *s != q; s++) {
        char c = *s;
        if (c == '\\' && s[1]) {
            s++;
            c = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s == 'r' ? '\r' : *s;
        }
        if (tg_buf_append(&b, &c, 1) != TG_OK)
            break;
    }
    if (*s != q) {
        tg_buf_clean(&b);
        return NULL;
    }
    *end = s + 1;
    if (tg_buf_append(&b, "", 0) != TG_OK) {
        tg_buf_clean(&b);
        return NULL;
    }
    return tg_buf_steal(&b, NULL);
}

static int jp_parse_long(const char *s, const char **end, long *out)
{
    char *e = NULL;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || errno)
        return -1;
    *out = v;
    *end = e;
    return 0;
}

static int jp_parse_path(jp_parser_t *ps, const char *s, const char **end, jp_path_t *p, int depth);

/* "?(@.path OP literal)" with s after "[?("; *end after ")". */
static int jp_parse_filter(jp_parser_t *ps, const char *s, const char **end, jp_step_t *st,
                           int depth)
{
    while (isspace((unsigned char)*s))
        s++;
    if (*s != '@')
        return jp_fail(ps, "a filter starts with @ (as in [?(@.state==\"Failed\")])");
    st->rel = tg_xcalloc(1, sizeof(jp_path_t));
    if (jp_parse_path(ps, s + 1, &s, st->rel, depth + 1) != 0)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    static const struct {
        const char *text;
        jp_op_e op;
    } ops[] = {{"==", JP_EQ}, {"!=", JP_NE}, {"<=", JP_LE},
               {">=", JP_GE}, {"<", JP_LT},  {">", JP_GT}};
    st->op = JP_EXISTS;
    for (size_t i = 0; i < TG_ARRAY_LEN(ops); i++) {
        size_t n = strlen(ops[i].text);
        if (strncmp(s, ops[i].text, n) == 0) {
            st->op = ops[i].op;
            s += n;
            break;
        }
    }
    if (st->op != JP_EXISTS) {
        while (isspace((unsigned char)*s))
            s++;
        if (*s == '"' || *s == '\'') {
            char *str = jp_quoted(s, &s);
            if (!str)
                return jp_fail(ps, "an unterminated string in a filter");
            st->lit = json_string(str);
            free(str);
            if (!st->lit)
                return jp_fail(ps, "a filter's string is not UTF-8");
        } else if (strncmp(s, "true", 4) == 0 || strncmp(s, "false", 5) == 0 ||
                   strncmp(s, "null", 4) == 0) {
            st->lit = s[0] == 't' ? json_true() : s[0] == 'f' ? json_false() : json_null();
            s += s[0] == 'f' ? 5 : 4;
        } else {
            char *e = NULL;
            double d = strtod(s, &e);
            if (e == s)
                return jp_fail(ps, "a filter compares with a number, a quoted string, true, "
                                   "false or null");
            st->lit = json_real(d);
            s = e;
        }
        while (isspace((unsigned char)*s))
            s++;
    }
    if (s[0] != ')' || s[1] != ']')
        return jp_fail(ps, "a filter ends with )]");
    *end = s + 2;
    return 0;
}

/* One [...] step with s after '['; *end after ']'. */
static int jp_parse_bracket(jp_parser_t *ps, const char *s, const char **end, jp_path_t *p,
                            int depth)
{
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '*') {
        jp_add_step(p, JP_ALL);
        s++;
    } else if (*s == '?' && s[1] == '(') {
        jp_step_t *st = jp_add_step(p, JP_FILTER);
        return jp_parse_filter(ps, s + 2, end, st, depth);
    } else if (*s == '\'' || *s == '"') {
        char *name = jp_quoted(s, &s);
        if (!name)
            return jp_fail(ps, "an unterminated string in [...]");
        jp_add_step(p, JP_FIELD)->name = name;
    } else {
        long a = 0, b = 0;
        int has_a = jp_parse_long(s, &s, &a) == 0;
        if (*s == ':') {
            s++;
            int has_b = jp_parse_long(s, &s, &b) == 0;
            jp_step_t *st = jp_add_step(p, JP_SLICE);
            st->a = a;
            st->b = b;
            st->has_a = has_a;
            st->has_b = has_b;
        } else if (has_a) {
            jp_add_step(p, JP_INDEX)->a = a;
        } else {
            return jp_fail(ps, "[...] holds *, an index, a slice a:b, a quoted name or a filter "
                               "?(...)");
        }
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s != ']')
        return jp_fail(ps, "expected ] in %.40s", s);
    *end = s + 1;
    return 0;
}

/* A path ("$.items[*].id", ".a", "@.b", "a.b"); stops at a character that
 * cannot continue it. */
static int jp_parse_path(jp_parser_t *ps, const char *s, const char **end, jp_path_t *p, int depth)
{
    if (depth > JP_MAX_DEPTH)
        return jp_fail(ps, "the template nests too deep");
    if (*s == '$') {
        p->from_root = 1;
        s++;
    } else if (*s == '@') {
        s++;
    } else if (*s && *s != '.' && *s != '[') {
        size_t n = jp_ident_len(s); /* a bare first name, as in "items[0]" */
        if (n == 0)
            return jp_fail(ps, "unexpected '%c'", *s);
        jp_add_step(p, JP_FIELD)->name = tg_xstrndup(s, n);
        s += n;
    }
    for (;;) {
        if (s[0] == '.' && s[1] == '.') {
            s += 2;
            if (*s == '*') {
                jp_add_step(p, JP_DESCEND);
                s++;
                continue;
            }
            size_t n = jp_ident_len(s);
            if (n == 0)
                return jp_fail(ps, ".. is followed by a name or *");
            jp_add_step(p, JP_DESCEND)->name = tg_xstrndup(s, n);
            s += n;
        } else if (s[0] == '.') {
            s++;
            if (*s == '*') {
                jp_add_step(p, JP_ALL);
                s++;
                continue;
            }
            size_t n = jp_ident_len(s);
            if (n == 0)
                continue; /* "{.}" is the current value */
            jp_add_step(p, JP_FIELD)->name = tg_xstrndup(s, n);
            s += n;
        } else if (s[0] == '[') {
            if (jp_parse_bracket(ps, s + 1, &s, p, depth) != 0)
                return -1;
        } else {
            break;
        }
    }
    *end = s;
    return 0;
}

/* The text of one {action}, trimmed, into a node of l (or closing a range). */
static int jp_parse_action(jp_parser_t *ps, const char *a, size_t len, jp_list_t **stack, int *top)
{
    while (len && isspace((unsigned char)*a)) {
        a++;
        len--;
    }
    while (len && isspace((unsigned char)a[len - 1]))
        len--;
    char *text = tg_xstrndup(a, len);
    int rc = -1;
    const char *end = text;
    jp_list_t *l = stack[*top];
    if (len == 0) {
        rc = jp_fail(ps, "an empty {}");
    } else if (strcmp(text, "end") == 0) {
        if (*top == 0)
            rc = jp_fail(ps, "{end} without {range ...}");
        else {
            (*top)--;
            rc = 0;
        }
    } else if (text[0] == '"' || text[0] == '\'') {
        char *lit = jp_quoted(text, &end);
        if (!lit || *end)
            rc = jp_fail(ps, "a string literal must be the whole action: {\"\\n\"}");
        else {
            jp_add_node(l, JP_TEXT)->text = lit;
            lit = NULL;
            rc = 0;
        }
        free(lit);
    } else if (strncmp(text, "range", 5) == 0 && isspace((unsigned char)text[5])) {
        if (*top + 1 >= JP_MAX_DEPTH) {
            rc = jp_fail(ps, "ranges nest too deep");
        } else {
            jp_node_t *n = jp_add_node(l, JP_RANGE);
            const char *p = text + 6;
            while (isspace((unsigned char)*p))
                p++;
            rc = jp_parse_path(ps, p, &end, &n->path, 0);
            if (rc == 0 && *end)
                rc = jp_fail(ps, "unexpected '%s' in {range}", end);
            if (rc == 0) {
                (*top)++;
                stack[*top] = &n->body;
            }
        }
    } else {
        jp_node_t *n = jp_add_node(l, JP_EXPR);
        rc = jp_parse_path(ps, text, &end, &n->path, 0);
        if (rc == 0 && *end)
            rc = jp_fail(ps, "unexpected '%s' in {%s}", end, text);
    }
    free(text);
    return rc;
}

tau_jsonpath_t *tau_jsonpath_parse(const char *tmpl, char *err, size_t errlen)
{
    jp_parser_t ps = {err, errlen};
    tau_jsonpath_t *jp = tg_xcalloc(1, sizeof(*jp));
    jp_list_t *stack[JP_MAX_DEPTH];
    int top = 0;
    stack[0] = &jp->top;
    if (!strchr(tmpl, '{')) { /* kubectl wraps a template without braces */
        if (jp_parse_action(&ps, tmpl, strlen(tmpl), stack, &top) != 0)
            goto fail;
        return jp;
    }
    const char *s = tmpl;
    while (*s) {
        if (*s != '{') {
            size_t n = strcspn(s, "{");
            jp_add_node(stack[top], JP_TEXT)->text = tg_xstrndup(s, n);
            s += n;
            continue;
        }
        /* the closing brace, skipping quoted strings */
        const char *p = s + 1;
        char q = 0;
        for (; *p && (q || *p != '}'); p++) {
            if (q && *p == '\\' && p[1])
                p++;
            else if (q && *p == q)
                q = 0;
            else if (!q && (*p == '"' || *p == '\''))
                q = *p;
        }
        if (*p != '}') {
            jp_fail(&ps, "unclosed { in the template");
            goto fail;
        }
        if (jp_parse_action(&ps, s + 1, (size_t)(p - s - 1), stack, &top) != 0)
            goto fail;
        s = p + 1;
    }
    if (top != 0) {
        jp_fail(&ps, "{range ...} without {end}");
        goto fail;
    }
    return jp;
fail:
    tau_jsonpath_free(jp);
    return NULL;
}

/* ---- evaluation ------------------------------------------------------------------------- */

typedef struct {
    const json_t **v;
    size_t n, cap;
} jp_set_t;

static void jp_set_add(jp_set_t *s, const json_t *v)
{
    if (!v || s->n >= JP_MAX_RESULTS)
        return;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = tg_xrealloc(s->v, s->cap * sizeof(*s->v));
    }
    s->v[s->n++] = v;
}

static void jp_descend(jp_set_t *out, const json_t *v, const char *name, int depth)
{
    if (depth > 512)
        return;
    const char *k;
    json_t *x;
    size_t i;
    if (json_is_object(v)) {
        if (name)
            jp_set_add(out, json_object_get(v, name));
        json_object_foreach((json_t *)v, k, x)
        {
            if (!name)
                jp_set_add(out, x);
            jp_descend(out, x, name, depth + 1);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x)
        {
            if (!name)
                jp_set_add(out, x);
            jp_descend(out, x, name, depth + 1);
        }
    }
}

static void jp_eval(const jp_path_t *p, const json_t *root, const json_t *cur, jp_set_t *out);

static int jp_cmp(const json_t *x, const json_t *lit, jp_op_e op)
{
    if (json_is_number(x) && json_is_number(lit)) {
        double a = json_number_value(x), b = json_number_value(lit);
        switch (op) {
        case JP_EQ:
            return a == b;
        case JP_NE:
            return a != b;
        case JP_LT:
            return a < b;
        case JP_LE:
            return a <= b;
        case JP_GT:
            return a > b;
        case JP_GE:
            return a >= b;
        default:
            return 0;
        }
    }
    if (json_is_string(x) && json_is_string(lit)) {
        int c = strcmp(json_string_value(x), json_string_value(lit));
        return op == JP_EQ   ? c == 0
               : op == JP_NE ? c != 0
               : op == JP_LT ? c < 0
               : op == JP_LE ? c <= 0
               : op == JP_GT ? c > 0
                             : c >= 0;
    }
    if (op == JP_EQ)
        return json_equal((json_t *)x, (json_t *)lit);
    if (op == JP_NE)
        return !json_equal((json_t *)x, (json_t *)lit);
    return 0;
}

static int jp_keep(const jp_step_t *st, const json_t *root, const json_t *el)
{
    jp_set_t got = {0};
    jp_eval(st->rel, root, el, &got);
    int keep = 0;
    if (st->op == JP_EXISTS) {
        for (size_t i = 0; i < got.n && !keep; i++)
            keep = !json_is_null(got.v[i]) && !json_is_false(got.v[i]);
    } else if (got.n) {
        keep = jp_cmp(got.v[0], st->lit, st->op);
    } else {
        keep = st->op == JP_NE; /* a missing field differs from anything */
    }
    free(got.v);
    return keep;
}

static void jp_step(const jp_step_t *st, const json_t *root, const json_t *v, jp_set_t *out)
{
    size_t n = json_array_size(v), i;
    const char *k;
    json_t *x;
    switch (st->kind) {
    case JP_FIELD:
        if (json_is_object(v))
            jp_set_add(out, json_object_get(v, st->name));
        break;
    case JP_ALL:
        if (json_is_object(v)) {
            json_object_foreach((json_t *)v, k, x) jp_set_add(out, x);
        } else {
            json_array_foreach(v, i, x) jp_set_add(out, x);
        }
        break;
    case JP_INDEX:
        if (json_is_array(v)) {
            long idx = st->a < 0 ? (long)n + st->a : st->a;
            if (idx >= 0 && (size_t)idx < n)
                jp_set_add(out, json_array_get(v, (size_t)idx));
        }
        break;
    case JP_SLICE:
        if (json_is_array(v)) {
            long a = st->has_a ? st->a : 0, b = st->has_b ? st->b : (long)n;
            if (a < 0)
                a += (long)n;
            if (b < 0)
                b += (long)n;
            if (a < 0)
                a = 0;
            if (b > (long)n)
                b = (long)n;
            for (long j = a; j < b; j++)
                jp_set_add(out, json_array_get(v, (size_t)j));
        }
        break;
    case JP_DESCEND:
        jp_descend(out, v, st->name, 0);
        break;
    case JP_FILTER:
        json_array_foreach(v, i, x) if (jp_keep(st, root, x)) jp_set_add(out, x);
        break;
    }
}

static void jp_eval(const jp_path_t *p, const json_t *root, const json_t *cur, jp_set_t *out)
{
    jp_set_t a = {0}, b = {0};
    jp_set_add(&a, p->from_root ? root : cur);
    for (size_t s = 0; s < p->n; s++) {
        b.n = 0;
        for (size_t i = 0; i < a.n; i++)
            jp_step(&p->steps[s], root, a.v[i], &b);
        jp_set_t t = a;
        a = b;
        b = t;
    }
    for (size_t i = 0; i < a.n; i++)
        jp_set_add(out, a.v[i]);
    free(a.v);
    free(b.v);
}

static int jp_print_value(tg_buf_t *out, const json_t *v)
{
    if (json_is_string(v))
        return tg_buf_append(out, json_string_value(v), json_string_length(v)) == TG_OK ? 0 : -1;
    if (json_is_real(v)) {
        char num[40];
        snprintf(num, sizeof(num), "%.15g", json_real_value(v));
        if (strtod(num, NULL) != json_real_value(v))
            snprintf(num, sizeof(num), "%.17g", json_real_value(v));
        return tg_buf_puts(out, num) == TG_OK ? 0 : -1;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    int rc = s && tg_buf_puts(out, s) == TG_OK ? 0 : -1;
    free(s);
    return rc;
}

static int jp_render_list(const jp_list_t *l, const json_t *root, const json_t *cur, tg_buf_t *out)
{
    for (size_t i = 0; i < l->n; i++) {
        const jp_node_t *n = &l->v[i];
        if (n->kind == JP_TEXT) {
            if (tg_buf_puts(out, n->text) != TG_OK)
                return -1;
            continue;
        }
        jp_set_t got = {0};
        jp_eval(&n->path, root, cur, &got);
        int rc = 0;
        if (n->kind == JP_EXPR) {
            for (size_t j = 0; j < got.n && rc == 0; j++)
                rc = (j && tg_buf_puts(out, " ") != TG_OK) ? -1 : jp_print_value(out, got.v[j]);
        } else {
            for (size_t j = 0; j < got.n && rc == 0; j++) {
                if (json_is_array(got.v[j])) {
                    size_t k;
                    json_t *x;
                    json_array_foreach(got.v[j], k, x)
                    {
                        if ((rc = jp_render_list(&n->body, root, x, out)) != 0)
                            break;
                    }
                } else {
                    rc = jp_render_list(&n->body, root, got.v[j], out);
                }
            }
        }
        free(got.v);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int tau_jsonpath_render(const tau_jsonpath_t *jp, const json_t *root, tg_buf_t *out)
{
    return jp_render_list(&jp->top, root, root, out);
}
