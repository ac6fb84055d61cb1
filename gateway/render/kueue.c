/* Desired Kueue objects from rows; normalised comparison with live ones. */
#include "render/kueue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/digest.h"
#include "core/json_canon.h"
#include "core/quota_qty.h"

#define KUEUE_API "kueue.x-k8s.io/v1beta1"

const char *tg_reconcile_kind_name(tg_reconcile_kind_e k)
{
    static const char *const names[TG_RK_COUNT] = {
        "Namespace", "ResourceFlavor", "WorkloadPriorityClass", "ClusterQueue", "LocalQueue"};
    return k >= 0 && k < TG_RK_COUNT ? names[k] : "Unknown";
}

static const char *rr_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static int rr_nonempty(const json_t *v)
{
    if (json_is_object(v))
        return json_object_size(v) > 0;
    if (json_is_array(v))
        return json_array_size(v) > 0;
    if (json_is_string(v))
        return json_string_length(v) > 0;
    return v && !json_is_null(v);
}

/* {apiVersion, kind, metadata {name, namespace?, labels}}. */
static json_t *rr_object(const char *api, tg_reconcile_kind_e k, const char *name, const char *ns,
                         const char *workspace)
{
    json_t *labels = json_pack("{s:s}", TG_RECONCILE_LABEL_MANAGED_BY, TG_RECONCILE_MANAGER);
    if (workspace)
        json_object_set_new(labels, TG_RECONCILE_LABEL_WORKSPACE, json_string(workspace));
    json_t *md = json_pack("{s:s, s:o}", "name", name, "labels", labels);
    if (ns)
        json_object_set_new(md, "namespace", json_string(ns));
    return json_pack("{s:s, s:s, s:o}", "apiVersion", api, "kind", tg_reconcile_kind_name(k),
                     "metadata", md);
}

/* Stamp the spec hash annotation on a rendered object; returns it. */
static json_t *rr_stamp(tg_reconcile_kind_e k, json_t *obj)
{
    char hash[TG_RECONCILE_HASH_LEN];
    tg_reconcile_hash(k, obj, hash);
    json_object_set_new(json_object_get(obj, "metadata"), "annotations",
                        json_pack("{s:s}", TG_RECONCILE_ANN_SPEC_HASH, hash));
    return obj;
}

/* Copy row[from] to spec[to] when it holds something. */
static void rr_copy_if(json_t *spec, const char *to, const json_t *row, const char *from)
{
    const json_t *v = json_object_get(row, from);
    if (rr_nonempty(v))
        json_object_set_new(spec, to, json_deep_copy(v));
}

json_t *tg_render_kueue_flavor(const json_t *row)
{
    const char *name = rr_str(row, "name");
    if (!name)
        return NULL;
    json_t *obj = rr_object(KUEUE_API, TG_RK_FLAVOR, name, NULL, NULL);
    json_t *spec = json_object();
    rr_copy_if(spec, "nodeLabels", row, "node_labels");
    rr_copy_if(spec, "nodeTaints", row, "node_taints");
    rr_copy_if(spec, "tolerations", row, "tolerations");
    json_object_set_new(obj, "spec", spec);
    return rr_stamp(TG_RK_FLAVOR, obj);
}

static json_t *rr_cq_resource(const json_t *r)
{
    json_t *out = json_object();
    rr_copy_if(out, "name", r, "name");
    rr_copy_if(out, "nominalQuota", r, "nominal_quota");
    rr_copy_if(out, "borrowingLimit", r, "borrowing_limit");
    rr_copy_if(out, "lendingLimit", r, "lending_limit");
    return out;
}

