/* Node GPU capacity and health from Node and Pod objects. */
#include "engine/node_health.h"

#include <stdio.h>
#include <string.h>

#include "core/quota_qty.h"

static const char *nh_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Copy the blank-trimmed item [b, e) into out; 0 when it is empty. */
static size_t nh_item(const char *b, const char *e, char *out, size_t outlen)
{
    while (b < e && (*b == ' ' || *b == '\t'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    size_t n = (size_t)(e - b);
    if (n >= outlen)
        return (size_t)-1;
    memcpy(out, b, n);
    out[n] = '\0';
    return n;
}

static int nh_rule_add(tg_node_rules_t *r, const char *item, char *err, size_t errlen)
{
    if (r->n >= TG_NODE_RULES_MAX) {
        snprintf(err, errlen, "more than %d health conditions", TG_NODE_RULES_MAX);
        return -1;
    }
    const char *eq = strchr(item, '=');
    size_t tlen = eq ? (size_t)(eq - item) : strlen(item);
    const char *bad = eq ? eq + 1 : "True";
    if (tlen == 0 || tlen >= sizeof(r->rule[0].type) ||
        (strcmp(bad, "True") && strcmp(bad, "False") && strcmp(bad, "Unknown"))) {
        snprintf(err, errlen, "health condition '%s' is not Type or Type=True|False|Unknown", item);
        return -1;
    }
    memcpy(r->rule[r->n].type, item, tlen);
    r->rule[r->n].type[tlen] = '\0';
    r->rule[r->n].prefix = 0;
    if (r->rule[r->n].type[tlen - 1] == '*') {
        r->rule[r->n].type[tlen - 1] = '\0';
        r->rule[r->n].prefix = 1;
    }
    for (const char *p = r->rule[r->n].type; *p; p++)
        if (*p == '*' || *p == ' ') {
            snprintf(err, errlen, "health condition '%s': '*' only at the end", item);
            return -1;
        }
    snprintf(r->rule[r->n].bad, sizeof(r->rule[0].bad), "%s", bad);
    r->n++;
    return 0;
}

int tg_node_rules_parse(tg_node_rules_t *r, const char *conditions, const char *class_labels,
                        char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    char item[300];
    for (const char *p = conditions ? conditions : ""; *p;) {
        const char *e = strchr(p, ',');
        if (!e)
            e = p + strlen(p);
        size_t n = nh_item(p, e, item, sizeof(item));
        if (n == (size_t)-1) {
            snprintf(err, errlen, "a health condition is longer than %zu bytes", sizeof(item));
            return -1;
        }
        if (n && nh_rule_add(r, item, err, errlen) != 0)
            return -1;
        p = *e ? e + 1 : e;
    }
    for (const char *p = class_labels ? class_labels : ""; *p;) {
        const char *e = strchr(p, ',');
        if (!e)
            e = p + strlen(p);
        size_t n = nh_item(p, e, item, sizeof(r->class_label[0]));
        if (n == (size_t)-1 || (n && r->nclass >= TG_NODE_CLASS_LABELS)) {
            snprintf(err, errlen, "GPU class labels: at most %d labels of 255 bytes",
                     TG_NODE_CLASS_LABELS);
            return -1;
        }
        if (n) /* n < sizeof(class_label[0]) (nh_item checked) */
            memcpy(r->class_label[r->nclass++], item, n + 1);
        p = *e ? e + 1 : e;
    }
    return 0;
}

int tg_node_rules_match(const tg_node_rules_t *r, const char *type, const char *status)
{
    if (!type || !status)
        return 0;
    for (int i = 0; i < r->n; i++) {
        const char *t = r->rule[i].type;
        int hit = r->rule[i].prefix ? strncmp(type, t, strlen(t)) == 0 : strcmp(type, t) == 0;
        if (hit && strcmp(status, r->rule[i].bad) == 0)
            return 1;
    }
    return 0;
}

int tg_node_gpu_resource(const char *resource)
{
    if (!resource)
        return 0;
    if (!strcmp(resource, "nvidia.com/gpu") || !strcmp(resource, "amd.com/gpu"))
        return 1;
    if (!strncmp(resource, "nvidia.com/mig-", 15) && resource[15])
        return 2;
    return 0;
}

/* A whole-number quantity ("8", "8000m"), or -1. */
static long long nh_count(const json_t *q)
{
    const char *s = json_string_value(q);
    if (json_is_integer(q))
        return json_integer_value(q) >= 0 ? json_integer_value(q) : -1;
    tg_quota_qty_t v;
    if (!s || tg_quota_qty_parse(s, &v) != TG_QUOTA_QTY_OK || v.milli < 0 || v.milli % 1000)
        return -1;
    return v.milli / 1000;
}

/* {capacity, allocatable} of the GPU resources in status.capacity/allocatable. */
static void nh_gpus(const json_t *status, json_t *gpus, json_t *mig)
{
    static const char *const which[] = {"capacity", "allocatable"};
    for (int w = 0; w < 2; w++) {
        const char *res;
        json_t *q;
        json_object_foreach(json_object_get(status, which[w]), res, q) {
            int kind = tg_node_gpu_resource(res);
            long long n = nh_count(q);
            if (!kind || n < 0)
                continue;
            json_t *into = gpus;
            if (kind == 2) {
                into = json_object_get(mig, res);
                if (!into) {
                    into = json_pack("{s:i, s:i}", "capacity", 0, "allocatable", 0);
                    json_object_set_new(mig, res, into);
                }
            }
            json_int_t had = json_integer_value(json_object_get(into, which[w]));
            json_object_set_new(into, which[w], json_integer(had + n));
        }
    }
}

static json_t *nh_condition(const json_t *c)
{
    return json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?}", "type", nh_str(c, "type"), "status",
                     nh_str(c, "status"), "reason", nh_str(c, "reason"), "message",
                     nh_str(c, "message"), "since", nh_str(c, "lastTransitionTime"));
}

