/* One platform policy rule: kinds, checks beyond the schema, compiled form. */
#include "policy/rule.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/digest.h"
#include "tauyaml/path.h"

typedef enum { PK_LIST = 0, PK_TRUE, PK_INT, PK_QUANTITY, PK_STRING } pk_param_e;

static const struct {
    const char *name;
    pk_param_e param;
    int can_default;
} rule_kinds[TG_PK_COUNT] = {
    [TG_PK_ALLOWED_IMAGES] = {"allowed_images", PK_LIST, 0},
    [TG_PK_REQUIRE_IMAGE_DIGEST] = {"require_image_digest", PK_TRUE, 0},
    [TG_PK_MAX_GPUS_PER_RUN] = {"max_gpus_per_run", PK_INT, 0},
    [TG_PK_MAX_GPUS_PER_WORKER] = {"max_gpus_per_worker", PK_INT, 0},
    [TG_PK_MAX_NODES] = {"max_nodes", PK_INT, 0},
    [TG_PK_ALLOWED_GPU_CLASSES] = {"allowed_gpu_classes", PK_LIST, 1},
    [TG_PK_ALLOWED_PROFILES] = {"allowed_profiles", PK_LIST, 0},
    [TG_PK_MAX_ACTIVE_DEADLINE] = {"max_active_deadline_seconds", PK_INT, 1},
    [TG_PK_REQUIRE_ACTIVE_DEADLINE] = {"require_active_deadline", PK_TRUE, 0},
    [TG_PK_REQUIRE_SECURITY_MODE] = {"require_security_mode", PK_STRING, 1},
    [TG_PK_DENIED_ENV_NAMES] = {"denied_env_names", PK_LIST, 0},
    [TG_PK_REQUIRED_EXPERIMENT_FIELDS] = {"required_experiment_fields", PK_LIST, 0},
    [TG_PK_MAX_RETRIES] = {"max_retries", PK_INT, 1},
    [TG_PK_ALLOWED_PRIORITY_TIERS] = {"allowed_priority_tiers", PK_LIST, 0},
    [TG_PK_MAX_CPU_PER_POD] = {"max_cpu_per_pod", PK_QUANTITY, 1},
    [TG_PK_MAX_MEMORY_PER_POD] = {"max_memory_per_pod", PK_QUANTITY, 1},
    [TG_PK_ALLOWED_PVCS] = {"allowed_pvcs", PK_LIST, 0},
};

static const char *const rule_actions[] = {"deny", "warn", "default"};

const char *tg_policy_kind_name(tg_policy_kind_e k)
{
    return (unsigned)k < TG_PK_COUNT ? rule_kinds[k].name : NULL;
}

int tg_policy_kind_can_default(tg_policy_kind_e k)
{
    return (unsigned)k < TG_PK_COUNT && rule_kinds[k].can_default;
}

const char *tg_policy_action_name(tg_policy_action_e a)
{
    return (unsigned)a < TG_ARRAY_LEN(rule_actions) ? rule_actions[a] : "deny";
}

static int rule_action_parse(const char *s, tg_policy_action_e *out)
{
    for (size_t i = 0; s && i < TG_ARRAY_LEN(rule_actions); i++)
        if (strcmp(s, rule_actions[i]) == 0) {
            *out = (tg_policy_action_e)i;
            return 0;
        }
    return -1;
}

static int rule_kind_index(const char *key)
{
    for (int k = 0; k < TG_PK_COUNT; k++)
        if (strcmp(key, rule_kinds[k].name) == 0)
            return k;
    return -1;
}

/* The kinds a rule sets, in the order it writes them: *first and *second
 * get the first two; returns how many. */
static int rule_kinds_set(const json_t *rule, int *first, int *second)
{
    int n = 0;
    const char *key;
    const json_t *v;
    *first = *second = -1;
    json_object_foreach((json_t *)rule, key, v) {
        int k = rule_kind_index(key);
        if (k < 0)
            continue;
        if (n == 0)
            *first = k;
        else if (n == 1)
            *second = k;
        n++;
    }
    return n;
}

static void rule_err(tg_tauyaml_diag_t *d, const char *base, const char *field, const char *fmt,
                     ...) TG_PRINTF(4, 5);

