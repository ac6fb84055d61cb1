/* Discovery documents. */
#include "discovery.h"

#include <stdio.h>
#include <string.h>

#include "authz.h"
#include "rtypes.h"
#include "util.h"

void ks_disc_version(ks_req_t *r)
{
    json_t *v = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "major", "1", "minor", "32",
                          "gitVersion", "v1.32.5-kubesim", "gitCommit", "kubesim", "gitTreeState",
                          "clean", "buildDate", "2025-01-01T00:00:00Z", "goVersion", "go1.23.8",
                          "compiler", "gc", "platform", "linux/amd64");
    ks_reply_json(r, 200, v);
}

void ks_disc_api(ks_req_t *r)
{
    char addr[96];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", ks_server_port());
    ks_reply_json(r, 200,
                  json_pack("{s:s,s:[s],s:[{s:s,s:s}]}", "kind", "APIVersions", "versions", "v1",
                            "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0",
                            "serverAddress", addr));
}

/* In the order a real apiserver lists them: built-in groups, then CRDs. */
static const char *groups[][2] = {
    {"apps", "v1"},
    {"authentication.k8s.io", "v1"},
    {"authorization.k8s.io", "v1"},
    {"batch", "v1"},
    {"policy", "v1"},
    {"rbac.authorization.k8s.io", "v1"},
    {"coordination.k8s.io", "v1"},
    {"ray.io", "v1"},
    {"kueue.x-k8s.io", "v1beta1"},
    {"visibility.kueue.x-k8s.io", "v1beta1"},
};

int ks_disc_gv_known(const char *group, const char *version)
{
    if (!group[0])
        return !strcmp(version, "v1");
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
        if (!strcmp(groups[i][0], group) && !strcmp(groups[i][1], version))
            return 1;
    return 0;
}

void ks_disc_apis(ks_req_t *r)
{
    json_t *gl = json_array();
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
        char gv[128];
        snprintf(gv, sizeof(gv), "%s/%s", groups[i][0], groups[i][1]);
        json_array_append_new(gl, json_pack("{s:s,s:[{s:s,s:s}],s:{s:s,s:s}}", "name", groups[i][0],
                                            "versions", "groupVersion", gv, "version", groups[i][1],
                                            "preferredVersion", "groupVersion", gv, "version",
                                            groups[i][1]));
    }
    ks_reply_json(
        r, 200,
        json_pack("{s:s,s:s,s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", gl));
}

static json_t *csv_array(const char *csv)
{
    json_t *a = json_array();
    char buf[256];
    ks_strlcpy(buf, csv, sizeof(buf));
    char *p = buf;
    while (p && *p) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        json_array_append_new(a, json_string(p));
        p = c ? c + 1 : NULL;
    }
    return a;
}

static void add_sub(json_t *res, const ks_rtype_t *rt, const char *sub, const char *kind,
                    json_t *verbs)
{
    char name[128];
    snprintf(name, sizeof(name), "%s/%s", rt->resource, sub);
    json_array_append_new(res,
                          json_pack("{s:s,s:s,s:b,s:s,s:o}", "name", name, "singularName", "",
                                    "namespaced", rt->namespaced, "kind", kind, "verbs", verbs));
}

int ks_disc_resources(ks_req_t *r, const char *group, const char *version)
{
    if (!ks_disc_gv_known(group, version))
        return -1;
    char gv[128];
    if (group[0])
        snprintf(gv, sizeof(gv), "%s/%s", group, version);
    else
        ks_strlcpy(gv, version, sizeof(gv));
    json_t *res = json_array();
    if (!strcmp(group, "visibility.kueue.x-k8s.io")) {
        json_array_append_new(res, json_pack("{s:s,s:s,s:b,s:s,s:[s]}", "name",
                                             "clusterqueues/pendingworkloads", "singularName", "",
                                             "namespaced", 0, "kind", "PendingWorkloadsSummary",
                                             "verbs", "get"));
        json_array_append_new(res, json_pack("{s:s,s:s,s:b,s:s,s:[s]}", "name",
                                             "localqueues/pendingworkloads", "singularName", "",
                                             "namespaced", 1, "kind", "PendingWorkloadsSummary",
                                             "verbs", "get"));
    }
    ks_authz_discovery(group, res);
    for (int i = 0; i < KS_RT_COUNT; i++) {
        const ks_rtype_t *rt = ks_rtype(i);
        if (strcmp(rt->group, group) || strcmp(rt->version, version))
            continue;
        json_t *e = json_pack("{s:s,s:s,s:b,s:s,s:[s,s,s,s,s,s,s,s]}", "name", rt->resource,
                              "singularName", rt->singular, "namespaced", rt->namespaced, "kind",
                              rt->kind, "verbs", "create", "delete", "deletecollection", "get",
                              "list", "patch", "update", "watch");
        if (rt->short_names[0])
            json_object_set_new(e, "shortNames", csv_array(rt->short_names));
        if (rt->categories[0])
            json_object_set_new(e, "categories", csv_array(rt->categories));
        json_object_set_new(e, "storageVersionHash", json_string("kubesim0000="));
        json_array_append_new(res, e);
        if (rt->has_status)
            add_sub(res, rt, "status", rt->kind, json_pack("[s,s,s]", "get", "patch", "update"));
        if (i == KS_RT_DEPLOYMENTS || i == KS_RT_REPLICASETS) {
            char name[128];
            snprintf(name, sizeof(name), "%s/scale", rt->resource);
            json_array_append_new(res, json_pack("{s:s,s:s,s:b,s:s,s:s,s:s,s:[s,s,s]}", "name",
                                                 name, "singularName", "", "namespaced", 1, "group",
                                                 "autoscaling", "version", "v1", "kind", "Scale",
                                                 "verbs", "get", "patch", "update"));
        }
        if (i == KS_RT_PODS) {
            add_sub(res, rt, "log", "Pod", json_pack("[s]", "get"));
            add_sub(res, rt, "eviction", "Eviction", json_pack("[s]", "create"));
            /* kubectl drain evicts only when the subresource names its group. */
            json_t *ev = json_array_get(res, json_array_size(res) - 1);
            json_object_set_new(ev, "group", json_string("policy"));
            json_object_set_new(ev, "version", json_string("v1"));
        }
    }
    ks_reply_json(r, 200,
                  json_pack("{s:s,s:s,s:s,s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                            "groupVersion", gv, "resources", res));
    return 0;
}
