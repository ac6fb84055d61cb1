/* Compute profiles, ResourceFlavors, ClusterQueues and priority classes:
 * field tables and the structural rules a table cannot say. */
#include "api/catalog.h"

#include <stdio.h>
#include <string.h>

#include "api/quota.h"
#include "http/problem.h"
#include "store/catalog.h"

static const char *const name_immutable[] = {"name", NULL};

static void catalog_err(json_t *errors, const char *path, const char *msg)
{
    json_array_append_new(errors, tg_problem_error(path, 0, 0, msg));
}

/* ---- compute profiles ---------------------------------------------------- */

static const char *const profile_engines[] = {"job", "rayjob", NULL};
static const tg_field_t profile_fields[] = {
    {"name", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"engine", TG_F_STRING, 1, 0, 0, 0, TG_FP_NONE, profile_engines},
    {"description", TG_F_STRING, 0, 0, 0, 1024, TG_FP_NONE, NULL},
    {"settings", TG_F_OBJECT, 0, 0, 0, 0, TG_FP_NONE, NULL},
    {"allowed_workspaces", TG_F_STRING_ARRAY, 0, 0, 0, 0, TG_FP_DNS_LABEL, NULL},
};

/* The pod settings TauGrid's profiles carry (gateway/tauyaml/resolve.c reads
 * them; gateway/render puts them on every pod). */
static const char *const gpu_placements[] = {"single-device", "same-node", "distributed-workers",
                                             NULL};
static const char *const security_modes[] = {"restricted", NULL};

static int profile_choice(const json_t *v, const char *const *choices)
{
    for (const char *const *c = choices; json_is_string(v) && *c; c++)
        if (strcmp(json_string_value(v), *c) == 0)
            return 1;
    return 0;
}

/* A KubeRay rayVersion: dotted digits, e.g. 2.54.0. */
static int profile_version_ok(const json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 31 || s[0] == '.' || s[n - 1] == '.')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] >= '0' && s[i] <= '9') && !(s[i] == '.' && s[i + 1] != '.'))
            return 0;
    return 1;
}

static int profile_check(tg_req_t *req, const json_t *body, int partial, json_t *errors)
{
    (void)req;
    (void)partial;
    const json_t *s = json_object_get(body, "settings");
    if (!s)
        return 0;
    static const char *const strings[] = {"gpu_class",          "gpu_resource",
                                          "default_image",      "default_queue",
                                          "default_priority",   "workload_priority_class",
                                          "pod_priority_class", "topology",
                                          "topology_name",      NULL};
    int bad = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v) {
        char path[160];
        snprintf(path, sizeof(path), "settings.%s", k);
        int is_string = 0;
        for (const char *const *x = strings; *x; x++)
            is_string |= strcmp(*x, k) == 0;
        if (is_string) {
            if (!json_is_string(v)) {
                catalog_err(errors, path, "must be a string");
                bad++;
            }
        } else if (strcmp(k, "active_deadline_seconds") == 0) {
            if (!json_is_integer(v) || json_integer_value(v) < 1) {
                catalog_err(errors, path, "must be a positive integer");
                bad++;
            }
        } else if (strcmp(k, "teams") == 0 || strcmp(k, "lanes") == 0) {
            size_t i;
            json_t *x;
            int ok = json_is_array(v);
            json_array_foreach(v, i, x)
                ok &= json_is_string(x);
            if (!ok) {
                catalog_err(errors, path, "must be an array of strings");
                bad++;
            }
        } else if (strcmp(k, "service_account") == 0 || strcmp(k, "dra_claim_template") == 0) {
            if (!json_is_string(v) || !tg_fields_dns_ok(json_string_value(v), 1)) {
                catalog_err(errors, path, "must be a Kubernetes object name (RFC 1123 subdomain)");
                bad++;
            }
        } else if (strcmp(k, "image_pull_secrets") == 0) {
            size_t i;
            json_t *x;
            int ok = json_is_array(v);
            json_array_foreach(v, i, x)
                ok &= json_is_string(x) && tg_fields_dns_ok(json_string_value(x), 1);
            if (!ok) {
                catalog_err(errors, path, "must be an array of Secret names");
                bad++;
            }
        } else if (strcmp(k, "workload_identity") == 0) {
            if (!json_is_boolean(v)) {
                catalog_err(errors, path, "must be a boolean");
                bad++;
            }
        } else if (strcmp(k, "gpu_placement") == 0) {
            if (!profile_choice(v, gpu_placements)) {
                catalog_err(errors, path,
                            "must be one of single-device, same-node, distributed-workers");
                bad++;
            }
        } else if (strcmp(k, "security_mode") == 0) {
            if (!profile_choice(v, security_modes)) {
                catalog_err(errors, path, "must be restricted");
                bad++;
            }
        } else if (strcmp(k, "ray_version") == 0) {
            if (!profile_version_ok(v)) {
                catalog_err(errors, path, "must be a Ray version such as 2.54.0");
                bad++;
            }
        } else if (strcmp(k, "node_selector") == 0) {
            bad += tg_fields_check_string_map(v, path, errors);
        } else if (strcmp(k, "tolerations") == 0) {
            bad += tg_fields_check_tolerations(v, path, errors);
        } else if (strcmp(k, "resources") == 0) {
            if (!(bad += tg_fields_check_string_map(v, path, errors) > 0)) {
                const char *rk;
                json_t *rv;
                json_object_foreach(v, rk, rv) {
                    if (!tg_fields_quantity_ok(json_string_value(rv))) {
                        char rp[256];
                        snprintf(rp, sizeof(rp), "%s.%s", path, rk);
                        catalog_err(errors, rp,
                                    "must be a Kubernetes quantity such as 500m or 16Gi");
                        bad++;
                    }
                }
            }
        } else {
            catalog_err(errors, path,
                        "unknown setting; known: gpu_class, gpu_resource, node_selector, "
                        "tolerations, default_image, resources, default_queue, default_priority, "
                        "workload_priority_class, pod_priority_class, active_deadline_seconds, "
                        "topology, topology_name, teams, lanes, service_account, "
                        "workload_identity, image_pull_secrets, dra_claim_template, "
                        "gpu_placement, security_mode, ray_version");
            bad++;
        }
    }
    return bad;
}

