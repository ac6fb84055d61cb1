/* Pod logs. Each stored line is "<RFC3339Nano> <text>\n". */
#include "logs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/monotonic.h"

#include "pods.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"

/* How long a follower with nothing to send waits before it looks at the
 * file again: a real process's output and a simulated pod's timed lines
 * arrive without a store change. A change of the follower's own pod (its
 * container ending) wakes it at once (ks_logs_observe). */
#define FOLLOW_POLL_MS 100

typedef struct ks_logf_s {
    struct ks_logf_s *next; /* in the followers list, under g_follow_lock */
    pthread_cond_t wake;
    int kicked;     /* its pod changed since it last looked (g_follow_lock) */
    int registered; /* in the followers list (set before its stream starts) */
    char uid[40];
    char container[64];
    int previous, timestamps;
    double since;
    long long limit, sent;
    long offset;
    tg_buf_t out;
    size_t off;
    tg_buf_t partial;
    int done;
} ks_logf_t;

/* Append one stored line (without "\n") to out, applying the options. */
static int emit_line(ks_logf_t *f, const char *line, size_t len, tg_buf_t *out)
{
    const char *sp = memchr(line, ' ', len);
    if (f->since > 0 && sp) {
        char ts[64];
        size_t tl = (size_t)(sp - line) < sizeof(ts) - 1 ? (size_t)(sp - line) : sizeof(ts) - 1;
        memcpy(ts, line, tl);
        ts[tl] = '\0';
        if (ks_parse_time(ts) < f->since)
            return 0;
    }
    const char *text = line;
    size_t tlen = len;
    if (!f->timestamps && sp) {
        text = sp + 1;
        tlen = len - (size_t)(sp + 1 - line);
    }
    if (f->limit >= 0) {
        long long room = f->limit - f->sent;
        if (room <= 0) {
            f->done = 1;
            return 0;
        }
        if ((long long)tlen + 1 > room) {
            if (tg_buf_append(out, text, (size_t)room) != TG_OK)
                return -1;
            f->sent += room;
            f->done = 1;
            return 0;
        }
    }
    if (tg_buf_append(out, text, tlen) != TG_OK || tg_buf_append(out, "\n", 1) != TG_OK)
        return -1;
    f->sent += (long long)tlen + 1;
    return 0;
}

/* Process whole lines of data[0..len); returns bytes consumed. */
static size_t emit_lines(ks_logf_t *f, const char *data, size_t len, tg_buf_t *out)
{
    size_t i = 0;
    while (i < len && !f->done) {
        const char *nl = memchr(data + i, '\n', len - i);
        if (!nl)
            break;
        size_t l = (size_t)(nl - (data + i));
        if (emit_line(f, data + i, l, out) != 0) {
            f->done = 1;
            break;
        }
        i += l + 1;
    }
    return i;
}

/* Offset where the last n lines of text start. */
static long tail_offset(const char *text, size_t len, long n)
{
    if (n < 0)
        return 0;
    if (n == 0)
        return (long)len;
    long count = 0;
    size_t i = len;
    if (i && text[i - 1] == '\n')
        i--;
    while (i > 0) {
        if (text[i - 1] == '\n' && ++count == n)
            return (long)i;
        i--;
    }
    return 0;
}

/* The followers, so that a pod's change wakes only those following it (a
 * store-wide wake-up on every change cost every follower a pass through
 * the store lock per published change). Lock order: the store lock, then
 * g_follow_lock; a follower never takes the store lock holding it. */
static pthread_mutex_t g_follow_lock = PTHREAD_MUTEX_INITIALIZER;
static ks_logf_t *g_followers;

static void follower_add(ks_logf_t *f)
{
    tg_cond_init_monotonic(&f->wake);
    f->registered = 1;
    pthread_mutex_lock(&g_follow_lock);
    f->next = g_followers;
    g_followers = f;
    pthread_mutex_unlock(&g_follow_lock);
}

