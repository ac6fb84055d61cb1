/* The authenticated caller: who (subject), how to show them (name, email),
 * what they belong to (groups), and whether they are a platform admin.
 *
 * Filled from verified JWT claims by tg_auth_verify, or by the caller from a
 * personal access token's database row. Workspace roles are not here: they
 * come from workspace_members, looked up by subject and groups. */
#ifndef TG_AUTH_PRINCIPAL_H
#define TG_AUTH_PRINCIPAL_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "auth/list.h"
#include "core/mem.h"

/* Groups past this many are ignored; so are names longer than the second. */
#define TG_PRINCIPAL_MAX_GROUPS           256
#define TG_PRINCIPAL_MAX_GROUP_LEN        256
#define TG_PRINCIPAL_DEFAULT_GROUPS_CLAIM "groups"
#define TG_PRINCIPAL_DEFAULT_NAME_CLAIMS  "name,preferred_username,email"

typedef enum {
    TG_PRINCIPAL_NONE = 0,
    TG_PRINCIPAL_JWT,
    TG_PRINCIPAL_PAT,
} tg_principal_kind_e;

typedef struct tg_principal_s {
    tg_principal_kind_e kind;
    char *subject; /* owned; the "sub" claim (non-empty once filled) */
    char *issuer;  /* owned; "iss", NULL for a PAT */
    char *name;    /* owned; first of the name claims present, else subject */
    char *email;   /* owned; NULL when absent */
    char **groups; /* owned strings, no duplicates */
    size_t n_groups;
    int is_admin;      /* platform admin, by group or subject from config */
    time_t expires_at; /* exp; 0 when unknown */
} tg_principal_t;

typedef struct tg_principal_policy_s {
    /* Claim holding the groups: a top-level member name (which may itself
     * contain dots, as in "https://example.com/groups"), else a dotted path
     * into nested objects ("realm_access.roles"). NULL → "groups". The value
     * may be an array of strings or a single string. */
    const char *groups_claim;
    const tg_auth_list_t *name_claims;    /* NULL → name,preferred_username,email */
    const tg_auth_list_t *admin_groups;   /* may be NULL */
    const tg_auth_list_t *admin_subjects; /* may be NULL */
} tg_principal_policy_t;

void tg_principal_init(tg_principal_t *p);
/* Free everything and leave `p` initialised. NULL-safe. */
void tg_principal_clean(tg_principal_t *p);
/* Add a copy of `g` unless present, empty, too long or over the limit.
 * RET: 1 added, 0 not. */
int tg_principal_add_group(tg_principal_t *p, const char *g);
int tg_principal_in_group(const tg_principal_t *p, const char *g);

/* Fill `p` (initialised, empty) from verified claims (borrowed; must hold a
 * string "sub", as tg_auth_jwt_check_claims ensures). Sets is_admin. The
 * groups claim, when present, must be an array of strings (empty, over-long
 * and surplus ones are dropped). RET: 0, or -1 when the groups claim has
 * another shape (the token is then refused; clean `p` either way). */
int tg_principal_from_claims(tg_principal_t *p, json_t *claims,
                             const tg_principal_policy_t *pol) TG_MUSTCHECK;

/* Set p->is_admin: the subject is in admin_subjects or a group in
 * admin_groups (either list may be NULL). */
void tg_principal_apply_admin(tg_principal_t *p, const tg_auth_list_t *admin_groups,
                              const tg_auth_list_t *admin_subjects);

#endif
