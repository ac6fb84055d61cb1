/* Loading platform policy files and database rules into a snapshot. */
#include "policy/load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tauyaml/diag.h"
#include "tauyaml/limits.h"
#include "tauyaml/path.h"
#include "tauyaml/validate.h"
#include "tauyaml/yaml_tree.h"

/* ---- schema ---------------------------------------------------------------------------- */

static tg_policy_schema_t *load_schema_doc(json_t *doc, char *err, size_t errlen)
{
    tg_policy_schema_t *s = tg_xcalloc(1, sizeof(*s));
    json_t *rule_doc = NULL;
    s->file = tg_tauyaml_schema_load_json(doc, err, errlen);
    if (!s->file)
        goto fail;
    const json_t *defs = json_object_get(doc, "$defs");
    if (!json_is_object(json_object_get(defs, "rule"))) {
        snprintf(err, errlen, "policy schema: $defs.rule is missing");
        goto fail;
    }
    /* One rule on its own: the same definitions, rooted at #/$defs/rule. */
    rule_doc = json_pack("{s:s, s:O}", "$ref", "#/$defs/rule", "$defs", defs);
    s->rule = tg_tauyaml_schema_load_json(rule_doc, err, errlen);
    json_decref(rule_doc);
    if (!s->rule)
        goto fail;
    return s;
fail:
    tg_policy_schema_free(s);
    return NULL;
}

tg_policy_schema_t *tg_policy_schema_load_text(const char *text, size_t len, char *err,
                                               size_t errlen)
{
    json_error_t je;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        snprintf(err, errlen, "policy schema: line %d: %s", je.line, je.text);
        return NULL;
    }
    tg_policy_schema_t *s = load_schema_doc(doc, err, errlen);
    json_decref(doc);
    return s;
}

tg_policy_schema_t *tg_policy_schema_load_file(const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        snprintf(err, errlen, "policy schema %s: line %d: %s", path, je.line, je.text);
        return NULL;
    }
    tg_policy_schema_t *s = load_schema_doc(doc, err, errlen);
    json_decref(doc);
    return s;
}

void tg_policy_schema_free(tg_policy_schema_t *s)
{
    if (!s)
        return;
    tg_tauyaml_schema_free(s->file);
    tg_tauyaml_schema_free(s->rule);
    free(s);
}

/* ---- files ----------------------------------------------------------------------------- */

static void load_err(json_t *errors, const char *file, const char *path, unsigned line,
                     unsigned col, const char *msg)
{
    if (json_array_size(errors) >= TG_POLICY_MAX_ERRORS)
        return;
    json_array_append_new(errors, json_pack("{s:s, s:s, s:i, s:i, s:s}", "file", file, "path",
                                            path ? path : "", "line", (int)line, "column", (int)col,
                                            "message", msg ? msg : ""));
}

/* ---- snapshot -------------------------------------------------------------------------- */

/* The shared validator words unknown keys for tau.yaml; say "policy" here. */
static json_t *load_message(const json_t *msg)
{
    static const char from[] = "it is not a field of the direct run config";
    static const char to[] = "it is not a policy rule field";
    const char *m = json_string_value(msg);
    const char *at = m ? strstr(m, from) : NULL;
    if (!at)
        return json_incref((json_t *)msg);
    tg_buf_t b;
    tg_buf_init(&b, 0);
    json_t *out = NULL;
    if (tg_buf_append(&b, m, (size_t)(at - m)) == TG_OK && tg_buf_puts(&b, to) == TG_OK &&
        tg_buf_puts(&b, at + sizeof(from) - 1) == TG_OK)
        out = json_string(b.data);
    tg_buf_clean(&b);
    return out ? out : json_incref((json_t *)msg);
}

/* Move a diag's errors into `errors`, naming the file. */
static void load_take_diag(json_t *errors, const char *file, tg_tauyaml_diag_t *d)
{
    tg_tauyaml_diag_sort(d);
    size_t i;
    const json_t *e;
    json_array_foreach(d->errors, i, e) {
        json_t *msg = load_message(json_object_get(e, "message"));
        load_err(errors, file, json_string_value(json_object_get(e, "path")),
                 (unsigned)json_integer_value(json_object_get(e, "line")),
                 (unsigned)json_integer_value(json_object_get(e, "column")),
                 json_string_value(msg));
        json_decref(msg);
    }
}

