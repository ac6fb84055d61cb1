/* The tenancy cache: a LISTEN thread and a small direct-mapped table. */
#include "store/tenancy_cache.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ids.h"
#include "core/log.h"
#include "core/monotonic.h"
#include "store/context.h"
#include "store/principals.h"

#define CACHE_SLOTS    1024 /* workspaces × active principals on one replica */
#define LISTEN_POLL_MS 250
#define RECONNECT_MS   1000

typedef struct {
    char *key; /* length-prefixed parts, so no subject can forge a key */
    /* Shared, never modified: handed out by reference (jansson's reference
     * counts are atomic), which costs a submission nothing where parsing a
     * stored text cost a few percent of it. */
    json_t *value;
    uint64_t generation;
    uint64_t expires_us;
    /* A request is reading `key` from PostgreSQL: others that miss on it
     * wait for that answer instead of all asking at once (when entries
     * expire together, every handler thread missed together and PostgreSQL
     * got a burst of the same queries). */
    int loading;
} cache_slot_t;

struct tg_tenancy_cache_s {
    char *conninfo;
    int connect_timeout_s;
    int wait_ms; /* tenancy_cache_wait_ms */
    uint64_t ttl_us;
    /* 0 while the listener is not connected: nothing is trusted then */
    _Atomic uint64_t generation;
    atomic_int listening;
    atomic_int stop;
    pthread_t listener;
    pthread_mutex_t lock;
    pthread_cond_t loaded; /* a slot's load finished (or was given up) */
    cache_slot_t slots[CACHE_SLOTS];
};

static PGconn *cache_listen_connect(tg_tenancy_cache_t *c)
{
    char timeout[16];
    snprintf(timeout, sizeof(timeout), "%d", c->connect_timeout_s);
    const char *keys[] = {"dbname", "connect_timeout", "application_name", NULL};
    const char *vals[] = {c->conninfo, timeout, "taugate-listen", NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    if (pg && PQstatus(pg) == CONNECTION_OK) {
        /* a fixed statement on a connection of its own, outside the pool */
        PGresult *r = PQexec(pg, "LISTEN taugate_tenancy");
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (ok)
            return pg;
    }
    tg_log_warn("store", "tenancy cache off until PostgreSQL can be listened to: %s",
                pg ? PQerrorMessage(pg) : "out of memory");
    PQfinish(pg);
    return NULL;
}

/* Wait for notifications until the connection breaks or we are stopped. */
static void cache_listen_loop(tg_tenancy_cache_t *c, PGconn *pg)
{
    struct pollfd pfd = {.fd = PQsocket(pg), .events = POLLIN};
    while (!atomic_load(&c->stop)) {
        if (poll(&pfd, 1, LISTEN_POLL_MS) < 0 || (pfd.revents & (POLLERR | POLLHUP)))
            return;
        if (pfd.revents & POLLIN) {
            if (!PQconsumeInput(pg))
                return;
            PGnotify *n;
            while ((n = PQnotifies(pg)) != NULL) {
                atomic_fetch_add(&c->generation, 1);
                PQfreemem(n);
            }
        }
        if (PQstatus(pg) != CONNECTION_OK)
            return;
    }
}

static void *cache_listener_main(void *arg)
{
    tg_tenancy_cache_t *c = arg;
    while (!atomic_load(&c->stop)) {
        PGconn *pg = cache_listen_connect(c);
        if (pg) {
            /* whatever changed while we were deaf is voided by the bump */
            atomic_fetch_add(&c->generation, 1);
            atomic_store(&c->listening, 1);
            cache_listen_loop(c, pg);
            atomic_store(&c->listening, 0);
            atomic_fetch_add(&c->generation, 1);
            PQfinish(pg);
        }
        for (int waited = 0; waited < RECONNECT_MS && !atomic_load(&c->stop);
             waited += LISTEN_POLL_MS)
            poll(NULL, 0, LISTEN_POLL_MS);
    }
    return NULL;
}

tg_tenancy_cache_t *tg_tenancy_cache_start(const tg_tenancy_cache_config_t *cfg)
{
    if (cfg->ttl_ms <= 0)
        return NULL;
    tg_tenancy_cache_t *c = tg_xcalloc(1, sizeof(*c));
    c->conninfo = tg_xstrdup(cfg->conninfo);
    c->connect_timeout_s = cfg->connect_timeout_s;
    c->ttl_us = (uint64_t)cfg->ttl_ms * 1000;
    c->wait_ms = cfg->wait_ms > 0 ? cfg->wait_ms : 1;
    atomic_init(&c->generation, 1);
    pthread_mutex_init(&c->lock, NULL);
    tg_cond_init_monotonic(&c->loaded);
    if (pthread_create(&c->listener, NULL, cache_listener_main, c) != 0) {
        tg_log_warn("store", "tenancy cache off: cannot start its listener");
        pthread_cond_destroy(&c->loaded);
        pthread_mutex_destroy(&c->lock);
        free(c->conninfo);
        free(c);
        return NULL;
    }
    return c;
}

void tg_tenancy_cache_stop(tg_tenancy_cache_t *c)
{
    if (!c)
        return;
    atomic_store(&c->stop, 1);
    pthread_join(c->listener, NULL);
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(c->slots[i].key);
        json_decref(c->slots[i].value);
    }
    pthread_cond_destroy(&c->loaded);
    pthread_mutex_destroy(&c->lock);
    free(c->conninfo);
    free(c);
}

