/* core/digest: FIPS 180-2 SHA-256 vectors, whole and in pieces, and hex. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/digest.h"

static void test_sha256(void **state)
{
    (void)state;
    char hex[65];
    tg_sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    tg_sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* pieces give the digest of the whole */
    tg_sha256_t s;
    tg_sha256_init(&s);
    tg_sha256_update(&s, "a", 1);
    tg_sha256_update(&s, "bc", 2);
    char pieces[65];
    tg_sha256_final_hex(&s, pieces);
    assert_string_equal(pieces, hex);
    assert_null(s.ctx);
    unsigned char raw[TG_SHA256_LEN];
    tg_sha256("abc", 3, raw);
    char again[65];
    tg_hex_encode(raw, sizeof(raw), again);
    assert_string_equal(again, hex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
