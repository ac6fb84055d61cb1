/* Defaults and validation for the kinds a deployment manifest holds and no
 * kubesim controller acts on: Deployment, PodDisruptionBudget, and the RBAC
 * roles and bindings. The rules and messages follow the 1.32 registry
 * strategies for the fields taugate's manifests and tests use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "rtypes.h"
#include "selectors.h"
#include "util.h"
#include "validate.h"

#define RBAC_GROUP "rbac.authorization.k8s.io"

static void set_default(json_t *o, const char *path, json_t *v)
{
    if (!ks_jget(o, path))
        ks_jset(o, path, v);
    else
        json_decref(v);
}

static void deployment_defaults(json_t *o)
{
    json_t *spec = ks_jobj(o, "spec");
    set_default(spec, "replicas", json_integer(1));
    set_default(spec, "revisionHistoryLimit", json_integer(10));
    set_default(spec, "progressDeadlineSeconds", json_integer(600));
    set_default(spec, "strategy.type", json_string("RollingUpdate"));
    if (ks_streq(ks_jstr(spec, "strategy.type"), "RollingUpdate")) {
        set_default(spec, "strategy.rollingUpdate.maxUnavailable", json_string("25%"));
        set_default(spec, "strategy.rollingUpdate.maxSurge", json_string("25%"));
    }
    ks_pod_spec_defaults(ks_jget(o, "spec.template.spec"), 0);
}

/* User and Group subjects default to RBAC's API group; a ServiceAccount's
 * is "", which the server omits. */
static void subject_defaults(json_t *o)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(o, "subjects"), i, s)
    {
        if (!json_is_object(s) || json_object_get(s, "apiGroup"))
            continue;
        const char *kind = ks_jstr(s, "kind");
        if (ks_streq(kind, "User") || ks_streq(kind, "Group"))
            json_object_set_new(s, "apiGroup", json_string(RBAC_GROUP));
    }
}

void ks_deploy_kinds_defaults(int rt, json_t *obj)
{
    if (rt == KS_RT_DEPLOYMENTS)
        deployment_defaults(obj);
    else if (rt == KS_RT_CLUSTERROLEBINDINGS || rt == KS_RT_ROLEBINDINGS)
        subject_defaults(obj);
}

/* An IntOrString that is zero: 0 or "0%". */
static int int_or_percent_zero(json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v) == 0;
    const char *s = json_string_value(v);
    return s && strtol(s, NULL, 10) == 0 && strchr(s, '%');
}

/* An IntOrString that must be a non-negative integer or a percentage. */
static void int_or_percent(json_t *o, const char *path, json_t *causes)
{
    json_t *v = ks_jget(o, path);
    if (!v || json_is_integer(v)) {
        ks_validate_nonneg(o, path, causes);
        return;
    }
    const char *s = json_string_value(v);
    size_t l = s ? strlen(s) : 0, digits = s ? strspn(s, "0123456789") : 0;
    if (!l || digits == 0 || digits != l - 1 || s[l - 1] != '%') {
        ks_cause(causes, "FieldValueInvalid", path,
                 "Invalid value: \"%s\": a valid percent string must be a numeric string "
                 "followed by an ending '%%' (e.g. '1%%',  or '93%%', regex used for validation "
                 "is '[0-9]+%%')",
                 s ? s : "");
    } else if (strtol(s, NULL, 10) > 100) {
        ks_cause(causes, "FieldValueInvalid", path,
                 "Invalid value: \"%s\": must not be greater than 100%%", s);
    }
}

