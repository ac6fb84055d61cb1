/* Kubernetes API paths and query strings. */
#include "kube/path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const tg_kube_gvr_t tg_kube_gvr_pods = {"", "v1", "pods", 1};
const tg_kube_gvr_t tg_kube_gvr_events = {"", "v1", "events", 1};
const tg_kube_gvr_t tg_kube_gvr_nodes = {"", "v1", "nodes", 0};
const tg_kube_gvr_t tg_kube_gvr_namespaces = {"", "v1", "namespaces", 0};
const tg_kube_gvr_t tg_kube_gvr_jobs = {"batch", "v1", "jobs", 1};
const tg_kube_gvr_t tg_kube_gvr_rayjobs = {"ray.io", "v1", "rayjobs", 1};
const tg_kube_gvr_t tg_kube_gvr_rayclusters = {"ray.io", "v1", "rayclusters", 1};
const tg_kube_gvr_t tg_kube_gvr_workloads = {"kueue.x-k8s.io", "v1beta1", "workloads", 1};
const tg_kube_gvr_t tg_kube_gvr_localqueues = {"kueue.x-k8s.io", "v1beta1", "localqueues", 1};
const tg_kube_gvr_t tg_kube_gvr_clusterqueues = {"kueue.x-k8s.io", "v1beta1", "clusterqueues", 0};
const tg_kube_gvr_t tg_kube_gvr_resourceflavors = {"kueue.x-k8s.io", "v1beta1", "resourceflavors",
                                                   0};
const tg_kube_gvr_t tg_kube_gvr_workloadpriorityclasses = {"kueue.x-k8s.io", "v1beta1",
                                                           "workloadpriorityclasses", 0};
const tg_kube_gvr_t tg_kube_gvr_visibility_clusterqueues = {"visibility.kueue.x-k8s.io", "v1beta1",
                                                            "clusterqueues", 0};
const tg_kube_gvr_t tg_kube_gvr_visibility_localqueues = {"visibility.kueue.x-k8s.io", "v1beta1",
                                                          "localqueues", 1};

static int path_unreserved(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

tg_rc_e tg_kube_url_escape(tg_buf_t *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (path_unreserved(*p)) {
            if (tg_buf_append(out, p, 1) != TG_OK)
                return TG_ETOOLARGE;
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            if (tg_buf_append(out, e, 3) != TG_OK)
                return TG_ETOOLARGE;
        }
    }
    return TG_OK;
}

/* A segment must name something: "" would address the parent, and "." or
 * ".." would be folded by a proxy into another path. */
static tg_rc_e path_segment(tg_buf_t *out, const char *seg)
{
    if (!seg || !*seg || strcmp(seg, ".") == 0 || strcmp(seg, "..") == 0)
        return TG_EINVAL;
    if (tg_buf_puts(out, "/") != TG_OK)
        return TG_ETOOLARGE;
    return tg_kube_url_escape(out, seg);
}

tg_rc_e tg_kube_path_append(tg_buf_t *out, const tg_kube_ref_t *ref)
{
    const tg_kube_gvr_t *g = ref ? ref->gvr : NULL;
    tg_rc_e rc;
    if (!g || !g->version || !g->resource)
        return TG_EINVAL;
    if (ref->ns && !g->namespaced)
        return TG_EINVAL;
    if (ref->sub && !ref->name)
        return TG_EINVAL;
    if (g->group && *g->group) {
        if (tg_buf_puts(out, "/apis") != TG_OK)
            return TG_ETOOLARGE;
        if ((rc = path_segment(out, g->group)) != TG_OK)
            return rc;
    } else if (tg_buf_puts(out, "/api") != TG_OK) {
        return TG_ETOOLARGE;
    }
    if ((rc = path_segment(out, g->version)) != TG_OK)
        return rc;
    if (ref->ns) {
        if ((rc = path_segment(out, "namespaces")) != TG_OK ||
            (rc = path_segment(out, ref->ns)) != TG_OK)
            return rc;
    }
    if ((rc = path_segment(out, g->resource)) != TG_OK)
        return rc;
    if (ref->name && (rc = path_segment(out, ref->name)) != TG_OK)
        return rc;
    if (ref->sub && (rc = path_segment(out, ref->sub)) != TG_OK)
        return rc;
    return TG_OK;
}

char *tg_kube_path(const tg_kube_ref_t *ref)
{
    tg_buf_t b;
    tg_buf_init(&b, 8192);
    if (tg_kube_path_append(&b, ref) != TG_OK) {
        tg_buf_clean(&b);
        return NULL;
    }
    return tg_buf_steal(&b, NULL);
}

tg_rc_e tg_kube_query_add(tg_buf_t *q, const char *key, const char *value)
{
    if (!value)
        return TG_OK;
    if (q->len && tg_buf_puts(q, "&") != TG_OK)
        return TG_ETOOLARGE;
    if (tg_kube_url_escape(q, key) != TG_OK || tg_buf_puts(q, "=") != TG_OK ||
        tg_kube_url_escape(q, value) != TG_OK)
        return TG_ETOOLARGE;
    return TG_OK;
}

tg_rc_e tg_kube_query_add_long(tg_buf_t *q, const char *key, long value)
{
    char num[32];
    snprintf(num, sizeof(num), "%ld", value);
    return tg_kube_query_add(q, key, num);
}
