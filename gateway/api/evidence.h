/* Evidence over HTTP.
 *
 *   GET /v1/runs/{id}/evidence     (viewer of the run's workspace)
 *     200 {"run_id", "sealed": true, "sealed_at", "algorithm": "Ed25519",
 *          "key_id", "sha256", "signature", "canonical", "record"}
 *         once sealed: `canonical` is the exact text hashed and signed,
 *         `record` the same document parsed (docs/evidence.md);
 *     200 {"run_id", "sealed": false, "detail", "record"} for a run that has
 *         ended but is not sealed yet (its logs are still being collected):
 *         a live preview, neither hashed nor signed;
 *     409 problem (type .../evidence-not-sealed) while the run has not ended;
 *     404 for a missing run or another tenant's.
 *   GET /v1/evidence/public-key     (public)
 *     200 {"key_id", "algorithm": "Ed25519", "public_key_pem", "public_key_b64",
 *          "ephemeral", "keys": [...]}: the key this gateway signs with, and
 *         in `keys` every key that ever sealed a record here (the key
 *         history, store/evidence_keys.h; each with first_seen_at and
 *         last_seen_at), so records sealed before a rotation still verify;
 *         while the database cannot be read, `keys` holds the current key;
 *     ?key_id=ID: 200 that one key, 404 when no such key ever sealed here;
 *     503 when no key was configured (tg_app_t.signer is NULL). */
#ifndef TG_API_EVIDENCE_H
#define TG_API_EVIDENCE_H

#include "evidence/signer.h"
#include "http/request.h"

void tg_api_run_evidence(tg_req_t *req);
void tg_api_evidence_public_key(tg_req_t *req);

#endif
