/* Unit tests: exact Kubernetes quantities and the quota arithmetic that
 * approving a quota request applies to a ClusterQueue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "store/quota.h"
#include "core/quota_qty.h"

static int64_t milli(const char *s)
{
    tg_quota_qty_t q;
    assert_int_equal(tg_quota_qty_parse(s, &q), TG_QUOTA_QTY_OK);
    return q.milli;
}

static void assert_canonical(const char *in, const char *want)
{
    char out[TG_QUOTA_QTY_MAX_TEXT];
    assert_int_equal(tg_quota_qty_canonical(in, out, sizeof(out)), TG_QUOTA_QTY_OK);
    assert_string_equal(out, want);
}

static void assert_sum(const char *a, const char *b, const char *want)
{
    char out[TG_QUOTA_QTY_MAX_TEXT];
    assert_int_equal(tg_quota_qty_add_text(a, b, out, sizeof(out)), TG_QUOTA_QTY_OK);
    assert_string_equal(out, want);
}

static void test_parse_is_exact_in_milli_units(void **state)
{
    (void)state;
    assert_int_equal(milli("500m"), 500);
    assert_int_equal(milli("2"), 2000);
    assert_int_equal(milli("1.5"), 1500);
    assert_int_equal(milli(".5"), 500);
    assert_int_equal(milli("3."), 3000);
    assert_int_equal(milli("+4"), 4000);
    assert_int_equal(milli("-1"), -1000);
    assert_int_equal(milli("1k"), 1000000);
    assert_int_equal(milli("2M"), 2000000000LL);
    assert_int_equal(milli("1Ki"), 1024000);
    assert_int_equal(milli("1Pi"), 1125899906842624000LL); /* 2^50 bytes */
    assert_int_equal(milli("64Gi"), 68719476736000LL);
    assert_int_equal(milli("1.5Gi"), 1610612736000LL);
    assert_int_equal(milli("1e3"), 1000000);
    assert_int_equal(milli("1E3"), 1000000);
    assert_int_equal(milli("15e-1"), 1500);
    assert_int_equal(milli("1P"), 1000000000000000000LL); /* peta: 1e15 base units */
    assert_int_equal(milli("0"), 0);
    assert_int_equal(milli("000012"), 12000);
    /* finer than a milli-unit rounds up, as Quantity.MilliValue does */
    assert_int_equal(milli("0.0001"), 1);
    assert_int_equal(milli("1n"), 1);
    assert_int_equal(milli("1500u"), 2);
    assert_int_equal(milli("2000000n"), 2);
}

static void test_parse_rejects_what_is_not_a_quantity(void **state)
{
    (void)state;
    tg_quota_qty_t q;
    static const char *const bad[] = {"",   "abc", "1x", "1.2.3", "1Gb", "Gi",  "1e",
                                      "e3", "--1", "1 ", " 1",    "1mi", "1KI", NULL};
    for (const char *const *s = bad; *s; s++) {
        tg_quota_qty_rc_e rc = tg_quota_qty_parse(*s, &q);
        if (rc != TG_QUOTA_QTY_ESYNTAX)
            fail_msg("'%s' parsed (rc %d)", *s, rc);
    }
    assert_int_equal(tg_quota_qty_parse(NULL, &q), TG_QUOTA_QTY_ESYNTAX);
    /* too large for int64 milli-units: refused, never wrapped */
    assert_int_equal(tg_quota_qty_parse("1E", &q), TG_QUOTA_QTY_ERANGE);
    assert_int_equal(tg_quota_qty_parse("10E", &q), TG_QUOTA_QTY_ERANGE);
    assert_int_equal(tg_quota_qty_parse("9Ei", &q), TG_QUOTA_QTY_ERANGE);
    assert_int_equal(tg_quota_qty_parse("1Ei", &q), TG_QUOTA_QTY_ERANGE); /* a suffix, too big */
    assert_int_equal(tg_quota_qty_parse("1e40", &q), TG_QUOTA_QTY_ERANGE);
    assert_int_equal(tg_quota_qty_parse("123456789012345678901234567890123456789", &q),
                     TG_QUOTA_QTY_ERANGE);
    assert_int_equal(tg_quota_qty_parse("8Pi", &q), TG_QUOTA_QTY_OK);
}

