/* admin: the catalogue (workspaces, profiles, flavors, cluster-queues,
 * priority-classes), a workspace's queues and members, audit, usage and
 * quota requests. One set of generic verbs serves every catalogue resource:
 *   list [--all]   GET  <collection>
 *   get NAME       GET  <collection>/NAME
 *   create -f F    POST <collection>          (F: JSON or YAML; object or list)
 *   apply -f F     POST when missing, else PATCH with the changed fields
 *   delete NAME    DELETE <collection>/NAME */
#include <string.h>

#include "apply.h"
#include "commands.h"
#include "http.h"
#include "lists.h"
#include "output.h"
#include "problem.h"
#include "yamldoc.h"

typedef struct {
    const char *kind;       /* "workspace" */
    const char *collection; /* "/v1/admin/workspaces"; scoped: the part after {ws} */
    int scoped;             /* under /v1/admin/workspaces/{ws} */
    const char *key;        /* the identifying field */
    const char *const *immutable;
    const tau_col_t *cols;
    int ncols;
} admin_res_t;

/* Fields the server sets: never sent. */
static const char *const admin_readonly[] = {"created_at", "updated_at", NULL};
static const char *const admin_name_only[] = {"name", NULL};
static const char *const admin_member_fixed[] = {"id", "kind", "subject", "workspace", NULL};
static const char *const admin_queue_fixed[] = {"name", "workspace", NULL};

static const tau_col_t ws_cols[] = {
    {"NAME", "name", TAU_COL_TEXT},
    {"NAMESPACE", "namespace", TAU_COL_TEXT},
    {"DEFAULT-QUEUE", "default_queue", TAU_COL_TEXT},
    {"DEFAULT-PROFILE", "default_profile", TAU_COL_TEXT},
    {"TTL", "ttl_seconds", TAU_COL_TEXT},
    {"AGE", "created_at", TAU_COL_AGE},
    {"PRIORITY", "default_priority", TAU_COL_TEXT | TAU_COL_WIDE},
    {"OUTPUT-ROOT", "output_root", TAU_COL_TEXT | TAU_COL_WIDE},
    {"LOG-DAYS", "log_retention_days", TAU_COL_TEXT | TAU_COL_WIDE},
    {"PVCS", "pvcs", TAU_COL_TEXT | TAU_COL_WIDE},
};
static const tau_col_t profile_cols[] = {
    {"NAME", "name", TAU_COL_TEXT},
    {"ENGINE", "engine", TAU_COL_TEXT},
    {"GPU-CLASS", "settings.gpu_class", TAU_COL_TEXT},
    {"WORKSPACES", "allowed_workspaces", TAU_COL_TEXT},
    {"DESCRIPTION", "description", TAU_COL_LONG},
    {"AGE", "created_at", TAU_COL_AGE},
    {"SETTINGS", "settings", TAU_COL_LONG | TAU_COL_WIDE},
};
static const tau_col_t flavor_cols[] = {
    {"NAME", "name", TAU_COL_TEXT},
    {"NODE-LABELS", "node_labels", TAU_COL_LONG},
    {"AGE", "created_at", TAU_COL_AGE},
    {"NODE-TAINTS", "node_taints", TAU_COL_LONG | TAU_COL_WIDE},
    {"TOLERATIONS", "tolerations", TAU_COL_LONG | TAU_COL_WIDE},
};
static const tau_col_t cq_cols[] = {
    {"NAME", "name", TAU_COL_TEXT},
    {"COHORT", "cohort", TAU_COL_TEXT},
    {"STRATEGY", "queueing_strategy", TAU_COL_TEXT},
    {"AGE", "created_at", TAU_COL_AGE},
    {"PREEMPTION", "preemption", TAU_COL_LONG | TAU_COL_WIDE},
    {"RESOURCE-GROUPS", "resource_groups", TAU_COL_LONG | TAU_COL_WIDE},
};
static const tau_col_t pc_cols[] = {
    {"NAME", "name", TAU_COL_TEXT},
    {"VALUE", "value", TAU_COL_TEXT},
    {"DESCRIPTION", "description", TAU_COL_LONG},
    {"AGE", "created_at", TAU_COL_AGE},
};
static const tau_col_t queue_cols[] = {
    {"NAME", "name", TAU_COL_TEXT},
    {"CLUSTER-QUEUE", "cluster_queue", TAU_COL_TEXT},
    {"WORKSPACE", "workspace", TAU_COL_TEXT},
    {"AGE", "created_at", TAU_COL_AGE},
};
static const tau_col_t member_cols[] = {
    {"ID", "id", TAU_COL_TEXT},           {"KIND", "kind", TAU_COL_TEXT},
    {"SUBJECT", "subject", TAU_COL_TEXT}, {"ROLE", "role", TAU_COL_TEXT},
    {"AGE", "created_at", TAU_COL_AGE},
};

