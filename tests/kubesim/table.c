/* Tables for kubectl get. */
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openapi.h"
#include "rtypes.h"
#include "table_int.h"
#include "util.h"

static const ks_col_t job_cols[] = {
    {"Name", "string", "name", 0},       {"Status", "string", "", 0},
    {"Completions", "string", "", 0},    {"Duration", "string", "", 0},
    {"Age", "string", "", 0},            {"Containers", "string", "", 1},
    {"Images", "string", "", 1},         {"Selector", "string", "", 1},
    {NULL, NULL, NULL, 0}};
static const ks_col_t pod_cols[] = {
    {"Name", "string", "name", 0},       {"Ready", "string", "", 0},
    {"Status", "string", "", 0},         {"Restarts", "string", "", 0},
    {"Age", "string", "", 0},            {"IP", "string", "", 1},
    {"Node", "string", "", 1},           {"Nominated Node", "string", "", 1},
    {"Readiness Gates", "string", "", 1}, {NULL, NULL, NULL, 0}};
static const ks_col_t node_cols[] = {{"Name", "string", "name", 0}, {"Status", "string", "", 0},
                                     {"Roles", "string", "", 0},    {"Age", "string", "", 0},
                                     {"Version", "string", "", 0},  {NULL, NULL, NULL, 0}};
static const ks_col_t ns_cols[] = {{"Name", "string", "name", 0}, {"Status", "string", "", 0},
                                   {"Age", "string", "", 0}, {NULL, NULL, NULL, 0}};
static const ks_col_t ev_cols[] = {{"Last Seen", "string", "", 0}, {"Type", "string", "", 0},
                                   {"Reason", "string", "", 0},    {"Object", "string", "", 0},
                                   {"Message", "string", "", 0},   {NULL, NULL, NULL, 0}};
static const ks_col_t plain_cols[] = {{"Name", "string", "name", 0}, {"Age", "string", "", 0},
                                      {NULL, NULL, NULL, 0}};

static const ks_col_t *builtin_cols(int rt)
{
    switch (rt) {
    case KS_RT_JOBS:
        return job_cols;
    case KS_RT_PODS:
        return pod_cols;
    case KS_RT_NODES:
        return node_cols;
    case KS_RT_NAMESPACES:
        return ns_cols;
    case KS_RT_EVENTS:
        return ev_cols;
    default:
        if (ks_table_deploy_cols(rt))
            return ks_table_deploy_cols(rt);
        return ks_rtype(rt)->crd_file ? NULL : plain_cols;
    }
}

json_t *ks_jsonpath(json_t *obj, const char *path)
{
    const char *p = path;
    json_t *cur = obj;
    while (cur && *p) {
        if (*p == '.') {
            p++;
            const char *e = p;
            while (*e && *e != '.' && *e != '[')
                e++;
            char key[128];
            size_t l = (size_t)(e - p);
            if (l >= sizeof(key))
                return NULL;
            memcpy(key, p, l);
            key[l] = '\0';
            cur = json_object_get(cur, key);
            p = e;
        } else if (*p == '[') {
            const char *e = strchr(p, ']');
            if (!e)
                return NULL;
            if (p[1] == '?') {
                /* [?(@.key=='value')] */
                char key[128], val[128];
                if (sscanf(p, "[?(@.%127[^=]=='%127[^']')]", key, val) != 2 &&
                    sscanf(p, "[?(@.%127[^=]==\"%127[^\"]\")]", key, val) != 2)
                    return NULL;
                json_t *found = NULL;
                size_t i;
                json_t *x;
                json_array_foreach(cur, i, x) if (!found &&
                                                  ks_streq(json_string_value(
                                                               json_object_get(x, key)),
                                                           val)) found = x;
                cur = found;
            } else {
                cur = json_array_get(cur, (size_t)strtoul(p + 1, NULL, 10));
            }
            p = e + 1;
        } else {
            return NULL;
        }
    }
    return cur;
}

static double created(json_t *o)
{
    return ks_parse_time(ks_jstr(o, "metadata.creationTimestamp"));
}

static json_t *age_cell(double t)
{
    char b[32];
    if (t < 0)
        return json_string("<unknown>");
    ks_fmt_age(ks_now() - t, b, sizeof(b));
    return json_string(b);
}

json_t *ks_table_age(json_t *obj)
{
    return age_cell(created(obj));
}

static const char *job_status(json_t *o)
{
    json_t *st = json_object_get(o, "status");
    if (ks_cond_true(st, "Complete"))
        return "Complete";
    if (ks_cond_true(st, "Failed"))
        return "Failed";
    if (ks_jget(o, "metadata.deletionTimestamp"))
        return "Terminating";
    if (ks_cond_true(st, "Suspended"))
        return "Suspended";
    if (ks_cond_true(st, "FailureTarget"))
        return "FailureTarget";
    if (ks_cond_true(st, "SuccessCriteriaMet"))
        return "SuccessCriteriaMet";
    return "Running";
}

