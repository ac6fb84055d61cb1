/* Verifying sealed evidence (see evidence_verify.h). */
#include "evidence/verify.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "store/events.h"
#include "store/json_rows.h"

#define VR_CHUNK_PAGE "32"

typedef struct {
    FILE *out;
    int failed;
    char first[800]; /* the first failure, "<check>: <detail>" */
} vr_t;

static void vr_line(vr_t *v, const char *tag, const char *check, const char *fmt, va_list ap)
    TG_PRINTF(4, 0);
static void vr_line(vr_t *v, const char *tag, const char *check, const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (v->out)
        fprintf(v->out, "%-4s %s: %s\n", tag, check, msg);
    if (!strcmp(tag, "FAIL") && !v->failed++)
        snprintf(v->first, sizeof(v->first), "%s: %s", check, msg);
}

static void vr_ok(vr_t *v, const char *check, const char *fmt, ...) TG_PRINTF(3, 4);
static void vr_ok(vr_t *v, const char *check, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vr_line(v, "ok", check, fmt, ap);
    va_end(ap);
}

static void vr_note(vr_t *v, const char *check, const char *fmt, ...) TG_PRINTF(3, 4);
static void vr_note(vr_t *v, const char *check, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vr_line(v, "note", check, fmt, ap);
    va_end(ap);
}

static void vr_fail(vr_t *v, const char *check, const char *fmt, ...) TG_PRINTF(3, 4);
static void vr_fail(vr_t *v, const char *check, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vr_line(v, "FAIL", check, fmt, ap);
    va_end(ap);
}

static const char *vr_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const char *vr_nz(const char *s)
{
    return s ? s : "";
}

