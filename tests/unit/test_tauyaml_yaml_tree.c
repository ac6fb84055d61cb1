/* tau.yaml parser: YAML 1.2 scalars as yaml.v3, positions, and the bounds
 * (aliases, depth, duplicates, UTF-8, documents, size). */
#include "pipeline_test_util.h"

#include "tauyaml/yaml_tree.h"

typedef struct yt_res_s {
    tg_rc_e rc;
    tg_tauyaml_doc_t doc;
    tg_tauyaml_diag_t diag;
} yt_res_t;

static void yt_parse(yt_res_t *r, const char *text, size_t len, const tg_tauyaml_limits_t *lim)
{
    tg_tauyaml_limits_t def;
    tg_tauyaml_limits_default(&def);
    tg_tauyaml_doc_init(&r->doc);
    tg_tauyaml_diag_init(&r->diag, NULL, 100);
    r->rc = tg_tauyaml_yaml_parse(text, len, lim ? lim : &def, &r->doc, &r->diag);
    r->diag.pos = r->doc.pos;
}

static void yt_clean(yt_res_t *r)
{
    tg_tauyaml_diag_clean(&r->diag);
    tg_tauyaml_doc_clean(&r->doc);
}

/* The first error of a failed parse, checked for line and message. */
static const json_t *yt_error(yt_res_t *r, unsigned line, const char *needle)
{
    const json_t *e = json_array_get(r->diag.errors, 0);
    if (!e) {
        fprintf(stderr, "expected an error containing \"%s\"\n", needle);
        fail();
    }
    if (line && json_integer_value(json_object_get(e, "line")) != line) {
        char *d = json_dumps(r->diag.errors, JSON_INDENT(1));
        fprintf(stderr, "want line %u: %s\n", line, d);
        free(d);
        fail();
    }
    tu_assert_contains(tu_msg(e), needle);
    return e;
}

static void test_scalar_resolution(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        const char *want; /* JSON text */
    } cases[] = {
        {"on", "\"on\""},
        {"yes", "\"yes\""},
        {"no", "\"no\""},
        {"off", "\"off\""},
        {"y", "\"y\""},
        {"true", "true"},
        {"True", "true"},
        {"TRUE", "true"},
        {"false", "false"},
        {"~", "null"},
        {"null", "null"},
        {"NULL", "null"},
        {"", "null"},
        {"0", "0"},
        {"-3", "-3"},
        {"+7", "7"},
        {"0x1F", "31"},
        {"0o17", "15"},
        {"017", "15"},
        {"0b101", "5"},
        {"1_000", "1000"},
        {"1.5", "1.5"},
        {".5", "0.5"},
        {"1e3", "1000.0"},
        {"-2.5e-1", "-0.25"},
        {"08", "8.0"},
        {"abc", "\"abc\""},
        {"1.2.3", "\"1.2.3\""},
        {"2e-3", "0.002"},
        {"500m", "\"500m\""},
        {"4Gi", "\"4Gi\""},
        {"0x", "\"0x\""},
        {"9223372036854775807", "9223372036854775807"},
        {"2001-12-14", "\"2001-12-14\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int nf = 0;
        json_t *v = tg_tauyaml_yaml_resolve_plain(cases[i].in, strlen(cases[i].in), &nf);
        assert_false(nf);
        assert_non_null(v);
        char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
        if (strcmp(t, cases[i].want) != 0) {
            fprintf(stderr, "%s -> %s, want %s\n", cases[i].in, t, cases[i].want);
            fail();
        }
        free(t);
        json_decref(v);
    }
    int nf = 0;
    assert_null(tg_tauyaml_yaml_resolve_plain(".inf", 4, &nf));
    assert_true(nf);
    json_t *big = tg_tauyaml_yaml_resolve_plain("9223372036854775808", 19, &nf);
    assert_true(json_is_real(big));
    json_decref(big);
}

