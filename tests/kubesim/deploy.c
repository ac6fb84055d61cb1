/* Deployment and ReplicaSet controllers (deploy.h). */
#include "deploy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "gc.h"
#include "index.h"
#include "patch.h"
#include "podtemplate.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"
#include "validate.h"
#include "work.h"

#define HASH_LABEL "pod-template-hash"
#define REVISION   "deployment.kubernetes.io/revision"

/* Owner uid -> references of the ReplicaSets (of a Deployment) or pods (of
 * a ReplicaSet) naming it as controller. */
static ks_index_t *g_owned;

void ks_deploy_shutdown(void)
{
    ks_index_free(g_owned);
    g_owned = NULL;
}

static const char *controller_uid(json_t *o, const char *kind)
{
    size_t i;
    json_t *r;
    json_array_foreach(ks_jget(o, "metadata.ownerReferences"), i, r)
    {
        if (ks_jbool(r, "controller", 0) && ks_streq(ks_jstr(r, "kind"), kind))
            return ks_jstr(r, "uid");
    }
    return NULL;
}

void ks_deploy_observe(int rt, json_t *old, json_t *obj)
{
    const char *owner_kind = rt == KS_RT_REPLICASETS ? "Deployment"
                             : rt == KS_RT_PODS      ? "ReplicaSet"
                                                     : NULL;
    if (rt == KS_RT_DEPLOYMENTS || rt == KS_RT_REPLICASETS) {
        if (obj)
            ks_work_add_obj(KS_WQ_DEPLOY, rt, obj);
    }
    if (!owner_kind)
        return;
    if (!g_owned)
        g_owned = ks_index_new();
    char ref[KS_REF_MAX];
    ks_ref_of(rt, obj ? obj : old, ref, sizeof(ref));
    const char *was = controller_uid(old, owner_kind), *is = controller_uid(obj, owner_kind);
    if (was && !ks_streq(was, is))
        ks_index_del(g_owned, was, ref);
    if (is)
        ks_index_add(g_owned, is, ref);
    int ort;
    json_t *owner = ks_store_get_uid(is ? is : was, &ort);
    if (owner)
        ks_work_add_obj(KS_WQ_DEPLOY, ort, owner);
}

/* Borrowed objects of type rt that o controls (an array, new reference). */
static json_t *owned(json_t *o, int rt)
{
    json_t *out = json_array();
    char **refs = NULL;
    size_t n = ks_index_members(g_owned, ks_meta_uid(o), &refs);
    for (size_t i = 0; i < n; i++) {
        int t;
        json_t *x = ks_store_get_ref(refs[i], &t);
        if (x && t == rt)
            json_array_append(out, x);
    }
    ks_index_release(refs, n);
    return out;
}

static int pod_active(json_t *p)
{
    const char *ph = ks_jstr(p, "status.phase");
    return !ks_streq(ph, "Succeeded") && !ks_streq(ph, "Failed") &&
           !ks_jget(p, "metadata.deletionTimestamp");
}

static int pod_ready(json_t *p)
{
    return ks_cond_true(json_object_get(p, "status"), "Ready");
}

static json_t *owner_ref(json_t *o, const char *kind)
{
    return json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion", "apps/v1", "kind", kind, "name",
                     ks_meta_name(o), "uid", ks_meta_uid(o), "controller", 1, "blockOwnerDeletion",
                     1);
}

/* ---- ReplicaSet ---- */

static void create_pod(json_t *rs)
{
    char name[300], sfx[8];
    ks_rand_suffix(sfx, sizeof(sfx));
    snprintf(name, sizeof(name), "%s-%s", ks_meta_name(rs), sfx);
    json_t *pod =
        ks_pod_from_template(rs, "apps/v1", "ReplicaSet", ks_jget(rs, "spec.template"), name);
    ks_defaults(KS_RT_PODS, pod, NULL);
    if (ks_store_create(KS_RT_PODS, pod, NULL) == KS_OK)
        ks_event_emit(KS_RT_REPLICASETS, rs, "Normal", "SuccessfulCreate", "Created pod: %s", name);
}