static json_t *rr_cq_groups(const json_t *groups)
{
    json_t *out = json_array();
    size_t gi, fi, ri;
    json_t *g, *f, *r;
    json_array_foreach(groups, gi, g) {
        json_t *flavors = json_array();
        json_array_foreach(json_object_get(g, "flavors"), fi, f) {
            json_t *res = json_array();
            json_array_foreach(json_object_get(f, "resources"), ri, r)
                json_array_append_new(res, rr_cq_resource(r));
            json_t *fo = json_object();
            rr_copy_if(fo, "name", f, "name");
            json_object_set_new(fo, "resources", res);
            json_array_append_new(flavors, fo);
        }
        const json_t *covered = json_object_get(g, "covered_resources");
        json_array_append_new(out, json_pack("{s:o, s:o}", "coveredResources",
                                             covered ? json_deep_copy(covered) : json_array(),
                                             "flavors", flavors));
    }
    return out;
}

json_t *tg_render_kueue_cluster_queue(const json_t *row)
{
    const char *name = rr_str(row, "name");
    if (!name)
        return NULL;
    json_t *obj = rr_object(KUEUE_API, TG_RK_CLUSTER_QUEUE, name, NULL, NULL);
    json_t *spec = json_object();
    json_object_set_new(spec, "namespaceSelector", json_object());
    rr_copy_if(spec, "cohort", row, "cohort");
    const char *qs = rr_str(row, "queueing_strategy");
    json_object_set_new(spec, "queueingStrategy", json_string(qs ? qs : "BestEffortFIFO"));
    const json_t *p = json_object_get(row, "preemption");
    json_t *pre = json_object();
    rr_copy_if(pre, "withinClusterQueue", p, "within_cluster_queue");
    rr_copy_if(pre, "reclaimWithinCohort", p, "reclaim_within_cohort");
    if (json_object_size(pre))
        json_object_set_new(spec, "preemption", pre);
    else
        json_decref(pre);
    json_object_set_new(spec, "resourceGroups",
                        rr_cq_groups(json_object_get(row, "resource_groups")));
    json_object_set_new(obj, "spec", spec);
    return rr_stamp(TG_RK_CLUSTER_QUEUE, obj);
}

json_t *tg_render_kueue_local_queue(const json_t *row)
{
    const char *name = rr_str(row, "name"), *ns = rr_str(row, "namespace");
    const char *cq = rr_str(row, "cluster_queue");
    if (!name || !ns || !cq)
        return NULL;
    json_t *obj = rr_object(KUEUE_API, TG_RK_LOCAL_QUEUE, name, ns, rr_str(row, "workspace"));
    json_object_set_new(obj, "spec", json_pack("{s:s}", "clusterQueue", cq));
    return rr_stamp(TG_RK_LOCAL_QUEUE, obj);
}

json_t *tg_render_kueue_priority_class(const json_t *row)
{
    const char *name = rr_str(row, "name");
    if (!name)
        return NULL;
    json_t *obj = rr_object(KUEUE_API, TG_RK_PRIORITY_CLASS, name, NULL, NULL);
    json_object_set_new(obj, "value",
                        json_integer(json_integer_value(json_object_get(row, "value"))));
    const char *d = rr_str(row, "description");
    if (d && *d)
        json_object_set_new(obj, "description", json_string(d));
    return rr_stamp(TG_RK_PRIORITY_CLASS, obj);
}

json_t *tg_render_kueue_namespace(const char *ns, const char *workspace)
{
    if (!ns)
        return NULL;
    return rr_object("v1", TG_RK_NAMESPACE, ns, NULL, workspace);
}

/* ---- normalisation ------------------------------------------------------- */

/* Remove null members, recursively. */
static void rr_strip_nulls(json_t *v)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        void *tmp;
        json_object_foreach_safe(v, tmp, k, x) {
            if (json_is_null(x))
                json_object_del(v, k);
            else
                rr_strip_nulls(x);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
            rr_strip_nulls(x);
    }
}

static void rr_drop_if_eq(json_t *o, const char *k, const char *dflt)
{
    const char *s = rr_str(o, k);
    if (s && strcmp(s, dflt) == 0)
        json_object_del(o, k);
}