/* RFC 3339 texts from Kubernetes compare in time order when both are UTC
 * ("...Z"), which the API server always writes. */
static const char *nh_min_time(const char *a, const char *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return strcmp(a, b) <= 0 ? a : b;
}

static const char *nh_max_time(const char *a, const char *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return strcmp(a, b) >= 0 ? a : b;
}

static const char *nh_class(const json_t *labels, const tg_node_rules_t *r, int has_gpus)
{
    for (int i = 0; i < r->nclass; i++) {
        const char *v = nh_str(labels, r->class_label[i]);
        if (v && *v)
            return v;
    }
    return has_gpus ? "unlabelled" : NULL;
}

json_t *tg_node_summarize(const json_t *node, const tg_node_rules_t *r)
{
    const json_t *meta = json_object_get(node, "metadata");
    const json_t *spec = json_object_get(node, "spec");
    const json_t *status = json_object_get(node, "status");
    const char *name = nh_str(meta, "name");
    if (!name)
        return NULL;
    const json_t *labels = json_object_get(meta, "labels");
    const json_t *ann = json_object_get(meta, "annotations");
    json_t *gpus = json_pack("{s:i, s:i}", "capacity", 0, "allocatable", 0);
    json_t *mig = json_object();
    nh_gpus(status, gpus, mig);
    int has_gpus = json_integer_value(json_object_get(gpus, "capacity")) > 0 ||
                   json_integer_value(json_object_get(gpus, "allocatable")) > 0 ||
                   json_object_size(mig) > 0;

    json_t *conditions = json_array();
    json_t *problems = json_array();
    const json_t *ready = NULL;
    json_t *unknown = json_array(); /* watched conditions without telemetry */
    const char *problem_since = NULL, *calm_since = NULL, *unknown_since = NULL;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c) {
        const char *type = nh_str(c, "type");
        const char *st = nh_str(c, "status");
        const char *since = nh_str(c, "lastTransitionTime");
        if (!type)
            continue;
        json_array_append_new(conditions, nh_condition(c));
        if (!strcmp(type, "Ready")) {
            ready = c;
            continue;
        }
        int watched = 0;
        for (int k = 0; k < r->n && !watched; k++) {
            const char *t = r->rule[k].type;
            watched = r->rule[k].prefix ? !strncmp(type, t, strlen(t)) : !strcmp(type, t);
        }
        if (tg_node_rules_match(r, type, st)) {
            json_array_append_new(problems, nh_condition(c));
            problem_since = nh_min_time(problem_since, since);
        } else if (watched && st && !strcmp(st, "Unknown")) {
            json_array_append_new(unknown, nh_condition(c));
            unknown_since = nh_min_time(unknown_since, since);
        } else if (watched) {
            calm_since = nh_max_time(calm_since, since);
        }
    }
    const char *ready_st = ready ? nh_str(ready, "status") : NULL;
    const char *ready_since = ready ? nh_str(ready, "lastTransitionTime") : NULL;
    const char *health = "Healthy";
    const char *since = nh_max_time(calm_since, ready_since);
    if (json_array_size(problems)) {
        health = "Unhealthy";
        since = problem_since;
    } else if (ready_st && !strcmp(ready_st, "False")) {
        health = "NotReady";
        since = ready_since;
        json_array_append_new(problems, nh_condition(ready));
    } else if (!ready_st || strcmp(ready_st, "True")) {
        health = "Unknown";
        since = ready_since;
        if (ready)
            json_array_append_new(problems, nh_condition(ready));
    } else if (json_array_size(unknown)) {
        /* missing telemetry is not health: neither cordon nor uncordon */
        health = "Unknown";
        since = unknown_since;
        json_array_extend(problems, unknown);
    }
    json_decref(unknown);
    json_t *taints = json_deep_copy(json_object_get(spec, "taints"));
    const char *cls = nh_class(labels, r, has_gpus);
    json_t *out = json_pack(
        "{s:s, s:s?, s:o, s:o, s:o, s:s, s:s?, s:o, s:o, s:o, s:b, s:s?, s:s?, s:s?, s:o}", "name",
        name, "gpu_class", cls, "labels",
        json_is_object(labels) ? json_deep_copy(labels) : json_object(), "gpus", gpus, "mig", mig,
        "health", health, "health_since", since, "problems", problems, "conditions", conditions,
        "ready",
        ready_st && !strcmp(ready_st, "True") ? json_true()
        : ready_st                            ? json_false()
                                              : json_null(),
        "unschedulable", json_is_true(json_object_get(spec, "unschedulable")), "cordoned_by",
        nh_str(ann, TG_NODE_ANN_CORDONED_BY), "cordon_reason", nh_str(ann, TG_NODE_ANN_REASON),
        "cordoned_at", nh_str(ann, TG_NODE_ANN_AT), "taints",
        json_is_array(taints) ? taints : json_array());
    if (!json_is_array(taints))
        json_decref(taints);
    const char *source = nh_str(ann, TG_NODE_ANN_SOURCE);
    if (out && nh_str(ann, TG_NODE_ANN_CORDONED_BY))
        json_object_set_new(
            out, "cordon_source",
            json_string(source && (!strcmp(source, "admin") || !strcmp(source, "drain"))
                            ? source
                            : "automation"));
    else if (out)
        json_object_set_new(out, "cordon_source", json_null());
    const char *uncordoned = nh_str(ann, TG_NODE_ANN_UNCORDONED_AT);
    if (out)
        json_object_set_new(out, "uncordoned_at",
                            uncordoned ? json_string(uncordoned) : json_null());
    return out; /* "s?" writes null for absent strings */
}

