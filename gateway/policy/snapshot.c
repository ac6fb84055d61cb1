/* The effective platform policy at one moment. */
#include "policy/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/digest.h"

tg_policy_snapshot_t *tg_policy_snapshot_new(void)
{
    tg_policy_snapshot_t *s = tg_xcalloc(1, sizeof(*s));
    s->refs = 1;
    s->sources = json_array();
    s->loaded_at = time(NULL);
    tg_sha256_hex("", 0, s->digest);
    return s;
}

tg_policy_snapshot_t *tg_policy_snapshot_ref(tg_policy_snapshot_t *s)
{
    if (s)
        __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
    return s;
}

void tg_policy_snapshot_release(tg_policy_snapshot_t *s)
{
    if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    for (size_t i = 0; i < s->nrules; i++)
        tg_policy_rule_clean(&s->rules[i]);
    free(s->rules);
    json_decref(s->sources);
    tg_policy_files_clean(&s->files);
    json_decref(s->db_rows);
    free(s);
}

void tg_policy_snapshot_add(tg_policy_snapshot_t *s, tg_policy_rule_t *r)
{
    if (s->nrules == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->rules = tg_xrealloc(s->rules, s->cap * sizeof(*s->rules));
    }
    s->rules[s->nrules++] = *r;
    memset(r, 0, sizeof(*r));
}

long tg_policy_snapshot_find(const tg_policy_snapshot_t *s, const char *id)
{
    for (size_t i = 0; i < s->nrules; i++)
        if (strcmp(s->rules[i].id, id) == 0)
            return (long)i;
    return -1;
}

void tg_policy_snapshot_seal(tg_policy_snapshot_t *s)
{
    tg_buf_t b;
    tg_buf_init(&b, 0);
    for (size_t i = 0; i < s->nrules; i++)
        tg_policy_rule_seal(&s->rules[i]);
    for (size_t i = 0; i < s->nrules; i++) {
        const tg_policy_rule_t *r = &s->rules[i];
        if (tg_buf_printf(&b, "%s|%s|%lld|%s|%d\n", r->id, r->source, (long long)r->version,
                          r->digest, r->enabled) != TG_OK)
            break;
    }
    tg_sha256_hex(b.data ? b.data : "", b.len, s->digest);
    tg_buf_clean(&b);
}

json_t *tg_policy_snapshot_effective(const tg_policy_snapshot_t *s, const char *workspace,
                                     int with_disabled)
{
    json_t *rules = json_array();
    for (size_t i = 0; i < s->nrules; i++) {
        const tg_policy_rule_t *r = &s->rules[i];
        if (!r->enabled && !with_disabled)
            continue;
        if (workspace && r->scope_workspaces &&
            !tg_policy_match_any(r->scope_workspaces, workspace))
            continue;
        json_array_append_new(rules, tg_policy_rule_describe(r));
    }
    char when[32];
    struct tm tm;
    gmtime_r(&s->loaded_at, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *o = json_object();
    if (workspace)
        json_object_set_new(o, "workspace", json_string(workspace));
    json_object_set_new(o, "digest", json_string(s->digest));
    json_object_set_new(o, "generation", json_integer(s->generation));
    json_object_set_new(o, "loaded_at", json_string(when));
    json_object_set_new(o, "sources", json_incref(s->sources));
    json_object_set_new(o, "rules", rules);
    return o;
}
