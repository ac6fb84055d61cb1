/* Golden tests: every case in tests/fixtures/cases.json (a spec, its context
 * and files, a run id and attempt) goes through the whole pipeline and must
 * reproduce tests/fixtures/golden/<name>.manifests.json and
 * <name>.resolved.json byte for byte. TAUGATE_UPDATE_GOLDEN=1 rewrites them.
 * Rendering is also checked for determinism: the same resolved config after
 * a JSON round trip with reordered keys renders the same bytes. */
#include "pipeline_test_util.h"

#include "render/render.h"

#define FIX "tests/fixtures/"

static int update_golden(void)
{
    const char *u = getenv("TAUGATE_UPDATE_GOLDEN");
    return u && strcmp(u, "1") == 0;
}

static char *fixture_path(const char *rel)
{
    char *p = malloc(2048);
    if (rel[0] == '@' && strncmp(rel, "@shared/", 8) == 0)
        snprintf(p, 2048, "%s/%s", tu_shared(), rel + 8);
    else
        snprintf(p, 2048, FIX "%s", rel);
    return p;
}

static char *dump_golden(const json_t *v)
{
    char *t = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS);
    size_t n = strlen(t);
    t = realloc(t, n + 2);
    t[n] = '\n';
    t[n + 1] = '\0';
    return t;
}

static void compare_or_update(const char *name, const char *suffix, const json_t *v)
{
    char path[512];
    snprintf(path, sizeof(path), FIX "golden/%s.%s.json", name, suffix);
    char *got = dump_golden(v);
    if (update_golden()) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs(got, f);
        fclose(f);
    } else {
        char *want = tu_slurp(path, NULL);
        if (!want)
            fail_msg("missing %s (run with TAUGATE_UPDATE_GOLDEN=1)", path);
        if (strcmp(want, got) != 0) {
            char tmp[600];
            snprintf(tmp, sizeof(tmp), "/tmp/taugate-golden-%s.%s.json", name, suffix);
            FILE *f = fopen(tmp, "wb");
            if (f) {
                fputs(got, f);
                fclose(f);
            }
            fail_msg("%s differs from the rendering (got: %s; diff them, or regenerate with "
                     "TAUGATE_UPDATE_GOLDEN=1)",
                     path, tmp);
        }
        free(want);
    }
    free(got);
}

/* Reverse the member order of every object (a stand-in for a database round
 * trip that hands keys back in another order). */
static json_t *reorder(const json_t *v)
{
    if (json_is_object(v)) {
        json_t *keys = json_array();
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
            json_array_insert_new(keys, 0, json_string(k));
        json_t *o = json_object();
        size_t i;
        json_array_foreach(keys, i, x) {
            const char *key = json_string_value(x);
            json_object_set_new(o, key, reorder(json_object_get(v, key)));
        }
        json_decref(keys);
        return o;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
            json_array_append_new(a, reorder(x));
        return a;
    }
    return json_deep_copy(v);
}

static void run_case(const json_t *c)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    char *spec_path = fixture_path(json_string_value(json_object_get(c, "spec")));
    char *ctx_path = fixture_path(json_string_value(json_object_get(c, "context")));
    char *files_path = fixture_path(json_string_value(json_object_get(c, "files")));
    const char *run_id = json_string_value(json_object_get(c, "run_id"));
    json_int_t attempt = json_integer_value(json_object_get(c, "attempt"));
    const char *reason = json_string_value(json_object_get(c, "retry_reason"));
    size_t len = 0;
    char *yaml = tu_slurp(spec_path, &len);
    if (!yaml)
        fail_msg("case %s: cannot read %s", name, spec_path);
    json_t *ctx = tu_load_json(ctx_path);
    assert_non_null(ctx);
    tu_files_t files;
    tu_files_init(&files);
    tu_files_add_dir(&files, files_path);

    tg_tauyaml_limits_t lim;
    tg_tauyaml_limits_default(&lim);
    tg_submit_request_t req = {.yaml = yaml,
                               .yaml_len = len,
                               .files = &files.set,
                               .context = ctx,
                               .run_id = run_id,
                               .attempt = attempt ? (unsigned)attempt : 1,
                               .retry_reason = reason};
    json_t *out = NULL;
    tg_rc_e rc = tg_submit_pipeline(tu_schema, &lim, &req, &out);
    if (rc != TG_OK) {
        tu_dump_errors(out);
        fail_msg("case %s: pipeline rc %d", name, rc);
    }
    const json_t *manifests = json_object_get(out, "manifests");
    compare_or_update(name, "manifests", manifests);
    json_t *rest = json_deep_copy(out);
    json_object_del(rest, "manifests");
    compare_or_update(name, "resolved", rest);
    json_decref(rest);

    /* Determinism across a key-order shuffle of the stored resolved config. */
    json_t *resolved = reorder(json_object_get(out, "resolved"));
    tg_tauyaml_prov_t prov;
    tg_tauyaml_prov_init(&prov);
    tg_tauyaml_prov_add_json(&prov, json_object_get(out, "provenance"));
    tg_render_opts_t opts = {.run_id = run_id, .attempt = req.attempt, .retry_reason = reason};
    json_t *again = NULL;
    char err[256];
    assert_int_equal(
        tg_render_manifests(resolved, &prov, &files.set, &opts, &again, err, sizeof(err)), TG_OK);
    char *a = json_dumps(manifests, JSON_COMPACT | JSON_SORT_KEYS);
    char *b = json_dumps(again, JSON_COMPACT | JSON_SORT_KEYS);
    if (strcmp(a, b) != 0)
        fail_msg("case %s: rendering is not deterministic across key order", name);
    free(a);
    free(b);
    json_decref(again);
    json_decref(resolved);
    tg_tauyaml_prov_clean(&prov);

    json_decref(out);
    tu_files_clean(&files);
    json_decref(ctx);
    free(yaml);
    free(spec_path);
    free(ctx_path);
    free(files_path);
}

static void test_golden_cases(void **state)
{
    (void)state;
    json_t *cases = tu_load_json(FIX "cases.json");
    assert_non_null(cases);
    assert_true(json_array_size(cases) >= 8);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
        run_case(c);
    json_decref(cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_cases),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