static void follower_remove(ks_logf_t *f)
{
    pthread_mutex_lock(&g_follow_lock);
    for (ks_logf_t **p = &g_followers; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    pthread_mutex_unlock(&g_follow_lock);
    pthread_cond_destroy(&f->wake);
}

/* Forget earlier kicks: called before a look at the file, so a change
 * during the look is not lost. */
static void follower_unkick(ks_logf_t *f)
{
    pthread_mutex_lock(&g_follow_lock);
    f->kicked = 0;
    pthread_mutex_unlock(&g_follow_lock);
}

/* Wait for a change of the pod, the poll period, or kubesim's stop. */
static void follower_wait(ks_logf_t *f)
{
    struct timespec until = tg_mono_deadline_ms(FOLLOW_POLL_MS);
    pthread_mutex_lock(&g_follow_lock);
    if (!f->kicked && !ks_stopping)
        pthread_cond_timedwait(&f->wake, &g_follow_lock, &until);
    pthread_mutex_unlock(&g_follow_lock);
}

void ks_logs_observe(int rt, json_t *old, json_t *obj)
{
    if (rt != KS_RT_PODS)
        return;
    const char *uid = ks_meta_uid(obj ? obj : old);
    if (!uid)
        return;
    pthread_mutex_lock(&g_follow_lock);
    for (ks_logf_t *f = g_followers; f; f = f->next)
        if (!strcmp(f->uid, uid)) {
            f->kicked = 1;
            pthread_cond_signal(&f->wake);
        }
    pthread_mutex_unlock(&g_follow_lock);
}

void ks_logs_stop(void)
{
    pthread_mutex_lock(&g_follow_lock);
    for (ks_logf_t *f = g_followers; f; f = f->next) {
        f->kicked = 1;
        pthread_cond_signal(&f->wake);
    }
    pthread_mutex_unlock(&g_follow_lock);
}

static int lookup(ks_logf_t *f, char *path, size_t n, int *running)
{
    ks_lock();
    int rc = ks_pods_log_path(f->uid, f->container, f->previous, path, n, running);
    ks_unlock();
    return rc;
}

static ssize_t follow_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    ks_logf_t *f = cls;
    for (;;) {
        if (f->off < f->out.len) {
            size_t n = f->out.len - f->off;
            if (n > max)
                n = max;
            memcpy(buf, f->out.data + f->off, n);
            f->off += n;
            if (f->off == f->out.len) {
                tg_buf_reset(&f->out);
                f->off = 0;
            }
            return (ssize_t)n;
        }
        if (f->done || ks_stopping)
            return MHD_CONTENT_READER_END_OF_STREAM;
        char path[1200];
        int running = 0;
        follower_unkick(f);
        if (lookup(f, path, sizeof(path), &running) != 0) {
            f->done = 1;
            continue;
        }
        FILE *fp = fopen(path, "rb");
        size_t got = 0;
        if (fp) {
            char chunk[16384];
            if (fseek(fp, f->offset, SEEK_SET) == 0) {
                got = fread(chunk, 1, sizeof(chunk), fp);
                if (got && tg_buf_append(&f->partial, chunk, got) != TG_OK)
                    f->done = 1;
            }
            fclose(fp);
        }
        f->offset += (long)got;
        size_t used =
            emit_lines(f, f->partial.data ? f->partial.data : "", f->partial.len, &f->out);
        if (used) {
            memmove(f->partial.data, f->partial.data + used, f->partial.len - used);
            f->partial.len -= used;
            f->partial.data[f->partial.len] = '\0';
        }
        if (!got && !running) {
            f->done = 1; /* the container exited and everything was sent */
            continue;
        }
        if (!got)
            follower_wait(f);
    }
}

static void follow_free(void *cls)
{
    ks_logf_t *f = cls;
    if (!f)
        return;
    if (f->registered)
        follower_remove(f);
    tg_buf_clean(&f->out);
    tg_buf_clean(&f->partial);
    free(f);
}

