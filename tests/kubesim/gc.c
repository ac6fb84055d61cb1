/* Deletion and garbage collection. */
#include "gc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "pods.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"
#include "work.h"

int ks_finalizer_has(json_t *obj, const char *f)
{
    size_t i;
    json_t *x;
    json_array_foreach(ks_jget(obj, "metadata.finalizers"), i,
                       x) if (ks_streq(json_string_value(x), f)) return 1;
    return 0;
}

int ks_finalizer_add(json_t *obj, const char *f)
{
    if (ks_finalizer_has(obj, f))
        return 0;
    json_t *fin = ks_jget(obj, "metadata.finalizers");
    if (!json_is_array(fin)) {
        fin = json_array();
        ks_jset(obj, "metadata.finalizers", fin);
    }
    json_array_append_new(fin, json_string(f));
    return 1;
}

int ks_finalizer_remove(json_t *obj, const char *f)
{
    json_t *fin = ks_jget(obj, "metadata.finalizers");
    for (size_t i = 0; i < json_array_size(fin); i++) {
        if (ks_streq(json_string_value(json_array_get(fin, i)), f)) {
            json_array_remove(fin, i);
            return 1;
        }
    }
    return 0;
}

int ks_delete(int rt, const char *ns, const char *name, const char *policy, long grace,
              json_t **left)
{
    if (left)
        *left = NULL;
    json_t *old = ks_store_get(rt, ns, name);
    if (!old)
        return -1;
    if (ks_jget(old, "metadata.deletionTimestamp")) {
        /* Already going; a shorter pod grace period still applies. */
        if (rt == KS_RT_PODS && grace == 0)
            ks_pods_kill(old, 0);
        if (left)
            *left = json_incref(old);
        return 0;
    }
    json_t *o = ks_copy_for_status(old); /* only metadata changes */
    if (ks_streq(policy, "Foreground"))
        ks_finalizer_add(o, "foregroundDeletion");
    else if (ks_streq(policy, "Orphan"))
        ks_finalizer_add(o, "orphan");
    int keep = json_array_size(ks_jget(o, "metadata.finalizers")) > 0;
    if (rt == KS_RT_PODS && ks_pods_kill(o, grace))
        keep = 1; /* processes still running: graceful termination */
    if (!keep) {
        if (left && rt == KS_RT_PODS)
            *left = json_incref(old);
        json_decref(o);
        ks_store_remove(rt, ns, name);
        return 0;
    }
    ks_jset(o, "metadata.deletionTimestamp", ks_json_now());
    ks_jset(o, "metadata.deletionGracePeriodSeconds",
            json_integer(rt == KS_RT_PODS && grace >= 0 ? grace : 0));
    json_t *stored = NULL;
    ks_store_update(rt, o, &stored);
    if (left && stored)
        *left = json_incref(stored);
    return 0;
}

/* Owner uid -> references of the objects naming it in ownerReferences. */
static ks_index_t *g_dependents;

static int is_gc_owner(json_t *o)
{
    return ks_jget(o, "metadata.deletionTimestamp") &&
           (ks_finalizer_has(o, "foregroundDeletion") || ks_finalizer_has(o, "orphan"));
}

static void index_refs(json_t *refs, const char *ref, int add)
{
    size_t i;
    json_t *r;
    json_array_foreach(refs, i, r)
    {
        const char *uid = ks_jstr(r, "uid");
        if (!uid)
            continue;
        if (add)
            ks_index_add(g_dependents, uid, ref);
        else
            ks_index_del(g_dependents, uid, ref);
    }
}

static void queue_dependents(const char *uid)
{
    char **deps = NULL;
    size_t n = ks_index_members(g_dependents, uid, &deps);
    for (size_t i = 0; i < n; i++)
        ks_work_add(KS_WQ_GC, deps[i]);
    ks_index_release(deps, n);
}

void ks_gc_observe(int rt, json_t *old, json_t *obj)
{
    if (!g_dependents)
        g_dependents = ks_index_new();
    char ref[KS_REF_MAX];
    ks_ref_of(rt, obj ? obj : old, ref, sizeof(ref));
    json_t *orefs = ks_jget(old, "metadata.ownerReferences");
    json_t *nrefs = ks_jget(obj, "metadata.ownerReferences");
    if (orefs != nrefs && !json_equal(orefs, nrefs)) {
        index_refs(orefs, ref, 0);
        index_refs(nrefs, ref, 1);
    }
    if (obj) {
        /* A dependent may name a vanished or deleting owner; an owner being
         * deleted in the foreground or orphaning waits on its dependents. */
        if (json_array_size(nrefs) || is_gc_owner(obj))
            ks_work_add(KS_WQ_GC, ref);
        return;
    }
    /* Gone: its dependents lost an owner, and owners deleting in the
     * foreground may have no dependent left. */
    queue_dependents(ks_meta_uid(old));
    size_t i;
    json_t *r;
    json_array_foreach(orefs, i, r)
    {
        int ort;
        json_t *owner = ks_store_get_uid(ks_jstr(r, "uid"), &ort);
        if (owner && is_gc_owner(owner))
            ks_work_add_obj(KS_WQ_GC, ort, owner);
    }
}

