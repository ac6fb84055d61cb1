/* Evidence records: fetch, verify, save. */
#include "evidence.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands.h"
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

/* Standard or URL-safe base64, padding optional, into a new buffer. */
static unsigned char *ev_b64_decode(const char *s, size_t *outlen)
{
    size_t n = strlen(s);
    char *t = tg_xmalloc(n + 4);
    size_t k = 0;
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
    while (k % 4)
        t[k++] = '=';
    t[k] = '\0';
    unsigned char *out = tg_xmalloc(k / 4 * 3 + 1);
    int w = EVP_DecodeBlock(out, (const unsigned char *)t, (int)k);
    if (w < 0) {
        free(t);
        free(out);
        return NULL;
    }
    size_t len = (size_t)w;
    if (k >= 1 && t[k - 1] == '=')
        len--;
    if (k >= 2 && t[k - 2] == '=')
        len--;
    free(t);
    *outlen = len;
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
        json_array_foreach(keys, i, o)
        {
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

int tau_evidence_verify(const json_t *ev, const char *keydoc, size_t len, tau_evidence_check_t *c)
{
    const tau_evidence_format_t *f = &tau_evidence_format;
    memset(c, 0, sizeof(*c));
    int rc = -1;
    char *canon = NULL;
    size_t canon_len = 0;
    unsigned char *sig = NULL;
    EVP_PKEY *key = NULL;
    const json_t *record = json_object_get(ev, f->record_field);
    const char *want = json_string_value(json_object_get(ev, f->sha256_field));
    const char *sig_b64 = json_string_value(json_object_get(ev, f->signature_field));
    const char *key_id = json_string_value(json_object_get(ev, f->key_id_field));
    const json_t *sealed = json_object_get(ev, f->sealed_field);
    if (json_is_false(sealed)) {
        const char *d = json_string_value(json_object_get(ev, "detail"));
        snprintf(c->why, sizeof(c->why), "the evidence is not sealed yet%s%s", d ? ": " : "",
                 d ? d : "");
        goto out;
    }
    if (!record || !want || !sig_b64) {
        snprintf(c->why, sizeof(c->why), "the evidence lacks %s, %s or %s", f->record_field,
                 f->sha256_field, f->signature_field);
        goto out;
    }
    if (strncmp(want, "sha256:", 7) == 0)
        want += 7;
    const json_t *ctext = json_object_get(ev, f->canonical_field);
    if (json_is_string(ctext)) {
        /* hash the signed bytes themselves; the record shown must be them */
        canon = tg_xstrndup(json_string_value(ctext), json_string_length(ctext));
        canon_len = json_string_length(ctext);
        json_t *parsed = json_loadb(canon, canon_len, 0, NULL);
        int same = parsed && json_equal(parsed, record);
        json_decref(parsed);
        if (!same) {
            snprintf(c->why, sizeof(c->why), "%s does not match the signed %s text",
                     f->record_field, f->canonical_field);
            goto out;
        }
    } else {
        canon = tau_evidence_canonical(record);
        canon_len = canon ? strlen(canon) : 0;
    }
    if (!canon) {
        snprintf(c->why, sizeof(c->why), "the record cannot be serialised");
        goto out;
    }
    tg_sha256_hex(canon, canon_len, c->digest);
    if (strcasecmp(c->digest, want) != 0) {
        snprintf(c->why, sizeof(c->why),
                 "sha256 mismatch: the record hashes to %s but the evidence says %.64s", c->digest,
                 want);
        goto out;
    }
    c->digest_ok = 1;
    size_t siglen = 0;
    sig = ev_b64_decode(sig_b64, &siglen);
    if (!sig || siglen != 64) {
        snprintf(c->why, sizeof(c->why), "the signature is not 64 bytes of base64");
        goto out;
    }
    key = ev_find_key(keydoc, len, key_id, c->why, sizeof(c->why));
    if (!key)
        goto out;
    if (EVP_PKEY_id(key) != EVP_PKEY_ED25519) {
        snprintf(c->why, sizeof(c->why), "the public key is not an Ed25519 key");
        goto out;
    }
    unsigned char raw[32];
    for (int i = 0; i < 32; i++)
        raw[i] = (unsigned char)(ev_hex_value(c->digest[2 * i]) << 4 |
                                 ev_hex_value(c->digest[2 * i + 1]));
    if (ev_verify_sig(key, sig, siglen, canon, canon_len))
        snprintf(c->signed_as, sizeof(c->signed_as), "canonical JSON");
    else if (ev_verify_sig(key, sig, siglen, c->digest, 64))
        snprintf(c->signed_as, sizeof(c->signed_as), "hex digest");
    else if (ev_verify_sig(key, sig, siglen, raw, sizeof(raw)))
        snprintf(c->signed_as, sizeof(c->signed_as), "raw digest");
    else {
        snprintf(c->why, sizeof(c->why), "the Ed25519 signature does not verify%s%s",
                 key_id ? " with key " : "", key_id ? key_id : "");
        goto out;
    }
    c->signature_ok = 1;
    rc = 0;
out:
    EVP_PKEY_free(key);
    free(sig);
    free(canon);
    return rc;
}

/* ---- the command ---------------------------------------------------------------- */

const tau_opt_t tau_opts_evidence[] = {
    {"verify", 0, NULL, "check the sha256 digest and the Ed25519 signature"},
    {"out", 'o', "FILE", "write the evidence JSON to FILE (use --output for json/yaml)"},
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
    const char *file = tau_arg(a, "out");
    if (file) {
        FILE *f = fopen(file, "w");
        if (!f || json_dumpf(ev, f, JSON_INDENT(2)) != 0 || fputc('\n', f) == EOF) {
            if (f)
                fclose(f);
            rc = tau_fail(ctx, TAU_EXIT_USAGE, "cannot write %s", file);
            goto out;
        }
        if (fclose(f) != 0) {
            rc = tau_fail(ctx, TAU_EXIT_USAGE, "cannot write %s", file);
            goto out;
        }
    } else if (!tau_out_structured(ctx, ev)) {
        tau_out_json(stdout, ev);
    }
    if (!tau_flag(a, "verify"))
        goto out;
    rc = ev_fetch_key(ctx, a, &keydoc, &keylen);
    if (rc != TAU_EXIT_OK)
        goto out;
    tau_evidence_check_t c;
    FILE *rep = file ? stdout : stderr;
    if (tau_evidence_verify(ev, keydoc, keylen, &c) != 0) {
        if (c.digest_ok)
            fprintf(rep, "sha256     ok (%s)\n", c.digest);
        rc = tau_fail(ctx, TAU_EXIT_RUN_FAILED, "the evidence does not verify: %s", c.why);
        goto out;
    }
    const char *kid = json_string_value(json_object_get(ev, tau_evidence_format.key_id_field));
    fprintf(rep, "sha256     ok (%s)\n", c.digest);
    fprintf(rep, "signature  ok (Ed25519 over the %s%s", c.signed_as, kid ? ", key " : "");
    tau_print_clean(rep, kid ? kid : "");
    fputs(")\n", rep);
    fprintf(rep, "Evidence for run %s verified.\n", a->pos[0]);
out:
    free(keydoc);
    json_decref(ev);
    return rc;
}
