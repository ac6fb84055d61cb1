/* Unknown keys of a managed workflow manifest, with "did you mean". */
#include "tauyaml/suggest.h"

#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "tauyaml/path.h"

/* Keys the managed manifest schema owns (TauGrid's managedPassthroughPaths):
 * legitimate in a manifest though the direct config has no such field. A
 * structured one (descend) still has its children checked. */
static const struct {
    const char *path;
    int descend;
} sg_passthrough[] = {
    {"eval", 0},
    {"artifacts", 0},
    {"research", 0},
    {"model", 0},
    {"resource_naming", 0},
    {"compute.cpus", 0},
    {"compute.cpu_limit", 0},
    {"compute.memory", 0},
    {"compute.memory_limit", 0},
    {"compute.worker_cpus", 0},
    {"compute.worker_cpu_limit", 0},
    {"compute.worker_memory", 0},
    {"compute.worker_memory_limit", 0},
    {"runtime.rdma", 1},
    {"runtime.rdma.enabled", 0},
    {"runtime.rdma.resource_name", 0},
    {"runtime.rdma.count", 0},
    {"runtime.rdma.shm_size", 0},
    {"storage.mounts", 1},
    {"storage.mounts.name", 0},
    {"storage.mounts.mountPath", 0},
    {"storage.mounts.pvc", 0},
    {"storage.mounts.readOnly", 0},
};

/* -1: not a pass-through key; else whether to descend. */
static int sg_passthrough_of(const char *path)
{
    for (size_t i = 0; i < TG_ARRAY_LEN(sg_passthrough); i++)
        if (strcmp(sg_passthrough[i].path, path) == 0)
            return sg_passthrough[i].descend;
    return -1;
}

typedef struct sg_known_s {
    json_t *descend; /* object: path -> true (structure) / false (leaf) */
    json_t *fields;  /* array of every path, the suggestion candidates */
} sg_known_t;

static void sg_collect(void *arg, const char *path, int descend)
{
    sg_known_t *k = arg;
    json_object_set_new(k->descend, path, json_boolean(descend));
    json_array_append_new(k->fields, json_string(path));
}

typedef struct sg_walk_s {
    const sg_known_t *known;
    json_t *found;         /* object: path -> [children...] (first sighting wins) */
    tg_tauyaml_path_t pos; /* the document path of the current node, for positions */
} sg_walk_t;

static void sg_node(sg_walk_t *w, const json_t *node, const char *prefix);

static void sg_map(sg_walk_t *w, const json_t *map, const char *prefix)
{
    const char *key;
    json_t *val;
    size_t plen = strlen(prefix);
    json_object_foreach((json_t *)map, key, val) {
        if (!*key)
            continue;
        size_t klen = strlen(key);
        char *path = tg_xmalloc(plen + klen + 2);
        if (plen) {
            memcpy(path, prefix, plen);
            path[plen] = '.';
            memcpy(path + plen + 1, key, klen + 1);
        } else {
            memcpy(path, key, klen + 1);
        }
        size_t old = tg_tauyaml_path_push_key(&w->pos, key, klen);
        int pt = sg_passthrough_of(path);
        const json_t *kd = json_object_get(w->known->descend, path);
        if (pt >= 0) {
            if (pt)
                sg_node(w, val, path);
        } else if (!kd) {
            if (!json_object_get(w->found, path)) {
                json_t *rec = json_object();
                json_t *children = json_array();
                const char *ck;
                json_t *cv;
                if (json_is_object(val))
                    json_object_foreach(val, ck, cv)
                        if (*ck)
                            json_array_append_new(children, json_string(ck));
                json_object_set_new(rec, "children", children);
                json_object_set_new(rec, "at", json_string(tg_tauyaml_path_str(&w->pos)));
                json_object_set_new(w->found, path, rec);
            }
        } else if (json_is_true(kd)) {
            sg_node(w, val, path);
        }
        tg_tauyaml_path_pop(&w->pos, old);
        free(path);
    }
}

/* A mapping, or every element of a list of mappings: list elements share
 * their parent's path (the schema has no name for an index). */
static void sg_node(sg_walk_t *w, const json_t *node, const char *prefix)
{
    if (json_is_object(node)) {
        sg_map(w, node, prefix);
    } else if (json_is_array(node)) {
        size_t i;
        const json_t *item;
        json_array_foreach(node, i, item) {
            size_t old = tg_tauyaml_path_push_index(&w->pos, i);
            sg_node(w, item, prefix);
            tg_tauyaml_path_pop(&w->pos, old);
        }
    }
}

static size_t sg_levenshtein(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la == 0)
        return lb;
    if (lb == 0)
        return la;
    size_t *prev = tg_xmalloc((lb + 1) * sizeof(*prev));
    size_t *curr = tg_xmalloc((lb + 1) * sizeof(*curr));
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        curr[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t m = curr[j - 1] + 1;
            if (prev[j] + 1 < m)
                m = prev[j] + 1;
            if (prev[j - 1] + cost < m)
                m = prev[j - 1] + cost;
            curr[j] = m;
        }
        size_t *t = prev;
        prev = curr;
        curr = t;
    }
    size_t r = prev[lb];
    free(prev);
    free(curr);
    return r;
}

