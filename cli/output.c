/* Output formats. */
#include "output.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "jsonpath.h"
#include "table.h"

#define TAU_OUT_JSONPATH_MAX (64u * 1024 * 1024)

void tau_print_clean(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
}

void tau_print_clean_lines(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        fputc((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f ? '?' : *p, f);
}

const char *tau_json_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

void tau_out_json(FILE *f, const json_t *v)
{
    json_dumpf(v, f, JSON_INDENT(2) | JSON_ENCODE_ANY);
    fputc('\n', f);
}

/* ---- YAML ------------------------------------------------------------------ */

static int yaml_write(void *data, unsigned char *buffer, size_t size)
{
    return fwrite(buffer, 1, size, (FILE *)data) == size;
}

/* 1 when a plain scalar with this text would read back as something other
 * than a string (null, bool, number), so it must be quoted. */
static int yaml_needs_quotes(const char *s)
{
    static const char *const words[] = {"null", "~", "true", "false", "yes",   "no",   "on", "off",
                                        "y",    "n", ".inf", "-.inf", "+.inf", ".nan", NULL};
    if (!*s)
        return 1;
    for (const char *const *w = words; *w; w++)
        if (strcasecmp(s, *w) == 0)
            return 1;
    if (isspace((unsigned char)s[0]) || isspace((unsigned char)s[strlen(s) - 1]))
        return 1;
    char *end = NULL;
    strtod(s, &end);
    if (end && *end == '\0')
        return 1;
    /* octal/hex/sexagesimal-looking and dates: quote anything starting like a number */
    return isdigit((unsigned char)s[0]) && strpbrk(s, ":-") != NULL;
}

static int yaml_scalar(yaml_emitter_t *em, const char *text, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), 1, 1,
                                      style))
        return -1;
    return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int yaml_node(yaml_emitter_t *em, const json_t *v)
{
    yaml_event_t ev;
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_MAPPING_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return -1;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            if (yaml_scalar(em, k,
                            yaml_needs_quotes(k) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                                 : YAML_ANY_SCALAR_STYLE) != 0 ||
                yaml_node(em, x) != 0)
                return -1;
        }
        if (!yaml_mapping_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
            return -1;
        return 0;
    }
    case JSON_ARRAY: {
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return -1;
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
            if (yaml_node(em, x) != 0)
                return -1;
        if (!yaml_sequence_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
            return -1;
        return 0;
    }
    case JSON_STRING: {
        const char *s = json_string_value(v);
        yaml_scalar_style_t st = YAML_ANY_SCALAR_STYLE;
        if (strchr(s, '\n'))
            st = YAML_LITERAL_SCALAR_STYLE;
        else if (yaml_needs_quotes(s))
            st = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        return yaml_scalar(em, s, st);
    }
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return yaml_scalar(em, num, YAML_PLAIN_SCALAR_STYLE);
    case JSON_REAL:
        snprintf(num, sizeof(num), "%.17g", json_real_value(v));
        return yaml_scalar(em, num, YAML_PLAIN_SCALAR_STYLE);
    case JSON_TRUE:
        return yaml_scalar(em, "true", YAML_PLAIN_SCALAR_STYLE);
    case JSON_FALSE:
        return yaml_scalar(em, "false", YAML_PLAIN_SCALAR_STYLE);
    case JSON_NULL:
    default:
        return yaml_scalar(em, "null", YAML_PLAIN_SCALAR_STYLE);
    }
}

int tau_out_yaml(FILE *f, const json_t *v)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    int rc = -1;
    if (!yaml_emitter_initialize(&em))
        return -1;
    yaml_emitter_set_output(&em, yaml_write, f);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
        !yaml_emitter_emit(&em, &ev))
        goto out;
    if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
        !yaml_emitter_emit(&em, &ev))
        goto out;
    if (yaml_node(&em, v) != 0)
        goto out;
    if (!yaml_document_end_event_initialize(&ev, 1) || !yaml_emitter_emit(&em, &ev))
        goto out;
    if (!yaml_stream_end_event_initialize(&ev) || !yaml_emitter_emit(&em, &ev))
        goto out;
    rc = yaml_emitter_flush(&em) ? 0 : -1;
out:
    yaml_emitter_delete(&em);
    return rc;
}