static void sync_rs(json_t *rs)
{
    long long want = ks_jint(rs, "spec.replicas", 1);
    json_t *pods = owned(rs, KS_RT_PODS);
    long long active = 0, ready = 0;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        if (!pod_active(p))
            continue;
        if (active >= want) {
            /* Too many: the newest go first. */
            ks_event_emit(KS_RT_REPLICASETS, rs, "Normal", "SuccessfulDelete", "Deleted pod: %s",
                          ks_meta_name(p));
            ks_delete(KS_RT_PODS, ks_meta_ns(p), ks_meta_name(p), "Background", -1, NULL);
            continue;
        }
        active++;
        ready += pod_ready(p);
    }
    for (long long k = active; k < want && !ks_jget(rs, "metadata.deletionTimestamp"); k++)
        create_pod(rs);
    json_decref(pods);
    json_t *c = ks_copy_for_status(rs);
    json_t *st = ks_jobj(c, "status");
    json_object_set_new(st, "replicas", json_integer(active));
    json_object_set_new(st, "fullyLabeledReplicas", json_integer(active));
    if (ready) {
        json_object_set_new(st, "readyReplicas", json_integer(ready));
        json_object_set_new(st, "availableReplicas", json_integer(ready));
    } else {
        json_object_del(st, "readyReplicas");
        json_object_del(st, "availableReplicas");
    }
    json_object_set_new(st, "observedGeneration",
                        json_integer(ks_jint(rs, "metadata.generation", 1)));
    ks_store_update(KS_RT_REPLICASETS, c, NULL);
}

/* ---- Deployment ---- */

/* The template's hash as the label value (FNV-1a over its JSON, in the
 * alphabet Kubernetes uses for generated names). */
static void template_hash(json_t *tmpl, char *out, size_t n)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    char *text = json_dumps(tmpl, JSON_COMPACT | JSON_SORT_KEYS);
    uint32_t h = 2166136261u;
    for (const char *c = text ? text : ""; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    free(text);
    size_t i = 0;
    do {
        out[i++] = alphabet[h % (sizeof(alphabet) - 1)];
        h /= (uint32_t)(sizeof(alphabet) - 1);
    } while (h && i + 1 < n);
    out[i] = '\0';
}

/* A template without what the controller or a null timestamp adds, for
 * comparing a ReplicaSet's template with its Deployment's (new reference). */
static json_t *bare_template(json_t *tmpl)
{
    json_t *t = json_deep_copy(tmpl);
    json_t *meta = json_object_get(t, "metadata");
    json_t *labels = json_object_get(meta, "labels");
    json_object_del(labels, HASH_LABEL);
    if (labels && !json_object_size(labels))
        json_object_del(meta, "labels");
    if (json_is_null(json_object_get(meta, "creationTimestamp")))
        json_object_del(meta, "creationTimestamp");
    if (meta && !json_object_size(meta))
        json_object_del(t, "metadata");
    return t;
}

/* The ReplicaSet runs the Deployment's template: compared, not hashed, as
 * the controller does, so a rollback finds the old ReplicaSet again. */
static int same_template(json_t *rs, json_t *d)
{
    json_t *a = bare_template(ks_jget(rs, "spec.template"));
    json_t *b = bare_template(ks_jget(d, "spec.template"));
    int eq = json_equal(a, b);
    json_decref(a);
    json_decref(b);
    return eq;
}

static long long revision(json_t *rs)
{
    const char *r = ks_annotation(rs, REVISION);
    return r ? strtoll(r, NULL, 10) : 0;
}

