/* Unit tests: core/quantity.c against the cases of Kubernetes' own
 * k8s.io/apimachinery pkg/api/resource quantity_test.go (TestQuantityParse,
 * TestQuantityString, TestQuantityParseEmit, TestParseQuantity,
 * TestQuantityCmp), translated to this API, plus the forms that let a
 * per-pod limit be bypassed (issue #17). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/quantity.h"

#define DSI TG_QTY_DECIMAL_SI
#define BSI TG_QTY_BINARY_SI
#define DEX TG_QTY_DECIMAL_EXP

/* Kubernetes' decQuantity(value, scale, format): value * 10^scale. */
static tg_qty_t dq(int64_t value, int scale, tg_qty_format_e fmt)
{
    tg_qty_t q = {0, 0, 0, fmt};
    q.neg = value < 0;
    q.coef = value < 0 ? (unsigned __int128)(-(value + 1)) + 1 : (unsigned __int128)value;
    q.exp10 = scale;
    while (q.coef && q.coef % 10 == 0) {
        q.coef /= 10;
        q.exp10++;
    }
    if (!q.coef)
        q.exp10 = 0;
    return q;
}

static tg_qty_t parsed(const char *s)
{
    tg_qty_t q;
    tg_qty_rc_e rc = tg_qty_parse(s, &q);
    if (rc != TG_QTY_OK)
        fail_msg("'%s' did not parse (rc %d)", s, rc);
    return q;
}

static const char *text(const tg_qty_t *q, char *buf, size_t n)
{
    assert_int_equal(tg_qty_format(q, buf, n), TG_QTY_OK);
    return buf;
}

static const struct {
    const char *in;
    int64_t value;
    int scale;
    tg_qty_format_e fmt;
} parse_table[] = {
    {"0", 0, 0, DSI},
    {"0n", 0, 0, DSI},
    {"0u", 0, 0, DSI},
    {"0m", 0, 0, DSI},
    {"0Ki", 0, 0, BSI},
    {"0k", 0, 0, DSI},
    {"0Mi", 0, 0, BSI},
    {"0M", 0, 0, DSI},
    {"0Gi", 0, 0, BSI},
    {"0G", 0, 0, DSI},
    {"0Ti", 0, 0, BSI},
    {"0T", 0, 0, DSI},
    {"1", 1, 0, DSI},
    {"1Ki", 1024, 0, BSI},
    {"8Ki", 8 * 1024, 0, BSI},
    {"7Mi", 7LL * 1024 * 1024, 0, BSI},
    {"6Gi", 6LL * 1024 * 1024 * 1024, 0, BSI},
    {"5Ti", 5LL * 1024 * 1024 * 1024 * 1024, 0, BSI},
    {"4Pi", 4LL * 1024 * 1024 * 1024 * 1024 * 1024, 0, BSI},
    {"3Ei", 3LL * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0, BSI},
    {"10Ti", 10LL * 1024 * 1024 * 1024 * 1024, 0, BSI},
    {"100Ti", 100LL * 1024 * 1024 * 1024 * 1024, 0, BSI},
    {"5n", 5, -9, DSI},
    {"4u", 4, -6, DSI},
    {"3m", 3, -3, DSI},
    {"9", 9, 0, DSI},
    {"8k", 8, 3, DSI},
    {"50k", 5, 4, DSI},
    {"7M", 7, 6, DSI},
    {"6G", 6, 9, DSI},
    {"5T", 5, 12, DSI},
    {"40T", 4, 13, DSI},
    {"300T", 3, 14, DSI},
    {"2P", 2, 15, DSI},
    {"1E", 1, 18, DSI},
    {"1E-3", 1, -3, DEX},
    {"1e3", 1, 3, DEX},
    {"1E6", 1, 6, DEX},
    {"1e9", 1, 9, DEX},
    {"1E12", 1, 12, DEX},
    {"1e15", 1, 15, DEX},
    {"1E18", 1, 18, DEX},
    {"1e14", 1, 14, DEX},
    {"1e13", 1, 13, DEX},
    {"100.035k", 100035, 0, DSI},
    {"0.001", 1, -3, DSI},
    {"0.0005k", 5, -1, DSI},
    {"0.005", 5, -3, DSI},
    {"0.05", 5, -2, DSI},
    {"0.5", 5, -1, DSI},
    {"0.00050k", 5, -1, DSI},
    {"0.00500", 5, -3, DSI},
    {"0.05000", 5, -2, DSI},
    {"0.50000", 5, -1, DSI},
    {"0.5e0", 5, -1, DEX},
    {"0.5e-1", 5, -2, DEX},
    {"0.5e-2", 5, -3, DEX},
    {"10.035M", 10035, 3, DSI},
    {"1.2e3", 12, 2, DEX},
    {"1.3E+6", 13, 5, DEX},
    {"1.40e9", 14, 8, DEX},
    {"1.53E12", 153, 10, DEX},
    {"1.6e15", 16, 14, DEX},
    {"1.7E18", 17, 17, DEX},
    {"9.01", 901, -2, DSI},
    {"8.1k", 81, 2, DSI},
    {"7.123456M", 7123456, 0, DSI},
    {"6.987654321G", 6987654321LL, 0, DSI},
    {"5.444T", 5444, 9, DSI},
    {"40.1T", 401, 11, DSI},
    {"300.2T", 3002, 11, DSI},
    {"2.5P", 25, 14, DSI},
    {"1.01E", 101, 16, DSI},
    /* things that saturate or round (up, to a nano-unit) */
    {"3.001n", 4, -9, DSI},
    {"1.1E-9", 2, -9, DEX},
    {"0.0000000001", 1, -9, DSI},
    {"0.0000000005", 1, -9, DSI},
    {"0.00000000050", 1, -9, DSI},
    {"0.5e-9", 1, -9, DEX},
    {"0.9n", 1, -9, DSI},
    {"0.00000012345", 124, -9, DSI},
    {"0.00000012354", 124, -9, DSI},
    {"9Ei", INT64_MAX, 0, BSI},
    {"9223372036854775807Ki", INT64_MAX, 0, BSI},
    {"12E", 12, 18, DSI},
    /* fractional binary */
    {"100.035Ki", 10243584, -2, BSI},
    {"0.5Mi", 524288, 0, BSI},
    {"0.05Gi", 536870912, -1, BSI},
    {"0.025Ti", 274877906944LL, -1, BSI},
    /* "things written by trolls" */
    {"0.000000000001Ki", 2, -9, DSI},
    {".001", 1, -3, DSI},
    {".0001k", 100, -3, DSI},
    {"1.", 1, 0, DSI},
    {"1.G", 1, 9, DSI},
};

