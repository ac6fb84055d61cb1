/* OpenAPI v3 documents. */
#include "openapi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "rtypes.h"
#include "util.h"
#include "yamljson.h"

/* Every group/version kubesim serves. The saved 1.32 documents are served
 * verbatim; /work/shared has none for apps, policy and rbac, so those are
 * generated from the type table like the CRD groups. */
static const struct {
    const char *path; /* under /openapi/v3/ */
    const char *file; /* saved document relative to the schema dir, or NULL */
} docs[] = {
    {"api/v1", "kubernetes-v1.32/api__v1_openapi.json"},
    {"apis/apps/v1", NULL},
    {"apis/batch/v1", "kubernetes-v1.32/apis__batch__v1_openapi.json"},
    {"apis/policy/v1", NULL},
    {"apis/rbac.authorization.k8s.io/v1", NULL},
    {"apis/coordination.k8s.io/v1", NULL},
    {"apis/ray.io/v1", NULL},
    {"apis/kueue.x-k8s.io/v1beta1", NULL},
};
#define KS_NDOCS (sizeof(docs) / sizeof(docs[0]))

static pthread_mutex_t g_olock = PTHREAD_MUTEX_INITIALIZER;
static json_t *g_crd[KS_RT_COUNT]; /* whole CRD documents */
static int g_crd_tried[KS_RT_COUNT];
static char *g_doc[KS_NDOCS]; /* loaded or generated text, built on first use */
static size_t g_doc_len[KS_NDOCS];

/* Load a CRD (lock held). */
static json_t *crd_load(int rt)
{
    const ks_rtype_t *t = ks_rtype(rt);
    if (!t->crd_file)
        return NULL;
    if (!g_crd_tried[rt]) {
        g_crd_tried[rt] = 1;
        char path[2048], err[256];
        size_t len = 0;
        snprintf(path, sizeof(path), "%s/%s", ks_cfg.schemas_dir, t->crd_file);
        char *text = ks_read_file(path, &len);
        if (text) {
            g_crd[rt] = ks_yaml_to_json(text, len, err, sizeof(err));
            free(text);
        }
    }
    return g_crd[rt];
}

static json_t *crd_version(int rt)
{
    json_t *crd = crd_load(rt);
    size_t i;
    json_t *v;
    json_array_foreach(ks_jget(crd, "spec.versions"), i, v)
    {
        if (ks_streq(json_string_value(json_object_get(v, "name")), ks_rtype(rt)->version))
            return v;
    }
    return NULL;
}

json_t *ks_openapi_crd_schema(int rt)
{
    pthread_mutex_lock(&g_olock);
    json_t *s = ks_jget(crd_version(rt), "schema.openAPIV3Schema");
    pthread_mutex_unlock(&g_olock);
    return s;
}

json_t *ks_openapi_crd_columns(int rt)
{
    pthread_mutex_lock(&g_olock);
    json_t *c = ks_jget(crd_version(rt), "additionalPrinterColumns");
    pthread_mutex_unlock(&g_olock);
    return c;
}

/* "kueue.x-k8s.io" -> "io.x-k8s.kueue", the way Kubernetes names schemas. */
static void reverse_group(const char *g, char *out, size_t n)
{
    char parts[8][64];
    int np = 0;
    const char *p = g;
    while (*p && np < 8) {
        const char *d = strchr(p, '.');
        size_t l = d ? (size_t)(d - p) : strlen(p);
        if (l >= sizeof(parts[0]))
            l = sizeof(parts[0]) - 1;
        memcpy(parts[np], p, l);
        parts[np][l] = '\0';
        np++;
        if (!d)
            break;
        p = d + 1;
    }
    out[0] = '\0';
    size_t o = 0;
    for (int i = np - 1; i >= 0; i--) {
        int w = snprintf(out + o, n - o, "%s%s", i == np - 1 ? "" : ".", parts[i]);
        if (w < 0 || (size_t)w >= n - o)
            break;
        o += (size_t)w;
    }
}

/* The component name Kubernetes gives a kind's schema:
 * io.k8s.api.apps.v1.Deployment, io.x-k8s.kueue.v1beta1.Workload. */
