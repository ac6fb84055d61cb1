/* Evaluation: scope selection, default rules filling values (and provenance),
 * order, disabled rules, decisions for evidence, and the pipeline hook. */
#include "test_policy_util.h"

#define JOB_CPU                                                                                    \
    "name: demo\nengine: job\nentrypoint: train.py\nimage: ghcr.io/acme/train:1\npolicy:\n"        \
    "  profile: cpu-small\n"

static const char *outcome_of(const tp_run_t *run, const char *id)
{
    return tp_outcome(tp_decision(run, id));
}

static size_t ndecisions_of(const tp_run_t *run, const char *id)
{
    json_t *all = tp_decisions_of(run, id);
    size_t n = json_array_size(all);
    json_decref(all);
    return n;
}

static void test_scope_selection(void **state)
{
    (void)state;
    const char *pol =
        "rules:\n"
        "- {id: ws, description: d, action: deny, max_retries: 0, scope: {workspaces: [team-a]}}\n"
        "- {id: ws-glob, description: d, action: deny, max_retries: 0,"
        " scope: {workspaces: [\"team-*\"]}}\n"
        "- {id: other-ws, description: d, action: deny, max_retries: 0,"
        " scope: {workspaces: [team-b]}}\n"
        "- {id: team, description: d, action: deny, max_retries: 0, scope: {teams: [vision]}}\n"
        "- {id: lane, description: d, action: deny, max_retries: 0, scope: {lanes: [eval]}}\n"
        "- {id: ray-only, description: d, action: deny, max_retries: 0,"
        " scope: {engines: [rayjob]}}\n"
        "- {id: job-only, description: d, action: deny, max_retries: 0, scope: {engines: [job]}}\n"
        "- {id: both, description: d, action: deny, max_retries: 0,"
        " scope: {teams: [vision], lanes: [training]}}\n"
        "- {id: everyone, description: d, action: deny, max_retries: 0}\n"
        "- {id: empty-scope, description: d, action: deny, max_retries: 0, scope: {}}\n";
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    tp_run_t run;

    /* No team, no lane, a Job in team-a. */
    tp_eval(snap, JOB_CPU, &run);
    assert_string_equal(outcome_of(&run, "ws"), "allow");
    assert_string_equal(outcome_of(&run, "ws-glob"), "allow");
    assert_int_equal(ndecisions_of(&run, "other-ws"), 0);
    assert_int_equal(ndecisions_of(&run, "team"), 0);
    assert_int_equal(ndecisions_of(&run, "lane"), 0);
    assert_int_equal(ndecisions_of(&run, "ray-only"), 0);
    assert_string_equal(outcome_of(&run, "job-only"), "allow");
    assert_int_equal(ndecisions_of(&run, "both"), 0);
    assert_string_equal(outcome_of(&run, "everyone"), "allow");
    assert_string_equal(outcome_of(&run, "empty-scope"), "allow");
    tp_run_clean(&run);

    /* Team vision, lane eval: team and lane apply, `both` needs training. */
    tp_eval(snap, JOB_CPU "  team: vision\n  lane: eval\nresilience:\n  max_retries: 1\n", &run);
    assert_string_equal(outcome_of(&run, "team"), "deny");
    assert_string_equal(outcome_of(&run, "lane"), "deny");
    assert_int_equal(ndecisions_of(&run, "both"), 0);
    assert_int_equal(ndecisions_of(&run, "other-ws"), 0);
    /* every rule in scope reports the same violation, each with its id */
    assert_int_equal(json_array_size(run.res.errors), 7);
    tp_run_clean(&run);

    tp_eval(snap, JOB_CPU "  team: vision\n  lane: training\n", &run);
    assert_string_equal(outcome_of(&run, "both"), "allow");
    tp_run_clean(&run);

    /* The caller's workspace wins over the resolved one. */
    tp_run_t r2;
    tp_eval(snap, JOB_CPU, &r2);
    tg_policy_result_t res;
    tg_policy_input_t in = {.resolved = json_object_get(r2.out, "resolved"),
                            .provenance = &r2.prov,
                            .workspace = "team-b",
                            .engine = "rayjob"};
    assert_int_equal(tg_policy_evaluate(snap, &in, &res), TG_OK);
    size_t n_other = 0, n_ws = 0, n_ray = 0, i;
    json_t *d, *all = tg_policy_result_decisions(&res);
    json_array_foreach(all, i, d) {
        const char *id = tp_str(d, "rule_id");
        n_other += strcmp(id, "other-ws") == 0;
        n_ws += strcmp(id, "ws") == 0;
        n_ray += strcmp(id, "ray-only") == 0;
        /* without a locate function every location is 1:1 */
        assert_int_equal(tp_int(d, "line"), 1);
    }
    assert_int_equal(n_other, 1);
    assert_int_equal(n_ws, 0);
    assert_int_equal(n_ray, 1);
    json_decref(all);
    tg_policy_result_clean(&res);
    tp_run_clean(&r2);
    tg_policy_snapshot_release(snap);
}

