/* One status enum for the whole daemon, mapped to HTTP in exactly one place. */
#ifndef TG_CORE_STATUS_H
#define TG_CORE_STATUS_H

typedef enum {
    TG_OK = 0,
    TG_EINVAL,         /* malformed input: 400 */
    TG_EUNPROCESSABLE, /* well-formed but semantically invalid: 422 */
    TG_EUNAUTH,        /* missing or bad credentials: 401 */
    TG_EFORBIDDEN,     /* authenticated, not allowed: 403 */
    TG_ENOTFOUND,      /* 404 (also another tenant's object) */
    TG_EMETHOD,        /* 405 */
    TG_ENOTACCEPT,     /* 406 */
    TG_ECONFLICT,      /* 409 */
    TG_ETOOLARGE,      /* 413 */
    TG_EMEDIATYPE,     /* 415 */
    TG_ERATELIMIT,     /* 429 */
    TG_EINTERNAL,      /* 500 */
    TG_EUNAVAILABLE,   /* database or dependency unreachable: 503 */
    TG_EUPSTREAM,      /* Kubernetes answered badly: 502 */
    TG_ETIMEOUT,       /* 504 */
    TG_RC_COUNT
} tg_rc_e;

/* HTTP status code for a status. */
unsigned tg_rc_http_status(tg_rc_e rc);
/* Stable problem type slug ("not-found") used in problem+json `type` URIs. */
const char *tg_rc_slug(tg_rc_e rc);
/* Human title ("Not Found"). */
const char *tg_rc_title(tg_rc_e rc);

#endif
