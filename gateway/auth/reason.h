/* Why a credential was refused: a stable enum, a short label for metrics and
 * logs, and the WWW-Authenticate value to send with the 401.
 *
 * The labels are part of the metrics contract (taugate_auth_failures_total
 * {reason="..."}): add new reasons at the end and never rename one. */
#ifndef TG_AUTH_REASON_H
#define TG_AUTH_REASON_H

typedef enum {
    TG_AUTH_OK = 0,          /* "ok" */
    TG_AUTH_MISSING,         /* no Authorization header, or an empty one */
    TG_AUTH_MALFORMED,       /* not "Bearer <JWS compact>", bad base64url, header not
                              * JSON, crit/enc/zip present, bad typ or kid */
    TG_AUTH_TOO_LARGE,       /* over max_token_bytes; refused before parsing */
    TG_AUTH_ALG_NOT_ALLOWED, /* none, unsupported, or not the alg the key is pinned to */
    TG_AUTH_UNKNOWN_KEY,     /* kid not in the key set (after any permitted refetch) */
    TG_AUTH_BAD_SIGNATURE,   /* signature does not verify (or has the wrong length) */
    TG_AUTH_EXPIRED,         /* exp + leeway has passed */
    TG_AUTH_NOT_YET_VALID,   /* nbf or iat is ahead of now + leeway */
    TG_AUTH_WRONG_ISSUER,    /* iss missing or not the configured issuer */
    TG_AUTH_WRONG_AUDIENCE,  /* aud missing or names none of ours */
    TG_AUTH_BAD_CLAIMS,      /* claims not a JSON object, exp missing, wrong types, no sub,
                              * groups not an array of strings */
    TG_AUTH_LIFETIME,        /* exp - iat or exp - now over the configured maximum */
    TG_AUTH_REASON_COUNT
} tg_auth_reason_e;

/* Stable short label: "missing", "malformed", "too_large", "alg_not_allowed",
 * "unknown_key", "bad_signature", "expired", "not_yet_valid", "wrong_issuer",
 * "wrong_audience", "bad_claims", "lifetime" ("ok" for TG_AUTH_OK). */
const char *tg_auth_reason_str(tg_auth_reason_e r);

/* The WWW-Authenticate header value for a 401 with this reason (a static
 * string). Per RFC 6750 §3.1 a request with no credentials gets only
 * `Bearer realm="taugate"`; every other reason gets error="invalid_token" and
 * a general description. Nothing from the request is ever echoed. */
const char *tg_auth_www_authenticate(tg_auth_reason_e r);

#endif
