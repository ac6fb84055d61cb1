/* GET /v1/openapi.yaml and /v1/openapi.json: the bundled contract, served
 * from memory (see openapi.h). */
#include "api/openapi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/app.h"
#include "api/etag.h"
#include "api/openapi_bundle.h"
#include "api/yaml_out.h"
#include "http/problem.h"
#include "tauyaml/yaml_tree.h"

typedef struct {
    char *data;
    size_t len;
    char etag[TG_ETAG_LEN];
} openapi_form_t;

struct tg_api_openapi_s {
    openapi_form_t yaml, json;
};

/* The file's bytes (NUL-terminated). */
static tg_rc_e openapi_read(const char *path, char **data, size_t *len, char *err, size_t errlen)
{
    tg_rc_e rc = TG_OK;
    FILE *f = fopen(path, "rb");
    *data = NULL;
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return TG_ENOTFOUND;
    }
    char *buf = tg_xmalloc(TG_OPENAPI_MAX_BYTES + 1);
    *len = fread(buf, 1, TG_OPENAPI_MAX_BYTES + 1, f);
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        rc = TG_EINTERNAL;
    } else if (*len > TG_OPENAPI_MAX_BYTES) {
        snprintf(err, errlen, "%s is larger than %u bytes", path, TG_OPENAPI_MAX_BYTES);
        rc = TG_ETOOLARGE;
    }
    fclose(f);
    if (rc != TG_OK) {
        free(buf);
        return rc;
    }
    buf[*len] = '\0';
    *data = buf;
    return TG_OK;
}

/* Parse the YAML text into a JSON object. */
static json_t *openapi_parse(const char *path, const char *text, size_t len, char *err,
                             size_t errlen)
{
    tg_tauyaml_limits_t lim;
    tg_tauyaml_limits_default(&lim);
    lim.max_doc_bytes = TG_OPENAPI_MAX_BYTES;
    lim.max_nodes = 1000000;
    lim.max_depth = 256;
    tg_tauyaml_doc_t doc;
    tg_tauyaml_diag_t d;
    tg_tauyaml_doc_init(&doc);
    tg_tauyaml_diag_init(&d, NULL, 8);
    json_t *root = NULL;
    if (tg_tauyaml_yaml_parse(text, len, &lim, &doc, &d) == TG_OK && doc.root) {
        root = json_incref(doc.root);
    } else {
        json_t *e0 = json_array_get(d.errors, 0);
        snprintf(err, errlen, "%s is not a YAML document: line %lld: %s", path,
                 (long long)json_integer_value(json_object_get(e0, "line")),
                 e0 ? json_string_value(json_object_get(e0, "message")) : "unreadable");
    }
    tg_tauyaml_diag_clean(&d);
    tg_tauyaml_doc_clean(&doc);
    return root;
}

static void openapi_form_set(openapi_form_t *f, char *data, size_t len)
{
    f->data = data;
    f->len = len;
    tg_etag_of(data, len, f->etag);
}

tg_rc_e tg_api_openapi_load(const char *path, tg_api_openapi_t **out, char *err, size_t errlen)
{
    *out = NULL;
    char *text = NULL, *yaml = NULL, *json = NULL;
    size_t len = 0, ylen = 0;
    json_t *doc = NULL;
    tg_rc_e rc = openapi_read(path, &text, &len, err, errlen);
    if (rc != TG_OK)
        return rc;
    doc = openapi_parse(path, text, len, err, errlen);
    rc = doc ? TG_OK : TG_EINVAL;
    if (rc == TG_OK) {
        char dir[1024];
        snprintf(dir, sizeof(dir), "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof(dir), ".");
        rc = tg_openapi_bundle(doc, dir, err, errlen);
    }
    if (rc == TG_OK) {
        yaml = tg_yaml_out(doc, &ylen);
        json = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!yaml || !json) {
            snprintf(err, errlen, "%s could not be written back as YAML and JSON", path);
            rc = TG_EINTERNAL;
        }
    }
    if (rc == TG_OK) {
        tg_api_openapi_t *d = tg_xcalloc(1, sizeof(*d));
        openapi_form_set(&d->yaml, yaml, ylen);
        openapi_form_set(&d->json, json, strlen(json));
        yaml = json = NULL;
        *out = d;
    }
    free(yaml);
    free(json);
    json_decref(doc);
    free(text);
    return rc;
}

void tg_api_openapi_free(tg_api_openapi_t *doc)
{
    if (!doc)
        return;
    free(doc->yaml.data);
    free(doc->json.data);
    free(doc);
}

/* `json`: the JSON form, else the YAML one. */
static void openapi_reply(tg_req_t *req, int json)
{
    const tg_app_t *app = tg_req_app(req);
    const tg_api_openapi_t *doc = app->openapi;
    if (!doc) {
        tg_problem(req, TG_EUNAVAILABLE, NULL, "the OpenAPI document was not loaded at start");
        return;
    }
    const openapi_form_t *f = json ? &doc->json : &doc->yaml;
    tg_resp_conditional(req, json ? "application/json" : "application/yaml", f->data, f->len,
                        f->etag, "no-cache");
}

void tg_api_openapi(tg_req_t *req)
{
    openapi_reply(req, 0);
}

void tg_api_openapi_json(tg_req_t *req)
{
    openapi_reply(req, 1);
}
