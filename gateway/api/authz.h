/* Who is asking, and what they may do.
 *
 * The principal is set by the server's `before` hook (api/authn.c). Roles
 * are per workspace: admin > researcher > viewer; platform admins hold
 * every role everywhere. Another tenant's workspace is answered 404, never
 * 403, so its existence does not leak. */
#ifndef TG_API_AUTHZ_H
#define TG_API_AUTHZ_H

#include <jansson.h>
#include <stdint.h>

#include "http/request.h"
#include "store/pool.h"

typedef enum {
    TG_ROLE_NONE = 0,
    TG_ROLE_VIEWER,
    TG_ROLE_RESEARCHER,
    TG_ROLE_ADMIN,
} tg_role_e;

typedef struct tg_who_s {
    const char *subject;
    const char *name;
    const char **groups;
    int ngroups;
    int is_admin;              /* platform admin (never for a personal access token) */
    const char *pat_workspace; /* for a personal access token: its scope */
    tg_role_e pat_role;
    /* For a personal access token: its minter was a platform admin when it
     * minted it. Counts as the admin role in pat_workspace only; it opens
     * no admin route. `groups` are then the minter's at mint time. */
    int pat_admin;
    /* For a personal access token: the sha256 of its secret (hex), so an
     * open stream can tell whether it was revoked since. */
    const char *pat_sha256;
    /* When the credential stops being valid (a JWT's exp; 0 when unknown or
     * for a personal access token, whose expiry is checked in the database). */
    int64_t expires_at;
} tg_who_t;

/* The request's principal (never NULL past authentication). */
const tg_who_t *tg_who(const tg_req_t *req);
tg_role_e tg_role_parse(const char *s);
const char *tg_role_name(tg_role_e r);
/* The principal's groups as a PostgreSQL array literal (arena memory). */
const char *tg_who_groups_literal(tg_req_t *req);

/* The role `who` holds in `ws`, given the roles its subject and groups hold
 * there (`roles`, a JSON array of role names, borrowed) and whether the
 * workspace exists: the rule of tg_authz_role_or_reply, for callers with no
 * request (an open stream re-checking its access). */
tg_role_e tg_authz_role_from(const tg_who_t *who, const char *ws, const json_t *roles, int exists);
/* The caller's role in `ws` (TG_ROLE_NONE when not a member or when the
 * workspace does not exist). Answers 503 and returns -1 when the database
 * cannot say. */
int tg_authz_role_or_reply(tg_req_t *req, const char *ws, tg_role_e *have);
/* The caller's role in `ws` when it is at least `need`; otherwise answers
 * 404 (no such workspace, or not a member), 403 (a role too low) or 503,
 * and returns TG_ROLE_NONE. */
tg_role_e tg_authz_workspace_or_reply(tg_req_t *req, const char *ws, tg_role_e need);
/* For reading `ws`'s things: the database connection once the caller holds
 * at least `need` there; otherwise answers as above and returns NULL. */
tg_db_conn_t *tg_authz_workspace_db_or_reply(tg_req_t *req, const char *ws, tg_role_e need);

#endif
