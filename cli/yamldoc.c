/* Reading YAML files. */
#include "yamldoc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"

int tau_read_file(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    tg_buf_t b;
    tg_buf_init(&b, max);
    int rc = -1;
    char chunk[8192];
    size_t n;
    if (tg_buf_append(&b, "", 0) != TG_OK)
        goto out;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (tg_buf_append(&b, chunk, n) != TG_OK) {
            snprintf(err, errlen, "%s is larger than %zu bytes", path, max);
            goto out;
        }
    }
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    *out = tg_buf_steal(&b, len);
    rc = 0;
out:
    if (!is_stdin)
        fclose(f);
    tg_buf_clean(&b);
    return rc;
}

int tau_ydoc_parse(tau_ydoc_t *d, const char *text, size_t len, char *err, size_t errlen, int *line,
                   int *col)
{
    memset(d, 0, sizeof(*d));
    *line = *col = 0;
    d->text = tg_xstrndup(text, len);
    d->len = len;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        snprintf(err, errlen, "cannot start the YAML parser");
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)d->text, d->len);
    int rc = -1;
    if (!yaml_parser_load(&p, &d->doc)) {
        *line = (int)p.problem_mark.line + 1;
        *col = (int)p.problem_mark.column + 1;
        size_t at = p.problem_mark.index;
        if (at < d->len && d->text[at] == '\t')
            /* libyaml's "found character that cannot start any token" */
            snprintf(err, errlen, "a tab character: YAML indents with spaces only");
        else
            snprintf(err, errlen, "%s%s%s", p.problem ? p.problem : "YAML syntax error",
                     p.context ? " " : "", p.context ? p.context : "");
        goto out;
    }
    d->loaded = 1;
    rc = 0;
out:
    yaml_parser_delete(&p);
    return rc;
}

void tau_ydoc_clean(tau_ydoc_t *d)
{
    if (d->loaded)
        yaml_document_delete(&d->doc);
    d->loaded = 0;
    TG_FREE_NULL(d->text);
}

static yaml_node_t *ydoc_child(yaml_document_t *doc, yaml_node_t *map, const char *key, size_t klen)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == klen &&
            memcmp(k->data.scalar.value, key, klen) == 0)
            return yaml_document_get_node(doc, pr->value);
    }
    return NULL;
}

yaml_node_t *tau_ydoc_get(tau_ydoc_t *d, const char *path)
{
    if (!d->loaded)
        return NULL;
    yaml_node_t *n = yaml_document_get_root_node(&d->doc);
    while (n && *path) {
        size_t k = strcspn(path, ".");
        n = ydoc_child(&d->doc, n, path, k);
        path += k;
        if (*path == '.')
            path++;
    }
    return n;
}

const char *tau_ydoc_str(tau_ydoc_t *d, const char *path)
{
    yaml_node_t *n = tau_ydoc_get(d, path);
    if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.length == 0)
        return NULL;
    return (const char *)n->data.scalar.value;
}

void tau_ydoc_pos(const yaml_node_t *n, int *line, int *col)
{
    *line = n ? (int)n->start_mark.line + 1 : 0;
    *col = n ? (int)n->start_mark.column + 1 : 0;
}

static json_t *ydoc_scalar(const yaml_node_t *n)
{
    const char *s = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return json_stringn(s, len);
    if (len == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
        strcmp(s, "NULL") == 0)
        return json_null();
    if (strcasecmp(s, "true") == 0)
        return json_true();
    if (strcasecmp(s, "false") == 0)
        return json_false();
    char *end = NULL;
    errno = 0;
    long long i = strtoll(s, &end, 10);
    if (end && *end == '\0' && errno == 0 && (s[0] != '0' || len == 1))
        return json_integer((json_int_t)i);
    int numeric = 1;
    for (const char *p = s; *p; p++)
        numeric &= (strchr("0123456789.eE+-", *p) != NULL);
    if (numeric) {
        double v = strtod(s, &end);
        if (end && *end == '\0')
            return json_real(v);
    }
    return json_stringn(s, len);
}

static json_t *ydoc_json(yaml_document_t *doc, yaml_node_t *n, int depth, char *err, size_t errlen)
{
    if (!n)
        return json_null();
    if (depth > 64) {
        snprintf(err, errlen, "the document nests more than 64 levels");
        return NULL;
    }
    if (n->type == YAML_SCALAR_NODE)
        return ydoc_scalar(n);
    if (n->type == YAML_SEQUENCE_NODE) {
        json_t *a = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            json_t *x = ydoc_json(doc, yaml_document_get_node(doc, *it), depth + 1, err, errlen);
            if (!x) {
                json_decref(a);
                return NULL;
            }
            json_array_append_new(a, x);
        }
        return a;
    }
    json_t *o = json_object();
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        if (!k || k->type != YAML_SCALAR_NODE) {
            snprintf(err, errlen, "%zu:%zu: mapping keys must be scalars",
                     k ? k->start_mark.line + 1 : 0, k ? k->start_mark.column + 1 : 0);
            json_decref(o);
            return NULL;
        }
        json_t *x = ydoc_json(doc, yaml_document_get_node(doc, pr->value), depth + 1, err, errlen);
        if (!x) {
            json_decref(o);
            return NULL;
        }
        json_object_set_new(o, (const char *)k->data.scalar.value, x);
    }
    return o;
}

json_t *tau_ydoc_to_json(tau_ydoc_t *d, char *err, size_t errlen)
{
    if (!d->loaded)
        return NULL;
    return ydoc_json(&d->doc, yaml_document_get_root_node(&d->doc), 0, err, errlen);
}

json_t *tau_load_object_file(const char *path, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    if (tau_read_file(path, 8u * 1024 * 1024, &text, &len, err, errlen) != 0)
        return NULL;
    json_t *v = NULL;
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (*p == '{' || *p == '[') {
        json_error_t jerr;
        v = json_loadb(text, len, 0, &jerr);
        if (!v)
            snprintf(err, errlen, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
    } else {
        tau_ydoc_t d;
        char yerr[256];
        int line, col;
        if (tau_ydoc_parse(&d, text, len, yerr, sizeof(yerr), &line, &col) != 0)
            snprintf(err, errlen, "%s:%d:%d: %s", path, line, col, yerr);
        else if (!(v = tau_ydoc_to_json(&d, yerr, sizeof(yerr))))
            snprintf(err, errlen, "%s:%s", path, yerr);
        tau_ydoc_clean(&d);
    }
    free(text);
    return v;
}
