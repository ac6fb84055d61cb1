/* Inlining external schema files into an OpenAPI document (see
 * openapi_bundle.h). */
#include "api/openapi_bundle.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

#define BUNDLE_MAX_FILES 32
#define BUNDLE_MAX_DEPTH 128
#define BUNDLE_NAME_MAX  128

typedef struct {
    char path[1024]; /* as resolved from the document's folder */
    char prefix[BUNDLE_NAME_MAX];
    json_t *schema; /* the file, its refs rewritten */
    int root_used;
} bundle_file_t;

typedef struct {
    const char *base_dir;
    bundle_file_t files[BUNDLE_MAX_FILES];
    int nfiles;
    char *err;
    size_t errlen;
} bundle_t;

static tg_rc_e bundle_fail(bundle_t *b, tg_rc_e rc, const char *fmt, const char *what)
{
    snprintf(b->err, b->errlen, fmt, what);
    return rc;
}

/* "tau.schema.json" -> "TauSchema"; "my-api_types.json" -> "MyApiTypesSchema". */
static void bundle_prefix(const char *path, char *out, size_t outlen)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = 0;
    int up = 1;
    for (const char *p = base; *p && *p != '.' && n + 7 < outlen; p++) {
        if (!isalnum((unsigned char)*p)) {
            up = 1;
            continue;
        }
        out[n++] = up ? (char)toupper((unsigned char)*p) : *p;
        up = 0;
    }
    snprintf(out + n, outlen - n, "Schema");
}

/* The local reference for pointer `frag` ("" or "/$defs/x/...") of a file. */
static char *bundle_local_ref(bundle_file_t *f, const char *frag)
{
    tg_buf_t b;
    tg_buf_init(&b, 8192);
    tg_rc_e rc;
    if (!strncmp(frag, "/$defs/", 7)) {
        const char *name = frag + 7;
        size_t n = strcspn(name, "/");
        rc = tg_buf_printf(&b, "#/components/schemas/%s_%.*s%s", f->prefix, (int)n, name, name + n);
    } else {
        f->root_used = 1;
        rc = tg_buf_printf(&b, "#/components/schemas/%s%s", f->prefix,
                           strcmp(frag, "/") ? frag : "");
    }
    if (rc != TG_OK) {
        tg_buf_clean(&b);
        return NULL;
    }
    return tg_buf_steal(&b, NULL);
}

static tg_rc_e bundle_walk(bundle_t *b, json_t *node, const char *dir, bundle_file_t *self,
                           int depth);

/* The file a reference names (loaded and rewritten on first use). */
static tg_rc_e bundle_file(bundle_t *b, const char *dir, const char *file, bundle_file_t **out)
{
    if (file[0] == '/' || strstr(file, "://"))
        return bundle_fail(b, TG_EINVAL, "$ref %s: only relative file references are bundled",
                           file);
    char path[1024];
    const char *rel = !strncmp(file, "./", 2) ? file + 2 : file;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
        return bundle_fail(b, TG_EINVAL, "$ref %s: the path is too long", file);
    for (int i = 0; i < b->nfiles; i++)
        if (!strcmp(b->files[i].path, path)) {
            *out = &b->files[i];
            return TG_OK;
        }
    if (b->nfiles == BUNDLE_MAX_FILES)
        return bundle_fail(b, TG_EINVAL, "$ref %s: too many referenced files", file);
    json_error_t je;
    json_t *schema = json_load_file(path, 0, &je);
    if (!json_is_object(schema)) {
        json_decref(schema);
        return bundle_fail(b, TG_ENOTFOUND, "$ref %s: not a readable JSON object file", path);
    }
    bundle_file_t *f = &b->files[b->nfiles++];
    snprintf(f->path, sizeof(f->path), "%s", path);
    bundle_prefix(path, f->prefix, sizeof(f->prefix));
    f->schema = schema;
    f->root_used = 0;
    json_object_del(schema, "$id");
    json_object_del(schema, "$schema");
    char fdir[1024];
    snprintf(fdir, sizeof(fdir), "%s", path);
    char *slash = strrchr(fdir, '/');
    if (slash)
        *slash = '\0';
    *out = f;
    return bundle_walk(b, schema, fdir, f, 0);
}

