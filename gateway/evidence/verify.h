/* Verifying sealed evidence.
 *
 * tg_evidence_verify_sealed checks what needs no database: the canonical
 * text hashes to the sealed sha256, is in canonical form, carries the seal
 * facts of its row, is signed by the key, and its history is an intact hash
 * chain. tg_evidence_verify adds what the live tables say: the stored jsonb
 * record equals the signed text, every run_events row hashes to its stored
 * hash from its own fields and links to the one before, and those hashes are
 * the sealed ones; every log chunk's content hashes to its stored sha256 and
 * each stream's digest is the sealed one; the spec text and submitted files
 * hash to the sealed digests. So editing, deleting or inserting an event or
 * a log chunk, or the record itself, is reported, naming what differs.
 *
 * Report format (one line per check on `out`, which may be NULL):
 *   "ok   <check>: <detail>"   a check that passed
 *   "note <check>: <detail>"   not a failure (data added after sealing,
 *                              chunks pruned with TG_EVIDENCE_VERIFY_ALLOW_PRUNED)
 *   "FAIL <check>: <detail>"   a difference
 * and a last line "verified" or "FAILED: <first difference>". Checks are
 * record, seal, signature, history, events, logs, spec, files. `why` gets
 * the first failure as "<check>: <detail>" ("" when verified). */
#ifndef TG_STORE_EVIDENCE_VERIFY_H
#define TG_STORE_EVIDENCE_VERIFY_H

#include <jansson.h>
#include <stdio.h>

#include "evidence/signer.h"
#include "store/evidence.h"
#include "store/pool.h"

enum {
    /* Log chunks missing from a sealed stream are a note, not a failure
     * (log retention deletes old chunks; tg_store_log_prune). The chunks
     * still there must match their stored sha256. */
    TG_EVIDENCE_VERIFY_ALLOW_PRUNED = 1u << 0,
};

/* Offline checks of a sealed row. `key` (may be NULL: reported as a
 * failure) must be the key whose id the row names. *record (may be NULL)
 * gets the parsed record when the text is JSON (new reference, also on
 * failure). RET: TG_OK when every check passed, TG_ECONFLICT when one
 * failed. */
tg_rc_e tg_evidence_verify_sealed(const tg_evidence_row_t *row, const tg_signer_t *key,
                                  json_t **record, FILE *out, char *why, size_t whylen);

/* Every check for one run, against the live tables. RET: TG_OK verified;
 * TG_ECONFLICT a difference (why names the first); TG_ENOTFOUND the run has
 * no sealed evidence; TG_EUNAVAILABLE/TG_EINTERNAL database trouble (why
 * says so). Suggested exit codes for a command: 0, 1, 2, 3. */
tg_rc_e tg_evidence_verify(tg_db_conn_t *conn, const char *run_id, const tg_signer_t *key,
                           unsigned flags, FILE *out, char *why, size_t whylen) TG_MUSTCHECK;

#endif