static void test_defaults_fill_values(void **state)
{
    (void)state;
    const char *pol = "rules:\n"
                      "- {id: deadline, description: d, action: default,"
                      " max_active_deadline_seconds: 7200}\n"
                      "- {id: secure, description: d, action: default,"
                      " require_security_mode: restricted}\n"
                      "- {id: retries, description: d, action: default, max_retries: 2}\n"
                      "- {id: cpu, description: d, action: default, max_cpu_per_pod: \"6\"}\n"
                      "- {id: mem, description: d, action: default, max_memory_per_pod: 24Gi}\n"
                      "- {id: gpu, description: d, action: default,"
                      " allowed_gpu_classes: [h100-80gb]}\n"
                      /* checks see the filled values */
                      "- {id: need-deadline, description: d, action: deny,"
                      " require_active_deadline: true}\n"
                      "- {id: deadline-cap, description: d, action: deny,"
                      " max_active_deadline_seconds: 7200}\n";
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    tp_run_t run;
    tp_eval(snap, JOB_CPU "compute:\n  cpu_request: 2\n", &run);
    assert_int_equal(run.rc, TG_OK);
    assert_true(run.res.patched);
    const json_t *res = run.res.resolved;
    assert_int_equal(json_integer_value(tu_at(res, "run", "active_deadline_seconds", NULL)), 7200);
    assert_string_equal(tp_prov(&run, "run.active_deadline_seconds"), "policy:deadline");
    assert_string_equal(json_string_value(tu_at(res, "runtime", "security_mode", NULL)),
                        "restricted");
    assert_string_equal(tp_prov(&run, "runtime.security_mode"), "policy:secure");
    assert_int_equal(json_integer_value(tu_at(res, "resilience", "max_retries", NULL)), 2);
    assert_string_equal(tp_prov(&run, "resilience.max_retries"), "policy:retries");
    /* the spec's cpu_request stays; the unset limit is filled */
    assert_string_equal(json_string_value(tu_at(res, "compute", "cpu_request", NULL)), "2");
    assert_string_equal(json_string_value(tu_at(res, "compute", "cpu_limit", NULL)), "6");
    assert_string_equal(tp_prov(&run, "compute.cpu_limit"), "policy:cpu");
    /* the built-in 2Gi request is under the cap; the limit is filled */
    assert_string_equal(json_string_value(tu_at(res, "compute", "memory_limit", NULL)), "24Gi");
    /* a CPU run gets no GPU class */
    assert_string_equal(json_string_value(tu_at(res, "policy", "gpu_class", NULL)), "any");
    assert_string_equal(outcome_of(&run, "gpu"), "allow");
    assert_string_equal(outcome_of(&run, "need-deadline"), "allow");
    assert_string_equal(outcome_of(&run, "deadline-cap"), "allow");
    const json_t *d = tp_decision(&run, "deadline");
    assert_string_equal(tp_outcome(d), "default");
    assert_int_equal(tp_int(d, "actual"), 7200);
    assert_null(json_object_get(d, "message")); /* the rule has none */

    /* The pipeline's resolved config was not touched (it shares nodes with
     * the spec and the context). */
    const json_t *orig = json_object_get(run.out, "resolved");
    assert_true(json_is_null(tu_at(orig, "run", "active_deadline_seconds", NULL)));
    assert_true(json_is_null(tu_at(orig, "runtime", "security_mode", NULL)));
    assert_int_equal(json_integer_value(tu_at(orig, "resilience", "max_retries", NULL)), 0);
    assert_null(tu_at(run.out, "provenance", "run.active_deadline_seconds", NULL));
    assert_null(tg_tauyaml_prov_get(&run.prov, "run.active_deadline_seconds"));
    assert_true(res != orig);
    /* untouched sections are shared, touched ones copied */
    assert_ptr_equal(json_object_get(res, "storage"), json_object_get(orig, "storage"));
    assert_ptr_not_equal(json_object_get(res, "run"), json_object_get(orig, "run"));
    tp_run_clean(&run);

    /* Values the spec or the profile set are kept. */
    tp_eval(snap,
            "name: demo\nengine: job\nentrypoint: train.py\ncompute:\n  gpus: 1\n"
            "  cpu_limit: \"5\"\npolicy:\n  profile: gpu-a100\nruntime:\n  security:\n"
            "    mode: restricted\nresilience:\n  max_retries: 0\n",
            &run);
    res = run.res.resolved;
    assert_int_equal(json_integer_value(tu_at(res, "run", "active_deadline_seconds", NULL)), 86400);
    assert_string_equal(tp_prov(&run, "run.active_deadline_seconds"), "profile");
    assert_string_equal(outcome_of(&run, "deadline"), "allow");
    assert_string_equal(outcome_of(&run, "deadline-cap"), "deny");
    assert_int_equal(json_integer_value(tu_at(res, "resilience", "max_retries", NULL)), 0);
    assert_string_equal(tp_prov(&run, "resilience.max_retries"), "spec");
    assert_string_equal(json_string_value(tu_at(res, "compute", "cpu_limit", NULL)), "5");
    assert_string_equal(tp_prov(&run, "runtime.security_mode"), "spec");
    /* the profile's class is kept: no default over a profile value */
    assert_string_equal(json_string_value(tu_at(res, "policy", "gpu_class", NULL)), "a100-80gb");
    tp_run_clean(&run);

    /* A GPU run that left the class to "any" gets the first listed. */
    tp_eval(snap, JOB_CPU "compute:\n  gpus: 2\n", &run);
    assert_string_equal(json_string_value(tu_at(run.res.resolved, "policy", "gpu_class", NULL)),
                        "h100-80gb");
    assert_string_equal(tp_prov(&run, "policy.gpu_class"), "policy:gpu");
    tp_run_clean(&run);
    tg_policy_snapshot_release(snap);
}