const tg_crud_t tg_api_profiles = {
    .kind = "compute profile",
    .collection = "/v1/admin/profiles",
    .key_param = "name",
    .key_field = "name",
    .fields = profile_fields,
    .nfields = (int)(sizeof(profile_fields) / sizeof(profile_fields[0])),
    .immutable = name_immutable,
    .check = profile_check,
    .stmts = &tg_store_profiles,
};

/* ---- resource flavors ---------------------------------------------------- */

static const tg_field_t flavor_fields[] = {
    {"name", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"node_labels", TG_F_OBJECT, 0, 0, 0, 0, TG_FP_NONE, NULL},
    {"node_taints", TG_F_ARRAY, 0, 0, 0, 0, TG_FP_NONE, NULL},
    {"tolerations", TG_F_ARRAY, 0, 0, 0, 0, TG_FP_NONE, NULL},
};

static int flavor_check(tg_req_t *req, const json_t *body, int partial, json_t *errors)
{
    (void)req;
    (void)partial;
    int bad = 0;
    const json_t *v;
    if ((v = json_object_get(body, "node_labels")))
        bad += tg_fields_check_string_map(v, "node_labels", errors);
    if ((v = json_object_get(body, "node_taints")))
        bad += tg_fields_check_taints(v, "node_taints", errors);
    if ((v = json_object_get(body, "tolerations")))
        bad += tg_fields_check_tolerations(v, "tolerations", errors);
    return bad;
}

const tg_crud_t tg_api_flavors = {
    .kind = "resource flavor",
    .collection = "/v1/admin/flavors",
    .key_param = "name",
    .key_field = "name",
    .fields = flavor_fields,
    .nfields = (int)(sizeof(flavor_fields) / sizeof(flavor_fields[0])),
    .immutable = name_immutable,
    .check = flavor_check,
    .stmts = &tg_store_flavors,
    .kueue = 1,
};

/* ---- cluster queues ------------------------------------------------------ */

static const char *const cq_strategies[] = {"StrictFIFO", "BestEffortFIFO", NULL};
static const tg_field_t cq_fields[] = {
    {"name", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"cohort", TG_F_STRING, 0, 1, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"queueing_strategy", TG_F_STRING, 0, 0, 0, 0, TG_FP_NONE, cq_strategies},
    {"preemption", TG_F_OBJECT, 0, 0, 0, 0, TG_FP_NONE, NULL},
    {"resource_groups", TG_F_ARRAY, 0, 0, 0, 0, TG_FP_NONE, NULL},
};

static int cq_check_choice(const json_t *obj, const char *key, const char *const *allowed,
                           const char *path, json_t *errors)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    for (const char *const *a = allowed; json_is_string(v) && *a; a++)
        if (strcmp(*a, json_string_value(v)) == 0)
            return 0;
    char p[160], msg[200];
    snprintf(p, sizeof(p), "%s.%s", path, key);
    snprintf(msg, sizeof(msg), "must be one of %s%s%s%s%s", allowed[0], allowed[1] ? ", " : "",
             allowed[1] ? allowed[1] : "", allowed[1] && allowed[2] ? ", " : "",
             allowed[1] && allowed[2] ? allowed[2] : "");
    catalog_err(errors, p, msg);
    return 1;
}

