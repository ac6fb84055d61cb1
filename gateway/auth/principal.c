/* The authenticated caller, built from verified claims. */
#include "auth/principal.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/mem.h"

void tg_principal_init(tg_principal_t *p)
{
    memset(p, 0, sizeof(*p));
}

void tg_principal_clean(tg_principal_t *p)
{
    if (!p)
        return;
    free(p->subject);
    free(p->issuer);
    free(p->name);
    free(p->email);
    for (size_t i = 0; i < p->n_groups; i++)
        free(p->groups[i]);
    free(p->groups);
    tg_principal_init(p);
}

int tg_principal_in_group(const tg_principal_t *p, const char *g)
{
    for (size_t i = 0; g && i < p->n_groups; i++)
        if (strcmp(p->groups[i], g) == 0)
            return 1;
    return 0;
}

int tg_principal_add_group(tg_principal_t *p, const char *g)
{
    if (!g || !*g || strlen(g) > TG_PRINCIPAL_MAX_GROUP_LEN ||
        p->n_groups >= TG_PRINCIPAL_MAX_GROUPS || tg_principal_in_group(p, g))
        return 0;
    p->groups = tg_xrealloc(p->groups, (p->n_groups + 1) * sizeof(*p->groups));
    p->groups[p->n_groups++] = tg_xstrdup(g);
    return 1;
}

void tg_principal_apply_admin(tg_principal_t *p, const tg_auth_list_t *admin_groups,
                              const tg_auth_list_t *admin_subjects)
{
    p->is_admin = 0;
    if (admin_subjects && p->subject && tg_auth_list_has(admin_subjects, p->subject)) {
        p->is_admin = 1;
        return;
    }
    for (size_t i = 0; admin_groups && i < p->n_groups; i++) {
        if (tg_auth_list_has(admin_groups, p->groups[i])) {
            p->is_admin = 1;
            return;
        }
    }
}

/* The groups claim: an exact member first (namespaced claim names contain
 * dots), then a dotted path through nested objects. Borrowed. */
static json_t *claims_find(json_t *claims, const char *name)
{
    json_t *v = json_object_get(claims, name);
    if (v || !strchr(name, '.'))
        return v;
    json_t *cur = claims;
    const char *p = name;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        char key[256];
        if (n == 0 || n >= sizeof(key) || !json_is_object(cur))
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        cur = json_object_get(cur, key);
        p = dot ? dot + 1 : p + n;
    }
    return cur;
}

static char *claim_str(json_t *claims, const char *name)
{
    const char *s = json_string_value(json_object_get(claims, name));
    return s && *s ? tg_xstrdup(s) : NULL;
}

int tg_principal_from_claims(tg_principal_t *p, json_t *claims, const tg_principal_policy_t *pol)
{
    static const char *const default_names[] = {"name", "preferred_username", "email"};

    p->kind = TG_PRINCIPAL_JWT;
    p->subject = claim_str(claims, "sub");
    if (!p->subject)
        p->subject = tg_xstrdup(""); /* callers verify sub first; never leave NULL */
    p->issuer = claim_str(claims, "iss");
    p->email = claim_str(claims, "email");
    json_t *exp = json_object_get(claims, "exp");
    double e = json_is_number(exp) ? json_number_value(exp) : 0;
    /* Clamp before converting: a double past time_t's range is undefined
     * behaviour to cast, and "exp": 1e300 is valid JSON. */
    p->expires_at = e <= 0 ? 0 : e >= 4e18 ? (time_t)4000000000000000000LL : (time_t)e;

    if (pol->name_claims && pol->name_claims->n) {
        for (size_t i = 0; !p->name && i < pol->name_claims->n; i++)
            p->name = claim_str(claims, pol->name_claims->v[i]);
    } else {
        for (size_t i = 0; !p->name && i < TG_ARRAY_LEN(default_names); i++)
            p->name = claim_str(claims, default_names[i]);
    }
    if (!p->name)
        p->name = tg_xstrdup(p->subject);

    const char *gc = pol->groups_claim && *pol->groups_claim ? pol->groups_claim
                                                             : TG_PRINCIPAL_DEFAULT_GROUPS_CLAIM;
    /* An array of strings or nothing: a lone string is not read as one
     * group, nor is any other shape guessed at (issue #17). */
    json_t *groups = claims_find(claims, gc);
    if (groups && !json_is_array(groups))
        return -1;
    size_t i, dropped = 0;
    json_t *g;
    json_array_foreach(groups, i, g) {
        if (!json_is_string(g))
            return -1;
        if (!tg_principal_add_group(p, json_string_value(g)))
            dropped++;
    }
    if (dropped)
        tg_log_debug("auth", "%zu group values ignored (duplicates or over limits)", dropped);
    tg_principal_apply_admin(p, pol->admin_groups, pol->admin_subjects);
    return 0;
}