static int vr_streq(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

/* --- the hash chain ------------------------------------------------------------------------- */

/* Check that `events` ([{seq, at, state, reason, message, source, data,
 * prev_hash, hash}], borrowed) is an intact chain: seq 1..n, each prev_hash
 * the hash before it, each hash recomputed from its fields. */
static void vr_chain(vr_t *v, const char *check, const char *run_id, const json_t *events)
{
    int bad = v->failed;
    const char *prev = NULL;
    size_t i;
    const json_t *e;
    json_array_foreach(events, i, e) {
        long seq = (long)json_integer_value(json_object_get(e, "seq"));
        const char *hash = vr_str(e, "hash");
        const char *ph = vr_str(e, "prev_hash");
        if (seq != (long)i + 1) {
            vr_fail(v, check, "event %zu has seq %ld: events are missing or were inserted", i + 1,
                    seq);
            return;
        }
        if (i == 0 ? ph != NULL && *ph : !vr_streq(ph, prev)) {
            vr_fail(v, check, "seq %ld: prev_hash %.16s does not link to the hash before it %.16s",
                    seq, vr_nz(ph), vr_nz(prev));
        }
        const json_t *data = json_object_get(e, "data");
        tg_event_t ev = {.state = vr_str(e, "state"),
                         .reason = vr_str(e, "reason"),
                         .message = vr_str(e, "message"),
                         .source = vr_str(e, "source"),
                         .data = json_is_object(data) ? data : NULL};
        char want[65];
        tg_store_event_hash(ph ? ph : "", run_id, seq, vr_nz(vr_str(e, "at")), &ev, want);
        if (!vr_streq(hash, want))
            vr_fail(v, check,
                    "seq %ld (%s): its fields hash to %.16s but its stored hash is %.16s "
                    "(the event was edited)",
                    seq, ev.state ? ev.state : vr_nz(ev.reason), want, vr_nz(hash));
        prev = hash;
    }
    if (v->failed == bad)
        vr_ok(v, check, "%zu events form an intact chain (head %.16s)", json_array_size(events),
              vr_nz(prev));
}

/* --- offline checks ------------------------------------------------------------------------- */

static void vr_seal_facts(vr_t *v, const tg_evidence_row_t *row, const json_t *rec)
{
    const json_t *seal = json_object_get(rec, "seal");
    const char *run = vr_str(json_object_get(rec, "run"), "id");
    int bad = v->failed;
    if (!vr_streq(vr_str(rec, "schema"), TG_EVIDENCE_SCHEMA))
        vr_fail(v, "seal", "schema is \"%s\", expected " TG_EVIDENCE_SCHEMA,
                vr_nz(vr_str(rec, "schema")));
    if (!vr_streq(run, row->run_id))
        vr_fail(v, "seal", "the record is about run %s, the row about run %s", vr_nz(run),
                row->run_id);
    if (!vr_streq(vr_str(seal, "key_id"), row->key_id))
        vr_fail(v, "seal", "the record names key %s, the row key %s", vr_nz(vr_str(seal, "key_id")),
                row->key_id);
    if (!vr_streq(vr_str(seal, "algorithm"), row->algorithm))
        vr_fail(v, "seal", "the record names algorithm %s, the row %s",
                vr_nz(vr_str(seal, "algorithm")), row->algorithm);
    if (!vr_streq(vr_str(seal, "sealed_at"), row->sealed_at))
        vr_fail(v, "seal", "the record was sealed at %s, the row says %s",
                vr_nz(vr_str(seal, "sealed_at")), row->sealed_at);
    if (v->failed == bad)
        vr_ok(v, "seal", "run %s sealed at %s with key %s", row->run_id, row->sealed_at,
              row->key_id);
}

static void vr_signature(vr_t *v, const tg_evidence_row_t *row, const tg_signer_t *key)
{
    if (strcmp(row->algorithm, TG_SIGNER_ALGORITHM) != 0) {
        vr_fail(v, "signature", "unknown algorithm %s", row->algorithm);
        return;
    }
    if (!key) {
        vr_fail(v, "signature", "no public key to check it with (key %s)", row->key_id);
        return;
    }
    if (strcmp(tg_signer_key_id(key), row->key_id) != 0) {
        vr_fail(v, "signature", "sealed with key %s, but the key given is %s", row->key_id,
                tg_signer_key_id(key));
        return;
    }
    if (tg_signer_verify(key, row->canonical, row->canonical_len, row->signature))
        vr_ok(v, "signature", "Ed25519 signature valid for key %s", row->key_id);
    else
        vr_fail(v, "signature", "the Ed25519 signature does not match the record (key %s)",
                row->key_id);
}

static void vr_history(vr_t *v, const json_t *rec, const char *run_id)
{
    const json_t *hist = json_object_get(rec, "history");
    const json_t *chain = json_object_get(rec, "chain");
    if (!json_is_array(hist)) {
        vr_fail(v, "history", "the record has no history");
        return;
    }
    vr_chain(v, "history", run_id, hist);
    size_t n = json_array_size(hist);
    const char *head = n ? vr_str(json_array_get(hist, n - 1), "hash") : NULL;
    if ((size_t)json_integer_value(json_object_get(chain, "events")) != n ||
        (n && !vr_streq(vr_str(chain, "head"), head)))
        vr_fail(v, "history", "chain says %lld events with head %.16s, the history has %zu",
                (long long)json_integer_value(json_object_get(chain, "events")),
                vr_nz(vr_str(chain, "head")), n);
}

static tg_rc_e vr_sealed(vr_t *v, const tg_evidence_row_t *row, const tg_signer_t *key,
                         json_t **record)
{
    char sum[65];
    json_t *rec = NULL;
    tg_sha256_hex(row->canonical, row->canonical_len, sum);
    if (strcmp(sum, row->sha256) == 0)
        vr_ok(v, "record", "sha256 %s matches the canonical text (%zu bytes)", sum,
              row->canonical_len);
    else
        vr_fail(v, "record",
                "the canonical text hashes to %.16s but the seal says %.16s "
                "(the record was edited)",
                sum, row->sha256);
    json_error_t je;
    rec = json_loadb(row->canonical, row->canonical_len, 0, &je);
    if (!rec) {
        vr_fail(v, "record", "the canonical text is not JSON: %s", je.text);
    } else {
        size_t len = 0;
        char *again = tg_evidence_canonical(rec, &len);
        if (!again || len != row->canonical_len || memcmp(again, row->canonical, len) != 0)
            vr_fail(v, "record", "the stored text is not in canonical form");
        free(again);
        vr_seal_facts(v, row, rec);
    }
    vr_signature(v, row, key);
    if (rec)
        vr_history(v, rec, row->run_id);
    if (record)
        *record = rec;
    else
        json_decref(rec);
    return v->failed ? TG_ECONFLICT : TG_OK;
}

tg_rc_e tg_evidence_verify_sealed(const tg_evidence_row_t *row, const tg_signer_t *key,
                                  json_t **record, FILE *out, char *why, size_t whylen)
{
    vr_t v = {.out = out};
    if (record)
        *record = NULL;
    tg_rc_e rc = vr_sealed(&v, row, key, record);
    if (why && whylen)
        snprintf(why, whylen, "%s", v.first);
    return rc;
}

/* --- live tables ---------------------------------------------------------------------------- */

static tg_stmt_t stmt_events =
    TG_STMT("SELECT jsonb_build_object('seq', seq,"
            " 'at', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
            " 'state', state, 'reason', reason, 'message', message, 'source', source, 'data', data,"
            " 'prev_hash', prev_hash, 'hash', hash)"
            " FROM run_events WHERE run_id = $1::uuid ORDER BY seq");

static tg_stmt_t stmt_streams =
    TG_STMT("SELECT DISTINCT attempt, pod, container FROM log_chunks WHERE run_id = $1::uuid");

static tg_stmt_t stmt_chunks =
    TG_STMT("SELECT seq, sha256, content FROM log_chunks"
            " WHERE run_id = $1::uuid AND attempt = $2::int AND pod = $3 AND container = $4"
            "  AND seq > $5::int AND seq <= $6::int ORDER BY seq LIMIT " VR_CHUNK_PAGE);

static tg_stmt_t stmt_spec = TG_STMT("SELECT spec_text, config_hash FROM runs WHERE id = $1::uuid");

static tg_stmt_t stmt_files =
    TG_STMT("SELECT name, sha256, content FROM run_files WHERE run_id = $1::uuid");

static tg_rc_e vr_events(vr_t *v, tg_db_conn_t *conn, const char *run_id, const json_t *rec)
{
    const char *vals[] = {run_id};
    json_t *live = NULL;
    tg_rc_e rc = tg_db_json_all(conn, &stmt_events, 1, vals, &live);
    if (rc != TG_OK)
        return rc;
    int bad = v->failed;
    vr_chain(v, "events", run_id, live);
    const json_t *hist = json_object_get(rec, "history");
    size_t nrec = json_array_size(hist), nlive = json_array_size(live);
    for (size_t i = 0; i < nrec && i < nlive; i++) {
        const char *a = vr_str(json_array_get(live, i), "hash");
        const char *b = vr_str(json_array_get(hist, i), "hash");
        if (!vr_streq(a, b)) {
            vr_fail(v, "events",
                    "seq %zu: the table's hash %.16s differs from the sealed %.16s "
                    "(the history was rewritten)",
                    i + 1, vr_nz(a), vr_nz(b));
            break;
        }
    }
    if (nlive < nrec)
        vr_fail(v, "events", "the sealed record has %zu events, the table %zu (events deleted)",
                nrec, nlive);
    else if (nlive > nrec)
        vr_note(v, "events", "%zu events were appended after sealing (not covered by the seal)",
                nlive - nrec);
    if (v->failed == bad)
        vr_ok(v, "events", "the table's %zu sealed events match the record", nrec);
    json_decref(live);
    return TG_OK;
}

/* One sealed log stream against the table: chunks seq <= its last_seq. */
static tg_rc_e vr_stream(vr_t *v, tg_db_conn_t *conn, const char *run_id, const json_t *s,
                         unsigned flags, long *nchunks)
{
    char att[24], after[24], last[24], what[300];
    long attempt = (long)json_integer_value(json_object_get(s, "attempt"));
    const char *pod = vr_nz(vr_str(s, "pod")), *ctr = vr_nz(vr_str(s, "container"));
    long last_seq = (long)json_integer_value(json_object_get(s, "last_seq"));
    long want_chunks = (long)json_integer_value(json_object_get(s, "chunks"));
    json_int_t want_bytes = json_integer_value(json_object_get(s, "bytes"));
    snprintf(what, sizeof(what), "attempt %ld pod %s container %s", attempt, pod, ctr);
    snprintf(att, sizeof(att), "%ld", attempt);
    snprintf(last, sizeof(last), "%ld", last_seq);
    tg_evidence_logsum_t sum;
    tg_evidence_logsum_init(&sum);
    long count = 0, seq = 0;
    json_int_t bytes = 0;
    int edited = 0;
    tg_rc_e rc = TG_OK;
    for (;;) {
        snprintf(after, sizeof(after), "%ld", seq);
        const char *vals[] = {run_id, att, pod, ctr, after, last};
        PGresult *r = tg_db_exec(conn, &stmt_chunks, 6, vals, &rc);
        if (!r)
            break;
        int n = PQntuples(r);
        for (int i = 0; i < n; i++) {
            char got[65];
            seq = atol(PQgetvalue(r, i, 0));
            const char *stored = PQgetvalue(r, i, 1);
            size_t len = (size_t)PQgetlength(r, i, 2);
            tg_sha256_hex(PQgetvalue(r, i, 2), len, got);
            if (strcmp(got, stored) != 0 && !edited++)
                vr_fail(v, "logs",
                        "%s chunk seq %ld: its content hashes to %.16s but its stored "
                        "sha256 is %.16s (the chunk was edited)",
                        what, seq, got, stored);
            tg_evidence_logsum_add(&sum, got);
            bytes += (json_int_t)len;
            count++;
        }
        PQclear(r);
        if (n < atoi(VR_CHUNK_PAGE))
            break;
    }
    char digest[65];
    tg_evidence_logsum_final(&sum, digest);
    if (rc != TG_OK)
        return rc;
    *nchunks += count;
    if (count < want_chunks && (flags & TG_EVIDENCE_VERIFY_ALLOW_PRUNED)) {
        vr_note(v, "logs",
                "%s: %ld of %ld sealed chunks are gone (pruned); its digest cannot be "
                "checked",
                what, want_chunks - count, want_chunks);
        return TG_OK;
    }
    if (count != want_chunks)
        vr_fail(v, "logs", "%s: the sealed record has %ld chunks, the table %ld (chunks %s)", what,
                want_chunks, count, count < want_chunks ? "deleted" : "inserted");
    else if (strcmp(digest, vr_nz(vr_str(s, "sha256"))) != 0 || bytes != want_bytes)
        vr_fail(v, "logs", "%s: the chunks digest to %.16s (%lld bytes), sealed %.16s (%lld bytes)",
                what, digest, (long long)bytes, vr_nz(vr_str(s, "sha256")), (long long)want_bytes);
    return TG_OK;
}

static tg_rc_e vr_logs(vr_t *v, tg_db_conn_t *conn, const char *run_id, const json_t *rec,
                       unsigned flags)
{
    const json_t *sealed = json_object_get(rec, "logs");
    int bad = v->failed;
    long nchunks = 0;
    size_t i;
    const json_t *s;
    tg_rc_e rc = TG_OK;
    json_array_foreach(sealed, i, s) {
        rc = vr_stream(v, conn, run_id, s, flags, &nchunks);
        if (rc != TG_OK)
            return rc;
    }
    /* streams the record does not know: collected after sealing */
    const char *vals[] = {run_id};
    PGresult *r = tg_db_exec(conn, &stmt_streams, 1, vals, &rc);
    if (!r)
        return rc;
    int extra = 0;
    for (int row = 0; row < PQntuples(r); row++) {
        int known = 0;
        json_array_foreach(sealed, i, s) {
            known |=
                json_integer_value(json_object_get(s, "attempt")) == atol(PQgetvalue(r, row, 0)) &&
                vr_streq(vr_str(s, "pod"), PQgetvalue(r, row, 1)) &&
                vr_streq(vr_str(s, "container"), PQgetvalue(r, row, 2));
        }
        extra += !known;
    }
    PQclear(r);
    if (extra)
        vr_note(v, "logs", "%d log streams were collected after sealing (not covered by the seal)",
                extra);
    if (v->failed == bad)
        vr_ok(v, "logs", "%zu streams, %ld chunks match their sealed digests",
              json_array_size(sealed), nchunks);
    return TG_OK;
}

static tg_rc_e vr_files(vr_t *v, tg_db_conn_t *conn, const char *run_id, const json_t *rec)
{
    const json_t *spec = json_object_get(rec, "spec");
    const char *vals[] = {run_id};
    tg_rc_e rc;
    int bad = v->failed;
    PGresult *r = tg_db_exec(conn, &stmt_spec, 1, vals, &rc);
    if (!r)
        return rc;
    if (PQntuples(r) == 1) {
        char got[65];
        tg_sha256_hex(PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0), got);
        if (!vr_streq(got, vr_str(spec, "sha256")))
            vr_fail(v, "spec", "the stored spec text hashes to %.16s, sealed %.16s", got,
                    vr_nz(vr_str(spec, "sha256")));
        if (!vr_streq(PQgetvalue(r, 0, 1), vr_str(json_object_get(rec, "config"), "config_hash")))
            vr_fail(v, "spec", "the run's config hash %s differs from the sealed %s",
                    PQgetvalue(r, 0, 1),
                    vr_nz(vr_str(json_object_get(rec, "config"), "config_hash")));
    } else {
        vr_fail(v, "spec", "the run row is gone");
    }
    PQclear(r);
    if (v->failed == bad)
        vr_ok(v, "spec", "the spec text and config hash match");

    bad = v->failed;
    const json_t *sealed = json_object_get(spec, "files");
    r = tg_db_exec(conn, &stmt_files, 1, vals, &rc);
    if (!r)
        return rc;
    int n = PQntuples(r);
    for (int row = 0; row < n; row++) {
        const char *name = PQgetvalue(r, row, 0);
        size_t len = 0;
        unsigned char *raw = PQunescapeBytea((const unsigned char *)PQgetvalue(r, row, 2), &len);
        char got[65] = "";
        if (raw)
            tg_sha256_hex(raw, len, got);
        PQfreemem(raw);
        const json_t *f = NULL, *x;
        size_t i;
        json_array_foreach(sealed, i, x)
            if (vr_streq(vr_str(x, "name"), name))
                f = x;
        if (!f)
            vr_fail(v, "files", "file %s is not in the sealed record (inserted)", name);
        else if (!vr_streq(got, vr_str(f, "sha256")) || strcmp(got, PQgetvalue(r, row, 1)) != 0)
            vr_fail(v, "files", "file %s hashes to %.16s, stored %.16s, sealed %.16s", name, got,
                    PQgetvalue(r, row, 1), vr_nz(vr_str(f, "sha256")));
    }
    PQclear(r);
    if ((size_t)n != json_array_size(sealed))
        vr_fail(v, "files", "the sealed record lists %zu files, the table has %d",
                json_array_size(sealed), n);
    if (v->failed == bad)
        vr_ok(v, "files", "%d submitted files match their sealed sha256", n);
    return TG_OK;
}

