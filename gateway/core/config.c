/* The typed configuration table. Adding a key: one field in tg_config_t and one
 * row below; --help, the environment and the bounds checks follow from it. */
#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/mem.h"

typedef enum { CFG_INT, CFG_STR, CFG_BOOL } cfg_type_e;

typedef struct {
    const char *name;
    cfg_type_e type;
    size_t offset;
    const char *def;
    long min, max;
    const char *const *choices; /* for strings restricted to a set */
    int secret;                 /* never echoed in messages */
    const char *help;
} cfg_key_t;

static const char *const cfg_log_levels[] = {"debug", "info", "warn", "error", "off", NULL};
static const char *const cfg_drift_modes[] = {"correct", "report", NULL};

#define OFF(f) offsetof(tg_config_t, f)
static const cfg_key_t cfg_keys[] = {
    {"listen_address", CFG_STR, OFF(listen_address), "127.0.0.1", 0, 0, NULL, 0,
     "IPv4 or IPv6 address the HTTP server binds"},
    {"port", CFG_INT, OFF(port), "8080", 0, 65535, NULL, 0, "TCP port (0 picks a free one)"},
    /* Handlers block on PostgreSQL, so workers match the pool: fewer would
     * leave connections idle while requests queue behind a commit. */
    {"threads", CFG_INT, OFF(threads), "16", 1, 256, NULL, 0, "HTTP worker threads (epoll pool)"},
    {"max_connections", CFG_INT, OFF(max_connections), "1024", 1, 65536, NULL, 0,
     "total concurrent connections (more: 503)"},
    /* Behind an ingress or load balancer every connection comes from its
     * few addresses: raise this to its connection pool size there, or 0. */
    {"max_connections_per_ip", CFG_INT, OFF(max_connections_per_ip), "128", 0, 65536, NULL, 0,
     "concurrent connections from one address (more: 429; 0: no limit)"},
    {"connection_timeout_s", CFG_INT, OFF(connection_timeout_s), "30", 1, 3600, NULL, 0,
     "idle seconds before a connection is closed"},
    {"request_header_timeout_s", CFG_INT, OFF(request_header_timeout_s), "15", 1, 3600, NULL, 0,
     "a whole request head must arrive within this from its first byte (else 408)"},
    {"request_body_timeout_s", CFG_INT, OFF(request_body_timeout_s), "15", 1, 3600, NULL, 0,
     "time a request body gets before request_body_min_rate_bps applies (else 408)"},
    {"request_body_min_rate_bps", CFG_INT, OFF(request_body_min_rate_bps), "1024", 1, 1073741824,
     NULL, 0, "each byte/s of this earns a body one more second after request_body_timeout_s"},
    {"max_body_bytes", CFG_INT, OFF(max_body_bytes), "1048576", 1024, 268435456, NULL, 0,
     "largest request body accepted (larger: 413)"},
    {"max_header_bytes", CFG_INT, OFF(max_header_bytes), "32768", 4096, 1048576, NULL, 0,
     "memory for one request's line and headers (larger: 431)"},
    {"cors_allowed_origins", CFG_STR, OFF(cors_allowed_origins), "", 0, 0, NULL, 0,
     "browser origins that may call the API (comma-separated, * for any; none by default)"},
    {"shutdown_grace_s", CFG_INT, OFF(shutdown_grace_s), "10", 0, 600, NULL, 0,
     "seconds in-flight requests get to finish on SIGTERM"},
    {"log_level", CFG_STR, OFF(log_level), "info", 0, 0, cfg_log_levels, 0,
     "debug, info, warn, error or off"},
    {"access_log", CFG_BOOL, OFF(access_log), "true", 0, 1, NULL, 0,
     "one JSON line per request on stderr"},
    {"database_url", CFG_STR, OFF(database_url), "postgresql:///taugate", 0, 0, NULL, 1,
     "libpq connection string or URI"},
    {"db_pool_size", CFG_INT, OFF(db_pool_size), "16", 1, 512, NULL, 0,
     "PostgreSQL connections kept by the pool"},
    {"db_checkout_timeout_ms", CFG_INT, OFF(db_checkout_timeout_ms), "2000", 1, 600000, NULL, 0,
     "wait for a free connection before answering 503"},
    {"db_connect_timeout_s", CFG_INT, OFF(db_connect_timeout_s), "3", 1, 600, NULL, 0,
     "PostgreSQL connect timeout"},
    {"db_statement_timeout_ms", CFG_INT, OFF(db_statement_timeout_ms), "30000", 0, 3600000, NULL, 0,
     "server-side statement_timeout (0: none)"},
    {"migrations_dir", CFG_STR, OFF(migrations_dir), "migrations", 0, 0, NULL, 0,
     "folder of NNNN_name.sql migrations"},
    {"migrate_on_start", CFG_BOOL, OFF(migrate_on_start), "true", 0, 1, NULL, 0,
     "apply pending migrations when `serve` starts"},
    {"policy_dir", CFG_STR, OFF(policy_dir), "policies", 0, 0, NULL, 0,
     "folder of platform policy files (*.yaml), loaded at start and on SIGHUP"},
    {"policy_schema_file", CFG_STR, OFF(policy_schema_file), "schema/policy.schema.json", 0, 0,
     NULL, 0, "the JSON Schema policy files and rules are validated against"},
    {"policy_poll_s", CFG_INT, OFF(policy_poll_s), "10", 0, 3600, NULL, 0,
     "seconds between checks for policy changes made through other replicas (0: never)"},
    {"schema_file", CFG_STR, OFF(schema_file), "schema/tau.schema.json", 0, 0, NULL, 0,
     "the tau.yaml JSON Schema every submission is validated against"},
    {"openapi_file", CFG_STR, OFF(openapi_file), "openapi.yaml", 0, 0, NULL, 0,
     "OpenAPI document served at GET /v1/openapi.yaml"},
    {"console_dir", CFG_STR, OFF(console_dir), "console/dist", 0, 0, NULL, 0,
     "the built web console (`make console`) served under /ui/"},
    {"evidence_signing_key", CFG_STR, OFF(evidence_signing_key), "", 0, 0, NULL, 1,
     "Ed25519 private key (PKCS#8 PEM) that signs evidence; empty: an ephemeral key"},
    {"evidence_log_grace_s", CFG_INT, OFF(evidence_log_grace_s), "60", 0, 86400, NULL, 0,
     "seconds a finished run waits for its logs before its evidence is sealed anyway"},
    {"logs_collector", CFG_BOOL, OFF(logs_collector), "true", 0, 1, NULL, 0,
     "collect pod logs into PostgreSQL (with the engine)"},
    {"logs_max_followers", CFG_INT, OFF(logs_max_followers), "64", 1, 4096, NULL, 0,
     "container logs followed at once by this replica"},
    {"logs_lease_s", CFG_INT, OFF(logs_lease_s), "30", 3, 3600, NULL, 0,
     "how long a replica's claim on a container log lasts without renewal"},
    {"logs_prune_interval_s", CFG_INT, OFF(logs_prune_interval_s), "3600", 0, 604800, NULL, 0,
     "how often old log chunks are pruned by workspace retention (0: never)"},
    {"logs_replica_id", CFG_STR, OFF(logs_replica_id), "", 0, 0, NULL, 0,
     "name of this replica in log leases (default host:pid:random)"},
    {"logs_flush_interval_ms", CFG_INT, OFF(logs_flush_interval_ms), "1000", 10, 60000, NULL, 0,
     "a batch of log lines is stored at least this often"},
    {"logs_chunk_bytes", CFG_INT, OFF(logs_chunk_bytes), "65536", 1024, 16777216, NULL, 0,
     "a batch of log lines is stored once it holds this much"},
    {"logs_http_max_followers", CFG_INT, OFF(logs_http_max_followers), "256", 1, 65536, NULL, 0,
     "clients following logs at once (more: 503)"},
    {"logs_http_idle_timeout_s", CFG_INT, OFF(logs_http_idle_timeout_s), "300", 1, 86400, NULL, 0,
     "a log follow without new lines this long ends"},
    {"logs_http_keepalive_s", CFG_INT, OFF(logs_http_keepalive_s), "15", 1, 3600, NULL, 0,
     "SSE keep-alive comment interval of an idle stream (log follows and run-change streams)"},
    {"logs_http_poll_ms", CFG_INT, OFF(logs_http_poll_ms), "250", 10, 60000, NULL, 0,
     "how often the stream hub looks for new log lines and run changes"},
    {"workspaces_allow_default_namespace", CFG_BOOL, OFF(workspaces_allow_default_namespace),
     "false", 0, 1, NULL, 0,
     "let a workspace be bound to the namespace named default (kube-* never)"},
    {"auth_issuer", CFG_STR, OFF(auth_issuer), "", 0, 0, NULL, 0,
     "required: the `iss` every token must carry"},
    {"auth_audience", CFG_STR, OFF(auth_audience), "taugate", 0, 0, NULL, 0,
     "accepted `aud` values, comma-separated"},
    {"auth_jwks_file", CFG_STR, OFF(auth_jwks_file), "", 0, 0, NULL, 0,
     "JWKS file with the token-signing public keys"},
    {"auth_jwks_url", CFG_STR, OFF(auth_jwks_url), "", 0, 0, NULL, 0,
     "an OIDC provider's jwks_uri, fetched and refreshed on unknown kid"},
    {"auth_pem_file", CFG_STR, OFF(auth_pem_file), "", 0, 0, NULL, 0,
     "PEM public key (or certificate) that signs tokens"},
    {"auth_pem_alg", CFG_STR, OFF(auth_pem_alg), "RS256", 0, 0, NULL, 0,
     "the algorithm auth_pem_file's key is pinned to (RS256/384/512, ES256/384)"},
    {"auth_hs256_secret", CFG_STR, OFF(auth_hs256_secret), "", 0, 0, NULL, 1,
     "HS256 shared secret (at least 32 bytes); development only"},
    {"auth_leeway_s", CFG_INT, OFF(auth_leeway_s), "60", 0, 600, NULL, 0,
     "clock skew allowed on exp, nbf and iat"},
    {"auth_max_token_bytes", CFG_INT, OFF(auth_max_token_bytes), "8192", 256, 65536, NULL, 0,
     "tokens longer than this are refused before parsing"},
    {"auth_max_token_lifetime_s", CFG_INT, OFF(auth_max_token_lifetime_s), "86400", 60, 2592000,
     NULL, 0, "tokens living longer than this (exp - iat, or exp - now) are refused"},
    {"auth_groups_claim", CFG_STR, OFF(auth_groups_claim), "groups", 0, 0, NULL, 0,
     "claim holding the principal's groups (a dotted path is allowed)"},
    {"auth_admin_groups", CFG_STR, OFF(auth_admin_groups), "", 0, 0, NULL, 0,
     "groups whose members are platform admins, comma-separated"},
    {"auth_admin_subjects", CFG_STR, OFF(auth_admin_subjects), "", 0, 0, NULL, 0,
     "subjects who are platform admins, comma-separated"},
    {"auth_jwks_min_refresh_s", CFG_INT, OFF(auth_jwks_min_refresh_s), "30", 1, 3600, NULL, 0,
     "at most one JWKS refetch per this many seconds"},
    {"kube_api_url", CFG_STR, OFF(kube_api_url), "", 0, 0, NULL, 0,
     "Kubernetes API server URL (development; else kubeconfig or in-cluster)"},
    {"kubeconfig", CFG_STR, OFF(kubeconfig), "", 0, 0, NULL, 0, "kubeconfig file to use"},
    {"kube_context", CFG_STR, OFF(kube_context), "", 0, 0, NULL, 0,
     "kubeconfig context (default: current-context)"},
    {"kube_in_cluster", CFG_BOOL, OFF(kube_in_cluster), "false", 0, 1, NULL, 0,
     "use the pod's service account (KUBERNETES_SERVICE_HOST)"},
    {"kube_token_file", CFG_STR, OFF(kube_token_file), "", 0, 0, NULL, 0,
     "bearer token file for kube_api_url, re-read when it changes"},
    {"kube_ca_file", CFG_STR, OFF(kube_ca_file), "", 0, 0, NULL, 0,
     "CA bundle that verifies the API server"},
    {"kube_timeout_ms", CFG_INT, OFF(kube_timeout_ms), "30000", 100, 600000, NULL, 0,
     "timeout of one Kubernetes request"},
    {"kube_max_retries", CFG_INT, OFF(kube_max_retries), "4", -1, 20, NULL, 0,
     "retries of a Kubernetes request on 429, 5xx and network errors (-1: none)"},
    {"engine", CFG_BOOL, OFF(engine), "true", 0, 1, NULL, 0,
     "run the background engine (submit, watch, recover) when a cluster is configured"},
    {"engine_poll_ms", CFG_INT, OFF(engine_poll_ms), "500", 10, 60000, NULL, 0,
     "how often the engine looks for work (submissions, retries)"},
    {"engine_resync_s", CFG_INT, OFF(engine_resync_s), "30", 1, 3600, NULL, 0,
     "seconds between passes that compare every unfinished run with the cluster (as the "
     "informers' caches hold it) and apply what was missed"},
    {"engine_workers", CFG_INT, OFF(engine_workers), "2", 1, 64, NULL, 0,
     "threads applying what the cluster's objects say to the runs"},
    {"engine_submitters", CFG_INT, OFF(engine_submitters), "2", 1, 64, NULL, 0,
     "threads creating and deleting runs' objects in the cluster"},
    {"reconcile", CFG_BOOL, OFF(reconcile), "true", 0, 1, NULL, 0,
     "write the database's flavors, queues and priority classes into the cluster (leader only)"},
    {"reconcile_interval_s", CFG_INT, OFF(reconcile_interval_s), "30", 1, 3600, NULL, 0,
     "seconds between Kueue reconcile steps (admin changes also trigger one)"},
    {"reconcile_drift", CFG_STR, OFF(reconcile_drift), "correct", 0, 0, cfg_drift_modes, 0,
     "hand edits of managed Kueue objects: correct (put back and report) or report"},
    {"reconcile_adopt", CFG_BOOL, OFF(reconcile_adopt), "false", 0, 1, NULL, 0,
     "take over same-named Kueue objects that taugate does not manage"},
    {"node_health_conditions", CFG_STR, OFF(node_health_conditions),
     "GpuUnhealthy,XidErrors,EccErrors,NVLinkDown,InfinibandDown,DcgmHealthProblem,"
     "GPUHealthy=False,XIDError*,GPUECCDouble*,GPUNVLink*,IBLinkDown",
     0, 0, NULL, 0,
     "node conditions that mark a GPU node unhealthy: Type (bad when True), Type=False, Prefix*"},
    {"node_gpu_class_labels", CFG_STR, OFF(node_gpu_class_labels),
     "taugate.io/gpu-class,nvidia.com/gpu.product", 0, 0, NULL, 0,
     "node labels naming a node's GPU class (the first one present wins)"},
    {"node_auto_cordon", CFG_BOOL, OFF(node_auto_cordon), "true", 0, 1, NULL, 0,
     "cordon a GPU node that turns unhealthy"},
    {"node_evict_on_fault", CFG_BOOL, OFF(node_evict_on_fault), "false", 0, 1, NULL, 0,
     "evict taugate's pods from an unhealthy node and recover their runs (NodeFault)"},
    {"node_uncordon_on_recovery", CFG_BOOL, OFF(node_uncordon_on_recovery), "true", 0, 1, NULL, 0,
     "uncordon a node taugate cordoned once it is healthy again"},
    {"node_resync_s", CFG_INT, OFF(node_resync_s), "30", 1, 3600, NULL, 0,
     "how often unhealthy and taugate-cordoned nodes are looked at again"},
    {"platform_metrics_cache_ms", CFG_INT, OFF(platform_metrics_cache_ms), "5000", 0, 600000, NULL,
     0, "how long the database-derived /metrics series are reused between scrapes"},
    {"metrics_tenant_labels", CFG_BOOL, OFF(metrics_tenant_labels), "false", 0, 1, NULL, 0,
     "label taugate_runs on the unauthenticated /metrics by workspace (tenant names)"},
    {"tenancy_cache_ms", CFG_INT, OFF(tenancy_cache_ms), "10000", 0, 600000, NULL, 0,
     "how long roles and workspace settings are kept in memory at most (0: never); any change"
     " voids them at once through PostgreSQL notifications"},
    {"tenancy_cache_wait_ms", CFG_INT, OFF(tenancy_cache_wait_ms), "2000", 1, 600000, NULL, 0,
     "how long a request that misses the tenancy cache waits for another request already reading"
     " the same entry before it reads it itself"},
    {"rate_limit_rps", CFG_INT, OFF(rate_limit_rps), "50", 1, 1000000, NULL, 0,
     "requests per second each principal may sustain"},
    {"rate_limit_burst", CFG_INT, OFF(rate_limit_burst), "200", 1, 1000000, NULL, 0,
     "requests a principal may send at once above the rate"},
    {"submit_rate_limit_rps", CFG_INT, OFF(submit_rate_limit_rps), "10", 1, 1000000, NULL, 0,
     "run submissions per second each principal may sustain"},
    {"submit_rate_limit_burst", CFG_INT, OFF(submit_rate_limit_burst), "50", 1, 1000000, NULL, 0,
     "run submissions a principal may send at once above the rate"},
};
#undef OFF

