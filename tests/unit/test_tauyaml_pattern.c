/* Schema patterns: the compiled automaton (tauyaml/pattern.c) must answer
 * exactly as regexec (POSIX ERE, C locale) for every pattern of
 * schema/tau.schema.json and for hand-written patterns that exercise the
 * subset, on random and mutated strings; patterns outside the subset must
 * be refused (the validator then keeps regexec). */
#include <jansson.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka needs these first */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tauyaml/pattern.h"

static uint64_t pt_rng = 0x9e3779b97f4a7c15u;

static unsigned pt_rand(unsigned n)
{
    pt_rng ^= pt_rng << 13;
    pt_rng ^= pt_rng >> 7;
    pt_rng ^= pt_rng << 17;
    return (unsigned)(pt_rng % n);
}

/* A random subject: mostly bytes the pattern mentions, some blanks and
 * separators, some arbitrary bytes (never NUL). */
static void pt_subject(const char *re, char *out, size_t cap)
{
    static const char extra[] = " \t\r\n-_.:/aZz09\\\"'[]()";
    size_t len = pt_rand(24), rl = strlen(re);
    if (len >= cap)
        len = cap - 1;
    for (size_t i = 0; i < len; i++) {
        unsigned k = pt_rand(10);
        if (k < 6)
            out[i] = re[pt_rand((unsigned)rl)];
        else if (k < 9)
            out[i] = extra[pt_rand(sizeof(extra) - 1)];
        else
            out[i] = (char)(1 + pt_rand(255));
    }
    out[len] = '\0';
}

/* Compare the automaton with regexec on many subjects; returns how many
 * subjects matched (so a test can check both answers were exercised). */
static unsigned pt_compare(const char *re, const char *const *samples)
{
    regex_t rx;
    assert_int_equal(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0);
    tg_tauyaml_pattern_t *p = tg_tauyaml_pattern_compile(re);
    if (!p) {
        fprintf(stderr, "pattern not compiled: %s\n", re);
        fail();
    }
    unsigned matched = 0;
    char s[64];
    for (int i = 0; i < 40000; i++) {
        if (samples && samples[0] && i % 4 == 0) {
            /* a sample with one byte changed, dropped or added */
            size_t ns = 0;
            while (samples[ns])
                ns++;
            const char *base = samples[pt_rand((unsigned)ns)];
            size_t bl = strlen(base);
            snprintf(s, sizeof(s), "%s", base);
            if (bl && i % 3 == 0)
                s[pt_rand((unsigned)bl)] = (char)(1 + pt_rand(255));
            else if (bl && i % 3 == 1)
                memmove(s + pt_rand((unsigned)bl), s + bl, 1); /* truncate */
        } else {
            pt_subject(re, s, sizeof(s));
        }
        int want = regexec(&rx, s, 0, NULL, 0) == 0;
        int got = tg_tauyaml_pattern_match(p, s);
        if (want != got) {
            fprintf(stderr, "pattern %s on \"%s\": regexec %d, compiled %d\n", re, s, want, got);
            fail();
        }
        matched += (unsigned)got;
    }
    tg_tauyaml_pattern_free(p);
    regfree(&rx);
    return matched;
}

static void pt_collect(const json_t *v, json_t *out)
{
    const char *k;
    json_t *x;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, x) {
            if (strcmp(k, "pattern") == 0 && json_is_string(x))
                json_array_append(out, x);
            else if (strcmp(k, "x-taugate-messages") != 0) /* message templates */
                pt_collect(x, out);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x)
            pt_collect(x, out);
    }
}

static void test_schema_patterns(void **state)
{
    (void)state;
    const char *path = getenv("TAUGATE_SCHEMA");
    json_t *doc = json_load_file(path && *path ? path : "schema/tau.schema.json", 0, NULL);
    assert_non_null(doc);
    json_t *pats = json_array();
    pt_collect(doc, pats);
    assert_true(json_array_size(pats) >= 10);
    static const char *const samples[] = {"tau-kind-smoke",
                                          "kind-cpu",
                                          "10m",
                                          "512Mi",
                                          "1.5",
                                          "bash:5.2",
                                          "train.py",
                                          "scripts/train.sh",
                                          "a",
                                          "",
                                          "1g.18gb",
                                          "data:/mnt/x:ro",
                                          "secret:key",
                                          "LR_1",
                                          "lr",
                                          "abc.def",
                                          "x y",
                                          NULL};
    size_t i;
    json_t *p;
    json_array_foreach(pats, i, p) {
        unsigned matched = pt_compare(json_string_value(p), samples);
        assert_true(matched > 0 && matched < 40000); /* both answers were exercised */
    }
    json_decref(pats);
    json_decref(doc);
}

static void test_subset_patterns(void **state)
{
    (void)state;
    static const char *const res[] = {
        "^$",
        "^a$",
        "^a*$",
        "^(ab|a)*b+$",
        "^(a*)*$",
        "^(a|b|c)?d$",
        "^[]a]+$",
        "^[^]a]+$",
        "^[a-]+$",
        "^[-a]+$",
        "^[--/]+$",
        "^[^a-z0-9]*$",
        "^.*x.$",
        "^\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\$",
        "^[\\\\n]+$",
        "^a\\\\$",
        "^(([a-z])+-)+[0-9]?$",
        "^([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][-+]?[0-9]+)?$",
        "^(0|([0-9]+(\\.[0-9]+)?(ns|us|\xc2\xb5s|ms|s|m|h))+)$",
    };
    unsigned total = 0;
    for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++)
        total += pt_compare(res[i], NULL);
    assert_true(total > 0);
}

static void test_outside_subset(void **state)
{
    (void)state;
    static const char *const res[] = {
        "a",         "^a",           "a$",     "^a|b$",   "^a{2}$", "^[[:alpha:]]$",
        "^[[=a=]]$", "^[[.a.]]$",    "^\\w+$", "^a**$",   "^()$",   "^(a|)$",
        "^a\\$",     "^(a$",         "^a)$",   "^*a$",    "^[a$",   "^a^b$",
        "^a$b$",     "^[\xc3\xa9]$", "^\\",    "^[z-a]$",
    };
    for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
        tg_tauyaml_pattern_t *p = tg_tauyaml_pattern_compile(res[i]);
        if (p) {
            fprintf(stderr, "compiled, should not have: %s\n", res[i]);
            tg_tauyaml_pattern_free(p);
            fail();
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_patterns),
        cmocka_unit_test(test_subset_patterns),
        cmocka_unit_test(test_outside_subset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