tg_rc_e tg_evidence_verify(tg_db_conn_t *conn, const char *run_id, const tg_signer_t *key,
                           unsigned flags, FILE *out, char *why, size_t whylen)
{
    vr_t v = {.out = out};
    if (why && whylen)
        why[0] = '\0';
    tg_evidence_row_t row;
    json_t *rec = NULL;
    tg_rc_e rc = tg_evidence_get(conn, run_id, &row);
    if (rc == TG_ENOTFOUND) {
        if (why && whylen)
            snprintf(why, whylen, "run %s has no sealed evidence", run_id);
        return rc;
    }
    int matches = 0;
    if (rc == TG_OK)
        rc = tg_evidence_record_matches(conn, run_id, &matches);
    if (rc != TG_OK)
        goto dberr;
    if (!matches)
        vr_fail(&v, "record",
                "the stored jsonb record differs from the signed canonical text (edited)");
    (void)vr_sealed(&v, &row, key, &rec);
    if (rec) {
        rc = vr_events(&v, conn, run_id, rec);
        if (rc == TG_OK)
            rc = vr_logs(&v, conn, run_id, rec, flags);
        if (rc == TG_OK)
            rc = vr_files(&v, conn, run_id, rec);
        if (rc != TG_OK)
            goto dberr;
    }
    if (out && v.failed)
        fprintf(out, "FAILED: %s\n", v.first);
    else if (out)
        fprintf(out, "verified\n");
    if (why && whylen)
        snprintf(why, whylen, "%s", v.first);
    rc = v.failed ? TG_ECONFLICT : TG_OK;
    goto out;
dberr:
    if (why && whylen)
        snprintf(why, whylen, "the database could not be read (%s)", tg_rc_slug(rc));
out:
    json_decref(rec);
    tg_evidence_row_clean(&row);
    return rc;
}
