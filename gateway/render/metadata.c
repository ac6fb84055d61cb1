/* The metadata contract of rendered workloads. */
#include "render/metadata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/canon.h"
#include "spec/digest.h"
#include "spec/units.h"

void tg_render_config_hash(const json_t *resolved, char out[72])
{
    tg_buf_t b;
    tg_buf_init(&b, 64u << 20);
    char hex[65];
    if (tg_render_canon(resolved, 17, &b) != TG_OK)
        tg_buf_reset(&b);
    tg_spec_sha256_hex(b.data ? b.data : "", b.len, hex);
    memcpy(out, "sha256:", 7);
    memcpy(out + 7, hex, 65);
    tg_buf_clean(&b);
}

static void md_label(json_t *labels, const char *key, const char *value)
{
    if (value && tg_spec_label_value(value))
        json_object_set_new(labels, key, json_string(value));
}

json_t *tg_render_labels(const tg_render_ctx_t *c, int with_kueue)
{
    json_t *l = json_object();
    if (with_kueue) {
        md_label(l, TG_LABEL_QUEUE, tg_render_str(c->rc, "policy", "queue"));
        md_label(l, TG_LABEL_PRIORITY, tg_render_str(c->rc, "policy", "workload_priority_class"));
    }
    json_object_set_new(l, TG_LABEL_MANAGED_BY, json_string("taugate"));
    md_label(l, TG_LABEL_RUN_ID, c->opts->run_id);
    char att[16];
    snprintf(att, sizeof(att), "%u", c->opts->attempt);
    md_label(l, TG_LABEL_ATTEMPT, att);
    md_label(l, TG_LABEL_WORKSPACE, tg_render_str(c->rc, "policy", "workspace"));
    md_label(l, TG_LABEL_RUN_NAME, tg_render_str(c->rc, NULL, "name"));
    if (with_kueue) {
        md_label(l, "taugate.io/profile", tg_render_str(c->rc, "policy", "profile"));
        md_label(l, "taugate.io/team", tg_render_str(c->rc, "policy", "team"));
        md_label(l, "taugate.io/lane", tg_render_str(c->rc, "policy", "lane"));
        if (c->gpus > 0 && c->gpu_class && strcmp(c->gpu_class, "any") != 0)
            md_label(l, "taugate.io/gpu-class", c->gpu_class);
    }
    return l;
}

json_t *tg_render_annotations(const tg_render_ctx_t *c, const json_t *execution,
                              const char *payload_digest)
{
    json_t *a = json_object();
    json_object_set_new(a, TG_ANN_CONFIG_HASH, json_string(c->config_hash));
    if (c->prov) {
        char *p = tg_render_json_text(c->prov);
        json_object_set_new(a, TG_ANN_PROVENANCE, json_string(p ? p : "{}"));
        free(p);
    }
    if (payload_digest)
        json_object_set_new(a, TG_ANN_PAYLOAD, json_string(payload_digest));
    char *ex = tg_render_json_text(execution);
    json_object_set_new(a, "taugate.io/workloadspec-execution", json_string(ex ? ex : "{}"));
    free(ex);
    json_object_set_new(a, "taugate.io/image", json_string(c->image));
    const json_t *exp = json_object_get(c->rc, "experiment");
    json_t *e = json_object();
    static const char *const keys[] = {"project", "name", "group"};
    for (size_t i = 0; i < 3; i++) {
        const char *v = tg_render_str(c->rc, "experiment", keys[i]);
        if (v)
            json_object_set_new(e, keys[i], json_string(v));
    }
    if (json_is_object(exp) && json_object_size(e)) {
        char *t = tg_render_json_text(e);
        json_object_set_new(a, "taugate.io/experiment", json_string(t));
        free(t);
    }
    json_decref(e);
    return a;
}