static void create_rs(json_t *d, const char *hash, long long rev, long long replicas)
{
    char name[300], revs[32];
    snprintf(name, sizeof(name), "%s-%s", ks_meta_name(d), hash);
    snprintf(revs, sizeof(revs), "%lld", rev);
    json_t *tmpl = json_deep_copy(ks_jget(d, "spec.template"));
    json_object_set_new(ks_jobj(tmpl, "metadata.labels"), HASH_LABEL, json_string(hash));
    json_t *sel = json_deep_copy(ks_jget(d, "spec.selector"));
    if (!sel)
        sel = json_object();
    json_object_set_new(ks_jobj(sel, "matchLabels"), HASH_LABEL, json_string(hash));
    json_t *labels = json_deep_copy(ks_jget(tmpl, "metadata.labels"));
    char num[32];
    snprintf(num, sizeof(num), "%lld", replicas);
    json_t *rs = json_pack(
        "{s:s,s:s,s:{s:s,s:s,s:o,s:{s:s,s:s,s:s},s:o},s:{s:I,s:o,s:o,s:I}}", "kind", "ReplicaSet",
        "apiVersion", "apps/v1", "metadata", "name", name, "namespace", ks_meta_ns(d), "labels",
        labels, "annotations", REVISION, revs, "deployment.kubernetes.io/desired-replicas", num,
        "deployment.kubernetes.io/max-replicas", num, "ownerReferences", owner_ref(d, "Deployment"),
        "spec", "replicas", (json_int_t)replicas, "selector", sel, "template", tmpl,
        "minReadySeconds", (json_int_t)ks_jint(d, "spec.minReadySeconds", 0));
    if (ks_store_create(KS_RT_REPLICASETS, rs, NULL) == KS_OK)
        ks_event_emit(KS_RT_DEPLOYMENTS, d, "Normal", "ScalingReplicaSet",
                      "Scaled up replica set %s from 0 to %lld", name, replicas);
}

static void scale_rs(json_t *d, json_t *rs, long long to)
{
    long long from = ks_jint(rs, "spec.replicas", 1);
    if (from == to)
        return;
    json_t *c = ks_copy_for_status(rs);
    json_t *spec = json_copy(json_object_get(c, "spec"));
    json_object_set_new(spec, "replicas", json_integer(to));
    json_object_set_new(c, "spec", spec);
    ks_store_update(KS_RT_REPLICASETS, c, NULL);
    ks_event_emit(KS_RT_DEPLOYMENTS, d, "Normal", "ScalingReplicaSet",
                  "Scaled %s replica set %s from %lld to %lld", to > from ? "up" : "down",
                  ks_meta_name(rs), from, to);
}

static int by_revision(const void *a, const void *b)
{
    long long x = revision(*(json_t *const *)a), y = revision(*(json_t *const *)b);
    return x < y ? -1 : x > y;
}

