/* runs, status, logs, cancel, resume, events, metrics; following a run. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "core/ids.h"
#include "http.h"
#include "lists.h"
#include "output.h"
#include "progress.h"

/* "/v1/runs/<id><suffix>" */
static void runs_url(tau_url_t *u, const char *id, const char *suffix)
{
    tau_url_init(u);
    tau_url_lit(u, "/v1/runs");
    tau_url_seg(u, id);
    tau_url_lit(u, suffix);
}

static const tau_col_t runs_cols[] = {
    {"ID", "id", TAU_COL_TEXT},
    {"NAME", "name", TAU_COL_TEXT},
    {"STATE", "state", TAU_COL_STATE},
    {"REASON", "reason", TAU_COL_TEXT},
    {"ENGINE", "engine", TAU_COL_TEXT},
    {"OWNER", "owner", TAU_COL_TEXT},
    {"ATTEMPT", "attempt", TAU_COL_TEXT},
    {"AGE", "created_at", TAU_COL_AGE},
    {"STARTED", "started_at", TAU_COL_TIME | TAU_COL_WIDE},
    {"FINISHED", "finished_at", TAU_COL_TIME | TAU_COL_WIDE},
    {"CONFIG-HASH", "config_hash", TAU_COL_TEXT | TAU_COL_WIDE},
    {"MESSAGE", "message", TAU_COL_LONG | TAU_COL_WIDE},
};

/* ---- runs ------------------------------------------------------------------------- */

const tau_opt_t tau_opts_runs[] = {
    {"workspace", 'w', "WS", "the workspace (default: TAU_WORKSPACE or the config's)"},
    {"state", 0, "STATE", "only runs in this state (Accepted, Queued, Running, Failed, ...)"},
    {"owner", 0, "OWNER", "only runs submitted by this subject"},
    {"engine", 0, "ENGINE", "only job or rayjob runs"},
    {"name", 0, "NAME", "only runs with this name"},
    {"since", 0, "TIME", "only runs created at or after this RFC 3339 time"},
    {"limit", 0, "N", "runs per page, 1 to 200 (default 50)"},
    {"all", 'A', NULL, "follow next_cursor and list every page"},
    {NULL, 0, NULL, NULL},
};

int tau_cmd_runs(tau_ctx_t *ctx, const tau_args_t *a)
{
    const char *ws = tau_need_workspace(ctx, a);
    if (!ws)
        return TAU_EXIT_USAGE;
    static const tau_filter_t filters[] = {
        {"state", "state"}, {"owner", "owner"}, {"engine", "engine"},
        {"name", "name"},   {"since", "since"}, {NULL, NULL},
    };
    tau_url_t u;
    tau_url_init(&u);
    tau_url_lit(&u, "/v1/workspaces");
    tau_url_seg(&u, ws);
    tau_url_lit(&u, "/runs");
    return tau_list_pages(ctx, a, &u, filters, runs_cols, (int)TG_ARRAY_LEN(runs_cols),
                          "(more runs: pass --all, or --limit up to 200)");
}

/* ---- status ----------------------------------------------------------------------- */

static void runs_time_kv(const tau_ctx_t *ctx, const char *label, const json_t *run,
                         const char *key)
{
    const char *t = tau_json_str(run, key);
    if (!t)
        return;
    char when[64], age[32], line[128];
    tau_cell_text(json_object_get(run, key), TAU_COL_TIME, when, sizeof(when));
    tau_time_age(t, age, sizeof(age));
    snprintf(line, sizeof(line), "%s (%s ago)", when, age);
    tau_out_kv(ctx, label, line);
}

/* The queue line, "kind-cpu (ClusterQueue kind-cpu-cq), position 3 of 7",
 * from run.queue {local_queue, cluster_queue, position, pending} (older
 * shapes: a queue name string, queue.name, queue_position). */
