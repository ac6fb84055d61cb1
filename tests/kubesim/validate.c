/* Defaulting and validation. */
#include "validate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "openapi.h"
#include "rtypes.h"
#include "util.h"

/* ---- CRD structural schemas: defaults, types, required, enum ---- */

static int type_ok(json_t *schema, json_t *v)
{
    const char *t = ks_jstr(schema, "type");
    if (ks_jbool(schema, "x-kubernetes-int-or-string", 0))
        return json_is_integer(v) || json_is_string(v);
    if (json_is_null(v) && ks_jbool(schema, "nullable", 0))
        return 1;
    if (!t)
        return 1;
    if (!strcmp(t, "object"))
        return json_is_object(v);
    if (!strcmp(t, "array"))
        return json_is_array(v);
    if (!strcmp(t, "string"))
        return json_is_string(v);
    if (!strcmp(t, "integer"))
        return json_is_integer(v);
    if (!strcmp(t, "number"))
        return json_is_number(v);
    if (!strcmp(t, "boolean"))
        return json_is_boolean(v);
    return 1;
}

static const char *json_type_name(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

static void schema_walk(json_t *schema, json_t *v, const char *path, json_t *causes,
                        json_t *unknown, int depth)
{
    char sub[1024];
    if (!schema || !v || depth > 64)
        return;
    if (!type_ok(schema, v)) {
        ks_cause(causes, "FieldValueTypeInvalid", path,
                 "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"",
                 json_type_name(v), path, ks_jstr(schema, "type"), json_type_name(v));
        return;
    }
    json_t *en = json_object_get(schema, "enum");
    if (json_is_array(en) && json_array_size(en)) {
        int ok = 0;
        size_t i;
        json_t *e;
        json_array_foreach(en, i, e) if (json_equal(e, v)) ok = 1;
        if (!ok && json_is_string(v))
            ks_cause(causes, "FieldValueNotSupported", path, "Unsupported value: \"%s\"",
                     json_string_value(v));
    }
    if (json_is_object(v)) {
        json_t *props = json_object_get(schema, "properties");
        json_t *addl = json_object_get(schema, "additionalProperties");
        const char *k;
        json_t *ps;
        json_object_foreach(props, k, ps)
        {
            json_t *d = json_object_get(ps, "default");
            if (d && !json_object_get(v, k))
                json_object_set_new(v, k, json_deep_copy(d));
        }
        size_t i;
        json_t *req;
        json_array_foreach(json_object_get(schema, "required"), i, req)
        {
            const char *rk = json_string_value(req);
            if (rk && !json_object_get(v, rk)) {
                snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", rk);
                ks_cause(causes, "FieldValueRequired", sub, "Required value");
            }
        }
        void *tmp;
        json_t *x;
        json_object_foreach_safe(v, tmp, k, x)
        {
            snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", k);
            json_t *ps2 = json_object_get(props, k);
            if (ps2) {
                schema_walk(ps2, x, sub, causes, unknown, depth + 1);
            } else if (json_is_object(addl)) {
                schema_walk(addl, x, sub, causes, unknown, depth + 1);
            } else if (props && !ks_jbool(schema, "x-kubernetes-preserve-unknown-fields", 0) &&
                       !(depth == 0 && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") ||
                                        !strcmp(k, "metadata")))) {
                if (unknown) {
                    char up[1100];
                    snprintf(up, sizeof(up), ".%s", sub);
                    json_array_append_new(unknown, json_string(up));
                }
                json_object_del(v, k);
            }
        }
    } else if (json_is_array(v)) {
        json_t *items = json_object_get(schema, "items");
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
            schema_walk(items, x, sub, causes, unknown, depth + 1);
        }
    }
}

void ks_prune_unknown(int rt, json_t *obj, json_t *unknown)
{
    json_t *schema = ks_openapi_crd_schema(rt);
    json_t *scratch = json_array();
    if (schema)
        schema_walk(schema, obj, "", scratch, unknown, 0);
    json_decref(scratch);
}

/* ---- built-in defaults ---- */

static void set_default(json_t *o, const char *path, json_t *v)
{
    if (!ks_jget(o, path))
        ks_jset(o, path, v);
    else
        json_decref(v);
}

/* Like set_default for a plain key that may contain dots (labels). */
static void key_default(json_t *o, const char *key, json_t *v)
{
    if (!json_object_get(o, key))
        json_object_set_new(o, key, v);
    else
        json_decref(v);
}

