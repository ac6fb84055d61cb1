/* kubeconfig parsing: libyaml document, looked up by path, never expanded. */
#include "kube/kubeconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/base64.h"
#include "core/log.h"

#define KC_PEM_MARK "-----BEGIN"

typedef struct kc_s {
    yaml_document_t doc;
    const char *base_dir;
    char *err;
    size_t errlen;
} kc_t;

/* ---- base64 -------------------------------------------------------------- */

tg_rc_e tg_kube_base64_decode(const char *in, size_t inlen, char **out, size_t *outlen)
{
    /* kubeconfig data may be wrapped: the whitespace goes, the rest is
     * standard base64 (core/base64's rules); the copy holds key material */
    char *text = tg_xmalloc(inlen + 1);
    size_t n = 0;
    for (size_t i = 0; i < inlen; i++)
        if (!strchr(" \n\r\t", in[i]) || !in[i])
            text[n++] = in[i];
    unsigned char *bytes = NULL;
    int rc = tg_base64_decode(text, n, TG_B64_STD, &bytes, outlen);
    explicit_bzero(text, inlen + 1);
    free(text);
    *out = (char *)bytes;
    return rc == 0 ? TG_OK : TG_EINVAL;
}

/* ---- document lookups ------------------------------------------------------ */

static yaml_node_t *kc_root(kc_t *kc)
{
    return yaml_document_get_root_node(&kc->doc);
}

static yaml_node_t *kc_node(kc_t *kc, int id)
{
    return yaml_document_get_node(&kc->doc, id);
}

/* The value of `key` in a mapping node, or NULL. */
static yaml_node_t *kc_get(kc_t *kc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    size_t klen = strlen(key);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = kc_node(kc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == klen &&
            memcmp(k->data.scalar.value, key, klen) == 0)
            return kc_node(kc, p->value);
    }
    return NULL;
}

/* A scalar's text (NUL-terminated by libyaml), or NULL for absent/empty/null. */
static const char *kc_str(yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.length == 0)
        return NULL;
    const char *s = (const char *)n->data.scalar.value;
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        (strcmp(s, "null") == 0 || strcmp(s, "~") == 0))
        return NULL;
    return s;
}

static const char *kc_get_str(kc_t *kc, yaml_node_t *map, const char *key)
{
    return kc_str(kc_get(kc, map, key));
}

/* In a list of {name: X, <field>: {...}}, the <field> map of the entry named
 * `name`. kubectl uses the first match; so do we. */
static yaml_node_t *kc_named(kc_t *kc, const char *list, const char *field, const char *name)
{
    yaml_node_t *seq = kc_get(kc, kc_root(kc), list);
    if (!seq || seq->type != YAML_SEQUENCE_NODE)
        return NULL;
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        yaml_node_t *entry = kc_node(kc, *it);
        const char *n = kc_get_str(kc, entry, "name");
        if (n && strcmp(n, name) == 0) {
            yaml_node_t *v = kc_get(kc, entry, field);
            return v ? v : entry; /* an entry without the map: treat as empty */
        }
    }
    return NULL;
}

static int kc_bool(const char *s)
{
    return s && (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0 ||
                 strcmp(s, "yes") == 0);
}

static char *kc_resolve_path(kc_t *kc, const char *p)
{
    if (p[0] == '/' || !kc->base_dir || !*kc->base_dir)
        return tg_xstrdup(p);
    size_t n = strlen(kc->base_dir) + strlen(p) + 2;
    char *out = tg_xmalloc(n);
    snprintf(out, n, "%s/%s", kc->base_dir, p);
    return out;
}

/* Decode a *-data field into PEM; `what` names it in errors (never the value). */
static tg_rc_e kc_pem_data(kc_t *kc, const char *b64, const char *what, char **pem, size_t *len)
{
    if (tg_kube_base64_decode(b64, strlen(b64), pem, len) != TG_OK) {
        snprintf(kc->err, kc->errlen, "kubeconfig %s is not valid base64", what);
        return TG_EINVAL;
    }
    if (!memmem(*pem, *len, KC_PEM_MARK, strlen(KC_PEM_MARK))) {
        tg_kube_secret_free(*pem, *len);
        *pem = NULL;
        *len = 0;
        snprintf(kc->err, kc->errlen, "kubeconfig %s is not PEM", what);
        return TG_EINVAL;
    }
    return TG_OK;
}