static int cq_check_resource(const json_t *r, const char *path, json_t *errors)
{
    int bad = 0;
    if (!json_is_object(r)) {
        catalog_err(errors, path, "must be an object");
        return 1;
    }
    if (!json_is_string(json_object_get(r, "name"))) {
        catalog_err(errors, path, "needs a resource name such as cpu, memory or nvidia.com/gpu");
        bad++;
    }
    static const char *const qkeys[] = {"nominal_quota", "borrowing_limit", "lending_limit", NULL};
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)r, k, v) {
        char p[256];
        snprintf(p, sizeof(p), "%s.%s", path, k);
        int known = strcmp(k, "name") == 0;
        for (const char *const *q = qkeys; *q && !known; q++)
            if (strcmp(*q, k) == 0) {
                known = 1;
                if (!json_is_string(v) || !tg_fields_quantity_ok(json_string_value(v))) {
                    catalog_err(errors, p, "must be a Kubernetes quantity such as 8 or 64Gi");
                    bad++;
                }
            }
        if (!known) {
            catalog_err(errors, p, "unknown field");
            bad++;
        }
    }
    if (!json_object_get(r, "nominal_quota")) {
        catalog_err(errors, path, "needs nominal_quota");
        bad++;
    }
    return bad;
}

static int cq_check_groups(const json_t *groups, json_t *errors)
{
    int bad = 0;
    size_t gi;
    json_t *g;
    json_array_foreach(groups, gi, g) {
        char gp[64];
        snprintf(gp, sizeof(gp), "resource_groups[%zu]", gi);
        const json_t *covered = json_object_get(g, "covered_resources");
        const json_t *flavors = json_object_get(g, "flavors");
        if (!json_is_object(g) || !json_is_array(covered) || !json_array_size(covered) ||
            !json_is_array(flavors) || !json_array_size(flavors)) {
            catalog_err(errors, gp, "needs covered_resources and flavors (non-empty arrays)");
            bad++;
            continue;
        }
        size_t fi;
        json_t *f;
        json_array_foreach(flavors, fi, f) {
            char fp[96];
            snprintf(fp, sizeof(fp), "%s.flavors[%zu]", gp, fi);
            const json_t *res = json_object_get(f, "resources");
            if (!json_is_string(json_object_get(f, "name")) || !json_is_array(res)) {
                catalog_err(errors, fp, "needs a flavor name and a resources array");
                bad++;
                continue;
            }
            if (json_array_size(res) != json_array_size(covered)) {
                catalog_err(errors, fp, "must list exactly the covered_resources, in order");
                bad++;
            }
            size_t ri;
            json_t *r;
            json_array_foreach(res, ri, r) {
                char rp[128];
                snprintf(rp, sizeof(rp), "%s.resources[%zu]", fp, ri);
                bad += cq_check_resource(r, rp, errors);
                const char *want = json_string_value(json_array_get(covered, ri));
                const char *have = json_string_value(json_object_get(r, "name"));
                if (want && have && strcmp(want, have) != 0) {
                    catalog_err(errors, rp, "does not match covered_resources at this position");
                    bad++;
                }
            }
        }
    }
    return bad;
}

static int cq_check(tg_req_t *req, const json_t *body, int partial, json_t *errors)
{
    (void)req;
    (void)partial;
    int bad = 0;
    const json_t *p = json_object_get(body, "preemption");
    if (p) {
        static const char *const within[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority",
                                             NULL};
        static const char *const reclaim[] = {"Never", "LowerPriority", "Any", NULL};
        bad += cq_check_choice(p, "within_cluster_queue", within, "preemption", errors);
        bad += cq_check_choice(p, "reclaim_within_cohort", reclaim, "preemption", errors);
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)p, k, v) {
            if (strcmp(k, "within_cluster_queue") && strcmp(k, "reclaim_within_cohort")) {
                char path[128];
                snprintf(path, sizeof(path), "preemption.%s", k);
                catalog_err(errors, path, "unknown field");
                bad++;
            }
        }
    }
    const json_t *g = json_object_get(body, "resource_groups");
    if (g)
        bad += cq_check_groups(g, errors);
    return bad;
}

const tg_crud_t tg_api_cluster_queues = {
    .kind = "cluster queue",
    .collection = "/v1/admin/cluster-queues",
    .key_param = "name",
    .key_field = "name",
    .fields = cq_fields,
    .nfields = (int)(sizeof(cq_fields) / sizeof(cq_fields[0])),
    .immutable = name_immutable,
    .check = cq_check,
    .stmts = &tg_store_cluster_queues,
    .in_use = "LocalQueues still point at it",
    .before_delete = tg_quota_cq_before_delete,
    .kueue = 1,
};

/* ---- priority classes ---------------------------------------------------- */

static const tg_field_t pc_fields[] = {
    {"name", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"value", TG_F_INT, 1, 0, -2147483647L, 1000000000L, TG_FP_NONE, NULL},
    {"description", TG_F_STRING, 0, 0, 0, 1024, TG_FP_NONE, NULL},
};

const tg_crud_t tg_api_priority_classes = {
    .kind = "priority class",
    .collection = "/v1/admin/priority-classes",
    .key_param = "name",
    .key_field = "name",
    .fields = pc_fields,
    .nfields = (int)(sizeof(pc_fields) / sizeof(pc_fields[0])),
    .immutable = name_immutable,
    .stmts = &tg_store_priority_classes,
    .kueue = 1,
};
