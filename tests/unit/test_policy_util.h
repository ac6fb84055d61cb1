/* Shared helpers for the policy unit tests (header-only; each
 * tests/unit/test_policy_*.c is its own binary). Run from the repository
 * root, as `make test-unit` does. */
#ifndef TG_TEST_POLICY_UTIL_H
#define TG_TEST_POLICY_UTIL_H

#include "pipeline_test_util.h"

#include "policy/eval.h"
#include "policy/hook.h"
#include "policy/load.h"
#include "tauyaml/yaml_tree.h"

static tg_policy_schema_t *tp_schema;

static inline const char *tp_schema_path(void)
{
    const char *p = getenv("TAUGATE_POLICY_SCHEMA");
    return p && *p ? p : "schema/policy.schema.json";
}

static inline int tp_setup(void **state)
{
    char err[256];
    if (tu_setup(state) != 0)
        return -1;
    if (!tp_schema)
        tp_schema = tg_policy_schema_load_file(tp_schema_path(), err, sizeof(err));
    if (!tp_schema)
        fprintf(stderr, "cannot load %s: %s\n", tp_schema_path(), err);
    return tp_schema ? 0 : -1;
}

static inline int tp_teardown(void **state)
{
    tg_policy_schema_free(tp_schema);
    tp_schema = NULL;
    return tu_teardown(state);
}

/* The workspace the evaluation tests submit to. */
static const char *const tp_ctx_text =
    "{\"workspace\": {\"name\": \"team-a\", \"namespace\": \"ns-a\", \"default_queue\": \"lq\","
    "  \"default_priority\": \"taugrid-default\", \"output_root\": \"/data/projects/team-a\","
    "  \"allowed_profiles\": [\"gpu-a100\", \"cpu-small\", \"ray-gpu\"],"
    "  \"queues\": [\"lq\"], \"pvcs\": [\"data-a\", \"models\", \"scratch-1\"]},"
    " \"profiles\": ["
    "  {\"name\": \"gpu-a100\", \"engine\": \"job\", \"gpu_class\": \"a100-80gb\","
    "   \"default_image\": \"repo/train:1\", \"active_deadline_seconds\": 86400,"
    "   \"resources\": {\"cpu\": \"4\", \"memory_request\": \"32Gi\", \"cpu_limit\": \"8\"}},"
    "  {\"name\": \"cpu-small\", \"engine\": \"job\"},"
    "  {\"name\": \"ray-gpu\", \"engine\": \"rayjob\"}],"
    " \"priority_classes\": [{\"name\": \"taugrid-default\", \"value\": 1000},"
    "                        {\"name\": \"taugrid-priority\", \"value\": 1200}]}";

/* A snapshot from policy YAML files given as (name, text) pairs, NULL-ended.
 * Fails the test (printing the errors) when they do not load. */
static inline tg_policy_snapshot_t *tp_snapshot_files(const char *const *pairs,
                                                      const json_t *db_rows)
{
    tg_policy_files_t files = {0};
    for (size_t i = 0; pairs && pairs[i]; i += 2)
        tg_policy_files_add(&files, pairs[i], pairs[i + 1], strlen(pairs[i + 1]));
    tg_policy_snapshot_t *snap = NULL;
    json_t *errors = NULL;
    tg_rc_e rc = tg_policy_snapshot_build(tp_schema, &files, db_rows, 0, &snap, &errors);
    if (rc != TG_OK) {
        char text[4096];
        tg_policy_errors_format(errors, text, sizeof(text));
        fprintf(stderr, "policy did not load:\n%s\n", text);
    }
    json_decref(errors);
    tg_policy_files_clean(&files);
    assert_int_equal(rc, TG_OK);
    return snap;
}

static inline tg_policy_snapshot_t *tp_snapshot(const char *policy_yaml)
{
    const char *pairs[] = {"test.yaml", policy_yaml, NULL};
    return tp_snapshot_files(pairs, NULL);
}

/* The errors a policy text gives (new array; fails when it loads). */
static inline json_t *tp_load_errors(const char *policy_yaml)
{
    tg_policy_files_t files = {0};
    tg_policy_files_add(&files, "bad.yaml", policy_yaml, strlen(policy_yaml));
    tg_policy_snapshot_t *snap = NULL;
    json_t *errors = NULL;
    tg_rc_e rc = tg_policy_snapshot_build(tp_schema, &files, NULL, 0, &snap, &errors);
    tg_policy_files_clean(&files);
    assert_int_equal(rc, TG_EUNPROCESSABLE);
    assert_null(snap);
    assert_true(json_array_size(errors) > 0);
    return errors;
}