static tg_rc_e kc_cluster(kc_t *kc, yaml_node_t *cl, tg_kube_conn_t *c)
{
    const char *server = kc_get_str(kc, cl, "server");
    const char *ca = kc_get_str(kc, cl, "certificate-authority");
    const char *ca_data = kc_get_str(kc, cl, "certificate-authority-data");
    if (!server) {
        snprintf(kc->err, kc->errlen, "kubeconfig cluster has no server");
        return TG_EINVAL;
    }
    if (kc_get_str(kc, cl, "tls-server-name")) {
        snprintf(kc->err, kc->errlen, "kubeconfig tls-server-name is not supported");
        return TG_EINVAL;
    }
    if (kc_get_str(kc, cl, "proxy-url")) {
        snprintf(kc->err, kc->errlen, "kubeconfig proxy-url is not supported");
        return TG_EINVAL;
    }
    c->server = tg_xstrdup(server);
    c->insecure = kc_bool(kc_get_str(kc, cl, "insecure-skip-tls-verify"));
    if (ca_data)
        return kc_pem_data(kc, ca_data, "certificate-authority-data", &c->ca_pem, &c->ca_pem_len);
    if (ca)
        c->ca_file = kc_resolve_path(kc, ca);
    return TG_OK;
}

static tg_rc_e kc_user(kc_t *kc, yaml_node_t *u, tg_kube_conn_t *c)
{
    tg_rc_e rc;
    if (kc_get(kc, u, "exec") || kc_get(kc, u, "auth-provider")) {
        snprintf(kc->err, kc->errlen,
                 "kubeconfig user uses an exec or auth-provider plugin, which taugate does not "
                 "run; use a token, tokenFile or client certificate");
        return TG_EINVAL;
    }
    if (kc_get_str(kc, u, "username") || kc_get_str(kc, u, "password")) {
        snprintf(kc->err, kc->errlen, "kubeconfig basic auth is not supported");
        return TG_EINVAL;
    }
    const char *token = kc_get_str(kc, u, "token");
    const char *token_file = kc_get_str(kc, u, "tokenFile");
    const char *cert = kc_get_str(kc, u, "client-certificate");
    const char *cert_data = kc_get_str(kc, u, "client-certificate-data");
    const char *key = kc_get_str(kc, u, "client-key");
    const char *key_data = kc_get_str(kc, u, "client-key-data");
    /* client-go: a literal token wins over tokenFile. */
    if (token)
        c->token = tg_xstrdup(token);
    else if (token_file)
        c->token_file = kc_resolve_path(kc, token_file);
    if (cert_data) {
        rc = kc_pem_data(kc, cert_data, "client-certificate-data", &c->cert_pem, &c->cert_pem_len);
        if (rc != TG_OK)
            return rc;
    } else if (cert) {
        c->cert_file = kc_resolve_path(kc, cert);
    }
    if (key_data) {
        rc = kc_pem_data(kc, key_data, "client-key-data", &c->key_pem, &c->key_pem_len);
        if (rc != TG_OK)
            return rc;
    } else if (key) {
        c->key_file = kc_resolve_path(kc, key);
    }
    return TG_OK;
}

static tg_rc_e kc_resolve(kc_t *kc, const char *context, tg_kube_conn_t *c)
{
    yaml_node_t *root = kc_root(kc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        snprintf(kc->err, kc->errlen, "kubeconfig is not a YAML mapping");
        return TG_EINVAL;
    }
    const char *ctx_name = context ? context : kc_get_str(kc, root, "current-context");
    if (!ctx_name) {
        snprintf(kc->err, kc->errlen, "kubeconfig has no current-context and none was given");
        return TG_ENOTFOUND;
    }
    yaml_node_t *ctx = kc_named(kc, "contexts", "context", ctx_name);
    if (!ctx) {
        snprintf(kc->err, kc->errlen, "kubeconfig context \"%.100s\" not found", ctx_name);
        return TG_ENOTFOUND;
    }
    const char *cluster = kc_get_str(kc, ctx, "cluster");
    const char *user = kc_get_str(kc, ctx, "user");
    const char *ns = kc_get_str(kc, ctx, "namespace");
    yaml_node_t *cl = cluster ? kc_named(kc, "clusters", "cluster", cluster) : NULL;
    if (!cl) {
        snprintf(kc->err, kc->errlen,
                 "kubeconfig cluster \"%.100s\" of context \"%.100s\" not found",
                 cluster ? cluster : "", ctx_name);
        return TG_ENOTFOUND;
    }
    c->context = tg_xstrdup(ctx_name);
    if (ns)
        c->namespace_ = tg_xstrdup(ns);
    tg_rc_e rc = kc_cluster(kc, cl, c);
    if (rc != TG_OK)
        return rc;
    if (user) {
        yaml_node_t *u = kc_named(kc, "users", "user", user);
        if (!u) {
            snprintf(kc->err, kc->errlen,
                     "kubeconfig user \"%.100s\" of context \"%.100s\" not found", user, ctx_name);
            return TG_ENOTFOUND;
        }
        rc = kc_user(kc, u, c);
    }
    return rc;
}

