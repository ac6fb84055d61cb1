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
    json_t *c = json_deep_copy(pod);
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

void ks_sched_pass(void)
{
    json_t **nodes = NULL, **pods = NULL;
    size_t nn = ks_store_list(KS_RT_NODES, NULL, &nodes);
    size_t np = ks_store_list(KS_RT_PODS, NULL, &pods);
    for (size_t i = 0; i < np; i++)
        json_incref(pods[i]);
    ks_map_t *usage = ks_map_new(); /* node -> json object of used milli */
    for (size_t i = 0; i < nn; i++)
        ks_map_put(usage, ks_meta_name(nodes[i]), json_object());
    for (size_t i = 0; i < np; i++) {
        const char *node = ks_jstr(pods[i], "spec.nodeName");
        json_t *u = node ? ks_map_get(usage, node) : NULL;
        if (!u || !active_pod(pods[i]))
            continue;
        json_t *req = ks_pod_requests(ks_jget(pods[i], "spec"));
        const char *k;
        json_t *v;
        json_object_foreach(req, k, v) json_object_set_new(
            u, k, json_integer(json_integer_value(json_object_get(u, k)) + json_integer_value(v)));
        json_object_set_new(u, "pods",
                            json_integer(json_integer_value(json_object_get(u, "pods")) + 1000));
        json_decref(req);
        /* NoExecute taints evict running pods that do not tolerate them. */
        json_t *nobj = ks_store_get(KS_RT_NODES, NULL, node);
        size_t ti;
        json_t *taint;
        json_array_foreach(ks_jget(nobj, "spec.taints"), ti, taint)
        {
            if (ks_streq(ks_jstr(taint, "effect"), "NoExecute") &&
                !ks_tolerates(ks_jget(pods[i], "spec.tolerations"), taint) &&
                !ks_jget(pods[i], "metadata.deletionTimestamp")) {
                json_t *c = json_deep_copy(pods[i]);
                ks_cond_set(ks_jobj(c, "status"), "DisruptionTarget", "True",
                            "DeletionByTaintManager", "Taint manager: deleting due to NoExecute "
                            "taint", 0);
                ks_store_update(KS_RT_PODS, c, NULL);
                ks_event_emit(KS_RT_PODS, pods[i], "Normal", "TaintManagerEviction",
                              "Marking for deletion Pod %s/%s", ks_meta_ns(pods[i]),
                              ks_meta_name(pods[i]));
                ks_delete(KS_RT_PODS, ks_meta_ns(pods[i]), ks_meta_name(pods[i]), "Background",
                          -1, NULL);
                break;
            }
        }
    }
    for (size_t i = 0; i < np; i++) {
        json_t *pod = pods[i];
        if (ks_jstr(pod, "spec.nodeName") || !active_pod(pod) ||
            ks_jget(pod, "metadata.deletionTimestamp") ||
            json_array_size(ks_jget(pod, "spec.schedulingGates")))
            continue;
        const char *sn = ks_jstr(pod, "spec.schedulerName");
        if (sn && strcmp(sn, "default-scheduler"))
            continue;
        json_t *req = ks_pod_requests(ks_jget(pod, "spec"));
        why_t why;
        memset(&why, 0, sizeof(why));
        json_t *best = NULL;
        long long best_free = -1;
        for (size_t k = 0; k < nn; k++) {
            json_t *u = ks_map_get(usage, ks_meta_name(nodes[k]));
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
        if (!best) {
            unschedulable(pod, (int)nn, &why);
            json_decref(req);
            continue;
        }
        json_t *u = ks_map_get(usage, ks_meta_name(best));
        const char *k;
        json_t *v;
        json_object_foreach(req, k, v) json_object_set_new(
            u, k, json_integer(json_integer_value(json_object_get(u, k)) + json_integer_value(v)));
        json_object_set_new(u, "pods",
                            json_integer(json_integer_value(json_object_get(u, "pods")) + 1000));
        json_decref(req);
        json_t *c = json_deep_copy(pod);
        ks_jset(c, "spec.nodeName", json_string(ks_meta_name(best)));
        ks_cond_set(ks_jobj(c, "status"), "PodScheduled", "True", "", "", 0);
        ks_store_update(KS_RT_PODS, c, NULL);
        ks_event_emit(KS_RT_PODS, pod, "Normal", "Scheduled",
                      "Successfully assigned %s/%s to %s", ks_meta_ns(pod), ks_meta_name(pod),
                      ks_meta_name(best));
    }
    for (size_t i = 0; i < nn; i++)
        json_decref(ks_map_del(usage, ks_meta_name(nodes[i])));
    ks_map_free(usage);
    for (size_t i = 0; i < np; i++)
        json_decref(pods[i]);
    free(nodes);
    free(pods);
}