static void cfg_env_name(const char *key, char *out, size_t outlen)
{
    size_t i = 0;
    const char *prefix = "TAUGATE_";
    for (; prefix[i] && i + 1 < outlen; i++)
        out[i] = prefix[i];
    for (size_t k = 0; key[k] && i + 1 < outlen; k++, i++)
        out[i] = (char)toupper((unsigned char)key[k]);
    out[i] = '\0';
}

static const cfg_key_t *cfg_find(const char *name, size_t len)
{
    for (size_t i = 0; i < TG_ARRAY_LEN(cfg_keys); i++) {
        const char *k = cfg_keys[i].name;
        if (strlen(k) != len)
            continue;
        size_t j = 0;
        /* flags may spell underscores as dashes */
        for (; j < len; j++) {
            char c = name[j] == '-' ? '_' : name[j];
            if (c != k[j])
                break;
        }
        if (j == len)
            return &cfg_keys[i];
    }
    return NULL;
}

static int cfg_set(tg_config_t *cfg, const cfg_key_t *k, const char *value, const char *source,
                   char *err, size_t errlen)
{
    char *base = (char *)cfg;
    switch (k->type) {
    case CFG_INT: {
        errno = 0;
        char *end = NULL;
        long v = strtol(value, &end, 10);
        if (errno || !end || end == value || *end || v < k->min || v > k->max) {
            snprintf(err, errlen,
                     "invalid value for %s (from %s): expected an integer in [%ld, %ld]", k->name,
                     source, k->min, k->max);
            return -1;
        }
        *(long *)(base + k->offset) = v;
        return 0;
    }
    case CFG_BOOL: {
        int v;
        if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "yes"))
            v = 1;
        else if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "no"))
            v = 0;
        else {
            snprintf(err, errlen, "invalid value for %s (from %s): expected true or false", k->name,
                     source);
            return -1;
        }
        *(int *)(base + k->offset) = v;
        return 0;
    }
    case CFG_STR: {
        if (k->choices) {
            int ok = 0;
            for (const char *const *c = k->choices; *c; c++)
                ok |= !strcmp(*c, value);
            if (!ok) {
                char allowed[256] = "";
                size_t used = 0;
                for (const char *const *c = k->choices; *c && used < sizeof(allowed); c++)
                    used += (size_t)snprintf(allowed + used, sizeof(allowed) - used, "%s%s",
                                             c == k->choices ? "" : ", ", *c);
                snprintf(err, errlen, "invalid value for %s (from %s): expected one of %s", k->name,
                         source, allowed);
                return -1;
            }
        }
        char **slot = (char **)(base + k->offset);
        free(*slot);
        *slot = tg_xstrdup(value);
        return 0;
    }
    }
    return -1;
}

