/* Declarative checks for JSON request bodies. */
#include "api/fields.h"

#include <stdio.h>
#include <string.h>

#include "core/quantity.h"
#include "http/problem.h"

int tg_fields_dns_ok(const char *s, int subdomain)
{
    size_t n = strlen(s);
    if (n == 0 || n > (subdomain ? 253u : 63u))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        int inner = c == '-' || (subdomain && c == '.');
        if (!alnum && !(inner && i > 0 && i + 1 < n))
            return 0;
        if (subdomain && c == '.' && (s[i + 1] == '.' || s[i + 1] == '-' || s[i - 1] == '-'))
            return 0;
    }
    return 1;
}

static void fields_err(json_t *errors, const char *path, const char *msg)
{
    json_array_append_new(errors, tg_problem_error(path, 0, 0, msg));
}

static int fields_check_string(const tg_field_t *f, const char *v, json_t *errors)
{
    char msg[256];
    size_t len = strlen(v);
    if ((f->min || f->max) && (len < (size_t)f->min || len > (size_t)f->max)) {
        snprintf(msg, sizeof(msg), "must be %ld to %ld characters long", f->min, f->max);
        fields_err(errors, f->name, msg);
        return 1;
    }
    if (f->pattern != TG_FP_NONE && !tg_fields_dns_ok(v, f->pattern == TG_FP_DNS_SUBDOMAIN)) {
        fields_err(errors, f->name,
                   f->pattern == TG_FP_DNS_LABEL
                       ? "must be a DNS-1123 label: lower-case letters, digits and '-', "
                         "starting and ending with a letter or digit, at most 63 characters"
                       : "must be a DNS-1123 subdomain: lower-case letters, digits, '-' and "
                         "'.', at most 253 characters");
        return 1;
    }
    if (f->choices) {
        for (const char *const *c = f->choices; *c; c++)
            if (strcmp(*c, v) == 0)
                return 0;
        size_t used = (size_t)snprintf(msg, sizeof(msg), "must be one of:");
        for (const char *const *c = f->choices; *c && used < sizeof(msg); c++)
            used += (size_t)snprintf(msg + used, sizeof(msg) - used, " %s", *c);
        fields_err(errors, f->name, msg);
        return 1;
    }
    return 0;
}

static int fields_check_one(const tg_field_t *f, const json_t *v, json_t *errors)
{
    char msg[256];
    if (json_is_null(v)) {
        if (f->nullable)
            return 0;
        fields_err(errors, f->name, "must not be null");
        return 1;
    }
    switch (f->type) {
    case TG_F_STRING:
        if (!json_is_string(v))
            break;
        return fields_check_string(f, json_string_value(v), errors);
    case TG_F_INT:
        if (!json_is_integer(v))
            break;
        if ((f->min || f->max) &&
            (json_integer_value(v) < f->min || json_integer_value(v) > f->max)) {
            snprintf(msg, sizeof(msg), "must be between %ld and %ld", f->min, f->max);
            fields_err(errors, f->name, msg);
            return 1;
        }
        return 0;
    case TG_F_BOOL:
        if (!json_is_boolean(v))
            break;
        return 0;
    case TG_F_OBJECT:
        if (!json_is_object(v))
            break;
        return 0;
    case TG_F_ARRAY:
        if (!json_is_array(v))
            break;
        return 0;
    case TG_F_STRING_ARRAY: {
        if (!json_is_array(v))
            break;
        size_t i;
        json_t *item;
        int bad = 0;
        json_array_foreach(v, i, item) {
            char path[128];
            snprintf(path, sizeof(path), "%s[%zu]", f->name, i);
            if (!json_is_string(item)) {
                fields_err(errors, path, "must be a string");
                bad++;
            } else if (f->pattern != TG_FP_NONE &&
                       !tg_fields_dns_ok(json_string_value(item),
                                         f->pattern == TG_FP_DNS_SUBDOMAIN)) {
                fields_err(errors, path, "must be a DNS-1123 name");
                bad++;
            }
        }
        return bad;
    }
    }
    static const char *const type_names[] = {
        "a string", "an integer", "true or false", "an array of strings", "an object", "an array"};
    snprintf(msg, sizeof(msg), "must be %s", type_names[f->type]);
    fields_err(errors, f->name, msg);
    return 1;
}

