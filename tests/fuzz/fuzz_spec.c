/* libFuzzer harness for the tau.yaml pipeline: YAML parser, schema
 * validation, semantic rules, file checks, resolution and rendering.
 *
 * The whole input is the YAML text. It runs in a fixed workspace context with
 * a fixed set of submitted files, so inputs derived from the seed specs get
 * through validation and into the resolver and renderers. Invariants checked
 * beyond "no crash, no leak, no UB": every diagnostic has a path, a 1-based
 * line and column and a message; an accepted spec renders, its manifests
 * dump to JSON, and rendering the resolved config again gives the same bytes.
 *
 * The schema is read once from $TAUGATE_SCHEMA or schema/tau.schema.json
 * (run from the repository root, as `make fuzz-smoke` does). */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "render/render.h"
#include "submit/pipeline.h"

static tg_tauyaml_schema_t *fz_schema;
static json_t *fz_ctx;
static tg_tauyaml_limits_t fz_limits;

static const char fz_ctx_text[] =
    "{\"workspace\": {\"name\": \"ws\", \"namespace\": \"ns\", \"default_queue\": \"lq\","
    " \"default_priority\": \"taugrid-default\", \"output_root\": \"/data/out\","
    " \"ttl_seconds\": 600, \"queues\": [\"lq\", \"lq-gpu\", \"kind-cpu\", \"jobqueue\"],"
    " \"pvcs\": [\"data-a\", \"models\", \"blob-training\"]},"
    " \"profiles\": [{\"name\": \"gpu-a100\", \"gpu_class\": \"a100-80gb\","
    "   \"default_image\": \"repo/img:1\", \"node_selector\": {\"pool\": \"gpu\"},"
    "   \"tolerations\": [{\"key\": \"k\", \"operator\": \"Exists\", \"effect\": \"NoSchedule\"}],"
    "   \"resources\": {\"cpu\": \"2\", \"memory_limit\": \"64Gi\"}, \"default_queue\": \"lq-gpu\","
    "   \"topology_name\": \"topo\", \"active_deadline_seconds\": 3600},"
    "  {\"name\": \"ray-gpu\", \"engine\": \"rayjob\"},"
    "  {\"name\": \"kind-cpu-job\", \"engine\": \"job\"}],"
    " \"priority_classes\": [{\"name\": \"taugrid-default\", \"value\": 1000},"
    "  {\"name\": \"taugrid-priority\", \"value\": 1200}]}";

static const unsigned char fz_py[] = "print('x')\n";
static const unsigned char fz_sh[] = "#!/bin/sh\necho x\n";
/* A stored zip holding train.py, so run.working_dir specs resolve. */
static const unsigned char fz_zip[] = {
    0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21, 0x5c, 0x06, 0x1e,
    0xe1, 0x3c, 0x09, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x74, 0x72,
    0x61, 0x69, 0x6e, 0x2e, 0x70, 0x79, 0x70, 0x72, 0x69, 0x6e, 0x74, 0x28, 0x31, 0x29, 0x0a, 0x50,
    0x4b, 0x01, 0x02, 0x14, 0x03, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21, 0x5c, 0x06,
    0x1e, 0xe1, 0x3c, 0x09, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x74, 0x72, 0x61,
    0x69, 0x6e, 0x2e, 0x70, 0x79, 0x50, 0x4b, 0x05, 0x06, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01,
    0x00, 0x36, 0x00, 0x00, 0x00, 0x2f, 0x00, 0x00, 0x00, 0x00, 0x00};
static const tg_tauyaml_file_t fz_filev[] = {
    {"train.py", fz_py, sizeof(fz_py) - 1},
    {"train.sh", fz_sh, sizeof(fz_sh) - 1},
    {"ray_train.py", fz_py, sizeof(fz_py) - 1},
    {"driver.py", fz_py, sizeof(fz_py) - 1},
    {"eval.py", fz_py, sizeof(fz_py) - 1},
    {"requirements.txt", fz_py, sizeof(fz_py) - 1},
    {TG_TAUYAML_PROJECT_ARCHIVE, fz_zip, sizeof(fz_zip)},
};
static const tg_tauyaml_files_t fz_files = {(tg_tauyaml_file_t *)fz_filev,
                                            sizeof(fz_filev) / sizeof(fz_filev[0]), 0};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    tg_log_set_level(TG_LOG_OFF);
    const char *path = getenv("TAUGATE_SCHEMA");
    char err[256];
    fz_schema = tg_tauyaml_schema_load_file(path && *path ? path : "schema/tau.schema.json", err,
                                            sizeof(err));
    if (!fz_schema) {
        fprintf(stderr, "fuzz_spec: %s (run from the repository root)\n", err);
        abort();
    }
    fz_ctx = json_loads(fz_ctx_text, 0, NULL);
    if (!fz_ctx)
        abort();
    tg_tauyaml_limits_default(&fz_limits);
    return 0;
}

static void fz_check_diags(const json_t *arr)
{
    size_t i;
    const json_t *e;
    json_array_foreach(arr, i, e) {
        if (!json_is_string(json_object_get(e, "path")) ||
            !json_is_string(json_object_get(e, "message")) ||
            json_integer_value(json_object_get(e, "line")) < 1 ||
            json_integer_value(json_object_get(e, "column")) < 1)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tg_submit_request_t req = {.yaml = (const char *)data,
                               .yaml_len = size,
                               .files = &fz_files,
                               .context = fz_ctx,
                               .run_id = "fuzz-run",
                               .attempt = 1 + (size & 1)};
    json_t *out = NULL;
    tg_rc_e rc = tg_submit_pipeline(fz_schema, &fz_limits, &req, &out);
    if (!out)
        abort();
    fz_check_diags(json_object_get(out, "errors"));
    fz_check_diags(json_object_get(out, "warnings"));
    if (rc == TG_OK) {
        const json_t *m = json_object_get(out, "manifests");
        if (!json_is_array(m) || json_array_size(m) == 0)
            abort();
        char *a = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
        json_t *again = NULL;
        char err[256];
        tg_render_opts_t opts = {.run_id = "fuzz-run", .attempt = req.attempt};
        tg_tauyaml_prov_t prov;
        tg_tauyaml_prov_init(&prov);
        tg_tauyaml_prov_add_json(&prov, json_object_get(out, "provenance"));
        if (tg_render_manifests(json_object_get(out, "resolved"), &prov, &fz_files, &opts, &again,
                                err, sizeof(err)) != TG_OK)
            abort();
        tg_tauyaml_prov_clean(&prov);
        char *b = json_dumps(again, JSON_COMPACT | JSON_SORT_KEYS);
        if (!a || !b || strcmp(a, b) != 0)
            abort();
        free(a);
        free(b);
        json_decref(again);
    } else if (json_array_size(json_object_get(out, "errors")) == 0) {
        abort(); /* a rejection always says why */
    }
    json_decref(out);
    return 0;
}
