/* Ed25519 signing keys (see signer.h). */
#include "evidence/signer.h"

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/digest.h"
#include "core/base64.h"
#include "core/log.h"

#define SIGNER_RAW_LEN 32
#define SIGNER_SIG_LEN 64
#define SIGNER_PEM_MAX (64 * 1024)

struct tg_signer_s {
    EVP_PKEY *pkey;
    int can_sign;
    int ephemeral;
    char key_id[TG_SIGNER_KEY_ID_LEN + 1];
    char *pem;
    char b64[4 * ((SIGNER_RAW_LEN + 2) / 3) + 1];
};

/* Records carry padded standard base64; returns the decoded length or -1. */
static long signer_unb64(const char *s, unsigned char *out, size_t cap)
{
    size_t n = strlen(s), len = 0;
    if (n == 0 || n % 4 != 0 || tg_base64_decode_to(s, n, TG_B64_STD, out, cap, &len) != 0)
        return -1;
    return (long)len;
}

/* Fill the derived fields; takes ownership of pkey (freed on failure). */
static tg_signer_t *signer_finish(EVP_PKEY *pkey, int can_sign, char *err, size_t errlen)
{
    unsigned char raw[SIGNER_RAW_LEN];
    size_t rawlen = sizeof(raw);
    tg_signer_t *s = NULL;
    BIO *bio = NULL;
    if (EVP_PKEY_get_raw_public_key(pkey, raw, &rawlen) != 1 || rawlen != SIGNER_RAW_LEN) {
        snprintf(err, errlen, "cannot read the Ed25519 public key");
        goto out;
    }
    s = tg_xcalloc(1, sizeof(*s));
    s->pkey = pkey;
    pkey = NULL;
    s->can_sign = can_sign;
    char hex[65];
    tg_sha256_hex(raw, rawlen, hex);
    memcpy(s->key_id, hex, TG_SIGNER_KEY_ID_LEN);
    s->key_id[TG_SIGNER_KEY_ID_LEN] = '\0';
    (void)tg_base64_encode_to(raw, rawlen, TG_B64_STD, s->b64, sizeof(s->b64));
    bio = BIO_new(BIO_s_mem());
    char *data = NULL;
    long n = 0;
    if (!bio || PEM_write_bio_PUBKEY(bio, s->pkey) != 1 ||
        (n = BIO_get_mem_data(bio, &data)) <= 0) {
        snprintf(err, errlen, "cannot encode the public key as PEM");
        tg_signer_free(s);
        s = NULL;
        goto out;
    }
    s->pem = tg_xstrndup(data, (size_t)n);
out:
    EVP_PKEY_free(pkey);
    BIO_free(bio);
    return s;
}

