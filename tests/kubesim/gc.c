/* Deletion and garbage collection. */
#include "gc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "pods.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"

int ks_finalizer_has(json_t *obj, const char *f)
{
    size_t i;
    json_t *x;
    json_array_foreach(ks_jget(obj, "metadata.finalizers"), i, x) if (ks_streq(json_string_value(x), f)) return 1;
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
    json_t *o = json_deep_copy(old);
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

typedef struct {
    int rt;
    json_t *obj;
} gc_item_t;

void ks_gc_pass(void)
{
    gc_item_t *all = NULL;
    size_t n = 0, cap = 0;
    ks_map_t *has_deps = ks_map_new();
    for (int rt = 0; rt < KS_RT_COUNT; rt++) {
        json_t **items = NULL;
        size_t k = ks_store_list(rt, NULL, &items);
        for (size_t i = 0; i < k; i++) {
            if (!ks_jget(items[i], "metadata.ownerReferences") &&
                !ks_jget(items[i], "metadata.deletionTimestamp"))
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 256;
                all = tg_xrealloc(all, cap * sizeof(*all));
            }
            all[n].rt = rt;
            all[n].obj = json_incref(items[i]);
            n++;
        }
        free(items);
    }
    /* Dependents first: delete orphans of vanished owners, orphan those of
     * Orphan-deleted owners, cascade Foreground deletions. */
    for (size_t i = 0; i < n; i++) {
        json_t *o = all[i].obj;
        json_t *refs = ks_jget(o, "metadata.ownerReferences");
        if (!json_array_size(refs))
            continue;
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
                ks_finalizer_has(owner, "foregroundDeletion")) {
                ks_map_put(has_deps, ks_jstr(ref, "uid"), (void *)1);
                if (!ks_jget(o, "metadata.deletionTimestamp"))
                    ks_delete(all[i].rt, ks_meta_ns(o), ks_meta_name(o), "Background", -1, NULL);
            }
        }
        if (orphaned) {
            json_t *c = ks_store_copy(all[i].rt, ks_meta_ns(o), ks_meta_name(o));
            if (c) {
                if (json_array_size(keep))
                    ks_jset(c, "metadata.ownerReferences", json_incref(keep));
                else
                    ks_jdel(c, "metadata.ownerReferences");
                ks_store_update(all[i].rt, c, NULL);
            }
        } else if (!alive && !ks_jget(o, "metadata.deletionTimestamp")) {
            ks_delete(all[i].rt, ks_meta_ns(o), ks_meta_name(o), "Background", -1, NULL);
        }
        json_decref(keep);
    }
    /* Owners whose dependents are handled lose their GC finalizers. */
    for (size_t i = 0; i < n; i++) {
        json_t *o = all[i].obj;
        if (!ks_jget(o, "metadata.deletionTimestamp"))
            continue;
        int fg = ks_finalizer_has(o, "foregroundDeletion");
        int orph = ks_finalizer_has(o, "orphan");
        if (!fg && !orph)
            continue;
        if (fg && ks_map_get(has_deps, ks_meta_uid(o)))
            continue;
        json_t *c = ks_store_copy(all[i].rt, ks_meta_ns(o), ks_meta_name(o));
        if (!c)
            continue;
        ks_finalizer_remove(c, "foregroundDeletion");
        ks_finalizer_remove(c, "orphan");
        ks_store_update(all[i].rt, c, NULL);
    }
    for (size_t i = 0; i < n; i++)
        json_decref(all[i].obj);
    free(all);
    ks_map_free(has_deps);
}