/* Add a container list's GPU values into `sum` (sum=1) or keep the max. */
static void nh_containers(const json_t *list, json_t *acc, int sum)
{
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c) {
        const json_t *res = json_object_get(c, "resources");
        const json_t *req = json_object_get(res, "requests");
        const json_t *lim = json_object_get(res, "limits");
        json_t *seen = json_object();
        for (int pass = 0; pass < 2; pass++) {
            const char *k;
            json_t *q;
            json_object_foreach((json_t *)(pass ? lim : req), k, q) {
                if (!tg_node_gpu_resource(k) || json_object_get(seen, k))
                    continue;
                long long n = nh_count(q);
                if (n < 0)
                    continue;
                json_object_set_new(seen, k, json_true());
                json_int_t had = json_integer_value(json_object_get(acc, k));
                json_int_t v = sum ? had + n : (n > had ? n : had);
                json_object_set_new(acc, k, json_integer(v));
            }
        }
        json_decref(seen);
    }
}

json_t *tg_node_pod_gpus(const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    json_t *main_sum = json_object();
    json_t *init_max = json_object();
    nh_containers(json_object_get(spec, "containers"), main_sum, 1);
    nh_containers(json_object_get(spec, "initContainers"), init_max, 0);
    const char *k;
    json_t *v;
    json_object_foreach(init_max, k, v) {
        if (json_integer_value(v) > json_integer_value(json_object_get(main_sum, k)))
            json_object_set(main_sum, k, v);
    }
    json_decref(init_max);
    void *tmp;
    json_object_foreach_safe(main_sum, tmp, k, v) {
        if (json_integer_value(v) <= 0)
            json_object_del(main_sum, k);
    }
    return main_sum;
}

json_t *tg_node_pod_mask(void)
{
    return json_pack("{s:{s:b, s:[{s:b}], s:[{s:b}]}, s:{s:b}}", "spec", "nodeName", 1,
                     "containers", "resources", 1, "initContainers", "resources", 1, "status",
                     "phase", 1);
}

int tg_node_pod_holds(const json_t *pod)
{
    const char *node = nh_str(json_object_get(pod, "spec"), "nodeName");
    const char *phase = nh_str(json_object_get(pod, "status"), "phase");
    if (!node || !*node)
        return 0;
    return !phase || (strcmp(phase, "Succeeded") && strcmp(phase, "Failed"));
}

void tg_node_problem_text(const json_t *summary, char *out, size_t outlen)
{
    if (!outlen)
        return;
    out[0] = '\0';
    size_t o = 0;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(summary, "problems"), i, p) {
        const char *reason = nh_str(p, "reason");
        const char *msg = nh_str(p, "message");
        int n = snprintf(out + o, outlen - o, "%s%s=%s", i ? "; " : "", nh_str(p, "type"),
                         nh_str(p, "status") ? nh_str(p, "status") : "?");
        if (n < 0 || (size_t)n >= outlen - o)
            break;
        o += (size_t)n;
        if ((reason && *reason) || (msg && *msg)) {
            n = snprintf(out + o, outlen - o, " (%s%s%s)", reason ? reason : "",
                         reason && *reason && msg && *msg ? ": " : "", msg ? msg : "");
            if (n < 0 || (size_t)n >= outlen - o)
                break;
            o += (size_t)n;
        }
    }
}
