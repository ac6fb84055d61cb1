/* Policy evaluation: scope, locations, patching and decisions. The checks
 * themselves are in eval_kinds.c. */
#include "policy/eval.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "policy/eval_int.h"
#include "tauyaml/path.h"

/* ---- reading the config -------------------------------------------------------------------- */

static const json_t *ev_section(const tg_policy_ev_t *e, const char *sect)
{
    tg_policy_ev_sect_t *c = e->last;
    if (c->name && (c->name == sect || strcmp(c->name, sect) == 0))
        return c->obj;
    c->obj = json_object_get(e->res, sect);
    c->name = sect;
    return c->obj;
}

const json_t *tg_policy_ev_get(const tg_policy_ev_t *e, const char *sect, const char *key)
{
    const json_t *o = sect ? ev_section(e, sect) : e->res;
    const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    return json_is_null(v) ? NULL : v;
}

const char *tg_policy_ev_str(const tg_policy_ev_t *e, const char *sect, const char *key)
{
    return json_string_value(tg_policy_ev_get(e, sect, key));
}

json_t *tg_policy_ev_ref(const tg_policy_ev_t *e, const char *sect, const char *key)
{
    return json_incref((json_t *)tg_policy_ev_get(e, sect, key));
}

json_int_t tg_policy_ev_int(const tg_policy_ev_t *e, const char *sect, const char *key,
                            json_int_t def)
{
    const json_t *v = tg_policy_ev_get(e, sect, key);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

const char *tg_policy_ev_prov(const tg_policy_ev_t *e, const char *dotted)
{
    return tg_tauyaml_prov_get(e->prov, dotted);
}

int tg_policy_ev_fillable(const tg_policy_ev_t *e, const char *sect, const char *key)
{
    if (!tg_policy_ev_get(e, sect, key))
        return 1;
    char path[160];
    tg_tauyaml_path_field(path, sizeof(path), sect, key);
    const char *p = tg_policy_ev_prov(e, path);
    return p && strcmp(p, "default") == 0;
}

/* ---- patching ------------------------------------------------------------------------------ */

/* The resolved config shares its nodes with the spec, the context and the
 * schema, so it is never written to: the first fill copies the top level
 * and provenance, and each section is copied (shallowly) before its first
 * change. */
void tg_policy_ev_set(tg_policy_ev_t *e, const char *sect, const char *key, json_t *val,
                      const tg_policy_rule_t *r)
{
    e->out->patched = 1;
    e->last->name = NULL; /* res or one of its sections is about to change */
    if (!e->own && e->in->patch_in_place && e->in->provenance) {
        /* The caller owns the objects: write into them. */
        e->own = 2;
    } else if (!e->own) {
        e->out->resolved = json_copy(e->res);
        json_decref(e->res);
        e->res = e->out->resolved;
        if (e->prov != &e->out->prov_copy)
            tg_tauyaml_prov_copy(&e->out->prov_copy, e->prov);
        e->prov = &e->out->prov_copy;
        e->out->prov_copied = 1;
        e->own = 1;
    }
    json_t *dst = e->res;
    if (sect && e->own == 2) {
        dst = json_object_get(e->res, sect);
        if (!json_is_object(dst)) {
            dst = json_object();
            json_object_set_new(e->res, sect, dst);
        }
    } else if (sect) {
        size_t i;
        for (i = 0; i < e->ncopied; i++)
            if (strcmp(e->copied[i], sect) == 0)
                break;
        dst = json_object_get(e->res, sect);
        if (i == e->ncopied) {
            json_t *copy = json_is_object(dst) ? json_copy(dst) : json_object();
            json_object_set_new(e->res, sect, copy);
            dst = copy;
            if (e->ncopied < TG_ARRAY_LEN(e->copied))
                e->copied[e->ncopied++] = sect;
        }
    }
    json_object_set_new(dst, key, val ? val : json_null());
    tg_tauyaml_prov_set(e->prov, sect, key, json_string_value(r->provenance));
}

/* ---- locations ----------------------------------------------------------------------------- */

static int ev_find(const tg_policy_ev_t *e, const char *path, int want_value, tg_policy_at_t *at)
{
    unsigned l = 0, c = 0;
    if (!e->in->locate || !e->in->locate(e->in->locate_arg, path, want_value, &l, &c))
        return 0;
    at->line = l ? l : 1;
    at->column = c ? c : 1;
    return 1;
}

void tg_policy_ev_locate(const tg_policy_ev_t *e, const char *rpath, const char *const *cands,
                         int want_value, tg_policy_at_t *at)
{
    /* Unwritten values are named as the spec would write them. */
    at->path = cands && cands[0] ? cands[0] : rpath;
    at->line = at->column = 1;
    for (size_t i = 0; cands && cands[i]; i++) {
        if (ev_find(e, cands[i], want_value, at)) {
            at->path = cands[i];
            return;
        }
    }
    const char *prov = tg_policy_ev_prov(e, rpath);
    if (prov && strcmp(prov, "profile") == 0 && ev_find(e, "policy.profile", 1, at))
        return;
    /* The nearest section the spec wrote. */
    const char *base = cands && cands[0] ? cands[0] : rpath;
    size_t len = strlen(base);
    while (len > 0 && (len = tg_tauyaml_path_parent(base, len)) > 0) {
        char up[256];
        if (len >= sizeof(up))
            continue;
        memcpy(up, base, len);
        up[len] = '\0';
        if (ev_find(e, up, 0, at))
            return;
    }
}

/* ---- decisions ----------------------------------------------------------------------------- */

/* Text of a value for messages: strings bare, lists joined with ", ". */
static void ev_text(tg_buf_t *b, const json_t *v)
{
    tg_rc_e rc = TG_OK;
    if (!v || json_is_null(v)) {
        rc = tg_buf_puts(b, "none");
    } else if (json_is_string(v)) {
        rc = tg_buf_puts(b, json_string_value(v));
    } else if (json_is_array(v)) {
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x) {
            if (i && tg_buf_puts(b, ", ") != TG_OK)
                return;
            ev_text(b, x);
        }
    } else {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        rc = tg_buf_puts(b, s ? s : "");
        free(s);
    }
    (void)rc; /* a message cut at the buffer's cap is still a message */
}

