/* The generic REST verbs. */
#include "api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "deploy.h"
#include "gc.h"
#include "patch.h"
#include "pbdecode.h"
#include "selectors.h"
#include "store.h"
#include "table.h"
#include "util.h"
#include "validate.h"
#include "watch.h"
#include "yamljson.h"

void ks_cause(json_t *causes, const char *reason, const char *field, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_array_append_new(
        causes, json_pack("{s:s,s:s,s:s}", "reason", reason, "message", msg, "field", field));
}

void ks_reply_invalid(ks_req_t *r, int rt, const char *name, json_t *causes)
{
    const ks_rtype_t *t = ks_rtype(rt);
    tg_buf_t b;
    tg_buf_init(&b, 64 * 1024);
    int rc = 0;
    if (t->group[0])
        rc |= tg_buf_printf(&b, "%s.%s \"%s\" is invalid: ", t->kind, t->group, name ? name : "");
    else
        rc |= tg_buf_printf(&b, "%s \"%s\" is invalid: ", t->kind, name ? name : "");
    size_t n = json_array_size(causes);
    if (n > 1)
        rc |= tg_buf_puts(&b, "[");
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(causes, i);
        rc |= tg_buf_printf(&b, "%s%s: %s", i ? ", " : "", ks_jstr(c, "field"),
                            ks_jstr(c, "message"));
    }
    if (n > 1)
        rc |= tg_buf_puts(&b, "]");
    (void)rc; /* a cut message is still a valid reply */
    json_t *d = json_pack("{s:s,s:s,s:s,s:o}", "name", name ? name : "", "group", t->group, "kind",
                          t->kind, "causes", causes);
    ks_reply_status(r, 422, "Invalid", b.data ? b.data : "invalid", d);
    tg_buf_clean(&b);
}

static void reply_conflict(ks_req_t *r, int rt, const char *name)
{
    char q[128], msg[900];
    const ks_rtype_t *t = ks_rtype(rt);
    ks_rtype_qualified(t, q, sizeof(q));
    snprintf(msg, sizeof(msg),
             "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
             "apply your changes to the latest version and try again",
             q, name);
    ks_reply_status(
        r, 409, "Conflict", msg,
        json_pack("{s:s,s:s,s:s}", "name", name, "group", t->group, "kind", t->resource));
}

static void reply_exists(ks_req_t *r, int rt, const char *name)
{
    char q[128], msg[700];
    const ks_rtype_t *t = ks_rtype(rt);
    ks_rtype_qualified(t, q, sizeof(q));
    snprintf(msg, sizeof(msg), "%s \"%s\" already exists", q, name);
    ks_reply_status(
        r, 409, "AlreadyExists", msg,
        json_pack("{s:s,s:s,s:s}", "name", name, "group", t->group, "kind", t->resource));
}

static int dry_run(ks_req_t *r)
{
    const char *d = ks_req_query(r, "dryRun");
    return d && !strcmp(d, "All");
}

json_t *ks_api_parse_body(ks_req_t *r, int yaml_ok)
{
    json_error_t je;
    char msg[600], err[300];
    if (!r->body.len) {
        ks_reply_badrequest(r, "the request body is empty");
        return NULL;
    }
    if (ks_pb_is_protobuf(ks_req_header(r, "Content-Type"))) {
        json_t *pb = ks_pb_decode(r->body.data, r->body.len, err, sizeof(err));
        if (!pb) {
            snprintf(msg, sizeof(msg),
                     "the body of the request could not be decoded as "
                     "application/vnd.kubernetes.protobuf: %s",
                     err);
            ks_reply_badrequest(r, msg);
        }
        return pb;
    }
    json_t *o = json_loadb(r->body.data, r->body.len, JSON_REJECT_DUPLICATES, &je);
    if (!o && yaml_ok)
        o = ks_yaml_to_json(r->body.data, r->body.len, err, sizeof(err));
    if (!o) {
        snprintf(msg, sizeof(msg),
                 "couldn't get version/kind; json parse error: %s (line %d, column %d)", je.text,
                 je.line, je.column);
        ks_reply_badrequest(r, msg);
        return NULL;
    }
    return o;
}

