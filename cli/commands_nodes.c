/* admin nodes, fleet and drift: the cluster as taugate sees it.
 *   nodes list [--health H] [--gpu-class C] [--gpu] [--all]   GET /v1/admin/nodes
 *   nodes get NAME                                             GET /v1/admin/nodes/{name}
 *   nodes cordon|uncordon|drain NAME --reason TEXT             POST /v1/admin/nodes/{name}:VERB
 *   fleet                                                      GET /v1/admin/fleet
 *   drift [--state S] [--kind K] [--name N] [--all]            GET /v1/admin/drift */
#include <string.h>

#include "commands.h"
#include "http.h"
#include "lists.h"
#include "output.h"

static const tau_col_t node_cols[] = {
    {"NAME", "name", TAU_COL_TEXT},
    {"GPU-CLASS", "gpu_class", TAU_COL_TEXT},
    {"GPUS", "gpus.allocatable", TAU_COL_TEXT},
    {"ALLOCATED", "gpus.allocated", TAU_COL_TEXT},
    {"FREE", "gpus.free", TAU_COL_TEXT},
    {"HEALTH", "health", TAU_COL_TEXT},
    {"READY", "ready", TAU_COL_TEXT},
    {"CORDONED", "unschedulable", TAU_COL_TEXT},
    {"CORDONED-BY", "cordon.by", TAU_COL_TEXT | TAU_COL_WIDE},
    {"REASON", "cordon.reason", TAU_COL_LONG | TAU_COL_WIDE},
    {"FLAVORS", "flavors", TAU_COL_TEXT | TAU_COL_WIDE},
    {"HEALTH-SINCE", "health_since", TAU_COL_AGE | TAU_COL_WIDE},
};

/* "/v1/admin/nodes/<name><suffix>" */
static void nodes_url(tau_url_t *u, const char *name, const char *suffix)
{
    tau_url_init(u);
    tau_url_lit(u, "/v1/admin/nodes");
    tau_url_seg(u, name);
    tau_url_lit(u, suffix);
}

static int nodes_list(tau_ctx_t *ctx, const tau_args_t *a)
{
    static const tau_filter_t filters[] = {
        {"health", "health"},
        {"gpu_class", "gpu-class"},
        {NULL, NULL},
    };
    tau_url_t u;
    tau_url_init(&u);
    tau_url_lit(&u, "/v1/admin/nodes");
    tau_url_query(&u, "gpu", tau_flag(a, "gpu") ? "true" : NULL);
    return tau_list_pages(ctx, a, &u, filters, node_cols, (int)TG_ARRAY_LEN(node_cols),
                          "(more nodes: pass --all)");
}

/* The describe view of one node: facts, problems, runs and history. */
static void nodes_describe(const tau_ctx_t *ctx, const json_t *n)
{
    char line[512], when[64];
    const json_t *g = json_object_get(n, "gpus");
    tau_out_kv(ctx, "Name", tau_json_str(n, "name"));
    tau_out_kv(ctx, "GPU class", tau_json_str(n, "gpu_class"));
    snprintf(line, sizeof(line),
             "%" JSON_INTEGER_FORMAT " allocatable, %" JSON_INTEGER_FORMAT
             " allocated, %" JSON_INTEGER_FORMAT " free (of %" JSON_INTEGER_FORMAT ")",
             json_integer_value(json_object_get(g, "allocatable")),
             json_integer_value(json_object_get(g, "allocated")),
             json_integer_value(json_object_get(g, "free")),
             json_integer_value(json_object_get(g, "total")));
    tau_out_kv(ctx, "GPUs", line);
    tau_cell_text(json_object_get(n, "health_since"), TAU_COL_TIME, when, sizeof(when));
    snprintf(line, sizeof(line), "%s (since %s)", tau_json_str(n, "health") ?: "-", when);
    tau_out_kv(ctx, "Health", line);
    tau_out_kv(ctx, "Ready", json_is_true(json_object_get(n, "ready")) ? "yes" : "no");
    const json_t *c = json_object_get(n, "cordon");
    if (json_is_object(c)) {
        tau_cell_text(json_object_get(c, "at"), TAU_COL_TIME, when, sizeof(when));
        snprintf(line, sizeof(line), "yes, by %s at %s: %s", tau_json_str(c, "by") ?: "?", when,
                 tau_json_str(c, "reason") ?: "");
        tau_out_kv(ctx, "Cordoned", line);
    } else {
        tau_out_kv(ctx, "Cordoned",
                   json_is_true(json_object_get(n, "unschedulable")) ? "yes (not by taugate)"
                                                                     : "no");
    }
    tau_cell_text(json_object_get(n, "flavors"), TAU_COL_TEXT, line, sizeof(line));
    tau_out_kv(ctx, "Flavors", line);
    static const tau_col_t problem_cols[] = {
        {"TYPE", "type", TAU_COL_TEXT},     {"STATUS", "status", TAU_COL_TEXT},
        {"REASON", "reason", TAU_COL_TEXT}, {"MESSAGE", "message", TAU_COL_LONG},
        {"SINCE", "since", TAU_COL_AGE},
    };
    static const tau_col_t run_cols[] = {
        {"RUN", "run_id", TAU_COL_TEXT},          {"NAME", "name", TAU_COL_TEXT},
        {"WORKSPACE", "workspace", TAU_COL_TEXT}, {"STATE", "state", TAU_COL_STATE},
        {"ATTEMPT", "attempt", TAU_COL_TEXT},     {"PODS", "pods", TAU_COL_LONG},
    };
    static const tau_col_t history_cols[] = {
        {"TIME", "at", TAU_COL_TIME},         {"EVENT", "kind", TAU_COL_TEXT},
        {"HEALTH", "health", TAU_COL_TEXT},   {"BY", "actor", TAU_COL_TEXT},
        {"OK", "ok", TAU_COL_TEXT},           {"REASON", "reason", TAU_COL_TEXT},
        {"MESSAGE", "message", TAU_COL_LONG},
    };
    const struct {
        const char *title, *key;
        const tau_col_t *cols;
        int ncols;
    } parts[] = {
        {"Problems", "problems", problem_cols, (int)TG_ARRAY_LEN(problem_cols)},
        {"Runs", "runs", run_cols, (int)TG_ARRAY_LEN(run_cols)},
        {"History", "history", history_cols, (int)TG_ARRAY_LEN(history_cols)},
    };
    for (size_t i = 0; i < TG_ARRAY_LEN(parts); i++) {
        const json_t *items = json_object_get(n, parts[i].key);
        if (json_array_size(items) == 0)
            continue;
        printf("\n%s:\n", parts[i].title);
        tau_out_items(ctx, items, parts[i].cols, parts[i].ncols);
    }
}