static void test_quoted_and_tagged(void **state)
{
    (void)state;
    yt_res_t r;
    const char *y = "a: '1'\nb: \"true\"\nc: !!str 12\nd: !!float 3\ne: |\n  x\nf: !!bool true\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_OK);
    assert_string_equal(json_string_value(json_object_get(r.doc.root, "a")), "1");
    assert_string_equal(json_string_value(json_object_get(r.doc.root, "b")), "true");
    assert_string_equal(json_string_value(json_object_get(r.doc.root, "c")), "12");
    assert_true(json_is_real(json_object_get(r.doc.root, "d")));
    assert_string_equal(json_string_value(json_object_get(r.doc.root, "e")), "x\n");
    assert_true(json_is_true(json_object_get(r.doc.root, "f")));
    yt_clean(&r);

    y = "name: x\nimage: !custom foo\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_EUNPROCESSABLE);
    const json_t *e = yt_error(&r, 2, "YAML tag !custom is not supported");
    assert_string_equal(json_string_value(json_object_get(e, "path")), "image");
    yt_clean(&r);

    y = "gpus: !!int two\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_EUNPROCESSABLE);
    yt_error(&r, 1, "does not match its tag !!int");
    yt_clean(&r);
}

static void test_positions(void **state)
{
    (void)state;
    yt_res_t r;
    const char *y = "# comment\nname: x\ncompute:\n  gpus: 2\n  cpu_limit:   1\nruntime:\n  pip:\n"
                    "    - a\n    - b\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_OK);
    const tg_tauyaml_mark_t *m = tg_tauyaml_pos_get(r.doc.pos, "compute.gpus");
    assert_non_null(m);
    assert_int_equal(m->kline, 4);
    assert_int_equal(m->kcol, 3);
    assert_int_equal(m->vline, 4);
    assert_int_equal(m->vcol, 9);
    assert_string_equal(m->raw, "2");
    m = tg_tauyaml_pos_get(r.doc.pos, "compute.cpu_limit");
    assert_non_null(m);
    assert_int_equal(m->vcol, 16);
    assert_string_equal(m->raw, "1");
    m = tg_tauyaml_pos_get(r.doc.pos, "runtime.pip[1]");
    assert_non_null(m);
    assert_int_equal(m->kline, 9);
    assert_int_equal(m->kcol, 7);
    unsigned line, col;
    tg_tauyaml_pos_locate(r.doc.pos, "compute.nothing", 1, &line, &col);
    assert_int_equal(line, 3); /* falls back to the parent key */
    assert_int_equal(col, 1);
    yt_clean(&r);

    /* Keys that are not plain identifiers are quoted in paths. */
    y = "policy:\n  node_selector:\n    tau.azure.com/gpu-class: a100-80gb\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_OK);
    m = tg_tauyaml_pos_get(r.doc.pos, "policy.node_selector[\"tau.azure.com/gpu-class\"]");
    assert_non_null(m);
    assert_int_equal(m->kline, 3);
    yt_clean(&r);
}

static void test_alias_bomb(void **state)
{
    (void)state;
    const char *y =
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
        "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
        "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
        "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
        "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
        "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
    json_t *out = NULL;
    assert_int_equal(tu_run(y, strlen(y), NULL, NULL, NULL, &out), TG_EUNPROCESSABLE);
    const json_t *e = tu_find_error(out, "b[0]", 2);
    tu_assert_contains(tu_msg(e), "YAML aliases (*a) are not supported");
    assert_int_equal(json_integer_value(json_object_get(e, "column")), 8);
    assert_int_equal(tu_nerrors(out), 1);
    json_decref(out);
}

static void test_depth_1000(void **state)
{
    (void)state;
    char *y = malloc(2100);
    size_t n = 0;
    memcpy(y, "name: x\nconfigs: ", 17);
    n = 17;
    for (int i = 0; i < 1000; i++)
        y[n++] = '[';
    for (int i = 0; i < 1000; i++)
        y[n++] = ']';
    y[n++] = '\n';
    json_t *out = NULL;
    assert_int_equal(tu_run(y, n, NULL, NULL, NULL, &out), TG_EUNPROCESSABLE);
    /* The root mapping is level 1 and "configs" level 2, so the error is at
     * the 64th '[': configs followed by 63 [0] segments. */
    char path[400] = "configs";
    for (int i = 0; i < 63; i++)
        memcpy(path + 7 + 3 * i, "[0]", 4);
    const json_t *e = tu_find_error(out, path, 2);
    tu_assert_contains(tu_msg(e), "nested deeper than 64 levels");
    assert_int_equal(json_integer_value(json_object_get(e, "column")), 10 + 63);
    json_decref(out);
    free(y);
}