void tg_tenancy_cache_invalidate(tg_tenancy_cache_t *c)
{
    if (c)
        atomic_fetch_add(&c->generation, 1);
}

/* The generation to stamp a fresh read with, or 0 when caching is off. */
static uint64_t cache_generation(tg_tenancy_cache_t *c)
{
    return c && atomic_load(&c->listening) ? atomic_load(&c->generation) : 0;
}

static uint64_t cache_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The cached value for key (a new reference to the shared tree), or NULL:
 * then *claimed says whether this caller is to load it (and cache_put or
 * cache_release the slot). A caller that finds another loading the same key
 * waits for it, up to wait_ms, then loads on its own unclaimed. */
static json_t *cache_get(tg_tenancy_cache_t *c, const char *key, int *claimed)
{
    *claimed = 0;
    uint64_t gen = cache_generation(c);
    if (!gen)
        return NULL;
    cache_slot_t *s = &c->slots[cache_hash(key) % CACHE_SLOTS];
    json_t *out = NULL;
    struct timespec until = tg_mono_deadline_ms((uint64_t)c->wait_ms);
    pthread_mutex_lock(&c->lock);
    for (;;) {
        int same = s->key && strcmp(s->key, key) == 0;
        if (same && s->value && s->generation == gen && s->expires_us > tg_now_mono_us()) {
            out = json_incref(s->value);
            break;
        }
        if (!(same && s->loading)) {
            /* claim the slot: a colliding key's entry goes, as a put would */
            free(s->key);
            json_decref(s->value);
            s->key = tg_xstrdup(key);
            s->value = NULL;
            s->loading = 1;
            *claimed = 1;
            break;
        }
        if (pthread_cond_timedwait(&c->loaded, &c->lock, &until) != 0)
            break; /* the loader is slow: read it ourselves */
        gen = cache_generation(c);
        if (!gen)
            break;
    }
    pthread_mutex_unlock(&c->lock);
    return out;
}

/* Give up a claim without a value (the read failed). */
static void cache_release(tg_tenancy_cache_t *c, const char *key)
{
    cache_slot_t *s = &c->slots[cache_hash(key) % CACHE_SLOTS];
    pthread_mutex_lock(&c->lock);
    if (s->key && strcmp(s->key, key) == 0)
        s->loading = 0;
    pthread_cond_broadcast(&c->loaded);
    pthread_mutex_unlock(&c->lock);
}

static void cache_put(tg_tenancy_cache_t *c, const char *key, uint64_t gen, const json_t *v)
{
    /* a copy: the caller keeps and may change its own */
    json_t *copy = gen ? json_deep_copy(v) : NULL;
    if (!copy) {
        cache_release(c, key);
        return;
    }
    cache_slot_t *s = &c->slots[cache_hash(key) % CACHE_SLOTS];
    pthread_mutex_lock(&c->lock);
    free(s->key);
    json_decref(s->value);
    s->key = tg_xstrdup(key);
    s->value = copy;
    s->generation = gen;
    s->expires_us = tg_now_mono_us() + c->ttl_us;
    s->loading = 0;
    pthread_cond_broadcast(&c->loaded);
    pthread_mutex_unlock(&c->lock);
}

/* "<kind>" then each part as "<length>:<bytes>". */
static char *cache_key(const char *kind, const char *const *parts, int n)
{
    size_t len = strlen(kind) + 1;
    for (int i = 0; i < n; i++)
        len += strlen(parts[i]) + 24;
    char *key = tg_xmalloc(len);
    size_t at = (size_t)snprintf(key, len, "%s", kind);
    for (int i = 0; i < n; i++)
        at += (size_t)snprintf(key + at, len - at, "%zu:%s", strlen(parts[i]), parts[i]);
    return key;
}

tg_rc_e tg_tenancy_roles(tg_tenancy_cache_t *c, tg_db_conn_t *conn, const char *workspace,
                         const char *subject, const char *groups, json_t **roles, int *exists)
{
    uint64_t gen = cache_generation(c);
    const char *parts[] = {workspace, subject ? subject : "", groups};
    char *key = gen ? cache_key("roles", parts, 3) : NULL;
    int claimed = 0;
    json_t *hit = key ? cache_get(c, key, &claimed) : NULL;
    tg_rc_e rc = TG_OK;
    if (hit) {
        *exists = json_is_true(json_object_get(hit, "exists"));
        *roles = json_incref(json_object_get(hit, "roles"));
    } else {
        rc = tg_store_member_roles(conn, workspace, subject, groups, roles, exists);
        if (rc == TG_OK && claimed) {
            hit = json_pack("{s:b, s:O}", "exists", *exists, "roles", *roles);
            cache_put(c, key, gen, hit);
        } else if (claimed) {
            cache_release(c, key);
        }
    }
    json_decref(hit);
    free(key);
    return rc;
}

tg_rc_e tg_tenancy_context(tg_tenancy_cache_t *c, tg_db_conn_t *conn, const char *workspace,
                           json_t **out)
{
    uint64_t gen = cache_generation(c);
    char *key = gen ? cache_key("context", &workspace, 1) : NULL;
    int claimed = 0;
    *out = key ? cache_get(c, key, &claimed) : NULL;
    tg_rc_e rc = TG_OK;
    if (!*out) {
        rc = tg_store_resolve_context(conn, workspace, out);
        if (rc == TG_OK && claimed)
            cache_put(c, key, gen, *out);
        else if (claimed)
            cache_release(c, key);
    }
    free(key);
    return rc;
}
