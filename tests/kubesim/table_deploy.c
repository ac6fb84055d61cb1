/* kubectl get columns for Deployments, ReplicaSets, PodDisruptionBudgets,
 * ServiceAccounts, the RBAC kinds and Leases, as the 1.32 kube printers
 * have them. */
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "rtypes.h"
#include "table_int.h"
#include "util.h"

static const ks_col_t deploy_cols[] = {{"Name", "string", "name", 0},
                                       {"Ready", "string", "", 0},
                                       {"Up-to-date", "integer", "", 0},
                                       {"Available", "integer", "", 0},
                                       {"Age", "string", "", 0},
                                       {"Containers", "string", "", 1},
                                       {"Images", "string", "", 1},
                                       {"Selector", "string", "", 1},
                                       {NULL, NULL, NULL, 0}};
static const ks_col_t pdb_cols[] = {{"Name", "string", "name", 0},
                                    {"Min Available", "string", "", 0},
                                    {"Max Unavailable", "string", "", 0},
                                    {"Allowed Disruptions", "integer", "", 0},
                                    {"Age", "string", "", 0},
                                    {NULL, NULL, NULL, 0}};
static const ks_col_t sa_cols[] = {{"Name", "string", "name", 0},
                                   {"Secrets", "string", "", 0},
                                   {"Age", "string", "", 0},
                                   {NULL, NULL, NULL, 0}};
static const ks_col_t role_cols[] = {
    {"Name", "string", "name", 0}, {"Created At", "date", "", 0}, {NULL, NULL, NULL, 0}};
static const ks_col_t binding_cols[] = {
    {"Name", "string", "name", 0}, {"Role", "string", "", 0},
    {"Age", "string", "", 0},      {"Users", "string", "", 1},
    {"Groups", "string", "", 1},   {"ServiceAccounts", "string", "", 1},
    {NULL, NULL, NULL, 0}};
static const ks_col_t rs_cols[] = {
    {"Name", "string", "name", 0}, {"Desired", "integer", "", 0}, {"Current", "integer", "", 0},
    {"Ready", "integer", "", 0},   {"Age", "string", "", 0},      {"Containers", "string", "", 1},
    {"Images", "string", "", 1},   {"Selector", "string", "", 1}, {NULL, NULL, NULL, 0}};
static const ks_col_t lease_cols[] = {{"Name", "string", "name", 0},
                                      {"Holder", "string", "", 0},
                                      {"Age", "string", "", 0},
                                      {NULL, NULL, NULL, 0}};

const ks_col_t *ks_table_deploy_cols(int rt)
{
    switch (rt) {
    case KS_RT_LEASES:
        return lease_cols;
    case KS_RT_REPLICASETS:
        return rs_cols;
    case KS_RT_DEPLOYMENTS:
        return deploy_cols;
    case KS_RT_PDBS:
        return pdb_cols;
    case KS_RT_SERVICEACCOUNTS:
        return sa_cols;
    case KS_RT_CLUSTERROLES:
    case KS_RT_ROLES:
        return role_cols;
    case KS_RT_CLUSTERROLEBINDINGS:
    case KS_RT_ROLEBINDINGS:
        return binding_cols;
    default:
        return NULL;
    }
}

static void deploy_row(json_t *o, json_t *cells)
{
    char b[64];
    snprintf(b, sizeof(b), "%lld/%lld", ks_jint(o, "status.readyReplicas", 0),
             ks_jint(o, "spec.replicas", 1));
    json_array_append_new(cells, json_string(b));
    json_array_append_new(cells, json_integer(ks_jint(o, "status.updatedReplicas", 0)));
    json_array_append_new(cells, json_integer(ks_jint(o, "status.availableReplicas", 0)));
    json_array_append_new(cells, ks_table_age(o));
    ks_table_template_cells(o, cells);
}

