/* Queue positions, one visibility answer per LocalQueue at a time (see
 * positions.h). */
#include "engine/positions.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ids.h"
#include "core/mem.h"
#include "kube/verbs.h"

#define POS_FRESH_US 1000000u /* an answer serves every lookup this long */
#define POS_MISS_US  250000u  /* a Workload missing from it asks again after this */
#define POS_QUEUES   256      /* queues remembered at most */

struct tg_positions_s {
    pthread_mutex_t lock;
    /* "ns/lq" -> {"at": µs, "pending": n, "names": {workload: position}} */
    json_t *queues;
};

tg_positions_t *tg_positions_new(void)
{
    tg_positions_t *p = tg_xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    p->queues = json_object();
    return p;
}

void tg_positions_free(tg_positions_t *p)
{
    if (!p)
        return;
    json_decref(p->queues);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* The queue's pending Workloads now: {name: position} (new reference). */
static json_t *pos_fetch(tg_kube_client_t *kube, const char *ns, const char *lq, long *pending)
{
    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_visibility_localqueues,
                         .ns = ns,
                         .name = lq,
                         .sub = "pendingworkloads"};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    json_t *names = NULL;
    *pending = 0;
    if (tg_kube_get(kube, &ref, &res) == TG_OK) {
        names = json_object();
        const json_t *items = json_object_get(res.body, "items");
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it) {
            const char *n =
                json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));
            json_int_t p = json_integer_value(json_object_get(it, "positionInLocalQueue"));
            if (n)
                json_object_set_new(names, n, json_integer(p + 1));
        }
        *pending = (long)json_array_size(items);
    }
    tg_kube_result_clean(&res);
    return names;
}

void tg_positions_lookup(tg_positions_t *pos, tg_kube_client_t *kube, const char *ns,
                         const char *lq, const char *name, long *position, long *pending)
{
    *position = *pending = 0;
    char key[512];
    if (!pos || !kube || !ns || !lq || !name ||
        snprintf(key, sizeof(key), "%s/%s", ns, lq) >= (int)sizeof(key))
        return;
    uint64_t now = tg_now_mono_us();
    pthread_mutex_lock(&pos->lock);
    json_t *q = json_object_get(pos->queues, key);
    int64_t age = (int64_t)now - (int64_t)json_integer_value(json_object_get(q, "at"));
    json_int_t p = json_integer_value(json_object_get(json_object_get(q, "names"), name));
    int fresh = q && age < (int64_t)(p > 0 ? POS_FRESH_US : POS_MISS_US);
    if (fresh) {
        *position = (long)p;
        *pending = (long)json_integer_value(json_object_get(q, "pending"));
        pthread_mutex_unlock(&pos->lock);
        return;
    }
    /* claim the refresh so concurrent lookups use the old answer meanwhile */
    if (q)
        json_object_set_new(q, "at", json_integer((json_int_t)now));
    pthread_mutex_unlock(&pos->lock);

    long n = 0;
    json_t *names = pos_fetch(kube, ns, lq, &n);
    if (!names)
        return;
    *position = (long)json_integer_value(json_object_get(names, name));
    *pending = n;
    pthread_mutex_lock(&pos->lock);
    if (json_object_size(pos->queues) >= POS_QUEUES && !json_object_get(pos->queues, key))
        json_object_clear(pos->queues);
    json_object_set_new(pos->queues, key,
                        json_pack("{s:I, s:I, s:o}", "at", (json_int_t)tg_now_mono_us(), "pending",
                                  (json_int_t)n, "names", names));
    pthread_mutex_unlock(&pos->lock);
}
