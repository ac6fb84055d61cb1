/* An informer's cache: the objects it has seen, by "namespace/name", with
 * an optional secondary index (client-go's Indexer, in small).
 *
 * What is kept of an object is chosen by a mask (tg_kube_project): only the
 * fields a consumer reads, stored as compact JSON text, so 10,000 Jobs,
 * Pods and Workloads cost a few hundred bytes each instead of the tens of
 * kilobytes a parsed object takes. A cache made without a mask keeps only
 * keys, uids and resourceVersions (what an informer needs to infer deletes).
 *
 * Each entry also carries the resourceVersion its consumer acknowledged
 * (tg_kube_cache_ack): "what this version says is committed". A consumer
 * that could not commit an event leaves the entry unacknowledged, and a
 * later pass (engine/resync.h) finds it again: an event that failed is
 * never taken for handled.
 *
 * jansson: objects passed in are borrowed; objects returned are NEW
 * references (parsed from the stored text: the caller may change them).
 *
 * Thread-safety: the informer's thread writes; any thread reads. One mutex
 * guards the maps; no callback runs under it. */
#ifndef TG_KUBE_CACHE_H
#define TG_KUBE_CACHE_H

#include <jansson.h>
#include <stddef.h>

#include "core/mem.h"

typedef struct tg_kube_cache_s tg_kube_cache_t;

/* The secondary index key of a (projected) object: write it into key and
 * return 1, or return 0 when the object is not indexed. */
typedef int (*tg_kube_index_fn)(const json_t *obj, char *key, size_t keylen);

/* The fields of obj that `mask` names (a new reference). A mask is a JSON
 * object: a member `true` keeps that field whole, an object keeps those of
 * its fields, and an array [m] applies m to every element of an array
 * field. Fields the object lacks are skipped. */
json_t *tg_kube_project(const json_t *obj, const json_t *mask);

/* "namespace/name" ("/name" for a cluster-scoped object) into buf.
 * RET: 0, or -1 when it does not fit or name is NULL. */
int tg_kube_cache_key(const char *ns, const char *name, char *buf, size_t len);

/* mask: NULL keeps keys only (copied by reference; must be an object).
 * index: NULL for none. */
tg_kube_cache_t *tg_kube_cache_new(const json_t *mask, tg_kube_index_fn index);
/* NULL-safe. */
void tg_kube_cache_free(tg_kube_cache_t *c);

/* ---- the informer's side ------------------------------------------------- */

/* Record obj as seen now, in list generation gen (0 for a watch event,
 * which keeps the entry's generation). OUT: *old_uid, malloc'd, when an
 * entry of that key held another uid (deleted and recreated unseen; the
 * caller frees it), else NULL. RET: 1 when the object changed, 0 when not,
 * -1 when it has no name. Without a mask a change is a new
 * resourceVersion; with one it is a change of what the mask keeps (a new
 * version that changed nothing kept is acknowledged with the one before,
 * if that one was; an object changed under an old resourceVersion, as a
 * restored API server may serve it, is a change), and a version not yet
 * acknowledged counts as changed when it comes again. */
int tg_kube_cache_put(tg_kube_cache_t *c, const json_t *obj, unsigned gen, char **old_uid);
/* Forget the object's key. */
void tg_kube_cache_remove(tg_kube_cache_t *c, const json_t *obj);
/* Forget every entry not seen in generation gen. RET: a new array of stubs
 * {metadata: {name, namespace?, uid?}}, one per entry forgotten. */
json_t *tg_kube_cache_sweep(tg_kube_cache_t *c, unsigned gen);
/* 1: a full list has just been stored; 0: a list or watch failed, so
 * the cache may miss changes until the next list. */
void tg_kube_cache_mark_current(tg_kube_cache_t *c, int current);

/* ---- readers (any thread) ------------------------------------------------ */

/* The cached object of a key (NEW reference), or NULL. rv (optional, at
 * least 64 bytes) gets its resourceVersion. */
json_t *tg_kube_cache_get(tg_kube_cache_t *c, const char *key, char *rv, size_t rvlen);
/* Every cached object whose index key is ikey: a NEW array. */
json_t *tg_kube_cache_by_index(tg_kube_cache_t *c, const char *ikey);
/* How many cached objects with index key ikey are not acknowledged. */
size_t tg_kube_cache_index_unacked(tg_kube_cache_t *c, const char *ikey);
/* The consumer committed what version rv of key says. */
void tg_kube_cache_ack(tg_kube_cache_t *c, const char *key, const char *rv);
/* 1 when the cached version of key was acknowledged, 0 when not, -1 when
 * key is not cached. */
int tg_kube_cache_acked(tg_kube_cache_t *c, const char *key);
/* Call fn for every key whose cached version is not acknowledged (under no
 * lock: the keys are copied first). RET: how many. */
size_t tg_kube_cache_each_unacked(tg_kube_cache_t *c, void (*fn)(const char *key, void *arg),
                                  void *arg);
/* 1 while the cache mirrors the cluster: a full list stored and no list or
 * watch failure since (a miss is then a fact, not a gap). */
int tg_kube_cache_current(tg_kube_cache_t *c);
size_t tg_kube_cache_count(tg_kube_cache_t *c);
/* Bytes of stored text and keys (for the memory metric). */
size_t tg_kube_cache_bytes(tg_kube_cache_t *c);

#endif
