/* The pieces behind the served contract and the run views: entity tags
 * (api/etag.c), JSON written as YAML (api/yaml_out.c), external schema
 * files bundled into the document (api/openapi_bundle.c) and the config
 * differences of a run comparison (api/experiments.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/etag.h"
#include "api/experiments.h"
#include "api/openapi_bundle.h"
#include "api/yaml_out.h"
#include "tauyaml/limits.h"
#include "tauyaml/yaml_tree.h"

/* ---- entity tags ---- */

static void test_etag_matching(void **state)
{
    (void)state;
    char tag[TG_ETAG_LEN];
    tg_etag_of("hello", 5, tag);
    assert_string_equal(
        tag, "\"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\"");
    assert_true(tg_etag_matches(tag, tag));
    assert_true(tg_etag_matches("*", tag));
    char list[256];
    snprintf(list, sizeof(list), "\"a\", W/%s , \"b\"", tag); /* weak comparison for GET */
    assert_true(tg_etag_matches(list, tag));
    assert_false(tg_etag_matches("\"a\", \"b\"", tag));
    assert_false(tg_etag_matches("", tag));
    tag[10] ^= 1;
    assert_false(tg_etag_matches(list, tag));
}

/* ---- YAML out ---- */

/* Written and read back with the gateway's own YAML reader: the same value. */
static void yaml_round_trip(const char *json_text)
{
    json_t *v = json_loads(json_text, 0, NULL);
    assert_non_null(v);
    size_t len = 0;
    char *text = tg_yaml_out(v, &len);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    tg_tauyaml_limits_t lim;
    tg_tauyaml_limits_default(&lim);
    tg_tauyaml_doc_t doc;
    tg_tauyaml_diag_t d;
    tg_tauyaml_doc_init(&doc);
    tg_tauyaml_diag_init(&d, NULL, 8);
    assert_int_equal(tg_tauyaml_yaml_parse(text, len, &lim, &doc, &d), TG_OK);
    if (!json_equal(doc.root, v))
        fail_msg("round trip changed %s into:\n%s", json_text, text);
    tg_tauyaml_diag_clean(&d);
    tg_tauyaml_doc_clean(&doc);
    free(text);
    json_decref(v);
}

static void test_yaml_keeps_strings_strings(void **state)
{
    (void)state;
    yaml_round_trip(
        "{\"a\": \"true\", \"b\": \"1.0\", \"c\": \"null\", \"d\": \"\", \"e\": \"0x1F\","
        " \"f\": \"on\", \"g\": \"3.1.0\", \"h\": \"a: b\", \"i\": \"- x\","
        " \"j\": \"# not a comment\", \"k\": \"'quoted'\", \"l\": \".inf\"}");
    yaml_round_trip("{\"text\": \"line one\\nline two\\n\", \"trailing\": \"x  \\n  y\"}");
    yaml_round_trip("{\"n\": 3, \"r\": 2.5, \"big\": 1e300, \"t\": true, \"f\": false, \"z\": null,"
                    " \"list\": [1, \"two\", {\"three\": [3]}, []], \"empty\": {},"
                    " \"true\": \"key that reads as a bool\", \"ünï\": \"cödé\"}");
}

static void test_yaml_dates_and_yaml11_words_are_quoted(void **state)
{
    (void)state;
    json_t *v = json_pack("{s:s, s:s, s:s}", "at", "2026-12-02T11:32:34.155938+00:00", "yes", "no",
                          "time", "1:20");
    size_t len = 0;
    char *text = tg_yaml_out(v, &len);
    assert_non_null(strstr(text, "at: '2026-12-02T11:32:34.155938+00:00'"));
    assert_non_null(strstr(text, "'yes': 'no'"));
    assert_non_null(strstr(text, "time: '1:20'"));
    free(text);
    json_decref(v);
}

/* ---- bundling ---- */

