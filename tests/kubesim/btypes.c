/* The built-in type table (btypes.h). */
#include "btypes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "util.h"

/* builtin_types.txt, compiled in (NUL-terminated). */
__asm__(".section .rodata\n"
        ".global ks_bt_text\n"
        ".type ks_bt_text, @object\n"
        "ks_bt_text:\n"
        ".incbin \"tests/kubesim/builtin_types.txt\"\n"
        ".byte 0\n"
        ".previous\n");
extern const char ks_bt_text[];

static char *g_text; /* a writable copy the names point into */
static ks_bt_msg_t *g_msgs;
static size_t g_nmsgs;
/* Field target names until every message is known. */
static char **g_targets;

/* API group -> package prefix of its messages. */
static const char *const g_groups[][2] = {
    {"", "core.v1"},
    {"batch", "batch.v1"},
    {"apps", "apps.v1"},
    {"policy", "policy.v1"},
    {"rbac.authorization.k8s.io", "rbac.v1"},
    {"coordination.k8s.io", "coordination.v1"},
    {"authorization.k8s.io", "authorization.v1"},
    {"authentication.k8s.io", "authentication.v1"},
    {"autoscaling", "autoscaling.v1"},
};

static const ks_bt_msg_t *find_msg(const char *name)
{
    for (size_t i = 0; i < g_nmsgs; i++)
        if (!strcmp(g_msgs[i].name, name))
            return &g_msgs[i];
    return NULL;
}

static int parse_kind(const char *t, int *kind)
{
    static const char *const scalars[] = {"str", "bool", "i32", "i64", "f64", "bytes"};
    static const struct {
        const char *name;
        int kind;
    } specials[] = {
        {"$meta.v1.Time", KS_BT_TIME},
        {"$meta.v1.MicroTime", KS_BT_MICROTIME},
        {"$meta.v1.FieldsV1", KS_BT_FIELDSV1},
        {"$resource.Quantity", KS_BT_QUANTITY},
        {"$intstr.IntOrString", KS_BT_INTORSTR},
        {"$runtime.RawExtension", KS_BT_RAWEXT},
        {"$strlist", KS_BT_STRLIST},
    };
    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
        if (!strcmp(t, scalars[i])) {
            *kind = (int)i;
            return 0;
        }
    for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
        if (!strcmp(t, specials[i].name)) {
            *kind = specials[i].kind;
            return 0;
        }
    if (t[0] == '@') {
        *kind = KS_BT_MSG;
        return 0;
    }
    return -1;
}

int ks_bt_init(void)
{
    size_t nmsgs = 0, nfields = 0;
    g_text = tg_xstrdup(ks_bt_text);
    for (const char *p = g_text; *p; p++)
        if (p == g_text || p[-1] == '\n') {
            if (!strncmp(p, "msg ", 4))
                nmsgs++;
            else if (*p != '#' && *p != '\n')
                nfields++;
        }
    g_msgs = tg_xcalloc(nmsgs ? nmsgs : 1, sizeof(*g_msgs));
    ks_bt_field_t *fields = tg_xcalloc(nfields ? nfields : 1, sizeof(*fields));
    g_targets = tg_xcalloc(nfields ? nfields : 1, sizeof(*g_targets));
    size_t nf = 0, lineno = 0;
    char *next = NULL;
    for (char *line = g_text; line && *line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] == '#' || !line[0])
            continue;
        if (!strncmp(line, "msg ", 4)) {
            ks_bt_msg_t *m = &g_msgs[g_nmsgs++];
            m->name = line + 4;
            m->fields = fields + nf;
            continue;
        }
        char *tok[5];
        int nt = 0;
        for (char *t = line; t && nt < 5;) {
            tok[nt++] = t;
            t = strchr(t, ' ');
            if (t)
                *t++ = '\0';
        }
        ks_bt_field_t *f = &fields[nf];
        if (nt != 5 || !g_nmsgs || parse_kind(tok[3], &f->kind) != 0) {
            fprintf(stderr, "kubesim: builtin_types.txt line %zu is malformed\n", lineno);
            return -1;
        }
        f->num = atoi(tok[0]);
        f->json = strcmp(tok[1], "-") ? tok[1] : "";
        f->shape = tok[2][0];
        for (const char *c = tok[4]; *c; c++)
            f->flags |= *c == 'p'   ? KS_BT_PTR
                        : *c == 'o' ? KS_BT_OMIT
                        : *c == 'i' ? KS_BT_INLINE
                                    : 0;
        g_targets[nf] = f->kind == KS_BT_MSG ? tok[3] + 1 : NULL;
        g_msgs[g_nmsgs - 1].nfields++;
        nf++;
    }
    for (size_t i = 0; i < nf; i++) {
        if (!g_targets[i])
            continue;
        fields[i].msg = find_msg(g_targets[i]);
        if (!fields[i].msg) {
            fprintf(stderr, "kubesim: builtin_types.txt names unknown message %s\n", g_targets[i]);
            return -1;
        }
    }
    free(g_targets);
    g_targets = NULL;
    return 0;
}

