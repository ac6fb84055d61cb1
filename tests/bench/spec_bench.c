/* Benchmark (not a timed test): the tau.yaml pipeline (parse + schema and
 * semantic validation + resolve + render, as tg_spec_pipeline runs it for
 * POST /runs) on conformance files 01 (Job) and 02 (RayJob), in a loop on one
 * core, against a bare libyaml event parse of the same bytes measured in the
 * same run. Prints specs/s and the pipeline/bare ratio.
 * Targets: >= 20,000 specs/s per core; pipeline within 5x the bare parse.
 * Run from the repository root: make bench-spec. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "core/log.h"
#include "spec/pipeline.h"

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
        fprintf(stderr, "spec_bench: cannot read %s (set TAUGATE_SHARED)\n", path);
        exit(2);
    }
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static size_t bench_bare_parse(const char *text, size_t len)
{
    yaml_parser_t p;
    yaml_event_t ev;
    size_t events = 0;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    for (;;) {
        if (!yaml_parser_parse(&p, &ev))
            abort();
        int end = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        events++;
        if (end)
            break;
    }
    yaml_parser_delete(&p);
    return events;
}

/* Seconds per spec of the pipeline in one mode, alternating 01 and 02. */
static double bench_loop(const tg_spec_schema_t *schema, const tg_spec_limits_t *lim,
                         const json_t *ctx, char **yaml, const size_t *len,
                         const tg_spec_files_t *files, const char *run_id, int text, double secs)
{
    size_t n = 0;
    double t0 = bench_now(), t;
    do {
        for (int k = 0; k < 64; k++, n++) {
            int i = (int)(n & 1);
            tg_spec_request_t req = {.yaml = yaml[i],
                                     .yaml_len = len[i],
                                     .files = &files[i],
                                     .context = ctx,
                                     .run_id = run_id,
                                     .attempt = 1,
                                     .manifests_as_text = text};
            json_t *out = NULL;
            if (tg_spec_pipeline(schema, lim, &req, &out) != TG_OK)
                abort();
            json_decref(out);
        }
        t = bench_now() - t0;
    } while (t < secs);
    return t / (double)n;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    /* argv[2] = "pipeline" times only the full pipeline (for profilers). */
    int only_pipeline = argc > 2 && strcmp(argv[2], "pipeline") == 0;
    tg_log_set_level(TG_LOG_OFF);
    const char *shared = getenv("TAUGATE_SHARED");
    if (!shared || !*shared)
        shared = "../shared";
    char p1[1024], p2[1024];
    snprintf(p1, sizeof(p1), "%s/conformance/taugrid/01-kind-smoke_tau.yaml", shared);
    snprintf(p2, sizeof(p2), "%s/conformance/taugrid/02-kind-smoke_tau-ray.yaml", shared);
    size_t len[2];
    char *yaml[2] = {bench_slurp(p1, &len[0]), bench_slurp(p2, &len[1])};

    char err[256];
    tg_spec_schema_t *schema = tg_spec_schema_load_file("schema/tau.schema.json", err, sizeof(err));
    json_t *ctx = json_load_file("tests/fixtures/context/ws-ray.json", 0, NULL);
    if (!schema || !ctx) {
        fprintf(stderr, "spec_bench: run from the repository root (%s)\n", schema ? "" : err);
        return 2;
    }
    static const unsigned char sh[] = "#!/bin/sh\necho kind smoke\n";
    static const unsigned char py[] = "print('ray smoke')\n";
    tg_spec_file_t fv[2][1] = {{{"train.sh", sh, sizeof(sh) - 1}},
                               {{"ray_train.py", py, sizeof(py) - 1}}};
    tg_spec_files_t files[2] = {{fv[0], 1, 0}, {fv[1], 1, 0}};
    tg_spec_limits_t lim;
    tg_spec_limits_default(&lim);

    /* Check both are accepted before timing anything. */
    for (int i = 0; i < 2; i++) {
        tg_spec_request_t req = {.yaml = yaml[i],
                                 .yaml_len = len[i],
                                 .files = &files[i],
                                 .context = ctx,
                                 .run_id = "bench-run-0001",
                                 .attempt = 1};
        json_t *out = NULL;
        if (tg_spec_pipeline(schema, &lim, &req, &out) != TG_OK) {
            char *d = json_dumps(out, JSON_INDENT(1));
            fprintf(stderr, "spec_bench: file %d rejected: %s\n", i + 1, d);
            return 1;
        }
        json_decref(out);
    }

    /* Bare libyaml parse of the same bytes. */
    size_t n_bare = 0, events = 0;
    double t0 = bench_now(), t_bare;
    if (only_pipeline)
        secs = -secs;
    do {
        for (int k = 0; k < 64; k++, n_bare++)
            events += bench_bare_parse(yaml[n_bare & 1], len[n_bare & 1]);
        t_bare = bench_now() - t0;
    } while (t_bare < secs);
    if (only_pipeline)
        secs = -secs;

    /* Validation only, the full pipeline with manifests as JSON text (what
     * POST /runs stores and sends), and with manifests as a jansson tree. */
    double t_val = bench_loop(schema, &lim, ctx, yaml, len, files, NULL, 0, secs);
    double t_pipe = bench_loop(schema, &lim, ctx, yaml, len, files, "bench-run-0001", 1, secs);
    double t_tree = bench_loop(schema, &lim, ctx, yaml, len, files, "bench-run-0001", 0, secs);

    double us_bare = t_bare / (double)n_bare * 1e6;
    double us_pipe = t_pipe * 1e6, us_val = t_val * 1e6, us_tree = t_tree * 1e6;
    printf("spec_bench: conformance 01 (%zu B, Job) + 02 (%zu B, RayJob), one core\n", len[0],
           len[1]);
    printf("  bare libyaml parse        %9.0f specs/s  %7.2f us/spec (%zu events)\n",
           (double)n_bare / t_bare, us_bare, events / n_bare);
    printf("  parse+validate+resolve    %9.0f specs/s  %7.2f us/spec  %.2fx bare\n", 1e6 / us_val,
           us_val, us_val / us_bare);
    printf("  full pipeline (text)      %9.0f specs/s  %7.2f us/spec  %.2fx bare\n", 1e6 / us_pipe,
           us_pipe, us_pipe / us_bare);
    printf("  full pipeline (jansson)   %9.0f specs/s  %7.2f us/spec  %.2fx bare\n", 1e6 / us_tree,
           us_tree, us_tree / us_bare);
    printf("  targets: >= 20000 specs/s per core (%s); within 5x bare parse (%s)\n",
           1e6 / us_pipe >= 20000 ? "met" : "NOT met",
           us_pipe / us_bare <= 5.0 ? "met" : "NOT met");
    json_decref(ctx);
    tg_spec_schema_free(schema);
    free(yaml[0]);
    free(yaml[1]);
    return 0;
}
