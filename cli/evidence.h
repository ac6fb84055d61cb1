/* Evidence records: fetch, and verify sha256 + Ed25519 signature.
 *
 * What this client assumes about the format is in tau_evidence_format, so
 * adapting to a change is a one-place edit. The gateway sends
 *   {run_id, sealed, sealed_at, algorithm: "Ed25519", key_id, sha256,
 *    signature, canonical, record}
 *   canonical = the exact text hashed and signed: `record` as compact JSON
 *               with sorted keys (jansson, 17-digit reals);
 *   sha256    = lowercase hex sha256 of canonical ("sha256:" prefix allowed);
 *   signature = standard base64 Ed25519 (RFC 8032, pure) over canonical.
 * The client hashes the canonical bytes when present (else it canonicalises
 * `record` itself), checks that `record` is exactly what canonical says, and
 * verifies the signature. For other signing schemes a signature over the hex
 * or raw digest is accepted too (the digest was checked first, so each binds
 * the same content). A record with sealed: false (ended, logs still being
 * collected) does not verify.
 * The public key (GET /v1/evidence/public-key {key_id, algorithm,
 * public_key_pem, public_key_b64}, or --key FILE to pin one) may also be PEM
 * text, a JWK {kty: OKP, crv: Ed25519, x}, or {keys: [...]} of those. */
#ifndef TAU_EVIDENCE_H
#define TAU_EVIDENCE_H

#include <jansson.h>
#include <stddef.h>

typedef struct tau_evidence_format_s {
    const char *record_field;
    const char *canonical_field; /* the signed text, when the server sends it */
    const char *sealed_field;    /* false: not sealed yet */
    const char *sha256_field;
    const char *signature_field;
    const char *key_id_field;
    size_t canonical_flags; /* json_dumps flags of the canonical form */
} tau_evidence_format_t;

extern const tau_evidence_format_t tau_evidence_format;

/* Verification result; `why` explains a failure. */
typedef struct tau_evidence_check_s {
    int digest_ok;
    int signature_ok;
    char digest[65];    /* what the record hashes to */
    char signed_as[32]; /* "canonical JSON", "hex digest", "raw digest" */
    char why[512];
} tau_evidence_check_t;

/* The canonical text of a record (new string; free()). */
char *tau_evidence_canonical(const json_t *record);

/* Check `evidence` (borrowed) against the key document `keydoc` (the public
 * key endpoint's body or a key file, len bytes). Returns 0 when both digest and
 * signature verify, else -1 with c->why set. */
int tau_evidence_verify(const json_t *evidence, const char *keydoc, size_t len,
                        tau_evidence_check_t *c);

#endif