static void test_canonical_form_follows_kubernetes(void **state)
{
    (void)state;
    assert_canonical("1500m", "1500m");
    assert_canonical("1.5", "1500m");
    assert_canonical("2000m", "2");
    assert_canonical("1000", "1k");
    assert_canonical("1500000", "1500k");
    assert_canonical("0", "0");
    assert_canonical("0Gi", "0");
    assert_canonical("1024Mi", "1Gi");
    assert_canonical("68719476736", "68719476736"); /* decimal stays decimal */
    assert_canonical("1536Mi", "1536Mi");
    assert_canonical("1.5Gi", "1536Mi");
    assert_canonical("1.5Ki", "1536"); /* not a whole number of Ki: plain bytes */
    assert_canonical("0.5Ki", "512");  /* under 1024: decimal */
    assert_canonical("1e3", "1e3");
    assert_canonical("1500e-3", "1500e-3");
    assert_canonical("12e6", "12e6");
    assert_canonical("-1", "-1");
    assert_canonical("-1.5Gi", "-1536Mi");
}

static void test_sums_keep_the_first_notation(void **state)
{
    (void)state;
    assert_sum("8", "2", "10");
    assert_sum("4", "500m", "4500m");
    assert_sum("64Gi", "64Gi", "128Gi");
    assert_sum("16Gi", "1.5Gi", "17920Mi");
    assert_sum("64Gi", "1G", "69719476736"); /* not a multiple of 1Ki: plain bytes */
    assert_sum("1k", "1", "1001");
    assert_sum("900", "100", "1k");
    assert_sum("1e3", "1e3", "2e3");
    assert_sum("0", "8", "8");
    char out[8];
    assert_int_equal(tg_quota_qty_add_text("128Gi", "1", out, 4), TG_QUOTA_QTY_ETOOSMALL);
    char big[TG_QUOTA_QTY_MAX_TEXT];
    assert_int_equal(tg_quota_qty_add_text("8P", "8P", big, sizeof(big)), TG_QUOTA_QTY_ERANGE);
    assert_int_equal(tg_quota_qty_add_text("x", "1", big, sizeof(big)), TG_QUOTA_QTY_ESYNTAX);
    int ok;
    assert_int_equal(tg_quota_qty_cmp_text("1Gi", "1G", &ok), 1);
    assert_true(ok);
    assert_int_equal(tg_quota_qty_cmp_text("1000m", "1", &ok), 0);
    assert_int_equal(tg_quota_qty_cmp_text("1", "nope", &ok), 0);
    assert_false(ok);
}

static json_t *groups(void)
{
    json_error_t e;
    json_t *g = json_loads(
        "[{\"covered_resources\": [\"cpu\", \"memory\"], \"flavors\": ["
        "  {\"name\": \"small\", \"resources\": [{\"name\": \"cpu\", \"nominal_quota\": \"8\"},"
        "     {\"name\": \"memory\", \"nominal_quota\": \"32Gi\"}]},"
        "  {\"name\": \"big\", \"resources\": [{\"name\": \"cpu\", \"nominal_quota\": \"64\","
        "     \"borrowing_limit\": \"8\"}, {\"name\": \"memory\", \"nominal_quota\": "
        "\"256Gi\"}]}]},"
        " {\"covered_resources\": [\"nvidia.com/gpu\"], \"flavors\": ["
        "  {\"name\": \"a100\", \"resources\": [{\"name\": \"nvidia.com/gpu\","
        "     \"nominal_quota\": \"4\"}]}]}]",
        0, &e);
    assert_non_null(g);
    return g;
}

