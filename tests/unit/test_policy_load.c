/* Loading policy: the shipped files, every kind of bad file (with file, line
 * and reason), database rows, the admin-API rule check, the effective view,
 * and the registry: reload, a bad reload keeping the old policy, stale
 * generations, and readers racing a writer. */
#include <pthread.h>
#include <unistd.h>

#include "test_policy_util.h"

#include "core/log.h"
#include "policy/registry.h"

/* The first error, with its fields checked. */
static const json_t *first_error(const json_t *errors, const char *file, const char *path, int line,
                                 const char *needle)
{
    size_t i;
    const json_t *e;
    json_array_foreach(errors, i, e) {
        const char *p = tp_str(e, "path");
        if (strcmp(tp_str(e, "file"), file) == 0 && p && strcmp(p, path) == 0 &&
            (!line || tp_int(e, "line") == line) &&
            (!needle || strstr(tp_str(e, "message"), needle)))
            return e;
    }
    char *dump = json_dumps(errors, JSON_INDENT(1));
    fprintf(stderr, "no error %s %s:%d \"%s\" in:\n%s\n", file, path, line, needle ? needle : "",
            dump);
    free(dump);
    fail();
    return NULL;
}

static void test_shipped_policies_load(void **state)
{
    (void)state;
    tg_policy_files_t files;
    json_t *errors = json_array();
    assert_int_equal(tg_policy_files_read("policies", &files, errors), TG_OK);
    assert_true(files.n >= 1);
    assert_string_equal(files.v[0].name, "default.yaml");
    tg_policy_files_t ex;
    assert_int_equal(tg_policy_files_read("policies/examples", &ex, errors), TG_OK);
    assert_true(ex.n >= 3);
    for (size_t i = 0; i < ex.n; i++)
        tg_policy_files_add(&files, ex.v[i].name, ex.v[i].text, ex.v[i].len);
    tg_policy_files_clean(&ex);
    json_decref(errors);
    tg_policy_snapshot_t *snap = NULL;
    errors = NULL;
    tg_rc_e rc = tg_policy_snapshot_build(tp_schema, &files, NULL, 0, &snap, &errors);
    if (rc != TG_OK) {
        char text[4096];
        tg_policy_errors_format(errors, text, sizeof(text));
        fprintf(stderr, "%s\n", text);
    }
    assert_int_equal(rc, TG_OK);
    assert_true(snap->nrules >= 25);
    /* every kind appears somewhere in the shipped files */
    for (int k = 0; k < TG_PK_COUNT; k++) {
        int seen = 0;
        for (size_t i = 0; i < snap->nrules; i++)
            seen |= snap->rules[i].kind == (tg_policy_kind_e)k;
        if (!seen)
            fprintf(stderr, "kind %s is not in any shipped policy\n", tg_policy_kind_name(k));
        assert_true(seen);
    }
    /* rule positions are remembered */
    assert_string_equal(snap->rules[0].id, "gpus-per-pod");
    assert_string_equal(snap->rules[0].source, "file:default.yaml");
    assert_true(snap->rules[0].line > 30);
    assert_int_equal(strlen(snap->digest), 64);
    tg_policy_snapshot_release(snap);
    tg_policy_files_clean(&files);
}