static void test_first_default_wins_and_ray_requests(void **state)
{
    (void)state;
    const char *pol = "rules:\n"
                      "- {id: a, description: d, action: default, max_retries: 1}\n"
                      "- {id: b, description: d, action: default, max_retries: 4}\n"
                      "- {id: mem, description: d, action: default, max_memory_per_pod: 32Gi}\n";
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    tp_run_t run;
    tp_eval(snap,
            "name: demo\nengine: rayjob\nentrypoint: train.py\npolicy:\n  profile: ray-gpu\n"
            "compute:\n  workers: 1\n",
            &run);
    assert_int_equal(json_integer_value(tu_at(run.res.resolved, "resilience", "max_retries", NULL)),
                     1);
    assert_string_equal(outcome_of(&run, "a"), "default");
    assert_string_equal(outcome_of(&run, "b"), "allow");
    /* the built-in GPU worker request (64Gi) is lowered to the cap, its limit too */
    const json_t *c = json_object_get(run.res.resolved, "compute");
    assert_string_equal(tp_str(c, "worker_memory_request"), "32Gi");
    assert_string_equal(tp_str(c, "worker_memory_limit"), "32Gi");
    assert_string_equal(tp_str(c, "head_memory_limit"), "16Gi");
    assert_string_equal(tp_prov(&run, "compute.worker_memory_request"), "policy:mem");
    tp_run_clean(&run);
    tg_policy_snapshot_release(snap);
}

