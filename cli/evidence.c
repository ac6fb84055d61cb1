/* Evidence records: fetch, verify, save. */
#include "evidence.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands.h"
#include "core/base64.h"
#include "core/digest.h"
#include "http.h"
#include "output.h"
#include "yamldoc.h"

const tau_evidence_format_t tau_evidence_format = {
    .record_field = "record",
    .canonical_field = "canonical",
    .sealed_field = "sealed",
    .sha256_field = "sha256",
    .signature_field = "signature",
    .key_id_field = "key_id",
    .canonical_flags = JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17),
};

char *tau_evidence_canonical(const json_t *record)
{
    return json_dumps(record, tau_evidence_format.canonical_flags);
}

/* Standard or URL-safe base64, padding optional, whitespace ignored (keys
 * pasted from a terminal), into a new buffer. */
static unsigned char *ev_b64_decode(const char *s, size_t *outlen)
{
    size_t n = strlen(s), k = 0;
    char *t = tg_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '-')
            c = '+';
        else if (c == '_')
            c = '/';
        else if (isspace((unsigned char)c))
            continue;
        t[k++] = c;
    }
    unsigned char *out = NULL;
    if (tg_base64_decode(t, k, TG_B64_STD, &out, outlen) != 0)
        out = NULL;
    free(t);
    return out;
}

/* An Ed25519 key from PEM text or base64 (raw 32 bytes or DER SPKI). */
static EVP_PKEY *ev_key_from_text(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    if (strncmp(s, "-----BEGIN", 10) == 0) {
        BIO *bio = BIO_new_mem_buf(s, -1);
        EVP_PKEY *k = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
        BIO_free(bio);
        return k;
    }
    size_t len = 0;
    unsigned char *raw = ev_b64_decode(s, &len);
    if (!raw)
        return NULL;
    EVP_PKEY *k = NULL;
    if (len == 32) {
        k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, len);
    } else {
        const unsigned char *p = raw;
        k = d2i_PUBKEY(NULL, &p, (long)len);
    }
    free(raw);
    return k;
}

static EVP_PKEY *ev_key_from_obj(const json_t *o)
{
    static const char *const fields[] = {
        "public_key_pem", "public_key_b64", "pem", "public_key", "key", NULL};
    for (const char *const *f = fields; *f; f++) {
        const char *v = json_string_value(json_object_get(o, *f));
        if (v)
            return ev_key_from_text(v);
    }
    const char *kty = json_string_value(json_object_get(o, "kty"));
    const char *x = json_string_value(json_object_get(o, "x"));
    if (kty && x && strcmp(kty, "OKP") == 0)
        return ev_key_from_text(x);
    return NULL;
}

static const char *ev_key_id(const json_t *o)
{
    const char *id = json_string_value(json_object_get(o, tau_evidence_format.key_id_field));
    if (!id)
        id = json_string_value(json_object_get(o, "kid"));
    if (!id)
        id = json_string_value(json_object_get(o, "id"));
    return id;
}

/* The key for key_id from a key document. */
static EVP_PKEY *ev_find_key(const char *doc, size_t len, const char *key_id, char *why,
                             size_t whylen)
{
    json_t *j = json_loadb(doc, len, 0, NULL);
    if (!j) {
        EVP_PKEY *k = ev_key_from_text(doc);
        if (!k)
            snprintf(why, whylen, "the public key is neither JSON nor PEM");
        return k;
    }
    EVP_PKEY *k = NULL;
    const json_t *keys = json_object_get(j, "keys");
    if (!json_is_array(keys))
        keys = json_is_array(j) ? j : NULL;
    if (keys) {
        size_t i;
        json_t *o;
        json_array_foreach(keys, i, o) {
            const char *id = ev_key_id(o);
            if (!key_id || (id && strcmp(id, key_id) == 0) || json_array_size(keys) == 1) {
                k = ev_key_from_obj(o);
                if (k)
                    break;
            }
        }
        if (!k)
            snprintf(why, whylen, "no public key with key_id %s", key_id ? key_id : "(none)");
    } else {
        const char *id = ev_key_id(j);
        if (key_id && id && strcmp(id, key_id) != 0)
            snprintf(why, whylen, "the record was signed by key %s but the gateway's key is %s",
                     key_id, id);
        else if (!(k = ev_key_from_obj(j)))
            snprintf(why, whylen, "the public key document holds no usable key");
    }
    json_decref(j);
    return k;
}