static void test_bad_files_name_file_line_reason(void **state)
{
    (void)state;
    json_t *e;
    /* an unknown key */
    e = tp_load_errors("rules:\n  - id: a\n    description: d\n    action: deny\n"
                       "    max_retries: 1\n    colour: red\n");
    first_error(e, "bad.yaml", "rules[0].colour", 6, "not a policy rule field");
    json_decref(e);
    /* a value of the wrong type, a bad id and a bad action: all reported */
    e = tp_load_errors("rules:\n  - id: Bad_Id\n    description: d\n    action: block\n"
                       "    max_gpus_per_run: many\n");
    first_error(e, "bad.yaml", "rules[0].id", 2, "lowercase");
    first_error(e, "bad.yaml", "rules[0].action", 4, "deny, warn or default");
    first_error(e, "bad.yaml", "rules[0].max_gpus_per_run", 5, "integer");
    assert_int_equal(json_array_size(e), 3);
    json_decref(e);
    /* two checks in one rule */
    e = tp_load_errors("rules:\n  - id: a\n    description: d\n    action: deny\n"
                       "    max_retries: 1\n    max_nodes: 2\n");
    first_error(e, "bad.yaml", "rules[0].max_nodes", 6, "sets both max_nodes and max_retries");
    json_decref(e);
    /* no check */
    e = tp_load_errors("rules:\n  - id: a\n    description: d\n    action: deny\n");
    first_error(e, "bad.yaml", "rules[0]", 2, "exactly one check");
    json_decref(e);
    /* default on a kind with nothing to fill */
    e = tp_load_errors("rules:\n  - id: a\n    description: d\n    action: default\n"
                       "    allowed_images: [x]\n");
    first_error(e, "bad.yaml", "rules[0].action", 4, "nothing to fill");
    json_decref(e);
    /* required fields, the rules key, the top level */
    e = tp_load_errors("rules:\n  - {id: a, action: deny, max_retries: 1}\n");
    first_error(e, "bad.yaml", "rules[0]", 2, "description");
    json_decref(e);
    e = tp_load_errors("description: nothing\n");
    first_error(e, "bad.yaml", "", 1, "rules");
    json_decref(e);
    /* quantities, patterns, enum items */
    e = tp_load_errors("rules:\n  - id: a\n    description: d\n    action: deny\n"
                       "    max_memory_per_pod: lots\n");
    first_error(e, "bad.yaml", "rules[0].max_memory_per_pod", 5, "quantity");
    json_decref(e);
    e = tp_load_errors("rules:\n  - id: a\n    description: d\n    action: deny\n"
                       "    required_experiment_fields: [title]\n");
    first_error(e, "bad.yaml", "rules[0].required_experiment_fields[0]", 5, NULL);
    json_decref(e);
    e = tp_load_errors("rules:\n  - id: a\n    description: d\n    action: deny\n"
                       "    scope: {workspaces: [a], clusters: [b]}\n    max_retries: 1\n");
    first_error(e, "bad.yaml", "rules[0].scope.clusters", 5, "unknown field");
    json_decref(e);
    /* YAML that does not parse */
    e = tp_load_errors("rules:\n  - id: a\n    description: [unclosed\n");
    assert_true(tp_int(json_array_get(e, 0), "line") >= 3);
    assert_string_equal(tp_str(json_array_get(e, 0), "file"), "bad.yaml");
    json_decref(e);
    e = tp_load_errors("# only a comment\n");
    assert_string_equal(tp_str(json_array_get(e, 0), "file"), "bad.yaml");
    json_decref(e);
    e = tp_load_errors("rules:\n  - id: a\n    id: b\n");
    first_error(e, "bad.yaml", "rules[0].id", 3, NULL);
    json_decref(e);
}

static void test_duplicate_ids_across_files(void **state)
{
    (void)state;
    const char *a = "rules:\n  - {id: same, description: d, action: deny, max_retries: 1}\n";
    const char *b = "rules:\n  - {id: other, description: d, action: deny, max_retries: 1}\n"
                    "  - {id: same, description: d, action: deny, max_nodes: 1}\n";
    tg_policy_files_t files = {0};
    tg_policy_files_add(&files, "a.yaml", a, strlen(a));
    tg_policy_files_add(&files, "b.yaml", b, strlen(b));
    tg_policy_snapshot_t *snap = NULL;
    json_t *errors = NULL;
    assert_int_equal(tg_policy_snapshot_build(tp_schema, &files, NULL, 0, &snap, &errors),
                     TG_EUNPROCESSABLE);
    first_error(errors, "b.yaml", "rules[1].id", 3, "already used by a.yaml line 2");
    char text[512];
    tg_policy_errors_format(errors, text, sizeof(text));
    tu_assert_contains(text, "b.yaml:3:");
    json_decref(errors);
    tg_policy_files_clean(&files);
}

