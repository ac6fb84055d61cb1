/* YAML to JSON (libyaml). */
#include "yamljson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static json_t *scalar(yaml_node_t *n)
{
    const char *v = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return json_stringn(v, len);
    if (!strcmp(v, "null") || !strcmp(v, "~") || !strcmp(v, "Null") || !strcmp(v, "NULL") ||
        len == 0)
        return json_null();
    if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
        return json_true();
    if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))
        return json_false();
    char *end = NULL;
    long long i = strtoll(v, &end, 10);
    if (end && *end == '\0' && end != v && (v[0] != '0' || len == 1 || v[0] == '-'))
        return json_integer(i);
    double d = strtod(v, &end);
    if (end && *end == '\0' && end != v && strpbrk(v, ".eE") && !strpbrk(v, "xX"))
        return json_real(d);
    return json_stringn(v, len);
}

static json_t *convert(yaml_document_t *doc, yaml_node_t *n, int depth)
{
    if (!n || depth > 200)
        return json_null();
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return scalar(n);
    case YAML_SEQUENCE_NODE: {
        json_t *a = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++)
            json_array_append_new(a, convert(doc, yaml_document_get_node(doc, *it), depth + 1));
        return a;
    }
    case YAML_MAPPING_NODE: {
        json_t *o = json_object();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            if (!k || k->type != YAML_SCALAR_NODE)
                continue;
            json_object_setn_new(o, (const char *)k->data.scalar.value, k->data.scalar.length,
                                 convert(doc, yaml_document_get_node(doc, p->value), depth + 1));
        }
        return o;
    }
    default:
        return json_null();
    }
}

json_t *ks_yaml_to_json(const char *buf, size_t len, char *err, size_t errn)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    json_t *out = NULL;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, errn, "yaml: out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, errn, "yaml: line %zu: %s", parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "parse error");
        goto out;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root)
        snprintf(err, errn, "yaml: empty document");
    else
        out = convert(&doc, root, 0);
    yaml_document_delete(&doc);
out:
    yaml_parser_delete(&parser);
    return out;
}
