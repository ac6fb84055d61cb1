/* Unit tests: the canonical form of evidence records, the log digest, and
 * the offline checks of a sealed row (store/evidence*.c): hash, canonical
 * form, seal facts, signature and the history's hash chain. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/digest.h"
#include "core/log.h"
#include "evidence/signer.h"
#include "store/events.h"
#include "store/evidence.h"
#include "evidence/verify.h"

#define RUN_ID "6f1d2c3b-0a9e-4c8d-8e7f-112233445566"

static void test_canonical_form_is_sorted_compact_and_exact(void **state)
{
    (void)state;
    json_t *v = json_loads("{\"b\": [1, 2.5, 0.1, 1.0, 1e17, -0.0, true, null, 1e-5],"
                           " \"a\": {\"z\": \"x\\ny\\t\\\"q\\\" \\\\ /\", \"\\u00e9t\\u00e9\": 1,"
                           " \"Z\": \"\\u0001\\u007f\\u2028\"}, \"aa\": {}, \"A\": []}",
                           0, NULL);
    assert_non_null(v);
    size_t len = 0;
    char *c = tg_evidence_canonical(v, &len);
    const char *want =
        "{\"A\":[],\"a\":{\"Z\":\"\\u0001\x7f\xe2\x80\xa8\",\"z\":\"x\\ny\\t\\\"q\\\" "
        "\\\\ /\",\"\xc3\xa9t\xc3\xa9\":1},\"aa\":{},"
        "\"b\":[1,2.5,0.10000000000000001,1.0,1e17,-0.0,true,null,1.0000000000000001e-5]}";
    assert_string_equal(c, want);
    assert_int_equal(len, strlen(want));

    /* a fixed point: parse and dump again, same bytes */
    json_t *again = json_loadb(c, len, 0, NULL);
    char *c2 = tg_evidence_canonical(again, NULL);
    assert_string_equal(c2, c);

    /* insertion order does not matter */
    json_t *o1 = json_object(), *o2 = json_object();
    const char *keys[] = {"run", "attempts", "schema", "history", "logs", "Z", "_"};
    for (int i = 0; i < 7; i++) {
        json_object_set_new(o1, keys[i], json_integer(i));
        json_object_set_new(o2, keys[6 - i], json_integer(6 - i));
    }
    char *k1 = tg_evidence_canonical(o1, NULL), *k2 = tg_evidence_canonical(o2, NULL);
    assert_string_equal(k1, k2);
    assert_string_equal(k1, "{\"Z\":5,\"_\":6,\"attempts\":1,\"history\":3,\"logs\":4,\"run\":0,"
                            "\"schema\":2}");
    free(k1);
    free(k2);
    json_decref(o1);
    json_decref(o2);
    free(c);
    free(c2);
    json_decref(v);
    json_decref(again);
}

static void test_log_digest_is_sha256_over_chunk_hashes_with_newlines(void **state)
{
    (void)state;
    char a[65], b[65], want[65], got[65], text[200];
    tg_sha256_hex("hello\n", 6, a);
    tg_sha256_hex("world\n", 6, b);
    snprintf(text, sizeof(text), "%s\n%s\n", a, b);
    tg_sha256_hex(text, strlen(text), want);
    tg_evidence_logsum_t s;
    tg_evidence_logsum_init(&s);
    tg_evidence_logsum_add(&s, a);
    tg_evidence_logsum_add(&s, b);
    tg_evidence_logsum_final(&s, got);
    assert_string_equal(got, want);
    /* order matters */
    tg_evidence_logsum_init(&s);
    tg_evidence_logsum_add(&s, b);
    tg_evidence_logsum_add(&s, a);
    tg_evidence_logsum_final(&s, got);
    assert_string_not_equal(got, want);
}

/* --- a sealed record built as the sealer does ------------------------------------------------ */