static void check_parse(const char *in, tg_qty_t want, int negate)
{
    tg_qty_t got = parsed(in);
    if (negate)
        want.neg = want.coef != 0;
    if (tg_qty_cmp(&got, &want) != 0) {
        char a[TG_QTY_MAX_TEXT], b[TG_QTY_MAX_TEXT];
        fail_msg("'%s': got %s, want %s", in, text(&got, a, sizeof(a)), text(&want, b, sizeof(b)));
    }
    if (got.format != want.format)
        fail_msg("'%s': notation %d, want %d", in, got.format, want.format);
}

static void test_parse_matches_kubernetes(void **state)
{
    (void)state;
    char buf[64];
    for (size_t i = 0; i < sizeof(parse_table) / sizeof(parse_table[0]); i++) {
        tg_qty_t want = dq(parse_table[i].value, parse_table[i].scale, parse_table[i].fmt);
        check_parse(parse_table[i].in, want, 0);
        snprintf(buf, sizeof(buf), "-%s", parse_table[i].in);
        check_parse(buf, want, 1);
        snprintf(buf, sizeof(buf), "+%s", parse_table[i].in);
        check_parse(buf, want, 0);
    }
}

static void test_parse_refuses_what_kubernetes_refuses(void **state)
{
    (void)state;
    static const char *const invalid[] = {
        /* Kubernetes' own list */
        "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", " 1", "1 ",
        /* and the empty string, a suffix alone, a dangling exponent */
        "", "e3", "1e", "1E+", "1ki", "1KI", "1Kib", "--1", "1e3.5", "1k1", "1\n"};
    tg_qty_t q;
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
        if (tg_qty_parse(invalid[i], &q) != TG_QTY_ESYNTAX)
            fail_msg("'%s' parsed", invalid[i]);
    assert_int_equal(tg_qty_parse(NULL, &q), TG_QTY_ESYNTAX);
    /* a NUL inside the counted text is not a suffix */
    assert_int_equal(tg_qty_parsen("1\0k", 3, &q), TG_QTY_ESYNTAX);
    assert_int_equal(tg_qty_parsen("2Gi", 3, &q), TG_QTY_OK);
}

