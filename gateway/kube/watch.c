/* Kubernetes watch streams: a bounded line decoder and one watch request. */
#include "kube/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "kube/json_mask.h"
#include "kube/metrics.h"

#define WATCH_DEFAULT_TIMEOUT_S 300
#define WATCH_CLIENT_SLACK_S    30 /* our own timeout sits past the server's */

const char *tg_kube_watch_outcome_name(tg_kube_watch_e w)
{
    switch (w) {
    case TG_KUBE_WATCH_CLOSED:
        return "closed";
    case TG_KUBE_WATCH_EXPIRED:
        return "expired";
    case TG_KUBE_WATCH_ERROR:
        return "error";
    case TG_KUBE_WATCH_STOPPED:
        return "stopped";
    }
    return "unknown";
}

void tg_kube_watch_decoder_init(tg_kube_watch_decoder_t *d, size_t max_event_bytes,
                                tg_kube_event_fn cb, void *arg, char *rv)
{
    memset(d, 0, sizeof(*d));
    tg_buf_init(&d->line, max_event_bytes);
    d->cb = cb;
    d->arg = arg;
    d->rv = rv;
    d->outcome = TG_KUBE_WATCH_CLOSED;
    tg_kube_result_init(&d->err);
}

void tg_kube_watch_decoder_clean(tg_kube_watch_decoder_t *d)
{
    tg_buf_clean(&d->line);
    tg_kube_result_clean(&d->err);
    json_decref(d->event_mask);
    d->event_mask = NULL;
}

void tg_kube_watch_decoder_set_object_mask(tg_kube_watch_decoder_t *d, const json_t *mask)
{
    json_decref(d->event_mask);
    d->event_mask = mask ? json_pack("{s:b, s:O}", "type", 1, "object", (json_t *)mask) : NULL;
}

static int watch_finish_with(tg_kube_watch_decoder_t *d, tg_kube_watch_e outcome)
{
    d->done = 1;
    d->outcome = outcome;
    return 1;
}

static int watch_fail(tg_kube_watch_decoder_t *d, tg_kube_reason_e reason, const char *msg)
{
    tg_kube_result_fail(&d->err, reason, "%s", msg);
    return watch_finish_with(d, TG_KUBE_WATCH_ERROR);
}

/* An ERROR event carries a Status; 410 means our resourceVersion is gone. */
static int watch_error_event(tg_kube_watch_decoder_t *d, json_t *status)
{
    json_int_t code = json_integer_value(json_object_get(status, "code"));
    tg_kube_metrics_event(TG_KUBE_MEV_ERROR);
    tg_kube_result_clean(&d->err);
    tg_kube_result_from_http(&d->err, code ? (long)code : 500, json_incref(status), NULL, 0);
    if (d->err.reason == TG_KUBE_R_NONE) /* a "Success" status in an ERROR event: odd */
        tg_kube_result_fail(&d->err, TG_KUBE_R_UNKNOWN, "watch ERROR event without a failure");
    if (code == 410 || d->err.reason == TG_KUBE_R_EXPIRED || d->err.reason == TG_KUBE_R_GONE)
        return watch_finish_with(d, TG_KUBE_WATCH_EXPIRED);
    return watch_finish_with(d, TG_KUBE_WATCH_ERROR);
}

static int watch_line(tg_kube_watch_decoder_t *d, const char *p, size_t n)
{
    static const struct {
        const char *name;
        tg_kube_event_type_e type;
        tg_kube_mev_e metric;
    } types[] = {
        {"ADDED", TG_KUBE_EV_ADDED, TG_KUBE_MEV_ADDED},
        {"MODIFIED", TG_KUBE_EV_MODIFIED, TG_KUBE_MEV_MODIFIED},
        {"DELETED", TG_KUBE_EV_DELETED, TG_KUBE_MEV_DELETED},
        {"BOOKMARK", TG_KUBE_EV_BOOKMARK, TG_KUBE_MEV_BOOKMARK},
    };
    while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (!n)
        return 0;
    json_error_t jerr;
    json_t *ev = d->event_mask ? tg_kube_json_load_masked(p, n, d->event_mask, &jerr)
                               : json_loadb(p, n, JSON_REJECT_DUPLICATES, &jerr);
    const char *type = json_string_value(json_object_get(ev, "type"));
    if (d->event_mask && type && strcmp(type, "ERROR") == 0) {
        json_decref(ev); /* rare: a Status, read whole */
        ev = json_loadb(p, n, JSON_REJECT_DUPLICATES, &jerr);
        type = json_string_value(json_object_get(ev, "type"));
    }
    json_t *obj = json_object_get(ev, "object");
    int r = 0;
    if (!type || !json_is_object(obj)) {
        r = watch_fail(d, TG_KUBE_R_DECODE, "malformed watch event");
        goto out;
    }
    if (strcmp(type, "ERROR") == 0) {
        r = watch_error_event(d, obj);
        goto out;
    }
    size_t t = 0;
    while (t < TG_ARRAY_LEN(types) && strcmp(type, types[t].name) != 0)
        t++;
    if (t == TG_ARRAY_LEN(types)) {
        tg_log_debug("kube", "ignoring watch event of type %.32s", type);
        goto out;
    }
    const char *rv =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    if (rv && d->rv) {
        size_t len = strlen(rv);
        if (len >= TG_KUBE_RV_MAX) {
            r = watch_fail(d, TG_KUBE_R_DECODE, "resourceVersion too long");
            goto out;
        }
        memcpy(d->rv, rv, len + 1);
    }
    tg_kube_metrics_event(types[t].metric);
    d->events++;
    tg_kube_event_t e = {.type = types[t].type, .object = obj, .resource_version = rv};
    if (d->cb && d->cb(&e, d->arg) != 0)
        r = watch_finish_with(d, TG_KUBE_WATCH_STOPPED);
out:
    json_decref(ev);
    return r;
}