/* Check kind/apiVersion against the URL and fill them in. */
static int check_gvk(ks_req_t *r, int rt, json_t *o, int patch)
{
    const ks_rtype_t *t = ks_rtype(rt);
    char gv[128], msg[400];
    ks_rtype_gv(t, gv, sizeof(gv));
    if (!json_is_object(o)) {
        ks_reply_badrequest(r, "the body of the request was in an unknown format - accepted "
                               "media types include: application/json, application/yaml");
        return -1;
    }
    const char *k = ks_jstr(o, "kind"), *av = ks_jstr(o, "apiVersion");
    if ((k && strcmp(k, t->kind)) || (av && strcmp(av, gv))) {
        snprintf(msg, sizeof(msg),
                 "the API version in the data (%s) does not match the expected "
                 "API version (%s)",
                 av ? av : "", gv);
        if (k && strcmp(k, t->kind))
            snprintf(msg, sizeof(msg),
                     "%s in version \"%s\" cannot be handled as a %s: no kind "
                     "\"%s\" is registered for version \"%s\"",
                     t->kind, t->version, t->kind, k, gv);
        ks_reply_badrequest(r, msg);
        return -1;
    }
    if (!patch) {
        json_object_set_new(o, "kind", json_string(t->kind));
        json_object_set_new(o, "apiVersion", json_string(gv));
    }
    return 0;
}

static int check_namespace(ks_req_t *r, ks_target_t *t, json_t *o)
{
    if (!ks_rtype(t->rt)->namespaced)
        return 0;
    const char *ns = ks_meta_ns(o);
    if (ns && ns[0] && strcmp(ns, t->ns)) {
        ks_reply_badrequest(r, "the namespace of the provided object does not match the "
                               "namespace sent on the request");
        return -1;
    }
    ks_jset(o, "metadata.namespace", json_string(t->ns));
    int missing = 0;
    if (t->rt != KS_RT_EVENTS) {
        ks_lock(); /* the store is read under its lock only (store.h) */
        missing = !ks_store_get(KS_RT_NAMESPACES, NULL, t->ns);
        ks_unlock();
    }
    if (missing) {
        ks_reply_notfound(r, KS_RT_NAMESPACES, t->ns);
        return -1;
    }
    return 0;
}

static void do_get(ks_req_t *r, ks_target_t *t)
{
    ks_lock();
    json_t *o = json_incref(ks_store_get(t->rt, t->ns, t->name));
    ks_unlock();
    if (!o) {
        ks_reply_notfound(r, t->rt, t->name);
        return;
    }
    if (ks_req_wants_table(r)) {
        json_t *one[1] = {o};
        ks_reply_json(r, 200,
                      ks_table_build(t->rt, one, 1, ks_jstr(o, "metadata.resourceVersion"), 1));
        json_decref(o);
        return;
    }
    ks_reply_json(r, 200, o);
}