#define RES(kind, coll, scoped, key, immut, cols)                                                  \
    {                                                                                              \
        kind, coll, scoped, key, immut, cols, (int)TG_ARRAY_LEN(cols)                              \
    }

static const admin_res_t res_workspaces =
    RES("workspace", "/v1/admin/workspaces", 0, "name", admin_name_only, ws_cols);
static const admin_res_t res_profiles =
    RES("compute profile", "/v1/admin/profiles", 0, "name", admin_name_only, profile_cols);
static const admin_res_t res_flavors =
    RES("flavor", "/v1/admin/flavors", 0, "name", admin_name_only, flavor_cols);
static const admin_res_t res_cqs =
    RES("cluster queue", "/v1/admin/cluster-queues", 0, "name", admin_name_only, cq_cols);
static const admin_res_t res_pcs =
    RES("priority class", "/v1/admin/priority-classes", 0, "name", admin_name_only, pc_cols);
static const admin_res_t res_queues =
    RES("queue", "/queues", 1, "name", admin_queue_fixed, queue_cols);
static const admin_res_t res_members =
    RES("member", "/members", 1, "id", admin_member_fixed, member_cols);

/* ---- helpers ------------------------------------------------------------------------ */

static const admin_res_t *admin_res(const tau_ctx_t *ctx)
{
    return ctx->cmd->data;
}

/* The collection URL; NULL workspace for scoped resources is a usage error. */
static int admin_coll(tau_ctx_t *ctx, const tau_args_t *a, const admin_res_t *r, tau_url_t *u)
{
    tau_url_init(u);
    if (!r->scoped) {
        tau_url_lit(u, r->collection);
        return TAU_EXIT_OK;
    }
    const char *ws = tau_need_workspace(ctx, a);
    if (!ws)
        return TAU_EXIT_USAGE;
    tau_url_lit(u, "/v1/admin/workspaces");
    tau_url_seg(u, ws);
    tau_url_lit(u, r->collection);
    return TAU_EXIT_OK;
}

static int admin_item(tau_ctx_t *ctx, const tau_args_t *a, const admin_res_t *r, const char *name,
                      tau_url_t *u)
{
    int rc = admin_coll(ctx, a, r, u);
    if (rc == TAU_EXIT_OK)
        tau_url_seg(u, name);
    return rc;
}

static void admin_strip(json_t *o, const char *const *fields)
{
    for (const char *const *f = fields; f && *f; f++)
        json_object_del(o, *f);
}