static void test_disabled_and_warn(void **state)
{
    (void)state;
    const char *pol = "rules:\n"
                      "- {id: off, description: d, action: deny, max_retries: 0, enabled: false}\n"
                      "- {id: soft, description: d, action: warn, max_retries: 0,"
                      " message: \"{path} is {actual}, keep it at {expected} ({id})\"}\n";
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    tp_run_t run;
    tp_eval(snap, JOB_CPU "resilience:\n  max_retries: 3\n", &run);
    assert_int_equal(run.rc, TG_OK);
    assert_int_equal(ndecisions_of(&run, "off"), 0);
    assert_string_equal(outcome_of(&run, "soft"), "warn");
    const json_t *w = json_array_get(run.res.warnings, 0);
    assert_string_equal(tp_str(w, "message"),
                        "resilience.max_retries is 3, keep it at 0 (soft) (policy soft)");
    assert_string_equal(tp_str(w, "rule_id"), "soft");
    assert_int_equal(tp_int(w, "line"), 8);
    tp_run_clean(&run);
    tg_policy_snapshot_release(snap);
}

static void test_decisions_for_evidence(void **state)
{
    (void)state;
    const char *pol = "rules:\n"
                      "- {id: cap, description: d, action: deny, max_retries: 3, version: 4}\n"
                      "- {id: fill, description: d, action: default,"
                      " max_active_deadline_seconds: 60}\n";
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    tp_run_t run;
    tp_eval(snap, JOB_CPU, &run);
    json_t *ev = tg_policy_result_evidence(&run.res);
    assert_string_equal(tp_str(ev, "digest"), snap->digest);
    const json_t *ds = json_object_get(ev, "decisions");
    assert_int_equal(json_array_size(ds), 2);
    /* defaults first, then checks */
    const json_t *d0 = json_array_get(ds, 0), *d1 = json_array_get(ds, 1);
    assert_string_equal(tp_str(d0, "rule_id"), "fill");
    assert_string_equal(tp_str(d0, "outcome"), "default");
    assert_string_equal(tp_str(d1, "rule_id"), "cap");
    assert_int_equal(tp_int(d1, "version"), 4);
    assert_string_equal(tp_str(d1, "kind"), "max_retries");
    assert_string_equal(tp_str(d1, "action"), "deny");
    assert_string_equal(tp_str(d1, "source"), "file:test.yaml");
    assert_int_equal(strlen(tp_str(d1, "digest")), 16);
    assert_int_equal(tp_int(d1, "actual"), 0);
    assert_int_equal(tp_int(d1, "expected"), 3);
    assert_non_null(json_object_get(d1, "line"));
    /* the whole record is plain JSON (dumpable, canonical) */
    char *dump = json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(dump);
    free(dump);
    /* the stored text says the same as the tree */
    tg_buf_t text;
    tg_buf_init(&text, 0);
    assert_int_equal(tg_policy_result_evidence_text(&run.res, &text), TG_OK);
    json_error_t je;
    json_t *parsed = json_loads(text.data, 0, &je);
    if (!parsed)
        fprintf(stderr, "%s: %s\n", je.text, text.data);
    assert_non_null(parsed);
    assert_true(json_equal(parsed, ev));
    json_decref(parsed);
    tg_buf_clean(&text);
    json_decref(ev);
    json_t *arr = tg_policy_result_decisions(&run.res);
    assert_int_equal(json_array_size(arr), 2);
    json_decref(arr);
    tp_run_clean(&run);
    json_t *empty = tg_policy_result_decisions(NULL);
    assert_int_equal(json_array_size(empty), 0);
    json_decref(empty);
    tg_policy_snapshot_release(snap);
}

