/* A list-then-watch loop with a cache (a small client-go informer).
 *
 * tg_kube_informer_run:
 *   1. lists the collection page by page (page_size) and delivers ADDED for
 *      every object; objects it delivered before that are gone now get a
 *      synthetic DELETED (ev->synthetic, a stub object: metadata name,
 *      namespace, uid); an object whose uid changed (deleted and recreated
 *      while we were not watching) gets a synthetic DELETED for the old uid
 *      before its ADDED; then one SYNC event says the list is complete;
 *   2. watches from the list's resourceVersion (with bookmarks, which only
 *      advance the resume point and are not delivered), delivering ADDED,
 *      MODIFIED and DELETED;
 *   3. when the server ends the watch, watches again from the last
 *      resourceVersion; on 410 Expired, or after any failed watch (what
 *      happened while the stream was broken is unknown), backs off
 *      (exponential, jittered) and lists again (1.);
 *   4. returns when tg_kube_informer_stop is called or the callback returns
 *      non-zero.
 * Consumers must be idempotent: after a relist, ADDED comes again for
 * objects they already know; ev->unchanged says the cache held that very
 * resourceVersion already.
 *
 * The cache (kube/cache.h) is updated before each event is delivered, so a
 * callback (or any thread) reading it sees at least that event. With a
 * cache_mask it keeps the masked fields of every object (the informer's
 * store, with an optional index); without one only keys, uids and
 * resourceVersions, to infer deletes.
 *
 * jansson: event objects are BORROWED for the callback (kube/watch.h).
 *
 * Thread-safety: run on one thread (it blocks); stop, stats and the cache's
 * readers from any thread. The callback runs on the run thread. */
#ifndef TG_KUBE_INFORMER_H
#define TG_KUBE_INFORMER_H

#include "kube/cache.h"
#include "kube/client.h"
#include "kube/path.h"
#include "kube/watch.h"

typedef struct tg_kube_informer_s tg_kube_informer_t;

typedef struct tg_kube_informer_opts_s {
    const tg_kube_gvr_t *gvr;     /* borrowed: must outlive the informer (use the constants) */
    const char *ns;               /* copied; NULL → all namespaces (or cluster-scoped) */
    const char *label_selector;   /* copied */
    const char *field_selector;   /* copied */
    long page_size;               /* 0 → 500 */
    long watch_timeout_min_s;     /* 0 → 300; each watch picks at random in [min, max] */
    long watch_timeout_max_s;     /* 0 → 600 */
    long backoff_base_ms;         /* 0 → 500 */
    long backoff_max_ms;          /* 0 → 30000 */
    const json_t *cache_mask;     /* what the cache keeps of an object (kube/cache.h); NULL: keys */
    tg_kube_index_fn cache_index; /* the cache's secondary index; NULL for none */
    /* What cb reads of a watched object beyond cache_mask (borrowed; the
     * mask language of kube/cache.h): when set, watch events are decoded
     * into only those fields, cache_mask's and metadata's name, namespace,
     * uid and resourceVersion (kube/json_mask.h), which saves building the
     * rest. NULL: cb gets whole objects. Listed objects are always whole. */
    const json_t *event_mask;
    tg_kube_event_fn cb;
    void *arg;
} tg_kube_informer_opts_t;

typedef struct tg_kube_informer_stats_s {
    unsigned long lists;   /* completed full lists */
    unsigned long watches; /* watch requests made */
    unsigned long errors;  /* failed lists and watches */
    unsigned long events;  /* events delivered (synthetic and SYNC included) */
    char resource_version[TG_KUBE_RV_MAX];
} tg_kube_informer_stats_t;

/* The client is borrowed and must outlive the informer. */
tg_kube_informer_t *tg_kube_informer_new(tg_kube_client_t *c, const tg_kube_informer_opts_t *o);
/* Block until stopped. RET: TG_OK when stopped by tg_kube_informer_stop or
 * the callback; TG_EINVAL for a bad resource. Not re-entrant. A stop is
 * final (a stop that comes before run starts is not lost): to start again,
 * make a new informer. */
tg_rc_e tg_kube_informer_run(tg_kube_informer_t *inf);
/* Ask run to return (any thread; takes effect within about a second). */
void tg_kube_informer_stop(tg_kube_informer_t *inf);
void tg_kube_informer_stats(tg_kube_informer_t *inf, tg_kube_informer_stats_t *st);
/* The informer's cache (borrowed: it lives as long as the informer). */
tg_kube_cache_t *tg_kube_informer_cache(tg_kube_informer_t *inf);
/* Free (run must have returned). NULL-safe. */
void tg_kube_informer_free(tg_kube_informer_t *inf);

#endif