json_t *tau_load_objects_arg(tau_ctx_t *ctx, const tau_args_t *a)
{
    const char *file = tau_arg(a, "filename");
    if (!file) {
        tau_usage_error(ctx, "pass the object(s) with -f FILE (JSON or YAML; - for stdin)");
        return NULL;
    }
    char err[512];
    json_t *v = tau_load_object_file(file, err, sizeof(err));
    if (!v) {
        tau_fail(ctx, TAU_EXIT_USAGE, "%s", err);
        return NULL;
    }
    json_t *list = NULL;
    if (json_is_object(v) && json_is_array(json_object_get(v, "items")))
        list = json_incref(json_object_get(v, "items"));
    else if (json_is_object(v))
        list = json_pack("[O]", v);
    else if (json_is_array(v))
        list = json_incref(v);
    json_decref(v);
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o) {
        if (!json_is_object(o)) {
            tau_fail(ctx, TAU_EXIT_USAGE, "%s: item %zu is not an object", file, i);
            json_decref(list);
            return NULL;
        }
    }
    if (!list)
        tau_fail(ctx, TAU_EXIT_USAGE, "%s must hold an object or a list of objects", file);
    return list;
}

/* ---- verbs -------------------------------------------------------------------------- */

static int admin_list(tau_ctx_t *ctx, const tau_args_t *a)
{
    const admin_res_t *r = admin_res(ctx);
    tau_url_t u;
    int rc = admin_coll(ctx, a, r, &u);
    if (rc != TAU_EXIT_OK) {
        tau_url_clean(&u);
        return rc;
    }
    return tau_list_pages(ctx, a, &u, NULL, r->cols, r->ncols, "(more: pass --all)");
}

static int admin_get(tau_ctx_t *ctx, const tau_args_t *a)
{
    const admin_res_t *r = admin_res(ctx);
    tau_url_t u;
    json_t *out = NULL;
    int rc = admin_item(ctx, a, r, a->pos[0], &u);
    if (rc == TAU_EXIT_OK)
        rc = tau_api(ctx, "GET", tau_url_str(&u), NULL, &out);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out)) {
        json_t *one = json_pack("[O]", out);
        tau_out_items(ctx, one, r->cols, r->ncols);
        json_decref(one);
    }
    json_decref(out);
    return rc;
}

static int admin_delete(tau_ctx_t *ctx, const tau_args_t *a)
{
    const admin_res_t *r = admin_res(ctx);
    tau_url_t u;
    int rc = admin_item(ctx, a, r, a->pos[0], &u);
    if (rc == TAU_EXIT_OK)
        rc = tau_api(ctx, "DELETE", tau_url_str(&u), NULL, NULL);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK)
        printf("%s %s deleted\n", r->kind, a->pos[0]);
    return rc;
}

static int admin_create_one(tau_ctx_t *ctx, const tau_args_t *a, const admin_res_t *r, json_t *obj,
                            json_t **created)
{
    tau_url_t u;
    int rc = admin_coll(ctx, a, r, &u);
    json_t *body = json_deep_copy(obj);
    admin_strip(body, admin_readonly);
    if (r->scoped) /* the workspace comes from the path */
        json_object_del(body, "workspace");
    if (strcmp(r->key, "id") == 0)
        json_object_del(body, "id");
    if (rc == TAU_EXIT_OK)
        rc = tau_api(ctx, "POST", tau_url_str(&u), body, created);
    tau_url_clean(&u);
    json_decref(body);
    return rc;
}

static const char *admin_name_of(const admin_res_t *r, const json_t *o)
{
    const char *n = json_string_value(json_object_get(o, r->key));
    return n ? n : "?";
}

typedef struct {
    const tau_args_t *a;
    const admin_res_t *r;
} admin_create_arg_t;

static int admin_create_listed(tau_ctx_t *ctx, json_t *obj, json_t **created, void *arg)
{
    const admin_create_arg_t *x = arg;
    return admin_create_one(ctx, x->a, x->r, obj, created);
}