/* The rule's message with {actual}, {expected}, {path} and {id} filled in. */
static void ev_template(tg_buf_t *b, const tg_policy_rule_t *r, const tg_policy_at_t *at,
                        const json_t *actual)
{
    const char *t = r->message;
    while (*t) {
        const char *open = strchr(t, '{');
        if (!open) {
            if (tg_buf_puts(b, t) != TG_OK)
                return;
            break;
        }
        if (tg_buf_append(b, t, (size_t)(open - t)) != TG_OK)
            return;
        if (strncmp(open, "{actual}", 8) == 0) {
            ev_text(b, actual);
            t = open + 8;
        } else if (strncmp(open, "{expected}", 10) == 0) {
            ev_text(b, r->param);
            t = open + 10;
        } else if (strncmp(open, "{path}", 6) == 0) {
            if (tg_buf_puts(b, at->path) != TG_OK)
                return;
            t = open + 6;
        } else if (strncmp(open, "{id}", 4) == 0) {
            if (tg_buf_puts(b, r->id) != TG_OK)
                return;
            t = open + 4;
        } else {
            if (tg_buf_append(b, "{", 1) != TG_OK)
                return;
            t = open + 1;
        }
    }
}

/* Record a decision; returns it (valid until the next one). */
static tg_policy_decision_t *ev_decision(tg_policy_ev_t *e, const tg_policy_rule_t *r,
                                         tg_policy_outcome_e outcome, const tg_policy_at_t *at,
                                         json_t *actual)
{
    tg_policy_result_t *out = e->out;
    if (out->ndv == out->dcap) {
        out->dcap = out->dcap ? out->dcap * 2 : 32;
        out->dv = tg_xrealloc(out->dv, out->dcap * sizeof(*out->dv));
    }
    tg_policy_decision_t *d = &out->dv[out->ndv++];
    memset(d, 0, sizeof(*d));
    d->rule = r;
    d->outcome = outcome;
    d->line = at->line;
    d->column = at->column;
    size_t n = strlen(at->path) + 1;
    if (out->slen + n > out->scap) {
        out->scap = (out->slen + n) * 2 > 1024 ? (out->slen + n) * 2 : 1024;
        out->strs = tg_xrealloc(out->strs, out->scap);
    }
    memcpy(out->strs + out->slen, at->path, n);
    d->path = out->slen;
    out->slen += n;
    d->actual = actual;
    return d;
}