static void rr_drop_if_empty(json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    if (v && !rr_nonempty(v))
        json_object_del(o, k);
}

/* Canonical text for a quantity member (string or number) in place. */
static void rr_qty_member(json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    char in[64], out[TG_QUOTA_QTY_MAX_TEXT];
    if (json_is_string(v))
        snprintf(in, sizeof(in), "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(in, sizeof(in), "%lld", (long long)json_integer_value(v));
    else
        return;
    if (tg_quota_qty_canonical(in, out, sizeof(out)) == TG_QUOTA_QTY_OK)
        json_object_set_new(o, k, json_string(out));
}

/* fairSharing.weight defaults to 1. */
static void rr_norm_fair_sharing(json_t *spec)
{
    json_t *fs = json_object_get(spec, "fairSharing");
    if (!json_is_object(fs))
        return;
    rr_qty_member(fs, "weight");
    rr_drop_if_eq(fs, "weight", "1");
    rr_drop_if_empty(spec, "fairSharing");
}

static void rr_norm_cq(json_t *spec)
{
    rr_drop_if_eq(spec, "queueingStrategy", "BestEffortFIFO");
    rr_drop_if_eq(spec, "stopPolicy", "None");
    rr_drop_if_empty(spec, "cohort");
    rr_drop_if_empty(spec, "admissionChecks");
    json_t *ff = json_object_get(spec, "flavorFungibility");
    if (json_is_object(ff)) {
        rr_drop_if_eq(ff, "whenCanBorrow", "Borrow");
        rr_drop_if_eq(ff, "whenCanPreempt", "TryNextFlavor");
    }
    rr_drop_if_empty(spec, "flavorFungibility");
    json_t *pre = json_object_get(spec, "preemption");
    if (json_is_object(pre)) {
        rr_drop_if_eq(pre, "withinClusterQueue", "Never");
        rr_drop_if_eq(pre, "reclaimWithinCohort", "Never");
        json_t *bwc = json_object_get(pre, "borrowWithinCohort");
        if (json_is_object(bwc))
            rr_drop_if_eq(bwc, "policy", "Never");
        rr_drop_if_empty(pre, "borrowWithinCohort");
    }
    rr_drop_if_empty(spec, "preemption");
    rr_norm_fair_sharing(spec);
    size_t gi, fi, ri;
    json_t *g, *f, *r;
    json_array_foreach(json_object_get(spec, "resourceGroups"), gi, g) {
        json_array_foreach(json_object_get(g, "flavors"), fi, f) {
            json_array_foreach(json_object_get(f, "resources"), ri, r) {
                rr_qty_member(r, "nominalQuota");
                rr_qty_member(r, "borrowingLimit");
                rr_qty_member(r, "lendingLimit");
            }
        }
    }
}

json_t *tg_reconcile_managed_part(tg_reconcile_kind_e k, const json_t *obj)
{
    if (k == TG_RK_NAMESPACE)
        return json_object(); /* created when missing, never changed */
    if (k == TG_RK_PRIORITY_CLASS) {
        json_t *part = json_object();
        const json_t *v = json_object_get(obj, "value");
        json_object_set_new(part, "value", json_integer(json_integer_value(v)));
        const char *d = rr_str(obj, "description");
        if (d && *d)
            json_object_set_new(part, "description", json_string(d));
        return part;
    }
    const json_t *s = json_object_get(obj, "spec");
    json_t *spec = json_is_object(s) ? json_deep_copy(s) : json_object();
    rr_strip_nulls(spec);
    switch (k) {
    case TG_RK_FLAVOR:
        rr_drop_if_empty(spec, "nodeLabels");
        rr_drop_if_empty(spec, "nodeTaints");
        rr_drop_if_empty(spec, "tolerations");
        break;
    case TG_RK_CLUSTER_QUEUE:
        rr_norm_cq(spec);
        break;
    case TG_RK_LOCAL_QUEUE:
        rr_drop_if_eq(spec, "stopPolicy", "None");
        rr_norm_fair_sharing(spec);
        break;
    default:
        break;
    }
    return spec;
}

void tg_reconcile_hash(tg_reconcile_kind_e k, const json_t *obj, char out[TG_RECONCILE_HASH_LEN])
{
    json_t *part = tg_reconcile_managed_part(k, obj);
    char *text = tg_json_canon_text(part);
    char hex[65];
    tg_sha256_hex(text, strlen(text), hex);
    snprintf(out, TG_RECONCILE_HASH_LEN, "sha256:%s", hex);
    free(text);
    json_decref(part);
}

int tg_reconcile_is_managed(const json_t *obj)
{
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    const char *v = rr_str(labels, TG_RECONCILE_LABEL_MANAGED_BY);
    return v && strcmp(v, TG_RECONCILE_MANAGER) == 0;
}

const char *tg_reconcile_annotated_hash(const json_t *obj)
{
    const json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    return rr_str(ann, TG_RECONCILE_ANN_SPEC_HASH);
}

/* ---- differences --------------------------------------------------------- */

typedef struct {
    tg_buf_t *out;
    int count, max;
    int shown; /* entries written into the summary */
    int cut;   /* one did not fit: write no more */
} rr_diff_t;

/* Compact JSON of v, cut to 60 characters, into buf. */
static void rr_show(const json_t *v, char *buf, size_t n)
{
    if (!v) {
        snprintf(buf, n, "(absent)");
        return;
    }
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
    if (t && strlen(t) > 60)
        snprintf(buf, n, "%.57s...", t);
    else
        snprintf(buf, n, "%s", t ? t : "?");
    free(t);
}

static void rr_diff_note(rr_diff_t *d, const char *path, const json_t *live, const json_t *want)
{
    if (d->count++ >= d->max)
        return;
    char a[72], b[72];
    rr_show(live, a, sizeof(a));
    rr_show(want, b, sizeof(b));
    /* the buffer's ceiling cuts a long summary: later entries are dropped */
    if (d->cut || tg_buf_printf(d->out, "%s%s: live %s, desired %s", d->out->len ? "; " : "",
                                *path ? path : "(spec)", a, b) != TG_OK)
        d->cut = 1;
    else
        d->shown++;
}

static void rr_diff_walk(rr_diff_t *d, const char *path, const json_t *live, const json_t *want)
{
    char sub[512];
    if (json_is_object(live) && json_is_object(want)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)want, k, v) {
            snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k);
            rr_diff_walk(d, sub, json_object_get(live, k), v);
        }
        json_object_foreach((json_t *)live, k, v) {
            if (!json_object_get(want, k)) {
                snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k);
                rr_diff_note(d, sub, v, NULL);
            }
        }
        return;
    }
    if (json_is_array(live) && json_is_array(want)) {
        size_t nl = json_array_size(live), nw = json_array_size(want);
        for (size_t i = 0; i < (nl > nw ? nl : nw); i++) {
            snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
            rr_diff_walk(d, sub, json_array_get(live, i), json_array_get(want, i));
        }
        return;
    }
    if (!json_equal((json_t *)live, (json_t *)want) && (live || want))
        rr_diff_note(d, path, live, want);
}

int tg_reconcile_diff(const json_t *live, const json_t *desired, int max_entries, char *out,
                      size_t n)
{
    tg_buf_t b;
    tg_buf_init(&b, n > 64 ? n - 32 : n);
    rr_diff_t d = {.out = &b, .count = 0, .max = max_entries, .shown = 0, .cut = 0};
    rr_diff_walk(&d, "", live, desired);
    if (d.count > d.shown)
        snprintf(out, n, "%s; ... (%d more)", b.data ? b.data : "", d.count - d.shown);
    else
        snprintf(out, n, "%s", b.data ? b.data : "");
    tg_buf_clean(&b);
    return d.count;
}