static void validate_strategy(json_t *o, json_t *causes)
{
    const char *type = ks_jstr(o, "spec.strategy.type");
    json_t *ru = ks_jget(o, "spec.strategy.rollingUpdate");
    if (type && strcmp(type, "RollingUpdate") && strcmp(type, "Recreate")) {
        ks_cause(causes, "FieldValueNotSupported", "spec.strategy.type",
                 "Unsupported value: \"%s\": supported values: \"Recreate\", \"RollingUpdate\"",
                 type);
        return;
    }
    if (ks_streq(type, "Recreate") && ru) {
        ks_cause(causes, "FieldValueForbidden", "spec.strategy.rollingUpdate",
                 "Forbidden: may not be specified when strategy `type` is 'Recreate'");
        return;
    }
    int_or_percent(o, "spec.strategy.rollingUpdate.maxUnavailable", causes);
    int_or_percent(o, "spec.strategy.rollingUpdate.maxSurge", causes);
    json_t *mu = json_object_get(ru, "maxUnavailable"), *ms = json_object_get(ru, "maxSurge");
    if (mu && ms && int_or_percent_zero(mu) && int_or_percent_zero(ms))
        ks_cause(causes, "FieldValueInvalid", "spec.strategy.rollingUpdate.maxUnavailable",
                 "Invalid value: 0: may not be 0 when `maxSurge` is 0");
}

static void validate_deployment(json_t *o, json_t *old, json_t *causes)
{
    json_t *sel = ks_jget(o, "spec.selector");
    if (!json_is_object(sel)) {
        ks_cause(causes, "FieldValueRequired", "spec.selector", "Required value");
    } else if (!json_object_size(json_object_get(sel, "matchLabels")) &&
               !json_array_size(json_object_get(sel, "matchExpressions"))) {
        ks_cause(causes, "FieldValueInvalid", "spec.selector",
                 "Invalid value: \"{}\": empty selector is invalid for deployment");
    } else if (!ks_labelselector_obj_match(sel, ks_jget(o, "spec.template.metadata.labels"))) {
        ks_cause(causes, "FieldValueInvalid", "spec.template.metadata.labels",
                 "Invalid value: \"object\": `selector` does not match template `labels`");
    }
    ks_validate_nonneg(o, "spec.replicas", causes);
    ks_validate_nonneg(o, "spec.revisionHistoryLimit", causes);
    json_t *tspec = ks_jget(o, "spec.template.spec");
    if (!json_is_object(tspec)) {
        ks_cause(causes, "FieldValueRequired", "spec.template.spec.containers", "Required value");
    } else {
        ks_validate_pod_spec(tspec, "spec.template.spec", 0, causes);
        const char *rp = ks_jstr(tspec, "restartPolicy");
        if (rp && strcmp(rp, "Always"))
            ks_cause(causes, "FieldValueNotSupported", "spec.template.spec.restartPolicy",
                     "Unsupported value: \"%s\": supported values: \"Always\"", rp);
    }
    validate_strategy(o, causes);
    if (old && !json_equal(sel, ks_jget(old, "spec.selector")))
        ks_cause(causes, "FieldValueInvalid", "spec.selector",
                 "Invalid value: \"object\": field is immutable");
}

static void validate_pdb(json_t *o, json_t *causes)
{
    if (ks_jget(o, "spec.minAvailable") && ks_jget(o, "spec.maxUnavailable"))
        ks_cause(causes, "FieldValueInvalid", "spec",
                 "Invalid value: \"object\": minAvailable and maxUnavailable cannot be both set");
    int_or_percent(o, "spec.minAvailable", causes);
    int_or_percent(o, "spec.maxUnavailable", causes);
    const char *upe = ks_jstr(o, "spec.unhealthyPodEvictionPolicy");
    if (upe && strcmp(upe, "IfHealthyBudget") && strcmp(upe, "AlwaysAllow"))
        ks_cause(causes, "FieldValueNotSupported", "spec.unhealthyPodEvictionPolicy",
                 "Unsupported value: \"%s\": supported values: \"AlwaysAllow\", "
                 "\"IfHealthyBudget\"",
                 upe);
}

