/* Unit tests: http/multipart.c, the multipart/form-data parser behind run
 * submissions (tests/fuzz/fuzz_multipart.c fuzzes the same functions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http/multipart.h"

#define MAXP 8

static int parse(const char *body, tg_multipart_part_t *parts, size_t *n, const char **why)
{
    tg_arena_t *a = tg_arena_new(4096);
    tg_multipart_req_t r = {.boundary = "XyZ",
                            .body = body,
                            .len = strlen(body),
                            .arena = a,
                            .parts = parts,
                            .max_parts = MAXP};
    int rc = tg_multipart_parse(&r, n, why);
    /* names live in the arena: check them before it goes */
    static char names[MAXP][64], files[MAXP][64];
    for (size_t i = 0; rc == 0 && i < *n; i++) {
        snprintf(names[i], sizeof(names[i]), "%s", parts[i].name ? parts[i].name : "(none)");
        snprintf(files[i], sizeof(files[i]), "%s", parts[i].filename ? parts[i].filename : "");
        parts[i].name = names[i];
        parts[i].filename = files[i];
    }
    tg_arena_free(a);
    return rc;
}

static void test_boundary_parameter(void **state)
{
    (void)state;
    char b[80];
    const char *why = NULL;
    assert_int_equal(tg_multipart_boundary("multipart/form-data; boundary=abc", b, sizeof(b), &why),
                     0);
    assert_string_equal(b, "abc");
    assert_int_equal(tg_multipart_boundary("multipart/form-data;charset=utf-8;BOUNDARY=\"a b:c\"",
                                           b, sizeof(b), &why),
                     0);
    assert_string_equal(b, "a b:c");
    static const char *const bad[] = {
        "multipart/form-data",
        "multipart/form-data; boundary=",
        "multipart/form-data; boundary=\"abc",
        "multipart/form-data; boundary=\"ends in space \"",
        "multipart/form-data; boundary=a\"b",
        "multipart/form-data; xboundary=abc",
        "multipart/form-data; boundary=\"a\x01b\"",
        "multipart/form-data; boundary="
        "01234567890123456789012345678901234567890123456789012345678901234567890",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (tg_multipart_boundary(bad[i], b, sizeof(b), &why) == 0)
            fail_msg("'%s' gave boundary '%s'", bad[i], b);
}

static void test_parts(void **state)
{
    (void)state;
    tg_multipart_part_t parts[MAXP];
    size_t n = 0;
    const char *why = NULL;
    const char *body = "preamble\r\n"
                       "--XyZ\r\n"
                       "Content-Disposition: form-data; name=\"spec\"; filename=\"tau.yaml\"\r\n"
                       "Content-Type: application/yaml\r\n"
                       "\r\n"
                       "name: demo\r\n"
                       "--XyZ  \r\n" /* transport padding */
                       "content-disposition: FORM-DATA; name=file; filename=\"a\\\"b.py\"\r\n"
                       "\r\n"
                       "\r\n--X not the delimiter\r\n"
                       "--XyZ--\r\nepilogue";
    assert_int_equal(parse(body, parts, &n, &why), 0);
    assert_int_equal(n, 2);
    assert_string_equal(parts[0].name, "spec");
    assert_string_equal(parts[0].filename, "tau.yaml");
    assert_int_equal(parts[0].len, strlen("name: demo"));
    assert_string_equal(parts[1].name, "file");
    assert_string_equal(parts[1].filename, "a\"b.py");
    assert_int_equal(parts[1].len, strlen("\r\n--X not the delimiter"));
    /* the body may open with the delimiter; an empty part is fine */
    assert_int_equal(parse("--XyZ\r\nContent-Disposition: form-data; name=e\r\n\r\n\r\n--XyZ--",
                           parts, &n, &why),
                     0);
    assert_int_equal(n, 1);
    assert_int_equal(parts[0].len, 0);
}

static void test_malformed_bodies_are_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "no delimiter at all",
        "--XyZ",                                               /* nothing after the delimiter */
        "--XyZx\r\n\r\n--XyZ--",                               /* junk after the delimiter */
        "--XyZ\r\nContent-Disposition: form-data; name=a\r\n", /* no end of headers */
        "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nunterminated",
        "--XyZ\r\n\r\nno disposition\r\n--XyZ--",
        "--XyZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: attachment; name=a\r\n\r\nx\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\nx\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=a; name=b\r\n\r\nx\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=a\r\nContent-Disposition: form-data; "
        "name=b\r\n\r\nx\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data;\r\n name=a\r\n\r\nx\r\n--XyZ--", /* folded */
        "--XyZ\r\nno colon here\r\n\r\nx\r\n--XyZ--",
        "--XyZ\r\nBad Name: x\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--XyZ--",
        "--XyZ\r\nContent-Disposition: form-data; name=\r\n\r\nx\r\n--XyZ--",
    };
    tg_multipart_part_t parts[MAXP];
    size_t n;
    const char *why;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why = NULL;
        if (parse(bad[i], parts, &n, &why) == 0)
            fail_msg("body %zu parsed", i);
        assert_non_null(why);
    }
    /* more parts than the caller allows */
    char many[2048] = "";
    for (int i = 0; i <= MAXP; i++)
        strcat(many, "--XyZ\r\nContent-Disposition: form-data; name=f\r\n\r\nx\r\n");
    strcat(many, "--XyZ--");
    assert_int_equal(parse(many, parts, &n, &why), -1);
    assert_non_null(strstr(why, "too many parts"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boundary_parameter),
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_malformed_bodies_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