/* The hook as the pipeline will call it: errors and warnings land in the
 * diagnostics with rule ids and positions; defaults replace the resolved
 * config and provenance. */
static void test_pipeline_hook(void **state)
{
    (void)state;
    const char *pol =
        "rules:\n"
        "- {id: fill, description: d, action: default, max_retries: 2}\n"
        "- {id: gpus, description: d, action: deny, max_gpus_per_worker: 1}\n"
        "- {id: exp, description: d, action: warn,"
        " required_experiment_fields: [project]}\n"
        "- {id: img, description: d, action: warn, allowed_images: [mcr.microsoft.com]}\n";
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    const char *spec = "name: demo\nengine: job\nentrypoint: train.py\ncompute:\n  gpus: 2\n"
                       "policy:\n  profile: gpu-a100\n";
    tp_run_t run;
    tp_eval(snap, spec, &run);
    json_t *resolved = json_incref(json_object_get(run.out, "resolved"));
    tg_tauyaml_prov_t prov;
    tg_tauyaml_prov_init(&prov);
    tg_tauyaml_prov_add_json(&prov, json_object_get(run.out, "provenance"));
    tg_tauyaml_diag_t d;
    tg_tauyaml_diag_init(&d, run.doc.pos, 200);
    tg_policy_hook_t h = {.snapshot = snap, .workspace = "team-a"};
    json_t *before = tg_policy_hook_decisions(&h);
    assert_int_equal(json_array_size(before), 0);
    json_decref(before);
    assert_int_equal(tg_policy_spec_hook(&h, run.doc.pos, &resolved, &prov, &d), TG_OK);
    assert_int_equal(json_array_size(d.errors), 1);
    const json_t *e = json_array_get(d.errors, 0);
    assert_string_equal(tp_str(e, "path"), "compute.gpus");
    assert_int_equal(tp_int(e, "line"), 5);
    assert_int_equal(tp_int(e, "column"), 9);
    assert_string_equal(tp_str(e, "rule_id"), "gpus");
    assert_int_equal(json_array_size(d.warnings), 2);
    assert_string_equal(tp_str(json_array_get(d.warnings, 0), "rule_id"), "exp");
    assert_string_equal(tp_str(json_array_get(d.warnings, 1), "rule_id"), "img");
    assert_int_equal(json_integer_value(tu_at(resolved, "resilience", "max_retries", NULL)), 2);
    assert_string_equal(tg_tauyaml_prov_get(&prov, "resilience.max_retries"), "policy:fill");
    json_t *ds = tg_policy_hook_decisions(&h);
    assert_int_equal(json_array_size(ds), 4);
    json_decref(ds);
    json_t *ev = tg_policy_hook_evidence(&h);
    assert_string_equal(tp_str(ev, "digest"), snap->digest);
    /* messages with quotes survive the text form */
    tg_buf_t text;
    tg_buf_init(&text, 0);
    assert_int_equal(tg_policy_result_evidence_text(&h.result, &text), TG_OK);
    tu_assert_contains(text.data, "image \\\"repo/train:1\\\" is not");
    json_t *parsed = json_loads(text.data, 0, NULL);
    assert_non_null(parsed);
    assert_true(json_equal(parsed, ev));
    json_decref(parsed);
    tg_buf_clean(&text);
    json_decref(ev);
    tg_policy_hook_clean(&h);
    tg_tauyaml_diag_clean(&d);
    /* shared objects (run.out holds them too) were copied, not written */
    assert_int_equal(
        json_integer_value(tu_at(run.out, "resolved", "resilience", "max_retries", NULL)), 0);
    json_decref(resolved);
    tg_tauyaml_prov_clean(&prov);

    /* Objects the pipeline owns alone are patched in place. */
    resolved = json_deep_copy(json_object_get(run.out, "resolved"));
    tg_tauyaml_prov_init(&prov);
    tg_tauyaml_prov_add_json(&prov, json_object_get(run.out, "provenance"));
    json_t *r0 = resolved;
    tg_tauyaml_diag_init(&d, run.doc.pos, 200);
    assert_int_equal(tg_policy_spec_hook(&h, run.doc.pos, &resolved, &prov, &d), TG_OK);
    assert_ptr_equal(resolved, r0);
    assert_ptr_equal(tg_policy_result_provenance(&h.result), &prov);
    assert_int_equal(json_integer_value(tu_at(resolved, "resilience", "max_retries", NULL)), 2);
    assert_string_equal(tg_tauyaml_prov_get(&prov, "resilience.max_retries"), "policy:fill");
    assert_true(h.result.patched);
    tg_policy_hook_clean(&h);
    tg_tauyaml_diag_clean(&d);
    json_decref(resolved);
    tg_tauyaml_prov_clean(&prov);
    tp_run_clean(&run);

    /* Bad input is a server fault, not a user error. */
    json_t *nothing = json_string("x");
    tg_tauyaml_diag_init(&d, NULL, 10);
    assert_int_equal(tg_policy_spec_hook(&h, NULL, &nothing, NULL, &d), TG_EINTERNAL);
    tg_tauyaml_diag_clean(&d);
    json_decref(nothing);
    tg_policy_snapshot_release(snap);
}

