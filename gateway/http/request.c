/* Request accessors and response builders. */
#include "http/request.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

#include "http/problem.h"

const char *tg_req_param(const tg_req_t *req, const char *name)
{
    for (int i = 0; i < req->nparams; i++)
        if (strcmp(req->param_names[i], name) == 0)
            return req->param_values[i];
    return NULL;
}

const char *tg_req_query(const tg_req_t *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

typedef struct {
    const char **names, **values;
    size_t max, n;
} req_args_t;

static enum MHD_Result req_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    (void)kind;
    req_args_t *a = cls;
    if (a->n < a->max) {
        a->names[a->n] = key;
        a->values[a->n] = value;
    }
    a->n++;
    return MHD_YES;
}

size_t tg_req_query_args(const tg_req_t *req, const char **names, const char **values, size_t max)
{
    req_args_t a = {names, values, max, 0};
    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, req_arg, &a);
    return a.n;
}

const char *tg_req_header(const tg_req_t *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

json_t *tg_req_json_body_or_reply(tg_req_t *req)
{
    json_error_t jerr;
    if (req->body.len == 0) {
        tg_problem(req, TG_EINVAL, NULL, "the request needs a JSON body");
        return NULL;
    }
    json_t *j = json_loadb(req->body.data, req->body.len, JSON_REJECT_DUPLICATES, &jerr);
    if (!j) {
        json_t *errors = json_array();
        json_array_append_new(errors, tg_problem_error("", jerr.line, jerr.column, jerr.text));
        tg_problem(req, TG_EINVAL, errors, "malformed JSON at line %d, column %d (byte %d): %s",
                   jerr.line, jerr.column, jerr.position, jerr.text);
        return NULL;
    }
    if (!json_is_object(j) && !json_is_array(j)) {
        json_decref(j);
        tg_problem(req, TG_EINVAL, NULL, "the JSON body must be an object or an array");
        return NULL;
    }
    return j;
}

int tg_req_idempotency_key_or_reply(tg_req_t *req, const char **key)
{
    *key = tg_req_header(req, "Idempotency-Key");
    if (*key && (!**key || strlen(*key) > 255)) {
        tg_problem(req, TG_EINVAL, NULL, "Idempotency-Key must be 1 to 255 characters");
        return -1;
    }
    return 0;
}

static void resp_set(tg_req_t *req, unsigned status, struct MHD_Response *resp,
                     const char *content_type, size_t len)
{
    if (req->response)
        MHD_destroy_response(req->response);
    req->response = resp;
    req->status = status;
    req->response_bytes = len;
    if (content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
}

void tg_resp_bytes(tg_req_t *req, unsigned status, const char *content_type, const void *data,
                   size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
    resp_set(req, status, resp, content_type, len);
}

void tg_resp_json(tg_req_t *req, unsigned status, json_t *body)
{
    /* 15 significant digits: 0.1 is answered as 0.1, not 0.10000000000000001
     * (doubles carry 15 to 17; evidence records keep all 17, store/evidence.h) */
    char *s = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY |
                                   JSON_REAL_PRECISION(15));
    json_decref(body);
    if (!s) {
        static const char fallback[] = "{\"title\":\"Internal Server Error\",\"status\":500}";
        tg_resp_bytes(req, 500, "application/problem+json", fallback, sizeof(fallback) - 1);
        return;
    }
    size_t len = strlen(s);
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, s, MHD_RESPMEM_MUST_FREE);
    const char *ct = status >= 400 ? "application/problem+json" : "application/json";
    resp_set(req, status, resp, ct, len);
}

void tg_resp_header(tg_req_t *req, const char *name, const char *value)
{
    if (req->response)
        MHD_add_response_header(req->response, name, value);
}
