/* Access re-checks for open streams (see stream_access.h). */
#include "api/stream_access.h"

#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "store/principals.h"
#include "store/tenancy_cache.h"

struct tg_stream_access_s {
    tg_who_t who; /* strings below are owned */
    char *groups; /* PostgreSQL array literal of who.groups */
    char *workspace;
    tg_role_e need;
};

static char *access_dup(const char *s)
{
    return s ? tg_xstrdup(s) : NULL;
}

tg_stream_access_t *tg_stream_access_new(tg_req_t *req, const char *workspace, tg_role_e need)
{
    const tg_who_t *who = tg_who(req);
    tg_stream_access_t *a = tg_xcalloc(1, sizeof(*a));
    a->who = *who;
    a->who.subject = access_dup(who->subject);
    a->who.name = access_dup(who->name);
    a->who.pat_workspace = access_dup(who->pat_workspace);
    a->who.pat_sha256 = access_dup(who->pat_sha256);
    a->who.groups = NULL; /* the roles are read with the literal below */
    a->who.ngroups = 0;
    a->groups = tg_xstrdup(tg_who_groups_literal(req));
    a->workspace = tg_xstrdup(workspace);
    a->need = need;
    return a;
}

void tg_stream_access_free(tg_stream_access_t *a)
{
    if (!a)
        return;
    free((char *)a->who.subject);
    free((char *)a->who.name);
    free((char *)a->who.pat_workspace);
    free((char *)a->who.pat_sha256);
    free(a->groups);
    free(a->workspace);
    free(a);
}

tg_access_e tg_stream_access_check(const tg_stream_access_t *a, struct tg_tenancy_cache_s *tc,
                                   tg_db_conn_t *conn, int64_t now_us)
{
    if (a->who.expires_at > 0 && now_us / 1000000 >= a->who.expires_at)
        return TG_ACCESS_REVOKED;
    if (a->who.pat_sha256) {
        int live = 0;
        if (tg_store_token_live(conn, a->who.pat_sha256, &live) != TG_OK)
            return TG_ACCESS_UNKNOWN;
        if (!live)
            return TG_ACCESS_REVOKED;
    }
    json_t *roles = NULL;
    int exists = 0;
    if (tg_tenancy_roles(tc, conn, a->workspace, a->who.subject, a->groups, &roles, &exists) !=
        TG_OK)
        return TG_ACCESS_UNKNOWN;
    tg_role_e have = tg_authz_role_from(&a->who, a->workspace, roles, exists);
    json_decref(roles);
    return have >= a->need ? TG_ACCESS_ALLOWED : TG_ACCESS_REVOKED;
}
