/* Workspaces, their LocalQueues and members: field tables and rules. */
#include "api/workspaces.h"

#include <string.h>

#include "api/app.h"
#include "api/quota.h"
#include "http/problem.h"
#include "store/workspaces.h"

static const tg_field_t ws_fields[] = {
    {"name", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_LABEL, NULL},
    {"namespace", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_LABEL, NULL},
    {"default_queue", TG_F_STRING, 0, 1, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"default_priority", TG_F_STRING, 0, 1, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"default_profile", TG_F_STRING, 0, 1, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"output_root", TG_F_STRING, 0, 1, 1, 1024, TG_FP_NONE, NULL},
    {"ttl_seconds", TG_F_INT, 0, 1, 0, 31536000, TG_FP_NONE, NULL},
    {"log_retention_days", TG_F_INT, 0, 0, 1, 3650, TG_FP_NONE, NULL},
    {"pvcs", TG_F_STRING_ARRAY, 0, 0, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
};
static const char *const ws_immutable[] = {"name", NULL};

/* Kubernetes' own namespaces (kube-system, kube-public, kube-node-lease and
 * any kube-* to come) are never a workspace's: runs there would sit beside
 * the control plane. `default` is refused unless the operator allows it
 * (workspaces_allow_default_namespace). */
static int ws_check(tg_req_t *req, const json_t *body, int partial, json_t *errors)
{
    (void)partial;
    const char *ns = json_string_value(json_object_get(body, "namespace"));
    if (!ns)
        return 0;
    const tg_config_t *cfg = ((tg_app_t *)tg_req_app(req))->cfg;
    if (strncmp(ns, "kube-", 5) == 0) {
        json_array_append_new(errors, tg_problem_error("namespace", 0, 0,
                                                       "kube-* namespaces are reserved by "
                                                       "Kubernetes; choose another namespace"));
        return 1;
    }
    if (strcmp(ns, "default") == 0 && !cfg->workspaces_allow_default_namespace) {
        json_array_append_new(
            errors, tg_problem_error("namespace", 0, 0,
                                     "the default namespace is reserved (an operator may allow "
                                     "it with workspaces_allow_default_namespace)"));
        return 1;
    }
    return 0;
}

const tg_crud_t tg_api_workspaces = {
    .kind = "workspace",
    .collection = "/v1/admin/workspaces",
    .key_param = "ws",
    .key_field = "name",
    .fields = ws_fields,
    .nfields = (int)(sizeof(ws_fields) / sizeof(ws_fields[0])),
    .immutable = ws_immutable,
    .check = ws_check,
    .stmts = &tg_store_workspaces,
    .in_use = "its runs are kept as evidence, so it cannot be deleted",
    .kueue = 1,
};

static const tg_field_t lq_fields[] = {
    {"name", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
    {"cluster_queue", TG_F_STRING, 1, 0, 0, 0, TG_FP_DNS_SUBDOMAIN, NULL},
};
static const char *const lq_immutable[] = {"name", NULL};

const tg_crud_t tg_api_local_queues = {
    .kind = "queue",
    .collection = "/v1/admin/workspaces/%s/queues",
    .parent_param = "ws",
    .key_param = "name",
    .key_field = "name",
    .fields = lq_fields,
    .nfields = (int)(sizeof(lq_fields) / sizeof(lq_fields[0])),
    .immutable = lq_immutable,
    .stmts = &tg_store_local_queues,
    .bad_ref = "cluster_queue names a ClusterQueue that does not exist",
    .before_delete = tg_quota_lq_before_delete,
    .kueue = 1,
};

static const char *const member_kinds[] = {"user", "group", NULL};
static const char *const member_roles[] = {"admin", "researcher", "viewer", NULL};
static const tg_field_t member_fields[] = {
    {"kind", TG_F_STRING, 1, 0, 0, 0, TG_FP_NONE, member_kinds},
    {"subject", TG_F_STRING, 1, 0, 1, 256, TG_FP_NONE, NULL},
    {"role", TG_F_STRING, 1, 0, 0, 0, TG_FP_NONE, member_roles},
};
static const char *const member_immutable[] = {"kind", "subject", NULL};

const tg_crud_t tg_api_members = {
    .kind = "member",
    .collection = "/v1/admin/workspaces/%s/members",
    .parent_param = "ws",
    .key_param = "member",
    .key_field = "id",
    .fields = member_fields,
    .nfields = (int)(sizeof(member_fields) / sizeof(member_fields[0])),
    .immutable = member_immutable,
    .stmts = &tg_store_members,
};
