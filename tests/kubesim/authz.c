/* Identity, RBAC evaluation and the review APIs (authz.h). */
#include "authz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"

#define KS_ADMIN_USER "kubesim-admin"

typedef struct {
    char user[256];
    json_t *groups; /* array of strings */
    int impersonated;
} user_t;

typedef struct {
    const char *verb, *group, *resource, *sub, *ns, *name;
    const char *path; /* non-resource request when set */
} attrs_t;

static enum MHD_Result add_group(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    if (key && value && !strcasecmp(key, "Impersonate-Group"))
        json_array_append_new((json_t *)cls, json_string(value));
    return MHD_YES;
}

static int has_group(json_t *groups, const char *g)
{
    size_t i;
    json_t *x;
    json_array_foreach(groups, i, x) if (ks_streq(json_string_value(x), g)) return 1;
    return 0;
}

/* The groups a 1.32 authenticator adds: service accounts' own groups and
 * system:authenticated. */
static void implied_groups(user_t *u)
{
    char g[300];
    const char *sa = "system:serviceaccount:";
    if (!strncmp(u->user, sa, strlen(sa))) {
        const char *ns = u->user + strlen(sa);
        const char *colon = strchr(ns, ':');
        if (!has_group(u->groups, "system:serviceaccounts"))
            json_array_append_new(u->groups, json_string("system:serviceaccounts"));
        if (colon) {
            snprintf(g, sizeof(g), "system:serviceaccounts:%.*s", (int)(colon - ns), ns);
            if (!has_group(u->groups, g))
                json_array_append_new(u->groups, json_string(g));
        }
    }
    if (strcmp(u->user, "system:anonymous") && !has_group(u->groups, "system:authenticated"))
        json_array_append_new(u->groups, json_string("system:authenticated"));
}

static void user_of(ks_req_t *r, user_t *u)
{
    const char *imp = ks_req_header(r, "Impersonate-User");
    u->groups = json_array();
    u->impersonated = imp && imp[0];
    if (u->impersonated) {
        ks_strlcpy(u->user, imp, sizeof(u->user));
        MHD_get_connection_values(r->conn, MHD_HEADER_KIND, add_group, u->groups);
    } else {
        ks_strlcpy(u->user, KS_ADMIN_USER, sizeof(u->user));
        json_array_append_new(u->groups, json_string("system:masters"));
    }
    implied_groups(u);
}

static int in_list(json_t *arr, const char *v)
{
    size_t i;
    json_t *x;
    json_array_foreach(arr, i, x)
    {
        const char *s = json_string_value(x);
        if (s && (!strcmp(s, "*") || !strcmp(s, v)))
            return 1;
    }
    return 0;
}

static int resource_matches(json_t *resources, const attrs_t *a)
{
    char full[300];
    size_t i;
    json_t *x;
    snprintf(full, sizeof(full), "%s%s%s", a->resource, a->sub[0] ? "/" : "", a->sub);
    json_array_foreach(resources, i, x)
    {
        const char *s = json_string_value(x);
        if (!s)
            continue;
        if (!strcmp(s, "*") || !strcmp(s, full))
            return 1;
        if (a->sub[0] && !strncmp(s, "*/", 2) && !strcmp(s + 2, a->sub))
            return 1;
    }
    return 0;
}

static int rule_matches(json_t *rule, const attrs_t *a)
{
    if (!in_list(json_object_get(rule, "verbs"), a->verb))
        return 0;
    if (a->path) {
        size_t i;
        json_t *x;
        json_array_foreach(json_object_get(rule, "nonResourceURLs"), i, x)
        {
            const char *s = json_string_value(x);
            size_t n = s ? strlen(s) : 0;
            if (s && (!strcmp(s, a->path) || (n && s[n - 1] == '*' && !strncmp(s, a->path, n - 1))))
                return 1;
        }
        return 0;
    }
    if (!in_list(json_object_get(rule, "apiGroups"), a->group) ||
        !resource_matches(json_object_get(rule, "resources"), a))
        return 0;
    json_t *names = json_object_get(rule, "resourceNames");
    return !json_array_size(names) || (a->name[0] && in_list(names, a->name));
}

