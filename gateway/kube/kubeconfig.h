/* kubeconfig files (the format kubectl reads), parsed with libyaml.
 *
 * Supported: current-context or a named context; clusters[].cluster.server,
 * certificate-authority (a path), certificate-authority-data (base64 PEM),
 * insecure-skip-tls-verify; users[].user.token, tokenFile,
 * client-certificate(-data), client-key(-data); contexts[].context.namespace.
 * Relative paths are relative to the kubeconfig's own directory, as in
 * kubectl. Refused with a clear error: exec and auth-provider plugins and
 * basic auth (the gateway never runs plugins), and YAML aliases (a kubeconfig
 * has no use for them and they allow a blow-up). tls-server-name is not
 * supported by the transport and is refused rather than silently ignored.
 *
 * No jansson values cross this interface. Thread-safety: no shared state. */
#ifndef TG_KUBE_KUBECONFIG_H
#define TG_KUBE_KUBECONFIG_H

#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"
#include "kube/config.h"

#define TG_KUBE_KUBECONFIG_MAX (4 * 1024 * 1024)

/* Load `path` (at most TG_KUBE_KUBECONFIG_MAX bytes) into `conn`, using
 * `context` or, when NULL, the file's current-context. The caller runs
 * tg_kube_conn_finish afterwards (tg_kube_conn_load does).
 * RET: TG_OK, TG_ENOTFOUND (file, context, cluster or user missing),
 *      TG_EINVAL (bad YAML, bad base64, unsupported auth). err says which;
 *      it never contains secret values. On error conn may hold partial
 *      values: clean it. */
tg_rc_e tg_kube_kubeconfig_load(const char *path, const char *context, tg_kube_conn_t *conn,
                                char *err, size_t errlen) TG_MUSTCHECK;

/* The same from an in-memory document; relative paths resolve against
 * `base_dir` (NULL → the working directory). */
tg_rc_e tg_kube_kubeconfig_parse(const char *text, size_t len, const char *base_dir,
                                 const char *context, tg_kube_conn_t *conn, char *err,
                                 size_t errlen) TG_MUSTCHECK;

/* Standard base64 (RFC 4648 §4) with optional padding; whitespace ignored.
 * OUT: *out (new, NUL-terminated, caller frees), *outlen.
 * RET: TG_OK or TG_EINVAL. */
tg_rc_e tg_kube_base64_decode(const char *in, size_t inlen, char **out,
                              size_t *outlen) TG_MUSTCHECK;

#endif