typedef struct load_ctx_s {
    const tg_policy_schema_t *schema;
    tg_policy_snapshot_t *snap;
    json_t *errors;
    size_t nfile_rules; /* rules that came from files, at the front of snap->rules */
} load_ctx_t;

static void load_one_file(load_ctx_t *c, const tg_policy_file_t *f)
{
    tg_tauyaml_limits_t lim;
    tg_tauyaml_limits_default(&lim);
    lim.max_doc_bytes = TG_POLICY_MAX_FILE_BYTES;
    tg_tauyaml_doc_t doc;
    tg_tauyaml_diag_t d;
    tg_tauyaml_doc_init(&doc);
    tg_tauyaml_diag_init(&d, NULL, TG_POLICY_MAX_ERRORS);
    tg_rc_e rc = tg_tauyaml_yaml_parse(f->text, f->len, &lim, &doc, &d);
    d.pos = doc.pos;
    if (rc != TG_OK || !doc.root)
        goto out;
    tg_tauyaml_validate_schema(c->schema->file, doc.root, &d);
    /* The checks a schema cannot say run anyway, so one pass lists everything. */
    const json_t *rules = json_object_get(doc.root, "rules");
    size_t i;
    json_t *rule;
    char base[48];
    json_array_foreach(rules, i, rule) {
        snprintf(base, sizeof(base), "rules[%zu]", i);
        tg_policy_rule_check(rule, base, &d);
    }
    if (tg_tauyaml_diag_nerrors(&d) > 0)
        goto out;
    char source[320];
    snprintf(source, sizeof(source), "file:%s", f->name);
    json_array_foreach(rules, i, rule) {
        snprintf(base, sizeof(base), "rules[%zu]", i);
        const tg_tauyaml_mark_t *m = tg_tauyaml_pos_get(doc.pos, base);
        tg_policy_rule_t r;
        if (c->snap->nrules >= TG_POLICY_MAX_RULES) {
            tg_tauyaml_diag_error(&d, base, TG_AT_KEY, "more than %d policy rules in all",
                                  TG_POLICY_MAX_RULES);
            break;
        }
        if (tg_policy_rule_compile(rule, source, 0, m ? m->kline : 0, &r) != TG_OK) {
            tg_tauyaml_diag_error(&d, base, TG_AT_KEY, "rule could not be compiled");
            continue;
        }
        long dup = tg_policy_snapshot_find(c->snap, r.id);
        if (dup >= 0) {
            char *path = tg_tauyaml_path_join(base, "id");
            const tg_policy_rule_t *o = &c->snap->rules[dup];
            tg_tauyaml_diag_error(&d, path, TG_AT_VALUE,
                                  "rule id \"%s\" is already used by %s line %u; ids are unique "
                                  "across policy files",
                                  r.id, o->source + 5, o->line);
            free(path);
            tg_policy_rule_clean(&r);
            continue;
        }
        tg_policy_snapshot_add(c->snap, &r);
    }
    json_array_append_new(c->snap->sources, json_pack("{s:s, s:I}", "source", source, "rules",
                                                      (json_int_t)json_array_size(rules)));
out:
    load_take_diag(c->errors, f->name, &d);
    tg_tauyaml_diag_clean(&d);
    tg_tauyaml_doc_clean(&doc);
}

json_t *tg_policy_rule_validate(const tg_policy_schema_t *schema, json_t *rule)
{
    tg_tauyaml_diag_t d;
    tg_tauyaml_diag_init(&d, NULL, TG_POLICY_MAX_ERRORS);
    tg_tauyaml_validate_schema(schema->rule, rule, &d);
    tg_policy_rule_check(rule, "", &d);
    json_t *out = json_array();
    size_t i;
    const json_t *e;
    json_array_foreach(d.errors, i, e) {
        json_array_append_new(out,
                              json_pack("{s:O, s:o}", "path", json_object_get(e, "path"), "message",
                                        load_message(json_object_get(e, "message"))));
    }
    tg_tauyaml_diag_clean(&d);
    return out;
}