static int nodes_get(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    nodes_url(&u, a->pos[0], "");
    json_t *out = NULL;
    int rc = tau_api(ctx, "GET", tau_url_str(&u), NULL, &out);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out))
        nodes_describe(ctx, out);
    json_decref(out);
    return rc;
}

/* POST nodes/{name}:<verb> {reason[, grace_period_seconds]}. */
static int nodes_action(tau_ctx_t *ctx, const tau_args_t *a, const char *verb, int reason_needed,
                        json_t **out)
{
    const char *reason = tau_arg(a, "reason");
    /* the contract's reason is 1 to 512 characters when present: an empty
     * --reason is a mistake, not a way to leave it out */
    if ((reason_needed || reason) && (!reason || !*reason))
        return tau_usage_error(ctx, "say why with --reason TEXT (kept in the node's history "
                                    "and the audit log)");
    json_t *body = json_object();
    if (reason && json_object_set_new(body, "reason", json_string(reason)) != 0) {
        json_decref(body);
        return tau_usage_error(ctx, "--reason must be UTF-8 text");
    }
    if (tau_arg(a, "grace-period")) {
        char err[256];
        long grace;
        if (tau_arg_long(a, "grace-period", 0, 3600, 0, &grace, err, sizeof(err)) != 0) {
            json_decref(body);
            return tau_usage_error(ctx, "%s", err);
        }
        json_object_set_new(body, "grace_period_seconds", json_integer(grace));
    }
    tau_url_t u;
    nodes_url(&u, a->pos[0], verb);
    int rc = tau_api(ctx, "POST", tau_url_str(&u), body, out);
    tau_url_clean(&u);
    json_decref(body);
    return rc;
}

static int nodes_cordon_like(tau_ctx_t *ctx, const tau_args_t *a, const char *verb,
                             const char *done, int reason_needed)
{
    json_t *out = NULL;
    int rc = nodes_action(ctx, a, verb, reason_needed, &out);
    if (rc == TAU_EXIT_OK && !tau_out_structured(ctx, out ? out : json_null())) {
        fputs("node ", stdout);
        tau_print_clean(stdout, a->pos[0]);
        printf(" %s\n", done);
    }
    json_decref(out);
    return rc;
}

static int nodes_cordon(tau_ctx_t *ctx, const tau_args_t *a)
{
    return nodes_cordon_like(ctx, a, ":cordon", "cordoned", 1);
}

static int nodes_uncordon(tau_ctx_t *ctx, const tau_args_t *a)
{
    return nodes_cordon_like(ctx, a, ":uncordon", "uncordoned", 0);
}

