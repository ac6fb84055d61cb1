/* TauGrid's own cases (tests/conformance/upstream/cases.json) through the
 * whole pipeline: each gets the outcome the corpus records, in the world of
 * tests/conformance/upstream/world.json, with its manifests rendered. The
 * same expectations are checked through the HTTP API by
 * tests/integration/test_conformance_api.py; both read the corpus with
 * tests/conformance/upstream/README.md's rules. */
#include "pipeline_test_util.h"

#define UP "tests/conformance/upstream/"

static json_t *up_world;

/* The resolution context of workspace `ws`, built from the world as
 * gateway/store/context.c builds it from the database. */
static json_t *up_context(const char *ws)
{
    json_t *w = NULL;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(up_world, "workspaces"), i, x)
        if (strcmp(json_string_value(json_object_get(x, "name")), ws) == 0)
            w = x;
    if (!w)
        fail_msg("workspace %s is not in world.json", ws);
    json_t *wctx = json_pack("{s:O, s:O, s:O, s:O}", "name", json_object_get(w, "name"),
                             "namespace", json_object_get(w, "namespace"), "default_queue",
                             json_object_get(w, "default_queue"), "default_priority",
                             json_object_get(w, "default_priority"));
    if (json_array_size(json_object_get(w, "pvcs")))
        json_object_set(wctx, "pvcs", json_object_get(w, "pvcs"));
    json_t *queues = json_array(), *allowed = json_array(), *profiles = json_array();
    const char *k;
    json_object_foreach(json_object_get(w, "queues"), k, x)
        json_array_append_new(queues, json_string(k));
    json_object_set_new(wctx, "queues", queues);
    json_array_foreach(json_object_get(up_world, "profiles"), i, x) {
        const json_t *aw = json_object_get(x, "allowed_workspaces");
        int ok = json_array_size(aw) == 0;
        size_t j;
        const json_t *a;
        json_array_foreach(aw, j, a)
            ok |= strcmp(json_string_value(a), ws) == 0;
        if (!ok)
            continue;
        json_t *p = json_deep_copy(json_object_get(x, "settings"));
        if (!p)
            p = json_object();
        json_object_set(p, "name", json_object_get(x, "name"));
        json_object_set(p, "engine", json_object_get(x, "engine"));
        if (aw)
            json_object_set(p, "allowed_workspaces", (json_t *)aw);
        json_array_append_new(profiles, p);
        json_array_append(allowed, json_object_get(x, "name"));
    }
    if (json_array_size(allowed))
        json_object_set(wctx, "allowed_profiles", allowed);
    json_decref(allowed);
    return json_pack("{s:o, s:o, s:O}", "workspace", wctx, "profiles", profiles, "priority_classes",
                     json_object_get(up_world, "priority_classes"));
}

/* Does any entry of `list` (errors or warnings) have `needle` in its
 * message (and, when path is not NULL, that path)? */
static int up_has(const json_t *list, const char *path, const char *needle)
{
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e) {
        const char *p = json_string_value(json_object_get(e, "path"));
        const char *m = json_string_value(json_object_get(e, "message"));
        if ((!path || (p && strcmp(p, path) == 0)) && m && strstr(m, needle))
            return 1;
    }
    return 0;
}

static size_t up_count(const json_t *list, const char *needle)
{
    size_t i, n = 0;
    const json_t *e;
    json_array_foreach(list, i, e) {
        const char *m = json_string_value(json_object_get(e, "message"));
        n += m && strstr(m, needle);
    }
    return n;
}

/* The "check" of a case: facts of the rendered workload. Returns a reason
 * it fails, or NULL. */