int tg_kube_watch_decoder_feed(tg_kube_watch_decoder_t *d, const char *data, size_t len)
{
    if (d->done)
        return 1;
    while (len) {
        const char *nl = memchr(data, '\n', len);
        size_t chunk = nl ? (size_t)(nl - data) : len;
        if (tg_buf_append(&d->line, data, chunk) != TG_OK) {
            char msg[96];
            snprintf(msg, sizeof(msg), "watch event larger than %zu bytes", d->line.max);
            return watch_fail(d, TG_KUBE_R_TOO_LARGE, msg);
        }
        if (!nl)
            return 0;
        int r = watch_line(d, d->line.data, d->line.len);
        tg_buf_reset(&d->line);
        if (r)
            return r;
        data = nl + 1;
        len -= chunk + 1;
    }
    return 0;
}

int tg_kube_watch_decoder_finish(tg_kube_watch_decoder_t *d)
{
    if (d->done)
        return 1;
    if (!d->line.len)
        return 0;
    int r = watch_line(d, d->line.data, d->line.len);
    tg_buf_reset(&d->line);
    return r;
}

static int watch_sink(const char *data, size_t len, void *arg)
{
    return tg_kube_watch_decoder_feed(arg, data, len);
}

tg_kube_watch_e tg_kube_watch(tg_kube_client_t *c, const tg_kube_ref_t *ref,
                              tg_kube_watch_opts_t *o, tg_kube_event_fn cb, void *arg,
                              tg_kube_result_t *res)
{
    tg_kube_watch_e out = TG_KUBE_WATCH_ERROR;
    tg_buf_t path, query;
    tg_kube_watch_decoder_t d;
    long timeout_s = o->timeout_seconds > 0 ? o->timeout_seconds : WATCH_DEFAULT_TIMEOUT_S;

    tg_buf_init(&path, 8192);
    tg_buf_init(&query, 16384);
    tg_kube_watch_decoder_init(&d, tg_kube_client_max_event_bytes(c), cb, arg, o->resource_version);
    tg_kube_watch_decoder_set_object_mask(&d, o->object_mask);
    tg_kube_result_clean(res);
    o->events = 0;
    o->resource_version[TG_KUBE_RV_MAX - 1] = '\0';
    if (!ref || ref->name || tg_kube_path_append(&path, ref) != TG_OK) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "a watch needs a collection path");
        goto out;
    }
    tg_rc_e q = TG_OK;
    q |= tg_kube_query_add(&query, "watch", "true");
    if (o->resource_version[0])
        q |= tg_kube_query_add(&query, "resourceVersion", o->resource_version);
    if (!o->no_bookmarks)
        q |= tg_kube_query_add(&query, "allowWatchBookmarks", "true");
    q |= tg_kube_query_add_long(&query, "timeoutSeconds", timeout_s);
    q |= tg_kube_query_add(&query, "labelSelector", o->label_selector);
    q |= tg_kube_query_add(&query, "fieldSelector", o->field_selector);
    if (q != TG_OK) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "watch query too long");
        goto out;
    }
    tg_kube_req_t req = {
        .verb = TG_KUBE_VERB_WATCH,
        .path = path.data,
        .query = query.data,
        .retry = TG_KUBE_RETRY_NONE, /* the caller re-watches from resource_version */
        .timeout_ms = (timeout_s + WATCH_CLIENT_SLACK_S) * 1000,
        .stop = o->stop,
        .sink = watch_sink,
        .sink_arg = &d,
    };
    tg_kube_request(c, &req, res);
    o->events = d.events;
    if (!d.done && (res->rc == TG_OK || res->reason == TG_KUBE_R_CLIENT_TIMEOUT))
        (void)tg_kube_watch_decoder_finish(&d);
    if (d.done) {
        out = d.outcome;
        tg_kube_result_clean(res);
        if (out == TG_KUBE_WATCH_ERROR || out == TG_KUBE_WATCH_EXPIRED) {
            *res = d.err; /* move */
            tg_kube_result_init(&d.err);
        }
    } else if (o->stop && atomic_load(o->stop)) {
        out = TG_KUBE_WATCH_STOPPED;
        tg_kube_result_clean(res);
    } else if (res->rc == TG_OK || (res->reason == TG_KUBE_R_CLIENT_TIMEOUT && d.events)) {
        /* The server closed after timeoutSeconds, or went quiet past it. */
        out = TG_KUBE_WATCH_CLOSED;
        tg_kube_result_clean(res);
    } else if (res->http_code == 410) {
        out = TG_KUBE_WATCH_EXPIRED; /* a plain 410 on the first request */
    } else {
        out = TG_KUBE_WATCH_ERROR;
    }
    tg_log_debug("kube", "watch %s from rv %s: %s after %lu events", path.data,
                 o->resource_version[0] ? o->resource_version : "-",
                 tg_kube_watch_outcome_name(out), d.events);
out:
    tg_kube_watch_decoder_clean(&d);
    tg_buf_clean(&path);
    tg_buf_clean(&query);
    return out;
}
