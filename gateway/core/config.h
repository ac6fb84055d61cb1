/* Configuration: one typed table of keys read from the environment
 * (TAUGATE_<KEY>) and then from command-line flags (--key=value), flags
 * winning. `taugate --help` prints the table. */
#ifndef TG_CORE_CONFIG_H
#define TG_CORE_CONFIG_H

#include <stddef.h>
#include <stdio.h>

typedef struct tg_config_s {
    /* server */
    char *listen_address;
    long port;
    long threads;
    long max_connections;
    long max_connections_per_ip;
    long connection_timeout_s;
    long request_header_timeout_s;
    long request_body_timeout_s;
    long request_body_min_rate_bps;
    char *cors_allowed_origins;
    long max_body_bytes;
    long max_header_bytes;
    long shutdown_grace_s;
    char *log_level;
    int access_log;
    /* store */
    char *database_url;
    long db_pool_size;
    long db_checkout_timeout_ms;
    long db_connect_timeout_s;
    long db_statement_timeout_ms;
    char *migrations_dir;
    int migrate_on_start;
    char *schema_file;
    char *openapi_file;
    char *console_dir;
    char *policy_dir;
    char *policy_schema_file;
    long policy_poll_s;
    char *evidence_signing_key;
    /* logs */
    int logs_collector;
    long logs_max_followers;
    long logs_lease_s;
    long logs_prune_interval_s;
    char *logs_replica_id;
    long logs_flush_interval_ms;
    long logs_chunk_bytes;
    long logs_http_max_followers;
    long logs_http_idle_timeout_s;
    long logs_http_keepalive_s;
    long logs_http_poll_ms;
    long evidence_log_grace_s;
    /* authentication */
    char *auth_issuer;
    char *auth_audience;
    char *auth_jwks_file;
    char *auth_jwks_url;
    char *auth_pem_file;
    char *auth_pem_alg;
    char *auth_hs256_secret;
    long auth_leeway_s;
    long auth_max_token_bytes;
    long auth_max_token_lifetime_s;
    int workspaces_allow_default_namespace;
    int metrics_tenant_labels;
    char *auth_groups_claim;
    char *auth_admin_groups;
    char *auth_admin_subjects;
    long auth_jwks_min_refresh_s;
    /* Kubernetes */
    char *kube_api_url;
    char *kubeconfig;
    char *kube_context;
    int kube_in_cluster;
    char *kube_token_file;
    char *kube_ca_file;
    long kube_timeout_ms;
    long kube_max_retries;
    int engine;
    long engine_poll_ms;
    long engine_resync_s;
    long engine_workers;
    long engine_submitters;
    int reconcile;
    long reconcile_interval_s;
    char *reconcile_drift;
    int reconcile_adopt;
    /* GPU fleet (engine/nodes.h) and platform metrics */
    char *node_health_conditions;
    char *node_gpu_class_labels;
    int node_auto_cordon;
    int node_evict_on_fault;
    int node_uncordon_on_recovery;
    long node_resync_s;
    long platform_metrics_cache_ms;
    long tenancy_cache_ms;
    long tenancy_cache_wait_ms;
    /* rate limits, per principal */
    long rate_limit_rps;
    long rate_limit_burst;
    long submit_rate_limit_rps;
    long submit_rate_limit_burst;
} tg_config_t;

/* The command line tg_config_load reads: argv[first..argc). The arguments
 * that are not flags are left for the caller: their indexes go to
 * rest[0..restcap) and their count to nrest. */
typedef struct tg_config_argv_s {
    int argc;
    char **argv;
    int first;
    int *rest;
    int restcap;
    int nrest; /* out */
} tg_config_argv_t;

/* Fill cfg with the defaults, then the environment, then the command line.
 * On an invalid value returns -1 and writes a message naming the key and the
 * allowed range into err. */
int tg_config_load(tg_config_t *cfg, tg_config_argv_t *args, char *err, size_t errlen);
void tg_config_clean(tg_config_t *cfg);
/* Print every key with its type, default, bounds, environment variable and help. */
void tg_config_print_help(FILE *out);

#endif