int tau_out_parse_format(tau_ctx_t *ctx, const char *value, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        tau_fmt_e fmt;
    } names[] = {{"table", TAU_FMT_TABLE},
                 {"wide", TAU_FMT_WIDE},
                 {"json", TAU_FMT_JSON},
                 {"yaml", TAU_FMT_YAML}};
    ctx->fmt = TAU_FMT_TABLE;
    if (!value)
        return 0;
    for (size_t i = 0; i < TG_ARRAY_LEN(names); i++)
        if (strcmp(value, names[i].name) == 0) {
            ctx->fmt = names[i].fmt;
            return 0;
        }
    if (strncmp(value, "jsonpath=", 9) == 0) {
        char why[256];
        tau_jsonpath_free(ctx->jsonpath);
        ctx->jsonpath = tau_jsonpath_parse(value + 9, why, sizeof(why));
        if (!ctx->jsonpath) {
            snprintf(err, errlen, "-o %s: %s", value, why);
            return -1;
        }
        ctx->fmt = TAU_FMT_JSONPATH;
        return 0;
    }
    snprintf(err, errlen,
             "unknown output format '%s' (use table, wide, json, yaml or jsonpath=TEMPLATE)",
             value);
    return -1;
}

int tau_out_structured(const tau_ctx_t *ctx, const json_t *v)
{
    if (ctx->fmt == TAU_FMT_JSONPATH) {
        tg_buf_t b;
        tg_buf_init(&b, TAU_OUT_JSONPATH_MAX);
        if (tau_jsonpath_render(ctx->jsonpath, v, &b) != 0)
            tau_warn(ctx, "the jsonpath output is cut at %u bytes", TAU_OUT_JSONPATH_MAX);
        fwrite(b.data ? b.data : "", 1, b.len, stdout); /* no newline added, as kubectl */
        tg_buf_clean(&b);
        return 1;
    }
    if (ctx->fmt == TAU_FMT_JSON) {
        tau_out_json(stdout, v);
        return 1;
    }
    if (ctx->fmt == TAU_FMT_YAML) {
        if (tau_out_yaml(stdout, v) != 0)
            tau_warn(ctx, "the YAML emitter failed");
        return 1;
    }
    return 0;
}

/* ---- times and states --------------------------------------------------------- */

int tau_time_parse(const char *s, time_t *out)
{
    if (!s)
        return -1;
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        p = strptime(s, "%Y-%m-%d %H:%M:%S", &tm);
    if (!p)
        return -1;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p); p++)
            ;
    long off = 0;
    if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1;
        int hh = 0, mm = 0;
        if (!isdigit((unsigned char)p[1]) || !isdigit((unsigned char)p[2]))
            return -1;
        hh = (p[1] - '0') * 10 + (p[2] - '0');
        p += 3;
        if (*p == ':')
            p++;
        if (isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1])) {
            mm = (p[0] - '0') * 10 + (p[1] - '0');
            p += 2;
        }
        off = sign * (hh * 3600L + mm * 60L);
    } else if (*p == 'Z' || *p == 'z') {
        p++;
    }
    if (*p)
        return -1;
    *out = timegm(&tm) - off;
    return 0;
}

void tau_time_age(const char *rfc3339, char *out, size_t outlen)
{
    time_t t;
    if (tau_time_parse(rfc3339, &t) != 0) {
        snprintf(out, outlen, "-");
        return;
    }
    long d = (long)(time(NULL) - t);
    if (d < 0)
        d = 0;
    if (d < 120)
        snprintf(out, outlen, "%lds", d);
    else if (d < 2 * 3600)
        snprintf(out, outlen, "%ldm", d / 60);
    else if (d < 2 * 86400)
        snprintf(out, outlen, "%ldh", d / 3600);
    else
        snprintf(out, outlen, "%ldd", d / 86400);
}

int tau_state_terminal(const char *state)
{
    return state && (strcmp(state, "Succeeded") == 0 || strcmp(state, "Failed") == 0 ||
                     strcmp(state, "Cancelled") == 0);
}

const char *tau_state_color(const char *state)
{
    if (!state)
        return NULL;
    if (strcmp(state, "Succeeded") == 0)
        return "\033[32m";
    if (strcmp(state, "Failed") == 0)
        return "\033[31m";
    if (strcmp(state, "Cancelled") == 0)
        return "\033[90m";
    if (strcmp(state, "Running") == 0 || strcmp(state, "Admitted") == 0)
        return "\033[36m";
    if (strcmp(state, "Queued") == 0 || strcmp(state, "Accepted") == 0 ||
        strcmp(state, "Recovering") == 0)
        return "\033[33m";
    return NULL;
}

/* ---- lists ------------------------------------------------------------------ */

const json_t *tau_json_path(const json_t *obj, const char *path)
{
    char key[256];
    const json_t *v = obj;
    while (v && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof(key))
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        v = json_object_get(v, key);
        path += n;
        if (*path == '.')
            path++;
    }
    return v;
}