void ks_bt_shutdown(void)
{
    if (g_msgs && g_nmsgs)
        free((void *)g_msgs[0].fields);
    free(g_msgs);
    free(g_text);
    free(g_targets);
    g_msgs = NULL;
    g_text = NULL;
    g_targets = NULL;
    g_nmsgs = 0;
}

const ks_bt_msg_t *ks_bt_root(const char *api_version, const char *kind)
{
    char group[128] = "", name[256];
    if (!api_version || !kind)
        return NULL;
    /* Options and Status travel in every group's version (and meta.k8s.io). */
    if (!strcmp(kind, "DeleteOptions") || !strcmp(kind, "Status")) {
        if (ks_fmt(name, sizeof(name), "meta.v1.%s", kind) != 0)
            return NULL;
        return find_msg(name);
    }
    const char *slash = strchr(api_version, '/');
    if (slash) {
        size_t n = (size_t)(slash - api_version);
        if (n >= sizeof(group))
            return NULL;
        memcpy(group, api_version, n);
        group[n] = '\0';
    }
    for (size_t i = 0; i < sizeof(g_groups) / sizeof(g_groups[0]); i++) {
        if (strcmp(g_groups[i][0], group))
            continue;
        /* Only the version the table was generated for. */
        const char *ver = strrchr(g_groups[i][1], '.') + 1;
        if (strcmp(slash ? slash + 1 : api_version, ver))
            return NULL;
        if (ks_fmt(name, sizeof(name), "%s.%s", g_groups[i][1], kind) != 0)
            return NULL;
        return find_msg(name);
    }
    return NULL;
}

const ks_bt_field_t *ks_bt_field_num(const ks_bt_msg_t *m, int num)
{
    for (size_t i = 0; m && i < m->nfields; i++)
        if (m->fields[i].num == num)
            return &m->fields[i];
    return NULL;
}

const ks_bt_field_t *ks_bt_field_json(const ks_bt_msg_t *m, const char *json)
{
    for (size_t i = 0; m && i < m->nfields; i++) {
        const ks_bt_field_t *f = &m->fields[i];
        if (f->flags & KS_BT_INLINE) {
            const ks_bt_field_t *in = ks_bt_field_json(f->msg, json);
            if (in)
                return in;
        } else if (!strcmp(f->json, json)) {
            return f;
        }
    }
    return NULL;
}

/* The path being walked, as the strict decoder prints it; a path too
 * long for the buffer is cut (it only names the field in a message). */
typedef struct {
    char s[1024];
    size_t len;
} path_t;

static size_t path_push(path_t *p, const char *fmt, const char *a, const char *b)
{
    size_t mark = p->len;
    int n = snprintf(p->s + p->len, sizeof(p->s) - p->len, fmt, a, b);
    if (n > 0)
        p->len = p->len + (size_t)n < sizeof(p->s) ? p->len + (size_t)n : sizeof(p->s) - 1;
    return mark;
}

static void path_pop(path_t *p, size_t mark)
{
    p->len = mark;
    p->s[mark] = '\0';
}

static void walk(const ks_bt_msg_t *m, json_t *v, path_t *path, json_t *unknown, int prune,
                 int depth);

static void walk_value(const ks_bt_field_t *f, json_t *v, path_t *path, json_t *unknown, int prune,
                       int depth)
{
    if (f->kind != KS_BT_MSG)
        return;
    char idx[32];
    if (f->shape == 'r' && json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            snprintf(idx, sizeof(idx), "%zu", i);
            size_t mark = path_push(path, "[%s]%s", idx, "");
            walk(f->msg, x, path, unknown, prune, depth + 1);
            path_pop(path, mark);
        }
    } else if (f->shape == 'm' && json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            size_t mark = path_push(path, "[%s]%s", k, "");
            walk(f->msg, x, path, unknown, prune, depth + 1);
            path_pop(path, mark);
        }
    } else if (f->shape == '1') {
        walk(f->msg, v, path, unknown, prune, depth + 1);
    }
}

static void walk(const ks_bt_msg_t *m, json_t *v, path_t *path, json_t *unknown, int prune,
                 int depth)
{
    if (!json_is_object(v) || depth > 64)
        return;
    const char *k;
    json_t *x;
    void *tmp;
    json_object_foreach_safe(v, tmp, k, x)
    {
        const ks_bt_field_t *f = ks_bt_field_json(m, k);
        if (!f && depth == 0 && (!strcmp(k, "apiVersion") || !strcmp(k, "kind")))
            continue;
        size_t mark = path_push(path, "%s%s", path->len ? "." : "", k);
        if (f) {
            walk_value(f, x, path, unknown, prune, depth);
        } else {
            json_array_append_new(unknown, json_string(path->s));
            if (prune)
                json_object_del(v, k);
        }
        path_pop(path, mark);
    }
}

void ks_bt_unknown(const ks_bt_msg_t *m, json_t *obj, json_t *unknown, int prune)
{
    path_t path = {.len = 0};
    path.s[0] = '\0';
    walk(m, obj, &path, unknown, prune, 0);
}