static void job_row(json_t *o, json_t *cells)
{
    char b[128];
    long long succ = ks_jint(o, "status.succeeded", 0);
    json_t *comp = ks_jget(o, "spec.completions");
    long long par = ks_jint(o, "spec.parallelism", 1);
    if (comp)
        snprintf(b, sizeof(b), "%lld/%lld", succ, (long long)json_integer_value(comp));
    else if (par > 1)
        snprintf(b, sizeof(b), "%lld/1 of %lld", succ, par);
    else
        snprintf(b, sizeof(b), "%lld/1", succ);
    json_array_append_new(cells, json_string(job_status(o)));
    json_array_append_new(cells, json_string(b));
    double st = ks_parse_time(ks_jstr(o, "status.startTime"));
    double ct = ks_parse_time(ks_jstr(o, "status.completionTime"));
    if (st < 0)
        b[0] = '\0';
    else
        ks_fmt_age((ct >= 0 ? ct : ks_now()) - st, b, sizeof(b));
    json_array_append_new(cells, json_string(b));
    json_array_append_new(cells, age_cell(created(o)));
    ks_table_template_cells(o, cells);
}

void ks_table_template_cells(json_t *o, json_t *cells)
{
    char b[512];
    tg_buf_t names, images;
    tg_buf_init(&names, 4096);
    tg_buf_init(&images, 4096);
    size_t i;
    json_t *c;
    json_array_foreach(ks_jget(o, "spec.template.spec.containers"), i, c)
    {
        if (tg_buf_printf(&names, "%s%s", i ? "," : "", ks_jstr(c, "name")) != TG_OK ||
            tg_buf_printf(&images, "%s%s", i ? "," : "", ks_jstr(c, "image")) != TG_OK)
            break;
    }
    json_array_append_new(cells, json_string(names.data ? names.data : ""));
    json_array_append_new(cells, json_string(images.data ? images.data : ""));
    tg_buf_clean(&names);
    tg_buf_clean(&images);
    const char *k;
    json_t *v;
    b[0] = '\0';
    json_object_foreach(ks_jget(o, "spec.selector.matchLabels"), k, v)
    {
        size_t l = strlen(b);
        snprintf(b + l, sizeof(b) - l, "%s%s=%s", l ? "," : "", k, json_string_value(v));
    }
    json_array_append_new(cells, json_string(b));
}

static const char *pod_reason(json_t *o, int *ready, int *total, long long *restarts)
{
    const char *reason = ks_jstr(o, "status.reason");
    if (!reason)
        reason = ks_jstr(o, "status.phase");
    if (!reason)
        reason = "Pending";
    *ready = 0;
    *total = (int)json_array_size(ks_jget(o, "spec.containers"));
    *restarts = 0;
    size_t i;
    json_t *cs;
    json_array_foreach(ks_jget(o, "status.containerStatuses"), i, cs)
    {
        *restarts += ks_jint(cs, "restartCount", 0);
        if (ks_jbool(cs, "ready", 0))
            (*ready)++;
        const char *wr = ks_jstr(cs, "state.waiting.reason");
        const char *tr = ks_jstr(cs, "state.terminated.reason");
        if (wr && wr[0])
            reason = wr;
        else if (tr && tr[0])
            reason = tr;
        else if (ks_jget(cs, "state.terminated"))
            reason = ks_jint(cs, "state.terminated.exitCode", 0) ? "Error" : "Completed";
    }
    if (ks_jget(o, "metadata.deletionTimestamp"))
        reason = "Terminating";
    return reason;
}

static void pod_row(json_t *o, json_t *cells)
{
    int ready, total;
    long long restarts;
    char b[64];
    const char *reason = pod_reason(o, &ready, &total, &restarts);
    snprintf(b, sizeof(b), "%d/%d", ready, total);
    json_array_append_new(cells, json_string(b));
    json_array_append_new(cells, json_string(reason));
    json_array_append_new(cells, json_integer(restarts));
    json_array_append_new(cells, age_cell(created(o)));
    const char *ip = ks_jstr(o, "status.podIP");
    const char *node = ks_jstr(o, "spec.nodeName");
    json_array_append_new(cells, json_string(ip ? ip : "<none>"));
    json_array_append_new(cells, json_string(node ? node : "<none>"));
    json_array_append_new(cells, json_string("<none>"));
    json_array_append_new(cells, json_string("<none>"));
}

static void node_row(json_t *o, json_t *cells)
{
    char b[128];
    json_t *st = json_object_get(o, "status");
    ks_strlcpy(b, ks_cond_true(st, "Ready") ? "Ready" : "NotReady", sizeof(b));
    if (ks_jbool(o, "spec.unschedulable", 0))
        ks_strlcpy(b + strlen(b), ",SchedulingDisabled", sizeof(b) - strlen(b));
    json_array_append_new(cells, json_string(b));
    json_array_append_new(cells, json_string("<none>"));
    json_array_append_new(cells, age_cell(created(o)));
    const char *v = ks_jstr(o, "status.nodeInfo.kubeletVersion");
    json_array_append_new(cells, json_string(v ? v : "v1.32.5"));
}