static void validate_rules(json_t *o, int namespaced, json_t *causes)
{
    char f[96];
    size_t i;
    json_t *rule;
    json_array_foreach(json_object_get(o, "rules"), i, rule)
    {
        int urls = json_array_size(json_object_get(rule, "nonResourceURLs")) > 0;
        int resources = json_array_size(json_object_get(rule, "resources")) > 0;
        snprintf(f, sizeof(f), "rules[%zu].verbs", i);
        if (!json_array_size(json_object_get(rule, "verbs")))
            ks_cause(causes, "FieldValueRequired", f,
                     "Required value: verbs must contain at least one value");
        snprintf(f, sizeof(f), "rules[%zu].nonResourceURLs", i);
        if (urls && namespaced)
            ks_cause(causes, "FieldValueInvalid", f,
                     "Invalid value: \"object\": namespaced rules cannot apply to "
                     "non-resource URLs");
        else if (urls && resources)
            ks_cause(causes, "FieldValueInvalid", f,
                     "Invalid value: \"object\": rules cannot apply to both regular resources "
                     "and non-resource URLs");
        snprintf(f, sizeof(f), "rules[%zu].apiGroups", i);
        if (!urls && !json_array_size(json_object_get(rule, "apiGroups")))
            ks_cause(causes, "FieldValueRequired", f,
                     "Required value: resource rules must supply at least one api group");
    }
}

static void validate_binding(json_t *o, json_t *old, int cluster, json_t *causes)
{
    const char *group = ks_jstr(o, "roleRef.apiGroup"), *kind = ks_jstr(o, "roleRef.kind");
    const char *name = ks_jstr(o, "roleRef.name");
    if (!ks_streq(group, RBAC_GROUP))
        ks_cause(causes, "FieldValueNotSupported", "roleRef.apiGroup",
                 "Unsupported value: \"%s\": supported values: \"" RBAC_GROUP "\"",
                 group ? group : "");
    if (cluster && !ks_streq(kind, "ClusterRole"))
        ks_cause(causes, "FieldValueNotSupported", "roleRef.kind",
                 "Unsupported value: \"%s\": supported values: \"ClusterRole\"", kind ? kind : "");
    else if (!cluster && !ks_streq(kind, "Role") && !ks_streq(kind, "ClusterRole"))
        ks_cause(causes, "FieldValueNotSupported", "roleRef.kind",
                 "Unsupported value: \"%s\": supported values: \"Role\", \"ClusterRole\"",
                 kind ? kind : "");
    if (!name || !name[0])
        ks_cause(causes, "FieldValueRequired", "roleRef.name", "Required value");
    if (old && !json_equal(ks_jget(o, "roleRef"), ks_jget(old, "roleRef")))
        ks_cause(causes, "FieldValueInvalid", "roleRef",
                 "Invalid value: \"object\": cannot change roleRef");
    char f[96];
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(o, "subjects"), i, s)
    {
        const char *sk = ks_jstr(s, "kind"), *sn = ks_jstr(s, "name");
        snprintf(f, sizeof(f), "subjects[%zu].kind", i);
        if (!ks_streq(sk, "ServiceAccount") && !ks_streq(sk, "User") && !ks_streq(sk, "Group"))
            ks_cause(causes, "FieldValueNotSupported", f,
                     "Unsupported value: \"%s\": supported values: \"ServiceAccount\", \"User\", "
                     "\"Group\"",
                     sk ? sk : "");
        snprintf(f, sizeof(f), "subjects[%zu].name", i);
        if (!sn || !sn[0])
            ks_cause(causes, "FieldValueRequired", f, "Required value");
        snprintf(f, sizeof(f), "subjects[%zu].namespace", i);
        if (cluster && ks_streq(sk, "ServiceAccount") && !ks_jstr(s, "namespace"))
            ks_cause(causes, "FieldValueRequired", f, "Required value");
    }
}

void ks_deploy_kinds_validate(int rt, json_t *obj, json_t *old, json_t *causes)
{
    switch (rt) {
    case KS_RT_DEPLOYMENTS:
        validate_deployment(obj, old, causes);
        break;
    case KS_RT_PDBS:
        validate_pdb(obj, causes);
        break;
    case KS_RT_CLUSTERROLES:
    case KS_RT_ROLES:
        validate_rules(obj, rt == KS_RT_ROLES, causes);
        break;
    case KS_RT_CLUSTERROLEBINDINGS:
    case KS_RT_ROLEBINDINGS:
        validate_binding(obj, old, rt == KS_RT_CLUSTERROLEBINDINGS, causes);
        break;
    default:
        break;
    }
}
