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
 * the same content). It also checks that the record is about the run asked
 * for (record.run.id; a gateway cannot pass off another run's record), that
 * record.seal names the envelope's key_id, sealed_at and algorithm, and that
 * record.history is an intact hash chain ending at record.chain.head, as
 * docs/evidence.md describes. A record with sealed: false (ended, logs still
 * being collected) does not verify.
 * The public key (GET /v1/evidence/public-key {key_id, algorithm,
 * public_key_pem, public_key_b64}, or --key FILE to pin one) may also be PEM
 * text, a JWK {kty: OKP, crv: Ed25519, x}, or {keys: [...]} of those. */
#ifndef TAU_EVIDENCE_H
#define TAU_EVIDENCE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

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

/* The canonical text of a record (new string; free()). */
char *tau_evidence_canonical(const json_t *record);

/* The hash of one history event `ev` (borrowed) of run `run_id` after the
 * hash `prev_hash` ("" for the first), as docs/evidence.md defines it:
 * sha256(prev_hash + "\n" + compact sorted-key JSON of {run_id, seq, at,
 * state, reason, message, source, data}), lowercase hex into out. */
void tau_evidence_event_hash(const char *prev_hash, const char *run_id, const json_t *ev,
                             char out[65]);

/* Check `evidence` (borrowed), the answer for run `run_id`, against the key
 * document `keydoc` (the public key endpoint's body or a key file, len
 * bytes): the record's sha256, that it is about run_id and carries its
 * envelope's seal, the signature, and its history's hash chain. Prints one
 * line per check ("ok   <check>: ..." or "FAIL <check>: ...") on `report`
 * (may be NULL). Returns 0 when all pass, else -1 with the first failure in
 * why ("<check>: <detail>"). */
int tau_evidence_verify(const json_t *evidence, const char *run_id, const char *keydoc, size_t len,
                        FILE *report, char *why, size_t whylen);

#endif