static void event_row(json_t *o, json_t *cells)
{
    char b[600];
    const char *ts = ks_jstr(o, "lastTimestamp");
    if (!ts)
        ts = ks_jstr(o, "eventTime");
    json_array_append_new(cells, age_cell(ts ? ks_parse_time(ts) : created(o)));
    json_array_append_new(cells, json_string(ks_jstr(o, "type") ? ks_jstr(o, "type") : ""));
    json_array_append_new(cells, json_string(ks_jstr(o, "reason") ? ks_jstr(o, "reason") : ""));
    char kind[64];
    ks_lower(kind, ks_jstr(o, "involvedObject.kind"), sizeof(kind));
    snprintf(b, sizeof(b), "%s/%s", kind, ks_jstr(o, "involvedObject.name"));
    json_array_append_new(cells, json_string(b));
    json_array_append_new(cells,
                          json_string(ks_jstr(o, "message") ? ks_jstr(o, "message") : ""));
}

static json_t *crd_cell(json_t *o, json_t *col)
{
    json_t *v = ks_jsonpath(o, ks_jstr(col, "jsonPath"));
    if (!v)
        return json_null();
    if (ks_streq(ks_jstr(col, "type"), "date") && json_is_string(v))
        return age_cell(ks_parse_time(json_string_value(v)));
    return json_incref(v);
}

json_t *ks_table_row(int rt, json_t *obj)
{
    json_t *cells = json_array();
    if (rt != KS_RT_EVENTS)
        json_array_append_new(cells, json_string(ks_meta_name(obj)));
    const ks_col_t *bc = builtin_cols(rt);
    if (rt == KS_RT_JOBS) {
        job_row(obj, cells);
    } else if (rt == KS_RT_PODS) {
        pod_row(obj, cells);
    } else if (rt == KS_RT_NODES) {
        node_row(obj, cells);
    } else if (rt == KS_RT_NAMESPACES) {
        const char *ph = ks_jstr(obj, "status.phase");
        json_array_append_new(cells, json_string(ph ? ph : "Active"));
        json_array_append_new(cells, age_cell(created(obj)));
    } else if (rt == KS_RT_EVENTS) {
        event_row(obj, cells);
    } else if (ks_table_deploy_cols(rt)) {
        ks_table_deploy_row(rt, obj, cells);
    } else if (bc) {
        json_array_append_new(cells, age_cell(created(obj)));
    } else {
        json_t *cols = ks_openapi_crd_columns(rt);
        size_t i;
        json_t *c;
        json_array_foreach(cols, i, c) json_array_append_new(cells, crd_cell(obj, c));
        if (!json_array_size(cols))
            json_array_append_new(cells, age_cell(created(obj)));
    }
    json_t *meta = json_deep_copy(json_object_get(obj, "metadata"));
    json_object_del(meta, "managedFields");
    return json_pack("{s:o,s:{s:s,s:s,s:o}}", "cells", cells, "object", "kind",
                     "PartialObjectMetadata", "apiVersion", "meta.k8s.io/v1", "metadata", meta);
}

static json_t *col_defs(int rt)
{
    json_t *defs = json_array();
    const ks_col_t *bc = builtin_cols(rt);
    if (bc) {
        for (int i = 0; bc[i].name; i++)
            json_array_append_new(defs, json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", bc[i].name,
                                                  "type", bc[i].type, "format", bc[i].format,
                                                  "description", bc[i].name, "priority",
                                                  bc[i].priority));
        return defs;
    }
    json_array_append_new(defs, json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", "Name", "type",
                                          "string", "format", "name", "description",
                                          "Name must be unique within a namespace.", "priority",
                                          0));
    json_t *cols = ks_openapi_crd_columns(rt);
    size_t i;
    json_t *c;
    json_array_foreach(cols, i, c)
    {
        const char *type = ks_jstr(c, "type");
        json_array_append_new(defs, json_pack("{s:s,s:s,s:s,s:s,s:I}", "name", ks_jstr(c, "name"),
                                              "type", ks_streq(type, "date") ? "string" : type,
                                              "format", "", "description",
                                              ks_jstr(c, "description") ? ks_jstr(c, "description")
                                                                        : "",
                                              "priority", (json_int_t)ks_jint(c, "priority", 0)));
    }
    if (!json_array_size(cols))
        json_array_append_new(defs, json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", "Age", "type",
                                              "date", "format", "", "description", "Age",
                                              "priority", 0));
    return defs;
}

json_t *ks_table_build(int rt, json_t **items, size_t n, const char *rv, int with_cols)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(rows, ks_table_row(rt, items[i]));
    json_t *t = json_pack("{s:s,s:s,s:{s:s},s:o}", "kind", "Table", "apiVersion",
                          "meta.k8s.io/v1", "metadata", "resourceVersion", rv ? rv : "", "rows",
                          rows);
    if (with_cols)
        json_object_set_new(t, "columnDefinitions", col_defs(rt));
    return t;
}
