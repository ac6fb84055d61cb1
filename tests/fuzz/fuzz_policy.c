/* libFuzzer harness for the policy loader and evaluator.
 *
 * The input is a policy file (YAML), or, when it starts with '[', database
 * rows ([{"id", "version", "rule", "enabled"}]). It is loaded against
 * schema/policy.schema.json; a policy that loads is evaluated on two
 * resolved run configs (a Job and a RayJob, from tests/fixtures/golden),
 * once copy-on-write and once in place, and its effective view is built.
 * Invariants beyond "no crash, no leak, no UB":
 *   - a refused policy always says why: every error has a file, a message
 *     and, for a file, a line >= 1 unless it is about the whole file;
 *   - every decision names its rule and an outcome, with line and column >= 1;
 *   - every deny is an error and every warn a warning, each with its rule id;
 *   - copy-on-write evaluation leaves its input untouched, and gives the same
 *     decisions as evaluation in place;
 *   - the decisions written as text parse and equal the jansson form.
 * Run from the repository root (schema and fixtures are read at start). */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "policy/eval.h"
#include "policy/load.h"

static tg_policy_schema_t *fz_schema;
static json_t *fz_cases[2];           /* the resolved config of a Job and a RayJob */
static tg_tauyaml_prov_t fz_provs[2]; /* and its provenance */

static void fz_load_case(int i, const char *path)
{
    json_t *g = json_load_file(path, 0, NULL);
    if (!g) {
        fprintf(stderr, "fuzz_policy: cannot read %s (run from the repository root)\n", path);
        abort();
    }
    fz_cases[i] = json_incref(json_object_get(g, "resolved"));
    tg_tauyaml_prov_init(&fz_provs[i]);
    tg_tauyaml_prov_add_json(&fz_provs[i], json_object_get(g, "provenance"));
    json_decref(g);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    tg_log_set_level(TG_LOG_OFF);
    char err[256];
    fz_schema = tg_policy_schema_load_file("schema/policy.schema.json", err, sizeof(err));
    if (!fz_schema) {
        fprintf(stderr, "fuzz_policy: %s (run from the repository root)\n", err);
        abort();
    }
    fz_load_case(0, "tests/fixtures/golden/conformance-01.resolved.json");
    fz_load_case(1, "tests/fixtures/golden/rayjob-gpu.resolved.json");
    return 0;
}

/* Pretend every path of up to 24 bytes was written, at a line derived from it. */
static int fz_locate(void *arg, const char *path, int want_value, unsigned *line, unsigned *col)
{
    (void)arg;
    size_t n = strlen(path);
    if (n > 24)
        return 0;
    *line = (unsigned)n + 1;
    *col = want_value ? 7 : 3;
    return 1;
}

static void fz_check_errors(const json_t *errors)
{
    size_t i;
    const json_t *e;
    if (!json_is_array(errors) || json_array_size(errors) == 0)
        abort(); /* a refusal always says why */
    json_array_foreach(errors, i, e) {
        if (!json_is_string(json_object_get(e, "file")) ||
            !json_is_string(json_object_get(e, "message")) ||
            !json_is_string(json_object_get(e, "path")))
            abort();
        const char *file = json_string_value(json_object_get(e, "file"));
        json_int_t line = json_integer_value(json_object_get(e, "line"));
        if (strcmp(file, "fuzz.yaml") == 0 && line < 1 &&
            json_string_value(json_object_get(e, "path"))[0] != '\0')
            abort(); /* a problem inside a file has a line */
    }
    char text[512];
    tg_policy_errors_format(errors, text, sizeof(text));
}

static void fz_check_findings(const json_t *list)
{
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e) {
        if (!json_is_string(json_object_get(e, "rule_id")) ||
            !json_is_string(json_object_get(e, "message")) ||
            json_integer_value(json_object_get(e, "line")) < 1)
            abort();
    }
}

static size_t fz_count(const json_t *decisions, const char *outcome)
{
    size_t n = 0, i;
    const json_t *d;
    json_array_foreach(decisions, i, d) {
        const char *o = json_string_value(json_object_get(d, "outcome"));
        if (!o || !json_is_string(json_object_get(d, "rule_id")) ||
            json_integer_value(json_object_get(d, "line")) < 1 ||
            json_integer_value(json_object_get(d, "column")) < 1)
            abort();
        n += strcmp(o, outcome) == 0;
    }
    return n;
}