static void test_database_rows(void **state)
{
    (void)state;
    const char *file = "rules:\n"
                       "  - {id: cap, description: file, action: deny, max_retries: 1}\n"
                       "  - {id: keep, description: file, action: deny, max_nodes: 4}\n";
    json_t *rows = json_loads(
        "[{\"id\": \"cap\", \"version\": 3, \"enabled\": true,"
        "  \"rule\": {\"description\": \"db\", \"action\": \"warn\", \"max_retries\": 5}},"
        " {\"id\": \"extra\", \"version\": 1, \"enabled\": false,"
        "  \"rule\": {\"id\": \"extra\", \"description\": \"db\", \"action\": \"deny\","
        "            \"max_gpus_per_run\": 2}}]",
        0, NULL);
    assert_non_null(rows);
    const char *pairs[] = {"f.yaml", file, NULL};
    tg_policy_snapshot_t *snap = tp_snapshot_files(pairs, rows);
    assert_int_equal(snap->nrules, 3);
    /* the database rule took the file rule's place */
    assert_string_equal(snap->rules[0].id, "cap");
    assert_string_equal(snap->rules[0].description, "db");
    assert_int_equal(snap->rules[0].version, 3);
    assert_int_equal(snap->rules[0].action, TG_POLICY_WARN);
    assert_string_equal(snap->rules[0].source, "database (replaces file:f.yaml)");
    assert_string_equal(snap->rules[1].id, "keep");
    assert_string_equal(snap->rules[2].id, "extra");
    assert_false(snap->rules[2].enabled);
    /* the effective view: disabled rules only on request */
    json_t *eff = tg_policy_snapshot_effective(snap, "team-a", 0);
    assert_int_equal(json_array_size(json_object_get(eff, "rules")), 2);
    const json_t *r0 = json_array_get(json_object_get(eff, "rules"), 0);
    assert_string_equal(tp_str(r0, "kind"), "max_retries");
    assert_int_equal(tp_int(r0, "version"), 3);
    json_decref(eff);
    eff = tg_policy_snapshot_effective(snap, NULL, 1);
    assert_int_equal(json_array_size(json_object_get(eff, "rules")), 3);
    json_decref(eff);
    tg_policy_snapshot_release(snap);
    json_decref(rows);

    /* a bad row fails the load, naming the row */
    rows = json_loads("[{\"id\": \"x\", \"version\": 2, \"enabled\": true,"
                      "  \"rule\": {\"description\": \"d\", \"action\": \"deny\","
                      "            \"max_retries\": -1}}]",
                      0, NULL);
    tg_policy_files_t none = {0};
    json_t *errors = NULL;
    assert_int_equal(tg_policy_snapshot_build(tp_schema, &none, rows, 7, &snap, &errors),
                     TG_EUNPROCESSABLE);
    first_error(errors, "database:x v2", "max_retries", 0, NULL);
    json_decref(errors);
    json_decref(rows);
}

static void test_rule_validate_for_api(void **state)
{
    (void)state;
    json_t *rule = json_loads("{\"id\": \"ok\", \"description\": \"d\", \"action\": \"default\","
                              " \"max_cpu_per_pod\": 16, \"scope\": {\"engines\": [\"job\"]}}",
                              0, NULL);
    json_t *errs = tg_policy_rule_validate(tp_schema, rule);
    assert_int_equal(json_array_size(errs), 0);
    /* normalised like a file: the number became the quantity string */
    assert_string_equal(tp_str(rule, "max_cpu_per_pod"), "16");
    json_decref(errs);
    json_decref(rule);
    rule = json_loads("{\"id\": \"ok\", \"action\": \"default\", \"allowed_pvcs\": [],"
                      " \"scope\": {\"engines\": [\"spark\"]}}",
                      0, NULL);
    errs = tg_policy_rule_validate(tp_schema, rule);
    assert_true(json_array_size(errs) >= 3);
    char *dump = json_dumps(errs, 0);
    tu_assert_contains(dump, "description");
    tu_assert_contains(dump, "scope.engines[0]");
    tu_assert_contains(dump, "allowed_pvcs");
    free(dump);
    json_decref(errs);
    json_decref(rule);
}

