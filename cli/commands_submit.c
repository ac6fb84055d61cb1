/* run and validate: pack a tau.yaml with its files and send it. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "core/ids.h"
#include "http.h"
#include "output.h"
#include "pack.h"
#include "problem.h"

#define TAU_PROBLEM_VALIDATION "https://taugate.dev/problems/validation-failed"

#define SUBMIT_BODY_MAX (24u * 1024 * 1024)

#define SUBMIT_COMMON_OPTS                                                                         \
    {"workspace", 'w', "WS",                                                                       \
     "the workspace (default: policy.workspace, TAU_WORKSPACE, the config's)"},                    \
        {"encoding", 0, "ENC", "request body: multipart (default) or json"},                       \
    {                                                                                              \
        "dry-pack", 0, "OUT", NULL                                                                 \
    }

const tau_opt_t tau_opts_run[] = {
    SUBMIT_COMMON_OPTS,
    {"wait", 0, NULL, "follow the run until it ends; exit 1 when it fails or is cancelled"},
    {"interval", 0, "SECONDS", "polling interval for --wait (default 2)"},
    {"timeout", 0, "DURATION", "with --wait, give up after this long (e.g. 30m; exit 1)"},
    {"idempotency-key", 0, "KEY", "reuse a key to make a repeated submission return the same run"},
    {NULL, 0, NULL, NULL},
};

const tau_opt_t tau_opts_validate[] = {
    SUBMIT_COMMON_OPTS,
    {NULL, 0, NULL, NULL},
};

typedef struct {
    tau_pack_t pack;
    tg_buf_t body;
    char ctype[128];
    const char *ws;
    char *dir_spec; /* FILE/tau.yaml when FILE is a folder */
} submit_t;

static size_t submit_project_max(const tau_ctx_t *ctx)
{
    const char *env = getenv("TAU_MAX_PROJECT_BYTES");
    if (env && *env) {
        char *end = NULL;
        unsigned long long v = strtoull(env, &end, 10);
        if (!*end && v > 0 && v <= 64ull * 1024 * 1024)
            return (size_t)v;
        tau_warn(ctx, "ignoring TAU_MAX_PROJECT_BYTES=%s (not a size in bytes)", env);
    }
    return TAU_PACK_PROJECT_MAX;
}

/* Report what is wrong with the submission before anything was sent: each
 * problem as FILE:LINE:COLUMN: path: message on stderr and, with -o
 * json|yaml|jsonpath, a problem document in the gateway's shape on stdout
 * (so `tau validate -o json` always prints one). Takes `problems`. */
static int submit_local_problems(const tau_ctx_t *ctx, const char *file, json_t *problems)
{
    size_t n = json_array_size(problems);
    const char *first = json_string_value(json_object_get(json_array_get(problems, 0), "message"));
    json_t *doc =
        json_pack("{s:s, s:s, s:s?, s:O}", "type", TAU_PROBLEM_VALIDATION, "title",
                  "Invalid submission", "detail", n == 1 ? first : NULL, "errors", problems);
    if (doc && n != 1) {
        char detail[256];
        snprintf(detail, sizeof(detail), "%zu problems with %s", n, file);
        json_object_set_new(doc, "detail", json_string(detail));
    }
    if (doc && !tau_fmt_human(ctx))
        tau_out_structured(ctx, doc);
    size_t i;
    json_t *e;
    json_array_foreach(problems, i, e) tau_problem_entry(stderr, e, file, NULL);
    json_decref(doc);
    json_decref(problems);
    return TAU_EXIT_USAGE;
}

/* Pack and encode. Writes the body to --dry-pack OUT when given (*done set).
 * Returns 0 or an exit code. */