static int admin_create(tau_ctx_t *ctx, const tau_args_t *a)
{
    const admin_res_t *r = admin_res(ctx);
    json_t *list = NULL;
    if (r == &res_queues && a->npos == 1) {
        /* tau admin queues -w WS create NAME --cluster-queue CQ */
        const char *cq = tau_arg(a, "cluster-queue");
        if (!cq)
            return tau_usage_error(ctx, "a queue needs --cluster-queue CQ (or -f FILE)");
        list = json_pack("[{s:s, s:s}]", "name", a->pos[0], "cluster_queue", cq);
    } else if (a->npos) {
        return tau_usage_error(ctx, "pass the object(s) with -f FILE");
    } else if (!(list = tau_load_objects_arg(ctx, a))) {
        return TAU_EXIT_USAGE;
    }
    admin_create_arg_t arg = {.a = a, .r = r};
    int rc = tau_create_each(ctx, list, r->kind, r->key, admin_create_listed, &arg);
    json_decref(list);
    return rc;
}

/* One object of `admin apply`: its resource, the command's arguments. */
typedef struct {
    const tau_args_t *a;
    const admin_res_t *r;
    json_t *obj;
} admin_applied_t;

static int admin_apply_create(tau_ctx_t *ctx, void *arg)
{
    admin_applied_t *x = arg;
    return admin_create_one(ctx, x->a, x->r, x->obj, NULL);
}

/* Only what differs, less what the server owns or will not change. */
static json_t *admin_apply_patch(const json_t *cur, void *arg)
{
    admin_applied_t *x = arg;
    json_t *patch = json_deep_copy(x->obj);
    admin_strip(patch, admin_readonly);
    admin_strip(patch, x->r->immutable);
    json_object_del(patch, x->r->key);
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(patch, tmp, k, v) {
        if (json_equal(v, json_object_get(cur, k)))
            json_object_del(patch, k);
    }
    return patch;
}

static int admin_apply(tau_ctx_t *ctx, const tau_args_t *a)
{
    const admin_res_t *r = admin_res(ctx);
    json_t *list = tau_load_objects_arg(ctx, a);
    if (!list)
        return TAU_EXIT_USAGE;
    int rc = TAU_EXIT_OK;
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o) {
        const char *name = json_string_value(json_object_get(o, r->key));
        if (!name) {
            rc = tau_fail(ctx, TAU_EXIT_USAGE, "item %zu has no \"%s\"", i, r->key);
            break;
        }
        tau_url_t u;
        rc = admin_item(ctx, a, r, name, &u);
        if (rc == TAU_EXIT_OK) {
            admin_applied_t x = {.a = a, .r = r, .obj = o};
            rc = tau_apply_one(ctx, tau_url_str(&u), r->kind, name, admin_apply_create,
                               admin_apply_patch, &x);
        }
        tau_url_clean(&u);
        if (rc != TAU_EXIT_OK)
            break;
    }
    json_decref(list);
    return rc;
}

/* members add --user U|--group G --role R */
static int admin_member_add(tau_ctx_t *ctx, const tau_args_t *a)
{
    const char *user = tau_arg(a, "user"), *group = tau_arg(a, "group");
    const char *role = tau_arg(a, "role");
    if (!!user == !!group)
        return tau_usage_error(ctx, "pass exactly one of --user USER or --group GROUP");
    if (!role)
        return tau_usage_error(ctx, "pass --role admin|researcher|viewer");
    json_t *o = json_pack("{s:s, s:s, s:s}", "kind", user ? "user" : "group", "subject",
                          user ? user : group, "role", role);
    if (!o)
        return tau_usage_error(ctx, "the subject and role must be UTF-8 text");
    json_t *created = NULL;
    int rc = admin_create_one(ctx, a, &res_members, o, &created);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, created))
        printf("member %s added (%s %s as %s)\n", admin_name_of(&res_members, created),
               user ? "user" : "group", user ? user : group, role);
    json_decref(created);
    json_decref(o);
    return rc;
}

