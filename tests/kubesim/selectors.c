/* Label and field selectors. */
#include "selectors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtypes.h"
#include "util.h"

enum { OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_EXISTS, OP_NOTEXISTS };

typedef struct {
    int op;
    char key[256];
    char *vals[16];
    int nvals;
} ks_req_term_t;

struct ks_sel_s {
    int rt;
    ks_req_term_t *t;
    int n;
};

static void trim(char *s)
{
    size_t l = strlen(s);
    while (l && (s[l - 1] == ' ' || s[l - 1] == '\t'))
        s[--l] = '\0';
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t')
        i++;
    if (i)
        memmove(s, s + i, l - i + 1);
}

int ks_sel_empty(const ks_sel_t *sel)
{
    return !sel || sel->n == 0;
}

void ks_sel_free(ks_sel_t *sel)
{
    if (!sel)
        return;
    for (int i = 0; i < sel->n; i++)
        for (int j = 0; j < sel->t[i].nvals; j++)
            free(sel->t[i].vals[j]);
    free(sel->t);
    free(sel);
}

/* Split at top-level commas (commas inside "(...)" belong to a set). */
static int split_terms(const char *s, char ***out)
{
    int n = 0, depth = 0;
    char **v = NULL;
    const char *start = s;
    for (const char *p = s;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        if (*p == '\0' || (*p == ',' && depth == 0)) {
            v = tg_xrealloc(v, sizeof(*v) * (size_t)(n + 1));
            v[n] = tg_xstrndup(start, (size_t)(p - start));
            trim(v[n]);
            n++;
            if (*p == '\0')
                break;
            start = p + 1;
        }
    }
    *out = v;
    return n;
}

static int parse_term(char *t, ks_req_term_t *r, int field, char *err, size_t errn)
{
    char *p;
    memset(r, 0, sizeof(*r));
    if (!field && ((p = strstr(t, " notin ")) || (p = strstr(t, " in ")))) {
        int notin = p[1] == 'n';
        *p = '\0';
        ks_strlcpy(r->key, t, sizeof(r->key));
        trim(r->key);
        char *set = p + (notin ? 7 : 4);
        trim(set);
        size_t l = strlen(set);
        if (l < 2 || set[0] != '(' || set[l - 1] != ')') {
            snprintf(err, errn, "unable to parse requirement: found '%s', expected: '('", set);
            return -1;
        }
        set[l - 1] = '\0';
        char *s = set + 1;
        while (s && r->nvals < 16) {
            char *c = strchr(s, ',');
            if (c)
                *c = '\0';
            char tmp[256];
            ks_strlcpy(tmp, s, sizeof(tmp));
            trim(tmp);
            r->vals[r->nvals++] = tg_xstrdup(tmp);
            s = c ? c + 1 : NULL;
        }
        r->op = notin ? OP_NOTIN : OP_IN;
        return 0;
    }
    const char *ops[] = {"==", "!=", "="};
    for (int i = 0; i < 3; i++) {
        p = strstr(t, ops[i]);
        if (!p)
            continue;
        *p = '\0';
        ks_strlcpy(r->key, t, sizeof(r->key));
        trim(r->key);
        char tmp[256];
        ks_strlcpy(tmp, p + strlen(ops[i]), sizeof(tmp));
        trim(tmp);
        r->vals[0] = tg_xstrdup(tmp);
        r->nvals = 1;
        r->op = i == 1 ? OP_NE : OP_EQ;
        if (!r->key[0]) {
            snprintf(err, errn, "invalid selector: '%s'", t);
            return -1;
        }
        return 0;
    }
    if (field) {
        snprintf(err, errn, "invalid selector: '%s'; can't understand '%s'", t, t);
        return -1;
    }
    if (t[0] == '!') {
        ks_strlcpy(r->key, t + 1, sizeof(r->key));
        trim(r->key);
        r->op = OP_NOTEXISTS;
    } else {
        ks_strlcpy(r->key, t, sizeof(r->key));
        r->op = OP_EXISTS;
    }
    if (!r->key[0] || strpbrk(r->key, " ()")) {
        snprintf(err, errn, "unable to parse requirement: invalid label key \"%s\"", r->key);
        return -1;
    }
    return 0;
}

static ks_sel_t *sel_parse(int rt, const char *s, int field, char *err, size_t errn)
{
    ks_sel_t *sel = tg_xcalloc(1, sizeof(*sel));
    sel->rt = rt;
    if (!s || !*s)
        return sel;
    char **terms = NULL;
    int n = split_terms(s, &terms);
    sel->t = tg_xcalloc((size_t)n, sizeof(*sel->t));
    int ok = 1;
    for (int i = 0; i < n; i++) {
        if (!terms[i][0])
            continue;
        if (ok && parse_term(terms[i], &sel->t[sel->n], field, err, errn) != 0)
            ok = 0;
        else if (ok)
            sel->n++;
    }
    for (int i = 0; i < n; i++)
        free(terms[i]);
    free(terms);
    if (!ok) {
        ks_sel_free(sel);
        return NULL;
    }
    return sel;
}

