/* Kubernetes watch streams.
 *
 * A watch is a long GET (?watch=true&resourceVersion=RV&allowWatchBookmarks=
 * true&timeoutSeconds=N) answered with one JSON event per line:
 * {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}.
 * tg_kube_watch runs one such request and calls back per event. It does not
 * reconnect: the caller does, from opts->resource_version, which is kept at
 * the last event's (or bookmark's) resourceVersion. What the outcome asks of
 * the caller:
 *   CLOSED  — the server ended the stream (timeoutSeconds): watch again from
 *             resource_version, at once;
 *   EXPIRED — 410: that resourceVersion is too old (compacted): list again
 *             and watch from the list's resourceVersion;
 *   ERROR   — the request failed (res says why: network, 403, 5xx, an event
 *             over the size limit, a malformed line): back off, then watch
 *             again (or relist if it keeps failing);
 *   STOPPED — the stop flag was raised or the callback returned non-zero.
 * tg_kube_informer (kube/informer.h) does all of that for you.
 *
 * Memory is bounded: a line longer than the client's max_event_bytes ends
 * the watch with ERROR / TOO_LARGE instead of growing without limit.
 *
 * Cancellation: set *opts->stop from any thread; the transfer notices within
 * about a second (libcurl's progress callback cadence on an idle stream).
 *
 * jansson: events pass objects BORROWED for the duration of the callback
 * (json_incref to keep one). The decoder owns nothing the caller sees after
 * it returns.
 *
 * Thread-safety: one watch per thread; the client may be shared. */
#ifndef TG_KUBE_WATCH_H
#define TG_KUBE_WATCH_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>

#include "core/buf.h"
#include "kube/client.h"
#include "kube/path.h"
#include "kube/result.h"

#define TG_KUBE_RV_MAX 128 /* resourceVersions are short opaque strings */

typedef enum {
    TG_KUBE_EV_ADDED = 0,
    TG_KUBE_EV_MODIFIED,
    TG_KUBE_EV_DELETED,
    TG_KUBE_EV_BOOKMARK, /* object holds only metadata.resourceVersion */
    TG_KUBE_EV_SYNC,     /* informer only: a full list was delivered (object NULL) */
} tg_kube_event_type_e;

typedef struct tg_kube_event_s {
    tg_kube_event_type_e type;
    json_t *object;               /* BORROWED for the callback; NULL for SYNC */
    const char *resource_version; /* BORROWED: object's metadata.resourceVersion or NULL */
    int synthetic;                /* informer: a DELETED inferred from a relist (object is a stub
                                     with only apiVersion/kind/metadata name, namespace, uid) */
    int unchanged;                /* informer: its cache held this resourceVersion already */
} tg_kube_event_t;

/* Return 0 to go on, non-zero to stop (outcome STOPPED). */
typedef int (*tg_kube_event_fn)(const tg_kube_event_t *ev, void *arg);

typedef enum {
    TG_KUBE_WATCH_CLOSED = 0,
    TG_KUBE_WATCH_EXPIRED,
    TG_KUBE_WATCH_ERROR,
    TG_KUBE_WATCH_STOPPED,
} tg_kube_watch_e;

const char *tg_kube_watch_outcome_name(tg_kube_watch_e w);

typedef struct tg_kube_watch_opts_s {
    const char *label_selector; /* borrowed */
    const char *field_selector; /* borrowed */
    long timeout_seconds;       /* asked of the server; 0 → 300 */
    int no_bookmarks;           /* don't ask for BOOKMARK events */
    /* borrowed: decode only these fields of each event's object (the mask
     * language of kube/json_mask.h; ERROR events are decoded whole);
     * NULL: decode objects whole */
    const json_t *object_mask;
    atomic_int *stop; /* optional */
    /* in: where to start ("" = now, after synthetic ADDED events for every
     * existing object); out: the last resourceVersion seen */
    char resource_version[TG_KUBE_RV_MAX];
    unsigned long events; /* out: events delivered by the last call */
} tg_kube_watch_opts_t;

/* Run one watch on the collection `ref` (ref->name NULL). res is filled on
 * EXPIRED (the Status) and ERROR; on CLOSED/STOPPED it reports success. */
tg_kube_watch_e tg_kube_watch(tg_kube_client_t *c, const tg_kube_ref_t *ref,
                              tg_kube_watch_opts_t *opts, tg_kube_event_fn cb, void *arg,
                              tg_kube_result_t *res);

/* ---- the stream decoder (no I/O; used by tg_kube_watch and fuzzers) ---------- */

typedef struct tg_kube_watch_decoder_s {
    tg_buf_t line; /* the partial line, bounded by max_event_bytes */
    tg_kube_event_fn cb;
    void *arg;
    char *rv;                /* caller's TG_KUBE_RV_MAX buffer, updated per event */
    int done;                /* set once an outcome other than CLOSED is reached */
    tg_kube_watch_e outcome; /* valid when done */
    tg_kube_result_t err;    /* why, for EXPIRED/ERROR (owned) */
    unsigned long events;
    json_t *event_mask; /* {"type":true,"object":mask}, or NULL: whole events (owned) */
} tg_kube_watch_decoder_t;

/* rv: a TG_KUBE_RV_MAX buffer kept up to date (borrowed, may be NULL). */
void tg_kube_watch_decoder_init(tg_kube_watch_decoder_t *d, size_t max_event_bytes,
                                tg_kube_event_fn cb, void *arg, char *rv);
void tg_kube_watch_decoder_clean(tg_kube_watch_decoder_t *d);
/* Decode only the fields of each event's object that mask names (borrowed;
 * NULL: whole objects). */
void tg_kube_watch_decoder_set_object_mask(tg_kube_watch_decoder_t *d, const json_t *mask);
/* Feed stream bytes. RET: 0 to continue, 1 when done (see d->outcome). */
int tg_kube_watch_decoder_feed(tg_kube_watch_decoder_t *d, const char *data, size_t len);
/* The stream ended: decode a last line that had no newline. RET as feed. */
int tg_kube_watch_decoder_finish(tg_kube_watch_decoder_t *d);

#endif