static int subject_matches(json_t *s, const user_t *u, const char *binding_ns)
{
    const char *kind = ks_jstr(s, "kind"), *name = ks_jstr(s, "name");
    if (!kind || !name)
        return 0;
    if (!strcmp(kind, "User"))
        return !strcmp(name, u->user);
    if (!strcmp(kind, "Group"))
        return has_group(u->groups, name);
    if (!strcmp(kind, "ServiceAccount")) {
        char sa[600];
        const char *ns = ks_jstr(s, "namespace");
        snprintf(sa, sizeof(sa), "system:serviceaccount:%s:%s", ns ? ns : binding_ns, name);
        return !strcmp(sa, u->user);
    }
    return 0;
}

/* The first subject of a binding that names u (NULL when none). */
static json_t *binding_subject(json_t *b, const user_t *u)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(b, "subjects"), i,
                       s) if (subject_matches(s, u, ks_meta_ns(b))) return s;
    return NULL;
}

static json_t *binding_role(json_t *b)
{
    const char *kind = ks_jstr(b, "roleRef.kind"), *name = ks_jstr(b, "roleRef.name");
    if (ks_streq(kind, "ClusterRole"))
        return ks_store_get(KS_RT_CLUSTERROLES, NULL, name);
    if (ks_streq(kind, "Role") && ks_meta_ns(b))
        return ks_store_get(KS_RT_ROLES, ks_meta_ns(b), name);
    return NULL;
}

typedef struct {
    const user_t *u;
    const attrs_t *a; /* NULL: collect rules instead of deciding */
    char *reason;
    size_t reason_n;
    int allowed;
    json_t *rules; /* collected rules */
} eval_t;

static void eval_binding(eval_t *e, json_t *b, const char *bkind)
{
    json_t *subj = binding_subject(b, e->u);
    json_t *role = subj ? binding_role(b) : NULL;
    size_t i;
    json_t *rule;
    json_array_foreach(json_object_get(role, "rules"), i, rule)
    {
        if (!e->a) {
            json_array_append(e->rules, rule);
            continue;
        }
        if (e->allowed || !rule_matches(rule, e->a))
            continue;
        e->allowed = 1;
        if (ks_meta_ns(b))
            snprintf(e->reason, e->reason_n,
                     "RBAC: allowed by %s \"%s/%s\" of %s \"%s\" to %s \"%s\"", bkind,
                     ks_meta_name(b), ks_meta_ns(b), ks_jstr(b, "roleRef.kind"),
                     ks_jstr(b, "roleRef.name"), ks_jstr(subj, "kind"), ks_jstr(subj, "name"));
        else
            snprintf(e->reason, e->reason_n, "RBAC: allowed by %s \"%s\" of %s \"%s\" to %s \"%s\"",
                     bkind, ks_meta_name(b), ks_jstr(b, "roleRef.kind"), ks_jstr(b, "roleRef.name"),
                     ks_jstr(subj, "kind"), ks_jstr(subj, "name"));
    }
}

/* Evaluate (lock held): cluster bindings, then the namespace's bindings. */
static void eval(eval_t *e, const char *ns)
{
    json_t **items = NULL;
    size_t n = ks_store_list(KS_RT_CLUSTERROLEBINDINGS, NULL, &items);
    for (size_t i = 0; i < n && !e->allowed; i++)
        eval_binding(e, items[i], "ClusterRoleBinding");
    free(items);
    items = NULL;
    if (ns && ns[0]) {
        n = ks_store_list(KS_RT_ROLEBINDINGS, ns, &items);
        for (size_t i = 0; i < n && !e->allowed; i++)
            eval_binding(e, items[i], "RoleBinding");
        free(items);
    }
}

static int authorize(const user_t *u, const attrs_t *a, char *reason, size_t n)
{
    reason[0] = '\0';
    if (has_group(u->groups, "system:masters")) {
        snprintf(reason, n, "kubesim: group system:masters may do everything");
        return 1;
    }
    eval_t e = {u, a, reason, n, 0, NULL};
    ks_lock();
    eval(&e, a->ns);
    ks_unlock();
    return e.allowed;
}