/* members update ID --role R */
static int admin_member_update(tau_ctx_t *ctx, const tau_args_t *a)
{
    const char *role = tau_arg(a, "role");
    if (!role)
        return tau_usage_error(ctx, "pass --role admin|researcher|viewer");
    tau_url_t u;
    int rc = admin_item(ctx, a, &res_members, a->pos[0], &u);
    json_t *body = json_pack("{s:s}", "role", role);
    json_t *out = NULL;
    if (rc == TAU_EXIT_OK)
        rc = tau_api(ctx, "PATCH", tau_url_str(&u), body, &out);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out))
        printf("member %s is now %s\n", a->pos[0], role);
    json_decref(body);
    json_decref(out);
    return rc;
}

/* ---- audit, usage, quota requests ------------------------------------------------------ */

static int admin_audit(tau_ctx_t *ctx, const tau_args_t *a)
{
    static const tau_filter_t filters[] = {
        {"subject", "subject"}, {"workspace", "workspace"}, {"since", "since"}, {"until", "until"},
        {NULL, NULL},
    };
    static const tau_col_t cols[] = {
        {"TIME", "at", TAU_COL_TIME},
        {"SUBJECT", "subject", TAU_COL_TEXT},
        {"METHOD", "method", TAU_COL_TEXT},
        {"TARGET", "target", TAU_COL_LONG},
        {"STATUS", "status", TAU_COL_TEXT},
        {"WORKSPACE", "workspace", TAU_COL_TEXT},
        {"REQUEST-ID", "request_id", TAU_COL_TEXT},
    };
    tau_url_t u;
    tau_url_init(&u);
    tau_url_lit(&u, "/v1/admin/audit");
    return tau_list_pages(ctx, a, &u, filters, cols, (int)TG_ARRAY_LEN(cols), "(more: pass --all)");
}

/* GET the URL (cleaned here) and print whatever comes back. */
static int admin_show(tau_ctx_t *ctx, tau_url_t *u)
{
    json_t *out = NULL;
    int rc = tau_api(ctx, "GET", tau_url_str(u), NULL, &out);
    tau_url_clean(u);
    if (rc == TAU_EXIT_OK)
        tau_out_generic(ctx, out);
    json_decref(out);
    return rc;
}

static int admin_usage(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    tau_url_init(&u);
    tau_url_lit(&u, "/v1/admin/usage");
    tau_url_query(&u, "workspace", tau_arg(a, "workspace"));
    tau_url_query(&u, "since", tau_arg(a, "since"));
    tau_url_query(&u, "until", tau_arg(a, "until"));
    return admin_show(ctx, &u);
}

/* "/v1/admin/quota-requests/<id><verb>" */
static void admin_qr_url(tau_url_t *u, const char *id, const char *verb)
{
    tau_url_init(u);
    tau_url_lit(u, "/v1/admin/quota-requests");
    tau_url_seg(u, id);
    tau_url_lit(u, verb);
}

static int admin_qr_list(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    tau_url_init(&u);
    tau_url_lit(&u, "/v1/admin/quota-requests");
    tau_url_query(&u, "state", tau_arg(a, "state"));
    tau_url_query(&u, "workspace", tau_arg(a, "workspace"));
    json_t *items = NULL;
    int rc = tau_api_list(ctx, tau_url_str(&u), tau_flag(a, "all"), &items, NULL);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK) {
        json_t *res = json_pack("{s:O, s:n}", "items", items, "next_cursor");
        tau_out_generic(ctx, res);
        json_decref(res);
    }
    json_decref(items);
    return rc;
}

static int admin_qr_get(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    admin_qr_url(&u, a->pos[0], "");
    return admin_show(ctx, &u);
}

