/* Authentication and rate limits. */
#include "api/authn.h"

#include <stdlib.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/app.h"
#include "api/authz.h"
#include "auth/auth.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/ratelimit.h"
#include "http/problem.h"
#include "http/router.h"
#include "store/principals.h"

struct tg_authn_s {
    tg_auth_t *auth;
    tg_ratelimit_t *all, *submit;
    _Atomic uint64_t failures[TG_AUTH_REASON_COUNT];
};

static void authn_collect(tg_buf_t *out, void *arg)
{
    tg_authn_t *a = arg;
    if (tg_buf_puts(out, "# HELP taugate_auth_failures_total Requests refused "
                         "authentication, by reason.\n"
                         "# TYPE taugate_auth_failures_total counter\n") != TG_OK)
        return;
    for (int r = 1; r < TG_AUTH_REASON_COUNT; r++) {
        const char *name = tg_auth_reason_str((tg_auth_reason_e)r);
        if (tg_buf_printf(out, "taugate_auth_failures_total{reason=\"%s\"} %llu\n", name,
                          (unsigned long long)atomic_load(&a->failures[r])) != TG_OK)
            return;
    }
    tg_auth_stats_t st;
    tg_auth_stats(a->auth, &st);
    if (tg_buf_printf(out,
                      "# HELP taugate_auth_keys Token-signing keys currently accepted.\n"
                      "# TYPE taugate_auth_keys gauge\ntaugate_auth_keys %zu\n"
                      "# HELP taugate_auth_jwks_fetches_total Remote JWKS fetches by result.\n"
                      "# TYPE taugate_auth_jwks_fetches_total counter\n"
                      "taugate_auth_jwks_fetches_total{result=\"ok\"} %llu\n"
                      "taugate_auth_jwks_fetches_total{result=\"error\"} %llu\n"
                      "taugate_auth_jwks_fetches_total{result=\"rate_limited\"} %llu\n",
                      st.keys, (unsigned long long)st.jwks_fetch_ok,
                      (unsigned long long)st.jwks_fetch_failed,
                      (unsigned long long)st.jwks_limited) != TG_OK)
        return;
}

static const char *authn_opt(const char *s)
{
    return s && *s ? s : NULL;
}

tg_authn_t *tg_authn_new(const tg_config_t *cfg, char *err, size_t errlen)
{
    tg_auth_config_t ac;
    tg_auth_config_defaults(&ac);
    ac.issuer = authn_opt(cfg->auth_issuer);
    ac.audience = authn_opt(cfg->auth_audience);
    ac.jwks_file = authn_opt(cfg->auth_jwks_file);
    ac.jwks_url = authn_opt(cfg->auth_jwks_url);
    ac.pem_file = authn_opt(cfg->auth_pem_file);
    ac.pem_alg = authn_opt(cfg->auth_pem_alg);
    ac.hs256_secret = authn_opt(cfg->auth_hs256_secret);
    ac.leeway_s = (int)cfg->auth_leeway_s;
    ac.max_token_bytes = (size_t)cfg->auth_max_token_bytes;
    ac.max_lifetime_s = cfg->auth_max_token_lifetime_s;
    ac.groups_claim = authn_opt(cfg->auth_groups_claim);
    ac.admin_groups = authn_opt(cfg->auth_admin_groups);
    ac.admin_subjects = authn_opt(cfg->auth_admin_subjects);
    ac.jwks_min_refresh_s = (int)cfg->auth_jwks_min_refresh_s;
    if (!ac.issuer) {
        snprintf(err, errlen,
                 "authentication is not configured: set auth_issuer and one of "
                 "auth_jwks_url, auth_jwks_file, auth_pem_file or auth_hs256_secret");
        return NULL;
    }
    tg_auth_t *auth = tg_auth_new(&ac, err, errlen);
    if (!auth)
        return NULL;
    tg_authn_t *a = tg_xcalloc(1, sizeof(*a));
    a->auth = auth;
    a->all = tg_ratelimit_new((double)cfg->rate_limit_rps, (double)cfg->rate_limit_burst, 65536);
    a->submit = tg_ratelimit_new((double)cfg->submit_rate_limit_rps,
                                 (double)cfg->submit_rate_limit_burst, 65536);
    tg_metrics_register(authn_collect, a);
    return a;
}

void tg_authn_free(tg_authn_t *a)
{
    if (!a)
        return;
    tg_metrics_unregister(authn_collect, a);
    tg_auth_free(a->auth);
    tg_ratelimit_free(a->all);
    tg_ratelimit_free(a->submit);
    free(a);
}

void tg_authn_tick(tg_authn_t *a)
{
    tg_auth_tick(a->auth, time(NULL));
}

void tg_authn_reload(tg_authn_t *a)
{
    char err[512];
    if (tg_auth_reload(a->auth, time(NULL), err, sizeof(err)) != TG_OK)
        tg_log_warn("auth", "key reload: %s", err);
    else
        tg_log_info("auth", "keys reloaded");
}