int tg_fields_check(const json_t *body, const tg_field_t *fields, int nfields, int partial,
                    json_t *errors)
{
    int bad = 0;
    if (!json_is_object(body)) {
        fields_err(errors, "", "the body must be a JSON object");
        return 1;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)body, key, v) {
        int known = 0;
        for (int i = 0; i < nfields && !known; i++)
            known = strcmp(fields[i].name, key) == 0;
        if (!known) {
            fields_err(errors, key, "unknown field");
            bad++;
        }
    }
    for (int i = 0; i < nfields; i++) {
        const json_t *fv = json_object_get(body, fields[i].name);
        if (!fv) {
            if (fields[i].required && !partial) {
                fields_err(errors, fields[i].name, "is required");
                bad++;
            }
            continue;
        }
        bad += fields_check_one(&fields[i], fv, errors);
    }
    return bad;
}

int tg_fields_quantity_ok(const char *s)
{
    tg_qty_t q;
    return tg_qty_parse(s, &q) == TG_QTY_OK;
}

int tg_fields_check_string_map(const json_t *v, const char *path, json_t *errors)
{
    if (!json_is_object(v)) {
        fields_err(errors, path, "must be an object of strings");
        return 1;
    }
    int bad = 0;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) {
        if (!json_is_string(x)) {
            char p[256];
            snprintf(p, sizeof(p), "%s.%s", path, k);
            fields_err(errors, p, "must be a string");
            bad++;
        }
    }
    return bad;
}

static int fields_check_k8s_items(const json_t *v, const char *path, json_t *errors,
                                  const char *const *keys, const char *const *effects,
                                  int key_required)
{
    if (!json_is_array(v)) {
        fields_err(errors, path, "must be an array");
        return 1;
    }
    int bad = 0;
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item) {
        char p[256];
        snprintf(p, sizeof(p), "%s[%zu]", path, i);
        if (!json_is_object(item)) {
            fields_err(errors, p, "must be an object");
            bad++;
            continue;
        }
        const char *k;
        json_t *x;
        json_object_foreach(item, k, x) {
            int known = 0;
            for (const char *const *kk = keys; *kk; kk++)
                known |= strcmp(*kk, k) == 0;
            char pk[300];
            snprintf(pk, sizeof(pk), "%s.%s", p, k);
            if (!known) {
                fields_err(errors, pk, "unknown field");
                bad++;
            } else if (strcmp(k, "tolerationSeconds") == 0 ? !json_is_integer(x)
                                                           : !json_is_string(x)) {
                fields_err(errors, pk, "has the wrong type");
                bad++;
            }
        }
        if (key_required && !json_is_string(json_object_get(item, "key"))) {
            fields_err(errors, p, "needs a key");
            bad++;
        }
        const char *effect = json_string_value(json_object_get(item, "effect"));
        if (effect || key_required) {
            int ok = 0;
            for (const char *const *e = effects; effect && *e; e++)
                ok |= strcmp(*e, effect) == 0;
            if (!ok) {
                char pe[300];
                snprintf(pe, sizeof(pe), "%s.effect", p);
                fields_err(errors, pe, "must be NoSchedule, PreferNoSchedule or NoExecute");
                bad++;
            }
        }
        const char *op = json_string_value(json_object_get(item, "operator"));
        if (op && strcmp(op, "Equal") != 0 && strcmp(op, "Exists") != 0) {
            char po[300];
            snprintf(po, sizeof(po), "%s.operator", p);
            fields_err(errors, po, "must be Equal or Exists");
            bad++;
        }
    }
    return bad;
}

static const char *const fields_effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};

int tg_fields_check_tolerations(const json_t *v, const char *path, json_t *errors)
{
    static const char *const keys[] = {"key",    "operator",          "value",
                                       "effect", "tolerationSeconds", NULL};
    return fields_check_k8s_items(v, path, errors, keys, fields_effects, 0);
}

int tg_fields_check_taints(const json_t *v, const char *path, json_t *errors)
{
    static const char *const keys[] = {"key", "value", "effect", NULL};
    return fields_check_k8s_items(v, path, errors, keys, fields_effects, 1);
}