/* POST /v1/admin/quota-requests/{id}:approve|:reject {"decision"} */
static int admin_qr_decide(tau_ctx_t *ctx, const tau_args_t *a, const char *verb, const char *done)
{
    tau_url_t u;
    admin_qr_url(&u, a->pos[0], verb);
    const char *note = tau_arg(a, "decision");
    json_t *body = note ? json_pack("{s:s}", "decision", note) : json_object();
    if (!body) {
        tau_url_clean(&u);
        return tau_usage_error(ctx, "--decision must be UTF-8 text");
    }
    json_t *out = NULL;
    int rc = tau_api(ctx, "POST", tau_url_str(&u), body, &out);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out ? out : json_null()))
        printf("quota request %s %s\n", a->pos[0], done);
    json_decref(body);
    json_decref(out);
    return rc;
}

static int admin_qr_approve(tau_ctx_t *ctx, const tau_args_t *a)
{
    return admin_qr_decide(ctx, a, ":approve", "approved");
}

static int admin_qr_reject(tau_ctx_t *ctx, const tau_args_t *a)
{
    return admin_qr_decide(ctx, a, ":reject", "rejected");
}

/* ---- the tree ------------------------------------------------------------------------ */

#define WS_OPT                                                                                     \
    {                                                                                              \
        "workspace", 'w', "WS", "the workspace"                                                    \
    }
#define LIST_OPTS                                                                                  \
    {"limit", 0, "N", "items per page, 1 to 200 (default 50)"},                                    \
    {                                                                                              \
        "all", 'A', NULL, "follow next_cursor and list every page"                                 \
    }
#define FILE_OPT                                                                                   \
    {                                                                                              \
        "filename", 'f', "FILE", "JSON or YAML file: an object or a list (- for stdin)"            \
    }
#define END_OPT                                                                                    \
    {                                                                                              \
        NULL, 0, NULL, NULL                                                                        \
    }

static const tau_opt_t list_opts[] = {LIST_OPTS, END_OPT};
static const tau_opt_t list_ws_opts[] = {WS_OPT, LIST_OPTS, END_OPT};
static const tau_opt_t file_opts[] = {FILE_OPT, END_OPT};
static const tau_opt_t file_ws_opts[] = {WS_OPT, FILE_OPT, END_OPT};
static const tau_opt_t queue_create_opts[] = {
    WS_OPT, FILE_OPT, {"cluster-queue", 0, "CQ", "with NAME: the ClusterQueue to feed"}, END_OPT};
static const tau_opt_t member_add_opts[] = {
    WS_OPT,
    {"user", 0, "USER", "a user subject (the token's sub)"},
    {"group", 0, "GROUP", "a group from the token's groups claim"},
    {"role", 0, "ROLE", "admin, researcher or viewer"},
    END_OPT,
};
static const tau_opt_t member_update_opts[] = {
    WS_OPT, {"role", 0, "ROLE", "admin, researcher or viewer"}, END_OPT};
static const tau_opt_t audit_opts[] = {
    {"subject", 0, "SUBJECT", "only changes made by this subject"},
    {"workspace", 'w', "WS", "only changes in this workspace"},
    {"since", 0, "TIME", "from this RFC 3339 time"},
    {"until", 0, "TIME", "before this RFC 3339 time"},
    LIST_OPTS,
    END_OPT,
};
static const tau_opt_t usage_opts[] = {
    {"workspace", 'w', "WS", "only this workspace"},
    {"since", 0, "TIME", "from this RFC 3339 time"},
    {"until", 0, "TIME", "before this RFC 3339 time"},
    END_OPT,
};
static const tau_opt_t qr_list_opts[] = {
    {"state", 0, "STATE", "only requests in this state: pending, approved or rejected"},
    {"workspace", 'w', "WS", "only this workspace's requests"},
    {"all", 'A', NULL, "follow next_cursor and list every page"},
    END_OPT,
};
static const tau_opt_t qr_decide_opts[] = {
    {"decision", 0, "TEXT", "a note to the requester, recorded with the decision"}, END_OPT};

