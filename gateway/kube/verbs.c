/* Typed Kubernetes API verbs built on tg_kube_request. */
#include "kube/verbs.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

#define VERBS_PATH_MAX  8192
#define VERBS_QUERY_MAX 16384

typedef struct verbs_call_s {
    tg_buf_t path;
    tg_buf_t query;
    char *body;
} verbs_call_t;

static void verbs_call_init(verbs_call_t *v)
{
    tg_buf_init(&v->path, VERBS_PATH_MAX);
    tg_buf_init(&v->query, VERBS_QUERY_MAX);
    v->body = NULL;
}

static void verbs_call_clean(verbs_call_t *v)
{
    tg_buf_clean(&v->path);
    tg_buf_clean(&v->query);
    free(v->body);
}

/* Build the path; on failure fill res. */
static tg_rc_e verbs_path(verbs_call_t *v, const tg_kube_ref_t *ref, int want_name,
                          tg_kube_result_t *res)
{
    tg_kube_result_clean(res);
    if (!ref || (want_name && !ref->name) || (!want_name && ref->name)) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG,
                            want_name ? "this verb needs an object name"
                                      : "this verb works on a collection, not a named object");
        return res->rc;
    }
    if (tg_kube_path_append(&v->path, ref) != TG_OK) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "invalid resource path");
        return res->rc;
    }
    return TG_OK;
}

static tg_rc_e verbs_write_query(verbs_call_t *v, const tg_kube_write_opts_t *o,
                                 tg_kube_result_t *res)
{
    if (tg_kube_query_add(&v->query, "fieldManager", o ? o->field_manager : NULL) != TG_OK ||
        (o && o->dry_run && tg_kube_query_add(&v->query, "dryRun", "All") != TG_OK) ||
        (o && tg_kube_query_add(&v->query, "fieldValidation", o->field_validation) != TG_OK)) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "query string too long");
        return res->rc;
    }
    return TG_OK;
}

static tg_rc_e verbs_body(verbs_call_t *v, json_t *obj, tg_kube_result_t *res)
{
    if (!json_is_object(obj)) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "request body must be a JSON object");
        return res->rc;
    }
    v->body = json_dumps(obj, JSON_COMPACT);
    if (!v->body) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "cannot serialise the request body");
        return res->rc;
    }
    return TG_OK;
}

static tg_rc_e verbs_send(tg_kube_client_t *c, verbs_call_t *v, tg_kube_req_t *req,
                          atomic_int *stop, long timeout_ms, tg_kube_result_t *res)
{
    req->path = v->path.data;
    req->query = v->query.len ? v->query.data : NULL;
    if (v->body) {
        req->body = v->body;
        req->body_len = strlen(v->body);
    }
    req->stop = stop;
    req->timeout_ms = timeout_ms;
    return tg_kube_request(c, req, res);
}

static tg_rc_e verbs_get(tg_kube_client_t *c, const tg_kube_ref_t *ref, tg_kube_retry_e retry,
                         long timeout_ms, tg_kube_result_t *res)
{
    verbs_call_t v;
    verbs_call_init(&v);
    tg_rc_e rc = verbs_path(&v, ref, 1, res);
    if (rc == TG_OK) {
        tg_kube_req_t req = {.verb = TG_KUBE_VERB_GET, .retry = retry};
        rc = verbs_send(c, &v, &req, NULL, timeout_ms, res);
    }
    verbs_call_clean(&v);
    return rc;
}

tg_rc_e tg_kube_get(tg_kube_client_t *c, const tg_kube_ref_t *ref, tg_kube_result_t *res)
{
    return verbs_get(c, ref, TG_KUBE_RETRY_SAFE, 0, res);
}

tg_rc_e tg_kube_get_once(tg_kube_client_t *c, const tg_kube_ref_t *ref, long timeout_ms,
                         tg_kube_result_t *res)
{
    return verbs_get(c, ref, TG_KUBE_RETRY_NONE, timeout_ms, res);
}