/* The resolved config shares the schema's and the context's values,
 * containers included (resilience.retry_on is the schema's default array,
 * policy.tolerations holds the profile's objects), across requests and
 * threads: the pipeline with the hook filling values in place, as the
 * gateway runs it, must leave them as they were. */
static void test_shared_values_stay_unchanged(void **state)
{
    (void)state;
    const char *pol = "rules:\n"
                      "- {id: retries, description: d, action: default, max_retries: 2}\n"
                      "- {id: deadline, description: d, action: default,"
                      " max_active_deadline_seconds: 7200}\n"
                      "- {id: cpu, description: d, action: default, max_cpu_per_pod: \"6\"}\n";
    tg_policy_snapshot_t *snap = tp_snapshot(pol);
    json_t *ctx = tu_load_json("tests/fixtures/context/ws-team-a.json");
    assert_non_null(ctx);
    const json_t *retry_on = tg_tauyaml_schema_default(tu_schema, "resilience.retry_on");
    assert_true(json_is_array(retry_on));
    char *ctx_before = json_dumps(ctx, JSON_COMPACT | JSON_SORT_KEYS);
    char *retry_before = json_dumps(retry_on, JSON_COMPACT);
    const char *spec = "name: demo\nengine: job\nentrypoint: train.py\ncompute:\n  gpus: 1\n"
                       "policy:\n  profile: gpu-a100\n";
    tu_files_t f;
    tu_files_init(&f);
    tu_files_add_str(&f, "train.py", "print('train')\n");
    tg_tauyaml_limits_t lim;
    tg_tauyaml_limits_default(&lim);
    for (int round = 0; round < 2; round++) {
        tg_policy_hook_t h = {.snapshot = snap, .workspace = "team-a"};
        tg_submit_request_t req = {.yaml = spec,
                                   .yaml_len = strlen(spec),
                                   .files = &f.set,
                                   .context = ctx,
                                   .run_id = round ? "run-1" : NULL,
                                   .attempt = 1,
                                   .policy = &h};
        json_t *out = NULL;
        assert_int_equal(tg_submit_pipeline(tu_schema, &lim, &req, &out), TG_OK);
        assert_true(h.result.patched);
        const json_t *res = json_object_get(out, "resolved");
        assert_int_equal(json_integer_value(tu_at(res, "resilience", "max_retries", NULL)), 2);
        /* shared, not copied */
        assert_ptr_equal(tu_at(res, "resilience", "retry_on", NULL), retry_on);
        const json_t *prof = json_array_get(json_object_get(ctx, "profiles"), 0);
        assert_ptr_equal(json_array_get(tu_at(res, "policy", "tolerations", NULL), 0),
                         json_array_get(json_object_get(prof, "tolerations"), 0));
        /* filled in the request's own sections: the provenance says so */
        if (!round) /* a dry run answers the provenance */
            assert_string_equal(
                json_string_value(tu_at(out, "provenance", "resilience.max_retries", NULL)),
                "policy:retries");
        json_decref(out);
        tg_policy_hook_clean(&h);
    }
    char *ctx_after = json_dumps(ctx, JSON_COMPACT | JSON_SORT_KEYS);
    char *retry_after = json_dumps(retry_on, JSON_COMPACT);
    assert_string_equal(ctx_after, ctx_before);
    assert_string_equal(retry_after, retry_before);
    free(ctx_before);
    free(ctx_after);
    free(retry_before);
    free(retry_after);
    tu_files_clean(&f);
    json_decref(ctx);
    tg_policy_snapshot_release(snap);
}

