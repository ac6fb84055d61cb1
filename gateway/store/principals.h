/* Identity facts in PostgreSQL: personal access tokens and workspace roles. */
#ifndef TG_STORE_PRINCIPALS_H
#define TG_STORE_PRINCIPALS_H

#include <jansson.h>

#include "store/pool.h"

/* A new personal access token. The minter's groups and platform-admin
 * standing are kept with it because a token carries no identity claims of
 * its own: at use its role is re-derived from them (api/authz.c). */
typedef struct {
    const char *id, *sha256, *subject, *name, *workspace, *role;
    const char *minter_groups; /* PostgreSQL array literal */
    int minter_admin;
    int days; /* lifetime */
} tg_store_token_t;

/* A live token by the sha256 of its secret (marks it used). *out gets
 * {subject, workspace, role, groups: [..], admin: bool} (groups and admin
 * as of mint time); TG_ENOTFOUND when unknown, revoked or expired. */
tg_rc_e tg_store_token_lookup(tg_db_conn_t *conn, const char *sha256, json_t **out) TG_MUSTCHECK;
/* *live: 1 while the token with this secret digest is neither revoked nor
 * expired (a read: it does not mark the token used). */
tg_rc_e tg_store_token_live(tg_db_conn_t *conn, const char *sha256, int *live) TG_MUSTCHECK;
/* Store a new token; *out gets its public view {id, name, workspace, role,
 * created_at, expires_at}. */
tg_rc_e tg_store_token_insert(tg_db_conn_t *conn, const tg_store_token_t *t,
                              json_t **out) TG_MUSTCHECK;
/* A subject's tokens, newest first (never the secret). */
tg_rc_e tg_store_tokens_list(tg_db_conn_t *conn, const char *subject, json_t **out) TG_MUSTCHECK;
/* Revoke one of the subject's tokens; TG_ENOTFOUND when it is not theirs. */
tg_rc_e tg_store_token_revoke(tg_db_conn_t *conn, const char *subject, const char *id) TG_MUSTCHECK;

/* The roles a subject holds in a workspace, directly or through any of its
 * groups: *roles gets a JSON array of role names (empty when none); *exists
 * tells whether the workspace exists at all. `groups` is a PostgreSQL array
 * literal. */
tg_rc_e tg_store_member_roles(tg_db_conn_t *conn, const char *workspace, const char *subject,
                              const char *groups, json_t **roles, int *exists) TG_MUSTCHECK;
/* The workspaces a subject belongs to, with the best role in each:
 * [{name, namespace, role}]. All of them (role "admin") when `all`. */
tg_rc_e tg_store_member_workspaces(tg_db_conn_t *conn, const char *subject, const char *groups,
                                   int all, json_t **out) TG_MUSTCHECK;

#endif
