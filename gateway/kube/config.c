/* Resolving where the Kubernetes API is: explicit URL, kubeconfig, in-cluster. */
#include "kube/config.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "kube/kubeconfig.h"

#define CONFIG_NS_MAX 253 /* a DNS subdomain */

tg_rc_e tg_kube_read_file(const char *path, size_t max, char **data, size_t *len)
{
    tg_rc_e rc = TG_EINVAL;
    char *buf = NULL;
    size_t n = 0;
    *data = NULL;
    if (len)
        *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? TG_ENOTFOUND : TG_EINVAL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        goto out;
    if ((size_t)st.st_size > max) {
        rc = TG_ETOOLARGE;
        goto out;
    }
    /* Read up to max+1 so a file that grew since fstat is still caught. */
    size_t cap = (size_t)st.st_size + 1;
    buf = tg_xmalloc(cap + 1);
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == cap) {
            if (cap > max) {
                rc = TG_ETOOLARGE;
                goto out;
            }
            cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            buf = tg_xrealloc(buf, cap + 1);
        }
    }
    buf[n] = '\0';
    *data = buf;
    buf = NULL;
    if (len)
        *len = n;
    rc = TG_OK;
out:
    if (buf)
        tg_kube_secret_free(buf, n);
    close(fd);
    return rc;
}

void tg_kube_secret_free(char *s, size_t len)
{
    if (!s)
        return;
    explicit_bzero(s, len);
    free(s);
}

static void config_secret_clear(char **p)
{
    if (*p)
        tg_kube_secret_free(*p, strlen(*p));
    *p = NULL;
}

void tg_kube_conn_clean(tg_kube_conn_t *c)
{
    if (!c)
        return;
    free(c->server);
    free(c->namespace_);
    free(c->context);
    config_secret_clear(&c->token);
    free(c->token_file);
    free(c->ca_file);
    free(c->ca_pem);
    free(c->cert_file);
    free(c->cert_pem);
    free(c->key_file);
    if (c->key_pem)
        tg_kube_secret_free(c->key_pem, c->key_pem_len);
    memset(c, 0, sizeof(*c));
}

static char *config_dup(const char *s)
{
    return s ? tg_xstrdup(s) : NULL;
}

