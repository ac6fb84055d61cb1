/* The object store: every API object as an immutable jansson value, keyed by
 * resource type, namespace and name, with one global resourceVersion counter
 * and a ring of watch events.
 *
 * Locking: one global mutex (ks_lock/ks_unlock) guards the store, the event
 * ring and every controller. Stored objects are never modified after they
 * are published, so a thread may serialise a borrowed object after taking a
 * reference (json_incref) and dropping the lock. To change an object, take a
 * copy (ks_store_copy), edit it, and hand it to ks_store_update. */
#ifndef KS_STORE_H
#define KS_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "rtypes.h"

typedef enum {
    KS_OK = 0,
    KS_ENOTFOUND,
    KS_EEXIST,
    KS_ECONFLICT,
    KS_EINVALID,
} ks_rc_e;

typedef enum { KS_EV_ADDED = 0, KS_EV_MODIFIED, KS_EV_DELETED } ks_evtype_e;

typedef struct ks_event_s {
    uint64_t rv;
    int type; /* ks_evtype_e */
    int rt;
    json_t *obj; /* owned reference */
} ks_event_t;

void ks_store_init(size_t ring_cap);
void ks_store_shutdown(void);

void ks_lock(void);
/* Releases the lock; wakes watchers and the controller when something was
 * published while it was held. */
void ks_unlock(void);
/* With the lock held: wait until a new event is published or `secs` pass. */
void ks_store_wait(double secs);
/* Wake every waiter (used at shutdown and by watch faults). */
void ks_store_kick(void);
/* Controller side: wait (lock held) until the store changed or `secs`
 * pass; returns 1 when it changed. Clears the change flag. */
int ks_store_wait_dirty(double secs);
/* Mark the store as changed so the controller runs a pass. */
void ks_store_mark_dirty(void);

uint64_t ks_store_rv(void);
/* Borrowed, immutable; NULL when absent. ns may be NULL for cluster scope. */
json_t *ks_store_get(int rt, const char *ns, const char *name);
/* New reference: a deep copy the caller may edit. */
json_t *ks_store_copy(int rt, const char *ns, const char *name);
/* Borrowed object with this uid, or NULL; *rt receives its type. */
json_t *ks_store_get_uid(const char *uid, int *rt);
/* Store a new object (steals obj). Fills uid, resourceVersion,
 * creationTimestamp and generation. *out (optional) is borrowed. */
ks_rc_e ks_store_create(int rt, json_t *obj, json_t **out);
/* Replace an existing object (steals obj). Keeps uid and
 * creationTimestamp, bumps generation when anything outside metadata and
 * status changed, and publishes nothing when the object is unchanged. An
 * object with deletionTimestamp and no finalizers is removed instead.
 * *out (optional) is borrowed and NULL when the object was removed. */
ks_rc_e ks_store_update(int rt, json_t *obj, json_t **out);
/* Remove at once and publish DELETED. */
ks_rc_e ks_store_remove(int rt, const char *ns, const char *name);
/* Sorted (namespace, name) array of borrowed objects; free() the array. */
size_t ks_store_list(int rt, const char *ns, json_t ***items);
size_t ks_store_count(int rt);

/* Events with rv > since, oldest first, up to max. Each copied event holds
 * its own reference to obj (release with ks_event_clean). Returns the count,
 * or (size_t)-1 when `since` is older than the ring holds (410 Gone). */
size_t ks_events_since(uint64_t since, ks_event_t *out, size_t max);
void ks_event_clean(ks_event_t *ev);

#endif
