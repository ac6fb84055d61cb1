/* JSON -> block YAML (see yaml_out.h). */
#include "api/yaml_out.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "core/buf.h"
#include "tauyaml/yaml_tree.h"

typedef struct {
    tg_buf_t out;
    int failed;
} yout_t;

static int yout_write(void *data, unsigned char *buffer, size_t size)
{
    yout_t *y = data;
    if (tg_buf_append(&y->out, buffer, size) != TG_OK) {
        y->failed = 1;
        return 0;
    }
    return 1;
}

/* Would `s` read back as this string when written plain? Under YAML 1.2's
 * core schema, and under YAML 1.1 too (PyYAML, older tools), which also
 * reads yes/no/on/off as booleans and 2026-01-02 or 1:20 as a date or a
 * number. */
static int yout_plain_ok(const char *s)
{
    static const char *const yaml11_bools[] = {"y", "n", "yes", "no", "on", "off"};
    size_t n = strlen(s);
    if (n == 0 || (isdigit((unsigned char)s[0]) && strpbrk(s, "-:")))
        return 0;
    for (size_t i = 0; i < sizeof(yaml11_bools) / sizeof(yaml11_bools[0]); i++)
        if (!strcasecmp(s, yaml11_bools[i]))
            return 0;
    int nonfinite = 0;
    json_t *v = tg_tauyaml_yaml_resolve_plain(s, n, &nonfinite);
    int ok = !nonfinite && json_is_string(v) && strcmp(json_string_value(v), s) == 0;
    json_decref(v);
    return ok;
}

static int yout_scalar(yaml_emitter_t *em, const char *text, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), 1, 1,
                                      style))
        return -1;
    return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int yout_string(yaml_emitter_t *em, const char *s)
{
    yaml_scalar_style_t st = YAML_ANY_SCALAR_STYLE;
    if (strchr(s, '\n'))
        st = YAML_LITERAL_SCALAR_STYLE;
    else if (!yout_plain_ok(s))
        st = YAML_SINGLE_QUOTED_SCALAR_STYLE;
    return yout_scalar(em, s, st);
}

static int yout_node(yaml_emitter_t *em, const json_t *v, int depth)
{
    yaml_event_t ev;
    char num[64];
    if (depth > 256)
        return -1;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return -1;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            if (yout_string(em, k) != 0 || yout_node(em, x, depth + 1) != 0)
                return -1;
        }
        return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev) ? 0 : -1;
    }
    case JSON_ARRAY: {
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return -1;
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (yout_node(em, x, depth + 1) != 0)
                return -1;
        }
        return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev) ? 0 : -1;
    }
    case JSON_STRING:
        return yout_string(em, json_string_value(v));
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return yout_scalar(em, num, YAML_PLAIN_SCALAR_STYLE);
    case JSON_REAL:
        snprintf(num, sizeof(num), "%.17g", json_real_value(v));
        if (!strpbrk(num, ".eE"))
            strncat(num, ".0", sizeof(num) - strlen(num) - 1);
        return yout_scalar(em, num, YAML_PLAIN_SCALAR_STYLE);
    case JSON_TRUE:
        return yout_scalar(em, "true", YAML_PLAIN_SCALAR_STYLE);
    case JSON_FALSE:
        return yout_scalar(em, "false", YAML_PLAIN_SCALAR_STYLE);
    case JSON_NULL:
        return yout_scalar(em, "null", YAML_PLAIN_SCALAR_STYLE);
    }
    return -1;
}

char *tg_yaml_out(const json_t *v, size_t *len)
{
    yout_t y = {0};
    tg_buf_init(&y.out, 0);
    yaml_emitter_t em;
    yaml_event_t ev;
    char *text = NULL;
    if (!yaml_emitter_initialize(&em))
        goto out_buf;
    yaml_emitter_set_output(&em, yout_write, &y);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    yaml_emitter_set_indent(&em, 2);
    int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
             yaml_emitter_emit(&em, &ev) &&
             yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
             yaml_emitter_emit(&em, &ev) && yout_node(&em, v, 0) == 0 &&
             yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&em, &ev) &&
             yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev) &&
             yaml_emitter_flush(&em);
    yaml_emitter_delete(&em);
    if (ok && !y.failed)
        text = tg_buf_steal(&y.out, len);
out_buf:
    tg_buf_clean(&y.out);
    return text;
}
