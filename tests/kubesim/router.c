/* Request routing: turn the URL path into a target and pick the module. */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "authz.h"
#include "discovery.h"
#include "faults.h"
#include "logs.h"
#include "openapi.h"
#include "pods.h"
#include "rtypes.h"
#include "server.h"
#include "util.h"
#include "visibility.h"

#define KS_MAX_SEGS 12

static int split_path(char *p, char **segs)
{
    int n = 0;
    char *s = p;
    while (*s == '/')
        s++;
    while (*s && n < KS_MAX_SEGS) {
        segs[n++] = s;
        char *sl = strchr(s, '/');
        if (!sl)
            break;
        *sl = '\0';
        s = sl + 1;
        while (*s == '/')
            s++;
    }
    return n;
}

static void not_found_resource(ks_req_t *r)
{
    ks_reply_status(r, 404, "NotFound", "the server could not find the requested resource",
                    json_object());
}

/* /api/v1/... or /apis/g/v/...: `rest` holds the segments after the version. */
static void route_gv(ks_req_t *r, const char *group, const char *version, char **rest, int n)
{
    ks_target_t t;
    memset(&t, 0, sizeof(t));
    if (n == 0) {
        if (ks_disc_resources(r, group, version) != 0)
            not_found_resource(r);
        return;
    }
    if (ks_authz_serve(r, group, rest, n))
        return;
    if (!strcmp(group, "visibility.kueue.x-k8s.io")) {
        /* clusterqueues/NAME/pendingworkloads or
         * namespaces/NS/localqueues/NAME/pendingworkloads */
        int nsd = n == 5 && !strcmp(rest[0], "namespaces");
        if ((n == 3 || nsd) && ks_authz_check(r, group, rest[nsd ? 2 : 0], rest[nsd ? 4 : 2],
                                              nsd ? rest[1] : "", rest[nsd ? 3 : 1]))
            return;
        ks_visibility_serve(r, rest, n);
        return;
    }
    int i = 0;
    if (!strcmp(rest[0], "namespaces") && n >= 3 && strcmp(rest[2], "status") &&
        strcmp(rest[2], "finalize")) {
        ks_strlcpy(t.ns, rest[1], sizeof(t.ns));
        i = 2;
    }
    const ks_rtype_t *rt = ks_rtype_find(group, version, rest[i]);
    if (!rt || (t.ns[0] && !rt->namespaced) || n - i > 3) {
        not_found_resource(r);
        return;
    }
    t.rt = rt->idx;
    if (n - i >= 2)
        ks_strlcpy(t.name, rest[i + 1], sizeof(t.name));
    if (n - i == 3)
        ks_strlcpy(t.sub, rest[i + 2], sizeof(t.sub));
    if (rt->namespaced && !t.ns[0] && t.name[0]) {
        not_found_resource(r);
        return;
    }
    if (ks_authz_check(r, group, rt->resource, t.sub, t.ns, t.name))
        return;
    if (t.rt == KS_RT_PODS && !strcmp(t.sub, "log")) {
        ks_logs_serve(r, &t);
        return;
    }
    if (t.rt == KS_RT_PODS && !strcmp(t.sub, "eviction")) {
        ks_pods_eviction(r, &t);
        return;
    }
    ks_api_handle(r, &t);
}

void ks_route(ks_req_t *r)
{
    char path[sizeof(r->path)];
    char *segs[KS_MAX_SEGS];
    const char *p = r->path;
    if (!strcmp(p, "/version") || !strcmp(p, "/version/")) {
        ks_disc_version(r);
        return;
    }
    if (!strcmp(p, "/healthz") || !strcmp(p, "/readyz") || !strcmp(p, "/livez")) {
        ks_reply_raw(r, 200, "text/plain", "ok", 2);
        return;
    }
    if (!strncmp(p, "/openapi/", 9)) {
        ks_openapi_serve(r);
        return;
    }
    if (!strncmp(p, "/kubesim/", 9)) {
        ks_fault_serve(r);
        return;
    }
    ks_strlcpy(path, p, sizeof(path));
    int n = split_path(path, segs);
    if (n >= 1 && !strcmp(segs[0], "api")) {
        if (n == 1) {
            ks_disc_api(r);
            return;
        }
        if (strcmp(segs[1], "v1")) {
            not_found_resource(r);
            return;
        }
        route_gv(r, "", "v1", segs + 2, n - 2);
        return;
    }
    if (n >= 1 && !strcmp(segs[0], "apis")) {
        if (n == 1) {
            ks_disc_apis(r);
            return;
        }
        if (n == 2 || !ks_disc_gv_known(segs[1], segs[2])) {
            not_found_resource(r);
            return;
        }
        route_gv(r, segs[1], segs[2], segs + 3, n - 3);
        return;
    }
    ks_reply_raw(r, 404, "text/plain; charset=utf-8", "404 page not found\n", 19);
}