/* Report at `base` + "." + field (the key), or at `base` itself. */
static void rule_err(tg_tauyaml_diag_t *d, const char *base, const char *field, const char *fmt,
                     ...)
{
    char *path = field ? tg_tauyaml_path_join(base, field) : tg_xstrdup(base);
    tg_buf_t b;
    tg_buf_init(&b, 8192);
    va_list ap;
    va_start(ap, fmt);
    if (tg_buf_vprintf(&b, fmt, ap) != TG_OK)
        tg_buf_reset(&b);
    va_end(ap);
    tg_tauyaml_diag_error(d, path, TG_AT_KEY, "%s", b.data ? b.data : "");
    tg_buf_clean(&b);
    free(path);
}

size_t tg_policy_rule_check(const json_t *rule, const char *base, tg_tauyaml_diag_t *diag)
{
    size_t before = tg_tauyaml_diag_nerrors(diag);
    if (!json_is_object(rule))
        return 0; /* the schema says what it should be */
    int first, second;
    int n = rule_kinds_set(rule, &first, &second);
    if (n == 0) {
        tg_buf_t b;
        tg_buf_init(&b, 4096);
        for (int k = 0; k < TG_PK_COUNT; k++)
            if (tg_buf_puts(&b, k ? ", " : "") != TG_OK ||
                tg_buf_puts(&b, rule_kinds[k].name) != TG_OK)
                break;
        rule_err(diag, base, NULL, "a rule needs exactly one check; add one of: %s", b.data);
        tg_buf_clean(&b);
    } else if (n > 1) {
        rule_err(diag, base, rule_kinds[second].name,
                 "a rule has exactly one check, but this one sets both %s and %s; split it "
                 "into two rules",
                 rule_kinds[second].name, rule_kinds[first].name);
    }
    tg_policy_action_e action;
    const char *as = json_string_value(json_object_get(rule, "action"));
    if (n >= 1 && as && rule_action_parse(as, &action) == 0 && action == TG_POLICY_DEFAULT &&
        !rule_kinds[first].can_default)
        rule_err(diag, base, "action",
                 "action default fills a value, but %s has nothing to fill; use deny or warn",
                 rule_kinds[first].name);
    if (n >= 1 && rule_kinds[first].param == PK_QUANTITY) {
        const char *q = json_string_value(json_object_get(rule, rule_kinds[first].name));
        tg_qty_t v;
        /* Syntax is the schema's to report; zero is not a usable cap. */
        if (q && tg_qty_parse(q, &v) == TG_QTY_OK && !tg_qty_is_positive(&v))
            rule_err(diag, base, rule_kinds[first].name,
                     "%s must be a positive Kubernetes quantity such as 16 or 64Gi",
                     rule_kinds[first].name);
    }
    return tg_tauyaml_diag_nerrors(diag) - before;
}

static void rule_digest(const json_t *rule, char out[17])
{
    char *text = json_dumps(rule, JSON_COMPACT | JSON_SORT_KEYS);
    char hex[65];
    tg_sha256_hex(text ? text : "", text ? strlen(text) : 0, hex);
    free(text);
    memcpy(out, hex, 16);
    out[16] = '\0';
}

static const json_t *rule_scope_list(const json_t *scope, const char *key)
{
    const json_t *v = json_object_get(scope, key);
    return json_is_array(v) && json_array_size(v) ? v : NULL;
}