static json_t *history(int n)
{
    static const char *states[] = {"Accepted", "Queued", "Admitted", "Running", "Succeeded"};
    json_t *h = json_array();
    char prev[65] = "";
    for (int i = 0; i < n; i++) {
        char at[40], hash[65];
        snprintf(at, sizeof(at), "2026-12-01T10:00:0%d.000123Z", i);
        json_t *data = json_pack("{s:i}", "attempt", 1);
        tg_event_t ev = {.state = states[i % 5],
                         .reason = i ? "Reason" : NULL,
                         .message = "message \xc3\xa9",
                         .source = "engine",
                         .data = data};
        tg_store_event_hash(prev, RUN_ID, i + 1, at, &ev, hash);
        json_array_append_new(h, json_pack("{s:i, s:s, s:s, s:s?, s:s, s:s, s:O, s:s?, s:s}", "seq",
                                           i + 1, "at", at, "state", ev.state, "reason", ev.reason,
                                           "message", ev.message, "source", ev.source, "data", data,
                                           "prev_hash", i ? prev : NULL, "hash", hash));
        json_decref(data);
        memcpy(prev, hash, sizeof(prev));
    }
    return h;
}

/* Seal `rec` (stolen) into row as evidence/sealer.c does. */
static void seal(json_t *rec, const tg_signer_t *key, tg_evidence_row_t *row)
{
    memset(row, 0, sizeof(*row));
    snprintf(row->run_id, sizeof(row->run_id), RUN_ID);
    snprintf(row->key_id, sizeof(row->key_id), "%s", tg_signer_key_id(key));
    snprintf(row->algorithm, sizeof(row->algorithm), "Ed25519");
    snprintf(row->sealed_at, sizeof(row->sealed_at), "2026-12-01T10:00:09.000001Z");
    json_object_set_new(rec, "seal",
                        json_pack("{s:s, s:s, s:s}", "algorithm", "Ed25519", "key_id", row->key_id,
                                  "sealed_at", row->sealed_at));
    row->canonical = tg_evidence_canonical(rec, &row->canonical_len);
    tg_sha256_hex(row->canonical, row->canonical_len, row->sha256);
    assert_int_equal(tg_signer_sign(key, row->canonical, row->canonical_len, &row->signature),
                     TG_OK);
    json_decref(rec);
}

static json_t *record(int nevents)
{
    json_t *h = history(nevents);
    const char *head = json_string_value(json_object_get(json_array_get(h, nevents - 1), "hash"));
    json_t *rec =
        json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:i, s:s}, s:[{s:f}]}", "schema", TG_EVIDENCE_SCHEMA,
                  "run", "id", RUN_ID, "state", "Succeeded", "history", h, "chain", "events",
                  nevents, "head", head, "metrics", "min", 0.25);
    return rec;
}

static tg_rc_e check(const tg_evidence_row_t *row, const tg_signer_t *key, char *why)
{
    why[0] = '\0';
    return tg_evidence_verify_sealed(row, key, NULL, NULL, why, 512);
}

static void resign(tg_evidence_row_t *row, const tg_signer_t *key)
{
    tg_sha256_hex(row->canonical, row->canonical_len, row->sha256);
    free(row->signature);
    assert_int_equal(tg_signer_sign(key, row->canonical, row->canonical_len, &row->signature),
                     TG_OK);
}