void tg_policy_ev_allow(tg_policy_ev_t *e, const tg_policy_rule_t *r, const tg_policy_at_t *at,
                        json_t *actual)
{
    ev_decision(e, r, TG_POLICY_ALLOW, at, actual);
}

void tg_policy_ev_allow_int(tg_policy_ev_t *e, const tg_policy_rule_t *r, const tg_policy_at_t *at,
                            json_int_t actual)
{
    tg_policy_decision_t *d = ev_decision(e, r, TG_POLICY_ALLOW, at, NULL);
    d->iactual = actual;
    d->has_int = 1;
}

/* What the user is told: the rule's message with its placeholders filled,
 * else the built-in description `fmt`; then the rule id. */
static json_t *ev_message(const tg_policy_rule_t *r, const tg_policy_at_t *at, const json_t *actual,
                          const char *fmt, va_list ap)
{
    tg_buf_t b;
    tg_buf_init(&b, 4096);
    if (r->message)
        ev_template(&b, r, at, actual);
    else if (fmt && tg_buf_vprintf(&b, fmt, ap) != TG_OK)
        tg_buf_reset(&b);
    tg_rc_e rc = tg_buf_printf(&b, " (policy %s)", r->id);
    (void)rc; /* past the cap the message is cut, which is fine */
    json_t *msg = json_string(b.data ? b.data : "");
    tg_buf_clean(&b);
    return msg ? msg : json_string("(policy message is not valid UTF-8)");
}

void tg_policy_ev_violation(tg_policy_ev_t *e, const tg_policy_rule_t *r, const tg_policy_at_t *at,
                            json_t *actual, const char *fmt, ...)
{
    tg_policy_outcome_e outcome = r->action == TG_POLICY_WARN ? TG_POLICY_WARNED : TG_POLICY_DENIED;
    va_list ap;
    va_start(ap, fmt);
    json_t *msg = ev_message(r, at, actual, fmt, ap);
    va_end(ap);
    tg_policy_decision_t *d = ev_decision(e, r, outcome, at, actual);
    d->message = json_incref(msg);
    json_t *entry = json_object();
    json_object_set_new_nocheck(entry, "path", json_string(at->path));
    json_object_set_new_nocheck(entry, "line", json_integer(at->line));
    json_object_set_new_nocheck(entry, "column", json_integer(at->column));
    json_object_set_new_nocheck(entry, "message", msg);
    json_object_set_nocheck(entry, "rule_id", json_object_get(r->json, "id"));
    json_array_append_new(outcome == TG_POLICY_DENIED ? e->out->errors : e->out->warnings, entry);
}

static json_t *ev_message_only(const tg_policy_rule_t *r, const tg_policy_at_t *at,
                               const json_t *actual, ...)
{
    va_list ap;
    va_start(ap, actual);
    json_t *msg = ev_message(r, at, actual, NULL, ap);
    va_end(ap);
    return msg;
}

void tg_policy_ev_filled(tg_policy_ev_t *e, const tg_policy_rule_t *r, const tg_policy_at_t *at,
                         const char *sect, const char *key)
{
    tg_policy_decision_t *d =
        ev_decision(e, r, TG_POLICY_DEFAULTED, at, tg_policy_ev_ref(e, sect, key));
    /* The provenance says what filled the value; a message only when the
     * rule has one of its own. */
    if (r->message)
        d->message = ev_message_only(r, at, d->actual);
}

