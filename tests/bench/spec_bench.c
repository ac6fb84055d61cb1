/* Benchmark (not a timed test): the tau.yaml pipeline (parse + schema and
 * semantic validation + resolve + render, as tg_submit_pipeline runs it for
 * POST /runs) on conformance files 01 (Job) and 02 (RayJob), in a loop on one
 * core, against a bare libyaml event parse of the same bytes measured in the
 * same run. Prints specs/s, the pipeline/bare ratio and the time per stage.
 * Targets: >= 20,000 specs/s per core; pipeline within 5x the bare parse.
 *
 * Every iteration is a whole request: nothing computed for one spec is kept
 * for the next (only the schema, loaded at startup as the gateway loads it,
 * and the workspace context are shared). Times are this thread's CPU time;
 * the variants run in interleaved short rounds, so a busy machine slows them
 * alike, and figures are medians over rounds. The stage split comes from a
 * separate variant that asks the pipeline for its stage clock (wall time, so
 * its medians are the figures to read). Run from the repository root:
 * make bench-spec, or
 *   build/tests/bench/spec_bench [seconds] [pipeline]
 * ("pipeline" times only the full pipeline, for profilers). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "core/json_alloc.h"
#include "core/log.h"
#include "submit/pipeline.h"

#define BENCH_BATCH      32 /* specs per variant per round */
#define BENCH_MAX_ROUNDS 100000

/* CPU time of this thread: on a shared machine, time spent descheduled is
 * not time the pipeline took, and "per core" is what the target counts. */
static double bench_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

/* The reference: a plain libyaml event parse of the bytes, nothing kept. */
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

typedef struct bench_s {
    const tg_tauyaml_schema_t *schema;
    tg_tauyaml_limits_t lim;
    const json_t *ctx;
    char *yaml[2];
    size_t len[2];
    tg_tauyaml_files_t files[2];
} bench_t;

enum { V_BARE, V_PIPE, V_TIMED, V_VAL, V_TREE, V_N };