static void do_list(ks_req_t *r, ks_target_t *t)
{
    char err[512];
    ks_sel_t *ls = ks_labelsel_parse(ks_req_query(r, "labelSelector"), err, sizeof(err));
    ks_sel_t *fs = NULL;
    json_t **items = NULL;
    if (!ls) {
        ks_reply_badrequest(r, err);
        goto out;
    }
    fs = ks_fieldsel_parse(t->rt, ks_req_query(r, "fieldSelector"), err, sizeof(err));
    if (!fs) {
        ks_reply_badrequest(r, err);
        goto out;
    }
    if (ks_req_flag(r, "watch")) {
        ks_watch_start(r, t, ls, fs);
        ls = fs = NULL; /* owned by the watch now */
        goto out;
    }
    long limit = 0;
    const char *ls_s = ks_req_query(r, "limit");
    if (ls_s)
        limit = strtol(ls_s, NULL, 10);
    const char *cont = ks_req_query(r, "continue");
    char cns[256] = "", cname[256] = "";
    unsigned long long crv = 0;
    if (cont && *cont) {
        if (sscanf(cont, "%llu/%255[^/]/%255s", &crv, cns, cname) < 3 &&
            sscanf(cont, "%llu//%255s", &crv, cname) < 2) {
            ks_reply_badrequest(r, "continue key is not valid: illegal base64 data");
            goto out;
        }
    }
    ks_lock();
    if (cont && *cont && ks_events_since(crv, NULL, 0) == (size_t)-1) {
        ks_unlock();
        ks_reply_status(r, 410, "Expired",
                        "The provided continue parameter is too old to display a consistent "
                        "list result. You can start a new list without the continue parameter.",
                        NULL);
        goto out;
    }
    uint64_t rv = ks_store_rv();
    ks_page_t pg = {t->ns, ls, fs, cont && *cont ? cns : NULL, cont && *cont ? cname : NULL, limit};
    long remaining = 0;
    size_t n = ks_store_list_page(t->rt, &pg, &items, &remaining);
    json_t *arr = json_array();
    const char *last_ns = NULL, *last_name = NULL;
    for (size_t i = 0; i < n; i++) {
        json_array_append(arr, items[i]);
        last_ns = ks_meta_ns(items[i]);
        last_name = ks_meta_name(items[i]);
    }
    char rvs[32], token[600] = "";
    snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
    if (remaining && last_name)
        snprintf(token, sizeof(token), "%llu/%s/%s", (unsigned long long)(crv ? crv : rv),
                 last_ns ? last_ns : "", last_name);
    ks_unlock();
    if (ks_req_wants_table(r)) {
        json_t *tab = ks_table_build(t->rt, (json_t **)NULL, 0, rvs, 1);
        json_t *rows = json_object_get(tab, "rows");
        size_t i;
        json_t *o;
        json_array_foreach(arr, i, o) json_array_append_new(rows, ks_table_row(t->rt, o));
        if (token[0])
            ks_jset(tab, "metadata.continue", json_string(token));
        json_decref(arr);
        ks_reply_json(r, 200, tab);
        goto out;
    }
    const ks_rtype_t *rt = ks_rtype(t->rt);
    char gv[128], lk[128];
    ks_rtype_gv(rt, gv, sizeof(gv));
    snprintf(lk, sizeof(lk), "%sList", rt->kind);
    json_t *list = json_pack("{s:s,s:s,s:{s:s},s:o}", "kind", lk, "apiVersion", gv, "metadata",
                             "resourceVersion", rvs, "items", arr);
    if (token[0]) {
        ks_jset(list, "metadata.continue", json_string(token));
        if (remaining > 0)
            ks_jset(list, "metadata.remainingItemCount", json_integer((json_int_t)remaining));
    }
    ks_reply_json(r, 200, list);
out:
    free(items);
    ks_sel_free(ls);
    ks_sel_free(fs);
}

/* Validation, defaults and admission shared by create and update; on
 * failure the reply is written and -1 returned. */
static int admit(ks_req_t *r, ks_target_t *t, json_t *o, json_t *old)
{
    if (ks_admission_fields(r, t->rt, o))
        return -1;
    json_t *causes = json_array();
    ks_defaults(t->rt, o, old);
    if (ks_validate(t->rt, o, old, causes) != 0) {
        ks_reply_invalid(r, t->rt, ks_meta_name(o), causes);
        return -1;
    }
    json_decref(causes);
    return ks_admission(r, t->rt, o, old);
}

static void do_create(ks_req_t *r, ks_target_t *t, json_t *o)
{
    char name[300], uid[40];
    if (check_gvk(r, t->rt, o, 0) || check_namespace(r, t, o))
        goto out;
    if (!ks_meta_name(o) || !ks_meta_name(o)[0]) {
        const char *gn = ks_jstr(o, "metadata.generateName");
        if (gn && gn[0]) {
            char sfx[8];
            ks_rand_suffix(sfx, sizeof(sfx));
            snprintf(name, sizeof(name), "%s%s", gn, sfx);
            ks_jset(o, "metadata.name", json_string(name));
        }
    }
    if (ks_rtype(t->rt)->has_status && t->rt != KS_RT_NODES)
        json_object_del(o, "status");
    ks_jdel(o, "metadata.resourceVersion");
    ks_jdel(o, "metadata.deletionTimestamp");
    ks_uuid(uid, sizeof(uid));
    ks_jset(o, "metadata.uid", json_string(uid));
    ks_jset(o, "metadata.creationTimestamp", ks_json_now());
    ks_lock();
    int rc = admit(r, t, o, NULL);
    if (rc == 0 && dry_run(r)) {
        ks_unlock();
        ks_reply_json(r, 201, json_incref(o));
        goto out;
    }
    json_t *stored = NULL;
    if (rc == 0) {
        const char *nm = ks_meta_name(o);
        ks_strlcpy(name, nm, sizeof(name));
        ks_rc_e src = ks_store_create(t->rt, json_incref(o), &stored);
        if (src == KS_EEXIST) {
            ks_unlock();
            reply_exists(r, t->rt, name);
            goto out;
        }
        json_incref(stored);
    }
    ks_unlock();
    if (stored)
        ks_reply_json(r, 201, stored);
out:
    json_decref(o);
}

