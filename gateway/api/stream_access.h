/* Access re-checks for long-lived responses (Server-Sent Event streams).
 *
 * A stream outlives the check made when it was opened: the caller may lose
 * the workspace membership, the role, or the credential itself while it is
 * open. tg_stream_access_new copies what the request authenticated (the
 * principal, the workspace, the role the stream needs); the stream's owner
 * calls tg_stream_access_check from its own thread, with a database
 * connection, every few seconds, and ends the stream (reason "revoked")
 * when it answers 0. The check reads roles through the tenancy cache, which
 * PostgreSQL's NOTIFY taugate_tenancy voids on every membership change, so
 * it costs no query while nothing changed; a personal access token is
 * looked up again (revoked or expired), and a JWT ends at its `exp`.
 *
 * Thread-safety: an access is immutable after creation; check it from any
 * one thread at a time. */
#ifndef TG_API_STREAM_ACCESS_H
#define TG_API_STREAM_ACCESS_H

#include <stdint.h>

#include "api/authz.h"
#include "http/request.h"
#include "store/pool.h"

struct tg_tenancy_cache_s;

typedef struct tg_stream_access_s tg_stream_access_t;

/* What the request was allowed: its principal (copied), the workspace and
 * the role needed there. Call after the request passed its checks. */
tg_stream_access_t *tg_stream_access_new(tg_req_t *req, const char *workspace, tg_role_e need);
void tg_stream_access_free(tg_stream_access_t *a);

typedef enum {
    TG_ACCESS_ALLOWED = 1,
    TG_ACCESS_REVOKED = 0,  /* the role, the membership or the token is gone */
    TG_ACCESS_UNKNOWN = -1, /* the database could not say; ask again later */
} tg_access_e;

/* Is the access still granted at wall time now_us? */
tg_access_e tg_stream_access_check(const tg_stream_access_t *a, struct tg_tenancy_cache_s *tc,
                                   tg_db_conn_t *conn, int64_t now_us);

#endif