tg_rc_e tg_kube_list(tg_kube_client_t *c, const tg_kube_ref_t *ref, const tg_kube_list_opts_t *o,
                     tg_kube_result_t *res)
{
    static const tg_kube_list_opts_t none;
    verbs_call_t v;
    verbs_call_init(&v);
    if (!o)
        o = &none;
    tg_rc_e rc = verbs_path(&v, ref, 0, res);
    if (rc == TG_OK) {
        tg_rc_e q = TG_OK;
        q |= tg_kube_query_add(&v.query, "labelSelector", o->label_selector);
        q |= tg_kube_query_add(&v.query, "fieldSelector", o->field_selector);
        if (o->limit > 0)
            q |= tg_kube_query_add_long(&v.query, "limit", o->limit);
        q |= tg_kube_query_add(&v.query, "continue", o->cont);
        q |= tg_kube_query_add(&v.query, "resourceVersion", o->resource_version);
        q |= tg_kube_query_add(&v.query, "resourceVersionMatch", o->resource_version_match);
        if (q != TG_OK) {
            tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "query string too long");
            rc = res->rc;
        } else {
            tg_kube_req_t req = {.verb = TG_KUBE_VERB_LIST, .retry = TG_KUBE_RETRY_SAFE};
            rc = verbs_send(c, &v, &req, o->stop, o->timeout_ms, res);
        }
    }
    verbs_call_clean(&v);
    return rc;
}

tg_rc_e tg_kube_list_all(tg_kube_client_t *c, const tg_kube_ref_t *ref,
                         const tg_kube_list_opts_t *o, tg_kube_item_fn fn, void *arg, char *rv,
                         size_t rvlen, tg_kube_result_t *res)
{
    static const tg_kube_list_opts_t none;
    tg_kube_list_opts_t page = o ? *o : none;
    char *cont = NULL;
    tg_rc_e rc;
    if (rv && rvlen)
        rv[0] = '\0';
    page.cont = NULL;
    for (;;) {
        rc = tg_kube_list(c, ref, &page, res);
        if (rc != TG_OK)
            break;
        json_t *meta = json_object_get(res->body, "metadata");
        json_t *items = json_object_get(res->body, "items");
        const char *list_rv = json_string_value(json_object_get(meta, "resourceVersion"));
        const char *next = json_string_value(json_object_get(meta, "continue"));
        if (!json_is_object(res->body) ||
            !(json_is_array(items) || json_is_null(items) || !items)) {
            tg_kube_result_fail(res, TG_KUBE_R_DECODE, "list answer has no items array");
            rc = res->rc;
            break;
        }
        /* Every page carries the snapshot's resourceVersion; keep the last. */
        if (rv && rvlen && list_rv) {
            if (strlen(list_rv) >= rvlen) {
                tg_kube_result_fail(res, TG_KUBE_R_DECODE, "resourceVersion too long");
                rc = res->rc;
                break;
            }
            memcpy(rv, list_rv, strlen(list_rv) + 1);
        }
        size_t i;
        json_t *item;
        int stop = 0;
        json_array_foreach(items, i, item) {
            if (fn && fn(item, arg) != 0) {
                stop = 1;
                break;
            }
        }
        free(cont);
        cont = next && *next ? tg_xstrdup(next) : NULL;
        json_decref(tg_kube_result_take_body(res));
        if (stop) {
            tg_kube_result_fail(res, TG_KUBE_R_CANCELLED, "listing stopped by its consumer");
            rc = res->rc;
            break;
        }
        if (!cont)
            break;
        page.cont = cont;
    }
    free(cont);
    return rc;
}

/* A create may be sent again only when a duplicate is impossible: the
 * server refuses a second object with the same name. */
static tg_kube_retry_e verbs_create_retry(json_t *obj)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    return name && *name ? TG_KUBE_RETRY_SAFE : TG_KUBE_RETRY_UNSENT;
}

tg_rc_e tg_kube_create(tg_kube_client_t *c, const tg_kube_ref_t *ref, json_t *obj,
                       const tg_kube_write_opts_t *o, tg_kube_result_t *res)
{
    verbs_call_t v;
    verbs_call_init(&v);
    tg_rc_e rc = verbs_path(&v, ref, 0, res);
    if (rc == TG_OK)
        rc = verbs_write_query(&v, o, res);
    if (rc == TG_OK)
        rc = verbs_body(&v, obj, res);
    if (rc == TG_OK) {
        tg_kube_req_t req = {.verb = TG_KUBE_VERB_CREATE,
                             .content_type = "application/json",
                             .retry = verbs_create_retry(obj)};
        rc = verbs_send(c, &v, &req, o ? o->stop : NULL, o ? o->timeout_ms : 0, res);
    }
    verbs_call_clean(&v);
    return rc;
}