/* One spec through variant v (alternating 01 and 02 with k). */
static size_t bench_one(const bench_t *b, int v, int k, tg_submit_timing_t *timing)
{
    int i = k & 1;
    if (v == V_BARE)
        return bench_bare_parse(b->yaml[i], b->len[i]);
    tg_submit_request_t req = {.yaml = b->yaml[i],
                               .yaml_len = b->len[i],
                               .files = &b->files[i],
                               .context = b->ctx,
                               .run_id = v == V_VAL ? NULL : "bench-run-0001",
                               .attempt = 1,
                               .timing = v == V_TIMED ? timing : NULL};
    json_t *out = NULL;
    tg_submit_texts_t texts;
    tg_submit_texts_init(&texts);
    if (v != V_TREE && v != V_VAL)
        req.texts = &texts;
    if (tg_submit_pipeline(b->schema, &b->lim, &req, &out) != TG_OK)
        abort();
    json_decref(out);
    tg_submit_texts_clean(&texts);
    return 0;
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), bench_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 8.0;
    int only_pipeline = argc > 2 && strcmp(argv[2], "pipeline") == 0;
    tg_log_set_level(TG_LOG_OFF);
    tg_json_alloc_install(); /* as the gateway does at startup */
    const char *shared = getenv("TAUGATE_SHARED");
    if (!shared || !*shared)
        shared = "../shared";
    char p1[1024], p2[1024];
    snprintf(p1, sizeof(p1), "%s/conformance/taugrid/01-kind-smoke_tau.yaml", shared);
    snprintf(p2, sizeof(p2), "%s/conformance/taugrid/02-kind-smoke_tau-ray.yaml", shared);
    bench_t b;
    b.yaml[0] = bench_slurp(p1, &b.len[0]);
    b.yaml[1] = bench_slurp(p2, &b.len[1]);

    char err[256];
    tg_tauyaml_schema_t *schema =
        tg_tauyaml_schema_load_file("schema/tau.schema.json", err, sizeof(err));
    json_t *ctx = json_load_file("tests/fixtures/context/ws-ray.json", 0, NULL);
    if (!schema || !ctx) {
        fprintf(stderr, "spec_bench: run from the repository root (%s)\n", schema ? "" : err);
        return 2;
    }
    b.schema = schema;
    b.ctx = ctx;
    tg_tauyaml_limits_default(&b.lim);
    static const unsigned char sh[] = "#!/bin/sh\necho kind smoke\n";
    static const unsigned char py[] = "print('ray smoke')\n";
    tg_tauyaml_file_t fv[2][1] = {{{"train.sh", sh, sizeof(sh) - 1}},
                                  {{"ray_train.py", py, sizeof(py) - 1}}};
    b.files[0] = (tg_tauyaml_files_t){fv[0], 1, 0};
    b.files[1] = (tg_tauyaml_files_t){fv[1], 1, 0};

    /* Check both are accepted before timing anything. */
    for (int i = 0; i < 2; i++) {
        tg_submit_request_t req = {.yaml = b.yaml[i],
                                   .yaml_len = b.len[i],
                                   .files = &b.files[i],
                                   .context = ctx,
                                   .run_id = "bench-run-0001",
                                   .attempt = 1};
        json_t *out = NULL;
        if (tg_submit_pipeline(schema, &b.lim, &req, &out) != TG_OK) {
            char *d = json_dumps(out, JSON_INDENT(1));
            fprintf(stderr, "spec_bench: file %d rejected: %s\n", i + 1, d);
            return 1;
        }
        json_decref(out);
    }

    /* Interleaved rounds: each variant BENCH_BATCH specs per round. */
    static double per[V_N][BENCH_MAX_ROUNDS], ratio[BENCH_MAX_ROUNDS];
    static double stage[TG_SUBMIT_STAGES][BENCH_MAX_ROUNDS];
    size_t rounds = 0, events = 0;
    double start = bench_cpu();
    do {
        for (int v = 0; v < V_N; v++) {
            if (only_pipeline && v != V_PIPE)
                continue;
            tg_submit_timing_t timing = {{0}};
            double t0 = bench_cpu();
            for (int k = 0; k < BENCH_BATCH; k++)
                events += bench_one(&b, v, k, &timing);
            per[v][rounds] = (bench_cpu() - t0) / BENCH_BATCH * 1e6;
            for (int s = 0; v == V_TIMED && s < TG_SUBMIT_STAGES; s++)
                stage[s][rounds] = (double)timing.ns[s] / BENCH_BATCH / 1e3;
        }
        ratio[rounds] = per[V_PIPE][rounds] / per[V_BARE][rounds];
        rounds++;
    } while (bench_cpu() - start < secs && rounds < BENCH_MAX_ROUNDS);
    if (only_pipeline) {
        printf("spec_bench: full pipeline %.2f us/spec (median of %zu rounds)\n",
               bench_median(per[V_PIPE], rounds), rounds);
        goto out;
    }

    double us[V_N];
    for (int v = 0; v < V_N; v++)
        us[v] = bench_median(per[v], rounds);
    double r = bench_median(ratio, rounds);
    printf("spec_bench: conformance 01 (%zu B, Job) + 02 (%zu B, RayJob), one core, "
           "median of %zu interleaved rounds\n",
           b.len[0], b.len[1], rounds);
    printf("  bare libyaml parse        %9.0f specs/s  %7.2f us/spec (%zu events)\n",
           1e6 / us[V_BARE], us[V_BARE], events / (rounds * BENCH_BATCH));
    printf("  parse+validate+resolve    %9.0f specs/s  %7.2f us/spec  %.2fx bare\n",
           1e6 / us[V_VAL], us[V_VAL], us[V_VAL] / us[V_BARE]);
    printf("  full pipeline (text)      %9.0f specs/s  %7.2f us/spec  %.2fx bare\n",
           1e6 / us[V_PIPE], us[V_PIPE], r);
    printf("  full pipeline (jansson)   %9.0f specs/s  %7.2f us/spec  %.2fx bare\n",
           1e6 / us[V_TREE], us[V_TREE], us[V_TREE] / us[V_BARE]);

    /* Where the time of the full pipeline goes (the timed variant), each
     * stage as a multiple of the bare parse, so the shares add up to the ratio. */
    static const char *const names[TG_SUBMIT_STAGES] = {"parse", "validate", "resolve", "render",
                                                        "release"};
    double st[TG_SUBMIT_STAGES], total = 0;
    for (int s = 0; s < TG_SUBMIT_STAGES; s++)
        total += st[s] = bench_median(stage[s], rounds);
    printf("  stages, us/spec (x bare):");
    for (int s = 0; s < TG_SUBMIT_STAGES; s++)
        printf(" %s %.2f (%.2fx)%s", names[s], st[s], st[s] / us[V_BARE],
               s + 1 < TG_SUBMIT_STAGES ? "," : "\n");
    printf("  (stage medians add up to %.2f us/spec; the timed run took %.2f)\n", total,
           us[V_TIMED]);
    printf("  targets: >= 20000 specs/s per core (%s); within 5x bare parse (%s)\n",
           1e6 / us[V_PIPE] >= 20000 ? "met" : "NOT met", r <= 5.0 ? "met" : "NOT met");
out:
    json_decref(ctx);
    tg_tauyaml_schema_free(schema);
    free(b.yaml[0]);
    free(b.yaml[1]);
    return 0;
}