static void test_duplicate_key(void **state)
{
    (void)state;
    const char *y = "name: x\nengine: job\ncompute:\n  gpus: 1\n  cpu_request: 1\n  gpus: 2\n";
    json_t *out = NULL;
    assert_int_equal(tu_run(y, strlen(y), NULL, NULL, NULL, &out), TG_EUNPROCESSABLE);
    const json_t *e = tu_find_error(out, "compute.gpus", 6);
    tu_assert_contains(tu_msg(e), "mapping key \"gpus\" already defined at line 4");
    assert_int_equal(json_integer_value(json_object_get(e, "column")), 3);
    json_decref(out);
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    const char y[] = "name: x\nengine: job\nentrypoint: tr\xc3\x28in.py\n";
    json_t *out = NULL;
    assert_int_equal(tu_run(y, sizeof(y) - 1, NULL, NULL, NULL, &out), TG_EINVAL);
    const json_t *e = tu_find_error(out, "", 3);
    tu_assert_contains(tu_msg(e), "not valid UTF-8");
    assert_int_equal(json_integer_value(json_object_get(e, "column")), 15);
    json_decref(out);
    /* Overlong encodings and surrogates are invalid too. */
    assert_int_equal(tg_tauyaml_utf8_check("\xc0\xaf", 2), 0);
    assert_int_equal(tg_tauyaml_utf8_check("a\xed\xa0\x80", 4), 1);
    assert_int_equal(tg_tauyaml_utf8_check("\xe2\x82\xac", 3), 3);
}

static void test_empty_document(void **state)
{
    (void)state;
    static const char *const empties[] = {"", "# nothing here\n", "---\n", "~\n", "\n\n"};
    for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
        json_t *out = NULL;
        assert_int_equal(tu_run(empties[i], strlen(empties[i]), NULL, NULL, NULL, &out),
                         TG_EUNPROCESSABLE);
        const json_t *e = tu_find_error(out, "", 0);
        tu_assert_contains(tu_msg(e), "the document is empty");
        json_decref(out);
    }
    json_t *out = NULL;
    assert_int_equal(tu_run("- a\n- b\n", 8, NULL, NULL, NULL, &out), TG_EUNPROCESSABLE);
    tu_assert_contains(tu_msg(tu_find_error(out, "", 1)), "must be a mapping");
    json_decref(out);
}

static void test_two_documents(void **state)
{
    (void)state;
    const char *y = "name: a\nengine: job\n---\nname: b\n";
    json_t *out = NULL;
    assert_int_equal(tu_run(y, strlen(y), NULL, NULL, NULL, &out), TG_EUNPROCESSABLE);
    const json_t *e = tu_find_error(out, "", 3);
    tu_assert_contains(tu_msg(e), "only one YAML document is allowed");
    json_decref(out);
}

static void test_two_mib_body(void **state)
{
    (void)state;
    size_t n = 2 * 1024 * 1024;
    char *y = malloc(n);
    memset(y, '#', n);
    y[n - 1] = '\n';
    json_t *out = NULL;
    assert_int_equal(tu_run(y, n, NULL, NULL, NULL, &out), TG_ETOOLARGE);
    const json_t *e = tu_find_error(out, "", 1);
    tu_assert_contains(tu_msg(e), "the limit is 1048576 bytes");
    json_decref(out);
    free(y);
}

/* A leading byte-order mark is skipped as yaml.v3 skips it; positions count
 * from after it. */
static void test_byte_order_mark(void **state)
{
    (void)state;
    yt_res_t r;
    const char *y = "\xEF\xBB\xBF"
                    "name: x\nengine: job\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_OK);
    assert_string_equal(json_string_value(json_object_get(r.doc.root, "name")), "x");
    const tg_tauyaml_mark_t *m = tg_tauyaml_pos_get(r.doc.pos, "name");
    assert_non_null(m);
    assert_int_equal(m->kline, 1);
    assert_int_equal(m->kcol, 1);
    yt_clean(&r);
    /* Only a leading one: further on it is content libyaml refuses. */
    y = "name: x\n\xEF\xBB\xBF"
        "engine: job\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_not_equal(r.rc, TG_OK);
    yt_clean(&r);
}