/* How a PUT or PATCH is sent. */
typedef struct {
    tg_kube_verb_e verb;
    const char *content_type;
} verbs_write_t;

static tg_rc_e verbs_put_or_patch(tg_kube_client_t *c, const tg_kube_ref_t *ref, json_t *obj,
                                  const verbs_write_t *w, const tg_kube_write_opts_t *o,
                                  tg_kube_result_t *res)
{
    verbs_call_t v;
    verbs_call_init(&v);
    tg_rc_e rc = verbs_path(&v, ref, 1, res);
    if (rc == TG_OK)
        rc = verbs_write_query(&v, o, res);
    if (rc == TG_OK)
        rc = verbs_body(&v, obj, res);
    if (rc == TG_OK) {
        tg_kube_req_t req = {
            .verb = w->verb, .content_type = w->content_type, .retry = TG_KUBE_RETRY_SAFE};
        rc = verbs_send(c, &v, &req, o ? o->stop : NULL, o ? o->timeout_ms : 0, res);
    }
    verbs_call_clean(&v);
    return rc;
}

tg_rc_e tg_kube_update(tg_kube_client_t *c, const tg_kube_ref_t *ref, json_t *obj,
                       const tg_kube_write_opts_t *o, tg_kube_result_t *res)
{
    static const verbs_write_t put = {.verb = TG_KUBE_VERB_UPDATE,
                                      .content_type = "application/json"};
    return verbs_put_or_patch(c, ref, obj, &put, o, res);
}

tg_rc_e tg_kube_update_status(tg_kube_client_t *c, const tg_kube_ref_t *ref, json_t *obj,
                              const tg_kube_write_opts_t *o, tg_kube_result_t *res)
{
    tg_kube_ref_t r = *ref;
    r.sub = "status";
    return tg_kube_update(c, &r, obj, o, res);
}

tg_rc_e tg_kube_merge_patch(tg_kube_client_t *c, const tg_kube_ref_t *ref, json_t *patch,
                            const tg_kube_write_opts_t *o, tg_kube_result_t *res)
{
    static const verbs_write_t merge = {.verb = TG_KUBE_VERB_PATCH,
                                        .content_type = "application/merge-patch+json"};
    return verbs_put_or_patch(c, ref, patch, &merge, o, res);
}

tg_rc_e tg_kube_delete(tg_kube_client_t *c, const tg_kube_ref_t *ref, tg_kube_propagation_e prop,
                       long grace_seconds, const tg_kube_write_opts_t *o, tg_kube_result_t *res)
{
    static const char *const props[] = {NULL, "Background", "Foreground", "Orphan"};
    verbs_call_t v;
    verbs_call_init(&v);
    json_t *opts = NULL;
    tg_rc_e rc = verbs_path(&v, ref, 1, res);
    if (rc == TG_OK && o && o->dry_run && tg_kube_query_add(&v.query, "dryRun", "All") != TG_OK) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "query string too long");
        rc = res->rc;
    }
    if (rc == TG_OK) {
        opts = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
        if ((unsigned)prop < TG_ARRAY_LEN(props) && props[prop])
            json_object_set_new(opts, "propagationPolicy", json_string(props[prop]));
        if (grace_seconds >= 0)
            json_object_set_new(opts, "gracePeriodSeconds", json_integer(grace_seconds));
        rc = verbs_body(&v, opts, res);
    }
    if (rc == TG_OK) {
        tg_kube_req_t req = {.verb = TG_KUBE_VERB_DELETE,
                             .content_type = "application/json",
                             .retry = TG_KUBE_RETRY_SAFE};
        rc = verbs_send(c, &v, &req, o ? o->stop : NULL, o ? o->timeout_ms : 0, res);
    }
    json_decref(opts);
    verbs_call_clean(&v);
    return rc;
}