int ks_authz_check(ks_req_t *r, const char *group, const char *resource, const char *sub,
                   const char *ns, const char *name)
{
    if (!ks_req_header(r, "Impersonate-User"))
        return 0;
    const char *m = r->method;
    const char *verb = !strcmp(m, "GET")      ? (name[0]                   ? "get"
                                                 : ks_req_flag(r, "watch") ? "watch"
                                                                           : "list")
                       : !strcmp(m, "POST")   ? "create"
                       : !strcmp(m, "PUT")    ? "update"
                       : !strcmp(m, "PATCH")  ? "patch"
                       : !strcmp(m, "DELETE") ? (name[0] ? "delete" : "deletecollection")
                                              : "unknown";
    user_t u;
    user_of(r, &u);
    attrs_t a = {verb, group, resource, sub, ns, name, NULL};
    char reason[1200], msg[2400], res[300], where[400];
    int ok = authorize(&u, &a, reason, sizeof(reason));
    if (!ok) {
        snprintf(res, sizeof(res), "%s%s%s", resource, sub[0] ? "/" : "", sub);
        if (ns[0])
            snprintf(where, sizeof(where), "in the namespace \"%s\"", ns);
        else
            snprintf(where, sizeof(where), "at the cluster scope");
        char head[600];
        if (name[0])
            snprintf(head, sizeof(head), "%s%s%s \"%s\"", resource, group[0] ? "." : "", group,
                     name);
        else
            snprintf(head, sizeof(head), "%s%s%s", resource, group[0] ? "." : "", group);
        snprintf(msg, sizeof(msg),
                 "%s is forbidden: User \"%s\" cannot %s resource \"%s\" in API "
                 "group \"%s\" %s",
                 head, u.user, verb, res, group, where);
        ks_reply_status(r, 403, "Forbidden", msg,
                        json_pack("{s:s,s:s,s:s}", "name", name, "group", group, "kind", resource));
    }
    json_decref(u.groups);
    return ok ? 0 : -1;
}

/* ---- review APIs ---- */

static const struct {
    const char *group, *resource, *kind;
    int namespaced;
} reviews[] = {
    {"authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", 1},
    {"authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview", 0},
    {"authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview", 0},
    {"authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview", 0},
    {"authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", 0},
};
#define KS_NREVIEWS (sizeof(reviews) / sizeof(reviews[0]))

void ks_authz_discovery(const char *group, json_t *res)
{
    for (size_t i = 0; i < KS_NREVIEWS; i++)
        if (!strcmp(reviews[i].group, group))
            json_array_append_new(res,
                                  json_pack("{s:s,s:s,s:b,s:s,s:[s]}", "name", reviews[i].resource,
                                            "singularName", "", "namespaced", reviews[i].namespaced,
                                            "kind", reviews[i].kind, "verbs", "create"));
}

/* status of an access review of attributes spec.{resource,nonResource}Attributes */
static json_t *access_status(const user_t *u, json_t *spec, const char *force_ns)
{
    json_t *ra = json_object_get(spec, "resourceAttributes");
    json_t *na = json_object_get(spec, "nonResourceAttributes");
    attrs_t a = {"", "", "", "", "", "", NULL};
    if (ra) {
        a.verb = ks_jstr(ra, "verb") ? ks_jstr(ra, "verb") : "";
        a.group = ks_jstr(ra, "group") ? ks_jstr(ra, "group") : "";
        a.resource = ks_jstr(ra, "resource") ? ks_jstr(ra, "resource") : "";
        a.sub = ks_jstr(ra, "subresource") ? ks_jstr(ra, "subresource") : "";
        a.ns = force_ns ? force_ns : ks_jstr(ra, "namespace") ? ks_jstr(ra, "namespace") : "";
        a.name = ks_jstr(ra, "name") ? ks_jstr(ra, "name") : "";
    } else {
        a.verb = ks_jstr(na, "verb") ? ks_jstr(na, "verb") : "";
        a.path = ks_jstr(na, "path") ? ks_jstr(na, "path") : "/";
    }
    char reason[1200];
    int ok = authorize(u, &a, reason, sizeof(reason));
    json_t *st = json_pack("{s:b}", "allowed", ok);
    if (reason[0])
        json_object_set_new(st, "reason", json_string(reason));
    return st;
}