/* A drain answers every pod's outcome; "blocked" and "failed" pods mean the
 * node is not empty yet, which the exit code says (3) so scripts can retry. */
static int nodes_drain(tau_ctx_t *ctx, const tau_args_t *a)
{
    json_t *out = NULL;
    int rc = nodes_action(ctx, a, ":drain", 1, &out);
    if (rc != TAU_EXIT_OK) {
        json_decref(out);
        return rc;
    }
    const json_t *pods = json_object_get(out, "pods");
    size_t left = 0, i;
    json_t *p;
    json_array_foreach(pods, i, p) {
        const char *o = tau_json_str(p, "outcome");
        left += o && (strcmp(o, "blocked") == 0 || strcmp(o, "failed") == 0);
    }
    if (!tau_out_structured(ctx, out)) {
        static const tau_col_t cols[] = {
            {"NAMESPACE", "namespace", TAU_COL_TEXT}, {"POD", "pod", TAU_COL_TEXT},
            {"RUN", "run_id", TAU_COL_TEXT},          {"OUTCOME", "outcome", TAU_COL_TEXT},
            {"MESSAGE", "message", TAU_COL_LONG},
        };
        if (json_array_size(pods))
            tau_out_items(ctx, pods, cols, (int)TG_ARRAY_LEN(cols));
        fputs("node ", stdout);
        tau_print_clean(stdout, a->pos[0]);
        const char *tail = left                    ? " (not all pods could leave)"
                           : json_array_size(pods) ? ""
                                                   : " (no pods were on it)";
        printf(" cordoned and drained%s\n", tail);
    }
    if (left) {
        tau_fail(ctx, 0,
                 "%zu pod%s could not be evicted yet (blocked by a PodDisruptionBudget or "
                 "refused); drain again later",
                 left, left == 1 ? "" : "s");
        rc = TAU_EXIT_REJECTED;
    }
    json_decref(out);
    return rc;
}

/* ---- fleet ------------------------------------------------------------------------------ */

int tau_cmd_fleet(tau_ctx_t *ctx, const tau_args_t *a)
{
    (void)a;
    json_t *out = NULL;
    int rc = tau_api(ctx, "GET", "/v1/admin/fleet", NULL, &out);
    if (rc != TAU_EXIT_OK || tau_out_structured(ctx, out)) {
        json_decref(out);
        return rc;
    }
    /* one table: the whole fleet, then each GPU class and each flavor */
    json_t *rows = json_array();
    json_t *total = json_deep_copy(json_object_get(out, "totals"));
    if (json_is_object(total)) {
        json_object_set_new(total, "group", json_string("all nodes"));
        json_array_append_new(rows, total);
    } else {
        json_decref(total);
    }
    size_t i;
    json_t *x;
    char label[300];
    json_array_foreach(json_object_get(out, "classes"), i, x) {
        json_t *row = json_deep_copy(x);
        snprintf(label, sizeof(label), "class %s", tau_json_str(x, "class") ?: "(none)");
        json_object_set_new(row, "group", json_string(label));
        json_array_append_new(rows, row);
    }
    json_array_foreach(json_object_get(out, "flavors"), i, x) {
        json_t *row = json_deep_copy(x);
        snprintf(label, sizeof(label), "flavor %s", tau_json_str(x, "flavor") ?: "?");
        json_object_set_new(row, "group", json_string(label));
        json_array_append_new(rows, row);
    }
    static const tau_col_t cols[] = {
        {"GROUP", "group", TAU_COL_TEXT},
        {"NODES", "nodes", TAU_COL_TEXT},
        {"UNHEALTHY", "unhealthy_nodes", TAU_COL_TEXT},
        {"CORDONED", "cordoned_nodes", TAU_COL_TEXT},
        {"GPUS", "gpus.allocatable", TAU_COL_TEXT},
        {"ALLOCATED", "gpus.allocated", TAU_COL_TEXT},
        {"FREE", "gpus.free", TAU_COL_TEXT},
        {"UNHEALTHY-GPUS", "gpus.unhealthy", TAU_COL_TEXT},
        {"UTILIZATION", "utilization", TAU_COL_TEXT},
        {"RUNNING-RUNS", "running_runs", TAU_COL_TEXT | TAU_COL_WIDE},
        {"TOTAL-GPUS", "gpus.total", TAU_COL_TEXT | TAU_COL_WIDE},
    };
    tau_out_items(ctx, rows, cols, (int)TG_ARRAY_LEN(cols));
    json_decref(rows);
    const char *at = tau_json_str(out, "observed_at");
    if (at) {
        char age[32];
        tau_time_age(at, age, sizeof(age));
        tau_note(ctx, "(observed %s ago)", age);
    }
    json_decref(out);
    return rc;
}

/* ---- drift -------------------------------------------------------------------------------- */