/* The policy shipped in policies/default.yaml passes every conformance
 * file the corpus accepts, and fills the deadline. */
static void test_default_policy_on_conformance(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = tu_slurp("policies/default.yaml", &len);
    assert_non_null(text);
    const char *pairs[] = {"default.yaml", text, NULL};
    tg_policy_snapshot_t *snap = tp_snapshot_files(pairs, NULL);
    free(text);
    char path[1024];
    snprintf(path, sizeof(path), "%s/conformance/taugrid/01-kind-smoke_tau.yaml", tu_shared());
    char *spec = tu_slurp(path, &len);
    if (!spec) {
        tg_policy_snapshot_release(snap);
        skip();
    }
    json_t *ctx = tu_load_json("tests/fixtures/context/ws-ray.json");
    char *ctx_text = json_dumps(ctx, 0);
    json_decref(ctx);
    /* tp_eval_ctx adds train.py; conformance 01 runs train.sh */
    tp_run_t run;
    memset(&run, 0, sizeof(run));
    tu_files_t f;
    tu_files_init(&f);
    tu_files_add_dir(&f, "tests/fixtures/files/conformance-01");
    json_t *c2 = json_loads(ctx_text, 0, NULL);
    assert_int_equal(tu_run_ctx(spec, len, c2, &f.set, NULL, &run.out), TG_OK);
    json_decref(c2);
    tu_files_clean(&f);
    tg_policy_input_t in = {.resolved = json_object_get(run.out, "resolved")};
    assert_int_equal(tg_policy_evaluate(snap, &in, &run.res), TG_OK);
    assert_int_equal(json_array_size(run.res.errors), 0);
    assert_int_equal(json_array_size(run.res.warnings), 0);
    assert_int_equal(
        json_integer_value(tu_at(run.res.resolved, "run", "active_deadline_seconds", NULL)),
        604800);
    /* without an input provenance the fills are recorded on their own */
    assert_string_equal(tp_prov(&run, "run.active_deadline_seconds"), "policy:deadline-default");
    json_decref(run.out);
    tg_policy_result_clean(&run.res);
    free(ctx_text);
    free(spec);
    tg_policy_snapshot_release(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scope_selection),
        cmocka_unit_test(test_defaults_fill_values),
        cmocka_unit_test(test_first_default_wins_and_ray_requests),
        cmocka_unit_test(test_disabled_and_warn),
        cmocka_unit_test(test_decisions_for_evidence),
        cmocka_unit_test(test_pipeline_hook),
        cmocka_unit_test(test_shared_values_stay_unchanged),
        cmocka_unit_test(test_default_policy_on_conformance),
    };
    return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