void ks_logs_serve(ks_req_t *r, ks_target_t *t)
{
    char msg[1200], path[1200];
    if (strcmp(r->method, "GET")) {
        ks_reply_status(r, 405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource", NULL);
        return;
    }
    ks_lock();
    json_t *pod = json_incref(ks_store_get(KS_RT_PODS, t->ns, t->name));
    ks_unlock();
    if (!pod) {
        ks_reply_notfound(r, KS_RT_PODS, t->name);
        return;
    }
    ks_logf_t *f = tg_xcalloc(1, sizeof(*f));
    tg_buf_init(&f->out, 0);
    tg_buf_init(&f->partial, 0);
    ks_strlcpy(f->uid, ks_meta_uid(pod), sizeof(f->uid));
    json_t *cs = ks_jget(pod, "spec.containers");
    const char *c = ks_req_query(r, "container");
    if (!c || !*c) {
        if (json_array_size(cs) != 1) {
            tg_buf_t b;
            tg_buf_init(&b, 4096);
            size_t i;
            json_t *x;
            int rc = 0;
            json_array_foreach(cs, i, x)
                rc |= tg_buf_printf(&b, "%s%s", i ? " " : "", ks_jstr(x, "name"));
            (void)rc;
            snprintf(msg, sizeof(msg),
                     "a container name must be specified for pod %s, choose one of: [%s]", t->name,
                     b.data ? b.data : "");
            tg_buf_clean(&b);
            ks_reply_badrequest(r, msg);
            goto fail;
        }
        c = ks_jstr(json_array_get(cs, 0), "name");
    }
    int known = 0;
    size_t i;
    json_t *x;
    json_array_foreach(cs, i, x)
        if (ks_streq(ks_jstr(x, "name"), c))
            known = 1;
    json_array_foreach(ks_jget(pod, "spec.initContainers"), i, x)
        if (ks_streq(ks_jstr(x, "name"), c))
            known = 1;
    if (!known) {
        snprintf(msg, sizeof(msg), "container %s is not valid for pod %s", c, t->name);
        ks_reply_badrequest(r, msg);
        goto fail;
    }
    ks_strlcpy(f->container, c, sizeof(f->container));
    const char *q;
    f->previous = ks_req_flag(r, "previous");
    f->timestamps = ks_req_flag(r, "timestamps");
    f->limit = (q = ks_req_query(r, "limitBytes")) ? strtoll(q, NULL, 10) : -1;
    if ((q = ks_req_query(r, "sinceSeconds")))
        f->since = ks_now() - strtod(q, NULL);
    else if ((q = ks_req_query(r, "sinceTime")))
        f->since = ks_parse_time(q);
    long tail = (q = ks_req_query(r, "tailLines")) ? strtol(q, NULL, 10) : -1;
    int follow = ks_req_flag(r, "follow");
    int running = 0;
    if (lookup(f, path, sizeof(path), &running) != 0) {
        if (f->previous)
            snprintf(msg, sizeof(msg),
                     "previous terminated container \"%s\" in pod \"%s\" not "
                     "found",
                     c, t->name);
        else
            snprintf(msg, sizeof(msg),
                     "container \"%s\" in pod \"%s\" is waiting to start: "
                     "ContainerCreating",
                     c, t->name);
        ks_reply_badrequest(r, msg);
        goto fail;
    }
    size_t len = 0;
    char *text = ks_read_file(path, &len);
    f->offset = tail_offset(text ? text : "", text ? len : 0, tail);
    if (!follow) {
        tg_buf_t out;
        tg_buf_init(&out, 0);
        if (text) {
            size_t used = emit_lines(f, text + f->offset, len - (size_t)f->offset, &out);
            (void)used;
        }
        ks_reply_raw(r, 200, "text/plain", out.data ? out.data : "", out.len);
        tg_buf_clean(&out);
        free(text);
        goto fail; /* not a failure: shares the cleanup */
    }
    free(text);
    json_decref(pod);
    follower_add(f);
    ks_reply_stream(r, "text/plain", follow_read, f, follow_free);
    return;
fail:
    json_decref(pod);
    follow_free(f);
}