#define G 1 /* needs a gateway */
#define VERBS(P, RES, LO, FO, NO)                                                                    \
    {"list", "List " P, "admin " P " list [--all]", NULL, LO, admin_list, NULL, 0, 0, &RES, G},      \
        {"get", "Show one of the " P, "admin " P " get NAME", NULL, NO, admin_get, NULL, 1, 1, &RES, \
         G},                                                                                         \
        {"create",                                                                                   \
         "Create " P " from a file",                                                                 \
         "admin " P " create -f FILE",                                                               \
         NULL,                                                                                       \
         FO,                                                                                         \
         admin_create,                                                                               \
         NULL,                                                                                       \
         0,                                                                                          \
         0,                                                                                          \
         &RES,                                                                                       \
         G},                                                                                         \
        {"apply",                                                                                    \
         "Create or update " P " from a file",                                                       \
         "admin " P " apply -f FILE",                                                                \
         "Creates each object that does not exist and PATCHes the fields that differ\n"              \
         "on those that do. Names cannot change.",                                                   \
         FO,                                                                                         \
         admin_apply,                                                                                \
         NULL,                                                                                       \
         0,                                                                                          \
         0,                                                                                          \
         &RES,                                                                                       \
         G},                                                                                         \
    {                                                                                                \
        "delete", "Delete one of the " P, "admin " P " delete NAME", NULL, NO, admin_delete, NULL,   \
            1, 1, &RES, G                                                                            \
    }
#define END_CMD                                                                                    \
    {                                                                                              \
        NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0                                    \
    }

static const tau_cmd_t ws_verbs[] = {
    VERBS("workspaces", res_workspaces, list_opts, file_opts, tau_opts_none), END_CMD};
static const tau_cmd_t profile_verbs[] = {
    VERBS("profiles", res_profiles, list_opts, file_opts, tau_opts_none), END_CMD};
static const tau_cmd_t flavor_verbs[] = {
    VERBS("flavors", res_flavors, list_opts, file_opts, tau_opts_none), END_CMD};
static const tau_cmd_t cq_verbs[] = {
    VERBS("cluster-queues", res_cqs, list_opts, file_opts, tau_opts_none), END_CMD};
static const tau_cmd_t pc_verbs[] = {
    VERBS("priority-classes", res_pcs, list_opts, file_opts, tau_opts_none), END_CMD};

static const tau_opt_t ws_only_opts[] = {WS_OPT, END_OPT};

static const tau_cmd_t queue_verbs[] = {
    {"list", "List the workspace's queues", "admin queues -w WS list", NULL, list_ws_opts,
     admin_list, NULL, 0, 0, &res_queues, G},
    {"get", "Show a queue", "admin queues -w WS get NAME", NULL, ws_only_opts, admin_get, NULL, 1,
     1, &res_queues, G},
    {"create", "Create a queue", "admin queues -w WS create NAME --cluster-queue CQ | -f FILE",
     NULL, queue_create_opts, admin_create, NULL, 0, 1, &res_queues, G},
    {"apply", "Create or update queues from a file", "admin queues -w WS apply -f FILE", NULL,
     file_ws_opts, admin_apply, NULL, 0, 0, &res_queues, G},
    {"delete", "Delete a queue", "admin queues -w WS delete NAME", NULL, ws_only_opts, admin_delete,
     NULL, 1, 1, &res_queues, G},
    END_CMD,
};

static const tau_cmd_t member_verbs[] = {
    {"list", "List the workspace's members", "admin members -w WS list", NULL, list_ws_opts,
     admin_list, NULL, 0, 0, &res_members, G},
    {"get", "Show a member", "admin members -w WS get ID", NULL, ws_only_opts, admin_get, NULL, 1,
     1, &res_members, G},
    {"add", "Add a user or group with a role",
     "admin members -w WS add --user USER|--group GROUP --role ROLE", NULL, member_add_opts,
     admin_member_add, NULL, 0, 0, &res_members, G},
    {"update", "Change a member's role", "admin members -w WS update ID --role ROLE", NULL,
     member_update_opts, admin_member_update, NULL, 1, 1, &res_members, G},
    {"remove", "Remove a member", "admin members -w WS remove ID", NULL, ws_only_opts, admin_delete,
     NULL, 1, 1, &res_members, G},
    END_CMD,
};