int tg_config_load(tg_config_t *cfg, tg_config_argv_t *args, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof(*cfg));
    args->nrest = 0;
    char **argv = args->argv;
    const int argc = args->argc;
    for (size_t i = 0; i < TG_ARRAY_LEN(cfg_keys); i++)
        if (cfg_set(cfg, &cfg_keys[i], cfg_keys[i].def, "default", err, errlen) != 0)
            return -1;

    for (size_t i = 0; i < TG_ARRAY_LEN(cfg_keys); i++) {
        char env[96];
        cfg_env_name(cfg_keys[i].name, env, sizeof(env));
        const char *v = getenv(env);
        if (v && cfg_set(cfg, &cfg_keys[i], v, env, err, errlen) != 0)
            return -1;
    }

    for (int i = args->first; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (args->nrest < args->restcap)
                args->rest[args->nrest++] = i;
            continue;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const cfg_key_t *k = cfg_find(name, nlen);
        if (!k) {
            snprintf(err, errlen, "unknown option --%.*s (see --help)", (int)nlen, name);
            return -1;
        }
        const char *value;
        if (eq)
            value = eq + 1;
        else if (k->type == CFG_BOOL)
            value = "true";
        else if (i + 1 < argc)
            value = argv[++i];
        else {
            snprintf(err, errlen, "option --%s needs a value", k->name);
            return -1;
        }
        if (cfg_set(cfg, k, value, "command line", err, errlen) != 0)
            return -1;
    }
    return 0;
}

void tg_config_clean(tg_config_t *cfg)
{
    for (size_t i = 0; i < TG_ARRAY_LEN(cfg_keys); i++)
        if (cfg_keys[i].type == CFG_STR)
            TG_FREE_NULL(*(char **)((char *)cfg + cfg_keys[i].offset));
}

void tg_config_print_help(FILE *out)
{
    fprintf(out, "Configuration keys (flag --key=value, or environment variable):\n\n");
    for (size_t i = 0; i < TG_ARRAY_LEN(cfg_keys); i++) {
        const cfg_key_t *k = &cfg_keys[i];
        char env[96];
        cfg_env_name(k->name, env, sizeof(env));
        const char *type = k->type == CFG_INT ? "int" : k->type == CFG_BOOL ? "bool" : "string";
        fprintf(out, "  --%-26s %-6s env %s\n", k->name, type, env);
        fprintf(out, "      %s\n", k->help);
        if (k->type == CFG_INT)
            fprintf(out, "      default %s, range [%ld, %ld]\n", k->def, k->min, k->max);
        else if (k->secret)
            fprintf(out, "      default %s (secret: never logged)\n", k->def);
        else
            fprintf(out, "      default %s\n", k->def);
    }
}