static const struct {
    tg_qty_t in;
    const char *expect, *alternate;
} string_table[] = {
    {{1073741824, 0, 0, BSI}, "1Gi", "1024Mi"},
    {{314572800, 0, 0, BSI}, "300Mi", "307200Ki"},
    {{6144, 0, 0, BSI}, "6Ki", ""},
    {{1074815565824LL, 0, 0, BSI}, "1001Gi", "1025024Mi"},
    {{1099511627776LL, 0, 0, BSI}, "1Ti", "1024Gi"},
    {{5, 0, 0, BSI}, "5", "5000m"},
    {{5, -1, 0, BSI}, "500m", "0.5"},
    {{1, 9, 0, DSI}, "1G", "1000M"},
    {{1, 9, 0, DSI}, "1G", "0.001T"},
    {{1, -3, 0, DSI}, "1m", "1000u"},
    {{8, -2, 0, DSI}, "80m", ""},
    {{108, -2, 0, DSI}, "1080m", "1.08"},
    {{108, -2, 0, DSI}, "1080m", "1080000000n"},
    {{3, 8, 0, DSI}, "300M", ""},
    {{1, 12, 0, DSI}, "1T", ""},
    {{1234567, 6, 0, DSI}, "1234567M", ""},
    {{1234567, -3, 0, BSI}, "1234567m", ""},
    {{3, 3, 0, DSI}, "3k", ""},
    {{1025, 0, 0, BSI}, "1025", ""},
    {{0, 0, 0, DSI}, "0", ""},
    {{0, 0, 0, BSI}, "0", ""},
    {{1, 9, 0, DEX}, "1e9", ".001e12"},
    {{1, -3, 0, DEX}, "1e-3", "0.001e0"},
    {{1, -9, 0, DEX}, "1e-9", "1000e-12"},
    {{8, -2, 0, DEX}, "80e-3", ""},
    {{3, 8, 0, DEX}, "300e6", ""},
    {{1, 12, 0, DEX}, "1e12", ""},
    {{1, 3, 0, DEX}, "1e3", ""},
    {{3, 3, 0, DEX}, "3e3", ""},
    {{0, 0, 0, DEX}, "0", "00"},
    {{1, -9, 0, DSI}, "1n", ""},
    {{8, -8, 0, DSI}, "80n", ""},
    {{108, -8, 0, DSI}, "1080n", ""},
    {{1, -6, 0, DSI}, "1u", ""},
    {{8, -5, 0, DSI}, "80u", ""},
    {{108, -5, 0, DSI}, "1080u", ""},
};

static void test_text_is_kubernetes_canonical_form(void **state)
{
    (void)state;
    char buf[TG_QTY_MAX_TEXT], neg[TG_QTY_MAX_TEXT + 1];
    for (size_t i = 0; i < sizeof(string_table) / sizeof(string_table[0]); i++) {
        tg_qty_t q = string_table[i].in;
        assert_string_equal(text(&q, buf, sizeof(buf)), string_table[i].expect);
        tg_qty_t again = parsed(string_table[i].expect);
        assert_int_equal(tg_qty_cmp(&again, &q), 0);
        if (string_table[i].alternate[0]) {
            tg_qty_t alt = parsed(string_table[i].alternate);
            alt.format = q.format; /* String() of the value in the table's notation */
            assert_string_equal(text(&alt, buf, sizeof(buf)), string_table[i].expect);
        }
        if (q.coef) {
            q.neg = 1;
            snprintf(neg, sizeof(neg), "-%s", string_table[i].expect);
            assert_string_equal(text(&q, buf, sizeof(buf)), neg);
        }
    }
}