/* Refuse aliases before loading: the document API would share the node, but
 * nothing in a kubeconfig needs one and refusing keeps lookups trivially
 * bounded. The event scan is cheap next to the load. */
static tg_rc_e kc_check_no_alias(const char *text, size_t len, kc_t *kc)
{
    yaml_parser_t p;
    yaml_event_t ev;
    tg_rc_e rc = TG_EINVAL;
    if (!yaml_parser_initialize(&p))
        return TG_EINVAL;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    for (;;) {
        if (!yaml_parser_parse(&p, &ev)) {
            snprintf(kc->err, kc->errlen, "kubeconfig is not valid YAML: %s at line %zu",
                     p.problem ? p.problem : "error", p.problem_mark.line + 1);
            break;
        }
        yaml_event_type_t t = ev.type;
        yaml_event_delete(&ev);
        if (t == YAML_ALIAS_EVENT) {
            snprintf(kc->err, kc->errlen, "kubeconfig uses a YAML alias; not supported");
            break;
        }
        if (t == YAML_STREAM_END_EVENT) {
            rc = TG_OK;
            break;
        }
    }
    yaml_parser_delete(&p);
    return rc;
}

tg_rc_e tg_kube_kubeconfig_parse(const char *text, size_t len, const char *base_dir,
                                 const char *context, tg_kube_conn_t *conn, char *err,
                                 size_t errlen)
{
    kc_t kc = {.base_dir = base_dir, .err = err, .errlen = errlen};
    yaml_parser_t p;
    int have_doc = 0;
    tg_rc_e rc = kc_check_no_alias(text, len, &kc);
    if (rc != TG_OK)
        return rc;
    if (!yaml_parser_initialize(&p))
        return TG_EINVAL;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &kc.doc)) {
        snprintf(err, errlen, "kubeconfig is not valid YAML: %s", p.problem ? p.problem : "error");
        rc = TG_EINVAL;
        goto out;
    }
    have_doc = 1;
    rc = kc_resolve(&kc, context, conn);
out:
    if (have_doc)
        yaml_document_delete(&kc.doc);
    yaml_parser_delete(&p);
    return rc;
}

tg_rc_e tg_kube_kubeconfig_load(const char *path, const char *context, tg_kube_conn_t *conn,
                                char *err, size_t errlen)
{
    char *text = NULL, *dir = NULL;
    size_t len = 0;
    tg_rc_e rc = tg_kube_read_file(path, TG_KUBE_KUBECONFIG_MAX, &text, &len);
    if (rc != TG_OK) {
        snprintf(err, errlen, "kubeconfig %s: %s", path,
                 rc == TG_ENOTFOUND   ? "no such file"
                 : rc == TG_ETOOLARGE ? "too large"
                                      : "cannot read");
        return rc == TG_ENOTFOUND ? TG_ENOTFOUND : TG_EINVAL;
    }
    const char *slash = strrchr(path, '/');
    dir = slash ? tg_xstrndup(path, (size_t)(slash - path)) : NULL;
    if (dir && !*dir) { /* "/kubeconfig" lives in "/" */
        free(dir);
        dir = tg_xstrdup("/");
    }
    rc = tg_kube_kubeconfig_parse(text, len, dir, context, conn, err, errlen);
    free(dir);
    /* The file may hold tokens and keys. */
    tg_kube_secret_free(text, len);
    return rc;
}
