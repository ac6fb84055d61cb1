/* Where the Kubernetes API is and how to authenticate to it.
 *
 * Two structs:
 *  - tg_kube_config_t: what the operator configured. Plain values the lead's
 *    typed config table fills (all strings borrowed; zero means default).
 *  - tg_kube_conn_t: the resolved connection (server URL, CA, credentials,
 *    default namespace), owned, produced by tg_kube_conn_load from exactly
 *    one source, tried in this order:
 *      1. api_url set:    that URL, with token / token_file / ca_file /
 *                         client_cert_file + client_key_file (development,
 *                         kubesim, or a proxy);
 *      2. kubeconfig set: that kubeconfig file, its current-context unless
 *                         `context` names another (see kube/kubeconfig.h);
 *      3. otherwise:      in-cluster (service account), which needs
 *                         KUBERNETES_SERVICE_HOST and _PORT in the
 *                         environment. `in_cluster` set makes 3 the only
 *                         source tried.
 *    There is no silent fallback to ~/.kube/config: a daemon should talk to
 *    the cluster it was told about, not the one a developer used last.
 *
 * Secrets: tokens and keys are held in memory wiped on free; they never go
 * to the log and never into error messages.
 *
 * Plain http: credentials are sent over http:// only to loopback hosts (a
 * local kubesim); for any other http:// server they are dropped with a
 * warning, as client-go does, so a token never crosses a network in clear.
 *
 * No jansson values cross this interface. Thread-safety: a tg_kube_conn_t is
 * immutable once loaded and may be read from any thread; loading touches
 * only its own arguments (and reads the environment). */
#ifndef TG_KUBE_CONFIG_H
#define TG_KUBE_CONFIG_H

#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"

#define TG_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

typedef struct tg_kube_config_s {
    /* source selection */
    const char *api_url;    /* e.g. "https://127.0.0.1:6443" (dev / kubesim) */
    const char *kubeconfig; /* path to a kubeconfig file */
    const char *context;    /* kubeconfig context; NULL → current-context */
    int in_cluster;         /* only try the in-cluster service account */
    /* credentials and trust for api_url (the in-cluster source also honours
     * token_file and ca_file as overrides) */
    const char *token;      /* bearer token (avoid: prefer token_file) */
    const char *token_file; /* bearer token file, re-read when it changes */
    const char *ca_file;    /* PEM bundle that verifies the server */
    const char *client_cert_file;
    const char *client_key_file;
    int insecure_skip_tls_verify; /* development only; logged as a warning */
    const char *namespace_;       /* default namespace override */
    const char *sa_dir;           /* service account dir; NULL → TG_KUBE_SA_DIR */
    /* client behaviour (used by tg_kube_client_new; 0 → the default shown) */
    long connect_timeout_ms;   /* 5000 */
    long timeout_ms;           /* whole non-streaming request: 30000 */
    int max_retries;           /* 4 (so up to 5 attempts); -1 → no retries */
    long retry_base_ms;        /* first backoff: 200 */
    long retry_max_ms;         /* backoff ceiling: 10000 */
    long retry_after_max_ms;   /* longest Retry-After we wait for: 30000 */
    size_t max_response_bytes; /* 16 MiB */
    size_t max_event_bytes;    /* one watch event: 16 MiB */
    int pool_size;             /* idle connections kept: 8 */
    long token_reread_s;       /* re-read the token file at least this often: 60 */
    const char *user_agent;    /* "taugate/<version>" */
} tg_kube_config_t;

typedef enum {
    TG_KUBE_SRC_URL = 0,
    TG_KUBE_SRC_KUBECONFIG,
    TG_KUBE_SRC_IN_CLUSTER,
} tg_kube_source_e;

/* A resolved connection. Every pointer is owned by the struct (NULL when
 * absent); *_pem fields are in-memory PEM (from kubeconfig *-data fields)
 * and take precedence over the matching *_file. */
typedef struct tg_kube_conn_s {
    tg_kube_source_e source;
    char *server;     /* scheme://host[:port][/prefix], no trailing '/' */
    char *namespace_; /* default namespace; never NULL after load ("default") */
    char *context;    /* the kubeconfig context used, for logs */
    char *token;      /* static bearer token */
    char *token_file; /* bearer token file (rotated by the kubelet) */
    char *ca_file;
    char *ca_pem;
    size_t ca_pem_len;
    char *cert_file;
    char *cert_pem;
    size_t cert_pem_len;
    char *key_file;
    char *key_pem;
    size_t key_pem_len;
    int insecure;         /* skip server verification */
    int send_credentials; /* 0 when http:// to a non-loopback host */
} tg_kube_conn_t;

/* Resolve `cfg` into `conn` (which is overwritten). On failure returns
 * TG_EINVAL (or TG_ENOTFOUND when no source applies: not in a cluster and
 * nothing configured) and writes why into err; conn is left clean. */
tg_rc_e tg_kube_conn_load(const tg_kube_config_t *cfg, tg_kube_conn_t *conn, char *err,
                          size_t errlen) TG_MUSTCHECK;
/* Release everything; secrets are wiped first. NULL-safe, idempotent. */
void tg_kube_conn_clean(tg_kube_conn_t *conn);
/* Deep copy (secrets included). */
void tg_kube_conn_copy(tg_kube_conn_t *dst, const tg_kube_conn_t *src);

/* Check the server URL (http or https, a host, no query or fragment) and
 * decide send_credentials; strips trailing '/'. Used by all sources. */
tg_rc_e tg_kube_conn_finish(tg_kube_conn_t *conn, char *err, size_t errlen) TG_MUSTCHECK;

/* Read a small file whole (max bytes, NUL-terminated; caller frees).
 * RET: TG_OK, TG_ENOTFOUND (missing), TG_ETOOLARGE, TG_EINVAL (unreadable). */
tg_rc_e tg_kube_read_file(const char *path, size_t max, char **data, size_t *len) TG_MUSTCHECK;
/* Free a secret after overwriting it. NULL-safe. */
void tg_kube_secret_free(char *s, size_t len);

#endif
