/* The object store: every API object as an immutable jansson value, keyed by
 * resource type, namespace and name, with one global resourceVersion counter
 * and a ring of watch events.
 *
 * Locking: one global mutex (ks_lock/ks_unlock) guards the store, the event
 * ring and every controller. Stored objects are never modified after they
 * are published, so a thread may serialise a borrowed object after taking a
 * reference (json_incref) and dropping the lock. To change an object, take a
 * copy (ks_store_copy), edit it, and hand it to ks_store_update. Versions
 * replaced or removed stay alive until the lock is released, so borrowed
 * pointers taken under the lock stay valid for as long as it is held.
 * Every read (get, list, scan) and sweep aborts when its thread does not
 * hold the lock: reading a cold object inflates it on a shared stream.
 *
 * Every published change is reported to one observer (the controllers'
 * work queues, see work.h), and serialised once into the watch line every
 * watcher of it sends.
 *
 * Objects nobody reads by name or writes for a whole sweep period are kept
 * as deflated compact JSON ("cold"; ks_store_cool): a finished Job, its
 * pod, Workload and Events take a fifteenth of their jansson size so.
 * Reading one by name warms it again; lists and scans parse cold objects
 * for their caller alone (valid until the lock is released, like every
 * borrowed pointer), and label-selected lists parse only the objects that
 * match. */
#ifndef KS_STORE_H
#define KS_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "rtypes.h"

typedef struct ks_sel_s ks_sel_t;

typedef enum {
    KS_OK = 0,
    KS_ENOTFOUND,
    KS_EEXIST,
    KS_ECONFLICT,
    KS_EINVALID,
} ks_rc_e;

typedef enum { KS_EV_ADDED = 0, KS_EV_MODIFIED, KS_EV_DELETED } ks_evtype_e;

/* A published change as watchers see it. The ring keeps only the
 * serialised line, so superseded object versions are freed at once. */
typedef struct ks_evline_s ks_evline_t;
typedef struct ks_event_s {
    uint64_t rv;
    int type; /* ks_evtype_e */
    int rt;
    ks_evline_t *line; /* shared, reference counted */
} ks_event_t;

/* Longest object reference "rt\x1fns\x1fname" (see ks_ref_fmt). */
#define KS_REF_MAX 600

/* Called for every published change, lock held: old is NULL for a
 * creation, obj NULL for a removal (old is then the last state). It may
 * queue work but must not change the store. */
typedef void (*ks_store_observer_fn)(int rt, json_t *old, json_t *obj);

/* ring_cap events and ring_bytes of their text at most in the watch window. */
void ks_store_init(size_t ring_cap, size_t ring_bytes);
void ks_store_shutdown(void);
void ks_store_set_observer(ks_store_observer_fn fn);

void ks_lock(void);
/* Releases the lock; wakes watchers and the controller when something was
 * published while it was held. */
void ks_unlock(void);
/* Wake the controller and the watch streams (used at shutdown and by watch
 * faults). Watch streams wait in ks_ring_wait, without the lock; log
 * follows wait for their own pod's changes (logs.h). */
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
/* New reference: a copy for a controller's status write, cheap because
 * it shares what the write leaves alone. metadata and status are deep
 * copies and spec a one-level copy: the caller may edit metadata, status
 * and spec's own fields (spec.nodeName, spec.priority), never anything
 * deeper in spec or in other top-level fields. */
json_t *ks_copy_for_status(json_t *obj);
/* Borrowed object with this uid, or NULL; *rt receives its type. */
json_t *ks_store_get_uid(const char *uid, int *rt);
/* An object reference, "rt\x1fns\x1fname", as work queues and indexes
 * hold them; ks_store_get_ref resolves one (NULL when gone). */
void ks_ref_fmt(char *out, size_t n, int rt, const char *ns, const char *name);
void ks_ref_of(int rt, json_t *obj, char *out, size_t n);
json_t *ks_store_get_ref(const char *ref, int *rt);
/* Store a new object (steals obj). Fills uid, resourceVersion,
 * creationTimestamp and generation. *out (optional) is borrowed. */
ks_rc_e ks_store_create(int rt, json_t *obj, json_t **out);
/* Replace an existing object (steals obj). Keeps uid and
 * creationTimestamp, bumps generation when anything outside metadata and
 * status changed, and publishes nothing when the object is unchanged. An
 * object with deletionTimestamp and no finalizers is removed instead.
 * *out (optional) is borrowed and NULL when the object was removed. */
ks_rc_e ks_store_update(int rt, json_t *obj, json_t **out);
/* Insert an object as a state file saved it (steals obj): it keeps its
 * uid and resourceVersion, and no watch event is published (clients of a
 * restarted server relist); the observer sees it so controllers index it. */
ks_rc_e ks_store_restore(int rt, json_t *obj);
/* After restoring: resourceVersions continue after rv and the watch
 * window starts there, so a watch from an older one gets 410 Gone. */
void ks_store_restart_at(uint64_t rv);
/* Remove at once and publish DELETED. */
ks_rc_e ks_store_remove(int rt, const char *ns, const char *name);
/* Sorted (namespace, name) array of borrowed objects; free() the array. */
size_t ks_store_list(int rt, const char *ns, json_t ***items);
/* The same, only the objects whose labels match (NULL: all). */
size_t ks_store_list_labeled(int rt, const char *ns, const ks_sel_t *labels, json_t ***items);
/* One page of a list request: the objects after (after_ns, after_name)
 * that the selectors match, at most limit (0: all), sorted. *remaining is
 * the count of matching objects left, or -1 when some are left and the
 * selectors make their count unknown (Kubernetes then leaves
 * remainingItemCount out); 0 when none. */
typedef struct {
    const char *ns;
    const ks_sel_t *labels, *fields;
    const char *after_ns, *after_name; /* NULL: from the start */
    long limit;
} ks_page_t;
size_t ks_store_list_page(int rt, const ks_page_t *pg, json_t ***items, long *remaining);
/* Visit every object of a type in no order, without copying or sorting;
 * stops when fn returns non-zero. fn must not change the store. */
void ks_store_each(int rt, int (*fn)(json_t *obj, void *arg), void *arg);
size_t ks_store_count(int rt);
/* Sweep (lock held): cool every warm object not read by name or written
 * since the previous sweep, unless `keep` says it is still wanted. */
void ks_store_cool(void);
/* Asked (lock held) of an object about to cool, by reference: non-zero
 * keeps it warm (work queued on it, work.h: a controller reads it next). */
void ks_store_set_keep(int (*keep)(const char *ref));
size_t ks_store_cold_count(int rt);

/* Events with rv > since, oldest first, up to max. Each copied event holds
 * its own reference to the line (release with ks_event_clean). Returns the
 * count, or (size_t)-1 when `since` is older than the ring holds (410 Gone).
 * Needs no store lock (evring.h). */
size_t ks_events_since(uint64_t since, ks_event_t *out, size_t max);
void ks_event_clean(ks_event_t *ev);
/* The watch line ("{\"type\":...,\"object\":...}\n") and its length. */
const char *ks_event_text(const ks_event_t *ev, size_t *len);
/* The object's namespace ("" for cluster scope). */
const char *ks_event_ns(const ks_event_t *ev);
/* The object parsed back from the line (new reference), for watchers that
 * filter by labels or fields or print tables. */
json_t *ks_event_object(const ks_event_t *ev);

#endif