static int submit_prepare(tau_ctx_t *ctx, const tau_args_t *a, submit_t *s, int *done)
{
    *done = 0;
    const char *path = a->npos ? a->pos[0] : "tau.yaml";
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* tau run DIR: DIR/tau.yaml */
        size_t n = strlen(path);
        s->dir_spec = tg_xmalloc(n + 10);
        snprintf(s->dir_spec, n + 10, "%s%stau.yaml", path, n && path[n - 1] == '/' ? "" : "/");
        path = s->dir_spec;
    }
    const char *enc_s = tau_arg(a, "encoding");
    tau_enc_e enc = TAU_ENC_MULTIPART;
    if (enc_s && strcmp(enc_s, "json") == 0)
        enc = TAU_ENC_JSON;
    else if (enc_s && strcmp(enc_s, "multipart") != 0)
        return tau_usage_error(ctx, "--encoding must be multipart or json (got '%s')", enc_s);
    json_t *problems = NULL;
    int rc = tau_pack_load(ctx, path, submit_project_max(ctx), &s->pack, &problems);
    if (rc != TAU_EXIT_OK)
        return submit_local_problems(ctx, path, problems);
    tg_buf_init(&s->body, SUBMIT_BODY_MAX);
    if (tau_pack_body(&s->pack, enc, &s->body, s->ctype, sizeof(s->ctype)) != 0)
        return tau_fail(ctx, TAU_EXIT_USAGE,
                        "cannot encode the submission (too large, or %s is not UTF-8 text)", path);
    const char *dry = tau_arg(a, "dry-pack");
    if (dry) {
        FILE *f = fopen(dry, "wb");
        if (!f || fwrite(s->body.data, 1, s->body.len, f) != s->body.len) {
            if (f)
                fclose(f);
            return tau_fail(ctx, TAU_EXIT_USAGE, "cannot write %s", dry);
        }
        if (fclose(f) != 0)
            return tau_fail(ctx, TAU_EXIT_USAGE, "cannot write %s", dry);
        printf("%s\n", s->ctype);
        for (size_t i = 0; i < s->pack.nfiles; i++)
            tau_note(ctx, "packed %s (%zu bytes)", s->pack.files[i].name, s->pack.files[i].len);
        *done = 1;
        return TAU_EXIT_OK;
    }
    if (!ctx->gateway)
        return tau_fail(ctx, TAU_EXIT_USAGE,
                        "no gateway: run `tau login --gateway URL` or set TAU_GATEWAY");
    s->ws = tau_arg(a, "workspace");
    if (!s->ws || !*s->ws)
        s->ws = s->pack.workspace;
    if (!s->ws && !(s->ws = tau_need_workspace(ctx, a)))
        return TAU_EXIT_USAGE;
    return TAU_EXIT_OK;
}

static void submit_clean(submit_t *s)
{
    tau_pack_clean(&s->pack);
    tg_buf_clean(&s->body);
    free(s->dir_spec);
}

/* POST the body to /v1/workspaces/{ws}/runs<suffix>. */
static int submit_send(tau_ctx_t *ctx, submit_t *s, const char *suffix, const char *key,
                       json_t **out, tau_api_meta_t *meta)
{
    tau_url_t u;
    tau_url_init(&u);
    tau_url_lit(&u, "/v1/workspaces");
    tau_url_seg(&u, s->ws);
    tau_url_lit(&u, suffix);
    tau_http_req_t rq = {.method = "POST",
                         .path = tau_url_str(&u),
                         .body = s->body.data,
                         .body_len = s->body.len,
                         .content_type = s->ctype,
                         .idempotency_key = key,
                         .upload_progress = 1,
                         .timeout_s = 300};
    int rc = tau_api_req(ctx, &rq, s->pack.spec_path, out, meta);
    tau_url_clean(&u);
    return rc;
}

static void submit_warnings(const tau_ctx_t *ctx, const json_t *out, const char *file)
{
    size_t i;
    json_t *w;
    (void)ctx;
    json_array_foreach(json_object_get(out, "warnings"), i, w)
    {
        if (json_is_string(w)) {
            fprintf(stderr, "%s: warning: ", file);
            tau_print_clean(stderr, json_string_value(w));
            fputc('\n', stderr);
        } else {
            tau_problem_entry(stderr, w, file, "warning");
        }
    }
}

int tau_cmd_validate(tau_ctx_t *ctx, const tau_args_t *a)
{
    submit_t s;
    memset(&s, 0, sizeof(s));
    int done = 0;
    json_t *out = NULL;
    int rc = submit_prepare(ctx, a, &s, &done);
    if (rc != TAU_EXIT_OK || done)
        goto out;
    char key[TG_UUID_LEN + 1];
    tg_uuid_v4(key);
    tau_api_meta_t meta;
    rc = submit_send(ctx, &s, "/runs:validate", key, &out, &meta);
    if (rc != TAU_EXIT_OK) {
        /* the problem document is validate's answer: print it for scripts */
        if (meta.problem && !tau_fmt_human(ctx))
            tau_out_structured(ctx, meta.problem);
        json_decref(meta.problem);
        goto out;
    }
    submit_warnings(ctx, out, s.pack.spec_path);
    if (!tau_out_structured(ctx, out ? out : json_null())) {
        const char *engine = json_string_value(tau_json_path(out, "resolved.engine"));
        const char *hash = json_string_value(json_object_get(out, "config_hash"));
        printf("%s is valid", s.pack.spec_path);
        if (engine)
            printf(" (engine %s)", engine);
        printf(".\n");
        if (hash)
            tau_out_kv(ctx, "Config hash", hash);
    }
out:
    json_decref(out);
    submit_clean(&s);
    return rc;
}

