/* The resolver's state and small helpers; private to resolve.c (identity,
 * profile, policy, compute) and resolve_run.c (runtime, run, storage,
 * execution, resilience, metrics). */
#ifndef TG_TAUYAML_RESOLVE_INT_H
#define TG_TAUYAML_RESOLVE_INT_H

#include <jansson.h>
#include <string.h>

#include "tauyaml/path.h"
#include "tauyaml/resolve.h"

typedef struct tg_tauyaml_rs_s {
    const tg_tauyaml_schema_t *schema;
    const json_t *root;
    const tg_tauyaml_facts_t *f;
    const json_t *ctx;
    const json_t *ws;
    const json_t *prof; /* selected profile or NULL */
    const char *prof_name;
    const char *ws_name;
    tg_tauyaml_diag_t *d;
    json_t *out;
    tg_tauyaml_prov_t *prov;
    const json_t *managed; /* the managed manifest's section (tauyaml/managed.h), or NULL */
    const char *last_name; /* the section rs_sect returned last, and its object */
    json_t *last_sect;
} tg_tauyaml_rs_t;

/* --- small helpers -------------------------------------------------------------------------- */

static inline const char *rs_str(const json_t *o, const char *k)
{
    const json_t *v = json_is_object(o) ? json_object_get(o, k) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static inline int rs_in(const json_t *arr, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
            return 1;
    return 0;
}

/* Values are put a section at a time: remember the last one instead of
 * looking it up for every field. */
static inline json_t *rs_sect(tg_tauyaml_rs_t *r, const char *name)
{
    /* Callers pass literals: the same address is the common hit. */
    if (r->last_name && (r->last_name == name || strcmp(r->last_name, name) == 0))
        return r->last_sect;
    json_t *s = json_object_get(r->out, name);
    if (!s) {
        s = json_object();
        json_object_set_new(r->out, name, s);
    }
    r->last_name = name;
    r->last_sect = s;
    return s;
}

/* Set out[sect][key] = val (stolen; NULL -> null) and record where it came from. */
static inline void rs_put(tg_tauyaml_rs_t *r, const char *sect, const char *key, json_t *val,
                          const char *src)
{
    json_t *dst = sect ? rs_sect(r, sect) : r->out;
    json_object_set_new_nocheck(dst, key, val ? val : json_null());
    if (val && src && !json_is_null(val))
        tg_tauyaml_prov_set(r->prov, sect, key, src);
}

static inline const json_t *rs_spec(tg_tauyaml_rs_t *r, const char *sect, const char *key)
{
    return tg_tauyaml_get(r->root, sect, key);
}

static inline const json_t *rs_default(tg_tauyaml_rs_t *r, const char *sect, const char *key)
{
    char path[160];
    tg_tauyaml_path_field(path, sizeof(path), sect, key);
    return tg_tauyaml_schema_default(r->schema, path);
}

/* Resolved values share the nodes of the spec, the context and the schema,
 * containers included, instead of copying them: nothing modifies a value of
 * a resolved config in place (the resolver fills containers it made itself;
 * policy replaces values in sections it made or copied; rendering and
 * storing only read), and jansson's reference counts are atomic, so the
 * schema's defaults and a cached context's values may be held by requests
 * on several threads at once. */
static inline json_t *rs_ref(const json_t *v)
{
    return json_incref((json_t *)v);
}

/* The string `s` for the resolved config: `holder` itself (shared, as rs_ref)
 * when s is its value, else a new copy. Callers pass the node they read s
 * from, so most strings are shared instead of allocated twice. */
static inline json_t *rs_text(const json_t *holder, const char *s)
{
    if (!s)
        return NULL;
    if (json_is_string(holder) && json_string_value(holder) == s &&
        json_string_length(holder) == strlen(s))
        return rs_ref(holder);
    return json_string(s);
}

/* rs_text for a fact read from the spec at `path` ("key" or "sect.key"). */
static inline json_t *rs_spec_text(tg_tauyaml_rs_t *r, const char *path, const char *s)
{
    const char *dot = path ? strchr(path, '.') : NULL;
    char sect[32];
    if (!dot || (size_t)(dot - path) >= sizeof(sect))
        return rs_text(path ? tg_tauyaml_get(r->root, NULL, path) : NULL, s);
    memcpy(sect, path, (size_t)(dot - path));
    sect[dot - path] = '\0';
    return rs_text(tg_tauyaml_get(r->root, sect, dot + 1), s);
}

/* spec -> profile[pkey] -> workspace[wkey] -> schema default. */
static inline void rs_pick(tg_tauyaml_rs_t *r, const char *sect, const char *key, const char *pkey,
                           const char *wkey)
{
    const json_t *v;
    if ((v = rs_spec(r, sect, key)))
        rs_put(r, sect, key, rs_ref(v), "spec");
    else if (pkey && r->prof && (v = json_object_get(r->prof, pkey)) && !json_is_null(v))
        rs_put(r, sect, key, rs_ref(v), "profile");
    else if (wkey && (v = json_object_get(r->ws, wkey)) && !json_is_null(v))
        rs_put(r, sect, key, rs_ref(v), "workspace");
    else if ((v = rs_default(r, sect, key)))
        rs_put(r, sect, key, rs_ref(v), "default");
    else
        rs_put(r, sect, key, NULL, NULL);
}

/* The sections resolve_run.c resolves, in this order after compute (storage
 * after compute). */
void tg_tauyaml_resolve_runtime(tg_tauyaml_rs_t *r);
void tg_tauyaml_resolve_run(tg_tauyaml_rs_t *r);
void tg_tauyaml_resolve_storage(tg_tauyaml_rs_t *r);
void tg_tauyaml_resolve_execution(tg_tauyaml_rs_t *r);
void tg_tauyaml_resolve_resilience(tg_tauyaml_rs_t *r);
void tg_tauyaml_resolve_metrics(tg_tauyaml_rs_t *r);
/* The PVCs a managed manifest mounts must be the workspace's. */
void tg_tauyaml_resolve_managed_pvcs(tg_tauyaml_rs_t *r);

#endif
