/* Shared helpers for the spec/render unit tests (header-only: every
 * tests/unit/test_*.c is its own binary). Paths are relative to the repo root,
 * where `make test-unit` runs the tests. */
#ifndef TG_TAUYAML_TEST_UTIL_H
#define TG_TAUYAML_TEST_UTIL_H

#include <dirent.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
/* cmocka needs these first */
#include <setjmp.h>
#include <cmocka.h>

#include "submit/pipeline.h"
#include "tauyaml/schema.h"

static tg_tauyaml_schema_t *tu_schema;

static inline const char *tu_schema_path(void)
{
    const char *p = getenv("TAUGATE_SCHEMA");
    return p && *p ? p : "schema/tau.schema.json";
}

static inline const char *tu_shared(void)
{
    const char *p = getenv("TAUGATE_SHARED");
    return p && *p ? p : "../shared";
}

static inline int tu_setup(void **state)
{
    (void)state;
    char err[256];
    if (!tu_schema)
        tu_schema = tg_tauyaml_schema_load_file(tu_schema_path(), err, sizeof(err));
    if (!tu_schema)
        fprintf(stderr, "cannot load %s: %s\n", tu_schema_path(), err);
    return tu_schema ? 0 : -1;
}

static inline int tu_teardown(void **state)
{
    (void)state;
    tg_tauyaml_schema_free(tu_schema);
    tu_schema = NULL;
    return 0;
}

/* Whole file into a new NUL-terminated buffer (free()); NULL when missing. */
static inline char *tu_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap + 1);
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static inline json_t *tu_load_json(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fprintf(stderr, "%s: %s\n", path, e.text);
    return j;
}

/* A set of submission files we own. */
typedef struct tu_files_s {
    tg_tauyaml_file_t v[32];
    char *names[32];
    unsigned char *data[32];
    tg_tauyaml_files_t set;
} tu_files_t;

static inline void tu_files_init(tu_files_t *f)
{
    memset(f, 0, sizeof(*f));
    f->set.v = f->v;
}

static inline void tu_files_add(tu_files_t *f, const char *name, const void *data, size_t len)
{
    size_t i = f->set.n++;
    f->names[i] = strdup(name);
    f->data[i] = malloc(len ? len : 1);
    if (len)
        memcpy(f->data[i], data, len);
    f->v[i].name = f->names[i];
    f->v[i].data = f->data[i];
    f->v[i].len = len;
}

static inline void tu_files_add_str(tu_files_t *f, const char *name, const char *text)
{
    tu_files_add(f, name, text, strlen(text));
}

/* Every regular file of a directory (sorted by name), if the directory exists. */
static inline int tu_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline void tu_files_add_dir(tu_files_t *f, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char *names[32];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 32)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof(char *), tu_name_cmp);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        size_t len;
        char *data = tu_slurp(path, &len);
        if (data)
            tu_files_add(f, names[i], data, len);
        free(data);
        free(names[i]);
    }
}

static inline void tu_files_clean(tu_files_t *f)
{
    for (size_t i = 0; i < f->set.n; i++) {
        free(f->names[i]);
        free(f->data[i]);
    }
    f->set.n = 0;
}

/* Run the pipeline with a context object (borrowed). */
static inline tg_rc_e tu_run_ctx(const char *yaml, size_t len, const json_t *ctx,
                                 const tg_tauyaml_files_t *files, const char *run_id, json_t **out)
{
    tg_tauyaml_limits_t lim;
    tg_tauyaml_limits_default(&lim);
    tg_submit_request_t req = {.yaml = yaml,
                               .yaml_len = len,
                               .files = files,
                               .context = ctx,
                               .run_id = run_id,
                               .attempt = 1};
    return tg_submit_pipeline(tu_schema, &lim, &req, out);
}