static void fz_evaluate(const tg_policy_snapshot_t *snap, int c)
{
    char *before = json_dumps(fz_cases[c], JSON_COMPACT | JSON_SORT_KEYS);
    size_t nprov = fz_provs[c].n, tprov = fz_provs[c].tlen;
    tg_policy_input_t in = {
        .resolved = fz_cases[c], .provenance = &fz_provs[c], .locate = (c ? fz_locate : NULL)};
    tg_policy_result_t res;
    tg_rc_e rc = tg_policy_evaluate(snap, &in, &res);
    json_t *decisions = tg_policy_result_decisions(&res);
    if ((rc == TG_OK) != (json_array_size(res.errors) == 0))
        abort();
    if (fz_count(decisions, "deny") != json_array_size(res.errors) ||
        fz_count(decisions, "warn") != json_array_size(res.warnings))
        abort();
    fz_check_findings(res.errors);
    fz_check_findings(res.warnings);
    /* the text form says the same */
    tg_buf_t text;
    tg_buf_init(&text, 0);
    if (tg_policy_result_decisions_text(&res, &text) != TG_OK)
        abort();
    json_t *parsed = json_loads(text.data, 0, NULL);
    if (!parsed || !json_equal(parsed, decisions))
        abort();
    json_decref(parsed);
    tg_buf_clean(&text);
    /* copy-on-write left the input alone */
    char *after = json_dumps(fz_cases[c], JSON_COMPACT | JSON_SORT_KEYS);
    if (!before || !after || strcmp(before, after) != 0 || fz_provs[c].n != nprov ||
        fz_provs[c].tlen != tprov)
        abort();
    free(after);
    free(before);

    /* in place, on private copies: the same decisions */
    json_t *rc2 = json_deep_copy(fz_cases[c]);
    tg_tauyaml_prov_t pc2;
    tg_tauyaml_prov_init(&pc2);
    tg_tauyaml_prov_copy(&pc2, &fz_provs[c]);
    tg_policy_input_t in2 = in;
    in2.resolved = rc2;
    in2.provenance = &pc2;
    in2.patch_in_place = 1;
    tg_policy_result_t res2;
    if (tg_policy_evaluate(snap, &in2, &res2) != rc)
        abort();
    json_t *decisions2 = tg_policy_result_decisions(&res2);
    if (!json_equal(decisions, decisions2) || (res.patched && !json_equal(res.resolved, rc2)))
        abort();
    json_t *p1 = tg_tauyaml_prov_json(tg_policy_result_provenance(&res)),
           *p2 = tg_tauyaml_prov_json(&pc2);
    if (!json_equal(p1, p2))
        abort();
    json_decref(p1);
    json_decref(p2);
    json_decref(decisions2);
    tg_policy_result_clean(&res2);
    json_decref(rc2);
    tg_tauyaml_prov_clean(&pc2);
    json_decref(decisions);
    tg_policy_result_clean(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_policy_files_t files = {0};
    json_t *rows = NULL;
    if (size && data[0] == '[') {
        rows = json_loadb((const char *)data, size, 0, NULL);
        if (!rows)
            return 0;
    } else {
        tg_policy_files_add(&files, "fuzz.yaml", (const char *)data, size);
    }
    tg_policy_snapshot_t *snap = NULL;
    json_t *errors = NULL;
    tg_rc_e rc = tg_policy_snapshot_build(fz_schema, &files, rows, 1, &snap, &errors);
    if (rc == TG_OK) {
        if (!snap || errors)
            abort();
        for (int c = 0; c < 2; c++)
            fz_evaluate(snap, c);
        json_t *eff = tg_policy_snapshot_effective(snap, "ray", 1);
        char *dump = json_dumps(eff, 0);
        if (!dump)
            abort();
        free(dump);
        json_decref(eff);
        tg_policy_snapshot_release(snap);
    } else {
        if (rc != TG_EUNPROCESSABLE || snap)
            abort();
        fz_check_errors(errors);
    }
    json_decref(errors);
    json_decref(rows);
    tg_policy_files_clean(&files);
    return 0;
}