void tau_cell_text(const json_t *v, tau_col_kind_e kind, char *out, size_t outlen)
{
    if (!v || json_is_null(v)) {
        snprintf(out, outlen, "-");
        return;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (kind == TAU_COL_AGE) {
            tau_time_age(s, out, outlen);
        } else if (kind == TAU_COL_TIME) {
            time_t t;
            struct tm tm;
            if (tau_time_parse(s, &t) == 0 && gmtime_r(&t, &tm))
                strftime(out, outlen, "%Y-%m-%d %H:%M:%SZ", &tm);
            else
                snprintf(out, outlen, "%s", s);
        } else {
            snprintf(out, outlen, "%s", *s ? s : "-");
        }
    } else if (json_is_integer(v)) {
        snprintf(out, outlen, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else if (json_is_real(v)) {
        snprintf(out, outlen, "%g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        snprintf(out, outlen, "%s", json_is_true(v) ? "true" : "false");
    } else if (json_is_array(v) && json_array_size(v) == 0) {
        snprintf(out, outlen, "-");
    } else {
        int all_strings = json_is_array(v);
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
            all_strings &= json_is_string(x);
        if (all_strings) {
            size_t used = 0;
            out[0] = '\0';
            json_array_foreach(v, i, x) {
                int n =
                    snprintf(out + used, outlen - used, "%s%s", i ? "," : "", json_string_value(x));
                if (n < 0 || (size_t)n >= outlen - used)
                    break;
                used += (size_t)n;
            }
        } else {
            char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            snprintf(out, outlen, "%s", s ? s : "?");
            free(s);
        }
    }
    size_t cut = kind == TAU_COL_LONG ? 60 : 80;
    if (strlen(out) > cut && outlen > cut) {
        /* cut on a UTF-8 boundary */
        size_t n = cut - 3;
        while (n > 0 && ((unsigned char)out[n] & 0xc0) == 0x80)
            n--;
        memcpy(out + n, "...", 4);
    }
}

void tau_out_items(const tau_ctx_t *ctx, const json_t *items, const tau_col_t *cols, int ncols)
{
    if (json_array_size(items) == 0) {
        tau_note(ctx, "No resources found.");
        return;
    }
    /* the columns shown: all with -o wide, else those not marked wide */
    const tau_col_t *shown[32] = {NULL};
    const char *headers[32] = {NULL};
    int n = 0;
    for (int i = 0; i < ncols && n < 32; i++)
        if (!(cols[i].kind & TAU_COL_WIDE) || ctx->fmt == TAU_FMT_WIDE) {
            shown[n] = &cols[i];
            headers[n++] = cols[i].header;
        }
    tau_table_t *t = tau_table_new(n, headers);
    for (int i = 0; i < n; i++)
        if ((shown[i]->kind & TAU_COL_KIND_MASK) == TAU_COL_STATE)
            tau_table_state_col(t, i);
    size_t r;
    json_t *item;
    char cells[32][256];
    json_array_foreach(items, r, item) {
        const char *row[32];
        for (int i = 0; i < n; i++) {
            tau_cell_text(tau_json_path(item, shown[i]->key),
                          (tau_col_kind_e)(shown[i]->kind & TAU_COL_KIND_MASK), cells[i],
                          sizeof(cells[i]));
            row[i] = cells[i];
        }
        tau_table_add(t, row);
    }
    tau_table_print(ctx, t, stdout);
    tau_table_free(t);
}

void tau_out_generic(const tau_ctx_t *ctx, const json_t *v)
{
    if (tau_out_structured(ctx, v))
        return;
    const json_t *items = json_is_array(v) ? v : json_object_get(v, "items");
    if (json_is_array(items) &&
        (json_array_size(items) == 0 || json_is_object(json_array_get(items, 0)))) {
        /* columns: the scalar fields of the first item, up to eight */
        tau_col_t cols[8];
        char headers[8][64];
        int n = 0;
        const char *k;
        json_t *x;
        json_object_foreach(json_array_get(items, 0), k, x) {
            if (n == 8)
                break;
            if (json_is_object(x) ||
                (json_is_array(x) && json_array_size(x) && !json_is_string(json_array_get(x, 0))))
                continue;
            size_t j = 0;
            for (; k[j] && j + 1 < sizeof(headers[n]); j++)
                headers[n][j] = k[j] == '_' ? '-' : (char)toupper((unsigned char)k[j]);
            headers[n][j] = '\0';
            int is_time = strstr(k, "_at") != NULL || strcmp(k, "at") == 0;
            cols[n] = (tau_col_t){headers[n], k,
                                  strcmp(k, "state") == 0 ? TAU_COL_STATE
                                  : is_time               ? TAU_COL_TIME
                                                          : TAU_COL_TEXT};
            n++;
        }
        tau_out_items(ctx, items, cols, n);
        return;
    }
    if (tau_out_yaml(stdout, v) != 0)
        tau_warn(ctx, "the YAML emitter failed");
}

void tau_out_kv(const tau_ctx_t *ctx, const char *key, const char *value)
{
    (void)ctx;
    char k[64];
    snprintf(k, sizeof(k), "%s:", key);
    printf("%-14s", k);
    tau_print_clean(stdout, value ? value : "-");
    fputc('\n', stdout);
}
