/* auth/pat: personal access tokens: their shape, detection and hash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "auth/jwt.h"
#include "auth/pat.h"
#include "core/status.h"

/* ---- personal access tokens ---------------------------------------------- */

static void test_pat(void **state)
{
    (void)state;
    char a[TG_AUTH_PAT_BUFSIZE], b[TG_AUTH_PAT_BUFSIZE];
    assert_int_equal(tg_auth_pat_generate(a, sizeof(a)), TG_OK);
    assert_int_equal(tg_auth_pat_generate(b, sizeof(b)), TG_OK);
    assert_int_equal(strlen(a), TG_AUTH_PAT_LEN);
    assert_int_equal(strncmp(a, "tgp_", 4), 0);
    assert_string_not_equal(a, b);
    assert_true(tg_auth_pat_detect(a, strlen(a)));
    assert_true(tg_auth_pat_well_formed(a, strlen(a)));
    /* What the request path sees: a bearer value it must route to the DB. */
    const char *tok = NULL;
    size_t len = 0;
    char hdr[80];
    snprintf(hdr, sizeof(hdr), "Bearer %s", a);
    assert_int_equal(tg_auth_bearer_token(hdr, 0, &tok, &len), TG_AUTH_OK);
    assert_true(tg_auth_pat_detect(tok, len));

    assert_false(tg_auth_pat_detect("eyJhbGciOi", 10));
    assert_false(tg_auth_pat_detect("tgp", 3));
    assert_false(tg_auth_pat_detect(NULL, 0));
    assert_true(tg_auth_pat_detect("tgp_short", 9));
    assert_false(tg_auth_pat_well_formed("tgp_short", 9));
    char c[TG_AUTH_PAT_BUFSIZE];
    memcpy(c, a, sizeof(c));
    c[10] = '+';
    assert_false(tg_auth_pat_well_formed(c, strlen(c)));

    char small[10] = "x";
    assert_int_equal(tg_auth_pat_generate(small, sizeof(small)), TG_EINVAL);
    assert_string_equal(small, "");

    /* sha256("abc") */
    char h[TG_AUTH_PAT_HASH_BUFSIZE];
    assert_int_equal(tg_auth_pat_hash("abc", 3, h, sizeof(h)), TG_OK);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    char h2[TG_AUTH_PAT_HASH_BUFSIZE];
    assert_int_equal(tg_auth_pat_hash(a, strlen(a), h, sizeof(h)), TG_OK);
    assert_int_equal(tg_auth_pat_hash(a, strlen(a), h2, sizeof(h2)), TG_OK);
    assert_string_equal(h, h2);
    assert_int_equal(tg_auth_pat_hash(b, strlen(b), h2, sizeof(h2)), TG_OK);
    assert_string_not_equal(h, h2);
    assert_int_equal(tg_auth_pat_hash("abc", 3, h, 64), TG_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
