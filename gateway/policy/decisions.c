/* Policy decisions as JSON: a jansson tree for answers and tests, and
 * compact text written directly for storage with the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    static const char hex[] = "0123456789abcdef";
    dec_raw(w, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        dec_raw(w, run, (size_t)(s - run));
        char esc[6] = {'\\', (char)c, 0, 0, 0, 0};
        size_t n = 2;
        if (c < 0x20) {
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            n = 6;
        }
        dec_raw(w, esc, n);
        run = s + 1;
    }
    dec_raw(w, run, (size_t)(s - run));
    dec_raw(w, "\"", 1);
}

static void dec_int(dec_w_t *w, long long v)
{
    char buf[24];
    size_t i = sizeof(buf);
    /* through unsigned, so LLONG_MIN negates without overflow */
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        buf[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        buf[--i] = '-';
    dec_raw(w, buf + i, sizeof(buf) - i);
}

static void dec_json(dec_w_t *w, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        dec_str(w, json_string_value(v));
        return;
    case JSON_INTEGER:
        dec_int(w, json_integer_value(v));
        return;
    case JSON_TRUE:
        dec_lit(w, "true");
        return;
    case JSON_FALSE:
        dec_lit(w, "false");
        return;
    case JSON_NULL:
        dec_lit(w, "null");
        return;
    default: {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        dec_lit(w, s ? s : "null");
        free(s);
    }
    }
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
