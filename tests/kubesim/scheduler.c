/* kube-scheduler and the taint-based eviction part of the node lifecycle
 * controller. */
#include "scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "gc.h"
#include "map.h"
#include "quantity.h"
#include "rtypes.h"
#include "selectors.h"
#include "store.h"
#include "util.h"
#include "work.h"

/* Node name -> requests of the active pods bound to it (milli, and 1000
 * per pod under "pods"), kept from pod changes. */
static ks_map_t *g_usage;
/* References of pods that fit no node, retried when capacity frees. */
static ks_map_t *g_waiting;

int ks_tolerates(json_t *tolerations, json_t *taint)
{
    const char *tk = ks_jstr(taint, "key"), *tv = ks_jstr(taint, "value");
    const char *te = ks_jstr(taint, "effect");
    size_t i;
    json_t *t;
    json_array_foreach(tolerations, i, t)
    {
        const char *k = ks_jstr(t, "key"), *op = ks_jstr(t, "operator");
        const char *v = ks_jstr(t, "value"), *e = ks_jstr(t, "effect");
        if (e && e[0] && !ks_streq(e, te))
            continue;
        if (ks_streq(op, "Exists")) {
            if (!k || !k[0] || ks_streq(k, tk))
                return 1;
        } else if (ks_streq(k, tk) && ((!v && !tv) || ks_streq(v ? v : "", tv ? tv : ""))) {
            return 1;
        }
    }
    return 0;
}