static void sync_deployment(json_t *d)
{
    if (ks_jget(d, "metadata.deletionTimestamp"))
        return;
    long long want = ks_jint(d, "spec.replicas", 1);
    char hash[16];
    template_hash(ks_jget(d, "spec.template"), hash, sizeof(hash));
    json_t *rss = owned(d, KS_RT_REPLICASETS);
    size_t n = json_array_size(rss), i;
    json_t **sorted = tg_xcalloc(n ? n : 1, sizeof(*sorted));
    json_t *cur = NULL;
    long long maxrev = 0;
    for (i = 0; i < n; i++) {
        sorted[i] = json_array_get(rss, i);
        if (!cur && same_template(sorted[i], d))
            cur = sorted[i];
        if (revision(sorted[i]) > maxrev)
            maxrev = revision(sorted[i]);
    }
    qsort(sorted, n, sizeof(*sorted), by_revision);
    int paused = ks_jbool(d, "spec.paused", 0);
    if (!cur && !paused) {
        create_rs(d, hash, maxrev + 1, want);
    } else if (cur && !paused) {
        scale_rs(d, cur, want);
        if (revision(cur) < maxrev) { /* rolled back to an older template */
            char revs[32];
            snprintf(revs, sizeof(revs), "%lld", maxrev + 1);
            json_t *c = ks_store_copy(KS_RT_REPLICASETS, ks_meta_ns(cur), ks_meta_name(cur));
            json_object_set_new(ks_jobj(c, "metadata.annotations"), REVISION, json_string(revs));
            ks_store_update(KS_RT_REPLICASETS, c, NULL);
        }
    }
    /* Old ReplicaSets: none left running, and the history bounded. */
    long long keep = ks_jint(d, "spec.revisionHistoryLimit", 10), old = 0;
    for (i = n; i-- > 0;) {
        if (sorted[i] == cur)
            continue;
        if (!paused)
            scale_rs(d, sorted[i], 0);
        if (++old > keep && ks_jint(sorted[i], "status.replicas", 0) == 0)
            ks_delete(KS_RT_REPLICASETS, ks_meta_ns(sorted[i]), ks_meta_name(sorted[i]),
                      "Background", -1, NULL);
    }
    /* Status from what the ReplicaSets report. */
    long long replicas = 0, ready = 0, updated = 0;
    for (i = 0; i < n; i++) {
        replicas += ks_jint(sorted[i], "status.replicas", 0);
        ready += ks_jint(sorted[i], "status.readyReplicas", 0);
    }
    const char *cur_name = cur ? ks_meta_name(cur) : "";
    if (cur)
        updated = ks_jint(cur, "status.replicas", 0);
    long long cur_rev = cur ? revision(cur) : maxrev + 1;
    free(sorted);
    json_t *c = ks_copy_for_status(d);
    char revs[32], msg[600];
    snprintf(revs, sizeof(revs), "%lld", cur_rev);
    json_object_set_new(ks_jobj(c, "metadata.annotations"), REVISION, json_string(revs));
    json_t *st = ks_jobj(c, "status");
    json_object_set_new(st, "observedGeneration",
                        json_integer(ks_jint(d, "metadata.generation", 1)));
    json_object_set_new(st, "replicas", json_integer(replicas));
    json_object_set_new(st, "updatedReplicas", json_integer(updated));
    const char *keys[] = {"readyReplicas", "availableReplicas"};
    for (int k = 0; k < 2; k++) {
        if (ready)
            json_object_set_new(st, keys[k], json_integer(ready));
        else
            json_object_del(st, keys[k]);
    }
    if (want > ready)
        json_object_set_new(st, "unavailableReplicas", json_integer(want - ready));
    else
        json_object_del(st, "unavailableReplicas");
    int available = ready >= want;
    ks_cond_set(st, "Available", available ? "True" : "False",
                available ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
                available ? "Deployment has minimum availability."
                          : "Deployment does not have minimum availability.",
                0);
    int done = cur && updated == want && ready >= want && replicas == want;
    if (paused)
        snprintf(msg, sizeof(msg), "Deployment is paused");
    else
        snprintf(msg, sizeof(msg), "ReplicaSet \"%s\" %s.", cur_name,
                 done ? "has successfully progressed" : "is progressing");
    ks_cond_set(st, "Progressing", paused ? "Unknown" : "True",
                paused ? "DeploymentPaused"
                : done ? "NewReplicaSetAvailable"
                       : "ReplicaSetUpdated",
                msg, 0);
    ks_store_update(KS_RT_DEPLOYMENTS, c, NULL);
    json_decref(rss);
}

void ks_deploy_pass(void)
{
    char **refs = NULL;
    size_t n = ks_work_take(KS_WQ_DEPLOY, KS_WORK_ROUND, &refs);
    for (size_t i = 0; i < n; i++) {
        int rt;
        json_t *o = json_incref(ks_store_get_ref(refs[i], &rt));
        if (!o)
            continue;
        if (rt == KS_RT_DEPLOYMENTS)
            sync_deployment(o);
        else if (rt == KS_RT_REPLICASETS)
            sync_rs(o);
        json_decref(o);
    }
    ks_work_release(refs, n);
}