ks_sel_t *ks_labelsel_parse(const char *s, char *err, size_t errn)
{
    return sel_parse(-1, s, 0, err, errn);
}

/* The field paths each kind supports, as the 1.32 apiserver registers them. */
static const char *field_path(int rt, const char *f)
{
    static const char *common[] = {"metadata.name", "metadata.namespace", NULL};
    static const char *pods[] = {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                                 "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                                 "status.podIP", "status.nominatedNodeName", NULL};
    static const char *events[] = {"involvedObject.kind", "involvedObject.namespace",
                                   "involvedObject.name", "involvedObject.uid",
                                   "involvedObject.apiVersion", "involvedObject.resourceVersion",
                                   "involvedObject.fieldPath", "reason", "reportingComponent",
                                   "source", "type", NULL};
    for (int i = 0; common[i]; i++)
        if (!strcmp(common[i], f))
            return f;
    const char **list = NULL;
    if (rt == KS_RT_PODS)
        list = pods;
    else if (rt == KS_RT_EVENTS)
        list = events;
    else if (rt == KS_RT_JOBS && !strcmp(f, "status.successful"))
        return "status.succeeded";
    else if (rt == KS_RT_NODES && !strcmp(f, "spec.unschedulable"))
        return f;
    else if (rt == KS_RT_NAMESPACES && !strcmp(f, "status.phase"))
        return f;
    else if (rt == KS_RT_SECRETS && !strcmp(f, "type"))
        return f;
    for (int i = 0; list && list[i]; i++)
        if (!strcmp(list[i], f))
            return f;
    return NULL;
}

ks_sel_t *ks_fieldsel_parse(int rt, const char *s, char *err, size_t errn)
{
    ks_sel_t *sel = sel_parse(rt, s, 1, err, errn);
    if (!sel)
        return NULL;
    for (int i = 0; i < sel->n; i++) {
        if (!field_path(rt, sel->t[i].key)) {
            snprintf(err, errn, "field label not supported: %s", sel->t[i].key);
            ks_sel_free(sel);
            return NULL;
        }
    }
    return sel;
}

static int term_match(const ks_req_term_t *t, const char *v)
{
    switch (t->op) {
    case OP_EQ:
        return v && !strcmp(v, t->vals[0]);
    case OP_NE:
        return !v || strcmp(v, t->vals[0]) != 0;
    case OP_IN:
        for (int i = 0; v && i < t->nvals; i++)
            if (!strcmp(v, t->vals[i]))
                return 1;
        return 0;
    case OP_NOTIN:
        for (int i = 0; v && i < t->nvals; i++)
            if (!strcmp(v, t->vals[i]))
                return 0;
        return 1;
    case OP_EXISTS:
        return v != NULL;
    case OP_NOTEXISTS:
        return v == NULL;
    }
    return 0;
}

int ks_labels_match(const ks_sel_t *sel, json_t *labels)
{
    for (int i = 0; sel && i < sel->n; i++) {
        const char *v = json_string_value(json_object_get(labels, sel->t[i].key));
        if (!term_match(&sel->t[i], v))
            return 0;
    }
    return 1;
}

int ks_labelsel_match(const ks_sel_t *sel, json_t *obj)
{
    return ks_labels_match(sel, ks_jget(obj, "metadata.labels"));
}

int ks_fieldsel_match(const ks_sel_t *sel, json_t *obj)
{
    for (int i = 0; sel && i < sel->n; i++) {
        const char *path = field_path(sel->rt, sel->t[i].key);
        json_t *v = path ? ks_jget(obj, path) : NULL;
        char num[64];
        const char *sv = json_string_value(v);
        if (json_is_integer(v)) {
            snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
            sv = num;
        } else if (json_is_boolean(v)) {
            sv = json_is_true(v) ? "true" : "false";
        } else if (!v) {
            /* Go's field sets hold "" (or "0"/"false") for unset fields. */
            sv = !strcmp(sel->t[i].key, "status.successful") ? "0"
                 : (!strcmp(sel->t[i].key, "spec.unschedulable") ||
                    !strcmp(sel->t[i].key, "spec.hostNetwork"))
                     ? "false"
                     : "";
        }
        if (!term_match(&sel->t[i], sv))
            return 0;
    }
    return 1;
}

int ks_labelselector_obj_match(json_t *selector, json_t *labels)
{
    if (!json_is_object(selector))
        return 0;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(selector, "matchLabels"), k, v)
    {
        if (!ks_streq(json_string_value(json_object_get(labels, k)), json_string_value(v)))
            return 0;
    }
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(selector, "matchExpressions"), i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        const char *have = key ? json_string_value(json_object_get(labels, key)) : NULL;
        json_t *vals = json_object_get(e, "values");
        int found = 0;
        size_t j;
        json_t *x;
        json_array_foreach(vals, j, x) if (have && ks_streq(have, json_string_value(x))) found = 1;
        if (ks_streq(op, "In") && !found)
            return 0;
        if (ks_streq(op, "NotIn") && found)
            return 0;
        if (ks_streq(op, "Exists") && !have)
            return 0;
        if (ks_streq(op, "DoesNotExist") && have)
            return 0;
    }
    return 1;
}
