/* Unit tests: string escaping of the canonical JSON writer (core/json_canon.c)
 * and the manifest writer (core/json_writer.c), which copy plain text a word at a
 * time, against a byte-at-a-time reference on strings dense in escapes; and
 * the provenance annotation, written escaped in one pass, against the
 * canonical text escaped by the manifest writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "core/json_canon.h"
#include "core/json_writer.h"
#include "render/metadata.h"
#include "tauyaml/prov.h"

/* The escapes of every JSON writer (core/json_canon.h's tg_json_escape). */
static size_t ref_escape(unsigned char c, char *o)
{
    const char *two = c == '"'    ? "\\\""
                      : c == '\\' ? "\\\\"
                      : c == '\n' ? "\\n"
                      : c == '\t' ? "\\t"
                      : c == '\r' ? "\\r"
                      : c == '\b' ? "\\b"
                      : c == '\f' ? "\\f"
                                  : NULL;
    if (two) {
        memcpy(o, two, 2);
        return 2;
    }
    if (c < 0x20) {
        snprintf(o, 7, "\\u%04x", c);
        return 6;
    }
    o[0] = (char)c;
    return 1;
}

static char *ref_quote(const char *s, size_t n)
{
    char *out = malloc(6 * n + 3), *o = out;
    *o++ = '"';
    for (size_t i = 0; i < n; i++)
        o += ref_escape((unsigned char)s[i], o);
    *o++ = '"';
    *o = '\0';
    return out;
}

/* A string of n bytes drawn from a small alphabet heavy in escapes, plus
 * one two-byte UTF-8 character (high bytes are written as they are). */
static void fill(char *s, size_t n, unsigned *seed)
{
    static const char alpha[] = "ab\"\\\n\t\r\b\f\x01\x1f /:{}";
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        unsigned r = (*seed >> 16) % 24;
        if (r < sizeof(alpha) - 1)
            s[i] = alpha[r];
        else if (i + 1 < n) {
            s[i++] = (char)0xc3;
            s[i] = (char)0xa9;
        } else {
            s[i] = 'z';
        }
    }
}

static void test_escapes_match_byte_at_a_time(void **state)
{
    (void)state;
    unsigned seed = 7;
    char s[80];
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)round % sizeof(s);
        fill(s, n, &seed);

        tg_buf_t b;
        tg_buf_init(&b, 1 << 20);
        json_t *js = json_stringn_nocheck(s, n);
        assert_int_equal(tg_json_canon(js, 15, &b), TG_OK);
        char *want = ref_quote(s, n);
        assert_string_equal(b.data, want);
        free(want);
        json_decref(js);

        tg_buf_reset(&b);
        tg_jw_t w;
        tg_jw_init(&w, &b);
        tg_jw_obj(&w);
        tg_jw_kstrn(&w, s, n, s, n);
        tg_jw_keyn(&w, "k", 1);
        tg_jw_strn(&w, s, n);
        tg_jw_end_obj(&w);
        assert_int_equal(w.rc, TG_OK);
        char *q = ref_quote(s, n);
        size_t ql = strlen(q);
        char *obj = malloc(3 * ql + 16);
        snprintf(obj, 3 * ql + 16, "{%s:%s,\"k\":%s}", q, q, q);
        assert_string_equal(b.data, obj);
        free(obj);
        free(q);
        tg_buf_clean(&b);
    }
}

/* {"p": <provenance annotation>, "z": "after"} into b; the writer's rc. */
static tg_rc_e write_annotation(tg_buf_t *b, const tg_tauyaml_prov_t *prov)
{
    tg_jw_t w;
    tg_jw_init(&w, b);
    tg_jw_obj(&w);
    tg_jw_kfill(&w, "p", tg_render_provenance_text, prov);
    tg_jw_kstr(&w, "z", "after");
    tg_jw_end_obj(&w);
    return w.rc;
}

/* A provenance table with paths and sources dense in escapes, many of
 * them sharing prefixes (one path often the start of another), written as
 * the annotation is, gives what tg_jw_kstr of the canonical text of the
 * same object gives: the table's order is canon's key order and the one-pass
 * escaping is the two-pass one, whether the buffer has room, must grow or
 * has a ceiling too close for the one-pass path. */
static void test_provenance_text_matches_kstr_of_canon(void **state)
{
    (void)state;
    unsigned seed = 11;
    for (int round = 0; round < 200; round++) {
        tg_tauyaml_prov_t prov;
        tg_tauyaml_prov_init(&prov);
        char path[24], src[24];
        for (int i = 0; i < 40; i++) {
            size_t n = 1 + (size_t)(i * 7 + round) % (sizeof(path) - 1);
            fill(path, n, &seed);
            path[n] = '\0';
            fill(src, n / 2, &seed);
            src[n / 2] = '\0';
            /* the same path again now and then: its last source stays */
            if (i % 9 == 8)
                tg_tauyaml_prov_set_path(&prov, path, n, "earlier");
            tg_tauyaml_prov_set_path(&prov, path, n, src);
        }
        json_t *v = tg_tauyaml_prov_json(&prov);
        tg_buf_t text, want, got;
        tg_buf_init(&text, 1 << 20);
        tg_buf_init(&want, 1 << 20);
        assert_int_equal(json_object_size(v), prov.n);
        assert_int_equal(tg_json_canon(v, 15, &text), TG_OK);

        tg_jw_t w;
        tg_jw_init(&w, &want);
        tg_jw_obj(&w);
        tg_jw_kstr(&w, "p", text.data);
        tg_jw_kstr(&w, "z", "after");
        tg_jw_end_obj(&w);
        assert_int_equal(w.rc, TG_OK);

        /* room to spare (round 0 mod 3), grown on the way (1), or a
         * ceiling of exactly the text's length, under the escapes' worst
         * case, so the piece-by-piece path writes it (2) */
        tg_buf_init(&got, round % 3 == 2 ? want.len : 1 << 20);
        if (round % 3 == 0)
            assert_int_equal(tg_buf_reserve(&got, 1 << 16), TG_OK);
        assert_int_equal(write_annotation(&got, &prov), TG_OK);
        assert_string_equal(got.data, want.data);
        if (round % 3 == 2) {
            /* one byte less: refused, never written past the ceiling */
            tg_buf_t small;
            tg_buf_init(&small, want.len - 1);
            assert_int_equal(write_annotation(&small, &prov), TG_ETOOLARGE);
            assert_true(small.len <= want.len - 1);
            tg_buf_clean(&small);
        }

        tg_buf_clean(&text);
        tg_buf_clean(&want);
        tg_buf_clean(&got);
        json_decref(v);
        tg_tauyaml_prov_clean(&prov);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes_match_byte_at_a_time),
        cmocka_unit_test(test_provenance_text_matches_kstr_of_canon),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