void ks_pod_spec_defaults(json_t *spec, int job)
{
    if (!json_is_object(spec))
        return;
    if (!job)
        set_default(spec, "restartPolicy", json_string("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json_integer(30));
    set_default(spec, "dnsPolicy", json_string("ClusterFirst"));
    set_default(spec, "schedulerName", json_string("default-scheduler"));
    set_default(spec, "securityContext", json_object());
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(spec, "containers"), i, c)
    {
        if (!json_is_object(c))
            continue;
        set_default(c, "terminationMessagePath", json_string("/dev/termination-log"));
        set_default(c, "terminationMessagePolicy", json_string("File"));
        const char *img = ks_jstr(c, "image");
        int latest = img && (!strchr(img, ':') || strstr(img, ":latest"));
        set_default(c, "imagePullPolicy", json_string(latest ? "Always" : "IfNotPresent"));
        set_default(c, "resources", json_object());
        /* Limits stand in for missing requests. */
        const char *k;
        json_t *v;
        json_object_foreach(ks_jget(c, "resources.limits"), k, v)
        {
            json_t *req = ks_jobj(c, "resources.requests");
            if (!json_object_get(req, k))
                json_object_set(req, k, v);
        }
    }
}

static void job_defaults(json_t *o, json_t *old)
{
    json_t *spec = ks_jobj(o, "spec");
    if (!json_object_get(spec, "completions") && !json_object_get(spec, "parallelism")) {
        json_object_set_new(spec, "completions", json_integer(1));
        json_object_set_new(spec, "parallelism", json_integer(1));
    }
    set_default(spec, "parallelism", json_integer(1));
    set_default(spec, "backoffLimit",
                json_integer(json_object_get(spec, "backoffLimitPerIndex") ? 2147483647 : 6));
    set_default(spec, "completionMode", json_string("NonIndexed"));
    set_default(spec, "suspend", json_false());
    set_default(spec, "manualSelector", json_false());
    set_default(spec, "podReplacementPolicy",
                json_string(json_object_get(spec, "podFailurePolicy") ? "Failed"
                                                                      : "TerminatingOrFailed"));
    ks_pod_spec_defaults(ks_jget(o, "spec.template.spec"), 1);
    if (old)
        return;
    /* The server-generated selector and template labels (not manualSelector). */
    const char *uid = ks_meta_uid(o), *name = ks_meta_name(o);
    if (!uid || !name || ks_jbool(o, "spec.manualSelector", 0))
        return;
    json_t *tl = ks_jobj(o, "spec.template.metadata.labels");
    key_default(tl, "batch.kubernetes.io/controller-uid", json_string(uid));
    key_default(tl, "batch.kubernetes.io/job-name", json_string(name));
    key_default(tl, "controller-uid", json_string(uid));
    key_default(tl, "job-name", json_string(name));
    if (!ks_jget(o, "spec.selector"))
        ks_jset(o, "spec.selector",
                json_pack("{s:{s:s}}", "matchLabels", "batch.kubernetes.io/controller-uid", uid));
    json_t *ol = ks_jget(o, "metadata.labels");
    if (!json_object_size(ol))
        ks_jset(o, "metadata.labels", json_deep_copy(tl));
}

void ks_defaults(int rt, json_t *obj, json_t *old)
{
    const ks_rtype_t *t = ks_rtype(rt);
    if (t->crd_file) {
        json_t *scratch = json_array();
        json_t *schema = ks_openapi_crd_schema(rt);
        /* Structural defaulting; type errors surface in ks_validate. */
        if (schema)
            schema_walk(schema, obj, "", scratch, NULL, 0);
        json_decref(scratch);
    }
    switch (rt) {
    case KS_RT_NAMESPACES:
        json_object_set_new(ks_jobj(obj, "metadata.labels"), "kubernetes.io/metadata.name",
                            json_string(ks_meta_name(obj) ? ks_meta_name(obj) : ""));
        if (!old) {
            ks_jset(obj, "status", json_pack("{s:s}", "phase", "Active"));
            ks_jset(obj, "spec", json_pack("{s:[s]}", "finalizers", "kubernetes"));
        }
        break;
    case KS_RT_JOBS:
        job_defaults(obj, old);
        break;
    case KS_RT_PODS:
        ks_pod_spec_defaults(ks_jget(obj, "spec"), 0);
        if (!old && !ks_jget(obj, "status.phase"))
            ks_jset(obj, "status", json_pack("{s:s,s:s}", "phase", "Pending", "qosClass",
                                             "BestEffort"));
        break;
    case KS_RT_WORKLOADS:
        set_default(ks_jobj(obj, "spec"), "active", json_true());
        break;
    case KS_RT_CLUSTERQUEUES: {
        json_t *spec = ks_jobj(obj, "spec");
        set_default(spec, "queueingStrategy", json_string("BestEffortFIFO"));
        set_default(spec, "stopPolicy", json_string("None"));
        json_t *pre = ks_jobj(spec, "preemption");
        set_default(pre, "withinClusterQueue", json_string("Never"));
        set_default(pre, "reclaimWithinCohort", json_string("Never"));
        set_default(pre, "borrowWithinCohort", json_pack("{s:s}", "policy", "Never"));
        json_t *ff = ks_jobj(spec, "flavorFungibility");
        set_default(ff, "whenCanBorrow", json_string("Borrow"));
        set_default(ff, "whenCanPreempt", json_string("TryNextFlavor"));
        break;
    }
    default:
        ks_deploy_kinds_defaults(rt, obj);
        break;
    }
}

/* ---- validation ---- */

static int dns1123_label(const char *s, size_t max)
{
    size_t l = s ? strlen(s) : 0;
    if (!l || l > max)
        return 0;
    for (size_t i = 0; i < l; i++) {
        char c = s[i];
        if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-' ||
              (max > 63 && c == '.')))
            return 0;
    }
    return isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[l - 1]);
}