tg_rc_e tg_policy_rule_compile(json_t *rule, const char *source, json_int_t version, unsigned line,
                               tg_policy_rule_t *out)
{
    memset(out, 0, sizeof(*out));
    int first, second;
    if (!json_is_object(rule) || rule_kinds_set(rule, &first, &second) != 1)
        return TG_EINVAL;
    tg_policy_action_e action;
    const char *id = json_string_value(json_object_get(rule, "id"));
    const char *desc = json_string_value(json_object_get(rule, "description"));
    if (!id || !desc ||
        rule_action_parse(json_string_value(json_object_get(rule, "action")), &action) != 0)
        return TG_EINVAL;
    if (action == TG_POLICY_DEFAULT && !rule_kinds[first].can_default)
        return TG_EINVAL;
    const json_t *param = json_object_get(rule, rule_kinds[first].name);
    switch (rule_kinds[first].param) {
    case PK_LIST:
        if (!json_is_array(param) || json_array_size(param) == 0)
            return TG_EINVAL;
        break;
    case PK_TRUE:
        if (!json_is_true(param))
            return TG_EINVAL;
        break;
    case PK_INT:
        if (!json_is_integer(param))
            return TG_EINVAL;
        out->ilimit = json_integer_value(param);
        break;
    case PK_QUANTITY:
        if (!json_is_string(param) ||
            tg_qty_parse(json_string_value(param), &out->qlimit) != TG_QTY_OK)
            return TG_EINVAL;
        break;
    case PK_STRING:
        if (!json_is_string(param))
            return TG_EINVAL;
        break;
    }
    out->json = json_incref(rule);
    out->id = id;
    out->description = desc;
    out->message = json_string_value(json_object_get(rule, "message"));
    out->kind = (tg_policy_kind_e)first;
    out->action = action;
    const json_t *en = json_object_get(rule, "enabled");
    out->enabled = !json_is_false(en);
    const json_t *ver = json_object_get(rule, "version");
    out->version = version > 0 ? version : (json_is_integer(ver) ? json_integer_value(ver) : 1);
    out->param = param;
    const json_t *scope = json_object_get(rule, "scope");
    out->scope_workspaces = rule_scope_list(scope, "workspaces");
    out->scope_teams = rule_scope_list(scope, "teams");
    out->scope_lanes = rule_scope_list(scope, "lanes");
    out->scope_engines = rule_scope_list(scope, "engines");
    out->source = tg_xstrdup(source ? source : "");
    out->line = line;
    rule_digest(rule, out->digest);
    return TG_OK;
}

void tg_policy_rule_seal(tg_policy_rule_t *r)
{
    json_decref(r->provenance);
    char src[80];
    snprintf(src, sizeof(src), "policy:%s", r->id);
    r->provenance = json_string(src);
    json_decref(r->decision_base);
    r->decision_base =
        json_pack("{s:O, s:I, s:s, s:s, s:s, s:s}", "rule_id", json_object_get(r->json, "id"),
                  "version", (json_int_t)r->version, "kind", rule_kinds[r->kind].name, "action",
                  tg_policy_action_name(r->action), "source", r->source, "digest", r->digest);
    free(r->decision_text);
    json_t *with = json_copy(r->decision_base);
    json_object_set(with, "expected", (json_t *)r->param);
    r->decision_text = json_dumps(with, JSON_COMPACT);
    json_decref(with);
    r->decision_text_len = r->decision_text ? strlen(r->decision_text) : 0;
    if (r->decision_text_len) /* drop the closing brace: the evaluation adds its fields */
        r->decision_text[--r->decision_text_len] = '\0';
}

void tg_policy_rule_clean(tg_policy_rule_t *r)
{
    if (!r)
        return;
    json_decref(r->decision_base);
    json_decref(r->provenance);
    r->decision_base = r->provenance = NULL;
    TG_FREE_NULL(r->decision_text);
    json_decref(r->json);
    TG_FREE_NULL(r->source);
    r->json = NULL;
}

json_t *tg_policy_rule_describe(const tg_policy_rule_t *r)
{
    json_t *o = json_copy(r->json);
    json_object_set_new(o, "kind", json_string(rule_kinds[r->kind].name));
    json_object_set_new(o, "version", json_integer(r->version));
    json_object_set_new(o, "enabled", json_boolean(r->enabled));
    json_object_set_new(o, "source", json_string(r->source));
    json_object_set_new(o, "digest", json_string(r->digest));
    if (r->line)
        json_object_set_new(o, "line", json_integer(r->line));
    return o;
}

int tg_policy_match_any(const json_t *patterns, const char *name)
{
    size_t i;
    const json_t *p;
    if (!name)
        return 0;
    json_array_foreach(patterns, i, p) {
        const char *s = json_string_value(p);
        if (s && (strcmp(s, name) == 0 || fnmatch(s, name, 0) == 0))
            return 1;
    }
    return 0;
}