static void load_db_row(load_ctx_t *c, const json_t *row)
{
    const char *id = json_string_value(json_object_get(row, "id"));
    json_int_t version = json_integer_value(json_object_get(row, "version"));
    char file[320];
    snprintf(file, sizeof(file), "database:%s v%lld", id ? id : "?", (long long)version);
    const json_t *stored = json_object_get(row, "rule");
    if (!id || !json_is_object(stored) || version < 1) {
        load_err(c->errors, file, "", 0, 0, "a database row needs id, version >= 1 and rule");
        return;
    }
    json_t *rule = json_deep_copy(stored);
    json_object_set_new(rule, "id", json_string(id));
    json_object_del(rule, "version");
    json_t *errs = tg_policy_rule_validate(c->schema, rule);
    size_t i;
    const json_t *e;
    json_array_foreach(errs, i, e) {
        load_err(c->errors, file, json_string_value(json_object_get(e, "path")), 0, 0,
                 json_string_value(json_object_get(e, "message")));
    }
    tg_policy_rule_t r;
    if (json_array_size(errs) == 0 &&
        tg_policy_rule_compile(rule, "database", version, 0, &r) == TG_OK) {
        const json_t *en = json_object_get(row, "enabled");
        if (json_is_boolean(en))
            r.enabled = json_is_true(en);
        long at = tg_policy_snapshot_find(c->snap, id);
        if (at >= 0 && (size_t)at < c->nfile_rules) {
            /* A database rule replaces the file rule with its id, in place. */
            tg_policy_rule_t *old = &c->snap->rules[at];
            char src[400];
            snprintf(src, sizeof(src), "database (replaces %s)", old->source);
            free(r.source);
            r.source = tg_xstrdup(src);
            tg_policy_rule_clean(old);
            *old = r;
        } else if (at >= 0) {
            load_err(c->errors, file, "id", 0, 0, "duplicate database rule id");
            tg_policy_rule_clean(&r);
        } else if (c->snap->nrules >= TG_POLICY_MAX_RULES) {
            load_err(c->errors, file, "", 0, 0, "too many policy rules");
            tg_policy_rule_clean(&r);
        } else {
            tg_policy_snapshot_add(c->snap, &r);
        }
    }
    json_decref(errs);
    json_decref(rule);
}

tg_rc_e tg_policy_snapshot_build(const tg_policy_schema_t *schema, const tg_policy_files_t *files,
                                 const json_t *db_rows, long long generation,
                                 tg_policy_snapshot_t **out, json_t **errors)
{
    load_ctx_t c = {.schema = schema, .snap = tg_policy_snapshot_new(), .errors = json_array()};
    *out = NULL;
    *errors = NULL;
    for (size_t i = 0; files && i < files->n; i++)
        load_one_file(&c, &files->v[i]);
    c.nfile_rules = c.snap->nrules;
    size_t i;
    const json_t *row;
    json_array_foreach(db_rows, i, row)
        load_db_row(&c, row);
    if (json_array_size(db_rows))
        json_array_append_new(c.snap->sources,
                              json_pack("{s:s, s:I}", "source", "database", "rules",
                                        (json_int_t)json_array_size(db_rows)));
    if (json_array_size(c.errors) > 0) {
        tg_policy_snapshot_release(c.snap);
        *errors = c.errors;
        return TG_EUNPROCESSABLE;
    }
    json_decref(c.errors);
    c.snap->generation = generation;
    tg_policy_files_copy(&c.snap->files, files);
    c.snap->db_rows = db_rows ? json_incref((json_t *)db_rows) : NULL;
    tg_policy_snapshot_seal(c.snap);
    *out = c.snap;
    return TG_OK;
}

void tg_policy_errors_format(const json_t *errors, char *out, size_t outlen)
{
    tg_buf_t b;
    tg_buf_init(&b, outlen > 4 ? outlen - 4 : 1);
    size_t i;
    const json_t *e;
    int cut = 0;
    json_array_foreach(errors, i, e) {
        const char *file = json_string_value(json_object_get(e, "file"));
        json_int_t line = json_integer_value(json_object_get(e, "line"));
        json_int_t col = json_integer_value(json_object_get(e, "column"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        tg_rc_e rc =
            line > 0
                ? tg_buf_printf(&b, "%s%s:%lld:%lld: %s", i ? "\n" : "", file ? file : "?",
                                (long long)line, (long long)col, msg ? msg : "")
                : tg_buf_printf(&b, "%s%s: %s", i ? "\n" : "", file ? file : "?", msg ? msg : "");
        if (rc != TG_OK) {
            cut = 1;
            break;
        }
    }
    snprintf(out, outlen, "%s%s", b.data ? b.data : "", cut ? "\n..." : "");
    tg_buf_clean(&b);
}