static const tau_cmd_t qr_verbs[] = {
    {"list", "List quota requests", "admin quota-requests list [--state S] [-w WS]", NULL,
     qr_list_opts, admin_qr_list, NULL, 0, 0, NULL, G},
    {"get", "Show a quota request", "admin quota-requests get ID", NULL, tau_opts_none,
     admin_qr_get, NULL, 1, 1, NULL, G},
    {"approve", "Approve a quota request", "admin quota-requests approve ID [--decision TEXT]",
     NULL, qr_decide_opts, admin_qr_approve, NULL, 1, 1, NULL, G},
    {"reject", "Reject a quota request", "admin quota-requests reject ID [--decision TEXT]", NULL,
     qr_decide_opts, admin_qr_reject, NULL, 1, 1, NULL, G},
    END_CMD,
};

#define GROUP(N, S, U, SUBS, OPTS)                                                                 \
    {                                                                                              \
        N, S, U, NULL, OPTS, NULL, SUBS, 0, 0, NULL, 0                                             \
    }

const tau_cmd_t tau_admin_subs[] = {
    GROUP("workspaces", "Workspaces (namespaces, defaults, retention)",
          "admin workspaces list|get|create|apply|delete", ws_verbs, NULL),
    GROUP("profiles", "Compute profiles", "admin profiles list|get|create|apply|delete",
          profile_verbs, NULL),
    GROUP("flavors", "Kueue ResourceFlavors", "admin flavors list|get|create|apply|delete",
          flavor_verbs, NULL),
    GROUP("cluster-queues", "Kueue ClusterQueues and their quotas",
          "admin cluster-queues list|get|create|apply|delete", cq_verbs, NULL),
    GROUP("priority-classes", "Workload priority classes",
          "admin priority-classes list|get|create|apply|delete", pc_verbs, NULL),
    GROUP("queues", "A workspace's LocalQueues", "admin queues -w WS list|get|create|apply|delete",
          queue_verbs, ws_only_opts),
    GROUP("members", "A workspace's members and roles",
          "admin members -w WS list|get|add|update|remove", member_verbs, ws_only_opts),
    {"audit", "The audit trail of changes", "admin audit [--subject S] [--workspace W] [--all]",
     NULL, audit_opts, admin_audit, NULL, 0, 0, NULL, G},
    {"usage", "Resource usage by workspace", "admin usage [-w WS] [--since T]", NULL, usage_opts,
     admin_usage, NULL, 0, 0, NULL, G},
    GROUP("quota-requests", "Quota requests from workspaces",
          "admin quota-requests list|get|approve|reject", qr_verbs, NULL),
    GROUP("policies", "Platform policy rules, their versions and the policy in force",
          "admin policies list|get|create|apply|update|enable|disable|delete|versions|effective|"
          "reload",
          tau_policies_verbs, NULL),
    GROUP("nodes", "Cluster nodes: GPUs, health, cordon, drain",
          "admin nodes list|get|cordon|uncordon|drain", tau_nodes_verbs, NULL),
    {"fleet", "The GPU fleet at a glance (by class and flavor)", "admin fleet", NULL, tau_opts_none,
     tau_cmd_fleet, NULL, 0, 0, NULL, G},
    {"drift", "Differences between the cluster's Kueue objects and taugate's",
     "admin drift [--state open|resolved|all] [--kind K] [--name N]",
     "Lists what the reconciler found edited by hand, unmanaged, in use though\n"
     "no longer wanted, or failing to apply.",
     tau_opts_drift, tau_cmd_drift, NULL, 0, 0, NULL, G},
    END_CMD,
};