static void runs_queue_kv(const tau_ctx_t *ctx, const json_t *run)
{
    const json_t *q = json_object_get(run, "queue");
    const char *name = json_is_string(q) ? json_string_value(q) : tau_json_str(q, "local_queue");
    if (!name)
        name = tau_json_str(q, "name");
    const json_t *pos = json_object_get(q, "position");
    if (!pos)
        pos = json_object_get(run, "queue_position");
    const json_t *of = json_object_get(q, "pending");
    const char *cq = tau_json_str(q, "cluster_queue");
    if (!name && !json_is_integer(pos) && !cq)
        return;
    char line[512];
    size_t used = (size_t)snprintf(line, sizeof(line), "%s", name ? name : "-");
    if (cq && *cq && used < sizeof(line))
        used += (size_t)snprintf(line + used, sizeof(line) - used, " (ClusterQueue %s)", cq);
    if (json_is_integer(pos) && json_integer_value(pos) > 0 && used < sizeof(line))
        used += (size_t)snprintf(line + used, sizeof(line) - used,
                                 ", position %" JSON_INTEGER_FORMAT, json_integer_value(pos));
    if (json_is_integer(pos) && json_is_integer(of) && json_integer_value(pos) > 0 &&
        used < sizeof(line))
        snprintf(line + used, sizeof(line) - used, " of %" JSON_INTEGER_FORMAT,
                 json_integer_value(of));
    tau_out_kv(ctx, "Queue", line);
}

static void runs_describe(const tau_ctx_t *ctx, const json_t *run)
{
    char num[32];
    tau_out_kv(ctx, "Run", tau_json_str(run, "id"));
    tau_out_kv(ctx, "Name", tau_json_str(run, "name"));
    tau_out_kv(ctx, "Workspace", tau_json_str(run, "workspace"));
    tau_out_kv(ctx, "Owner", tau_json_str(run, "owner"));
    tau_out_kv(ctx, "Engine", tau_json_str(run, "engine"));
    const char *state = tau_json_str(run, "state");
    const char *col = ctx->color ? tau_state_color(state) : NULL;
    printf("%-14s%s", "State:", col ? col : "");
    tau_print_clean(stdout, state ? state : "-");
    printf("%s\n", col ? "\033[0m" : "");
    if (tau_json_str(run, "reason"))
        tau_out_kv(ctx, "Reason", tau_json_str(run, "reason"));
    if (tau_json_str(run, "message"))
        tau_out_kv(ctx, "Message", tau_json_str(run, "message"));
    tau_cell_text(json_object_get(run, "attempt"), TAU_COL_TEXT, num, sizeof(num));
    tau_out_kv(ctx, "Attempt", num);
    runs_queue_kv(ctx, run);
    runs_time_kv(ctx, "Created", run, "created_at");
    runs_time_kv(ctx, "Started", run, "started_at");
    runs_time_kv(ctx, "Finished", run, "finished_at");
    if (tau_json_str(run, "config_hash"))
        tau_out_kv(ctx, "Config hash", tau_json_str(run, "config_hash"));
    const json_t *attempts = json_object_get(run, "attempts");
    if (json_array_size(attempts) > 0) {
        static const tau_col_t cols[] = {
            {"ATTEMPT", "attempt", TAU_COL_TEXT},   {"STATE", "state", TAU_COL_STATE},
            {"REASON", "reason", TAU_COL_TEXT},     {"RETRY-REASON", "retry_reason", TAU_COL_TEXT},
            {"EXIT", "exit_code", TAU_COL_TEXT},    {"NODES", "node_names", TAU_COL_TEXT},
            {"STARTED", "started_at", TAU_COL_AGE},
        };
        printf("\nAttempts:\n");
        tau_out_items(ctx, attempts, cols, (int)TG_ARRAY_LEN(cols));
    }
}

const tau_opt_t tau_opts_status[] = {
    {"watch", 0, NULL, "print each change until the run ends"},
    {"interval", 0, "SECONDS", "polling interval for --watch (default 2)"},
    {NULL, 0, NULL, NULL},
};

