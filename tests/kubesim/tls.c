/* Self-signed serving certificate. */
#include "tls.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

static char *bio_string(BIO *b)
{
    char *data = NULL;
    long n = BIO_get_mem_data(b, &data);
    char *out = tg_xmalloc((size_t)n + 1);
    memcpy(out, data, (size_t)n);
    out[n] = '\0';
    return out;
}

static int add_ext(X509 *cert, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
    X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ex)
        return -1;
    int rc = X509_add_ext(cert, ex, -1) ? 0 : -1;
    X509_EXTENSION_free(ex);
    return rc;
}

int ks_tls_generate(const char *dir, char **cert_pem, char **key_pem)
{
    int rc = -1;
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    BIO *kb = NULL, *cb = NULL;
    *cert_pem = *key_pem = NULL;
    key = EVP_EC_gen("P-256");
    if (!key)
        goto out;
    cert = X509_new();
    if (!cert)
        goto out;
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), (long)time(NULL));
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 30L * 24 * 3600);
    X509_set_pubkey(cert, key);
    X509_NAME *name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"kubesim", -1,
                               -1, 0);
    X509_set_issuer_name(cert, name);
    if (add_ext(cert, NID_basic_constraints, "critical,CA:TRUE") ||
        add_ext(cert, NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign") ||
        add_ext(cert, NID_ext_key_usage, "serverAuth") ||
        add_ext(cert, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc"))
        goto out;
    if (!X509_sign(cert, key, EVP_sha256()))
        goto out;
    kb = BIO_new(BIO_s_mem());
    cb = BIO_new(BIO_s_mem());
    if (!kb || !cb || !PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL) ||
        !PEM_write_bio_X509(cb, cert))
        goto out;
    *key_pem = bio_string(kb);
    *cert_pem = bio_string(cb);
    char path[1200];
    snprintf(path, sizeof(path), "%s/ca.crt", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        goto out;
    fputs(*cert_pem, f);
    fclose(f);
    rc = 0;
out:
    BIO_free(kb);
    BIO_free(cb);
    X509_free(cert);
    EVP_PKEY_free(key);
    if (rc) {
        TG_FREE_NULL(*cert_pem);
        TG_FREE_NULL(*key_pem);
    }
    return rc;
}
