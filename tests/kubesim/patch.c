/* PATCH bodies. */
#include "patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void ks_merge_patch(json_t *target, json_t *patch)
{
    const char *k;
    json_t *v;
    json_object_foreach(patch, k, v)
    {
        if (json_is_null(v)) {
            json_object_del(target, k);
        } else if (json_is_object(v)) {
            json_t *t = json_object_get(target, k);
            if (!json_is_object(t)) {
                t = json_object();
                json_object_set_new(target, k, t);
            }
            ks_merge_patch(t, v);
        } else {
            json_object_set_new(target, k, json_deep_copy(v));
        }
    }
}

/* Merge keys from the core and batch OpenAPI x-kubernetes-patch-merge-key
 * annotations that matter for pods and jobs. */
static const char *merge_key(const char *field)
{
    static const char *tab[][2] = {
        {"containers", "name"}, {"initContainers", "name"}, {"ephemeralContainers", "name"},
        {"env", "name"},        {"volumes", "name"},        {"volumeMounts", "mountPath"},
        {"ports", "containerPort"}, {"imagePullSecrets", "name"}, {"conditions", "type"},
        {"ownerReferences", "uid"}, {"hostAliases", "ip"}, {"volumeDevices", "devicePath"},
        {"resourceClaims", "name"}, {"schedulingGates", "name"}, {"finalizers", NULL},
    };
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
        if (!strcmp(tab[i][0], field))
            return tab[i][1] ? tab[i][1] : "";
    return NULL;
}

static int elem_key_eq(json_t *a, json_t *b, const char *key)
{
    json_t *x = json_object_get(a, key), *y = json_object_get(b, key);
    return x && y && json_equal(x, y);
}

static void strategic_list(json_t *target, const char *field, json_t *plist, const char *key)
{
    json_t *tl = json_object_get(target, field);
    if (!json_is_array(tl)) {
        tl = json_array();
        json_object_set_new(target, field, tl);
    }
    size_t i;
    json_t *pe;
    if (!key[0]) {
        /* Primitive list with merge strategy: union, order kept. */
        json_array_foreach(plist, i, pe)
        {
            int found = 0;
            size_t j;
            json_t *te;
            json_array_foreach(tl, j, te) if (json_equal(te, pe)) found = 1;
            if (!found)
                json_array_append(tl, pe);
        }
        return;
    }
    json_array_foreach(plist, i, pe)
    {
        const char *directive = json_string_value(json_object_get(pe, "$patch"));
        size_t j;
        json_t *te, *match = NULL;
        size_t at = 0;
        json_array_foreach(tl, j, te) if (!match && elem_key_eq(te, pe, key))
        {
            match = te;
            at = j;
        }
        if (ks_streq(directive, "delete")) {
            if (match)
                json_array_remove(tl, at);
            continue;
        }
        if (match) {
            ks_strategic_patch(match, pe);
        } else {
            json_t *n = json_object();
            ks_strategic_patch(n, pe);
            json_array_append_new(tl, n);
        }
    }
}

void ks_strategic_patch(json_t *target, json_t *patch)
{
    const char *k;
    json_t *v;
    if (ks_streq(json_string_value(json_object_get(patch, "$patch")), "replace")) {
        json_object_clear(target);
        json_object_update(target, patch);
        json_object_del(target, "$patch");
        return;
    }
    json_object_foreach(patch, k, v)
    {
        if (k[0] == '$') {
            if (!strncmp(k, "$deleteFromPrimitiveList/", 25)) {
                json_t *tl = json_object_get(target, k + 25);
                size_t i;
                json_t *d;
                json_array_foreach(v, i, d)
                {
                    for (size_t j = json_array_size(tl); j-- > 0;)
                        if (json_equal(json_array_get(tl, j), d))
                            json_array_remove(tl, j);
                }
            }
            continue; /* $setElementOrder, $retainKeys, $patch: order only */
        }
        if (json_is_null(v)) {
            json_object_del(target, k);
        } else if (json_is_object(v)) {
            json_t *t = json_object_get(target, k);
            if (!json_is_object(t)) {
                t = json_object();
                json_object_set_new(target, k, t);
            }
            ks_strategic_patch(t, v);
        } else if (json_is_array(v) && merge_key(k)) {
            strategic_list(target, k, v, merge_key(k));
        } else {
            json_object_set_new(target, k, json_deep_copy(v));
        }
    }
    void *tmp;
    json_object_foreach_safe(target, tmp, k, v)
    {
        (void)v;
        if (k[0] == '$')
            json_object_del(target, k);
    }
}