/* Merge the request's view with the stored object according to the
 * subresource: the main resource ignores status, /status ignores the rest. */
static json_t *split_status(ks_target_t *t, json_t *old, json_t *o)
{
    if (!ks_rtype(t->rt)->has_status)
        return o;
    if (!strcmp(t->sub, "status")) {
        json_t *n = json_deep_copy(old);
        json_t *st = json_object_get(o, "status");
        if (st)
            json_object_set(n, "status", st);
        else
            json_object_del(n, "status");
        json_decref(o);
        return n;
    }
    json_t *st = json_object_get(old, "status");
    if (st)
        json_object_set(o, "status", st);
    else
        json_object_del(o, "status");
    return o;
}

/* Store the updated object o (stolen) in place of old. */
static void finish_update(ks_req_t *r, ks_target_t *t, json_t *old, json_t *o)
{
    const char *rv = ks_jstr(o, "metadata.resourceVersion");
    if (rv && rv[0] && !ks_streq(rv, ks_jstr(old, "metadata.resourceVersion"))) {
        json_decref(o);
        ks_unlock();
        reply_conflict(r, t->rt, t->name);
        return;
    }
    o = split_status(t, old, o);
    /* The main resource goes through admission; /status writes are still
     * pruned (or refused under Strict) against the CRD's schema. */
    if ((!strcmp(t->sub, "") ? admit(r, t, o, old) : ks_admission_fields(r, t->rt, o)) != 0) {
        json_decref(o);
        ks_unlock();
        return;
    }
    if (dry_run(r)) {
        ks_unlock();
        ks_reply_json(r, 200, o);
        return;
    }
    json_t *stored = NULL;
    ks_store_update(t->rt, o, &stored);
    json_t *reply = stored ? json_incref(stored) : NULL;
    ks_unlock();
    if (reply)
        ks_reply_json(r, 200, reply);
    else
        ks_reply_json(r, 200,
                      json_pack("{s:s,s:s,s:{},s:s}", "kind", "Status", "apiVersion", "v1",
                                "metadata", "status", "Success"));
}

static void do_update(ks_req_t *r, ks_target_t *t, json_t *o)
{
    if (check_gvk(r, t->rt, o, 0) || check_namespace(r, t, o)) {
        json_decref(o);
        return;
    }
    const char *nm = ks_meta_name(o);
    if (nm && strcmp(nm, t->name)) {
        json_decref(o);
        ks_reply_badrequest(r, "the name of the object does not match the name on the URL");
        return;
    }
    ks_jset(o, "metadata.name", json_string(t->name));
    ks_lock();
    json_t *old = ks_store_get(t->rt, t->ns, t->name);
    if (!old) {
        ks_unlock();
        json_decref(o);
        ks_reply_notfound(r, t->rt, t->name);
        return;
    }
    finish_update(r, t, old, o); /* unlocks */
}

