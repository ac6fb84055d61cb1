/* visibility.kueue.x-k8s.io/v1beta1 pending workloads. */
#include "visibility.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kueue.h"
#include "map.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"

void ks_visibility_serve(ks_req_t *r, char **rest, int n)
{
    const char *cq = NULL, *ns = NULL, *lq = NULL;
    if (n == 3 && !strcmp(rest[0], "clusterqueues") && !strcmp(rest[2], "pendingworkloads"))
        cq = rest[1];
    else if (n == 5 && !strcmp(rest[0], "namespaces") && !strcmp(rest[2], "localqueues") &&
             !strcmp(rest[4], "pendingworkloads")) {
        ns = rest[1];
        lq = rest[3];
    } else {
        ks_reply_status(r, 404, "NotFound", "the server could not find the requested resource",
                        json_object());
        return;
    }
    const char *q;
    long limit = (q = ks_req_query(r, "limit")) ? strtol(q, NULL, 10) : 1000;
    long offset = (q = ks_req_query(r, "offset")) ? strtol(q, NULL, 10) : 0;
    ks_lock();
    if (lq) {
        json_t *lqo = ks_store_get(KS_RT_LOCALQUEUES, ns, lq);
        if (!lqo) {
            ks_unlock();
            ks_reply_notfound(r, KS_RT_LOCALQUEUES, lq);
            return;
        }
        cq = ks_jstr(lqo, "spec.clusterQueue");
    } else if (!ks_store_get(KS_RT_CLUSTERQUEUES, NULL, cq)) {
        ks_unlock();
        ks_reply_notfound(r, KS_RT_CLUSTERQUEUES, cq);
        return;
    }
    json_t *pending = ks_kueue_pending(cq ? cq : "");
    ks_unlock();
    json_t *items = json_array();
    /* Entries seen so far per LocalQueue ("ns\x1fname" -> count + 1 as a
     * pointer), so each position is known in one pass over the queue. */
    ks_map_t *lq_seen = ks_map_new();
    long pos_cq = 0, emitted = 0, seen = 0;
    size_t i;
    json_t *wl;
    json_array_foreach(pending, i, wl)
    {
        const char *wq = ks_jstr(wl, "spec.queueName");
        char key[KS_REF_MAX];
        ks_fmt(key, sizeof(key), "%s\x1f%s", ks_meta_ns(wl), wq ? wq : "");
        long my_lq_pos = (long)(intptr_t)ks_map_get(lq_seen, key);
        ks_map_put(lq_seen, key, (void *)(intptr_t)(my_lq_pos + 1));
        int in_lq = lq && ks_streq(wq, lq) && ks_streq(ks_meta_ns(wl), ns);
        if ((lq && !in_lq) || seen++ < offset) {
            pos_cq++;
            continue;
        }
        if (emitted >= limit)
            break;
        json_t *meta = json_pack("{s:s,s:s,s:O}", "name", ks_meta_name(wl), "namespace",
                                 ks_meta_ns(wl), "creationTimestamp",
                                 ks_jget(wl, "metadata.creationTimestamp"));
        if (ks_jget(wl, "metadata.ownerReferences"))
            json_object_set(meta, "ownerReferences", ks_jget(wl, "metadata.ownerReferences"));
        json_array_append_new(items, json_pack("{s:o,s:I,s:s,s:I,s:I}", "metadata", meta,
                                               "priority",
                                               (json_int_t)ks_jint(wl, "spec.priority", 0),
                                               "localQueueName", wq ? wq : "",
                                               "positionInClusterQueue", (json_int_t)pos_cq,
                                               "positionInLocalQueue", (json_int_t)my_lq_pos));
        pos_cq++;
        emitted++;
    }
    ks_map_free(lq_seen);
    json_decref(pending);
    ks_reply_json(r, 200, json_pack("{s:s,s:s,s:{},s:o}", "kind", "PendingWorkloadsSummary",
                                    "apiVersion", "visibility.kueue.x-k8s.io/v1beta1", "metadata",
                                    "items", items));
}
