/* Kubernetes API results: the HTTP code, the `Status` reason, message and
 * causes, and the parsed body, in one struct every kube/ call fills.
 *
 * Ownership: a tg_kube_result_t owns `body` (one jansson reference) and
 * `message`. `status` and `causes` are borrowed from `body` and live exactly
 * as long as it does. tg_kube_result_clean releases everything; it is safe on
 * a zeroed or already-cleaned result. tg_kube_result_take_body hands the body
 * to the caller (a new reference from the caller's point of view).
 *
 * Thread-safety: a result belongs to one thread; the functions here keep no
 * shared state. */
#ifndef TG_KUBE_RESULT_H
#define TG_KUBE_RESULT_H

#include <jansson.h>
#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"

/* Reasons: the Kubernetes `Status.reason` values a client meets, plus the
 * client-side outcomes that never reach the wire (NETWORK...). */
typedef enum {
    TG_KUBE_R_NONE = 0,                 /* success */
    TG_KUBE_R_UNKNOWN,                  /* a failure with no reason we know */
    TG_KUBE_R_BAD_REQUEST,              /* 400 */
    TG_KUBE_R_UNAUTHORIZED,             /* 401 */
    TG_KUBE_R_FORBIDDEN,                /* 403 */
    TG_KUBE_R_NOT_FOUND,                /* 404 */
    TG_KUBE_R_METHOD_NOT_ALLOWED,       /* 405 */
    TG_KUBE_R_NOT_ACCEPTABLE,           /* 406 */
    TG_KUBE_R_ALREADY_EXISTS,           /* 409 on create */
    TG_KUBE_R_CONFLICT,                 /* 409 on update (stale resourceVersion) */
    TG_KUBE_R_GONE,                     /* 410 */
    TG_KUBE_R_EXPIRED,                  /* 410: too old resourceVersion / continue token */
    TG_KUBE_R_REQUEST_ENTITY_TOO_LARGE, /* 413 */
    TG_KUBE_R_UNSUPPORTED_MEDIA_TYPE,   /* 415 */
    TG_KUBE_R_INVALID,                  /* 422, with causes */
    TG_KUBE_R_TOO_MANY_REQUESTS,        /* 429 */
    TG_KUBE_R_INTERNAL_ERROR,           /* 500 */
    TG_KUBE_R_SERVICE_UNAVAILABLE,      /* 503 */
    TG_KUBE_R_TIMEOUT,                  /* 504 "Timeout" */
    TG_KUBE_R_SERVER_TIMEOUT,           /* 500/504 "ServerTimeout" */
    /* client side */
    TG_KUBE_R_NETWORK,        /* connect, TLS, reset: no HTTP answer */
    TG_KUBE_R_CLIENT_TIMEOUT, /* our connect or total timeout ran out */
    TG_KUBE_R_TOO_LARGE,      /* the response or one event passed our ceiling */
    TG_KUBE_R_DECODE,         /* the answer was not the JSON we expected */
    TG_KUBE_R_CANCELLED,      /* the caller's stop flag was raised */
    TG_KUBE_R_CONFIG,         /* bad arguments or client configuration */
    TG_KUBE_R_COUNT
} tg_kube_reason_e;

typedef struct tg_kube_result_s {
    tg_rc_e rc;              /* TG_OK or the mapped error (tg_kube_reason_rc) */
    long http_code;          /* last HTTP status; 0 when none came back */
    tg_kube_reason_e reason; /* TG_KUBE_R_NONE on success */
    char *message;           /* owned; Status.message, or our own text; NULL on success */
    json_t *body;            /* owned reference: the parsed JSON answer, or NULL */
    json_t *status;          /* borrowed from body: the Status object, or NULL */
    json_t *causes;          /* borrowed from body: Status.details.causes array, or NULL */
    int attempts;            /* HTTP attempts made (1 when no retry happened) */
    /* The request was sent more than once. A create that ends in
     * ALREADY_EXISTS with `retried` set may have been created by an earlier
     * attempt of this very call: the caller checks the object's identity
     * (e.g. its run-id label) and treats a match as success. Same for a
     * retried delete that ends in NOT_FOUND. */
    int retried;
    long retry_after_s; /* Retry-After of the last answer, or -1 */
} tg_kube_result_t;

/* Zero a result (reason NONE, retry_after_s -1). */
void tg_kube_result_init(tg_kube_result_t *r);
/* Release body and message; leaves the result as after init. NULL-safe. */
void tg_kube_result_clean(tg_kube_result_t *r);
/* Take ownership of the body (new reference for the caller); the result no
 * longer refers to it, nor to status/causes. */
json_t *tg_kube_result_take_body(tg_kube_result_t *r);

/* Fill `r` from an HTTP answer. `body` is stolen (may be NULL); when it is a
 * `Status` object its reason/message/causes are used, otherwise the reason
 * comes from the HTTP code and `text` (the raw body, may be NULL; only its
 * first 256 bytes are kept) becomes the message. Codes 2xx are success. */
void tg_kube_result_from_http(tg_kube_result_t *r, long http_code, json_t *body, const char *text,
                              size_t text_len);
/* Mark `r` as a client-side failure with a message (printf-style). */
void tg_kube_result_fail(tg_kube_result_t *r, tg_kube_reason_e reason, const char *fmt, ...)
    TG_PRINTF(3, 4);

/* "NotFound" → TG_KUBE_R_NOT_FOUND; unknown or NULL → TG_KUBE_R_UNKNOWN. */
tg_kube_reason_e tg_kube_reason_parse(const char *s);
/* The Kubernetes spelling ("NotFound"); client-side reasons get their own
 * names ("Network", "ClientTimeout"...). Never NULL. */
const char *tg_kube_reason_name(tg_kube_reason_e reason);
/* The reason an HTTP code implies when the body has none. */
tg_kube_reason_e tg_kube_reason_from_http(long http_code);

/* Map a reason to taugate's status. The mapping answers "what does this mean
 * for the gateway", not "what did Kubernetes say":
 *   NOT_FOUND → TG_ENOTFOUND, ALREADY_EXISTS/CONFLICT → TG_ECONFLICT,
 *   INVALID → TG_EUNPROCESSABLE, BAD_REQUEST → TG_EINVAL,
 *   UNAUTHORIZED/FORBIDDEN → TG_EUPSTREAM (the gateway's own credentials or
 *   RBAC are at fault, never the end user's: do not relay a 401/403),
 *   TOO_MANY_REQUESTS/SERVICE_UNAVAILABLE/NETWORK → TG_EUNAVAILABLE,
 *   TIMEOUT/SERVER_TIMEOUT/CLIENT_TIMEOUT → TG_ETIMEOUT,
 *   TOO_LARGE → TG_ETOOLARGE, CONFIG → TG_EINVAL, everything else →
 *   TG_EUPSTREAM. */
tg_rc_e tg_kube_reason_rc(tg_kube_reason_e reason);

/* Is it worth sending the same request again later (429, 5xx, network,
 * client timeout)? */
int tg_kube_reason_transient(tg_kube_reason_e reason);

#endif