/* "Run ID Failed: BackoffLimitExceeded (exit code 3)." for a run that
 * ended; the exit code is the current attempt's. */
static void submit_final_note(const tau_ctx_t *ctx, const char *id, const json_t *run)
{
    const char *state = json_string_value(json_object_get(run, "state"));
    const char *reason = json_string_value(json_object_get(run, "reason"));
    if (!tau_state_terminal(state))
        return;
    json_int_t current = json_integer_value(json_object_get(run, "attempt"));
    const json_t *exit_code = NULL;
    size_t i;
    json_t *at;
    json_array_foreach(json_object_get(run, "attempts"), i, at)
    {
        if (json_integer_value(json_object_get(at, "attempt")) == current)
            exit_code = json_object_get(at, "exit_code");
    }
    char code[48] = "";
    if (json_is_integer(exit_code) && strcmp(state, "Succeeded") != 0)
        snprintf(code, sizeof(code), " (exit code %" JSON_INTEGER_FORMAT ")",
                 json_integer_value(exit_code));
    tau_note(ctx, "Run %s %s%s%s%s.", id, state, reason ? ": " : "", reason ? reason : "", code);
}

int tau_cmd_run(tau_ctx_t *ctx, const tau_args_t *a)
{
    submit_t s;
    memset(&s, 0, sizeof(s));
    int done = 0;
    json_t *out = NULL, *fin = NULL;
    char err[256];
    long interval = 2, timeout = 0;
    int rc = TAU_EXIT_OK;
    if (tau_arg_long(a, "interval", 1, 3600, 2, &interval, err, sizeof(err)) != 0) {
        rc = tau_usage_error(ctx, "%s", err);
        goto out;
    }
    if (tau_arg(a, "timeout") && (timeout = tau_parse_duration(tau_arg(a, "timeout"))) < 0) {
        rc = tau_usage_error(ctx, "--timeout must be a duration such as 90s, 30m or 2h");
        goto out;
    }
    const char *key_arg = tau_arg(a, "idempotency-key");
    if (key_arg && (!*key_arg || strlen(key_arg) > 128)) {
        rc = tau_usage_error(ctx, "--idempotency-key must be 1 to 128 characters");
        goto out;
    }
    rc = submit_prepare(ctx, a, &s, &done);
    if (rc != TAU_EXIT_OK || done)
        goto out;
    /* one key for this submission: a retry (here or by the user with
     * --idempotency-key) finds the run the first attempt created */
    char key[TG_UUID_LEN + 1];
    tg_uuid_v4(key);
    tau_api_meta_t meta;
    rc = submit_send(ctx, &s, "/runs", key_arg ? key_arg : key, &out, &meta);
    json_decref(meta.problem);
    if (rc != TAU_EXIT_OK)
        goto out;
    submit_warnings(ctx, out, s.pack.spec_path);
    const char *id = json_string_value(json_object_get(out, "id"));
    if (!id) {
        rc = tau_fail(ctx, TAU_EXIT_NETWORK, "the gateway's answer has no run id");
        goto out;
    }
    if (!tau_out_structured(ctx, out))
        printf("%s\n", id);
    fflush(stdout);
    const char *state = json_string_value(json_object_get(out, "state"));
    if (meta.replayed)
        /* the key was used before: this is that run, not a new one */
        tau_note(ctx,
                 "Replayed: idempotency key %s was already used for run %s (state %s); "
                 "nothing new was submitted.",
                 key_arg ? key_arg : key, id, state ? state : "?");
    else
        tau_note(ctx, "Submitted %s%s to workspace %s (state %s).",
                 s.pack.run_name ? "run " : "a run", s.pack.run_name ? s.pack.run_name : "", s.ws,
                 state ? state : "Accepted");
    if (!tau_flag(a, "wait"))
        goto out;
    rc = tau_follow_run(ctx, id, interval, timeout, 1, &fin);
    if (fin)
        submit_final_note(ctx, id, fin);
out:
    json_decref(fin);
    json_decref(out);
    submit_clean(&s);
    return rc;
}