static const char *up_check(const json_t *check, const json_t *out, char *why, size_t n)
{
    const json_t *wl = tu_workload(out);
    const char *kind = json_string_value(json_object_get(check, "kind"));
    if (!wl)
        return "no workload rendered";
    if (kind && strcmp(json_string_value(json_object_get(wl, "kind")), kind) != 0)
        return "another kind";
    const json_t *grp = tu_at(wl, "spec", "rayClusterSpec", "workerGroupSpecs", "#0", NULL);
    const json_t *v;
    if ((v = json_object_get(check, "worker_replicas")) &&
        json_integer_value(json_object_get(grp, "replicas")) != json_integer_value(v))
        return "another worker replica count";
    if ((v = json_object_get(check, "worker_gpus")) &&
        strtol(json_string_value(tu_at(grp, "rayStartParams", "num-gpus", NULL)) ?: "-1", NULL,
               10) != json_integer_value(v))
        return "another GPU count per worker";
    if ((v = json_object_get(check, "worker_group_suffix"))) {
        const char *g = json_string_value(json_object_get(grp, "groupName"));
        size_t gl = g ? strlen(g) : 0, sl = json_string_length(v);
        if (gl < sl || strcmp(g + gl - sl, json_string_value(v)) != 0)
            return "another worker group name";
    }
    /* rayjob-eval's CPU fan-out: the second group, CPU-only, named -cpu */
    const json_t *fan = tu_at(wl, "spec", "rayClusterSpec", "workerGroupSpecs", "#1", NULL);
    const char *fname = json_string_value(json_object_get(fan, "groupName"));
    if ((v = json_object_get(check, "cpu_worker_replicas")) &&
        (json_integer_value(json_object_get(fan, "replicas")) != json_integer_value(v) || !fname ||
         strlen(fname) < 4 || strcmp(fname + strlen(fname) - 4, "-cpu") != 0 ||
         strcmp(json_string_value(tu_at(fan, "rayStartParams", "num-gpus", NULL)) ?: "", "0") != 0))
        return "another CPU fan-out group";
    if ((v = json_object_get(check, "ray_version")) &&
        !json_equal(tu_at(wl, "spec", "rayClusterSpec", "rayVersion", NULL), (json_t *)v))
        return "another rayVersion";
    if ((v = json_object_get(check, "entrypoint_contains")) &&
        !strstr(json_string_value(tu_at(wl, "spec", "entrypoint", NULL)) ?: "",
                json_string_value(v)))
        return "the entrypoint lacks it";
    if ((v = json_object_get(check, "experiment_name")) &&
        !json_equal(tu_at(out, "resolved", "experiment", "name", NULL), (json_t *)v))
        return "another experiment name";
    if ((v = json_object_get(check, "annotation"))) {
        const json_t *a =
            tu_at(wl, "metadata", "annotations", json_string_value(json_array_get(v, 0)), NULL);
        if (!json_equal(a, json_array_get(v, 1)))
            return "another annotation value";
    }
    size_t i;
    const json_t *name;
    json_array_foreach(json_object_get(check, "init_containers"), i, name) {
        int found = 0;
        size_t j;
        const json_t *ic;
        json_array_foreach(tu_at(wl, "spec", "template", "spec", "initContainers", NULL), j, ic)
            found |= json_equal(json_object_get(ic, "name"), name);
        if (!found) {
            snprintf(why, n, "no init container %s", json_string_value(name));
            return why;
        }
    }
    return NULL;
}