static void test_sealed_record_verifies_and_one_byte_breaks_it(void **state)
{
    (void)state;
    char err[256], why[512];
    tg_signer_t *key = tg_signer_generate(err, sizeof(err));
    tg_evidence_row_t row;
    seal(record(5), key, &row);

    json_t *parsed = NULL;
    char *buf = NULL;
    size_t blen = 0;
    FILE *out = open_memstream(&buf, &blen);
    assert_int_equal(tg_evidence_verify_sealed(&row, key, &parsed, out, why, sizeof(why)), TG_OK);
    fclose(out);
    assert_string_equal(why, "");
    assert_non_null(parsed);
    assert_non_null(strstr(buf, "ok   record: sha256 "));
    assert_non_null(strstr(buf, "ok   signature: Ed25519 signature valid"));
    assert_non_null(strstr(buf, "ok   history: 5 events form an intact chain"));
    assert_null(strstr(buf, "FAIL"));
    free(buf);
    json_decref(parsed);

    /* one byte of the record changed: the hash no longer matches */
    char *at = strstr(row.canonical, "Succeeded");
    at[0] = 'X';
    assert_int_equal(check(&row, key, why), TG_ECONFLICT);
    assert_non_null(strstr(why, "record: the canonical text hashes to"));
    /* ... and with the hash recomputed, the signature does not match */
    tg_sha256_hex(row.canonical, row.canonical_len, row.sha256);
    assert_int_equal(check(&row, key, why), TG_ECONFLICT);
    assert_non_null(strstr(why, "signature: the Ed25519 signature does not match"));
    at[0] = 'S';
    tg_sha256_hex(row.canonical, row.canonical_len, row.sha256);
    assert_int_equal(check(&row, key, why), TG_OK);

    /* one byte of the signature changed */
    row.signature[3] = row.signature[3] == 'A' ? 'B' : 'A';
    assert_int_equal(check(&row, key, why), TG_ECONFLICT);
    assert_non_null(strstr(why, "signature:"));

    /* checked against another key, or none */
    tg_signer_t *other = tg_signer_generate(err, sizeof(err));
    assert_int_equal(check(&row, other, why), TG_ECONFLICT);
    assert_non_null(strstr(why, "signature: sealed with key"));
    assert_int_equal(check(&row, NULL, why), TG_ECONFLICT);
    assert_non_null(strstr(why, "no public key"));

    tg_evidence_row_clean(&row);
    tg_signer_free(other);
    tg_signer_free(key);
}

static void test_edited_history_is_caught_even_when_resigned(void **state)
{
    (void)state;
    char err[256], why[512];
    tg_signer_t *key = tg_signer_generate(err, sizeof(err));
    tg_evidence_row_t row;
    seal(record(4), key, &row);

    /* an insider with the key edits an event's message and re-signs: the
     * event no longer hashes to its stored hash */
    char *m = strstr(row.canonical, "message \xc3\xa9");
    assert_non_null(m);
    m[0] = 'M';
    resign(&row, key);
    assert_int_equal(check(&row, key, why), TG_ECONFLICT);
    assert_non_null(strstr(why, "history: seq 1 (Accepted): its fields hash to"));
    tg_evidence_row_clean(&row);

    /* an event removed from the middle breaks the chain */
    json_t *rec = record(4);
    json_array_remove(json_object_get(rec, "history"), 1);
    seal(rec, key, &row);
    assert_int_equal(check(&row, key, why), TG_ECONFLICT);
    assert_non_null(strstr(why, "history: event 2 has seq 3"));
    tg_evidence_row_clean(&row);

    /* a record whose seal names another run */
    rec = record(2);
    seal(rec, key, &row);
    row.run_id[0] = row.run_id[0] == '6' ? '7' : '6';
    assert_int_equal(check(&row, key, why), TG_ECONFLICT);
    assert_non_null(strstr(why, "seal: the record is about run"));
    tg_evidence_row_clean(&row);

    /* valid signature over text that is not in canonical form */
    rec = record(2);
    seal(rec, key, &row);
    json_t *parsed = json_loadb(row.canonical, row.canonical_len, 0, NULL);
    free(row.canonical);
    row.canonical = json_dumps(parsed, JSON_INDENT(2) | JSON_SORT_KEYS);
    row.canonical_len = strlen(row.canonical);
    json_decref(parsed);
    resign(&row, key);
    assert_int_equal(check(&row, key, why), TG_ECONFLICT);
    assert_non_null(strstr(why, "record: the stored text is not in canonical form"));
    tg_evidence_row_clean(&row);

    /* not JSON at all */
    rec = record(2);
    seal(rec, key, &row);
    row.canonical[0] = '[';
    resign(&row, key);
    assert_int_equal(check(&row, key, why), TG_ECONFLICT);
    assert_non_null(strstr(why, "record: the canonical text is not JSON"));
    tg_evidence_row_clean(&row);
    tg_signer_free(key);
}

int main(void)
{
    tg_log_set_level(TG_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_form_is_sorted_compact_and_exact),
        cmocka_unit_test(test_log_digest_is_sha256_over_chunk_hashes_with_newlines),
        cmocka_unit_test(test_sealed_record_verifies_and_one_byte_breaks_it),
        cmocka_unit_test(test_edited_history_is_caught_even_when_resigned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
