/* One reconcile step: desired Kueue objects from the database, compared with
 * and written to the cluster (see reconcile.h). */
#include "engine/reconcile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "render/kueue.h"
#include "kube/verbs.h"
#include "store/kueue_sync.h"

typedef struct {
    tg_db_conn_t *conn;
    tg_kube_client_t *kube;
    const tg_reconcile_opts_t *opts;
    tg_reconcile_report_t *rep;
    json_t *seen;  /* [[kind, namespace, name]] of every object looked at */
    tg_rc_e db_rc; /* first database failure (the step stops reporting) */
} rc_ctx_t;

static const tg_kube_gvr_t *const rc_gvrs[TG_RK_COUNT] = {
    &tg_kube_gvr_namespaces, &tg_kube_gvr_resourceflavors, &tg_kube_gvr_workloadpriorityclasses,
    &tg_kube_gvr_clusterqueues, &tg_kube_gvr_localqueues};

static const char *rc_meta(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

static const char *rc_ns(const json_t *obj)
{
    const char *ns = rc_meta(obj, "namespace");
    return ns ? ns : "";
}

/* "ns/name" for namespaced objects, else "name", into out. */
static void rc_key(const json_t *obj, char *out, size_t n)
{
    const char *ns = rc_meta(obj, "namespace"), *name = rc_meta(obj, "name");
    snprintf(out, n, "%s%s%s", ns ? ns : "", ns ? "/" : "", name ? name : "");
}

static void rc_note_db(rc_ctx_t *c, tg_rc_e rc)
{
    if (rc != TG_OK && c->db_rc == TG_OK) {
        c->db_rc = rc;
        tg_log_warn("reconcile", "could not record drift: %s", tg_db_error(c->conn));
    }
}

static void rc_seen(rc_ctx_t *c, tg_reconcile_kind_e k, const json_t *obj)
{
    json_array_append_new(c->seen, json_pack("[s, s, s]", tg_reconcile_kind_name(k), rc_ns(obj),
                                             rc_meta(obj, "name") ? rc_meta(obj, "name") : ""));
}

static int rc_drift(rc_ctx_t *c, tg_reconcile_kind_e k, const json_t *obj, const char *problem,
                    const char *summary, const json_t *live, const json_t *want)
{
    tg_drift_t d = {.kind = tg_reconcile_kind_name(k),
                    .ns = rc_ns(obj),
                    .name = rc_meta(obj, "name"),
                    .problem = problem,
                    .summary = summary,
                    .live = live,
                    .desired = want};
    int is_new = 0;
    rc_note_db(c, tg_store_drift_open(c->conn, &d, &is_new));
    return is_new;
}

static void rc_resolve(rc_ctx_t *c, tg_reconcile_kind_e k, const json_t *obj, const char *problem,
                       const char *resolution)
{
    rc_note_db(c, tg_store_drift_resolve(c->conn, tg_reconcile_kind_name(k), rc_ns(obj),
                                         rc_meta(obj, "name"), problem, resolution));
}

/* A write the cluster refused: report it (once per object and step). */
static void rc_failed(rc_ctx_t *c, tg_reconcile_kind_e k, const json_t *obj, const char *verb,
                      const tg_kube_result_t *res)
{
    char summary[600];
    snprintf(summary, sizeof(summary), "%s refused: %s (%s)", verb,
             res->message ? res->message : "no message", tg_kube_reason_name(res->reason));
    c->rep->failed++;
    if (rc_drift(c, k, obj, "failed", summary, NULL, NULL))
        tg_log_warn("reconcile", "%s %s: %s", tg_reconcile_kind_name(k), rc_meta(obj, "name"),
                    summary);
}

/* ---- listing ------------------------------------------------------------- */

static int rc_list_item(json_t *item, void *arg)
{
    char key[600];
    rc_key(item, key, sizeof(key));
    json_object_set((json_t *)arg, key, item);
    return 0;
}

/* Every object of a kind, keyed by rc_key; NULL (and report->error) on failure. */
static json_t *rc_list(rc_ctx_t *c, tg_reconcile_kind_e k)
{
    json_t *map = json_object();
    tg_kube_ref_t ref = {.gvr = rc_gvrs[k]};
    tg_kube_list_opts_t o = {.limit = 500, .stop = c->opts->stop};
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    tg_rc_e rc = tg_kube_list_all(c->kube, &ref, &o, rc_list_item, map, NULL, 0, &res);
    if (rc != TG_OK) {
        snprintf(c->rep->error, sizeof(c->rep->error), "listing %ss failed: %s",
                 tg_reconcile_kind_name(k), res.message ? res.message : "no answer");
        json_decref(map);
        map = NULL;
    }
    tg_kube_result_clean(&res);
    return map;
}

/* ---- writes -------------------------------------------------------------- */

static tg_kube_write_opts_t rc_write_opts(rc_ctx_t *c)
{
    tg_kube_write_opts_t o = {.field_manager = TG_RECONCILE_MANAGER, .stop = c->opts->stop};
    return o;
}

static tg_kube_ref_t rc_ref(tg_reconcile_kind_e k, const json_t *obj, int named)
{
    tg_kube_ref_t ref = {.gvr = rc_gvrs[k],
                         .ns = rc_meta(obj, "namespace"),
                         .name = named ? rc_meta(obj, "name") : NULL};
    return ref;
}

static int rc_create(rc_ctx_t *c, tg_reconcile_kind_e k, json_t *want)
{
    tg_kube_ref_t ref = rc_ref(k, want, 0);
    tg_kube_write_opts_t o = rc_write_opts(c);
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    int ok = tg_kube_create(c->kube, &ref, want, &o, &res) == TG_OK ||
             (res.reason == TG_KUBE_R_ALREADY_EXISTS && res.retried);
    if (ok) {
        c->rep->created++;
        tg_log_info("reconcile", "created %s %s%s%s", tg_reconcile_kind_name(k),
                    rc_meta(want, "namespace") ? rc_meta(want, "namespace") : "",
                    rc_meta(want, "namespace") ? "/" : "", rc_meta(want, "name"));
        rc_resolve(c, k, want, NULL, "created");
    } else if (res.reason != TG_KUBE_R_ALREADY_EXISTS) {
        rc_failed(c, k, want, "create", &res);
    } /* created meanwhile by someone else: the next step looks at it */
    tg_kube_result_clean(&res);
    return ok;
}

/* PUT `want` over `live`: our labels and annotations win, others stay. */
static int rc_update(rc_ctx_t *c, tg_reconcile_kind_e k, const json_t *want, const json_t *live)
{
    json_t *obj = json_deep_copy(want);
    json_t *md = json_object_get(obj, "metadata");
    const json_t *lmd = json_object_get(live, "metadata");
    static const char *const maps[] = {"labels", "annotations"};
    for (int i = 0; i < 2; i++) {
        json_t *merged = json_is_object(json_object_get(lmd, maps[i]))
                             ? json_deep_copy(json_object_get(lmd, maps[i]))
                             : json_object();
        json_object_update(merged, json_object_get(md, maps[i]));
        json_object_set_new(md, maps[i], merged);
    }
    const json_t *rv = json_object_get(lmd, "resourceVersion");
    if (rv)
        json_object_set(md, "resourceVersion", (json_t *)rv);
    tg_kube_ref_t ref = rc_ref(k, want, 1);
    tg_kube_write_opts_t o = rc_write_opts(c);
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    int ok = tg_kube_update(c->kube, &ref, obj, &o, &res) == TG_OK;
    if (!ok && res.reason == TG_KUBE_R_CONFLICT)
        tg_log_info("reconcile", "%s %s changed while we wrote it; next step retries",
                    tg_reconcile_kind_name(k), rc_meta(want, "name"));
    else if (!ok)
        rc_failed(c, k, want, "update", &res);
    tg_kube_result_clean(&res);
    json_decref(obj);
    return ok;
}

static int rc_delete(rc_ctx_t *c, tg_reconcile_kind_e k, const json_t *live)
{
    tg_kube_ref_t ref = rc_ref(k, live, 1);
    tg_kube_write_opts_t o = rc_write_opts(c);
    tg_kube_result_t res;
    tg_kube_result_init(&res);
    int ok = tg_kube_delete(c->kube, &ref, TG_KUBE_PROPAGATION_BACKGROUND, -1, &o, &res) == TG_OK ||
             res.reason == TG_KUBE_R_NOT_FOUND;
    if (!ok)
        rc_failed(c, k, live, "delete", &res);
    tg_kube_result_clean(&res);
    return ok;
}

/* Admitted plus reserving workloads a queue's status counts. */
static long rc_admitted(const json_t *live)
{
    const json_t *st = json_object_get(live, "status");
    return (long)json_integer_value(json_object_get(st, "admittedWorkloads")) +
           (long)json_integer_value(json_object_get(st, "reservingWorkloads"));
}

/* ---- one object ---------------------------------------------------------- */

/* spec.clusterQueue of a LocalQueue is immutable: a change means delete and
 * create, which waits while the queue has admitted work. */
static void rc_lq_recreate(rc_ctx_t *c, json_t *want, const json_t *live)
{
    const char *was =
        json_string_value(json_object_get(json_object_get(live, "spec"), "clusterQueue"));
    const char *now =
        json_string_value(json_object_get(json_object_get(want, "spec"), "clusterQueue"));
    long busy = rc_admitted(live);
    if (busy > 0) {
        char summary[512];
        snprintf(summary, sizeof(summary),
                 "clusterQueue changed from %s to %s; spec.clusterQueue is immutable and the "
                 "LocalQueue still has %ld admitted workload(s), so it is recreated once they "
                 "finish",
                 was ? was : "?", now ? now : "?", busy);
        c->rep->kept++;
        rc_drift(c, TG_RK_LOCAL_QUEUE, want, "orphan_in_use", summary, NULL, NULL);
        return;
    }
    if (rc_delete(c, TG_RK_LOCAL_QUEUE, live) && rc_create(c, TG_RK_LOCAL_QUEUE, want)) {
        c->rep->created--; /* counted as an update */
        c->rep->updated++;
        rc_resolve(c, TG_RK_LOCAL_QUEUE, want, NULL, "updated");
    }
}

static void rc_one(rc_ctx_t *c, tg_reconcile_kind_e k, json_t *want, const json_t *live)
{
    rc_seen(c, k, want);
    if (!live) {
        rc_create(c, k, want);
        return;
    }
    if (k == TG_RK_NAMESPACE)
        return; /* namespaces are only ever created */
    int managed = tg_reconcile_is_managed(live);
    json_t *live_part = tg_reconcile_managed_part(k, live);
    json_t *want_part = tg_reconcile_managed_part(k, want);
    if (!managed && !c->opts->adopt) {
        char summary[300];
        snprintf(summary, sizeof(summary),
                 "a %s of this name exists without the label %s=%s; it is left alone "
                 "(reconcile_adopt takes such objects over)",
                 tg_reconcile_kind_name(k), TG_RECONCILE_LABEL_MANAGED_BY, TG_RECONCILE_MANAGER);
        c->rep->unmanaged++;
        rc_drift(c, k, want, "unmanaged", summary, live_part, want_part);
        goto out;
    }
    char live_hash[TG_RECONCILE_HASH_LEN];
    tg_reconcile_hash(k, live, live_hash);
    const char *ann = managed ? tg_reconcile_annotated_hash(live) : NULL;
    const char *want_hash = tg_reconcile_annotated_hash(want);
    int edited = managed && (!ann || strcmp(ann, live_hash) != 0);
    int changed = !ann || strcmp(ann, want_hash) != 0;
    if (edited) {
        char diff[1024], summary[1200];
        int n = tg_reconcile_diff(live_part, want_part, 8, diff, sizeof(diff));
        snprintf(summary, sizeof(summary), "edited by hand%s%s", n ? ": " : "",
                 n ? diff : "; it matches the database again but lost its spec hash");
        if (rc_drift(c, k, want, "edited", summary, live_part, want_part)) {
            c->rep->drifted++;
            tg_log_warn("reconcile", "drift: %s %s %s", tg_reconcile_kind_name(k),
                        rc_meta(want, "name"), summary);
        }
        if (!c->opts->correct_drift && !changed)
            goto out; /* report only: hand edits stay until the database changes */
    } else if (!changed) {
        c->rep->in_sync++;
        rc_resolve(c, k, want, NULL, "in_sync");
        goto out;
    }
    if (k == TG_RK_LOCAL_QUEUE && !json_equal(json_object_get(live_part, "clusterQueue"),
                                              json_object_get(want_part, "clusterQueue"))) {
        rc_lq_recreate(c, want, live);
        goto out;
    }
    if (rc_update(c, k, want, live)) {
        if (edited && c->opts->correct_drift) {
            c->rep->corrected++;
            rc_resolve(c, k, want, "edited", "corrected");
        } else {
            c->rep->updated++;
        }
        tg_log_info("reconcile", "%s %s %s", edited ? "corrected" : "updated",
                    tg_reconcile_kind_name(k), rc_meta(want, "name"));
        rc_resolve(c, k, want, NULL, "updated");
    }
out:
    json_decref(live_part);
    json_decref(want_part);
}

/* ---- objects no longer wanted -------------------------------------------- */

/* Why a managed object that left the database must stay, into why; 0 if none. */
static int rc_still_used(tg_reconcile_kind_e k, const json_t *live, const json_t *live_cqs,
                         const json_t *deleted_cqs, char *why, size_t n)
{
    if (k == TG_RK_CLUSTER_QUEUE || k == TG_RK_LOCAL_QUEUE) {
        long busy = rc_admitted(live);
        if (busy > 0) {
            snprintf(why, n,
                     "no longer in the database, but %ld workload(s) are admitted or reserving "
                     "quota in it; kept until they finish",
                     busy);
            return 1;
        }
        return 0;
    }
    if (k != TG_RK_FLAVOR)
        return 0;
    const char *name = rc_meta(live, "name");
    const char *cqname;
    json_t *cq;
    json_object_foreach((json_t *)live_cqs, cqname, cq) {
        if (json_object_get(deleted_cqs, cqname))
            continue;
        size_t gi, fi;
        json_t *g, *f;
        json_array_foreach(json_object_get(json_object_get(cq, "spec"), "resourceGroups"), gi, g)
            json_array_foreach(json_object_get(g, "flavors"), fi, f) {
                const char *fn = json_string_value(json_object_get(f, "name"));
                if (fn && name && strcmp(fn, name) == 0) {
                    snprintf(why, n,
                             "no longer in the database, but ClusterQueue %s still names it; kept",
                             cqname);
                    return 1;
                }
            }
    }
    return 0;
}

static void rc_orphans(rc_ctx_t *c, tg_reconcile_kind_e k, json_t *left, const json_t *live_cqs,
                       json_t *deleted_cqs)
{
    const char *key;
    json_t *live;
    json_object_foreach(left, key, live) {
        if (!tg_reconcile_is_managed(live) || k == TG_RK_NAMESPACE)
            continue; /* not ours; namespaces may hold data and are never deleted */
        rc_seen(c, k, live);
        char why[300];
        if (rc_still_used(k, live, live_cqs, deleted_cqs, why, sizeof(why))) {
            c->rep->kept++;
            json_t *part = tg_reconcile_managed_part(k, live);
            rc_drift(c, k, live, "orphan_in_use", why, part, NULL);
            json_decref(part);
            continue;
        }
        if (rc_delete(c, k, live)) {
            c->rep->deleted++;
            tg_log_info("reconcile", "deleted %s %s (no longer in the database)",
                        tg_reconcile_kind_name(k), key);
            rc_resolve(c, k, live, NULL, "deleted");
            if (k == TG_RK_CLUSTER_QUEUE)
                json_object_set_new(deleted_cqs, rc_meta(live, "name"), json_true());
        }
    }
}

/* ---- the step ------------------------------------------------------------ */

/* The rendered objects of each kind from the desired snapshot. */
static void rc_render_all(const json_t *snap, json_t *want[TG_RK_COUNT])
{
    static const char *const sections[TG_RK_COUNT] = {"workspaces", "flavors", "priority_classes",
                                                      "cluster_queues", "local_queues"};
    for (int k = 0; k < TG_RK_COUNT; k++) {
        want[k] = json_array();
        size_t i;
        json_t *row;
        json_array_foreach(json_object_get(snap, sections[k]), i, row) {
            json_t *obj = NULL;
            switch ((tg_reconcile_kind_e)k) {
            case TG_RK_NAMESPACE:
                obj =
                    tg_render_kueue_namespace(json_string_value(json_object_get(row, "namespace")),
                                              json_string_value(json_object_get(row, "name")));
                break;
            case TG_RK_FLAVOR:
                obj = tg_render_kueue_flavor(row);
                break;
            case TG_RK_PRIORITY_CLASS:
                obj = tg_render_kueue_priority_class(row);
                break;
            case TG_RK_CLUSTER_QUEUE:
                obj = tg_render_kueue_cluster_queue(row);
                break;
            case TG_RK_LOCAL_QUEUE:
                obj = tg_render_kueue_local_queue(row);
                break;
            default:
                break;
            }
            if (obj)
                json_array_append_new(want[k], obj);
            else
                tg_log_warn("reconcile", "skipping a malformed %s row",
                            tg_reconcile_kind_name((tg_reconcile_kind_e)k));
        }
    }
}

static void rc_identity(const tg_reconcile_opts_t *opts, char *out, size_t n)
{
    if (opts->identity && *opts->identity) {
        snprintf(out, n, "%s", opts->identity);
        return;
    }
    char host[128] = "unknown";
    if (gethostname(host, sizeof(host) - 1) != 0)
        snprintf(host, sizeof(host), "unknown");
    snprintf(out, n, "%s:%ld", host, (long)getpid());
}

tg_rc_e tg_reconcile_step_conn(tg_db_conn_t *conn, tg_kube_client_t *kube,
                               const tg_reconcile_opts_t *opts, tg_reconcile_report_t *report)
{
    memset(report, 0, sizeof(*report));
    rc_ctx_t c = {.conn = conn, .kube = kube, .opts = opts, .rep = report, .seen = json_array()};
    json_t *snap = NULL, *want[TG_RK_COUNT] = {0}, *live[TG_RK_COUNT] = {0};
    json_t *deleted_cqs = json_object();
    tg_rc_e rc = tg_store_kueue_desired(conn, &snap);
    if (rc != TG_OK) {
        snprintf(report->error, sizeof(report->error), "reading the desired state failed");
        goto out;
    }
    rc_render_all(snap, want);
    for (int k = 0; k < TG_RK_COUNT; k++) {
        if (!(live[k] = rc_list(&c, (tg_reconcile_kind_e)k))) {
            rc = TG_EUNAVAILABLE;
            goto out;
        }
    }
    for (int k = 0; k < TG_RK_COUNT; k++) {
        size_t i;
        json_t *obj;
        json_array_foreach(want[k], i, obj) {
            char key[600];
            rc_key(obj, key, sizeof(key));
            rc_one(&c, (tg_reconcile_kind_e)k, obj, json_object_get(live[k], key));
            json_object_del(live[k], key); /* what is left is no longer wanted */
        }
    }
    /* the ClusterQueues as they are, for "a flavor still named by a queue" */
    json_t *all_cqs = rc_list(&c, TG_RK_CLUSTER_QUEUE);
    if (!all_cqs) {
        rc = TG_EUNAVAILABLE;
        goto out;
    }
    for (int k = TG_RK_COUNT - 1; k >= 0; k--)
        rc_orphans(&c, (tg_reconcile_kind_e)k, live[k], all_cqs, deleted_cqs);
    json_decref(all_cqs);
    rc_note_db(&c, tg_store_drift_sweep(conn, c.seen));
    rc = TG_OK;
out:
    if (c.db_rc != TG_OK && rc == TG_OK) {
        rc = c.db_rc;
        snprintf(report->error, sizeof(report->error), "recording drift failed");
    }
    if (snap && c.db_rc != TG_EUNAVAILABLE) { /* the database still answers: say how it went */
        char holder[200];
        rc_identity(opts, holder, sizeof(holder));
        json_t *rj = tg_reconcile_report_json(report);
        if (tg_store_kueue_sync_record(conn, holder, rj) != TG_OK)
            tg_log_warn("reconcile", "could not record the step");
        json_decref(rj);
    }
    for (int k = 0; k < TG_RK_COUNT; k++) {
        json_decref(want[k]);
        json_decref(live[k]);
    }
    json_decref(deleted_cqs);
    json_decref(snap);
    json_decref(c.seen);
    return rc;
}

tg_rc_e tg_reconcile_step(tg_db_pool_t *pool, tg_kube_client_t *kube,
                          const tg_reconcile_opts_t *opts, tg_reconcile_report_t *report)
{
    tg_db_conn_t *conn = NULL;
    tg_rc_e rc = tg_db_checkout(pool, &conn);
    if (rc != TG_OK) {
        memset(report, 0, sizeof(*report));
        snprintf(report->error, sizeof(report->error), "the database is unavailable");
        return rc;
    }
    rc = tg_reconcile_step_conn(conn, kube, opts, report);
    tg_db_release(pool, conn);
    return rc;
}

json_t *tg_reconcile_report_json(const tg_reconcile_report_t *r)
{
    json_t *j = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "created", r->created,
                          "updated", r->updated, "corrected", r->corrected, "deleted", r->deleted,
                          "in_sync", r->in_sync, "drifted", r->drifted, "unmanaged", r->unmanaged,
                          "kept", r->kept, "failed", r->failed);
    if (r->error[0])
        json_object_set_new(j, "error", json_string(r->error));
    return j;
}