/* A tab used for indentation is named as such (libyaml's own words for
 * it, "found character that cannot start any token", never say "tab"). */
static void test_tab_indentation(void **state)
{
    (void)state;
    static const char *const tabbed[] = {"a:\n\t- b\n", "name: x\n\tengine: job\n",
                                         "compute:\n\tgpus: 1\n"};
    for (size_t i = 0; i < sizeof(tabbed) / sizeof(tabbed[0]); i++) {
        yt_res_t r;
        yt_parse(&r, tabbed[i], strlen(tabbed[i]), NULL);
        assert_int_equal(r.rc, TG_EINVAL);
        const json_t *e = yt_error(&r, 2, "a tab character is not allowed here");
        assert_int_equal(json_integer_value(json_object_get(e, "column")), 1);
        assert_int_equal(json_array_size(r.diag.errors), 1);
        yt_clean(&r);
    }
    /* A tab inside a value is ordinary text. */
    yt_res_t r;
    yt_parse(&r, "name: x\tand y\n", strlen("name: x\tand y\n"), NULL);
    assert_int_equal(r.rc, TG_OK);
    yt_clean(&r);
}

/* What is wrong inside a well-formed document is 422; a syntax error
 * anywhere makes the text "not YAML" (400), even after such a problem, and
 * is then the only error reported. */
static void test_content_errors_and_syntax(void **state)
{
    (void)state;
    yt_res_t r;
    const char *y = "a: &x 1\nb: *x\nc: [1, 2\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_EINVAL);
    yt_error(&r, 0, "YAML syntax error");
    assert_int_equal(json_array_size(r.diag.errors), 1);
    yt_clean(&r);
    y = "a: 1\na: 2\nb: [1,\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_EINVAL);
    assert_int_equal(json_array_size(r.diag.errors), 1);
    yt_clean(&r);
    y = "a: 1\na: 2\nb: *nowhere\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_not_equal(r.rc, TG_OK);
    yt_clean(&r);
}

static void test_syntax_error_and_misc(void **state)
{
    (void)state;
    yt_res_t r;
    const char *y = "name: x\ncompute:\n  gpus: [1, 2\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_EINVAL);
    yt_error(&r, 0, "YAML syntax error");
    yt_clean(&r);

    y = "? [a]\n: b\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_EUNPROCESSABLE);
    yt_error(&r, 1, "mapping keys must be plain scalars");
    yt_clean(&r);

    y = "a: \"x\\0y\"\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_EUNPROCESSABLE);
    yt_error(&r, 1, "NUL");
    yt_clean(&r);

    y = "a: .inf\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_EUNPROCESSABLE);
    yt_error(&r, 1, "non-finite");
    yt_clean(&r);

    tg_tauyaml_limits_t lim;
    tg_tauyaml_limits_default(&lim);
    lim.max_nodes = 10;
    y = "a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
    yt_parse(&r, y, strlen(y), &lim);
    assert_int_equal(r.rc, TG_EUNPROCESSABLE);
    yt_error(&r, 1, "too many nodes");
    yt_clean(&r);

    /* Anchors without aliases are harmless and accepted. */
    y = "a: &x 1\n";
    yt_parse(&r, y, strlen(y), NULL);
    assert_int_equal(r.rc, TG_OK);
    yt_clean(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_resolution),
        cmocka_unit_test(test_quoted_and_tagged),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_alias_bomb),
        cmocka_unit_test(test_depth_1000),
        cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_empty_document),
        cmocka_unit_test(test_two_documents),
        cmocka_unit_test(test_two_mib_body),
        cmocka_unit_test(test_syntax_error_and_misc),
        cmocka_unit_test(test_byte_order_mark),
        cmocka_unit_test(test_tab_indentation),
        cmocka_unit_test(test_content_errors_and_syntax),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
