/* Pod logs streamed to a callback, line by line with a bounded buffer. */
#include "kube/logs.h"

#include <string.h>

#include "core/buf.h"
#include "kube/path.h"

#define LOGS_DEFAULT_LINE (64 * 1024)

typedef struct logs_sink_s {
    tg_kube_log_fn cb;
    void *arg;
    int raw;
    size_t max_line;
    tg_buf_t line; /* a line in progress, below max_line */
    int cb_stopped;
} logs_sink_t;

static int logs_emit(logs_sink_t *s, const char *p, size_t n, int flags)
{
    if (s->cb && s->cb(p, n, flags, s->arg) != 0) {
        s->cb_stopped = 1;
        return 1;
    }
    return 0;
}

static int logs_sink(const char *data, size_t len, void *arg)
{
    logs_sink_t *s = arg;
    if (s->raw)
        return logs_emit(s, data, len, 0);
    while (len) {
        const char *nl = memchr(data, '\n', len);
        size_t chunk = nl ? (size_t)(nl - data) : len;
        /* Fill the line up to max_line; whatever does not fit goes out as a
         * PARTIAL piece first. */
        while (s->line.len + chunk > s->max_line) {
            size_t take = s->max_line - s->line.len;
            if (take > chunk)
                take = chunk;
            if (tg_buf_append(&s->line, data, take) != TG_OK)
                return 1; /* cannot happen: the buffer's max is max_line */
            if (logs_emit(s, s->line.data, s->line.len, TG_KUBE_LOG_PARTIAL))
                return 1;
            tg_buf_reset(&s->line);
            data += take;
            len -= take;
            chunk -= take;
            if (!chunk)
                break;
        }
        if (tg_buf_append(&s->line, data, chunk) != TG_OK)
            return 1;
        if (!nl)
            return 0;
        size_t n = s->line.len;
        if (n && s->line.data[n - 1] == '\r')
            n--;
        if (logs_emit(s, s->line.data, n, 0))
            return 1;
        tg_buf_reset(&s->line);
        data += chunk + 1;
        len -= chunk + 1;
    }
    return 0;
}

/* RET: TG_OK, or TG_ETOOLARGE at the first parameter that does not fit. */
static tg_rc_e logs_query(tg_buf_t *q, const tg_kube_logs_opts_t *o)
{
    const int tail_none = o->tail_lines == TG_KUBE_LOGS_TAIL_NONE;
    if (tg_kube_query_add(q, "container", o->container) != TG_OK ||
        (o->follow && tg_kube_query_add(q, "follow", "true") != TG_OK) ||
        (o->previous && tg_kube_query_add(q, "previous", "true") != TG_OK) ||
        (o->timestamps && tg_kube_query_add(q, "timestamps", "true") != TG_OK) ||
        ((o->tail_lines > 0 || tail_none) &&
         tg_kube_query_add_long(q, "tailLines", tail_none ? 0 : o->tail_lines) != TG_OK) ||
        (o->since_seconds > 0 &&
         tg_kube_query_add_long(q, "sinceSeconds", o->since_seconds) != TG_OK) ||
        tg_kube_query_add(q, "sinceTime", o->since_time) != TG_OK ||
        (o->limit_bytes > 0 && tg_kube_query_add_long(q, "limitBytes", o->limit_bytes) != TG_OK))
        return TG_ETOOLARGE;
    return TG_OK;
}

tg_rc_e tg_kube_logs(tg_kube_client_t *c, const char *ns, const char *pod,
                     const tg_kube_logs_opts_t *o, tg_kube_log_fn cb, void *arg,
                     tg_kube_result_t *res)
{
    static const tg_kube_logs_opts_t none;
    tg_buf_t path, query;
    logs_sink_t s = {.cb = cb, .arg = arg};
    if (!o)
        o = &none;
    s.raw = o->raw;
    s.max_line = o->max_line_bytes ? o->max_line_bytes : LOGS_DEFAULT_LINE;
    tg_buf_init(&s.line, s.max_line);
    tg_buf_init(&path, 8192);
    tg_buf_init(&query, 8192);
    tg_kube_result_clean(res);

    tg_kube_ref_t ref = {.gvr = &tg_kube_gvr_pods, .ns = ns, .name = pod, .sub = "log"};
    if (!ns || tg_kube_path_append(&path, &ref) != TG_OK) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "invalid namespace or pod name");
        goto out;
    }
    if (logs_query(&query, o) != TG_OK) {
        tg_kube_result_fail(res, TG_KUBE_R_CONFIG, "log query too long");
        goto out;
    }
    tg_kube_req_t req = {
        .verb = TG_KUBE_VERB_LOGS,
        .path = path.data,
        .query = query.len ? query.data : NULL,
        .accept = "text/plain, application/json",
        .retry = TG_KUBE_RETRY_SAFE, /* only until the first byte arrives */
        .timeout_ms = o->timeout_ms ? o->timeout_ms
                      : o->follow   ? -1
                                    : 0,
        .stop = o->stop,
        .sink = logs_sink,
        .sink_arg = &s,
    };
    tg_kube_request(c, &req, res);
    int stopped = s.cb_stopped || (o->stop && atomic_load(o->stop));
    if (res->rc == TG_OK && !s.raw && s.line.len)
        (void)logs_emit(&s, s.line.data, s.line.len, TG_KUBE_LOG_NO_EOL);
    else if (stopped && res->reason == TG_KUBE_R_CANCELLED)
        tg_kube_result_clean(res); /* the consumer's own stop is not an error */
out:
    tg_buf_clean(&s.line);
    tg_buf_clean(&path);
    tg_buf_clean(&query);
    return res->rc;
}