int tau_cmd_drift(tau_ctx_t *ctx, const tau_args_t *a)
{
    static const tau_filter_t filters[] = {
        {"state", "state"},
        {"kind", "kind"},
        {"name", "name"},
        {NULL, NULL},
    };
    static const tau_col_t cols[] = {
        {"KIND", "kind", TAU_COL_TEXT},
        {"NAMESPACE", "namespace", TAU_COL_TEXT},
        {"NAME", "name", TAU_COL_TEXT},
        {"PROBLEM", "problem", TAU_COL_TEXT},
        {"SUMMARY", "summary", TAU_COL_LONG},
        {"SEEN", "seen_count", TAU_COL_TEXT},
        {"DETECTED", "detected_at", TAU_COL_AGE},
        {"RESOLVED", "resolved_at", TAU_COL_AGE | TAU_COL_WIDE},
        {"RESOLUTION", "resolution", TAU_COL_TEXT | TAU_COL_WIDE},
        {"ID", "id", TAU_COL_TEXT | TAU_COL_WIDE},
    };
    tau_url_t u;
    tau_url_init(&u);
    tau_url_lit(&u, "/v1/admin/drift");
    return tau_list_pages(ctx, a, &u, filters, cols, (int)TG_ARRAY_LEN(cols),
                          "(more drift: pass --all)");
}

/* ---- the tree ------------------------------------------------------------------------------ */

#define PAGING_OPTS                                                                                \
    {"limit", 0, "N", "items per page, 1 to 200 (default 50)"},                                    \
    {                                                                                              \
        "all", 'A', NULL, "follow next_cursor and list every page"                                 \
    }

static const tau_opt_t nodes_list_opts[] = {
    {"health", 0, "HEALTH", "only nodes in this health (Healthy, Unhealthy, Unknown)"},
    {"gpu-class", 0, "CLASS", "only nodes of this GPU class"},
    {"gpu", 0, NULL, "only nodes with GPUs (or MIG slices)"},
    PAGING_OPTS,
    {NULL, 0, NULL, NULL},
};
static const tau_opt_t nodes_reason_opts[] = {
    {"reason", 0, "TEXT", "why (kept in the node's history and the audit log)"},
    {NULL, 0, NULL, NULL},
};
static const tau_opt_t nodes_drain_opts[] = {
    {"reason", 0, "TEXT", "why (kept in the node's history and the audit log)"},
    {"grace-period", 0, "SECONDS",
     "termination grace each evicted pod gets, 0 to 3600 (default: its own)"},
    {NULL, 0, NULL, NULL},
};
const tau_opt_t tau_opts_drift[] = {
    {"state", 0, "STATE", "open (default), resolved or all"},
    {"kind", 0, "KIND", "only this kind (ClusterQueue, LocalQueue, ...)"},
    {"name", 0, "NAME", "only objects with this name"},
    PAGING_OPTS,
    {NULL, 0, NULL, NULL},
};

#define G 1 /* needs a gateway */

const tau_cmd_t tau_nodes_verbs[] = {
    {"list", "List the cluster's nodes, their GPUs and health",
     "admin nodes list [--health H] [--gpu-class C] [--gpu] [--all]", NULL, nodes_list_opts,
     nodes_list, NULL, 0, 0, NULL, G},
    {"get", "Show a node: GPUs, health, cordon, runs and history", "admin nodes get NAME", NULL,
     tau_opts_none, nodes_get, NULL, 1, 1, NULL, G},
    {"cordon", "Mark a node unschedulable", "admin nodes cordon NAME --reason TEXT",
     "Pods already on the node keep running. taugate's node-health automation\n"
     "never takes an admin's cordon back.",
     nodes_reason_opts, nodes_cordon, NULL, 1, 1, NULL, G},
    {"uncordon", "Make a node schedulable again", "admin nodes uncordon NAME [--reason TEXT]", NULL,
     nodes_reason_opts, nodes_uncordon, NULL, 1, 1, NULL, G},
    {"drain", "Cordon a node and evict its pods",
     "admin nodes drain NAME --reason TEXT [--grace-period SECONDS]",
     "Evicts every pod through the Eviction API, as `kubectl drain` does (DaemonSet\n"
     "and static pods stay); taugate runs move to a new attempt elsewhere without\n"
     "spending a retry. --grace-period (0 to 3600) overrides each pod's own\n"
     "termination grace. Prints each pod's outcome (evicted, gone, skipped,\n"
     "blocked, failed); exit 3 when some pods could not leave yet (blocked by a\n"
     "PodDisruptionBudget, or refused): drain again later.",
     nodes_drain_opts, nodes_drain, NULL, 1, 1, NULL, G},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0},
};