static void test_parse_then_text(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } emit[] = {
        /* TestQuantityParseEmit */
        {"1Ki", "1Ki"},
        {"1Mi", "1Mi"},
        {"1Gi", "1Gi"},
        {"1024Mi", "1Gi"},
        {"1000M", "1G"},
        {".001Ki", "1024m"},
        {".000001Ki", "1024u"},
        {".000000001Ki", "1024n"},
        {".000000000001Ki", "2n"},
        /* TestParseQuantity: 18 to 20 digits and the int64 edges, exact */
        {"-999999999999999999", "-999999999999999999"},
        {"999999999999999999.0", "999999999999999999"},
        {"999999999999999999.1", "999999999999999999100m"},
        {"-9999999999999999999", "-9999999999999999999"},
        {"1E", "1E"},
        {"1000000000000000000", "1E"},
        {"-1.0E", "-1E"},
        {"9999999999999999999000m", "9999999999999999999"},
        {"-1.0000000000000000001E", "-1000000000000000000100m"},
        {"1.000000000000000001E", "1000000000000000001"},
        {"10E", "10E"},
        {"10000000000000000000.0", "10E"},
        {"-10000000000000000000000m", "-10E"},
        {"10.0000000000000000001E", "10000000000000000000100m"},
        {"10.000000000000000001E", "10000000000000000001"},
        {"-9223372036854775809", "-9223372036854775809"},
        {"9223372036854775806.1", "9223372036854775806100m"},
        {"-9223372036854775808000m", "-9223372036854775808"},
        {"9223372036854775807.1", "9223372036854775807100m"},
        {"9223372036854775808", "9223372036854775808"},
        {"-9223372036854775807.1", "-9223372036854775807100m"},
        /* beyond exa: the value stays right */
        {"1e21", "1e21"},
        {"1000E", "1000E"},
        {"1.5e-7", "150e-9"},
    };
    char buf[TG_QTY_MAX_TEXT];
    for (size_t i = 0; i < sizeof(emit) / sizeof(emit[0]); i++) {
        tg_qty_t q = parsed(emit[i].in);
        if (strcmp(text(&q, buf, sizeof(buf)), emit[i].out) != 0)
            fail_msg("'%s' -> '%s', want '%s'", emit[i].in, buf, emit[i].out);
    }
    char small[4];
    tg_qty_t q = parsed("1536Mi");
    assert_int_equal(tg_qty_format(&q, small, sizeof(small)), TG_QTY_ETOOSMALL);
}