static const char *nominal(const json_t *g, size_t gi, size_t fi, size_t ri)
{
    const json_t *f = json_array_get(json_object_get(json_array_get(g, gi), "flavors"), fi);
    return json_string_value(
        json_object_get(json_array_get(json_object_get(f, "resources"), ri), "nominal_quota"));
}

static void test_approval_grows_the_right_flavor(void **state)
{
    (void)state;
    json_t *g = groups(), *applied = NULL;
    char why[256];
    /* no flavor named: the first flavor of the group covering the resource */
    assert_int_equal(
        tg_quota_add_nominal(g, "nvidia.com/gpu", NULL, "2", &applied, why, sizeof(why)), TG_OK);
    assert_string_equal(nominal(g, 1, 0, 0), "6");
    assert_string_equal(json_string_value(json_object_get(applied, "flavor")), "a100");
    assert_string_equal(json_string_value(json_object_get(applied, "nominal_before")), "4");
    assert_string_equal(json_string_value(json_object_get(applied, "nominal_after")), "6");
    json_decref(applied);
    /* a named flavor; the notation of the quota is kept; limits untouched */
    assert_int_equal(tg_quota_add_nominal(g, "memory", "big", "512Mi", &applied, why, sizeof(why)),
                     TG_OK);
    assert_string_equal(nominal(g, 0, 1, 1), "262656Mi");
    assert_string_equal(nominal(g, 0, 0, 1), "32Gi");
    json_decref(applied);
    assert_int_equal(tg_quota_add_nominal(g, "cpu", "big", "500m", &applied, why, sizeof(why)),
                     TG_OK);
    assert_string_equal(nominal(g, 0, 1, 0), "64500m");
    const json_t *big_cpu = json_array_get(
        json_object_get(json_array_get(json_object_get(json_array_get(g, 0), "flavors"), 1),
                        "resources"),
        0);
    assert_string_equal(json_string_value(json_object_get(big_cpu, "borrowing_limit")), "8");
    json_decref(applied);
    json_decref(g);
}

static void test_approval_refuses_what_cannot_apply(void **state)
{
    (void)state;
    json_t *g = groups(), *applied = NULL;
    char why[256];
    assert_int_equal(tg_quota_add_nominal(g, "pods", NULL, "2", &applied, why, sizeof(why)),
                     TG_EUNPROCESSABLE);
    assert_non_null(strstr(why, "covers pods"));
    assert_int_equal(tg_quota_add_nominal(g, "cpu", "a100", "2", &applied, why, sizeof(why)),
                     TG_EUNPROCESSABLE);
    assert_non_null(strstr(why, "flavor a100"));
    assert_int_equal(tg_quota_add_nominal(g, "cpu", NULL, "-2", &applied, why, sizeof(why)),
                     TG_EUNPROCESSABLE);
    assert_int_equal(tg_quota_add_nominal(g, "cpu", NULL, "0", &applied, why, sizeof(why)),
                     TG_EUNPROCESSABLE);
    assert_int_equal(tg_quota_add_nominal(g, "cpu", NULL, "9E", &applied, why, sizeof(why)),
                     TG_EUNPROCESSABLE);
    assert_null(applied);
    assert_string_equal(nominal(g, 0, 0, 0), "8"); /* nothing changed */
    const char *f = NULL;
    assert_int_equal(tg_quota_target(g, "memory", NULL, &f, why, sizeof(why)), TG_OK);
    assert_string_equal(f, "small");
    json_decref(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_is_exact_in_milli_units),
        cmocka_unit_test(test_parse_rejects_what_is_not_a_quantity),
        cmocka_unit_test(test_canonical_form_follows_kubernetes),
        cmocka_unit_test(test_sums_keep_the_first_notation),
        cmocka_unit_test(test_approval_grows_the_right_flavor),
        cmocka_unit_test(test_approval_refuses_what_cannot_apply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