static void schema_name(const ks_rtype_t *rt, char *out, size_t n)
{
    char rg[128], first[64];
    if (rt->crd_file) {
        reverse_group(rt->group, rg, sizeof(rg));
        snprintf(out, n, "%s.%s.%s", rg, rt->version, rt->kind);
        return;
    }
    ks_strlcpy(first, rt->group, sizeof(first));
    char *dot = strchr(first, '.');
    if (dot)
        *dot = '\0';
    snprintf(out, n, "io.k8s.api.%s.%s.%s", first, rt->version, rt->kind);
}

/* A built-in kind without a saved schema: only the envelope is described.
 * Nothing reads more: validation is server-side and kubectl computes
 * strategic merge patches from its compiled-in types. */
static json_t *loose_schema(const ks_rtype_t *rt)
{
    return json_pack("{s:s,s:s,s:{s:{s:s},s:{s:s},s:{s:s}},s:b}", "description", rt->kind, "type",
                     "object", "properties", "apiVersion", "type", "string", "kind", "type",
                     "string", "metadata", "type", "object", "x-kubernetes-preserve-unknown-fields",
                     1);
}

static json_t *param(const char *name, const char *desc)
{
    return json_pack("{s:s,s:s,s:s,s:{s:s},s:b}", "name", name, "in", "query", "description", desc,
                     "schema", "type", "string", "uniqueItems", 1);
}

static json_t *op(const char *verb, const ks_rtype_t *rt, const char *ref, int patch)
{
    json_t *params = json_array();
    json_array_append_new(params, param("dryRun", "dry run"));
    json_array_append_new(params, param("fieldManager", "field manager"));
    json_array_append_new(params, param("fieldValidation", "fieldValidation instructs the server "
                                                           "on how to handle objects in the "
                                                           "request containing unknown or "
                                                           "duplicate fields."));
    if (patch)
        json_array_append_new(params,
                              json_pack("{s:s,s:s,s:{s:s},s:b}", "name", "force", "in", "query",
                                        "schema", "type", "boolean", "uniqueItems", 1));
    json_t *body_schema = json_pack("{s:s}", "$ref", ref);
    json_t *content = json_object();
    /* No strategic-merge-patch+json: CRs do not take it, and for generated
     * built-in documents it makes kubectl use its compiled-in patch
     * metadata instead of the loose schema. */
    if (patch) {
        json_object_set_new(content, "application/json-patch+json",
                            json_pack("{s:{s:s}}", "schema", "type", "object"));
        json_object_set_new(content, "application/merge-patch+json",
                            json_pack("{s:{s:s}}", "schema", "type", "object"));
        json_object_set_new(content, "application/apply-patch+yaml",
                            json_pack("{s:{s:s}}", "schema", "type", "object"));
        json_decref(body_schema);
    } else {
        json_object_set_new(content, "application/json", json_pack("{s:o}", "schema", body_schema));
    }
    char opid[160];
    snprintf(opid, sizeof(opid), "%s%s", verb, rt->kind);
    return json_pack("{s:s,s:o,s:{s:o},s:{s:{s:s,s:{s:{s:{s:s}}}}},s:s,s:{s:s,s:s,s:s}}",
                     "operationId", opid, "parameters", params, "requestBody", "content", content,
                     "responses", "200", "description", "OK", "content", "application/json",
                     "schema", "$ref", ref, "x-kubernetes-action", verb,
                     "x-kubernetes-group-version-kind", "group", rt->group, "version", rt->version,
                     "kind", rt->kind);
}