/* Required node affinity (nodeSelectorTerms are ORed, expressions ANDed). */
static int affinity_ok(json_t *pod, json_t *labels)
{
    json_t *terms = ks_jget(pod, "spec.affinity.nodeAffinity."
                                 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");
    if (!json_array_size(terms))
        return 1;
    size_t i;
    json_t *term;
    json_array_foreach(terms, i, term)
    {
        json_t *sel = json_pack("{s:O}", "matchExpressions",
                                json_object_get(term, "matchExpressions")
                                    ? json_object_get(term, "matchExpressions")
                                    : json_array());
        int ok = ks_labelselector_obj_match(sel, labels);
        json_decref(sel);
        if (ok)
            return 1;
    }
    return 0;
}

typedef struct {
    int unsched, notready, taint, selector;
    char insufficient[8][64];
    int insuff_n[8];
    int ninsuff;
} why_t;

static void note_insufficient(why_t *w, const char *res)
{
    for (int i = 0; i < w->ninsuff; i++)
        if (!strcmp(w->insufficient[i], res)) {
            w->insuff_n[i]++;
            return;
        }
    if (w->ninsuff < 8) {
        ks_strlcpy(w->insufficient[w->ninsuff], res, sizeof(w->insufficient[0]));
        w->insuff_n[w->ninsuff++] = 1;
    }
}

/* Does the pod fit the node given used (resource -> milli)? */
static int fits(json_t *pod, json_t *req, json_t *node, json_t *used, why_t *w)
{
    if (ks_jbool(node, "spec.unschedulable", 0)) {
        w->unsched++;
        return 0;
    }
    if (!ks_cond_true(json_object_get(node, "status"), "Ready")) {
        w->notready++;
        return 0;
    }
    json_t *labels = ks_jget(node, "metadata.labels");
    const char *k;
    json_t *v;
    json_object_foreach(ks_jget(pod, "spec.nodeSelector"), k, v)
    {
        if (!ks_streq(json_string_value(json_object_get(labels, k)), json_string_value(v))) {
            w->selector++;
            return 0;
        }
    }
    if (!affinity_ok(pod, labels)) {
        w->selector++;
        return 0;
    }
    size_t i;
    json_t *taint;
    json_array_foreach(ks_jget(node, "spec.taints"), i, taint)
    {
        const char *e = ks_jstr(taint, "effect");
        if ((ks_streq(e, "NoSchedule") || ks_streq(e, "NoExecute")) &&
            !ks_tolerates(ks_jget(pod, "spec.tolerations"), taint)) {
            w->taint++;
            return 0;
        }
    }
    json_t *alloc = ks_jget(node, "status.allocatable");
    int ok = 1;
    json_object_foreach(req, k, v)
    {
        long long want = json_integer_value(v);
        if (want <= 0)
            continue;
        long long have = ks_qty_json(json_object_get(alloc, k));
        long long u = json_integer_value(json_object_get(used, k));
        if (u + want > have) {
            note_insufficient(w, k);
            ok = 0;
        }
    }
    long long pods = ks_qty_json(json_object_get(alloc, "pods"));
    if (pods && json_integer_value(json_object_get(used, "pods")) + 1000 > pods) {
        note_insufficient(w, "pods");
        ok = 0;
    }
    return ok;
}

static void unschedulable(json_t *pod, int nnodes, why_t *w)
{
    char msg[1024];
    int o = snprintf(msg, sizeof(msg), "0/%d nodes are available:", nnodes);
    const char *sep = " ";
    for (int i = 0; i < w->ninsuff && o < (int)sizeof(msg); i++) {
        o += snprintf(msg + o, sizeof(msg) - (size_t)o, "%s%d Insufficient %s", sep,
                      w->insuff_n[i], w->insufficient[i]);
        sep = ", ";
    }
    if (w->selector && o < (int)sizeof(msg))
        o += snprintf(msg + o, sizeof(msg) - (size_t)o,
                      "%s%d node(s) didn't match Pod's node affinity/selector", sep, w->selector);
    if (w->selector)
        sep = ", ";
    if (w->taint && o < (int)sizeof(msg))
        o += snprintf(msg + o, sizeof(msg) - (size_t)o,
                      "%s%d node(s) had untolerated taint(s)", sep, w->taint);
    if (w->taint)
        sep = ", ";
    if (w->unsched && o < (int)sizeof(msg))
        o += snprintf(msg + o, sizeof(msg) - (size_t)o, "%s%d node(s) were unschedulable", sep,
                      w->unsched);
    if (w->unsched)
        sep = ", ";
    if (w->notready && o < (int)sizeof(msg))
        o += snprintf(msg + o, sizeof(msg) - (size_t)o, "%s%d node(s) had untolerated taint "
                      "{node.kubernetes.io/not-ready: }", sep, w->notready);
    if (o < (int)sizeof(msg))
        snprintf(msg + o, sizeof(msg) - (size_t)o, ".");
    json_t *c = ks_copy_for_status(pod);
    if (ks_cond_set(ks_jobj(c, "status"), "PodScheduled", "False", "Unschedulable", msg, 0)) {
        ks_event_emit(KS_RT_PODS, pod, "Warning", "FailedScheduling", "%s", msg);
        ks_store_update(KS_RT_PODS, c, NULL);
    } else {
        json_decref(c);
    }
}

static int active_pod(json_t *p)
{
    const char *ph = ks_jstr(p, "status.phase");
    return !ks_streq(ph, "Succeeded") && !ks_streq(ph, "Failed");
}

/* The node whose capacity a pod takes, or NULL. */
static const char *bound_node(json_t *p)
{
    return p && active_pod(p) ? ks_jstr(p, "spec.nodeName") : NULL;
}

static void usage_add(const char *node, json_t *pod, int sign)
{
    json_t *u = ks_map_get(g_usage, node);
    if (!u) {
        u = json_object();
        ks_map_put(g_usage, node, u);
    }
    json_t *req = ks_pod_requests(ks_jget(pod, "spec"));
    json_object_set_new(req, "pods", json_integer(1000));
    const char *k;
    json_t *v;
    json_object_foreach(req, k, v) json_object_set_new(
        u, k, json_integer(json_integer_value(json_object_get(u, k)) + sign * json_integer_value(v)));
    json_decref(req);
}

static int queue_pod(json_t *p, void *arg)
{
    (void)arg;
    ks_work_add_obj(KS_WQ_SCHED, KS_RT_PODS, p);
    return 0;
}

static int requeue_waiting(const char *ref, void *val, void *arg)
{
    (void)val;
    (void)arg;
    ks_work_add(KS_WQ_SCHED, ref);
    return 0;
}

/* Capacity freed or nodes changed: pods that fit nowhere try again. */
static void retry_waiting(void)
{
    if (!ks_map_len(g_waiting))
        return;
    ks_map_each(g_waiting, requeue_waiting, NULL);
    ks_map_free(g_waiting);
    g_waiting = ks_map_new();
}

void ks_sched_observe(int rt, json_t *old, json_t *obj)
{
    if (!g_usage) {
        g_usage = ks_map_new();
        g_waiting = ks_map_new();
    }
    if (rt == KS_RT_NODES) {
        /* Readiness, taints, cordon, capacity: every pod may be affected. */
        ks_store_each(KS_RT_PODS, queue_pod, NULL);
        retry_waiting();
        return;
    }
    if (rt != KS_RT_PODS)
        return;
    const char *was = bound_node(old), *is = bound_node(obj);
    if (was != is || (was && (!ks_streq(was, is) || !json_equal(ks_jget(old, "spec"),
                                                                 ks_jget(obj, "spec"))))) {
        if (was)
            usage_add(was, old, -1);
        if (is)
            usage_add(is, obj, +1);
        if (was)
            retry_waiting();
    }
    if (obj && active_pod(obj) && !ks_jget(obj, "metadata.deletionTimestamp"))
        ks_work_add_obj(KS_WQ_SCHED, rt, obj);
}

static int free_usage(const char *key, void *val, void *arg)
{
    (void)key;
    (void)arg;
    json_decref(val);
    return 0;
}

void ks_sched_shutdown(void)
{
    if (!g_usage)
        return;
    ks_map_each(g_usage, free_usage, NULL);
    ks_map_free(g_usage);
    ks_map_free(g_waiting);
    g_usage = g_waiting = NULL;
}

/* NoExecute taints evict running pods that do not tolerate them. */
static void taint_evict(json_t *pod)
{
    json_t *nobj = ks_store_get(KS_RT_NODES, NULL, ks_jstr(pod, "spec.nodeName"));
    size_t ti;
    json_t *taint;
    json_array_foreach(ks_jget(nobj, "spec.taints"), ti, taint)
    {
        if (ks_streq(ks_jstr(taint, "effect"), "NoExecute") &&
            !ks_tolerates(ks_jget(pod, "spec.tolerations"), taint)) {
            json_t *c = ks_copy_for_status(pod);
            ks_cond_set(ks_jobj(c, "status"), "DisruptionTarget", "True",
                        "DeletionByTaintManager",
                        "Taint manager: deleting due to NoExecute taint", 0);
            ks_store_update(KS_RT_PODS, c, NULL);
            ks_event_emit(KS_RT_PODS, pod, "Normal", "TaintManagerEviction",
                          "Marking for deletion Pod %s/%s", ks_meta_ns(pod), ks_meta_name(pod));
            ks_delete(KS_RT_PODS, ks_meta_ns(pod), ks_meta_name(pod), "Background", -1, NULL);
            return;
        }
    }
}

static void schedule(json_t *pod, const char *ref, json_t **nodes, size_t nn)
{
    const char *sn = ks_jstr(pod, "spec.schedulerName");
    if (json_array_size(ks_jget(pod, "spec.schedulingGates")) ||
        (sn && strcmp(sn, "default-scheduler")))
        return;
    json_t *req = ks_pod_requests(ks_jget(pod, "spec"));
    why_t why;
    memset(&why, 0, sizeof(why));
    json_t *best = NULL;
    long long best_free = -1;
    for (size_t k = 0; k < nn; k++) {
        json_t *u = ks_map_get(g_usage, ks_meta_name(nodes[k]));
        if (!fits(pod, req, nodes[k], u, &why))
            continue;
        /* Least-allocated cpu spreads pods like the default scorer. */
        long long freec = ks_qty_json(ks_jget(nodes[k], "status.allocatable.cpu")) -
                          json_integer_value(json_object_get(u, "cpu"));
        if (freec > best_free) {
            best_free = freec;
            best = nodes[k];
        }
    }
    json_decref(req);
    if (!best) {
        ks_map_put(g_waiting, ref, (void *)1);
        unschedulable(pod, (int)nn, &why);
        return;
    }
    ks_map_del(g_waiting, ref);
    json_t *c = ks_copy_for_status(pod);
    ks_jset(c, "spec.nodeName", json_string(ks_meta_name(best)));
    ks_cond_set(ks_jobj(c, "status"), "PodScheduled", "True", "", "", 0);
    ks_store_update(KS_RT_PODS, c, NULL); /* the observer books the node's usage */
    ks_event_emit(KS_RT_PODS, pod, "Normal", "Scheduled", "Successfully assigned %s/%s to %s",
                  ks_meta_ns(pod), ks_meta_name(pod), ks_meta_name(best));
}

void ks_sched_pass(void)
{
    char **refs = NULL;
    size_t n = ks_work_take(KS_WQ_SCHED, KS_WORK_ROUND, &refs);
    if (!n)
        return;
    json_t **nodes = NULL;
    size_t nn = ks_store_list(KS_RT_NODES, NULL, &nodes);
    for (size_t i = 0; i < nn; i++)
        json_incref(nodes[i]);
    for (size_t i = 0; i < n; i++) {
        json_t *pod = json_incref(ks_store_get_ref(refs[i], NULL));
        if (pod && active_pod(pod) && !ks_jget(pod, "metadata.deletionTimestamp")) {
            if (ks_jstr(pod, "spec.nodeName"))
                taint_evict(pod);
            else
                schedule(pod, refs[i], nodes, nn);
        }
        json_decref(pod);
    }
    for (size_t i = 0; i < nn; i++)
        json_decref(nodes[i]);
    free(nodes);
    ks_work_release(refs, n);
}