static const char *sg_leaf(const char *path, size_t *depth)
{
    *depth = 0;
    const char *leaf = path;
    for (const char *p = path; *p; p++)
        if (*p == '.') {
            (*depth)++;
            leaf = p + 1;
        }
    return leaf;
}

const char *tg_tauyaml_suggest_field(const json_t *fields, const char *path)
{
    size_t depth;
    const char *leaf = sg_leaf(path, &depth);
    const char *best = NULL;
    size_t best_d = 0, best_pd = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(fields, i, v) {
        const char *cand = json_string_value(v);
        size_t cdepth;
        const char *cleaf = sg_leaf(cand, &cdepth);
        size_t pd = sg_levenshtein(path, cand), d = pd;
        /* A wrong parent with the right leaf, at the same depth only. */
        if (cdepth == depth) {
            size_t ld = sg_levenshtein(leaf, cleaf);
            if (ld < d)
                d = ld;
        }
        if (!best || d < best_d || (d == best_d && pd < best_pd)) {
            best = cand;
            best_d = d;
            best_pd = pd;
        }
    }
    /* Closer than "a third of the name is wrong" (2..6 edits). */
    size_t limit = strlen(leaf) / 3;
    if (limit < 2)
        limit = 2;
    if (limit > 6)
        limit = 6;
    return best && best_d <= limit ? best : NULL;
}

/* Infer the meant parent from the children: only when every child names
 * the same one. */
static const char *sg_parent_from_children(const json_t *fields, const char *path,
                                           const json_t *children, char *out, size_t n)
{
    size_t count = json_array_size(children), agree = 0;
    out[0] = '\0';
    size_t i;
    const json_t *c;
    json_array_foreach(children, i, c) {
        const char *ck = json_string_value(c);
        size_t pl0 = strlen(path), cl = strlen(ck);
        char *cp = tg_xmalloc(pl0 + cl + 2);
        memcpy(cp, path, pl0);
        cp[pl0] = '.';
        memcpy(cp + pl0 + 1, ck, cl + 1);
        const char *s = tg_tauyaml_suggest_field(fields, cp);
        free(cp);
        const char *dot = s ? strrchr(s, '.') : NULL;
        if (!dot)
            continue;
        size_t pl = (size_t)(dot - s);
        if (pl + 1 > n)
            continue;
        if (!out[0]) {
            memcpy(out, s, pl);
            out[pl] = '\0';
        } else if (strlen(out) != pl || strncmp(out, s, pl) != 0) {
            return NULL;
        }
        agree++;
    }
    return count > 0 && agree == count ? out : NULL;
}

void tg_tauyaml_suggest_unknown_keys(const tg_tauyaml_schema_t *schema, const json_t *root,
                                     tg_tauyaml_diag_t *diag)
{
    sg_known_t known = {.descend = json_object(), .fields = json_array()};
    tg_tauyaml_schema_paths(schema, sg_collect, &known);
    sg_walk_t w = {.known = &known, .found = json_object()};
    tg_tauyaml_path_init(&w.pos);
    sg_node(&w, root, "");
    /* path order, as TauGrid sorts them */
    size_t n = json_object_size(w.found);
    const char **paths = tg_xmalloc((n ? n : 1) * sizeof(*paths));
    size_t k = 0;
    const char *p;
    json_t *rec;
    json_object_foreach(w.found, p, rec)
        paths[k++] = p;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(paths[j - 1], paths[j]) > 0; j--) {
            const char *t = paths[j - 1];
            paths[j - 1] = paths[j];
            paths[j] = t;
        }
    for (size_t i = 0; i < n; i++) {
        rec = json_object_get(w.found, paths[i]);
        const char *at = json_string_value(json_object_get(rec, "at"));
        char parent[256];
        const char *s = tg_tauyaml_suggest_field(known.fields, paths[i]);
        if (!s)
            s = sg_parent_from_children(known.fields, paths[i], json_object_get(rec, "children"),
                                        parent, sizeof(parent));
        tg_tauyaml_qv_t q, q2;
        if (s)
            tg_tauyaml_diag_warn(diag, at, TG_AT_KEY,
                                 "unknown config key \"%s\" in tau.yaml (ignored); did you mean "
                                 "\"%s\"?",
                                 tg_tauyaml_qv(&q, paths[i]), tg_tauyaml_qv(&q2, s));
        else
            tg_tauyaml_diag_warn(diag, at, TG_AT_KEY,
                                 "unknown config key \"%s\" in tau.yaml (ignored)",
                                 tg_tauyaml_qv(&q, paths[i]));
    }
    free(paths);
    tg_tauyaml_path_clean(&w.pos);
    json_decref(w.found);
    json_decref(known.descend);
    json_decref(known.fields);
}