static void do_patch(ks_req_t *r, ks_target_t *t)
{
    const char *ct = ks_req_header(r, "Content-Type");
    int kind = !ct                                                    ? -1
               : strstr(ct, "application/merge-patch+json")           ? 0
               : strstr(ct, "application/json-patch+json")            ? 1
               : strstr(ct, "application/strategic-merge-patch+json") ? 2
               : strstr(ct, "application/apply-patch+yaml")           ? 3
                                                                      : -1;
    char err[512], msg[700];
    if (kind < 0) {
        snprintf(msg, sizeof(msg),
                 "the body of the request was in an unknown format - accepted "
                 "media types include: application/json-patch+json, application/merge-patch+json, "
                 "application/apply-patch+yaml, application/strategic-merge-patch+json");
        ks_reply_status(r, 415, "UnsupportedMediaType", msg, NULL);
        return;
    }
    if (kind == 2 && ks_rtype(t->rt)->crd_file) {
        ks_reply_status(r, 415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format - accepted media types "
                        "include: application/json-patch+json, application/merge-patch+json, "
                        "application/apply-patch+yaml",
                        NULL);
        return;
    }
    json_t *p = ks_api_parse_body(r, kind == 3);
    if (!p)
        return;
    if (kind == 3 && !ks_req_query(r, "fieldManager")) {
        json_decref(p);
        ks_reply_badrequest(r, "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
                               "value: is required for apply patch");
        return;
    }
    ks_lock();
    json_t *old = ks_store_get(t->rt, t->ns, t->name);
    if (!old) {
        ks_unlock();
        if (kind == 3 && !t->sub[0]) {
            /* Server-side apply creates what does not exist. */
            ks_jset(p, "metadata.name", json_string(t->name));
            do_create(r, t, p);
            return;
        }
        json_decref(p);
        ks_reply_notfound(r, t->rt, t->name);
        return;
    }
    json_t *n = json_deep_copy(old);
    if (kind == 1) {
        if (ks_json_patch(&n, p, err, sizeof(err)) != 0) {
            ks_unlock();
            json_decref(n);
            json_decref(p);
            ks_reply_status(r, 422, "Invalid", err, NULL);
            return;
        }
    } else if (kind == 2) {
        ks_strategic_patch(n, p);
    } else {
        if (kind == 3 && check_gvk(r, t->rt, p, 1)) {
            ks_unlock();
            json_decref(n);
            json_decref(p);
            return;
        }
        ks_merge_patch(n, p);
    }
    /* A patch carries a resourceVersion only as a precondition. */
    const char *prv = ks_jstr(p, "metadata.resourceVersion");
    ks_jset(n, "metadata.resourceVersion",
            json_string(prv ? prv : ks_jstr(old, "metadata.resourceVersion")));
    json_decref(p);
    finish_update(r, t, old, n); /* unlocks */
}

static void do_delete(ks_req_t *r, ks_target_t *t)
{
    json_t *opts = NULL;
    if (r->body.len && ks_pb_is_protobuf(ks_req_header(r, "Content-Type"))) {
        if (!(opts = ks_api_parse_body(r, 0)))
            return;
    } else if (r->body.len) {
        opts = json_loadb(r->body.data, r->body.len, 0, NULL);
        if (!opts) {
            ks_reply_badrequest(r, "couldn't get version/kind; json parse error in DeleteOptions");
            return;
        }
    }
    const char *policy = ks_jstr(opts, "propagationPolicy");
    if (!policy)
        policy = ks_req_query(r, "propagationPolicy");
    if (ks_jget(opts, "orphanDependents") && !policy)
        policy = ks_jbool(opts, "orphanDependents", 0) ? "Orphan" : "Background";
    long grace = (long)ks_jint(opts, "gracePeriodSeconds", -1);
    const char *gq = ks_req_query(r, "gracePeriodSeconds");
    if (grace < 0 && gq)
        grace = strtol(gq, NULL, 10);
    if (!policy && t->rt == KS_RT_JOBS) {
        /* batch/v1 Jobs still default to orphaning their pods. */
        policy = "Orphan";
        ks_strlcpy(r->warning,
                   "299 - \"child pods are preserved by default when jobs are deleted; set "
                   "propagationPolicy=Background to remove them or set propagationPolicy=Orphan "
                   "to suppress this warning\"",
                   sizeof(r->warning));
    }
    if (policy && strcmp(policy, "Orphan") && strcmp(policy, "Background") &&
        strcmp(policy, "Foreground")) {
        json_decref(opts);
        ks_reply_invalid(r, t->rt, t->name,
                         json_pack("[{s:s,s:s,s:s}]", "reason", "FieldValueNotSupported", "message",
                                   "Unsupported value", "field", "propagationPolicy"));
        return;
    }
    ks_lock();
    json_t *old = ks_store_get(t->rt, t->ns, t->name);
    if (!old) {
        ks_unlock();
        json_decref(opts);
        ks_reply_notfound(r, t->rt, t->name);
        return;
    }
    const char *puid = ks_jstr(opts, "preconditions.uid");
    const char *prv = ks_jstr(opts, "preconditions.resourceVersion");
    if ((puid && !ks_streq(puid, ks_meta_uid(old))) ||
        (prv && !ks_streq(prv, ks_jstr(old, "metadata.resourceVersion")))) {
        ks_unlock();
        json_decref(opts);
        reply_conflict(r, t->rt, t->name);
        return;
    }
    json_t *uid = json_incref(ks_jget(old, "metadata.uid"));
    json_t *left = NULL;
    if (dry_run(r))
        left = json_incref(old);
    else
        ks_delete(t->rt, t->ns, t->name, policy ? policy : "Background", grace, &left);
    ks_unlock();
    json_decref(opts);
    if (left) {
        ks_reply_json(r, 200, left);
    } else {
        const ks_rtype_t *rt = ks_rtype(t->rt);
        ks_reply_json(r, 200,
                      json_pack("{s:s,s:s,s:{},s:s,s:{s:s,s:s,s:s,s:O}}", "kind", "Status",
                                "apiVersion", "v1", "metadata", "status", "Success", "details",
                                "name", t->name, "group", rt->group, "kind", rt->resource, "uid",
                                uid));
    }
    json_decref(uid);
}

