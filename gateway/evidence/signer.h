/* Ed25519 signing keys for evidence records (OpenSSL EVP).
 *
 * A signer holds either a private key (it signs and verifies) or only a
 * public key (it verifies). The platform configures its key as a PKCS#8 PEM
 * file ("-----BEGIN PRIVATE KEY-----", as written by
 * `openssl genpkey -algorithm ed25519`); without one the gateway generates an
 * ephemeral key at start, whose signatures nobody can check once the process
 * is gone.
 *
 *   key id     = the first 16 hex digits of sha256(raw 32-byte public key)
 *   signature  = Ed25519 (RFC 8032, pure) over the message bytes, sent as
 *                standard base64 with padding (88 characters)
 *
 * Key material never reaches the log or an error message; errors name the
 * file and what is wrong with it. A signer is immutable once built, so one
 * may be shared by every thread. */
#ifndef TG_CORE_SIGNER_H
#define TG_CORE_SIGNER_H

#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"

#define TG_SIGNER_ALGORITHM  "Ed25519"
#define TG_SIGNER_KEY_ID_LEN 16 /* hex digits */

typedef struct tg_signer_s tg_signer_t;

/* Load a private key from a PEM file (PKCS#8; an encrypted key is refused,
 * never prompted for). NULL with a message in err when the file is missing,
 * unreadable, not PEM, encrypted, or not an Ed25519 private key. */
tg_signer_t *tg_signer_load(const char *path, char *err, size_t errlen);
/* Load a verify-only key from a PEM public key file ("BEGIN PUBLIC KEY",
 * SubjectPublicKeyInfo) or, as a convenience, from a private key file. */
tg_signer_t *tg_signer_load_public(const char *path, char *err, size_t errlen);
/* A verify-only key from the raw public key in base64 (32 bytes), as served
 * by GET /v1/evidence/public-key in `public_key_b64`. */
tg_signer_t *tg_signer_from_public_b64(const char *b64, char *err, size_t errlen);
/* A fresh random key (never written anywhere). */
tg_signer_t *tg_signer_generate(char *err, size_t errlen);
/* The gateway's key: tg_signer_load(path), or a generated ephemeral key when
 * path is NULL or "" (logged as a warning, with its key id). */
tg_signer_t *tg_signer_from_config(const char *path, char *err, size_t errlen);
/* NULL-safe. */
void tg_signer_free(tg_signer_t *s);

/* Borrowed strings, valid while the signer lives. */
const char *tg_signer_key_id(const tg_signer_t *s);
const char *tg_signer_public_pem(const tg_signer_t *s); /* "-----BEGIN PUBLIC KEY-----\n..." */
const char *tg_signer_public_b64(const tg_signer_t *s); /* raw 32 bytes, base64 */
int tg_signer_can_sign(const tg_signer_t *s);
int tg_signer_is_ephemeral(const tg_signer_t *s);

/* Sign `len` bytes; *sig_b64 gets a malloc'd base64 signature (free()).
 * TG_EINVAL for a verify-only signer, TG_EINTERNAL when OpenSSL fails. */
tg_rc_e tg_signer_sign(const tg_signer_t *s, const void *msg, size_t len,
                       char **sig_b64) TG_MUSTCHECK;
/* 1 when sig_b64 is a valid signature of the bytes by this key, else 0
 * (malformed base64 and wrong lengths included). */
int tg_signer_verify(const tg_signer_t *s, const void *msg, size_t len, const char *sig_b64);

#endif
