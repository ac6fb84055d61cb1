/* Deletion semantics (finalizers, propagation policies) and the garbage
 * collector that follows ownerReferences. */
#ifndef KS_GC_H
#define KS_GC_H

#include <jansson.h>

/* Delete an object the way the apiserver does (lock held). policy is
 * "Background", "Foreground" or "Orphan"; grace is the pod grace period
 * (-1 = the pod's own). *left (optional) receives a new reference to the
 * object when it still exists (finalizers, graceful pod termination) or, for
 * pods, the last state; otherwise NULL. Returns 0 or -1 when not found. */
int ks_delete(int rt, const char *ns, const char *name, const char *policy, long grace,
              json_t **left);
/* Queue what a store change affects (store.h observer); one pass over
 * what is queued (lock held). */
void ks_gc_observe(int rt, json_t *old, json_t *obj);
void ks_gc_pass(void);
void ks_gc_shutdown(void);
/* Add or remove a finalizer in a copy (returns 1 when changed). */
int ks_finalizer_add(json_t *obj, const char *f);
int ks_finalizer_remove(json_t *obj, const char *f);
int ks_finalizer_has(json_t *obj, const char *f);

#endif