/* Build the document for one group/version from the type table (lock held). */
static char *gen_doc(const char *group, const char *version, size_t *len)
{
    json_t *paths = json_object();
    json_t *schemas = json_object();
    int crd = 0;
    for (int i = 0; i < KS_RT_COUNT; i++) {
        const ks_rtype_t *rt = ks_rtype(i);
        if (strcmp(rt->group, group) || strcmp(rt->version, version))
            continue;
        crd = rt->crd_file != NULL;
        char sname[256], ref[300], item[400], coll[300];
        schema_name(rt, sname, sizeof(sname));
        snprintf(ref, sizeof(ref), "#/components/schemas/%s", sname);
        json_t *schema = crd ? ks_jget(crd_version(i), "schema.openAPIV3Schema") : NULL;
        json_t *sc = schema ? json_deep_copy(schema) : loose_schema(rt);
        json_object_set_new(
            sc, "x-kubernetes-group-version-kind",
            json_pack("[{s:s,s:s,s:s}]", "group", group, "version", version, "kind", rt->kind));
        json_object_set_new(schemas, sname, sc);
        if (rt->namespaced) {
            snprintf(coll, sizeof(coll), "/apis/%s/%s/namespaces/{namespace}/%s", group, version,
                     rt->resource);
        } else {
            snprintf(coll, sizeof(coll), "/apis/%s/%s/%s", group, version, rt->resource);
        }
        snprintf(item, sizeof(item), "%s/{name}", coll);
        json_object_set_new(paths, coll, json_pack("{s:o}", "post", op("post", rt, ref, 0)));
        json_object_set_new(
            paths, item,
            json_pack("{s:o,s:o}", "put", op("put", rt, ref, 0), "patch", op("patch", rt, ref, 1)));
        if (rt->has_status) {
            char st[420];
            snprintf(st, sizeof(st), "%s/status", item);
            json_object_set_new(paths, st,
                                json_pack("{s:o,s:o}", "put", op("put", rt, ref, 0), "patch",
                                          op("patch", rt, ref, 1)));
        }
    }
    json_t *doc =
        json_pack("{s:s,s:{s:s,s:s},s:o,s:{s:o}}", "openapi", "3.0.0", "info", "title",
                  crd ? "Kubernetes CRD Swagger" : "Kubernetes", "version",
                  crd ? "v0.1.0" : "v1.32.5", "paths", paths, "components", "schemas", schemas);
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    *len = s ? strlen(s) : 0;
    return s;
}

/* Load or generate document i (lock held); NULL when a saved file is missing. */
static const char *doc_text(size_t i)
{
    if (g_doc[i])
        return g_doc[i];
    if (docs[i].file) {
        char path[2048];
        snprintf(path, sizeof(path), "%s/%s", ks_cfg.schemas_dir, docs[i].file);
        g_doc[i] = ks_read_file(path, &g_doc_len[i]);
        return g_doc[i];
    }
    /* "apis/<group>/<version>" */
    char group[128];
    const char *g = docs[i].path + 5, *slash = strchr(g, '/');
    size_t gl = (size_t)(slash - g);
    if (gl >= sizeof(group))
        return NULL;
    memcpy(group, g, gl);
    group[gl] = '\0';
    g_doc[i] = gen_doc(group, slash + 1, &g_doc_len[i]);
    return g_doc[i];
}

void ks_openapi_serve(ks_req_t *r)
{
    const char *p = r->path;
    if (!strcmp(p, "/openapi/v3") || !strcmp(p, "/openapi/v3/")) {
        json_t *paths = json_object();
        for (size_t i = 0; i < KS_NDOCS; i++) {
            char url[160];
            snprintf(url, sizeof(url), "/openapi/v3/%s?hash=KS%zu0000", docs[i].path, i);
            json_object_set_new(paths, docs[i].path, json_pack("{s:s}", "serverRelativeURL", url));
        }
        ks_reply_json(r, 200, json_pack("{s:o}", "paths", paths));
        return;
    }
    for (size_t i = 0; i < KS_NDOCS; i++) {
        if (strncmp(p, "/openapi/v3/", 12) || strcmp(p + 12, docs[i].path))
            continue;
        pthread_mutex_lock(&g_olock);
        const char *text = doc_text(i);
        if (text)
            ks_reply_raw(r, 200, "application/json", text, g_doc_len[i]);
        pthread_mutex_unlock(&g_olock);
        if (text)
            return;
        break; /* a saved document is missing: as if not served */
    }
    ks_reply_status(r, 404, "NotFound", "the server could not find the requested resource", NULL);
}

void ks_openapi_free(void)
{
    for (int i = 0; i < KS_RT_COUNT; i++) {
        json_decref(g_crd[i]);
        g_crd[i] = NULL;
    }
    for (size_t i = 0; i < KS_NDOCS; i++)
        TG_FREE_NULL(g_doc[i]);
}