/* An IntOrString budget field, "N/A" when unset. */
static json_t *budget_cell(json_t *o, const char *path)
{
    json_t *v = ks_jget(o, path);
    if (json_is_integer(v)) {
        char b[32];
        snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(v));
        return json_string(b);
    }
    return json_string(json_is_string(v) ? json_string_value(v) : "N/A");
}

static void pdb_row(json_t *o, json_t *cells)
{
    json_array_append_new(cells, budget_cell(o, "spec.minAvailable"));
    json_array_append_new(cells, budget_cell(o, "spec.maxUnavailable"));
    json_array_append_new(cells, json_integer(ks_jint(o, "status.disruptionsAllowed", 0)));
    json_array_append_new(cells, ks_table_age(o));
}

/* The subjects of one kind, comma separated ("ns/name" for ServiceAccounts). */
static json_t *subjects_cell(json_t *o, const char *kind)
{
    tg_buf_t b;
    tg_buf_init(&b, 64 * 1024);
    size_t i;
    json_t *s;
    int n = 0, rc = TG_OK;
    json_array_foreach(json_object_get(o, "subjects"), i, s)
    {
        if (!ks_streq(ks_jstr(s, "kind"), kind))
            continue;
        if (!strcmp(kind, "ServiceAccount"))
            rc |= tg_buf_printf(&b, "%s%s/%s", n ? ", " : "",
                                ks_jstr(s, "namespace") ? ks_jstr(s, "namespace") : "",
                                ks_jstr(s, "name"));
        else
            rc |= tg_buf_printf(&b, "%s%s", n ? ", " : "", ks_jstr(s, "name"));
        n++;
    }
    (void)rc; /* a cut cell still prints */
    json_t *cell = json_string(b.data ? b.data : "");
    tg_buf_clean(&b);
    return cell;
}

static void binding_row(json_t *o, json_t *cells)
{
    char b[600];
    snprintf(b, sizeof(b), "%s/%s", ks_jstr(o, "roleRef.kind") ? ks_jstr(o, "roleRef.kind") : "",
             ks_jstr(o, "roleRef.name") ? ks_jstr(o, "roleRef.name") : "");
    json_array_append_new(cells, json_string(b));
    json_array_append_new(cells, ks_table_age(o));
    json_array_append_new(cells, subjects_cell(o, "User"));
    json_array_append_new(cells, subjects_cell(o, "Group"));
    json_array_append_new(cells, subjects_cell(o, "ServiceAccount"));
}

void ks_table_deploy_row(int rt, json_t *obj, json_t *cells)
{
    switch (rt) {
    case KS_RT_DEPLOYMENTS:
        deploy_row(obj, cells);
        break;
    case KS_RT_PDBS:
        pdb_row(obj, cells);
        break;
    case KS_RT_SERVICEACCOUNTS:
        json_array_append_new(cells,
                              json_integer((json_int_t)json_array_size(ks_jget(obj, "secrets"))));
        json_array_append_new(cells, ks_table_age(obj));
        break;
    case KS_RT_REPLICASETS:
        json_array_append_new(cells, json_integer(ks_jint(obj, "spec.replicas", 1)));
        json_array_append_new(cells, json_integer(ks_jint(obj, "status.replicas", 0)));
        json_array_append_new(cells, json_integer(ks_jint(obj, "status.readyReplicas", 0)));
        json_array_append_new(cells, ks_table_age(obj));
        ks_table_template_cells(obj, cells);
        break;
    case KS_RT_LEASES: {
        const char *h = ks_jstr(obj, "spec.holderIdentity");
        json_array_append_new(cells, json_string(h ? h : ""));
        json_array_append_new(cells, ks_table_age(obj));
        break;
    }
    case KS_RT_CLUSTERROLES:
    case KS_RT_ROLES: {
        /* Created At is the timestamp itself, not an age. */
        const char *ts = ks_jstr(obj, "metadata.creationTimestamp");
        json_array_append_new(cells, json_string(ts ? ts : ""));
        break;
    }
    default:
        binding_row(obj, cells);
        break;
    }
}