static char bundle_dir[256];

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", bundle_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int bundle_setup(void **state)
{
    (void)state;
    snprintf(bundle_dir, sizeof(bundle_dir), "/tmp/tg-bundle-XXXXXX");
    assert_non_null(mkdtemp(bundle_dir));
    char sub[300];
    snprintf(sub, sizeof(sub), "%s/schema", bundle_dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    write_file("schema/tau.schema.json",
               "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\","
               " \"$id\": \"https://example/tau\", \"type\": \"object\","
               " \"properties\": {\"name\": {\"$ref\": \"#/$defs/label\"},"
               "  \"self\": {\"$ref\": \"#\"}, \"other\": {\"$ref\": \"my-types.json#/$defs/x\"}},"
               " \"$defs\": {\"label\": {\"type\": \"string\"}}}");
    write_file("schema/my-types.json", "{\"$defs\": {\"x\": {\"type\": \"integer\"}}}");
    return 0;
}

static int bundle_teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", bundle_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_bundle_inlines_files_and_rewrites_refs(void **state)
{
    (void)state;
    json_t *doc = json_loads(
        "{\"openapi\": \"3.1.0\", \"paths\": {\"/x\": {\"post\": {\"requestBody\": {\"content\":"
        " {\"application/yaml\": {\"schema\": {\"$ref\": \"./schema/tau.schema.json\"}}}},"
        " \"responses\": {\"200\": {\"content\": {\"application/json\": {\"schema\":"
        " {\"$ref\": \"./schema/tau.schema.json#/$defs/label\"}}}}}}}},"
        " \"components\": {\"schemas\": {\"Local\": {\"$ref\": \"#/components/schemas/Other\"},"
        " \"Other\": {\"type\": \"string\"}}}}",
        0, NULL);
    char err[256] = "";
    assert_int_equal(tg_openapi_bundle(doc, bundle_dir, err, sizeof(err)), TG_OK);
    json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    json_t *tau = json_object_get(schemas, "TauSchema");
    assert_non_null(tau);
    assert_null(json_object_get(tau, "$id"));
    assert_null(json_object_get(tau, "$schema"));
    assert_null(json_object_get(tau, "$defs"));
    json_t *props = json_object_get(tau, "properties");
    assert_string_equal(json_string_value(json_object_get(json_object_get(props, "name"), "$ref")),
                        "#/components/schemas/TauSchema_label");
    assert_string_equal(json_string_value(json_object_get(json_object_get(props, "self"), "$ref")),
                        "#/components/schemas/TauSchema");
    assert_string_equal(json_string_value(json_object_get(json_object_get(props, "other"), "$ref")),
                        "#/components/schemas/MyTypesSchema_x");
    assert_non_null(json_object_get(schemas, "TauSchema_label"));
    assert_non_null(json_object_get(schemas, "MyTypesSchema_x"));
    /* local references are left as they are */
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(schemas, "Local"), "$ref")),
        "#/components/schemas/Other");
    char *text = json_dumps(doc, JSON_COMPACT);
    assert_null(strstr(text, "schema.json"));
    free(text);
    json_decref(doc);
}

static void test_bundle_refuses_what_it_cannot_inline(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"{\"a\": {\"$ref\": \"https://example.com/x.json\"}}", "only relative"},
        {"{\"a\": {\"$ref\": \"./schema/missing.json\"}}", "not a readable"},
        {"{\"a\": {\"$ref\": \"./schema/tau.schema.json\"},"
         " \"components\": {\"schemas\": {\"TauSchema_label\": {}}}}",
         "exists already"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *doc = json_loads(cases[i][0], 0, NULL);
        char err[512] = "";
        assert_int_not_equal(tg_openapi_bundle(doc, bundle_dir, err, sizeof(err)), TG_OK);
        if (!strstr(err, cases[i][1]))
            fail_msg("case %zu: %s", i, err);
        json_decref(doc);
    }
}

/* ---- config differences ---- */

static void test_config_differences(void **state)
{
    (void)state;
    json_t *a = json_loads("{\"name\": \"a\", \"compute\": {\"gpus\": 1, \"cpu\": \"4\"},"
                           " \"env\": {\"LR\": \"0.1\", \"odd.key\": 1}, \"args\": [1, 2],"
                           " \"same\": {\"x\": [true]}, \"empty\": {}}",
                           0, NULL);
    json_t *b = json_loads("{\"name\": \"b\", \"compute\": {\"gpus\": 2, \"cpu\": \"4\"},"
                           " \"env\": {\"LR\": \"0.1\"}, \"args\": [1, 3, 4],"
                           " \"same\": {\"x\": [true]}, \"empty\": []}",
                           0, NULL);
    json_t *configs[] = {a, b};
    json_t *d = tg_api_config_differences(configs, 2);
    json_t *want = json_loads("[{\"path\": \"args[1]\", \"values\": [2, 3]},"
                              " {\"path\": \"args[2]\", \"values\": [null, 4]},"
                              " {\"path\": \"compute.gpus\", \"values\": [1, 2]},"
                              " {\"path\": \"empty\", \"values\": [{}, []]},"
                              " {\"path\": \"env[\\\"odd.key\\\"]\", \"values\": [1, null]},"
                              " {\"path\": \"name\", \"values\": [\"a\", \"b\"]}]",
                              0, NULL);
    if (!json_equal(d, want)) {
        char *got = json_dumps(d, 0);
        fail_msg("differences: %s", got);
    }
    json_t *same[] = {a, a};
    json_t *none = tg_api_config_differences(same, 2);
    assert_int_equal(json_array_size(none), 0);
    json_decref(none);
    json_decref(want);
    json_decref(d);
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_etag_matching),
        cmocka_unit_test(test_yaml_keeps_strings_strings),
        cmocka_unit_test(test_yaml_dates_and_yaml11_words_are_quoted),
        cmocka_unit_test_setup_teardown(test_bundle_inlines_files_and_rewrites_refs, bundle_setup,
                                        bundle_teardown),
        cmocka_unit_test_setup_teardown(test_bundle_refuses_what_it_cannot_inline, bundle_setup,
                                        bundle_teardown),
        cmocka_unit_test(test_config_differences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
