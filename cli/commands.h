/* Command handlers and their option tables, one module per area:
 *   commands_auth.c    version, login, logout
 *   commands_ws.c      workspaces, quota/queues, profiles, token
 *   commands_runs.c    runs, status, logs, cancel, resume, events, metrics
 *   commands_submit.c  run, validate
 *   evidence.c         evidence (and --verify)
 *   commands_admin.c   admin: the catalogue, members, queues, audit, usage, quota requests
 *   commands_nodes.c   admin nodes, fleet, drift
 *   commands_policies.c admin policies
 *   commands_api.c     api (any request, gh api-style)
 *   completion.c       completion bash|zsh|fish
 * The tree itself is in main.c. */
#ifndef TAU_COMMANDS_H
#define TAU_COMMANDS_H

#include <jansson.h>

#include "cmd.h"

/* The workspace for a command: -w, else TAU_WORKSPACE, else the config's;
 * NULL (after printing a usage error) when there is none. */
const char *tau_need_workspace(tau_ctx_t *ctx, const tau_args_t *a);

extern const tau_opt_t tau_opts_none[];
extern const tau_opt_t tau_opts_ws[];

int tau_cmd_version(tau_ctx_t *ctx, const tau_args_t *a);
extern const tau_opt_t tau_opts_login[];
int tau_cmd_login(tau_ctx_t *ctx, const tau_args_t *a);
int tau_cmd_logout(tau_ctx_t *ctx, const tau_args_t *a);

int tau_cmd_workspaces(tau_ctx_t *ctx, const tau_args_t *a);
int tau_cmd_quota(tau_ctx_t *ctx, const tau_args_t *a);
int tau_cmd_profiles(tau_ctx_t *ctx, const tau_args_t *a);
extern const tau_cmd_t tau_token_subs[];

extern const tau_opt_t tau_opts_runs[];
int tau_cmd_runs(tau_ctx_t *ctx, const tau_args_t *a);
extern const tau_opt_t tau_opts_status[];
int tau_cmd_status(tau_ctx_t *ctx, const tau_args_t *a);
extern const tau_opt_t tau_opts_logs[];
int tau_cmd_logs(tau_ctx_t *ctx, const tau_args_t *a);
int tau_cmd_cancel(tau_ctx_t *ctx, const tau_args_t *a);
extern const tau_opt_t tau_opts_resume[];
int tau_cmd_resume(tau_ctx_t *ctx, const tau_args_t *a);
extern const tau_opt_t tau_opts_events[];
int tau_cmd_events(tau_ctx_t *ctx, const tau_args_t *a);
extern const tau_opt_t tau_opts_metrics[];
int tau_cmd_metrics(tau_ctx_t *ctx, const tau_args_t *a);

/* Follow a run until it ends, printing each new event on stderr. Returns
 * 0 Succeeded, 1 Failed/Cancelled or timed out, or an error exit code. */
int tau_follow_run(tau_ctx_t *ctx, const char *run_id, long interval_s, long timeout_s,
                   int print_events, json_t **final_run);

extern const tau_opt_t tau_opts_run[];
int tau_cmd_run(tau_ctx_t *ctx, const tau_args_t *a);
extern const tau_opt_t tau_opts_validate[];
int tau_cmd_validate(tau_ctx_t *ctx, const tau_args_t *a);

extern const tau_opt_t tau_opts_evidence[];
int tau_cmd_evidence(tau_ctx_t *ctx, const tau_args_t *a);

extern const tau_cmd_t tau_admin_subs[];

extern const tau_cmd_t tau_nodes_verbs[];
int tau_cmd_fleet(tau_ctx_t *ctx, const tau_args_t *a);
extern const tau_opt_t tau_opts_drift[];
int tau_cmd_drift(tau_ctx_t *ctx, const tau_args_t *a);

extern const tau_cmd_t tau_policies_verbs[];

extern const tau_opt_t tau_opts_api[];
int tau_cmd_api(tau_ctx_t *ctx, const tau_args_t *a);

extern const tau_opt_t tau_opts_checkpoints[];
int tau_cmd_checkpoints(tau_ctx_t *ctx, const tau_args_t *a);

int tau_cmd_completion(tau_ctx_t *ctx, const tau_args_t *a);
/* `tau __complete WORD... CURRENT`: the candidates for CURRENT after the
 * words before it, then a directive line (completion.c). Returns 0. */
int tau_complete(const tau_cmd_t *root, int nwords, char **words);

/* The objects in the -f file of `a`: one object, a list, or {items: [...]}
 * (new reference); NULL after printing a usage error. */
json_t *tau_load_objects_arg(tau_ctx_t *ctx, const tau_args_t *a);

#endif