static void validate_meta(int rt, json_t *o, json_t *causes)
{
    const char *name = ks_meta_name(o);
    if (!name || !name[0]) {
        ks_cause(causes, "FieldValueRequired", "metadata.name",
                 "Required value: name or generateName is required");
        return;
    }
    size_t max = rt == KS_RT_NAMESPACES || rt == KS_RT_SERVICES ? 63 : 253;
    if (!dns1123_label(name, max))
        ks_cause(causes, "FieldValueInvalid", "metadata.name",
                 "Invalid value: \"%s\": a lowercase RFC 1123 %s must consist of lower case "
                 "alphanumeric characters, '-' or '.', and must start and end with an "
                 "alphanumeric character",
                 name, max > 63 ? "subdomain" : "label");
    if (rt == KS_RT_JOBS && strlen(name) > 63)
        ks_cause(causes, "FieldValueInvalid", "metadata.name",
                 "Invalid value: \"%s\": must be no more than 63 characters", name);
}

void ks_validate_pod_spec(json_t *spec, const char *base, int job, json_t *causes)
{
    char f[300];
    json_t *cs = json_object_get(spec, "containers");
    if (!json_is_array(cs) || !json_array_size(cs)) {
        snprintf(f, sizeof(f), "%s.containers", base);
        ks_cause(causes, "FieldValueRequired", f, "Required value");
    }
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        const char *n = ks_jstr(c, "name");
        snprintf(f, sizeof(f), "%s.containers[%zu].name", base, i);
        if (!n || !n[0])
            ks_cause(causes, "FieldValueRequired", f, "Required value");
        else if (!dns1123_label(n, 63))
            ks_cause(causes, "FieldValueInvalid", f,
                     "Invalid value: \"%s\": a lowercase RFC 1123 label must consist of lower "
                     "case alphanumeric characters or '-', and must start and end with an "
                     "alphanumeric character",
                     n);
        snprintf(f, sizeof(f), "%s.containers[%zu].image", base, i);
        const char *img = ks_jstr(c, "image");
        if (!img || !img[0])
            ks_cause(causes, "FieldValueRequired", f, "Required value");
    }
    snprintf(f, sizeof(f), "%s.restartPolicy", base);
    const char *rp = ks_jstr(spec, "restartPolicy");
    if (job) {
        if (!rp)
            ks_cause(causes, "FieldValueRequired", f,
                     "Required value: valid values: \"OnFailure\", \"Never\"");
        else if (strcmp(rp, "OnFailure") && strcmp(rp, "Never"))
            ks_cause(causes, "FieldValueNotSupported", f,
                     "Unsupported value: \"%s\": supported values: \"OnFailure\", \"Never\"", rp);
    } else if (rp && strcmp(rp, "Always") && strcmp(rp, "OnFailure") && strcmp(rp, "Never")) {
        ks_cause(causes, "FieldValueNotSupported", f,
                 "Unsupported value: \"%s\": supported values: \"Always\", \"OnFailure\", "
                 "\"Never\"",
                 rp);
    }
}

void ks_validate_nonneg(json_t *o, const char *path, json_t *causes)
{
    json_t *v = ks_jget(o, path);
    if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
        ks_cause(causes, "FieldValueInvalid", path,
                 "Invalid value: %lld: must be greater than or equal to 0",
                 (long long)json_integer_value(v));
}

/* Fields Kueue and users may change in a suspended, never-started Job. */
static int template_change_allowed(json_t *o, json_t *old)
{
    if (json_equal(ks_jget(o, "spec.template"), ks_jget(old, "spec.template")))
        return 1;
    if (!ks_jbool(old, "spec.suspend", 0) && !ks_jbool(o, "spec.suspend", 0))
        return 0;
    if (ks_jget(old, "status.startTime"))
        return 0;
    json_t *a = json_deep_copy(ks_jget(o, "spec.template"));
    json_t *b = json_deep_copy(ks_jget(old, "spec.template"));
    const char *mut[] = {"spec.nodeSelector", "spec.tolerations", "spec.affinity",
                         "spec.schedulingGates", "metadata.labels", "metadata.annotations"};
    for (size_t i = 0; i < sizeof(mut) / sizeof(mut[0]); i++) {
        ks_jdel(a, mut[i]);
        ks_jdel(b, mut[i]);
    }
    int eq = json_equal(a, b);
    json_decref(a);
    json_decref(b);
    return eq;
}

