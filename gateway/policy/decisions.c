/* Policy decisions as JSON: a jansson tree for answers and tests, and
 * compact text written directly for storage with the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_canon.h"
#include "policy/eval.h"

static const char *const dec_outcomes[4] = {"allow", "deny", "warn", "default"};

json_t *tg_policy_result_decisions(const tg_policy_result_t *r)
{
    json_t *arr = json_array();
    for (size_t i = 0; r && i < r->ndv; i++) {
        const tg_policy_decision_t *d = &r->dv[i];
        json_t *o = d->rule->decision_base ? json_copy(d->rule->decision_base) : json_object();
        json_object_set_new_nocheck(o, "outcome", json_string(dec_outcomes[d->outcome]));
        json_object_set_new_nocheck(o, "path", json_string(r->strs ? r->strs + d->path : ""));
        json_object_set_new_nocheck(o, "line", json_integer(d->line));
        json_object_set_new_nocheck(o, "column", json_integer(d->column));
        json_object_set_new_nocheck(o, "actual",
                                    d->has_int
                                        ? json_integer(d->iactual)
                                        : (d->actual ? json_incref(d->actual) : json_null()));
        json_object_set_nocheck(o, "expected", (json_t *)d->rule->param);
        if (d->message)
            json_object_set_nocheck(o, "message", d->message);
        json_array_append_new(arr, o);
    }
    return arr;
}

size_t tg_policy_result_ndecisions(const tg_policy_result_t *r)
{
    return r ? r->ndv : 0;
}

json_t *tg_policy_result_evidence(const tg_policy_result_t *r)
{
    return json_pack("{s:s, s:I, s:o}", "digest", r ? r->policy_digest : "", "generation",
                     (json_int_t)(r ? r->generation : 0), "decisions",
                     tg_policy_result_decisions(r));
}

/* ---- text -------------------------------------------------------------------------------- */

typedef struct dec_w_s {
    tg_buf_t *b;
    tg_rc_e rc;
} dec_w_t;

static void dec_raw(dec_w_t *w, const char *s, size_t n)
{
    if (w->rc == TG_OK)
        w->rc = tg_buf_append(w->b, s, n);
}

static void dec_lit(dec_w_t *w, const char *s)
{
    dec_raw(w, s, strlen(s));
}

/* A JSON string; the input is UTF-8 (paths and messages come from the spec
 * and the policy, both validated). */
static void dec_str(dec_w_t *w, const char *s)
{
    if (w->rc == TG_OK)
        w->rc = tg_json_canon_string(s, strlen(s), w->b);
}

static void dec_int(dec_w_t *w, long long v)
{
    if (w->rc == TG_OK)
        w->rc = tg_json_canon_int(v, w->b);
}

/* An actual value from the spec, as the canonical writer spells it. */
static void dec_json(dec_w_t *w, const json_t *v)
{
    if (w->rc == TG_OK)
        w->rc = tg_json_canon(v, 17, w->b);
}

static void dec_array(dec_w_t *w, const tg_policy_result_t *r);

tg_rc_e tg_policy_result_evidence_text(const tg_policy_result_t *r, tg_buf_t *out)
{
    dec_w_t w = {.b = out, .rc = TG_OK};
    dec_lit(&w, "{\"digest\":");
    dec_str(&w, r ? r->policy_digest : "");
    dec_lit(&w, ",\"generation\":");
    dec_int(&w, r ? r->generation : 0);
    dec_lit(&w, ",\"decisions\":");
    dec_array(&w, r);
    dec_lit(&w, "}");
    return w.rc;
}

tg_rc_e tg_policy_result_decisions_text(const tg_policy_result_t *r, tg_buf_t *out)
{
    dec_w_t w = {.b = out, .rc = TG_OK};
    dec_array(&w, r);
    return w.rc;
}

static void dec_array(dec_w_t *w, const tg_policy_result_t *r)
{
    dec_lit(w, "[");
    for (size_t i = 0; r && i < r->ndv; i++) {
        const tg_policy_decision_t *d = &r->dv[i];
        if (i)
            dec_raw(w, ",", 1);
        if (d->rule->decision_text)
            dec_raw(w, d->rule->decision_text, d->rule->decision_text_len);
        else
            dec_lit(w, "{\"rule_id\":\"\"");
        dec_lit(w, ",\"outcome\":\"");
        dec_lit(w, dec_outcomes[d->outcome]);
        dec_lit(w, "\",\"path\":");
        dec_str(w, r->strs ? r->strs + d->path : "");
        dec_lit(w, ",\"line\":");
        dec_int(w, d->line);
        dec_lit(w, ",\"column\":");
        dec_int(w, d->column);
        dec_lit(w, ",\"actual\":");
        if (d->has_int)
            dec_int(w, d->iactual);
        else if (d->actual)
            dec_json(w, d->actual);
        else
            dec_lit(w, "null");
        if (d->message) {
            dec_lit(w, ",\"message\":");
            dec_str(w, json_string_value(d->message));
        }
        dec_raw(w, "}", 1);
    }
    dec_lit(w, "]");
}