static void do_delete_collection(ks_req_t *r, ks_target_t *t)
{
    char err[512];
    ks_sel_t *ls = ks_labelsel_parse(ks_req_query(r, "labelSelector"), err, sizeof(err));
    ks_sel_t *fs =
        ls ? ks_fieldsel_parse(t->rt, ks_req_query(r, "fieldSelector"), err, sizeof(err)) : NULL;
    if (!ls || !fs) {
        ks_sel_free(ls);
        ks_reply_badrequest(r, err);
        return;
    }
    const char *policy = ks_req_query(r, "propagationPolicy");
    json_t **items = NULL;
    ks_lock();
    size_t n = ks_store_list_labeled(t->rt, t->ns, ls, &items);
    json_t *names = json_array();
    for (size_t i = 0; i < n; i++)
        if (ks_fieldsel_match(fs, items[i]))
            json_array_append_new(
                names, json_pack("[s?,s]", ks_meta_ns(items[i]), ks_meta_name(items[i])));
    free(items);
    size_t i;
    json_t *e;
    json_array_foreach(names, i, e)
    {
        json_t *left = NULL;
        ks_delete(t->rt, json_string_value(json_array_get(e, 0)),
                  json_string_value(json_array_get(e, 1)), policy ? policy : "Background", -1,
                  &left);
        json_decref(left);
    }
    ks_unlock();
    json_decref(names);
    ks_sel_free(ls);
    ks_sel_free(fs);
    ks_reply_json(r, 200,
                  json_pack("{s:s,s:s,s:{},s:s}", "kind", "Status", "apiVersion", "v1", "metadata",
                            "status", "Success"));
}

void ks_api_handle(ks_req_t *r, ks_target_t *t)
{
    const char *m = r->method;
    int item = t->name[0] != 0;
    if (!strcmp(t->sub, "scale") && (t->rt == KS_RT_DEPLOYMENTS || t->rt == KS_RT_REPLICASETS) &&
        item) {
        ks_deploy_scale(r, t);
        return;
    }
    if (t->sub[0] && strcmp(t->sub, "status")) {
        ks_reply_status(r, 404, "NotFound", "the server could not find the requested resource",
                        NULL);
        return;
    }
    if (t->sub[0] && !ks_rtype(t->rt)->has_status) {
        ks_reply_status(r, 404, "NotFound", "the server could not find the requested resource",
                        NULL);
        return;
    }
    if (!strcmp(m, "GET")) {
        if (item)
            do_get(r, t);
        else
            do_list(r, t);
    } else if (!strcmp(m, "POST") && !item) {
        json_t *o = ks_api_parse_body(r, 0);
        if (o)
            do_create(r, t, o);
    } else if (!strcmp(m, "PUT") && item) {
        json_t *o = ks_api_parse_body(r, 0);
        if (o)
            do_update(r, t, o);
    } else if (!strcmp(m, "PATCH") && item) {
        do_patch(r, t);
    } else if (!strcmp(m, "DELETE") && item && !t->sub[0]) {
        do_delete(r, t);
    } else if (!strcmp(m, "DELETE") && !item) {
        do_delete_collection(r, t);
    } else {
        ks_reply_status(r, 405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource", NULL);
    }
}