/* ---- the run ------------------------------------------------------------------------------- */

static int ev_scope_one(const json_t *list, const char *value)
{
    return !list || tg_policy_match_any(list, value);
}

static int ev_in_scope(const tg_policy_ev_t *e, const tg_policy_rule_t *r)
{
    return ev_scope_one(r->scope_workspaces, e->ws) && ev_scope_one(r->scope_teams, e->team) &&
           ev_scope_one(r->scope_lanes, e->lane) && ev_scope_one(r->scope_engines, e->engine);
}

tg_rc_e tg_policy_evaluate(const tg_policy_snapshot_t *snap, const tg_policy_input_t *in,
                           tg_policy_result_t *out)
{
    memset(out, 0, sizeof(*out));
    out->errors = json_array();
    out->warnings = json_array();
    out->dcap = snap->nrules + 8;
    out->dv = tg_xmalloc(out->dcap * sizeof(*out->dv));
    /* Decisions point at the snapshot's rules: keep it alive with them. */
    out->snapshot = tg_policy_snapshot_ref((tg_policy_snapshot_t *)snap);
    memcpy(out->policy_digest, snap->digest, sizeof(out->policy_digest));
    out->generation = snap->generation;
    tg_tauyaml_prov_init(&out->prov_copy);
    out->prov_in = in->provenance;
    if (!json_is_object(in->resolved)) {
        out->resolved = json_object();
        return TG_EINVAL;
    }
    tg_policy_ev_sect_t last = {0};
    tg_policy_ev_t e = {.in = in, .out = out, .last = &last};
    e.res = json_incref((json_t *)in->resolved);
    /* Without one, fills are recorded in the (empty) copy. */
    e.prov = in->provenance ? in->provenance : &out->prov_copy;
    out->prov_copied = !in->provenance;
    e.ws = in->workspace ? in->workspace : tg_policy_ev_str(&e, "policy", "workspace");
    e.team = in->team ? in->team : tg_policy_ev_str(&e, "policy", "team");
    e.lane = in->lane ? in->lane : tg_policy_ev_str(&e, "policy", "lane");
    e.engine = in->engine ? in->engine : tg_policy_ev_str(&e, NULL, "engine");
    e.is_ray = e.engine && strcmp(e.engine, "rayjob") == 0;

    for (size_t i = 0; i < snap->nrules; i++) {
        const tg_policy_rule_t *r = &snap->rules[i];
        if (r->enabled && r->action == TG_POLICY_DEFAULT && tg_policy_kind_fill[r->kind] &&
            ev_in_scope(&e, r))
            tg_policy_kind_fill[r->kind](&e, r);
    }
    for (size_t i = 0; i < snap->nrules; i++) {
        const tg_policy_rule_t *r = &snap->rules[i];
        if (r->enabled && r->action != TG_POLICY_DEFAULT && ev_in_scope(&e, r))
            tg_policy_kind_check[r->kind](&e, r);
    }

    if (e.own != 1)
        out->resolved = e.res;
    return json_array_size(out->errors) ? TG_EUNPROCESSABLE : TG_OK;
}

const tg_tauyaml_prov_t *tg_policy_result_provenance(const tg_policy_result_t *r)
{
    return r->prov_copied || !r->prov_in ? &r->prov_copy : r->prov_in;
}

void tg_policy_result_clean(tg_policy_result_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ndv; i++) {
        json_decref(r->dv[i].actual);
        json_decref(r->dv[i].message);
    }
    TG_FREE_NULL(r->dv);
    r->ndv = r->dcap = 0;
    TG_FREE_NULL(r->strs);
    r->slen = r->scap = 0;
    json_decref(r->resolved);
    tg_tauyaml_prov_clean(&r->prov_copy);
    r->prov_in = NULL;
    r->prov_copied = 0;
    json_decref(r->errors);
    json_decref(r->warnings);
    r->resolved = r->errors = r->warnings = NULL;
    tg_policy_snapshot_release(r->snapshot);
    r->snapshot = NULL;
}