/* One dependent: collect it when every owner is gone, orphan it from owners
 * deleted with the Orphan policy, delete it when an owner is deleted in the
 * foreground. */
static void sync_dependent(int rt, json_t *o)
{
    json_t *refs = ks_jget(o, "metadata.ownerReferences");
    if (!json_array_size(refs))
        return;
    size_t j;
    json_t *ref;
    int alive = 0, orphaned = 0;
    json_t *keep = json_array();
    json_array_foreach(refs, j, ref)
    {
        json_t *owner = ks_store_get_uid(ks_jstr(ref, "uid"), NULL);
        if (!owner)
            continue;
        if (ks_jget(owner, "metadata.deletionTimestamp") && ks_finalizer_has(owner, "orphan")) {
            orphaned = 1;
            continue;
        }
        alive++;
        json_array_append(keep, ref);
        if (ks_jget(owner, "metadata.deletionTimestamp") &&
            ks_finalizer_has(owner, "foregroundDeletion") &&
            !ks_jget(o, "metadata.deletionTimestamp")) {
            /* A dependent with dependents of its own is deleted in the
             * foreground too, so the owner waits for the whole tree. */
            char **deps = NULL;
            size_t nd = ks_index_members(g_dependents, ks_meta_uid(o), &deps);
            ks_index_release(deps, nd);
            ks_delete(rt, ks_meta_ns(o), ks_meta_name(o), nd ? "Foreground" : "Background", -1,
                      NULL);
        }
    }
    if (orphaned) {
        json_t *c = ks_store_copy(rt, ks_meta_ns(o), ks_meta_name(o));
        if (c) {
            if (json_array_size(keep))
                ks_jset(c, "metadata.ownerReferences", json_incref(keep));
            else
                ks_jdel(c, "metadata.ownerReferences");
            ks_store_update(rt, c, NULL);
        }
    } else if (!alive && !ks_jget(o, "metadata.deletionTimestamp")) {
        ks_delete(rt, ks_meta_ns(o), ks_meta_name(o), "Background", -1, NULL);
    }
    json_decref(keep);
}

static int names_owner(json_t *o, const char *uid)
{
    size_t i;
    json_t *r;
    json_array_foreach(ks_jget(o, "metadata.ownerReferences"), i,
                       r) if (ks_streq(ks_jstr(r, "uid"), uid)) return 1;
    return 0;
}

/* An owner deleted in the foreground or with orphaning: handle its
 * dependents, then drop the finalizers once none is left to wait for. */
static void sync_owner(int rt, json_t *o)
{
    char uid[64];
    ks_strlcpy(uid, ks_meta_uid(o), sizeof(uid));
    int fg = ks_finalizer_has(o, "foregroundDeletion") && !ks_finalizer_has(o, "orphan");
    char **deps = NULL;
    size_t n = ks_index_members(g_dependents, uid, &deps);
    int waiting = 0;
    for (size_t i = 0; i < n; i++) {
        int drt;
        json_t *d = ks_store_get_ref(deps[i], &drt);
        if (!d || !names_owner(d, uid))
            continue;
        json_incref(d);
        sync_dependent(drt, d);
        json_decref(d);
        d = ks_store_get_ref(deps[i], NULL);
        if (d && names_owner(d, uid))
            waiting = 1;
    }
    ks_index_release(deps, n);
    if (fg && waiting)
        return;
    json_t *c = ks_store_copy(rt, ks_meta_ns(o), ks_meta_name(o));
    if (!c)
        return;
    ks_finalizer_remove(c, "foregroundDeletion");
    ks_finalizer_remove(c, "orphan");
    ks_store_update(rt, c, NULL);
}

void ks_gc_pass(void)
{
    char **refs = NULL;
    size_t n = ks_work_take(KS_WQ_GC, KS_WORK_ROUND, &refs);
    for (size_t i = 0; i < n; i++) {
        int rt;
        json_t *o = json_incref(ks_store_get_ref(refs[i], &rt));
        if (!o)
            continue;
        sync_dependent(rt, o);
        json_decref(o);
        o = ks_store_get_ref(refs[i], &rt);
        if (o && is_gc_owner(o)) {
            json_incref(o);
            sync_owner(rt, o);
            json_decref(o);
        }
    }
    ks_work_release(refs, n);
}

void ks_gc_shutdown(void)
{
    ks_index_free(g_dependents);
    g_dependents = NULL;
}
