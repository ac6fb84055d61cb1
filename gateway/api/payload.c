/* Submission payloads: YAML, JSON with base64 files, multipart/form-data. */
#include "api/payload.h"

#include <string.h>
#include <strings.h>

#include "core/base64.h"
#include "http/multipart.h"
#include "http/problem.h"

static int payload_bad(tg_req_t *req, tg_rc_e rc, const char *path, const char *msg)
{
    json_t *errors = json_array();
    json_array_append_new(errors, tg_problem_error(path, 0, 0, msg));
    tg_problem(req, rc, errors, "the submission payload is not valid: %s", msg);
    return -1;
}

/* 1 when the media type (before any ';') equals `want`. */
static int payload_is(const char *ct, const char *want)
{
    size_t n = strlen(want);
    return strncasecmp(ct, want, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* Add a file; returns NULL, or why it cannot be added (arena memory). */
static const char *payload_add_file(tg_req_t *req, tg_payload_t *out, const char *name,
                                    const unsigned char *data, size_t len)
{
    if (!*name || strlen(name) > 255)
        return "a file name is empty or too long";
    for (size_t i = 0; i < out->nfiles; i++)
        if (strcmp(out->files[i].name, name) == 0)
            return tg_arena_printf(req->arena, "file %s is sent twice", name);
    if (out->nfiles == TG_PAYLOAD_MAX_FILES)
        return "too many files (at most 64); pack a project with run.working_dir";
    out->files[out->nfiles].name = name;
    out->files[out->nfiles].data = data;
    out->files[out->nfiles].len = len;
    out->nfiles++;
    return NULL;
}

static int payload_base64(tg_req_t *req, const char *s, unsigned char **out, size_t *outlen)
{
    size_t n = strlen(s), want = 0;
    if (!tg_base64_valid(s, n, TG_B64_STD, &want))
        return -1;
    unsigned char *buf = tg_arena_alloc(req->arena, want + 1);
    if (tg_base64_decode_to(s, n, TG_B64_STD, buf, want, outlen) != 0)
        return -1;
    *out = buf;
    return 0;
}

static int payload_fail(json_t **errors, const char *path, const char *msg)
{
    *errors = json_array();
    json_array_append_new(*errors, tg_problem_error(path, 0, 0, msg));
    return -1;
}

int tg_payload_from_json(tg_req_t *req, const json_t *obj, tg_payload_t *out, json_t **errors)
{
    memset(out, 0, sizeof(*out));
    *errors = NULL;
    if (!json_is_object(obj))
        return payload_fail(errors, "", "a submission is an object {spec, files}");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        if (strcmp(k, "spec") && strcmp(k, "files"))
            return payload_fail(errors, k,
                                "unknown field; a JSON submission has only spec and files");
    }
    const char *spec = json_string_value(json_object_get(obj, "spec"));
    if (!spec)
        return payload_fail(errors, "spec", "spec must be the tau.yaml text, a string");
    out->spec_len = json_string_length(json_object_get(obj, "spec"));
    if (strlen(spec) != out->spec_len)
        return payload_fail(errors, "spec", "the YAML text holds a NUL character");
    out->spec = tg_arena_strdup(req->arena, spec);
    json_t *files = json_object_get(obj, "files");
    if (files && !json_is_object(files))
        return payload_fail(errors, "files", "files must map file names to base64 text");
    json_object_foreach(files, k, v) {
        unsigned char *data;
        size_t len;
        const char *path = tg_arena_printf(req->arena, "files[\"%s\"]", k);
        if (!json_is_string(v) || payload_base64(req, json_string_value(v), &data, &len) != 0)
            return payload_fail(errors, path, "must be standard base64 text");
        const char *why = payload_add_file(req, out, tg_arena_strdup(req->arena, k), data, len);
        if (why)
            return payload_fail(errors, path, why);
    }
    return 0;
}

static int payload_json(tg_req_t *req, tg_payload_t *out)
{
    json_t *body = tg_req_json_body_or_reply(req);
    if (!body)
        return -1;
    json_t *errors = NULL;
    int rc = tg_payload_from_json(req, body, out, &errors);
    json_decref(body);
    if (rc != 0) {
        const char *msg = json_string_value(json_object_get(json_array_get(errors, 0), "message"));
        tg_problem(req, TG_EUNPROCESSABLE, errors, "the submission payload is not valid: %s", msg);
    }
    return rc;
}

static int payload_multipart(tg_req_t *req, const char *ct, tg_payload_t *out)
{
    char boundary[80];
    const char *why = NULL;
    if (tg_multipart_boundary(ct, boundary, sizeof(boundary), &why) != 0)
        return payload_bad(req, TG_EINVAL, "", why);
    /* the spec, the files, and room to tell "too many files" apart */
    enum { MAX_PARTS = TG_PAYLOAD_MAX_FILES + 2 };
    tg_multipart_part_t *parts = tg_arena_alloc(req->arena, MAX_PARTS * sizeof(*parts));
    size_t n = 0;
    tg_multipart_req_t mr = {.boundary = boundary,
                             .body = req->body.data ? req->body.data : "",
                             .len = req->body.len,
                             .arena = req->arena,
                             .parts = parts,
                             .max_parts = MAX_PARTS};
    if (tg_multipart_parse(&mr, &n, &why) != 0)
        return payload_bad(req, TG_EINVAL, "", why);
    for (size_t i = 0; i < n; i++) {
        const tg_multipart_part_t *part = &parts[i];
        if (part->name && strcmp(part->name, "spec") == 0) {
            /* one spec: a second one would silently replace the first */
            if (out->spec)
                return payload_bad(req, TG_EUNPROCESSABLE, "spec",
                                   "the multipart body has two parts named spec; send one");
            if (memchr(part->data, '\0', part->len))
                return payload_bad(req, TG_EUNPROCESSABLE, "spec",
                                   "the YAML text holds a NUL byte");
            out->spec = tg_arena_strndup(req->arena, part->data, part->len);
            out->spec_len = part->len;
            continue;
        }
        const char *fname = part->filename ? part->filename : part->name;
        if (!fname)
            return payload_bad(req, TG_EUNPROCESSABLE, "files",
                               "a multipart part has neither a name nor a filename");
        unsigned char *copy = tg_arena_alloc(req->arena, part->len + 1);
        memcpy(copy, part->data, part->len);
        why = payload_add_file(req, out, fname, copy, part->len);
        if (why)
            return payload_bad(req, TG_EUNPROCESSABLE, "files", why);
    }
    if (!out->spec)
        return payload_bad(req, TG_EUNPROCESSABLE, "spec",
                           "the multipart body needs a part named spec holding tau.yaml");
    return 0;
}

int tg_payload_parse_or_reply(tg_req_t *req, tg_payload_t *out)
{
    memset(out, 0, sizeof(*out));
    const char *ct = tg_req_header(req, "Content-Type");
    if (!ct)
        ct = "";
    if (payload_is(ct, "application/json"))
        return payload_json(req, out);
    if (payload_is(ct, "multipart/form-data"))
        return payload_multipart(req, ct, out);
    if (payload_is(ct, "application/yaml") || payload_is(ct, "application/x-yaml") ||
        payload_is(ct, "text/yaml")) {
        out->spec =
            tg_arena_strndup(req->arena, req->body.data ? req->body.data : "", req->body.len);
        out->spec_len = req->body.len;
        if (memchr(req->body.data ? req->body.data : "", '\0', req->body.len))
            return payload_bad(req, TG_EUNPROCESSABLE, "", "the YAML text holds a NUL byte");
        return 0;
    }
    tg_problem(req, TG_EMEDIATYPE, NULL,
               "send tau.yaml as application/yaml, as application/json {spec, files} or as "
               "multipart/form-data (got '%s')",
               ct);
    return -1;
}