static int ev_verify_sig(EVP_PKEY *k, const unsigned char *sig, size_t siglen, const void *msg,
                         size_t msglen)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    int ok = m && EVP_DigestVerifyInit(m, NULL, NULL, NULL, k) == 1 &&
             EVP_DigestVerify(m, sig, siglen, msg, msglen) == 1;
    EVP_MD_CTX_free(m);
    return ok;
}

static int ev_hex_value(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* ---- the checks ----------------------------------------------------------------------- */

typedef struct {
    FILE *out;
    int failed;
    char *why;
    size_t whylen;
} ev_report_t;

static void ev_line(ev_report_t *r, int ok, const char *check, const char *fmt, ...)
    TG_PRINTF(4, 5);
static void ev_line(ev_report_t *r, int ok, const char *check, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (r->out) {
        fprintf(r->out, "%-4s %s: ", ok ? "ok" : "FAIL", check);
        tau_print_clean(r->out, msg);
        fputc('\n', r->out);
    }
    if (!ok && !r->failed++)
        snprintf(r->why, r->whylen, "%s: %s", check, msg);
}

static int ev_streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

void tau_evidence_event_hash(const char *prev_hash, const char *run_id, const json_t *ev,
                             char out[65])
{
    const json_t *data = json_object_get(ev, "data");
    json_t *o = json_pack("{s:s, s:O, s:s?, s:s?, s:s?, s:s?, s:s, s:o}", "run_id", run_id, "seq",
                          json_object_get(ev, "seq"), "at", tau_json_str(ev, "at"), "state",
                          tau_json_str(ev, "state"), "reason", tau_json_str(ev, "reason"),
                          "message", tau_json_str(ev, "message"), "source",
                          tau_json_str(ev, "source") ? tau_json_str(ev, "source") : "", "data",
                          json_is_object(data) ? json_incref((json_t *)data) : json_object());
    char *canon = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
    json_decref(o);
    tg_buf_t b;
    tg_buf_init(&b, 0);
    if (!canon || tg_buf_printf(&b, "%s\n%s", prev_hash, canon) != TG_OK)
        snprintf(out, 65, "(unhashable)");
    else
        tg_sha256_hex(b.data, b.len, out);
    tg_buf_clean(&b);
    free(canon);
}

/* record.history: seq 1..n, each prev_hash the hash before it, each hash
 * recomputed from its fields, and record.chain {events: n, head}. */
static void ev_check_history(ev_report_t *r, const json_t *record, const char *run_id)
{
    const json_t *hist = json_object_get(record, "history");
    const json_t *chain = json_object_get(record, "chain");
    if (!json_is_array(hist) || json_array_size(hist) == 0) {
        ev_line(r, 0, "history", "the record has no event history to check");
        return;
    }
    int bad = r->failed;
    const char *prev = NULL;
    size_t i;
    const json_t *e;
    json_array_foreach(hist, i, e) {
        json_int_t seq = json_integer_value(json_object_get(e, "seq"));
        const char *ph = tau_json_str(e, "prev_hash"), *hash = tau_json_str(e, "hash");
        if (seq != (json_int_t)i + 1) {
            ev_line(r, 0, "history",
                    "event %zu has seq %" JSON_INTEGER_FORMAT ": events are missing or were "
                    "inserted",
                    i + 1, seq);
            return;
        }
        if (i == 0 ? ph && *ph : !ev_streq(ph, prev))
            ev_line(r, 0, "history",
                    "seq %" JSON_INTEGER_FORMAT ": prev_hash %.16s does not link to the hash "
                    "before it %.16s",
                    seq, ph ? ph : "", prev ? prev : "");
        char want[65];
        tau_evidence_event_hash(ph ? ph : "", run_id, e, want);
        if (!ev_streq(hash, want))
            ev_line(r, 0, "history",
                    "seq %" JSON_INTEGER_FORMAT " (%s): its fields hash to %.16s but its hash is "
                    "%.16s (the event was edited)",
                    seq, tau_json_str(e, "state") ? tau_json_str(e, "state") : "-", want,
                    hash ? hash : "");
        prev = hash;
    }
    size_t n = json_array_size(hist);
    if (json_integer_value(json_object_get(chain, "events")) != (json_int_t)n ||
        !ev_streq(tau_json_str(chain, "head"), prev))
        ev_line(r, 0, "history",
                "chain says %" JSON_INTEGER_FORMAT " events with head %.16s, the "
                "history has %zu with head %.16s",
                json_integer_value(json_object_get(chain, "events")),
                tau_json_str(chain, "head") ? tau_json_str(chain, "head") : "", n,
                prev ? prev : "");
    if (r->failed == bad)
        ev_line(r, 1, "history", "%zu events form an intact chain (head %.16s)", n, prev);
}

/* The record is about the run asked for and names the seal of its envelope. */
static void ev_check_seal(ev_report_t *r, const json_t *ev, const json_t *record,
                          const char *run_id)
{
    const json_t *seal = json_object_get(record, "seal");
    const char *rec_run = tau_json_str(json_object_get(record, "run"), "id");
    int bad = r->failed;
    if (!ev_streq(rec_run, run_id))
        ev_line(r, 0, "seal", "the record is about run %s, not %s", rec_run ? rec_run : "(none)",
                run_id);
    if (tau_json_str(ev, "run_id") && !ev_streq(tau_json_str(ev, "run_id"), run_id))
        ev_line(r, 0, "seal", "the envelope is about run %s, not %s", tau_json_str(ev, "run_id"),
                run_id);
    static const char *const same[][2] = {
        {"key_id", "key_id"}, {"sealed_at", "sealed_at"}, {"algorithm", "algorithm"}};
    for (size_t i = 0; i < TG_ARRAY_LEN(same); i++) {
        const char *outer = tau_json_str(ev, same[i][0]), *inner = tau_json_str(seal, same[i][1]);
        if (seal && outer && !ev_streq(outer, inner))
            ev_line(r, 0, "seal", "the envelope says %s %s, the signed record %s", same[i][0],
                    outer, inner ? inner : "(none)");
    }
    if (r->failed == bad)
        ev_line(r, 1, "seal", "run %s%s%s%s%s", run_id,
                tau_json_str(seal, "sealed_at") ? " sealed at " : "",
                tau_json_str(seal, "sealed_at") ? tau_json_str(seal, "sealed_at") : "",
                tau_json_str(seal, "key_id") ? " with key " : "",
                tau_json_str(seal, "key_id") ? tau_json_str(seal, "key_id") : "");
}

int tau_evidence_verify(const json_t *ev, const char *run_id, const char *keydoc, size_t len,
                        FILE *report, char *why, size_t whylen)
{
    const tau_evidence_format_t *f = &tau_evidence_format;
    ev_report_t r = {report, 0, why, whylen};
    why[0] = '\0';
    char *canon = NULL;
    size_t canon_len = 0;
    unsigned char *sig = NULL;
    EVP_PKEY *key = NULL;
    char digest[65] = "", kwhy[256] = "";
    const json_t *record = json_object_get(ev, f->record_field);
    const char *want = tau_json_str(ev, f->sha256_field);
    const char *sig_b64 = tau_json_str(ev, f->signature_field);
    const char *key_id = tau_json_str(ev, f->key_id_field);
    if (json_is_false(json_object_get(ev, f->sealed_field))) {
        const char *d = tau_json_str(ev, "detail");
        ev_line(&r, 0, "seal", "the evidence is not sealed yet%s%s", d ? ": " : "", d ? d : "");
        goto out;
    }
    if (!json_is_object(record) || !want || !sig_b64) {
        ev_line(&r, 0, "record", "the evidence lacks %s, %s or %s", f->record_field,
                f->sha256_field, f->signature_field);
        goto out;
    }
    if (strncmp(want, "sha256:", 7) == 0)
        want += 7;
    const json_t *ctext = json_object_get(ev, f->canonical_field);
    if (json_is_string(ctext)) {
        /* hash the signed bytes themselves; the record shown must be them */
        canon_len = json_string_length(ctext);
        canon = tg_xstrndup(json_string_value(ctext), canon_len);
        json_t *parsed = json_loadb(canon, canon_len, 0, NULL);
        int same = parsed && json_equal(parsed, (json_t *)record);
        json_decref(parsed);
        if (!same) {
            ev_line(&r, 0, "record", "%s does not match the signed %s text", f->record_field,
                    f->canonical_field);
            goto out;
        }
    } else {
        canon = tau_evidence_canonical(record);
        canon_len = canon ? strlen(canon) : 0;
    }
    if (!canon) {
        ev_line(&r, 0, "record", "the record cannot be serialised");
        goto out;
    }
    tg_sha256_hex(canon, canon_len, digest);
    if (strcasecmp(digest, want) != 0) {
        ev_line(&r, 0, "record",
                "sha256 mismatch: the record hashes to %s but the evidence says %.64s", digest,
                want);
        goto out;
    }
    ev_line(&r, 1, "record", "sha256 %s matches the canonical text (%zu bytes)", digest, canon_len);
    ev_check_seal(&r, ev, record, run_id);
    size_t siglen = 0;
    sig = ev_b64_decode(sig_b64, &siglen);
    if (!sig || siglen != 64) {
        ev_line(&r, 0, "signature", "the signature is not 64 bytes of base64");
        goto history;
    }
    key = ev_find_key(keydoc, len, key_id, kwhy, sizeof(kwhy));
    if (!key) {
        ev_line(&r, 0, "signature", "%s", kwhy);
        goto history;
    }
    if (EVP_PKEY_id(key) != EVP_PKEY_ED25519) {
        ev_line(&r, 0, "signature", "the public key is not an Ed25519 key");
        goto history;
    }
    unsigned char raw[32];
    for (int i = 0; i < 32; i++)
        raw[i] =
            (unsigned char)(ev_hex_value(digest[2 * i]) << 4 | ev_hex_value(digest[2 * i + 1]));
    const char *signed_as = ev_verify_sig(key, sig, siglen, canon, canon_len)   ? "canonical JSON"
                            : ev_verify_sig(key, sig, siglen, digest, 64)       ? "hex digest"
                            : ev_verify_sig(key, sig, siglen, raw, sizeof(raw)) ? "raw digest"
                                                                                : NULL;
    if (signed_as)
        ev_line(&r, 1, "signature", "Ed25519 over the %s%s%s", signed_as, key_id ? ", key " : "",
                key_id ? key_id : "");
    else
        ev_line(&r, 0, "signature", "the Ed25519 signature does not verify%s%s",
                key_id ? " with key " : "", key_id ? key_id : "");
history:
    ev_check_history(&r, record, run_id);
out:
    EVP_PKEY_free(key);
    free(sig);
    free(canon);
    return r.failed ? -1 : 0;
}

/* ---- the command ---------------------------------------------------------------- */

const tau_opt_t tau_opts_evidence[] = {
    {"verify", 0, NULL, "check the digest, the signature, the seal and the event hash chain"},
    {"out-file", 0, "FILE", "write the evidence JSON to FILE instead of stdout"},
    {"key", 0, "FILE", "verify with this public key (PEM or JSON) instead of the gateway's"},
    {NULL, 0, NULL, NULL},
};

static int ev_fetch_key(tau_ctx_t *ctx, const tau_args_t *a, char **doc, size_t *len)
{
    const char *file = tau_arg(a, "key");
    char err[512];
    if (file) {
        if (tau_read_file(file, 1024 * 1024, doc, len, err, sizeof(err)) != 0)
            return tau_fail(ctx, TAU_EXIT_USAGE, "%s", err);
        return TAU_EXIT_OK;
    }
    tau_http_req_t rq = {.method = "GET",
                         .path = "/v1/evidence/public-key",
                         .accept = "application/json, application/x-pem-file;q=0.9, */*;q=0.5"};
    tau_http_resp_t resp;
    tau_http_resp_init(&resp);
    int rc;
    if (tau_http_do(ctx, &rq, &resp) != 0) {
        rc = tau_fail(ctx, TAU_EXIT_NETWORK, "cannot reach the gateway at %s: %s", ctx->gateway,
                      resp.error);
    } else if ((rc = tau_http_exit_code(resp.status)) != TAU_EXIT_OK) {
        tau_fail(ctx, 0, "cannot fetch the evidence public key (HTTP %ld)", resp.status);
    } else {
        *doc = tg_buf_steal(&resp.body, len);
        if (!*doc) {
            *doc = tg_xstrdup("");
            *len = 0;
        }
    }
    tau_http_resp_clean(&resp);
    return rc;
}

static int ev_write_file(tau_ctx_t *ctx, const char *file, const json_t *ev)
{
    FILE *f = fopen(file, "w");
    if (!f || json_dumpf(ev, f, JSON_INDENT(2)) != 0 || fputc('\n', f) == EOF) {
        if (f)
            fclose(f);
        return tau_fail(ctx, TAU_EXIT_USAGE, "cannot write %s", file);
    }
    if (fclose(f) != 0)
        return tau_fail(ctx, TAU_EXIT_USAGE, "cannot write %s", file);
    return TAU_EXIT_OK;
}

int tau_cmd_evidence(tau_ctx_t *ctx, const tau_args_t *a)
{
    tau_url_t u;
    tau_url_init(&u);
    tau_url_lit(&u, "/v1/runs");
    tau_url_seg(&u, a->pos[0]);
    tau_url_lit(&u, "/evidence");
    json_t *ev = NULL;
    char *keydoc = NULL;
    size_t keylen = 0;
    int rc = tau_api(ctx, "GET", tau_url_str(&u), NULL, &ev);
    tau_url_clean(&u);
    if (rc != TAU_EXIT_OK)
        goto out;
    const char *file = tau_arg(a, "out-file");
    if (file)
        rc = ev_write_file(ctx, file, ev);
    else if (!tau_out_structured(ctx, ev))
        tau_out_json(stdout, ev); /* the record has no table view: JSON it is */
    if (rc != TAU_EXIT_OK || !tau_flag(a, "verify"))
        goto out;
    rc = ev_fetch_key(ctx, a, &keydoc, &keylen);
    if (rc != TAU_EXIT_OK)
        goto out;
    /* the report goes where it does not mix with the record */
    FILE *rep = file ? stdout : stderr;
    char why[800];
    fflush(stdout);
    if (tau_evidence_verify(ev, a->pos[0], keydoc, keylen, rep, why, sizeof(why)) != 0) {
        rc = tau_fail(ctx, TAU_EXIT_RUN_FAILED, "the evidence does not verify: %s", why);
        goto out;
    }
    fprintf(rep, "Evidence for run ");
    tau_print_clean(rep, a->pos[0]);
    fprintf(rep, " verified.\n");
out:
    free(keydoc);
    json_decref(ev);
    return rc;
}