static int runs_get(tau_ctx_t *ctx, const char *id, json_t **run)
{
    tau_url_t u;
    runs_url(&u, id, "");
    int rc = tau_api(ctx, "GET", tau_url_str(&u), NULL, run);
    tau_url_clean(&u);
    return rc;
}

static void runs_sleep(long s)
{
    struct timespec ts = {s, 0};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Print one event line ("TIME  STATE  REASON: MESSAGE (source)") to f. */
static void runs_event_line(const tau_ctx_t *ctx, FILE *f, const json_t *ev, int color)
{
    char when[64];
    tau_cell_text(json_object_get(ev, "at"), TAU_COL_TIME, when, sizeof(when));
    const char *state = tau_json_str(ev, "state");
    const char *c = color ? tau_state_color(state) : NULL;
    fprintf(f, "%s  %s%-10s%s", when, c ? c : "", state ? state : "-", c ? "\033[0m" : "");
    if (tau_json_str(ev, "reason")) {
        fputs("  ", f);
        tau_print_clean(f, tau_json_str(ev, "reason"));
    }
    if (tau_json_str(ev, "message")) {
        fputs(tau_json_str(ev, "reason") ? ": " : "  ", f);
        tau_print_clean(f, tau_json_str(ev, "message"));
    }
    if (tau_json_str(ev, "source")) {
        fputs(" (", f);
        tau_print_clean(f, tau_json_str(ev, "source"));
        fputc(')', f);
    }
    fputc('\n', f);
    (void)ctx;
}

/* Print the events after *last_seq (clearing the progress line first when
 * there are any); advance it. Errors are not fatal here. */
static void runs_new_events(tau_ctx_t *ctx, const char *id, long *last_seq, FILE *f, int color,
                            tau_progress_t *pr)
{
    char after[24];
    snprintf(after, sizeof(after), "%ld", *last_seq);
    tau_url_t u;
    runs_url(&u, id, "/events");
    tau_url_query(&u, "after", after);
    json_t *out = NULL;
    if (tau_api(ctx, "GET", tau_url_str(&u), NULL, &out) == TAU_EXIT_OK) {
        size_t i;
        json_t *ev;
        json_array_foreach(json_object_get(out, "items"), i, ev) {
            tau_progress_clear(pr);
            runs_event_line(ctx, f, ev, color);
            json_int_t seq = json_integer_value(json_object_get(ev, "seq"));
            if (seq > *last_seq)
                *last_seq = (long)seq;
        }
        fflush(f);
    }
    tau_url_clean(&u);
    json_decref(out);
}

static int runs_follow(tau_ctx_t *ctx, const char *id, long interval_s, long timeout_s,
                       FILE *events_out, int color, json_t **final_run)
{
    long last_seq = 0;
    uint64_t t0 = tg_now_mono_us();
    tau_progress_t *pr = tau_progress_new(ctx);
    int rc;
    if (final_run)
        *final_run = NULL;
    for (;;) {
        json_t *run = NULL;
        rc = runs_get(ctx, id, &run);
        if (rc != TAU_EXIT_OK) {
            tau_progress_clear(pr);
            break;
        }
        if (events_out)
            runs_new_events(ctx, id, &last_seq, events_out, color, pr);
        const char *state = tau_json_str(run, "state");
        long waited = (long)((tg_now_mono_us() - t0) / 1000000);
        if (tau_state_terminal(state)) {
            tau_progress_clear(pr);
            rc = strcmp(state, "Succeeded") == 0 ? TAU_EXIT_OK : TAU_EXIT_RUN_FAILED;
            if (final_run)
                *final_run = run;
            else
                json_decref(run);
            break;
        }
        if (timeout_s > 0 && waited >= timeout_s) {
            tau_progress_clear(pr);
            tau_fail(ctx, 0, "run %s is still %s after %lds (--timeout)", id, state ? state : "?",
                     waited);
            rc = TAU_EXIT_RUN_FAILED;
            if (final_run)
                *final_run = run;
            else
                json_decref(run);
            break;
        }
        const char *reason = tau_json_str(run, "reason");
        tau_progress_text(pr, "%s%s%s, %lds", state ? state : "?", reason ? ": " : "",
                          reason ? reason : "", waited);
        json_decref(run);
        runs_sleep(interval_s);
    }
    tau_progress_free(pr);
    return rc;
}

int tau_follow_run(tau_ctx_t *ctx, const char *run_id, long interval_s, long timeout_s,
                   int print_events, json_t **final_run)
{
    return runs_follow(ctx, run_id, interval_s, timeout_s, print_events ? stderr : NULL,
                       ctx->color_err, final_run);
}

int tau_cmd_status(tau_ctx_t *ctx, const tau_args_t *a)
{
    char err[256];
    long interval;
    if (tau_arg_long(a, "interval", 1, 3600, 2, &interval, err, sizeof(err)) != 0)
        return tau_usage_error(ctx, "%s", err);
    json_t *run = NULL;
    int rc = runs_get(ctx, a->pos[0], &run);
    if (rc != TAU_EXIT_OK)
        return rc;
    if (!tau_out_structured(ctx, run))
        runs_describe(ctx, run);
    int terminal = tau_state_terminal(tau_json_str(run, "state"));
    json_decref(run);
    if (!tau_flag(a, "watch") || terminal)
        return TAU_EXIT_OK;
    if (!tau_fmt_human(ctx)) {
        json_t *fin = NULL;
        rc = runs_follow(ctx, a->pos[0], interval, 0, NULL, 0, &fin);
        if (fin)
            tau_out_structured(ctx, fin);
        json_decref(fin);
    } else {
        printf("\nEvents:\n");
        fflush(stdout);
        rc = runs_follow(ctx, a->pos[0], interval, 0, stdout, ctx->color, NULL);
    }
    /* watching is observation: the run's failure is not the command's */
    return rc == TAU_EXIT_RUN_FAILED ? TAU_EXIT_OK : rc;
}

/* ---- logs ----------------------------------------------------------------------- */

const tau_opt_t tau_opts_logs[] = {
    {"follow", 'f', NULL, "keep streaming until the run's logs are complete"},
    {"tail", 0, "N", "only the last N lines (then new ones with -f)"},
    {"since", 0, "TIME", "lines at or after an RFC 3339 time or a duration back (10m, 1h)"},
    {"attempt", 0, "N", "the logs of one attempt (default: the current one)"},
    {"pod", 0, "POD", "only this pod"},
    {"container", 'c', "NAME", "only this container"},
    {"timestamps", 0, NULL, "keep each line's timestamp"},
    {"prefix", 0, NULL, "prefix lines with [pod/container]"},
    {NULL, 0, NULL, NULL},
};

static size_t logs_sink(const char *p, size_t n, void *arg)
{
    FILE *f = arg;
    size_t w = fwrite(p, 1, n, f);
    fflush(f);
    return w;
}

int tau_cmd_logs(tau_ctx_t *ctx, const tau_args_t *a)
{
    char err[256];
    long tail, attempt;
    if (tau_arg_long(a, "tail", 0, 10000000, -1, &tail, err, sizeof(err)) != 0 ||
        tau_arg_long(a, "attempt", 1, 1000, 0, &attempt, err, sizeof(err)) != 0)
        return tau_usage_error(ctx, "%s", err);
    char tails[24], attempts[24];
    snprintf(tails, sizeof(tails), "%ld", tail);
    snprintf(attempts, sizeof(attempts), "%ld", attempt);
    int follow = tau_flag(a, "follow");
    tau_url_t u;
    runs_url(&u, a->pos[0], "/logs");
    tau_url_query(&u, "follow", follow ? "true" : NULL);
    tau_url_query(&u, "tail", tail >= 0 ? tails : NULL);
    tau_url_query(&u, "attempt", attempt ? attempts : NULL);
    tau_url_query(&u, "since", tau_arg(a, "since"));
    tau_url_query(&u, "pod", tau_arg(a, "pod"));
    tau_url_query(&u, "container", tau_arg(a, "container"));
    tau_url_query(&u, "timestamps", tau_flag(a, "timestamps") ? "true" : NULL);
    tau_url_query(&u, "prefix", tau_flag(a, "prefix") ? "true" : NULL);
    tau_http_req_t rq = {.method = "GET",
                         .path = tau_url_str(&u),
                         .accept = "text/plain, application/problem+json;q=0.5",
                         .sink = logs_sink,
                         .sink_arg = stdout,
                         .timeout_s = -1};
    int rc = tau_api_req(ctx, &rq, NULL, NULL, NULL);
    tau_url_clean(&u);
    return rc;
}

/* ---- cancel, resume ----------------------------------------------------------------- */

static void runs_action_done(const tau_ctx_t *ctx, const char *id, const char *what,
                             const json_t *run)
{
    if (tau_out_structured(ctx, run ? run : json_object()))
        return;
    const char *state = tau_json_str(run, "state");
    const char *rid = tau_json_str(run, "id");
    printf("Run %s %s", rid ? rid : id, what);
    if (state) {
        fputs(" (state ", stdout);
        tau_print_clean(stdout, state);
        fputc(')', stdout);
    }
    fputs(".\n", stdout);
}

int tau_cmd_cancel(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    runs_url(&u, a->pos[0], ":cancel");
    json_t *out = NULL;
    int rc = tau_api(ctx, "POST", tau_url_str(&u), NULL, &out);
    tau_url_clean(&u);
    if (rc == TAU_EXIT_OK)
        runs_action_done(ctx, a->pos[0], "cancelled", out);
    json_decref(out);
    return rc;
}

const tau_opt_t tau_opts_resume[] = {
    {"force", 0, NULL, "resume even when the configuration or files changed"},
    {NULL, 0, NULL, NULL},
};

int tau_cmd_resume(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    runs_url(&u, a->pos[0], ":resume");
    json_t *body = json_pack("{s:b}", "force", tau_flag(a, "force"));
    json_t *out = NULL;
    int rc = tau_api(ctx, "POST", tau_url_str(&u), body, &out);
    tau_url_clean(&u);
    json_decref(body);
    if (rc == TAU_EXIT_OK)
        runs_action_done(ctx, a->pos[0], "resumed", out);
    json_decref(out);
    return rc;
}

/* ---- events, metrics ------------------------------------------------------------------ */

const tau_opt_t tau_opts_events[] = {
    {"after", 0, "SEQ", "only events after this sequence number"},
    {NULL, 0, NULL, NULL},
};

int tau_cmd_events(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    runs_url(&u, a->pos[0], "/events");
    tau_url_query(&u, "after", tau_arg(a, "after"));
    static const tau_col_t cols[] = {
        {"SEQ", "seq", TAU_COL_TEXT},       {"TIME", "at", TAU_COL_TIME},
        {"STATE", "state", TAU_COL_STATE},  {"REASON", "reason", TAU_COL_TEXT},
        {"SOURCE", "source", TAU_COL_TEXT}, {"MESSAGE", "message", TAU_COL_LONG},
    };
    int rc = tau_list_get(ctx, tau_url_str(&u), cols, (int)TG_ARRAY_LEN(cols));
    tau_url_clean(&u);
    return rc;
}

const tau_opt_t tau_opts_metrics[] = {
    {"name", 0, "METRIC", "every point of one metric instead of the summary"},
    {"attempt", 0, "N", "only this attempt"},
    {"all", 'A', NULL, "with --name, follow next_cursor through every page"},
    {NULL, 0, NULL, NULL},
};

int tau_cmd_metrics(tau_ctx_t *ctx, const tau_args_t *a)
{
    const char *name = tau_arg(a, "name");
    tau_url_t u;
    runs_url(&u, a->pos[0], "/metrics");
    tau_url_query(&u, "name", name);
    tau_url_query(&u, "attempt", tau_arg(a, "attempt"));
    json_t *out = NULL;
    int rc;
    if (name) {
        json_t *items = NULL;
        char *next = NULL;
        rc = tau_api_list(ctx, tau_url_str(&u), tau_flag(a, "all"), &items, &next);
        if (rc == TAU_EXIT_OK)
            out = json_pack("{s:s, s:o, s:o}", "name", name, "items", items, "next_cursor",
                            next ? json_string(next) : json_null());
        else
            json_decref(items);
        free(next);
    } else {
        rc = tau_api(ctx, "GET", tau_url_str(&u), NULL, &out);
    }
    tau_url_clean(&u);
    if (rc != TAU_EXIT_OK || tau_out_structured(ctx, out)) {
        json_decref(out);
        return rc;
    }
    static const tau_col_t summary[] = {
        {"NAME", "name", TAU_COL_TEXT},        {"LATEST", "latest.value", TAU_COL_TEXT},
        {"STEP", "latest.step", TAU_COL_TEXT}, {"MIN", "min", TAU_COL_TEXT},
        {"MAX", "max", TAU_COL_TEXT},          {"COUNT", "count", TAU_COL_TEXT},
        {"UPDATED", "latest.at", TAU_COL_AGE},
    };
    static const tau_col_t points[] = {
        {"STEP", "step", TAU_COL_TEXT},
        {"VALUE", "value", TAU_COL_TEXT},
        {"ATTEMPT", "attempt", TAU_COL_TEXT},
        {"TIME", "at", TAU_COL_TIME},
    };
    if (name)
        tau_out_items(ctx, json_object_get(out, "items"), points, (int)TG_ARRAY_LEN(points));
    else
        tau_out_items(ctx, json_object_get(out, "items"), summary, (int)TG_ARRAY_LEN(summary));
    if (name && json_string_value(json_object_get(out, "next_cursor")))
        tau_note(ctx, "(more points: pass --all)");
    json_decref(out);
    return rc;
}

/* ---- checkpoints ------------------------------------------------------------------------ */

const tau_opt_t tau_opts_checkpoints[] = {{NULL, 0, NULL, NULL}};

int tau_cmd_checkpoints(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    runs_url(&u, a->pos[0], "/checkpoints");
    json_t *out = NULL;
    int rc = tau_api(ctx, "GET", tau_url_str(&u), NULL, &out);
    tau_url_clean(&u);
    if (rc != TAU_EXIT_OK || tau_out_structured(ctx, out)) {
        json_decref(out);
        return rc;
    }
    /* one row per checkpoint: the answer groups them by attempt */
    json_t *rows = json_array();
    size_t i, j;
    json_t *group, *cp;
    json_array_foreach(json_object_get(out, "items"), i, group) {
        json_array_foreach(json_object_get(group, "items"), j, cp) {
            json_t *row = json_deep_copy(cp);
            json_object_set(row, "attempt", json_object_get(group, "attempt"));
            json_array_append_new(rows, row);
        }
    }
    static const tau_col_t cols[] = {
        {"ATTEMPT", "attempt", TAU_COL_TEXT},
        {"STEP", "step", TAU_COL_TEXT},
        {"PATH", "path", TAU_COL_TEXT},
        {"TIME", "at", TAU_COL_TIME},
    };
    tau_out_items(ctx, rows, cols, (int)TG_ARRAY_LEN(cols));
    const char *latest = tau_json_str(json_object_get(out, "latest"), "path");
    if (latest)
        tau_note(ctx, "A resume starts from %s.", latest);
    json_decref(rows);
    json_decref(out);
    return rc;
}