/* ---- scale subresource ---- */

static json_t *scale_of(json_t *o)
{
    /* status.selector is the label selector as a string. */
    char sel[2048] = "";
    size_t len = 0;
    const char *k;
    json_t *v;
    json_object_foreach(ks_jget(o, "spec.selector.matchLabels"), k, v)
    {
        int w = snprintf(sel + len, sizeof(sel) - len, "%s%s=%s", len ? "," : "", k,
                         json_string_value(v) ? json_string_value(v) : "");
        if (w < 0 || (size_t)w >= sizeof(sel) - len)
            break;
        len += (size_t)w;
    }
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:O,s:s},s:{s:I},s:{s:I,s:s}}", "kind", "Scale",
                     "apiVersion", "autoscaling/v1", "metadata", "name", ks_meta_name(o),
                     "namespace", ks_meta_ns(o), "uid", ks_meta_uid(o), "creationTimestamp",
                     ks_jget(o, "metadata.creationTimestamp"), "resourceVersion",
                     ks_jstr(o, "metadata.resourceVersion"), "spec", "replicas",
                     (json_int_t)ks_jint(o, "spec.replicas", 1), "status", "replicas",
                     (json_int_t)ks_jint(o, "status.replicas", 0), "selector", sel);
}

void ks_deploy_scale(ks_req_t *r, ks_target_t *t)
{
    char err[512];
    const char *m = r->method;
    json_t *body = NULL;
    if (!strcmp(m, "PUT") || !strcmp(m, "PATCH")) {
        body = ks_api_parse_body(r, 0);
        if (!body)
            return;
    } else if (strcmp(m, "GET")) {
        ks_reply_status(r, 405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource", NULL);
        return;
    }
    ks_lock();
    json_t *o = ks_store_get(t->rt, t->ns, t->name);
    if (!o) {
        ks_unlock();
        json_decref(body);
        ks_reply_notfound(r, t->rt, t->name);
        return;
    }
    json_t *scale = scale_of(o);
    if (body) {
        const char *ct = ks_req_header(r, "Content-Type");
        if (!strcmp(m, "PUT")) {
            json_decref(scale);
            scale = json_incref(body);
        } else if (ct && strstr(ct, "json-patch")) {
            if (ks_json_patch(&scale, body, err, sizeof(err)) != 0) {
                ks_unlock();
                json_decref(body);
                json_decref(scale);
                ks_reply_status(r, 422, "Invalid", err, NULL);
                return;
            }
        } else {
            ks_merge_patch(scale, body);
        }
        json_t *rep = ks_jget(scale, "spec.replicas");
        const char *prv = ks_jstr(scale, "metadata.resourceVersion");
        if (!json_is_integer(rep) || json_integer_value(rep) < 0) {
            ks_unlock();
            json_decref(body);
            json_decref(scale);
            ks_reply_invalid(r, t->rt, t->name,
                             json_pack("[{s:s,s:s,s:s}]", "reason", "FieldValueInvalid", "message",
                                       "Invalid value: must be greater than or equal "
                                       "to 0",
                                       "field", "spec.replicas"));
            return;
        }
        if (!strcmp(m, "PUT") && prv && prv[0] &&
            !ks_streq(prv, ks_jstr(o, "metadata.resourceVersion"))) {
            ks_unlock();
            json_decref(body);
            json_decref(scale);
            ks_reply_status(r, 409, "Conflict",
                            "the object has been modified; please apply your changes to the "
                            "latest version and try again",
                            NULL);
            return;
        }
        json_t *c = ks_store_copy(t->rt, t->ns, t->name);
        ks_jset(c, "spec.replicas", json_incref(rep));
        json_t *stored = NULL;
        ks_store_update(t->rt, c, &stored);
        json_decref(scale);
        scale = scale_of(stored ? stored : o);
    }
    ks_unlock();
    json_decref(body);
    ks_reply_json(r, 200, scale);
}