/* Never prompt for a passphrase: an encrypted key is an error. */
static int signer_no_pass(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/* Read at most SIGNER_PEM_MAX bytes of a key file into a malloc'd string
 * (*len bytes). Warns when a private key file is readable by others. */
static char *signer_read(const char *path, int private_key, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open key file %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (private_key && fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
        tg_log_warn("signer", "key file %s is readable by group or others; chmod 600 it", path);
    char *buf = tg_xmalloc(SIGNER_PEM_MAX + 1);
    size_t n = fread(buf, 1, SIGNER_PEM_MAX + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n > SIGNER_PEM_MAX) {
        snprintf(err, errlen, bad ? "cannot read key file %s" : "key file %s is over 64 KiB", path);
        OPENSSL_cleanse(buf, SIGNER_PEM_MAX + 1);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void signer_wipe(char *buf, size_t len)
{
    if (buf)
        OPENSSL_cleanse(buf, len);
    free(buf);
}

static int signer_is_ed25519(const EVP_PKEY *pkey, const char *path, char *err, size_t errlen)
{
    if (EVP_PKEY_get_id(pkey) == EVP_PKEY_ED25519)
        return 1;
    const char *t = EVP_PKEY_get0_type_name(pkey);
    snprintf(err, errlen,
             "key file %s holds a%s %s key; evidence signing needs an Ed25519 key "
             "(openssl genpkey -algorithm ed25519)",
             path, t && strchr("AEIOU", t[0]) ? "n" : "", t ? t : "non-Ed25519");
    return 0;
}

tg_signer_t *tg_signer_load(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = signer_read(path, 1, &len, err, errlen);
    if (!text)
        return NULL;
    tg_signer_t *s = NULL;
    EVP_PKEY *pkey = NULL;
    BIO *bio = NULL;
    if (!strstr(text, "-----BEGIN ")) {
        snprintf(err, errlen, "key file %s is not PEM (expected -----BEGIN PRIVATE KEY-----)",
                 path);
        goto out;
    }
    if (strstr(text, "-----BEGIN ENCRYPTED PRIVATE KEY-----") || strstr(text, "Proc-Type: 4,ENC")) {
        snprintf(err, errlen,
                 "key file %s is encrypted; taugate needs an unencrypted PKCS#8 key "
                 "(protect the file instead)",
                 path);
        goto out;
    }
    if (!strstr(text, "PRIVATE KEY-----")) {
        snprintf(err, errlen, "key file %s holds no private key (a public key or certificate?)",
                 path);
        goto out;
    }
    bio = BIO_new_mem_buf(text, (int)len);
    pkey = bio ? PEM_read_bio_PrivateKey(bio, NULL, signer_no_pass, NULL) : NULL;
    if (!pkey) {
        snprintf(err, errlen, "key file %s: the private key cannot be decoded", path);
        goto out;
    }
    if (!signer_is_ed25519(pkey, path, err, errlen))
        goto out;
    s = signer_finish(pkey, 1, err, errlen);
    pkey = NULL;
out:
    EVP_PKEY_free(pkey);
    BIO_free(bio);
    signer_wipe(text, len);
    return s;
}

/* A verify-only signer holding the public half of pkey (borrowed). */
static tg_signer_t *signer_public_of(const EVP_PKEY *pkey, char *err, size_t errlen)
{
    unsigned char raw[SIGNER_RAW_LEN];
    size_t rawlen = sizeof(raw);
    if (EVP_PKEY_get_raw_public_key(pkey, raw, &rawlen) != 1 || rawlen != SIGNER_RAW_LEN) {
        snprintf(err, errlen, "cannot read the Ed25519 public key");
        return NULL;
    }
    EVP_PKEY *pub = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, rawlen);
    if (!pub) {
        snprintf(err, errlen, "cannot build the Ed25519 public key");
        return NULL;
    }
    return signer_finish(pub, 0, err, errlen);
}

tg_signer_t *tg_signer_load_public(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = signer_read(path, 0, &len, err, errlen);
    if (!text)
        return NULL;
    tg_signer_t *s = NULL;
    if (strstr(text, "PRIVATE KEY-----")) {
        signer_wipe(text, len);
        tg_signer_t *priv = tg_signer_load(path, err, errlen);
        s = priv ? signer_public_of(priv->pkey, err, errlen) : NULL;
        tg_signer_free(priv);
        return s;
    }
    EVP_PKEY *pkey = NULL;
    BIO *bio = NULL;
    if (!strstr(text, "-----BEGIN PUBLIC KEY-----")) {
        snprintf(err, errlen, "key file %s is not a PEM public key (-----BEGIN PUBLIC KEY-----)",
                 path);
        goto out;
    }
    bio = BIO_new_mem_buf(text, (int)len);
    pkey = bio ? PEM_read_bio_PUBKEY(bio, NULL, signer_no_pass, NULL) : NULL;
    if (!pkey) {
        snprintf(err, errlen, "key file %s: the public key cannot be decoded", path);
        goto out;
    }
    if (!signer_is_ed25519(pkey, path, err, errlen))
        goto out;
    s = signer_finish(pkey, 0, err, errlen);
    pkey = NULL;
out:
    EVP_PKEY_free(pkey);
    BIO_free(bio);
    free(text);
    return s;
}

tg_signer_t *tg_signer_from_public_b64(const char *b64, char *err, size_t errlen)
{
    unsigned char raw[SIGNER_RAW_LEN + 3];
    long n = b64 ? signer_unb64(b64, raw, sizeof(raw)) : -1;
    if (n != SIGNER_RAW_LEN) {
        snprintf(err, errlen, "the public key is not 32 bytes of base64");
        return NULL;
    }
    EVP_PKEY *pub = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, SIGNER_RAW_LEN);
    if (!pub) {
        snprintf(err, errlen, "cannot build the Ed25519 public key");
        return NULL;
    }
    return signer_finish(pub, 0, err, errlen);
}

tg_signer_t *tg_signer_generate(char *err, size_t errlen)
{
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    if (!ctx || EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_keygen(ctx, &pkey) != 1) {
        EVP_PKEY_CTX_free(ctx);
        snprintf(err, errlen, "cannot generate an Ed25519 key");
        return NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    tg_signer_t *s = signer_finish(pkey, 1, err, errlen);
    if (s)
        s->ephemeral = 1;
    return s;
}

tg_signer_t *tg_signer_from_config(const char *path, char *err, size_t errlen)
{
    if (path && *path)
        return tg_signer_load(path, err, errlen);
    tg_signer_t *s = tg_signer_generate(err, errlen);
    if (s)
        tg_log_warn("signer",
                    "evidence_signing_key is not set: evidence is signed with an ephemeral key "
                    "(key id %s) that is lost when this process exits; configure a PKCS#8 "
                    "Ed25519 key file in production",
                    s->key_id);
    return s;
}

void tg_signer_free(tg_signer_t *s)
{
    if (!s)
        return;
    EVP_PKEY_free(s->pkey);
    free(s->pem);
    free(s);
}

const char *tg_signer_key_id(const tg_signer_t *s)
{
    return s->key_id;
}

const char *tg_signer_public_pem(const tg_signer_t *s)
{
    return s->pem;
}

const char *tg_signer_public_b64(const tg_signer_t *s)
{
    return s->b64;
}

int tg_signer_can_sign(const tg_signer_t *s)
{
    return s && s->can_sign;
}

int tg_signer_is_ephemeral(const tg_signer_t *s)
{
    return s && s->ephemeral;
}

tg_rc_e tg_signer_sign(const tg_signer_t *s, const void *msg, size_t len, char **sig_b64)
{
    *sig_b64 = NULL;
    if (!s || !s->can_sign)
        return TG_EINVAL;
    unsigned char sig[SIGNER_SIG_LEN];
    size_t siglen = sizeof(sig);
    tg_rc_e rc = TG_EINTERNAL;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestSignInit(ctx, NULL, NULL, NULL, s->pkey) != 1 ||
        EVP_DigestSign(ctx, sig, &siglen, msg, len) != 1 || siglen != SIGNER_SIG_LEN)
        goto out;
    *sig_b64 = tg_base64_encode(sig, siglen, TG_B64_STD);
    rc = TG_OK;
out:
    EVP_MD_CTX_free(ctx);
    return rc;
}

int tg_signer_verify(const tg_signer_t *s, const void *msg, size_t len, const char *sig_b64)
{
    unsigned char sig[SIGNER_SIG_LEN + 3];
    if (!s || !sig_b64 || signer_unb64(sig_b64, sig, sizeof(sig)) != SIGNER_SIG_LEN)
        return 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, s->pkey) == 1 &&
             EVP_DigestVerify(ctx, sig, SIGNER_SIG_LEN, msg, len) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
}
