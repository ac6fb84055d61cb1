/* Benchmark (not a timed test): policy evaluation of policies/default.yaml
 * against conformance spec 01's resolved config (with the spec's position
 * table, as the pipeline hook evaluates it), in a loop on one core, against
 * the full tau.yaml pipeline (parse, validate, resolve, render as text, as
 * POST /runs runs it) on the same spec measured in the same run. Prints
 * evaluations/s and evaluation time as a share of the pipeline's.
 * Target: evaluation under 5% of the pipeline, so policy does not show in
 * the submission benchmark.
 * The variants run in interleaved rounds for about 4 x [seconds] in all.
 * Run from the repository root: make bench-policy, or
 *   build/tests/bench/policy_bench [seconds] */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json_alloc.h"
#include "core/log.h"
#include "policy/eval.h"
#include "policy/hook.h"
#include "policy/load.h"
#include "submit/pipeline.h"
#include "tauyaml/yaml_tree.h"

static double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *bench_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "policy_bench: cannot read %s (set TAUGATE_SHARED)\n", path);
        exit(2);
    }
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

typedef struct bench_s {
    const tg_tauyaml_schema_t *schema;
    tg_tauyaml_limits_t lim;
    const json_t *ctx;
    const char *yaml;
    size_t len;
    tg_tauyaml_files_t files;
} bench_t;

