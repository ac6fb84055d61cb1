/* Typed Kubernetes API verbs: get, list, create, update (PUT), merge patch,
 * delete, status update.
 *
 * Every call fills a caller-initialised tg_kube_result_t (kube/result.h)
 * and returns its rc. On success res->body holds the server's answer (the
 * object, the list, or the delete Status), owned by the result.
 *
 * jansson ownership: objects passed in (obj, patch) are BORROWED; they are
 * serialised and not modified or kept. Results own their bodies.
 *
 * Thread-safety: as the client (any thread, concurrently). */
#ifndef TG_KUBE_VERBS_H
#define TG_KUBE_VERBS_H

#include <jansson.h>
#include <stdatomic.h>

#include "kube/client.h"
#include "kube/path.h"

/* Options shared by the writing verbs; NULL means all defaults. */
typedef struct tg_kube_write_opts_s {
    const char *field_manager;    /* ?fieldManager= (none when NULL) */
    int dry_run;                  /* ?dryRun=All */
    const char *field_validation; /* ?fieldValidation=Strict|Warn|Ignore; NULL → server default */
    atomic_int *stop;             /* cancel (also stops retry sleeps) */
    long timeout_ms;              /* 0 → client default */
} tg_kube_write_opts_t;

typedef struct tg_kube_list_opts_s {
    const char *label_selector;
    const char *field_selector;
    long limit;                         /* page size; 0 → none */
    const char *cont;                   /* continue token from the previous page */
    const char *resource_version;       /* NULL → consistent read of the latest state */
    const char *resource_version_match; /* "NotOlderThan" | "Exact" */
    atomic_int *stop;
    long timeout_ms;
} tg_kube_list_opts_t;

typedef enum {
    TG_KUBE_PROPAGATION_DEFAULT = 0, /* server default (Orphan for Jobs: avoid) */
    TG_KUBE_PROPAGATION_BACKGROUND,
    TG_KUBE_PROPAGATION_FOREGROUND,
    TG_KUBE_PROPAGATION_ORPHAN,
} tg_kube_propagation_e;

/* GET one object (ref->name set; ref->sub optional, e.g. "status"). */
tg_rc_e tg_kube_get(tg_kube_client_t *c, const tg_kube_ref_t *ref, tg_kube_result_t *res);
/* tg_kube_get in one attempt within timeout_ms, for a caller that must not
 * wait on the cluster (the request path): it shows what it has without. */
tg_rc_e tg_kube_get_once(tg_kube_client_t *c, const tg_kube_ref_t *ref, long timeout_ms,
                         tg_kube_result_t *res);

/* GET one page of a collection (ref->name NULL). res->body is the List;
 * its metadata.continue (if any) fetches the next page. */
tg_rc_e tg_kube_list(tg_kube_client_t *c, const tg_kube_ref_t *ref, const tg_kube_list_opts_t *o,
                     tg_kube_result_t *res);

/* Called for each item of a paged list: `item` is BORROWED (valid during the
 * call; json_incref to keep it). Return non-zero to stop the listing. */
typedef int (*tg_kube_item_fn)(json_t *item, void *arg);

/* List every page (o->limit per page, o->cont ignored) and call `fn` for
 * each item. OUT: rv (optional, NUL-terminated, rvlen bytes) gets the list's
 * metadata.resourceVersion, the point to start a watch from. An expired
 * continue token (410) ends with res->reason EXPIRED: start again. res->body
 * is NULL afterwards (the pages are released as they are consumed). */
tg_rc_e tg_kube_list_all(tg_kube_client_t *c, const tg_kube_ref_t *ref,
                         const tg_kube_list_opts_t *o, tg_kube_item_fn fn, void *arg, char *rv,
                         size_t rvlen, tg_kube_result_t *res);

/* POST `obj` to the collection (ref->name NULL). With metadata.name set the
 * create is retried on transient errors (a duplicate answers 409
 * AlreadyExists with res->retried set); with only generateName it is retried
 * only when the server cannot have seen it. */
tg_rc_e tg_kube_create(tg_kube_client_t *c, const tg_kube_ref_t *ref, json_t *obj,
                       const tg_kube_write_opts_t *o, tg_kube_result_t *res);

/* PUT the whole object (ref->name set). With ref->sub = "status" this is a
 * status-subresource update. A stale metadata.resourceVersion gives 409
 * CONFLICT: re-read and try again. */
tg_rc_e tg_kube_update(tg_kube_client_t *c, const tg_kube_ref_t *ref, json_t *obj,
                       const tg_kube_write_opts_t *o, tg_kube_result_t *res);
/* tg_kube_update on ref's "/status" subresource. */
tg_rc_e tg_kube_update_status(tg_kube_client_t *c, const tg_kube_ref_t *ref, json_t *obj,
                              const tg_kube_write_opts_t *o, tg_kube_result_t *res);

/* PATCH with application/merge-patch+json (RFC 7386): keys set to null are
 * removed. ref->sub may be "status". */
tg_rc_e tg_kube_merge_patch(tg_kube_client_t *c, const tg_kube_ref_t *ref, json_t *patch,
                            const tg_kube_write_opts_t *o, tg_kube_result_t *res);

/* DELETE with DeleteOptions in the body ({"propagationPolicy": ...,
 * "gracePeriodSeconds": ...}); grace_seconds < 0 leaves the server default.
 * res->body is the Status, or the object when finalizers hold it. A
 * retried delete that ends in NOT_FOUND has res->retried set. */
tg_rc_e tg_kube_delete(tg_kube_client_t *c, const tg_kube_ref_t *ref, tg_kube_propagation_e prop,
                       long grace_seconds, const tg_kube_write_opts_t *o, tg_kube_result_t *res);

#endif