/* ---- registry ---------------------------------------------------------------------------- */

static tg_policy_schema_t *schema_copy(void)
{
    char err[256];
    tg_policy_schema_t *s = tg_policy_schema_load_file(tp_schema_path(), err, sizeof(err));
    assert_non_null(s);
    return s;
}

static char *temp_dir(void)
{
    char tmpl[] = "/tmp/tg-policy-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

static void rm_dir(const char *dir)
{
    char path[512];
    static const char *const names[] = {"a.yaml", "b.yaml", "c.yml", "notes.txt"};
    for (size_t i = 0; i < TG_ARRAY_LEN(names); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

static void test_registry_reload_keeps_old_on_error(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char path[512];
    snprintf(path, sizeof(path), "%s/a.yaml", dir);
    tp_write(path, "rules:\n  - {id: one, description: d, action: deny, max_retries: 1}\n");
    snprintf(path, sizeof(path), "%s/notes.txt", dir);
    tp_write(path, "not a policy\n");
    tg_policy_registry_t *reg = tg_policy_registry_new(schema_copy(), dir);
    tg_policy_snapshot_t *s0 = tg_policy_registry_acquire(reg);
    assert_int_equal(s0->nrules, 0); /* empty until the first reload */
    tg_policy_snapshot_release(s0);

    json_t *errors = NULL;
    assert_int_equal(tg_policy_registry_reload(reg, NULL, 0, 1, &errors), TG_OK);
    assert_null(errors);
    tg_policy_snapshot_t *s1 = tg_policy_registry_acquire(reg);
    assert_int_equal(s1->nrules, 1);

    /* a broken second file: the reload fails, naming it; the old policy stays */
    snprintf(path, sizeof(path), "%s/b.yaml", dir);
    tp_write(path, "rules:\n  - id: two\n    description: d\n    action: deny\n"
                   "    max_retries: lots\n");
    assert_int_equal(tg_policy_registry_reload(reg, NULL, 0, 1, &errors), TG_EUNPROCESSABLE);
    first_error(errors, "b.yaml", "rules[0].max_retries", 5, NULL);
    json_decref(errors);
    tg_policy_snapshot_t *s2 = tg_policy_registry_acquire(reg);
    assert_ptr_equal(s1, s2);
    tg_policy_snapshot_release(s2);

    /* an admin change rebuilds from the files in force, not the broken edit */
    json_t *rows = json_loads("[{\"id\": \"db\", \"version\": 1, \"enabled\": true,"
                              "  \"rule\": {\"description\": \"d\", \"action\": \"deny\","
                              "            \"max_nodes\": 3}}]",
                              0, NULL);
    assert_int_equal(tg_policy_registry_reload(reg, rows, 1, 0, &errors), TG_OK);
    s2 = tg_policy_registry_acquire(reg);
    assert_int_equal(s2->nrules, 2);
    assert_string_equal(s2->rules[1].source, "database");
    assert_int_equal(s2->generation, 1);
    tg_policy_snapshot_release(s2);

    /* fixed: the new policy is in force; the old snapshot lives while held */
    tp_write(path, "rules:\n  - {id: two, description: d, action: deny, max_retries: 2}\n");
    assert_int_equal(tg_policy_registry_reload(reg, rows, 1, 1, &errors), TG_OK);
    json_decref(rows);
    tg_policy_snapshot_t *s3 = tg_policy_registry_acquire(reg);
    assert_int_equal(s3->nrules, 3);
    assert_string_equal(s3->rules[1].id, "two");
    assert_string_not_equal(s3->digest, s1->digest);
    assert_int_equal(s1->nrules, 1);
    tg_policy_snapshot_release(s1);

    /* an older database generation never replaces a newer one */
    assert_int_equal(tg_policy_registry_reload(reg, NULL, 5, 1, &errors), TG_OK);
    assert_int_equal(tg_policy_registry_generation(reg), 5);
    tg_policy_snapshot_t *old = NULL;
    assert_int_equal(tg_policy_registry_build(reg, NULL, 4, 0, &old, &errors), TG_OK);
    assert_int_equal(tg_policy_registry_install(reg, old), 0);
    assert_int_equal(tg_policy_registry_generation(reg), 5);
    tg_policy_snapshot_release(s3);

    /* a missing folder is an error too */
    tg_policy_registry_free(reg);
    rm_dir(dir);
    reg = tg_policy_registry_new(schema_copy(), dir);
    assert_int_equal(tg_policy_registry_reload(reg, NULL, 0, 1, &errors), TG_EUNPROCESSABLE);
    tu_assert_contains(tp_str(json_array_get(errors, 0), "message"), "cannot be opened");
    json_decref(errors);
    tg_policy_registry_free(reg);
    free(dir);
}

/* A SIGHUP re-reading the files races an admin change reading the database:
 * neither loses the other's half. */
static void test_registry_merges_racing_reloads(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char path[512];
    snprintf(path, sizeof(path), "%s/a.yaml", dir);
    tp_write(path, "rules:\n  - {id: one, description: d, action: deny, max_retries: 1}\n");
    tg_policy_registry_t *reg = tg_policy_registry_new(schema_copy(), dir);
    json_t *errors = NULL;
    json_t *rows1 = json_loads("[{\"id\": \"db1\", \"version\": 1, \"enabled\": true,"
                               " \"rule\": {\"description\": \"d\", \"action\": \"deny\","
                               " \"max_nodes\": 3}}]",
                               0, NULL);
    json_t *rows2 = json_loads("[{\"id\": \"db1\", \"version\": 1, \"enabled\": true,"
                               " \"rule\": {\"description\": \"d\", \"action\": \"deny\","
                               " \"max_nodes\": 3}},"
                               " {\"id\": \"db2\", \"version\": 1, \"enabled\": true,"
                               " \"rule\": {\"description\": \"d\", \"action\": \"deny\","
                               " \"max_gpus_per_run\": 3}}]",
                               0, NULL);
    assert_int_equal(tg_policy_registry_reload(reg, rows1, 1, 1, &errors), TG_OK);
    /* the admin change builds from the files in force and database generation 2... */
    tg_policy_snapshot_t *admin = NULL;
    assert_int_equal(tg_policy_registry_build(reg, rows2, 2, 0, &admin, &errors), TG_OK);
    /* ...while a SIGHUP installs new files with generation 1 */
    tp_write(path, "rules:\n  - {id: one, description: d, action: deny, max_retries: 1}\n"
                   "  - {id: new-file-rule, description: d, action: deny, max_nodes: 9}\n");
    assert_int_equal(tg_policy_registry_reload(reg, rows1, 1, 1, &errors), TG_OK);
    /* the admin snapshot arrives last: newer rows, older files -> merged */
    assert_int_equal(tg_policy_registry_install(reg, admin), 1);
    tg_policy_snapshot_t *s = tg_policy_registry_acquire(reg);
    assert_int_equal(s->generation, 2);
    assert_true(tg_policy_snapshot_find(s, "new-file-rule") >= 0);
    assert_true(tg_policy_snapshot_find(s, "db2") >= 0);
    tg_policy_snapshot_release(s);
    /* and a late SIGHUP-style snapshot from generation 1 keeps db2 too */
    tg_policy_snapshot_t *late = NULL;
    assert_int_equal(tg_policy_registry_build(reg, rows1, 1, 1, &late, &errors), TG_OK);
    assert_int_equal(tg_policy_registry_install(reg, late), 1);
    s = tg_policy_registry_acquire(reg);
    assert_int_equal(s->generation, 2);
    assert_true(tg_policy_snapshot_find(s, "db2") >= 0);
    tg_policy_snapshot_release(s);
    json_decref(rows1);
    json_decref(rows2);
    tg_policy_registry_free(reg);
    rm_dir(dir);
    free(dir);
}

typedef struct race_s {
    tg_policy_registry_t *reg;
    json_t *resolved;
    int stop;
    long evaluations;
} race_t;

static void *race_reader(void *arg)
{
    race_t *r = arg;
    long n = 0;
    while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
        tg_policy_snapshot_t *s = tg_policy_registry_acquire(r->reg);
        tg_policy_input_t in = {.resolved = r->resolved};
        tg_policy_result_t res;
        if (tg_policy_evaluate(s, &in, &res) == TG_EINVAL)
            abort();
        if (tg_policy_result_ndecisions(&res) != s->nrules)
            abort(); /* one decision per unscoped rule of the snapshot acquired */
        tg_policy_result_clean(&res);
        tg_policy_snapshot_release(s);
        n++;
    }
    __atomic_add_fetch(&r->evaluations, n, __ATOMIC_RELAXED);
    return NULL;
}

static void test_registry_readers_race_reloads(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char path[512];
    snprintf(path, sizeof(path), "%s/a.yaml", dir);
    tp_write(path, "rules:\n  - {id: one, description: d, action: deny, max_retries: 1}\n");
    race_t r = {.reg = tg_policy_registry_new(schema_copy(), dir)};
    json_t *errors = NULL;
    assert_int_equal(tg_policy_registry_reload(r.reg, NULL, 0, 1, &errors), TG_OK);
    tp_run_t run;
    tg_policy_snapshot_t *empty = tp_snapshot("rules: []\n");
    tp_eval(empty,
            "name: demo\nengine: job\nentrypoint: train.py\nimage: x/y:1\npolicy:\n"
            "  profile: cpu-small\n",
            &run);
    tg_policy_snapshot_release(empty);
    r.resolved = json_object_get(run.out, "resolved");
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race_reader, &r), 0);
    for (int i = 0; i < 200; i++) {
        /* alternate between one and two rules, and a broken file now and then */
        snprintf(path, sizeof(path), "%s/b.yaml", dir);
        if (i % 10 == 9)
            tp_write(path, "rules: [oops\n");
        else if (i % 2)
            tp_write(path, "rules:\n  - {id: two, description: d, action: deny, max_nodes: 9}\n");
        else
            unlink(path);
        tg_rc_e rc = tg_policy_registry_reload(r.reg, NULL, 0, 1, &errors);
        assert_true(rc == TG_OK || i % 10 == 9);
        json_decref(errors);
        errors = NULL;
    }
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_true(r.evaluations > 0);
    /* quiescent: the registry's reference plus ours */
    tg_policy_snapshot_t *s = tg_policy_registry_acquire(r.reg);
    assert_int_equal(s->refs, 2);
    tg_policy_snapshot_release(s);
    tg_policy_registry_free(r.reg);
    tp_run_clean(&run);
    rm_dir(dir);
    free(dir);
}

int main(void)
{
    tg_log_set_level(TG_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_policies_load),
        cmocka_unit_test(test_bad_files_name_file_line_reason),
        cmocka_unit_test(test_duplicate_ids_across_files),
        cmocka_unit_test(test_database_rows),
        cmocka_unit_test(test_rule_validate_for_api),
        cmocka_unit_test(test_registry_reload_keeps_old_on_error),
        cmocka_unit_test(test_registry_merges_racing_reloads),
        cmocka_unit_test(test_registry_readers_race_reloads),
    };
    return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