static char *config_dupn(const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *p = tg_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void tg_kube_conn_copy(tg_kube_conn_t *d, const tg_kube_conn_t *s)
{
    *d = *s;
    d->server = config_dup(s->server);
    d->namespace_ = config_dup(s->namespace_);
    d->context = config_dup(s->context);
    d->token = config_dup(s->token);
    d->token_file = config_dup(s->token_file);
    d->ca_file = config_dup(s->ca_file);
    d->ca_pem = config_dupn(s->ca_pem, s->ca_pem_len);
    d->cert_file = config_dup(s->cert_file);
    d->cert_pem = config_dupn(s->cert_pem, s->cert_pem_len);
    d->key_file = config_dup(s->key_file);
    d->key_pem = config_dupn(s->key_pem, s->key_pem_len);
}

static int config_loopback(const char *host)
{
    return strcasecmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 ||
           strcmp(host, "[::1]") == 0 || strcmp(host, "::1") == 0;
}

tg_rc_e tg_kube_conn_finish(tg_kube_conn_t *c, char *err, size_t errlen)
{
    tg_rc_e rc = TG_EINVAL;
    char *scheme = NULL, *host = NULL, *query = NULL, *frag = NULL;
    CURLU *u = curl_url();
    if (!c->server || !u ||
        curl_url_set(u, CURLUPART_URL, c->server, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host) {
        snprintf(err, errlen, "invalid Kubernetes API server URL");
        goto out;
    }
    if (strcmp(scheme, "https") != 0 && strcmp(scheme, "http") != 0) {
        snprintf(err, errlen, "Kubernetes API server URL must be http or https");
        goto out;
    }
    if (curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK ||
        curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK) {
        snprintf(err, errlen, "Kubernetes API server URL must not have a query or fragment");
        goto out;
    }
    size_t n = strlen(c->server);
    while (n && c->server[n - 1] == '/')
        c->server[--n] = '\0';
    c->send_credentials = strcmp(scheme, "https") == 0 || config_loopback(host);
    if (!c->send_credentials &&
        (c->token || c->token_file || c->cert_file || c->cert_pem || c->key_pem || c->key_file))
        tg_log_warn("kube",
                    "server %s is plain http and not loopback: credentials will not be sent", host);
    if (c->insecure)
        tg_log_warn("kube", "TLS verification of the Kubernetes API server is off");
    if (!c->namespace_)
        c->namespace_ = tg_xstrdup("default");
    if ((c->cert_file || c->cert_pem) != (c->key_file || c->key_pem)) {
        snprintf(err, errlen, "a client certificate needs a client key, and the reverse");
        goto out;
    }
    rc = TG_OK;
out:
    curl_free(scheme);
    curl_free(host);
    curl_free(query);
    curl_free(frag);
    curl_url_cleanup(u);
    return rc;
}

/* A namespace file is a single DNS label; trailing whitespace is tolerated. */
static char *config_read_namespace(const char *path)
{
    char *data = NULL;
    size_t len = 0;
    if (tg_kube_read_file(path, CONFIG_NS_MAX + 16, &data, &len) != TG_OK)
        return NULL;
    while (len && (data[len - 1] == '\n' || data[len - 1] == ' ' || data[len - 1] == '\r'))
        data[--len] = '\0';
    if (!len || strpbrk(data, "/ \t\n")) {
        free(data);
        return NULL;
    }
    return data;
}

static tg_rc_e config_path_join(char *out, size_t outlen, const char *dir, const char *file)
{
    int n = snprintf(out, outlen, "%s/%s", dir, file);
    return n < 0 || (size_t)n >= outlen ? TG_EINVAL : TG_OK;
}

static tg_rc_e config_in_cluster(const tg_kube_config_t *cfg, tg_kube_conn_t *c, char *err,
                                 size_t errlen)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *dir = cfg->sa_dir ? cfg->sa_dir : TG_KUBE_SA_DIR;
    char path[4096];
    if (!host || !*host || !port || !*port) {
        snprintf(err, errlen,
                 "not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset) and no "
                 "kube_api_url or kubeconfig configured");
        return TG_ENOTFOUND;
    }
    if (strspn(port, "0123456789") != strlen(port) || strlen(port) > 5) {
        snprintf(err, errlen, "KUBERNETES_SERVICE_PORT is not a port number");
        return TG_EINVAL;
    }
    /* An IPv6 service address needs brackets in a URL. */
    int v6 = strchr(host, ':') != NULL;
    size_t n = strlen(host) + strlen(port) + 16;
    c->server = tg_xmalloc(n);
    snprintf(c->server, n, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);

    if (cfg->token_file) {
        c->token_file = tg_xstrdup(cfg->token_file);
    } else {
        if (config_path_join(path, sizeof(path), dir, "token") != TG_OK)
            goto toolong;
        c->token_file = tg_xstrdup(path);
    }
    if (access(c->token_file, R_OK) != 0) {
        snprintf(err, errlen, "service account token file is not readable: %s", c->token_file);
        return TG_EINVAL;
    }
    if (cfg->ca_file) {
        c->ca_file = tg_xstrdup(cfg->ca_file);
    } else {
        if (config_path_join(path, sizeof(path), dir, "ca.crt") != TG_OK)
            goto toolong;
        c->ca_file = tg_xstrdup(path);
    }
    if (access(c->ca_file, R_OK) != 0) {
        snprintf(err, errlen, "service account CA file is not readable: %s", c->ca_file);
        return TG_EINVAL;
    }
    if (cfg->namespace_) {
        c->namespace_ = tg_xstrdup(cfg->namespace_);
    } else {
        if (config_path_join(path, sizeof(path), dir, "namespace") != TG_OK)
            goto toolong;
        c->namespace_ = config_read_namespace(path);
    }
    c->insecure = cfg->insecure_skip_tls_verify;
    c->context = tg_xstrdup("in-cluster");
    return TG_OK;
toolong:
    snprintf(err, errlen, "service account directory path too long");
    return TG_EINVAL;
}

static tg_rc_e config_url(const tg_kube_config_t *cfg, tg_kube_conn_t *c)
{
    c->server = tg_xstrdup(cfg->api_url);
    c->token = config_dup(cfg->token);
    c->token_file = config_dup(cfg->token_file);
    c->ca_file = config_dup(cfg->ca_file);
    c->cert_file = config_dup(cfg->client_cert_file);
    c->key_file = config_dup(cfg->client_key_file);
    c->insecure = cfg->insecure_skip_tls_verify;
    c->namespace_ = config_dup(cfg->namespace_);
    c->context = tg_xstrdup("url");
    return TG_OK;
}

tg_rc_e tg_kube_conn_load(const tg_kube_config_t *cfg, tg_kube_conn_t *c, char *err, size_t errlen)
{
    tg_rc_e rc;
    memset(c, 0, sizeof(*c));
    if (err && errlen)
        err[0] = '\0';
    if (cfg->in_cluster) {
        c->source = TG_KUBE_SRC_IN_CLUSTER;
        rc = config_in_cluster(cfg, c, err, errlen);
    } else if (cfg->api_url && *cfg->api_url) {
        c->source = TG_KUBE_SRC_URL;
        rc = config_url(cfg, c);
    } else if (cfg->kubeconfig && *cfg->kubeconfig) {
        c->source = TG_KUBE_SRC_KUBECONFIG;
        rc = tg_kube_kubeconfig_load(cfg->kubeconfig, cfg->context, c, err, errlen);
        if (rc == TG_OK && cfg->namespace_) {
            free(c->namespace_);
            c->namespace_ = tg_xstrdup(cfg->namespace_);
        }
        if (rc == TG_OK && cfg->insecure_skip_tls_verify)
            c->insecure = 1;
    } else {
        c->source = TG_KUBE_SRC_IN_CLUSTER;
        rc = config_in_cluster(cfg, c, err, errlen);
    }
    if (rc == TG_OK)
        rc = tg_kube_conn_finish(c, err, errlen);
    if (rc != TG_OK)
        tg_kube_conn_clean(c);
    return rc;
}