/* Run the pipeline on `yaml` in the context file `ctx_path` (default ws-ray). */
static inline tg_rc_e tu_run(const char *yaml, size_t len, const char *ctx_path,
                             const tg_tauyaml_files_t *files, const char *run_id, json_t **out)
{
    json_t *ctx = tu_load_json(ctx_path ? ctx_path : "tests/fixtures/context/ws-ray.json");
    assert_non_null(ctx);
    tg_rc_e rc = tu_run_ctx(yaml, len, ctx, files, run_id, out);
    json_decref(ctx);
    return rc;
}

/* Validate-only run of a YAML string with a default script file set. */
static inline tg_rc_e tu_check(const char *yaml, json_t **out)
{
    tu_files_t f;
    tu_files_init(&f);
    tu_files_add_str(&f, "train.py", "print('train')\n");
    tu_files_add_str(&f, "train.sh", "#!/bin/sh\necho train\n");
    tg_rc_e rc = tu_run(yaml, strlen(yaml), NULL, &f.set, NULL, out);
    tu_files_clean(&f);
    return rc;
}

/* The first error whose path equals `path` (and whose line equals `line`
 * unless 0); fails the test with the whole error list otherwise. */
static inline const json_t *tu_find_error_(const json_t *out, const char *key, const char *path,
                                           unsigned line, const char *file, int ln)
{
    const json_t *errs = json_object_get(out, key);
    size_t i;
    const json_t *e;
    json_array_foreach(errs, i, e) {
        const char *p = json_string_value(json_object_get(e, "path"));
        unsigned l = (unsigned)json_integer_value(json_object_get(e, "line"));
        if (p && strcmp(p, path) == 0 && (line == 0 || l == line))
            return e;
    }
    char *dump = json_dumps(out, JSON_INDENT(1));
    fprintf(stderr, "%s:%d: no %s at path \"%s\" line %u in:\n%s\n", file, ln, key, path, line,
            dump);
    free(dump);
    fail();
    return NULL;
}

#define tu_find_error(out, path, line)                                                             \
    tu_find_error_((out), "errors", (path), (line), __FILE__, __LINE__)
#define tu_find_warning(out, path, line)                                                           \
    tu_find_error_((out), "warnings", (path), (line), __FILE__, __LINE__)

static inline const char *tu_msg(const json_t *e)
{
    return json_string_value(json_object_get(e, "message"));
}

static inline void tu_assert_contains_(const char *hay, const char *needle, const char *file,
                                       int ln)
{
    if (!hay || !strstr(hay, needle)) {
        fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", file, ln, hay ? hay : "(null)",
                needle);
        fail();
    }
}
#define tu_assert_contains(hay, needle) tu_assert_contains_((hay), (needle), __FILE__, __LINE__)

/* Follow a path of object keys / array indexes ("spec", "template", "#0", ...). */
static inline const json_t *tu_at(const json_t *v, ...)
{
    va_list ap;
    va_start(ap, v);
    const char *k;
    while (v && (k = va_arg(ap, const char *)) != NULL) {
        if (k[0] == '#')
            v = json_array_get(v, (size_t)atoi(k + 1));
        else
            v = json_object_get(v, k);
    }
    va_end(ap);
    return v;
}

static inline const char *tu_env(const json_t *container, const char *name)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(container, "env"), i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n && strcmp(n, name) == 0)
            return json_string_value(json_object_get(e, "value"));
    }
    return NULL;
}

/* The Job or RayJob among a pipeline answer's manifests, or NULL. */
static inline const json_t *tu_workload(const json_t *out)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(out, "manifests"), i, m) {
        const char *k = json_string_value(json_object_get(m, "kind"));
        if (k && (strcmp(k, "Job") == 0 || strcmp(k, "RayJob") == 0))
            return m;
    }
    return NULL;
}

static inline size_t tu_nerrors(const json_t *out)
{
    return json_array_size(json_object_get(out, "errors"));
}

static inline void tu_dump_errors(const json_t *out)
{
    char *d = json_dumps(json_object_get(out, "errors"), JSON_INDENT(1));
    fprintf(stderr, "%s\n", d);
    free(d);
}

#endif
