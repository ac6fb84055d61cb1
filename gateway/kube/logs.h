/* Pod logs: GET /api/v1/namespaces/{ns}/pods/{pod}/log, streamed.
 *
 * The body (text/plain, chunked with follow) goes to a callback, by default
 * one line at a time without its '\n'. Memory is bounded by max_line_bytes:
 * a longer line is delivered in pieces flagged TG_KUBE_LOG_PARTIAL (log
 * lines are data, not protocol, so an over-long one is not an error). With
 * `raw` the chunks are passed on as they arrive.
 *
 * Errors before the stream starts are Status objects (400 for a waiting or
 * unknown container, 404 for an unknown pod) and come back in res.
 * A follow stream ends when the container exits, when the stop flag is
 * raised, or when the callback returns non-zero; all three return TG_OK.
 * Resuming after a broken stream is the caller's job (since_time with the
 * last timestamp seen, timestamps=1).
 *
 * No jansson values cross the callback; res owns an error body as usual.
 * Thread-safety: one stream per call; the client may be shared. */
#ifndef TG_KUBE_LOGS_H
#define TG_KUBE_LOGS_H

#include <stdatomic.h>
#include <stddef.h>

#include "kube/client.h"
#include "kube/result.h"

#define TG_KUBE_LOG_PARTIAL 1 /* the line goes on in the next call */
#define TG_KUBE_LOG_NO_EOL  2 /* last bytes of the stream, no final newline */

#define TG_KUBE_LOGS_TAIL_NONE (-1) /* tail_lines value meaning tailLines=0 */

typedef struct tg_kube_logs_opts_s {
    const char *container;  /* required when the pod has several containers */
    int follow;             /* keep streaming until the container exits */
    int previous;           /* the previous terminated instance */
    int timestamps;         /* prefix each line with an RFC3339Nano timestamp + ' ' */
    long tail_lines;        /* 0 → all; N → last N; TG_KUBE_LOGS_TAIL_NONE → none */
    long since_seconds;     /* 0 → unset */
    const char *since_time; /* RFC3339; do not combine with since_seconds */
    long limit_bytes;       /* 0 → unset */
    size_t max_line_bytes;  /* 0 → 64 KiB */
    int raw;                /* chunks as they arrive instead of lines */
    atomic_int *stop;
    long timeout_ms; /* 0 → none with follow, the client default without */
} tg_kube_logs_opts_t;

/* Return 0 to go on, non-zero to stop the stream. `data` is borrowed. */
typedef int (*tg_kube_log_fn)(const char *data, size_t len, int flags, void *arg);

tg_rc_e tg_kube_logs(tg_kube_client_t *c, const char *ns, const char *pod,
                     const tg_kube_logs_opts_t *o, tg_kube_log_fn cb, void *arg,
                     tg_kube_result_t *res);

#endif