static tg_rc_e bench_pipeline(const bench_t *b, const char *run_id, json_t **out)
{
    tg_submit_texts_t texts;
    tg_submit_texts_init(&texts);
    tg_submit_request_t req = {.yaml = b->yaml,
                               .yaml_len = b->len,
                               .files = &b->files,
                               .context = b->ctx,
                               .run_id = run_id,
                               .attempt = 1,
                               .texts = run_id ? &texts : NULL};
    tg_rc_e rc = tg_submit_pipeline(b->schema, &b->lim, &req, out);
    tg_submit_texts_clean(&texts);
    return rc;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    tg_log_set_level(TG_LOG_OFF);
    tg_json_alloc_install(); /* as the gateway does at startup */
    const char *shared = getenv("TAUGATE_SHARED");
    if (!shared || !*shared)
        shared = "../shared";
    char p1[1024];
    snprintf(p1, sizeof(p1), "%s/conformance/taugrid/01-kind-smoke_tau.yaml", shared);
    bench_t b;
    char *yaml = bench_slurp(p1, &b.len);
    b.yaml = yaml;

    char err[512];
    tg_tauyaml_schema_t *schema =
        tg_tauyaml_schema_load_file("schema/tau.schema.json", err, sizeof(err));
    tg_policy_schema_t *pschema =
        tg_policy_schema_load_file("schema/policy.schema.json", err, sizeof(err));
    json_t *ctx = json_load_file("tests/fixtures/context/ws-ray.json", 0, NULL);
    if (!schema || !pschema || !ctx) {
        fprintf(stderr, "policy_bench: run from the repository root (%s)\n", err);
        return 2;
    }
    b.schema = schema;
    b.ctx = ctx;
    tg_tauyaml_limits_default(&b.lim);
    static const unsigned char sh[] = "#!/bin/sh\necho kind smoke\n";
    tg_tauyaml_file_t fv[1] = {{"train.sh", sh, sizeof(sh) - 1}};
    b.files = (tg_tauyaml_files_t){fv, 1, 0};

    /* The policy: policies/default.yaml as shipped. */
    tg_policy_files_t files = {0};
    json_t *errors = json_array();
    tg_policy_snapshot_t *snap = NULL;
    if (tg_policy_files_read("policies", &files, errors) != TG_OK) {
        fprintf(stderr, "policy_bench: cannot read policies/\n");
        return 2;
    }
    json_decref(errors);
    errors = NULL;
    if (tg_policy_snapshot_build(pschema, &files, NULL, 0, &snap, &errors) != TG_OK) {
        char text[4096];
        tg_policy_errors_format(errors, text, sizeof(text));
        fprintf(stderr, "policy_bench: policies/ does not load:\n%s\n", text);
        return 1;
    }

    /* One resolution, and the spec's positions, to evaluate against. */
    json_t *out = NULL;
    if (bench_pipeline(&b, NULL, &out) != TG_OK) {
        fprintf(stderr, "policy_bench: conformance 01 rejected\n");
        return 1;
    }
    tg_tauyaml_doc_t doc;
    tg_tauyaml_diag_t d;
    tg_tauyaml_doc_init(&doc);
    tg_tauyaml_diag_init(&d, NULL, 10);
    if (tg_tauyaml_yaml_parse(b.yaml, b.len, &b.lim, &doc, &d) != TG_OK)
        return 1;
    tg_tauyaml_prov_t prov;
    tg_tauyaml_prov_init(&prov);
    tg_tauyaml_prov_add_json(&prov, json_object_get(out, "provenance"));
    tg_policy_input_t in = {.resolved = json_object_get(out, "resolved"),
                            .provenance = &prov,
                            .workspace = "ray",
                            .locate = tg_policy_locate_pos,
                            .locate_arg = doc.pos};
    tg_policy_result_t res;
    tg_rc_e erc = tg_policy_evaluate(snap, &in, &res);
    size_t ndec = tg_policy_result_ndecisions(&res);
    int patched = res.patched;
    tg_policy_result_clean(&res);
    if (erc != TG_OK) {
        fprintf(stderr, "policy_bench: default.yaml refuses conformance 01\n");
        return 1;
    }

    /* The variants are measured in interleaved rounds, so a busy machine
     * slows them alike and the ratios stay meaningful. */
    enum { V_PIPE, V_HOOK, V_COW, V_TEXT, V_TREE, V_N };
    double t[V_N] = {0};
    size_t n[V_N] = {0};
    tg_buf_t text;
    tg_buf_init(&text, 1u << 20);
    double start = bench_now();
    while (bench_now() - start < secs * 4) {
        /* the full pipeline on the same spec, as POST /runs runs it */
        double s0 = bench_now();
        for (int k = 0; k < 16; k++) {
            json_t *o = NULL;
            if (bench_pipeline(&b, "bench-run-0001", &o) != TG_OK)
                abort();
            json_decref(o);
        }
        t[V_PIPE] += bench_now() - s0;
        n[V_PIPE] += 16;
        /* as the pipeline hook runs it: defaults written into the request's
         * own resolved config; the fresh objects are made outside the clock */
        for (int k = 0; k < 64; k++) {
            json_t *rc = json_copy((json_t *)in.resolved);
            tg_tauyaml_prov_t pc;
            tg_tauyaml_prov_init(&pc);
            tg_tauyaml_prov_copy(&pc, &prov);
            const char *sect;
            json_t *v;
            json_object_foreach(rc, sect, v)
                if (json_is_object(v))
                    json_object_set_new(rc, sect, json_copy(v));
            tg_policy_input_t hin = in;
            hin.resolved = rc;
            hin.provenance = &pc;
            hin.patch_in_place = 1;
            s0 = bench_now();
            if (tg_policy_evaluate(snap, &hin, &res) != TG_OK)
                abort();
            tg_policy_result_clean(&res);
            t[V_HOOK] += bench_now() - s0;
            json_decref(rc);
            tg_tauyaml_prov_clean(&pc);
        }
        n[V_HOOK] += 64;
        /* pure: defaults filled into a copy */
        s0 = bench_now();
        for (int k = 0; k < 64; k++) {
            if (tg_policy_evaluate(snap, &in, &res) != TG_OK)
                abort();
            tg_policy_result_clean(&res);
        }
        t[V_COW] += bench_now() - s0;
        n[V_COW] += 64;
        /* plus the decisions as stored with the run (text) */
        s0 = bench_now();
        for (int k = 0; k < 64; k++) {
            if (tg_policy_evaluate(snap, &in, &res) != TG_OK ||
                tg_policy_result_decisions_text(&res, &text) != TG_OK)
                abort();
            tg_buf_reset(&text);
            tg_policy_result_clean(&res);
        }
        t[V_TEXT] += bench_now() - s0;
        n[V_TEXT] += 64;
        /* plus the decisions as a jansson tree (a :validate answer) */
        s0 = bench_now();
        for (int k = 0; k < 64; k++) {
            if (tg_policy_evaluate(snap, &in, &res) != TG_OK)
                abort();
            json_decref(tg_policy_result_decisions(&res));
            tg_policy_result_clean(&res);
        }
        t[V_TREE] += bench_now() - s0;
        n[V_TREE] += 64;
    }
    tg_buf_clean(&text);

    double us[V_N];
    for (int i = 0; i < V_N; i++)
        us[i] = t[i] / (double)n[i] * 1e6;
    printf("policy_bench: policies/default.yaml (%zu rules) on conformance 01 (%zu B, Job), "
           "one core, interleaved rounds\n",
           snap->nrules, b.len);
    printf("  evaluation, in place (hook)  %9.0f evaluations/s  %7.2f us  %6.2f%% of pipeline\n",
           1e6 / us[V_HOOK], us[V_HOOK], 100.0 * us[V_HOOK] / us[V_PIPE]);
    printf("  evaluation, copy-on-write    %9.0f evaluations/s  %7.2f us  %6.2f%%\n",
           1e6 / us[V_COW], us[V_COW], 100.0 * us[V_COW] / us[V_PIPE]);
    printf("   + decisions as stored text  %9.0f evaluations/s  %7.2f us  %6.2f%%\n",
           1e6 / us[V_TEXT], us[V_TEXT], 100.0 * us[V_TEXT] / us[V_PIPE]);
    printf("   + decisions as jansson tree %9.0f evaluations/s  %7.2f us  %6.2f%%\n",
           1e6 / us[V_TREE], us[V_TREE], 100.0 * us[V_TREE] / us[V_PIPE]);
    printf("  full pipeline (text)         %9.0f specs/s        %7.2f us\n", 1e6 / us[V_PIPE],
           us[V_PIPE]);
    printf("  (%zu decisions per evaluation%s)\n", ndec,
           patched ? "; default rules fill values" : "");
    printf("  ratio evaluation (hook) / pipeline: %.4f; target under 0.05 (%s)\n",
           us[V_HOOK] / us[V_PIPE], us[V_HOOK] / us[V_PIPE] < 0.05 ? "met" : "NOT met");
    tg_tauyaml_diag_clean(&d);
    tg_tauyaml_doc_clean(&doc);
    json_decref(out);
    tg_tauyaml_prov_clean(&prov);
    tg_policy_snapshot_release(snap);
    tg_policy_files_clean(&files);
    tg_policy_schema_free(pschema);
    json_decref(ctx);
    tg_tauyaml_schema_free(schema);
    free(yaml);
    return 0;
}