static void validate_job(json_t *o, json_t *old, json_t *causes)
{
    json_t *tspec = ks_jget(o, "spec.template.spec");
    if (!json_is_object(tspec))
        ks_cause(causes, "FieldValueRequired", "spec.template.spec.containers", "Required value");
    else
        ks_validate_pod_spec(tspec, "spec.template.spec", 1, causes);
    ks_validate_nonneg(o, "spec.parallelism", causes);
    ks_validate_nonneg(o, "spec.completions", causes);
    ks_validate_nonneg(o, "spec.backoffLimit", causes);
    ks_validate_nonneg(o, "spec.ttlSecondsAfterFinished", causes);
    json_t *ads = ks_jget(o, "spec.activeDeadlineSeconds");
    if (ads && (!json_is_integer(ads) || json_integer_value(ads) <= 0))
        ks_cause(causes, "FieldValueInvalid", "spec.activeDeadlineSeconds",
                 "Invalid value: %lld: must be greater than 0", (long long)json_integer_value(ads));
    if (!old)
        return;
    if (!template_change_allowed(o, old))
        ks_cause(causes, "FieldValueInvalid", "spec.template",
                 "Invalid value: \"...\": field is immutable");
    if (!json_equal(ks_jget(o, "spec.completions"), ks_jget(old, "spec.completions")))
        ks_cause(causes, "FieldValueInvalid", "spec.completions",
                 "Invalid value: %lld: field is immutable",
                 (long long)ks_jint(o, "spec.completions", 0));
    if (!json_equal(ks_jget(o, "spec.selector"), ks_jget(old, "spec.selector")))
        ks_cause(causes, "FieldValueInvalid", "spec.selector",
                 "Invalid value: \"...\": field is immutable");
}

static void validate_cq(json_t *o, json_t *causes)
{
    const char *cohort = ks_jstr(o, "spec.cohort");
    size_t g;
    json_t *grp;
    json_array_foreach(ks_jget(o, "spec.resourceGroups"), g, grp)
    {
        size_t ncov = json_array_size(json_object_get(grp, "coveredResources"));
        size_t f;
        json_t *fl;
        json_array_foreach(json_object_get(grp, "flavors"), f, fl)
        {
            char path[200];
            json_t *res = json_object_get(fl, "resources");
            snprintf(path, sizeof(path), "spec.resourceGroups[%zu]", g);
            if (json_array_size(res) != ncov)
                ks_cause(causes, "FieldValueInvalid", path,
                         "Invalid value: \"object\": flavors must have the same number of "
                         "resources as the coveredResources");
            size_t ri;
            json_t *r;
            json_array_foreach(res, ri, r)
            {
                if (json_object_get(r, "borrowingLimit") && (!cohort || !cohort[0])) {
                    snprintf(path, sizeof(path),
                             "spec.resourceGroups[%zu].flavors[%zu].resources[%zu]", g, f, ri);
                    ks_cause(causes, "FieldValueInvalid", "spec",
                             "Invalid value: \"object\": borrowingLimit must be nil when cohort "
                             "is empty");
                }
            }
        }
    }
}

int ks_validate(int rt, json_t *obj, json_t *old, json_t *causes)
{
    validate_meta(rt, obj, causes);
    const ks_rtype_t *t = ks_rtype(rt);
    if (t->crd_file) {
        json_t *schema = ks_openapi_crd_schema(rt);
        json_t *spec = json_object_get(obj, "spec");
        if (schema && spec)
            schema_walk(ks_jget(schema, "properties.spec"), spec, "spec", causes, NULL, 1);
    }
    switch (rt) {
    case KS_RT_JOBS:
        validate_job(obj, old, causes);
        break;
    case KS_RT_PODS:
        if (!json_is_object(ks_jget(obj, "spec")))
            ks_cause(causes, "FieldValueRequired", "spec.containers", "Required value");
        else
            ks_validate_pod_spec(ks_jget(obj, "spec"), "spec", 0, causes);
        break;
    case KS_RT_CLUSTERQUEUES:
        validate_cq(obj, causes);
        break;
    case KS_RT_LOCALQUEUES:
        if (old && !json_equal(ks_jget(obj, "spec.clusterQueue"),
                               ks_jget(old, "spec.clusterQueue")))
            ks_cause(causes, "FieldValueInvalid", "spec.clusterQueue",
                     "Invalid value: \"string\": field is immutable");
        break;
    default:
        ks_deploy_kinds_validate(rt, obj, old, causes);
        break;
    }
    return (int)json_array_size(causes);
}