/* Resolve a JSON pointer to (parent, last token). */
static json_t *ptr_parent(json_t *root, const char *ptr, char *last, size_t lastn)
{
    if (ptr[0] != '/')
        return NULL;
    json_t *cur = root;
    const char *p = ptr + 1;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        char tok[256];
        size_t o = 0;
        for (size_t i = 0; i < len && o + 1 < sizeof(tok); i++) {
            if (p[i] == '~' && i + 1 < len && (p[i + 1] == '0' || p[i + 1] == '1')) {
                tok[o++] = p[i + 1] == '0' ? '~' : '/';
                i++;
            } else {
                tok[o++] = p[i];
            }
        }
        tok[o] = '\0';
        if (!slash) {
            ks_strlcpy(last, tok, lastn);
            return cur;
        }
        if (json_is_object(cur))
            cur = json_object_get(cur, tok);
        else if (json_is_array(cur))
            cur = json_array_get(cur, (size_t)strtoul(tok, NULL, 10));
        else
            return NULL;
        if (!cur)
            return NULL;
        p = slash + 1;
    }
}

static json_t *ptr_get(json_t *root, const char *ptr)
{
    char last[256];
    if (!ptr[0])
        return root;
    json_t *par = ptr_parent(root, ptr, last, sizeof(last));
    if (json_is_object(par))
        return json_object_get(par, last);
    if (json_is_array(par))
        return json_array_get(par, (size_t)strtoul(last, NULL, 10));
    return NULL;
}

static int ptr_remove(json_t *root, const char *ptr)
{
    char last[256];
    json_t *par = ptr_parent(root, ptr, last, sizeof(last));
    if (json_is_object(par))
        return json_object_del(par, last);
    if (json_is_array(par))
        return json_array_remove(par, (size_t)strtoul(last, NULL, 10));
    return -1;
}

static int ptr_add(json_t *root, const char *ptr, json_t *val, int replace)
{
    char last[256];
    json_t *par = ptr_parent(root, ptr, last, sizeof(last));
    if (json_is_object(par)) {
        if (replace && !json_object_get(par, last))
            return -1;
        return json_object_set(par, last, val);
    }
    if (json_is_array(par)) {
        if (!strcmp(last, "-"))
            return json_array_append(par, val);
        size_t idx = (size_t)strtoul(last, NULL, 10);
        if (replace)
            return json_array_set(par, idx, val);
        return json_array_insert(par, idx, val);
    }
    return -1;
}

int ks_json_patch(json_t **target, json_t *ops, char *err, size_t errn)
{
    size_t i;
    json_t *op;
    if (!json_is_array(ops)) {
        snprintf(err, errn, "json patch must be an array of operations");
        return -1;
    }
    json_array_foreach(ops, i, op)
    {
        const char *o = json_string_value(json_object_get(op, "op"));
        const char *path = json_string_value(json_object_get(op, "path"));
        const char *from = json_string_value(json_object_get(op, "from"));
        json_t *val = json_object_get(op, "value");
        int rc = -1;
        if (!o || !path) {
            snprintf(err, errn, "json patch operation %zu lacks op or path", i);
            return -1;
        }
        if (!strcmp(o, "add") && val) {
            rc = ptr_add(*target, path, val, 0);
        } else if (!strcmp(o, "replace") && val) {
            rc = ptr_add(*target, path, val, 1);
        } else if (!strcmp(o, "remove")) {
            rc = ptr_remove(*target, path);
        } else if (!strcmp(o, "test") && val) {
            rc = json_equal(ptr_get(*target, path), val) ? 0 : -1;
            if (rc) {
                snprintf(err, errn, "testing value %s failed", path);
                return -1;
            }
        } else if ((!strcmp(o, "move") || !strcmp(o, "copy")) && from) {
            json_t *v = json_incref(ptr_get(*target, from));
            if (v) {
                rc = 0;
                if (!strcmp(o, "move"))
                    rc = ptr_remove(*target, from);
                if (!rc)
                    rc = ptr_add(*target, path, v, 0);
                json_decref(v);
            }
        } else {
            snprintf(err, errn, "Unexpected kind: %s", o);
            return -1;
        }
        if (rc) {
            snprintf(err, errn, "%s operation does not apply: doc is missing path: \"%s\"", o,
                     path);
            return -1;
        }
    }
    return 0;
}