/* One evaluated run: the pipeline's answer, the spec's positions and the
 * policy result. */
typedef struct tp_run_s {
    json_t *out;       /* pipeline answer (validate only) */
    json_t *decisions; /* the result's decisions as JSON */
    tg_tauyaml_doc_t doc;
    tg_tauyaml_prov_t prov; /* the pipeline's provenance, as the hook would get it */
    tg_policy_result_t res;
    tg_rc_e rc;
} tp_run_t;

/* Resolve `spec` in tp_ctx_text (or `ctx_text`) and evaluate `snap` on it. */
static inline tg_rc_e tp_eval_ctx(const tg_policy_snapshot_t *snap, const char *spec,
                                  const char *ctx_text, tp_run_t *run)
{
    memset(run, 0, sizeof(*run));
    json_t *ctx = json_loads(ctx_text ? ctx_text : tp_ctx_text, 0, NULL);
    assert_non_null(ctx);
    tu_files_t f;
    tu_files_init(&f);
    tu_files_add_str(&f, "train.py", "print('train')\n");
    tg_rc_e rc = tu_run_ctx(spec, strlen(spec), ctx, &f.set, NULL, &run->out);
    tu_files_clean(&f);
    json_decref(ctx);
    if (rc != TG_OK)
        tu_dump_errors(run->out);
    assert_int_equal(rc, TG_OK);
    tg_tauyaml_limits_t lim;
    tg_tauyaml_limits_default(&lim);
    tg_tauyaml_diag_t d;
    tg_tauyaml_diag_init(&d, NULL, 10);
    tg_tauyaml_doc_init(&run->doc);
    assert_int_equal(tg_tauyaml_yaml_parse(spec, strlen(spec), &lim, &run->doc, &d), TG_OK);
    tg_tauyaml_diag_clean(&d);
    tg_tauyaml_prov_init(&run->prov);
    tg_tauyaml_prov_add_json(&run->prov, json_object_get(run->out, "provenance"));
    tg_policy_input_t in = {.resolved = json_object_get(run->out, "resolved"),
                            .provenance = &run->prov,
                            .locate = tg_policy_locate_pos,
                            .locate_arg = run->doc.pos};
    run->rc = tg_policy_evaluate(snap, &in, &run->res);
    run->decisions = tg_policy_result_decisions(&run->res);
    assert_int_equal(json_array_size(run->decisions), tg_policy_result_ndecisions(&run->res));
    return run->rc;
}

static inline tg_rc_e tp_eval(const tg_policy_snapshot_t *snap, const char *spec, tp_run_t *run)
{
    return tp_eval_ctx(snap, spec, NULL, run);
}

static inline void tp_run_clean(tp_run_t *run)
{
    json_decref(run->out);
    json_decref(run->decisions);
    tg_tauyaml_doc_clean(&run->doc);
    tg_policy_result_clean(&run->res);
    tg_tauyaml_prov_clean(&run->prov);
}

/* Where the evaluated config's field `path` came from, or NULL. */
static inline const char *tp_prov(const tp_run_t *run, const char *path)
{
    return tg_tauyaml_prov_get(tg_policy_result_provenance(&run->res), path);
}

/* The decisions of one rule (borrowed entries in a new array). */
static inline json_t *tp_decisions_of(const tp_run_t *run, const char *rule_id)
{
    json_t *out = json_array();
    size_t i;
    json_t *d;
    json_array_foreach(run->decisions, i, d) {
        if (strcmp(json_string_value(json_object_get(d, "rule_id")), rule_id) == 0)
            json_array_append(out, d);
    }
    return out;
}

/* The only decision of a rule; fails unless there is exactly one. */
static inline const json_t *tp_decision_(const tp_run_t *run, const char *rule_id, const char *file,
                                         int line)
{
    json_t *all = tp_decisions_of(run, rule_id);
    if (json_array_size(all) != 1) {
        char *dump = json_dumps(run->decisions, JSON_INDENT(1));
        fprintf(stderr, "%s:%d: %zu decisions of %s in:\n%s\n", file, line, json_array_size(all),
                rule_id, dump);
        free(dump);
        json_decref(all);
        fail();
    }
    const json_t *d = json_array_get(all, 0);
    json_decref(all); /* still referenced by run->decisions */
    return d;
}
#define tp_decision(run, id) tp_decision_((run), (id), __FILE__, __LINE__)

static inline const char *tp_outcome(const json_t *d)
{
    return json_string_value(json_object_get(d, "outcome"));
}

static inline json_int_t tp_int(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static inline const char *tp_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Write a file (for registry tests). */
static inline void tp_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif
