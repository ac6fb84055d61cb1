/* Does the schema's pattern automaton (tauyaml/pattern.h) pay against
 * glibc's regexec, which it replaces on the validator's hot path?
 *
 * Every pattern of schema/tau.schema.json that the automaton compiles is
 * matched against the same subjects (field values of the kinds the schema
 * checks, matching and not) both ways, on one core; the figures are ns per
 * match and the ratio regexec / automaton measured in this run.
 *
 *   make bench-pattern   (from the repository root) */
#include <jansson.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tauyaml/pattern.h"

#define BENCH_MAX_PATTERNS 64
#define BENCH_ROUNDS       20000

typedef struct bench_pattern_s {
    tg_tauyaml_pattern_t *dfa;
    regex_t rx;
} bench_pattern_t;

static const char *const bench_subjects[] = {
    "train-job-01",
    "my.registry.io",
    "python train.py --epochs 3",
    "NCCL_DEBUG",
    "64Gi",
    "1h30m",
    "nvcr.io:24.01-py3",
    "/mnt/data:ro",
    "1g.10gb",
    "Not A Label!",
    "",
    "a-very-long-name-that-goes-on",
};
#define BENCH_NSUBJECTS (sizeof(bench_subjects) / sizeof(bench_subjects[0]))

static double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Collect every string "pattern" keyword under `node`. */
static void bench_collect(const json_t *node, bench_pattern_t *out, size_t *n)
{
    const char *key;
    const json_t *v;
    size_t i;
    if (json_is_object(node)) {
        json_object_foreach((json_t *)node, key, v) {
            if (!strcmp(key, "pattern") && json_is_string(v) && *n < BENCH_MAX_PATTERNS) {
                const char *re = json_string_value(v);
                tg_tauyaml_pattern_t *dfa = tg_tauyaml_pattern_compile(re);
                if (!dfa)
                    continue;
                if (regcomp(&out[*n].rx, re, REG_EXTENDED | REG_NOSUB) != 0) {
                    tg_tauyaml_pattern_free(dfa);
                    continue;
                }
                out[(*n)++].dfa = dfa;
            } else {
                bench_collect(v, out, n);
            }
        }
    } else if (json_is_array(node)) {
        json_array_foreach(node, i, v) {
            bench_collect(v, out, n);
        }
    }
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "schema/tau.schema.json";
    json_error_t jerr;
    json_t *schema = json_load_file(path, 0, &jerr);
    if (!schema) {
        fprintf(stderr, "%s:%d: %s\n", path, jerr.line, jerr.text);
        return 1;
    }
    bench_pattern_t pats[BENCH_MAX_PATTERNS];
    size_t n = 0;
    bench_collect(schema, pats, &n);
    json_decref(schema);
    if (n == 0) {
        fprintf(stderr, "no compiled patterns in %s\n", path);
        return 1;
    }
    unsigned long agree = 0, matches = 0;
    for (size_t p = 0; p < n; p++)
        for (size_t s = 0; s < BENCH_NSUBJECTS; s++) {
            int a = tg_tauyaml_pattern_match(pats[p].dfa, bench_subjects[s]);
            int b = regexec(&pats[p].rx, bench_subjects[s], 0, NULL, 0) == 0;
            agree += a == b;
            matches += (unsigned long)a;
        }
    volatile unsigned long sink = 0;
    double t0 = bench_now();
    for (int r = 0; r < BENCH_ROUNDS; r++)
        for (size_t p = 0; p < n; p++)
            for (size_t s = 0; s < BENCH_NSUBJECTS; s++)
                sink += (unsigned long)tg_tauyaml_pattern_match(pats[p].dfa, bench_subjects[s]);
    double t1 = bench_now();
    for (int r = 0; r < BENCH_ROUNDS; r++)
        for (size_t p = 0; p < n; p++)
            for (size_t s = 0; s < BENCH_NSUBJECTS; s++)
                sink += regexec(&pats[p].rx, bench_subjects[s], 0, NULL, 0) == 0;
    double t2 = bench_now();
    double calls = (double)BENCH_ROUNDS * (double)n * (double)BENCH_NSUBJECTS;
    double dfa_ns = (t1 - t0) / calls * 1e9, rx_ns = (t2 - t1) / calls * 1e9;
    printf("pattern bench: %zu schema patterns x %zu subjects (%lu match), %d rounds\n", n,
           (size_t)BENCH_NSUBJECTS, matches, BENCH_ROUNDS);
    printf("  automaton  %8.1f ns/match\n", dfa_ns);
    printf("  regexec    %8.1f ns/match\n", rx_ns);
    printf("  ratio regexec / automaton: %.1f (answers agree on %lu of %zu)\n", rx_ns / dfa_ns,
           agree, n * BENCH_NSUBJECTS);
    for (size_t p = 0; p < n; p++) {
        tg_tauyaml_pattern_free(pats[p].dfa);
        regfree(&pats[p].rx);
    }
    (void)sink;
    return agree == n * BENCH_NSUBJECTS ? 0 : 1;
}