/* Rewrite every $ref under node. `self`: the file node belongs to (NULL for
 * the document), whose own "#..." references go to its copied names. */
static tg_rc_e bundle_walk(bundle_t *b, json_t *node, const char *dir, bundle_file_t *self,
                           int depth)
{
    if (depth > BUNDLE_MAX_DEPTH)
        return bundle_fail(b, TG_EINVAL, "%s: nested too deeply", self ? self->path : "document");
    if (json_is_array(node)) {
        size_t i;
        json_t *x;
        json_array_foreach(node, i, x) {
            tg_rc_e rc = bundle_walk(b, x, dir, self, depth + 1);
            if (rc != TG_OK)
                return rc;
        }
        return TG_OK;
    }
    if (!json_is_object(node))
        return TG_OK;
    const char *ref = json_string_value(json_object_get(node, "$ref"));
    if (ref && (ref[0] != '#' || self)) {
        char file[1024];
        const char *hash = strchr(ref, '#');
        size_t flen = hash ? (size_t)(hash - ref) : strlen(ref);
        if (flen >= sizeof(file))
            return bundle_fail(b, TG_EINVAL, "$ref %s: too long", ref);
        memcpy(file, ref, flen);
        file[flen] = '\0';
        bundle_file_t *f = self;
        if (flen) {
            tg_rc_e rc = bundle_file(b, dir, file, &f);
            if (rc != TG_OK)
                return rc;
        }
        char *local = bundle_local_ref(f, hash ? hash + 1 : "");
        if (!local)
            return bundle_fail(b, TG_EINVAL, "$ref %s: too long", ref);
        json_object_set_new(node, "$ref", json_string(local));
        free(local);
    }
    const char *k;
    json_t *x;
    json_object_foreach(node, k, x) {
        tg_rc_e rc = bundle_walk(b, x, dir, self, depth + 1);
        if (rc != TG_OK)
            return rc;
    }
    return TG_OK;
}

static tg_rc_e bundle_add(bundle_t *b, json_t *schemas, const char *name, json_t *schema)
{
    if (json_object_get(schemas, name)) {
        json_decref(schema);
        return bundle_fail(b, TG_EINVAL,
                           "components.schemas.%s exists already; it cannot hold "
                           "a bundled schema file",
                           name);
    }
    json_object_set_new(schemas, name, schema);
    return TG_OK;
}

tg_rc_e tg_openapi_bundle(json_t *doc, const char *base_dir, char *err, size_t errlen)
{
    bundle_t b = {.base_dir = base_dir, .err = err, .errlen = errlen};
    tg_rc_e rc = bundle_walk(&b, doc, base_dir, NULL, 0);
    json_t *components = json_object_get(doc, "components");
    if (rc == TG_OK && b.nfiles && !json_is_object(components)) {
        components = json_object();
        json_object_set_new(doc, "components", components);
    }
    json_t *schemas = json_object_get(components, "schemas");
    if (rc == TG_OK && b.nfiles && !json_is_object(schemas)) {
        schemas = json_object();
        json_object_set_new(components, "schemas", schemas);
    }
    for (int i = 0; i < b.nfiles; i++) {
        bundle_file_t *f = &b.files[i];
        json_t *defs = json_incref(json_object_get(f->schema, "$defs"));
        json_object_del(f->schema, "$defs");
        const char *k;
        json_t *x;
        char name[2 * BUNDLE_NAME_MAX];
        json_object_foreach(defs, k, x) {
            snprintf(name, sizeof(name), "%s_%s", f->prefix, k);
            if (rc == TG_OK)
                rc = bundle_add(&b, schemas, name, json_incref(x));
        }
        json_decref(defs);
        if (rc == TG_OK && f->root_used)
            rc = bundle_add(&b, schemas, f->prefix, json_incref(f->schema));
        json_decref(f->schema);
    }
    return rc;
}