static json_t *rules_status(const user_t *u, const char *ns)
{
    json_t *rr = json_array(), *nr = json_array();
    if (has_group(u->groups, "system:masters")) {
        json_array_append_new(
            rr, json_pack("{s:[s],s:[s],s:[s]}", "verbs", "*", "apiGroups", "*", "resources", "*"));
        json_array_append_new(nr, json_pack("{s:[s],s:[s]}", "verbs", "*", "nonResourceURLs", "*"));
    } else {
        char reason[8];
        eval_t e = {u, NULL, reason, sizeof(reason), 0, json_array()};
        ks_lock();
        eval(&e, ns);
        ks_unlock();
        size_t i;
        json_t *rule;
        json_array_foreach(e.rules, i, rule)
        {
            json_t *c = json_deep_copy(rule);
            if (json_object_get(c, "nonResourceURLs")) {
                json_array_append_new(nr, c);
            } else {
                if (!json_object_get(c, "apiGroups"))
                    json_object_set_new(c, "apiGroups", json_array());
                json_array_append_new(rr, c);
            }
        }
        json_decref(e.rules);
    }
    return json_pack("{s:o,s:o,s:b}", "resourceRules", rr, "nonResourceRules", nr, "incomplete", 0);
}

static void serve_review(ks_req_t *r, size_t kind, const char *url_ns)
{
    char gv[128], msg[300];
    snprintf(gv, sizeof(gv), "%s/v1", reviews[kind].group);
    if (strcmp(r->method, "POST")) {
        ks_reply_status(r, 405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource", NULL);
        return;
    }
    json_t *o = ks_api_parse_body(r, 0);
    if (!o)
        return;
    if (!json_is_object(o) ||
        (ks_jstr(o, "kind") && strcmp(ks_jstr(o, "kind"), reviews[kind].kind))) {
        snprintf(msg, sizeof(msg), "expected a %s", reviews[kind].kind);
        ks_reply_badrequest(r, msg);
        json_decref(o);
        return;
    }
    json_object_set_new(o, "kind", json_string(reviews[kind].kind));
    json_object_set_new(o, "apiVersion", json_string(gv));
    user_t u;
    user_of(r, &u);
    json_t *spec = json_object_get(o, "spec");
    const char *res = reviews[kind].resource;
    json_t *st = NULL;
    if (!strcmp(res, "selfsubjectreviews")) {
        st = json_pack("{s:{s:s,s:O}}", "userInfo", "username", u.user, "groups", u.groups);
    } else if (!strcmp(res, "selfsubjectrulesreviews")) {
        st = rules_status(&u, ks_jstr(spec, "namespace") ? ks_jstr(spec, "namespace") : "");
    } else if (!json_object_get(spec, "resourceAttributes") &&
               !json_object_get(spec, "nonResourceAttributes")) {
        json_decref(o);
        json_decref(u.groups);
        snprintf(msg, sizeof(msg),
                 "%s.%s \"\" is invalid: spec.resourceAttributes: Invalid "
                 "value: \"null\": exactly one of nonResourceAttributes or resourceAttributes "
                 "must be specified",
                 reviews[kind].kind, reviews[kind].group);
        ks_reply_status(r, 422, "Invalid", msg, NULL);
        return;
    } else if (!strcmp(res, "selfsubjectaccessreviews")) {
        st = access_status(&u, spec, NULL);
    } else {
        /* (Local)SubjectAccessReview: the subject named in the spec. */
        user_t s;
        ks_strlcpy(s.user, ks_jstr(spec, "user") ? ks_jstr(spec, "user") : "", sizeof(s.user));
        json_t *g = json_object_get(spec, "groups");
        s.groups = json_is_array(g) ? json_deep_copy(g) : json_array();
        s.impersonated = 1;
        st = access_status(&s, spec, reviews[kind].namespaced ? url_ns : NULL);
        json_decref(s.groups);
    }
    json_object_set_new(o, "status", st);
    if (!json_object_get(o, "metadata"))
        json_object_set_new(o, "metadata", json_object());
    json_decref(u.groups);
    ks_reply_json(r, 201, o);
}

int ks_authz_serve(ks_req_t *r, const char *group, char **rest, int n)
{
    if (strcmp(group, "authorization.k8s.io") && strcmp(group, "authentication.k8s.io"))
        return 0;
    const char *ns = NULL;
    if (n == 3 && !strcmp(rest[0], "namespaces")) {
        ns = rest[1];
        rest += 2;
        n -= 2;
    }
    for (size_t i = 0; n == 1 && i < KS_NREVIEWS; i++) {
        if (strcmp(reviews[i].group, group) || strcmp(reviews[i].resource, rest[0]) ||
            reviews[i].namespaced != (ns != NULL))
            continue;
        serve_review(r, i, ns);
        return 1;
    }
    ks_reply_status(r, 404, "NotFound", "the server could not find the requested resource", NULL);
    return 1;
}