static int authn_refuse(tg_req_t *req, tg_authn_t *a, tg_auth_reason_e why)
{
    if ((int)why > 0 && (int)why < TG_AUTH_REASON_COUNT)
        atomic_fetch_add(&a->failures[why], 1);
    tg_problem(req, TG_EUNAUTH, NULL, "%s",
               why == TG_AUTH_MISSING ? "this needs a bearer token (Authorization: Bearer ...)"
                                      : "the bearer token was refused");
    tg_resp_header(req, "WWW-Authenticate", tg_auth_www_authenticate(why));
    return -1;
}

/* A personal access token: looked up by digest; scoped to one workspace.
 * It acts with its minter's subject and, as of mint time, the minter's
 * groups and platform-admin standing (see tg_who_t.pat_admin). */
static int authn_pat(tg_req_t *req, tg_authn_t *a, const char *tok, size_t len, tg_who_t *who)
{
    char digest[65];
    if (!tg_auth_pat_well_formed(tok, len) ||
        tg_auth_pat_hash(tok, len, digest, sizeof(digest)) != TG_OK)
        return authn_refuse(req, a, TG_AUTH_MALFORMED);
    tg_db_conn_t *conn = tg_app_db_or_reply(req);
    if (!conn)
        return -1;
    json_t *row = NULL;
    tg_rc_e rc = tg_store_token_lookup(conn, digest, &row);
    if (rc == TG_ENOTFOUND)
        return authn_refuse(req, a, TG_AUTH_UNKNOWN_KEY);
    if (rc != TG_OK) {
        tg_problem(req, rc, NULL, "the token could not be checked");
        return -1;
    }
    who->subject = tg_arena_strdup(req->arena, json_string_value(json_object_get(row, "subject")));
    who->pat_workspace =
        tg_arena_strdup(req->arena, json_string_value(json_object_get(row, "workspace")));
    who->pat_role = tg_role_parse(json_string_value(json_object_get(row, "role")));
    who->pat_admin = json_is_true(json_object_get(row, "admin"));
    who->pat_sha256 = tg_arena_strdup(req->arena, digest);
    json_t *groups = json_object_get(row, "groups");
    who->ngroups = (int)json_array_size(groups);
    who->groups = tg_arena_alloc(req->arena, sizeof(char *) * ((size_t)who->ngroups + 1));
    for (int i = 0; i < who->ngroups; i++)
        who->groups[i] =
            tg_arena_strdup(req->arena, json_string_value(json_array_get(groups, (size_t)i)));
    json_decref(row);
    return 0;
}

static int authn_jwt(tg_req_t *req, tg_authn_t *a, const char *header, tg_who_t *who)
{
    tg_principal_t p;
    tg_auth_reason_e why = TG_AUTH_OK;
    if (tg_auth_verify(a->auth, header, time(NULL), &p, &why) != TG_OK) {
        tg_principal_clean(&p);
        return authn_refuse(req, a, why);
    }
    who->subject = tg_arena_strdup(req->arena, p.subject);
    who->name = p.name ? tg_arena_strdup(req->arena, p.name) : NULL;
    who->is_admin = p.is_admin;
    who->expires_at = (int64_t)p.expires_at;
    who->ngroups = (int)p.n_groups;
    who->groups = tg_arena_alloc(req->arena, sizeof(char *) * (p.n_groups + 1));
    for (size_t i = 0; i < p.n_groups; i++)
        who->groups[i] = tg_arena_strdup(req->arena, p.groups[i]);
    tg_principal_clean(&p);
    return 0;
}

int tg_authn_before(tg_req_t *req, void *app)
{
    tg_authn_t *a = ((tg_app_t *)app)->authn;
    tg_who_t *who = tg_arena_alloc(req->arena, sizeof(*who));
    const char *header = tg_req_header(req, "Authorization");
    const char *tok = NULL;
    size_t len = 0;
    tg_auth_reason_e why =
        tg_auth_bearer_token(header, tg_auth_max_token_bytes(a->auth), &tok, &len);
    if (why != TG_AUTH_OK)
        return authn_refuse(req, a, why);
    int rc = tg_auth_pat_detect(tok, len) ? authn_pat(req, a, tok, len, who)
                                          : authn_jwt(req, a, header, who);
    if (rc != 0)
        return -1;
    req->auth = who;
    req->principal = who->subject;

    if ((req->route->flags & TG_ROUTE_ADMIN) && !who->is_admin) {
        tg_problem(req, TG_EFORBIDDEN, NULL, "%s is for platform admins", req->route->path);
        return -1;
    }
    unsigned retry = 1;
    tg_ratelimit_t *bucket = (req->route->flags & TG_ROUTE_SUBMIT) ? a->submit : a->all;
    if (!tg_ratelimit_take(bucket, who->subject, tg_now_mono_us(), &retry)) {
        tg_problem(req, TG_ERATELIMIT, NULL, "too many requests from %s; retry in %u s",
                   who->subject, retry);
        char ra[16];
        snprintf(ra, sizeof(ra), "%u", retry ? retry : 1);
        tg_resp_header(req, "Retry-After", ra);
        return -1;
    }
    return 0;
}