static void test_upstream_cases(void **state)
{
    (void)state;
    json_t *corpus = tu_load_json(UP "cases.json");
    up_world = tu_load_json(UP "world.json");
    assert_non_null(corpus);
    assert_non_null(up_world);
    /* With TG_UPSTREAM_MANIFESTS=DIR, each accepted case's manifests are
     * written to DIR/<id>.manifests.json. */
    const char *dump_dir = getenv("TG_UPSTREAM_MANIFESTS");
    size_t i, failed = 0, agree = 0;
    const json_t *c;
    json_array_foreach(json_object_get(corpus, "cases"), i, c) {
        const char *id = json_string_value(json_object_get(c, "id"));
        char path[512];
        snprintf(path, sizeof(path), UP "%s", json_string_value(json_object_get(c, "spec")));
        size_t len = 0;
        char *yaml = tu_slurp(path, &len);
        assert_non_null(yaml);
        tu_files_t f;
        tu_files_init(&f);
        const char *folder = json_string_value(json_object_get(c, "files"));
        if (folder) {
            snprintf(path, sizeof(path), UP "files/%s", folder);
            tu_files_add_dir(&f, path);
        }
        json_t *ctx = up_context(json_string_value(json_object_get(c, "workspace")));
        json_t *out = NULL;
        tg_rc_e rc = tu_run_ctx(yaml, len, ctx, &f.set, "up-case-1", &out);
        const json_t *want = json_object_get(c, "taugate");
        json_int_t status = json_integer_value(json_object_get(want, "status"));
        const json_t *errs = json_object_get(out, "errors"),
                     *warns = json_object_get(out, "warnings");
        char why[256];
        const char *bad = NULL;
        if ((status == 200) != (rc == TG_OK) || (status == 422 && rc != TG_EUNPROCESSABLE))
            bad = "another outcome";
        const json_t *err = json_object_get(want, "error");
        if (!bad && err) {
            const char *p = json_string_value(json_object_get(err, "path"));
            const char *needle = json_string_value(json_object_get(err, "contains"));
            if (!up_has(errs, p && *p ? p : NULL, needle))
                bad = "no such error";
            size_t k;
            const json_t *also;
            json_array_foreach(json_object_get(err, "also"), k, also)
                if (!up_has(errs, NULL, json_string_value(also)))
                    bad = "the error lacks a part";
        }
        size_t k;
        const json_t *wv;
        json_array_foreach(json_object_get(want, "warnings"), k, wv)
            if (!bad && !up_has(warns, NULL, json_string_value(wv)))
                bad = "a warning is missing";
        const char *nw = json_string_value(json_object_get(want, "no_warning_containing"));
        if (!bad && nw && up_has(warns, NULL, nw))
            bad = "an unexpected warning";
        const char *ck;
        json_object_foreach(json_object_get(want, "warning_count"), ck, wv)
            if (!bad && (json_int_t)up_count(warns, ck) != json_integer_value(wv))
                bad = "another number of warnings";
        if (!bad && rc == TG_OK && json_object_get(want, "check"))
            bad = up_check(json_object_get(want, "check"), out, why, sizeof(why));
        if (!bad && rc == TG_OK && dump_dir) { /* for tests/integration/test_render_schemas.py */
            snprintf(path, sizeof(path), "%s/%s.manifests.json", dump_dir, id);
            if (json_dump_file(json_object_get(out, "manifests"), path, JSON_INDENT(1)) != 0)
                bad = "its manifests could not be written";
        }
        /* the corpus itself: an agreeing case has upstream's outcome */
        int accepted =
            strcmp(json_string_value(tu_at(c, "upstream", "outcome", NULL)), "accepted") == 0;
        int agrees = json_is_true(json_object_get(c, "agrees"));
        if (!bad && agrees != (accepted == (status == 200)))
            bad = "the case says it agrees, but its outcomes differ (or the reverse)";
        if (!bad && !agrees && !json_string_value(json_object_get(c, "reason")))
            bad = "a disagreement without a written reason";
        agree += agrees;
        if (bad) {
            char *d = json_dumps(out, JSON_INDENT(1));
            fprintf(stderr, "case %s: %s (rc %d)\n%s\n", id, bad, rc, d);
            free(d);
            failed++;
        }
        json_decref(out);
        json_decref(ctx);
        tu_files_clean(&f);
        free(yaml);
    }
    fprintf(stderr, "%zu upstream cases, %zu agree with TauGrid, %zu failed\n", i, agree, failed);
    json_decref(corpus);
    json_decref(up_world);
    assert_int_equal(failed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upstream_cases),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