static void test_compare_and_arithmetic(void **state)
{
    (void)state;
    static const struct {
        const char *x, *y;
        int expect;
    } cmp[] = {
        {"0", "0", 0},     {"100m", "50m", 1},  {"50m", "100m", -1}, {"10000T", "100Gi", 1},
        {"1Gi", "1G", 1},  {"1000m", "1", 0},   {"-1", "1m", -1},    {"-2", "-1", -1},
        {"1E", "1e18", 0}, {"1e21", "999E", 1}, {"1n", "0.5n", 0}, /* both one nano-unit */
    };
    for (size_t i = 0; i < sizeof(cmp) / sizeof(cmp[0]); i++) {
        tg_qty_t a = parsed(cmp[i].x), b = parsed(cmp[i].y);
        if (tg_qty_cmp(&a, &b) != cmp[i].expect)
            fail_msg("cmp(%s, %s) != %d", cmp[i].x, cmp[i].y, cmp[i].expect);
    }
    char buf[TG_QTY_MAX_TEXT];
    tg_qty_t a = parsed("16Gi"), b = parsed("1.5Gi"), r;
    assert_int_equal(tg_qty_add(&a, &b, &r), TG_QTY_OK);
    assert_string_equal(text(&r, buf, sizeof(buf)), "17920Mi");
    a = parsed("4");
    b = parsed("500m");
    assert_int_equal(tg_qty_sub(&a, &b, &r), TG_QTY_OK);
    assert_string_equal(text(&r, buf, sizeof(buf)), "3500m");
    assert_int_equal(tg_qty_sub(&b, &a, &r), TG_QTY_OK);
    assert_string_equal(text(&r, buf, sizeof(buf)), "-3500m");
    assert_int_equal(tg_qty_sub(&a, &a, &r), TG_QTY_OK);
    assert_true(tg_qty_is_zero(&r));
    a = parsed("1e30");
    b = parsed("1n");
    assert_int_equal(tg_qty_add(&a, &b, &r), TG_QTY_ERANGE); /* 40 digits: refused */
    int64_t m;
    a = parsed("1500u");
    assert_int_equal(tg_qty_to_milli(&a, &m), TG_QTY_OK);
    assert_int_equal(m, 2);
    a = parsed("-1500u");
    assert_int_equal(tg_qty_to_milli(&a, &m), TG_QTY_OK);
    assert_int_equal(m, -1);
    a = parsed("1E");
    assert_int_equal(tg_qty_to_milli(&a, &m), TG_QTY_ERANGE);
    tg_qty_from_milli(-1536, BSI, &r);
    assert_string_equal(text(&r, buf, sizeof(buf)), "-1536m");
    tg_qty_from_milli(INT64_MIN, DSI, &r);
    assert_int_equal(tg_qty_to_milli(&r, &m), TG_QTY_OK);
    assert_true(m == INT64_MIN);
    a = parsed("1.5Gi");
    assert_true(tg_qty_to_double(&a) == 1610612736.0);
    /* compared as written, exactly: beyond a double's 53 bits too */
    int c = 7;
    assert_int_equal(tg_qty_cmp_text("9007199254740993", "9007199254740992", &c), TG_QTY_OK);
    assert_int_equal(c, 1);
    assert_int_equal(tg_qty_cmp_text("1Gi", "1073741824", &c), TG_QTY_OK);
    assert_int_equal(c, 0);
    c = 7;
    assert_int_equal(tg_qty_cmp_text("1Qi", "1", &c), TG_QTY_ESYNTAX);
    assert_int_equal(tg_qty_cmp_text("1", "", &c), TG_QTY_ESYNTAX);
    assert_int_equal(c, 7);
}

/* Issue #17: every form of 300 cores and of an exabyte is that value. */
static void test_every_spelling_of_a_value_is_that_value(void **state)
{
    (void)state;
    tg_qty_t cores = parsed("300");
    static const char *const same[] = {
        "0.0000000000000003E", "300e0", "3e2", "0.3k", "300000m", "3E2", "+300.000",
        "300000000000n"};
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        tg_qty_t q = parsed(same[i]);
        if (tg_qty_cmp(&q, &cores) != 0)
            fail_msg("'%s' is not 300", same[i]);
    }
    tg_qty_t three_t = parsed("3T"), ei = parsed("1Ei"), e = parsed("0.000003E");
    assert_int_equal(tg_qty_cmp(&ei, &three_t), 1);
    assert_int_equal(tg_qty_cmp(&e, &three_t), 0);
    tg_qty_t q;
    assert_int_equal(tg_qty_parse("1e100001", &q), TG_QTY_ERANGE);
    assert_int_equal(tg_qty_parse("1e99999999999999999999", &q), TG_QTY_ERANGE);
    assert_int_equal(tg_qty_parse("123456789012345678901234567890123456789", &q), TG_QTY_ERANGE);
    /* 39 written digits, 1 significant: fine */
    assert_int_equal(tg_qty_parse("100000000000000000000000000000000000000", &q), TG_QTY_OK);
    assert_int_equal(tg_qty_parse("1e100000", &q), TG_QTY_OK);
    assert_int_equal(tg_qty_cmp(&q, &ei), 1);
    /* binary beyond any u128 coefficient: capped like every binary value */
    assert_int_equal(tg_qty_parse("99999999999999999999999999999999Ei", &q), TG_QTY_OK);
    tg_qty_t cap = dq(INT64_MAX, 0, BSI);
    assert_int_equal(tg_qty_cmp(&q, &cap), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_matches_kubernetes),
        cmocka_unit_test(test_parse_refuses_what_kubernetes_refuses),
        cmocka_unit_test(test_text_is_kubernetes_canonical_form),
        cmocka_unit_test(test_parse_then_text),
        cmocka_unit_test(test_compare_and_arithmetic),
        cmocka_unit_test(test_every_spelling_of_a_value_is_that_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
