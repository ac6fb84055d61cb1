/* core/base64: RFC 4648 vectors, and the
 * strictness every decoder of the project relies on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};

static void round_trip(tg_b64_e alphabet, const char *const *enc)
{
    for (size_t i = 0; i < N(plain); i++) {
        char *e = tg_base64_encode(plain[i], strlen(plain[i]), alphabet);
        assert_string_equal(e, enc[i]);
        assert_int_equal(strlen(e), tg_base64_encoded_len(strlen(plain[i]), alphabet));
        free(e);
        unsigned char *d = NULL;
        size_t n = 0;
        assert_int_equal(tg_base64_decode(enc[i], strlen(enc[i]), alphabet, &d, &n), 0);
        assert_int_equal(n, strlen(plain[i]));
        assert_memory_equal(d, plain[i], n);
        assert_int_equal(d[n], '\0');
        free(d);
    }
}

static void refused(tg_b64_e alphabet, const char *const *bad, size_t nbad)
{
    for (size_t i = 0; i < nbad; i++) {
        unsigned char *d = (unsigned char *)"x";
        size_t n = 1;
        assert_int_equal(tg_base64_decode(bad[i], strlen(bad[i]), alphabet, &d, &n), -1);
        assert_null(d);
        assert_int_equal(n, 0);
        assert_false(tg_base64_valid(bad[i], strlen(bad[i]), alphabet, NULL));
    }
}

static void test_standard(void **state)
{
    (void)state;
    const char *enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    round_trip(TG_B64_STD, enc);
    /* padding is optional on input */
    unsigned char *d = NULL;
    size_t n = 0;
    assert_int_equal(tg_base64_decode("Zm9vYg", 6, TG_B64_STD, &d, &n), 0);
    assert_int_equal(n, 4);
    assert_memory_equal(d, "foob", 4);
    free(d);
    const unsigned char bytes[] = {0xfb, 0xff, 0xbf};
    char *e = tg_base64_encode(bytes, 3, TG_B64_STD);
    assert_string_equal(e, "+/+/");
    free(e);
    /* wrong padding, the other alphabet, whitespace, impossible lengths,
     * non-zero unused bits (a second spelling of "f") */
    const char *bad[] = {"Zg=",   "Zg===",  "Z===", "Zm9vY===", "=",    "Zm9v-g", "Zm9v_g",
                         "Zm 9v", "Zm\n9v", "Z",    "Zm9vY",    "Zh==", "Zm9=",   "Zg=A"};
    refused(TG_B64_STD, bad, N(bad));
}

static void test_url(void **state)
{
    (void)state;
    const char *enc[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
    round_trip(TG_B64_URL, enc);
    const unsigned char bytes[] = {0xfb, 0xff, 0xbf};
    char *e = tg_base64_encode(bytes, 3, TG_B64_URL);
    assert_string_equal(e, "-_-_");
    free(e);
    /* JOSE never pads */
    const char *bad[] = {"Zg==", "Zm9v+g", "Zm9v/g", "Z", "Zm9vY", "Zm 9v", "Zh", "Zm9", "Zm\n9v"};
    refused(TG_B64_URL, bad, N(bad));
}

static void test_bounded_buffers(void **state)
{
    (void)state;
    char small[4], ok[5];
    assert_int_equal(tg_base64_encode_to("foo", 3, TG_B64_URL, small, sizeof(small)), (size_t)-1);
    assert_int_equal(tg_base64_encode_to("foo", 3, TG_B64_URL, ok, sizeof(ok)), 4);
    assert_string_equal(ok, "Zm9v");
    char pad[9];
    assert_int_equal(tg_base64_encode_to("f", 1, TG_B64_STD, pad, 4), (size_t)-1);
    assert_int_equal(tg_base64_encode_to("f", 1, TG_B64_STD, pad, 5), 4);
    unsigned char out[3] = {0, 0, 0};
    size_t n = 9;
    /* exactly the decoded size fits; one less is refused untouched */
    assert_int_equal(tg_base64_decode_to("Zm9v", 4, TG_B64_STD, out, 2, &n), -1);
    assert_int_equal(out[0], 0);
    assert_int_equal(n, 9);
    assert_int_equal(tg_base64_decode_to("Zm9v", 4, TG_B64_STD, out, 3, &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(out, "foo", 3);
    size_t want = 0;
    assert_true(tg_base64_valid("Zm9vYg==", 8, TG_B64_STD, &want));
    assert_int_equal(want, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standard),
        cmocka_unit_test(test_url),
        cmocka_unit_test(test_bounded_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
