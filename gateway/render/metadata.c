/* The metadata contract of rendered workloads. */
#include "render/metadata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_canon.h"
#include "core/digest.h"
#include "spec/units.h"

void tg_render_config_hash_text(const json_t *resolved, char out[72], tg_buf_t *text)
{
    char hex[65];
    /* A resolved config is a few kilobytes: one allocation, not a series. */
    if (tg_buf_reserve(text, 4096) != TG_OK || tg_json_canon(resolved, 17, text) != TG_OK)
        tg_buf_reset(text);
    tg_sha256_hex(text->data ? text->data : "", text->len, hex);
    memcpy(out, "sha256:", 7);
    memcpy(out + 7, hex, 65);
}

void tg_render_config_hash(const json_t *resolved, char out[72])
{
    tg_buf_t b;
    tg_buf_init(&b, 64u << 20);
    tg_render_config_hash_text(resolved, out, &b);
    tg_buf_clean(&b);
}

static void md_label(tg_jw_t *w, const char *key, const char *value)
{
    if (value && tg_spec_label_value(value))
        tg_jw_kstr(w, key, value);
}

void tg_render_k_labels(const tg_render_ctx_t *c, int with_kueue)
{
    tg_jw_t *w = c->w;
    tg_jw_kobj(w, "labels");
    tg_jw_kstr(w, TG_LABEL_MANAGED_BY, "taugate");
    if (with_kueue) {
        md_label(w, TG_LABEL_PRIORITY, tg_render_str(c->policy, NULL, "workload_priority_class"));
        md_label(w, TG_LABEL_QUEUE, tg_render_str(c->policy, NULL, "queue"));
    }
    md_label(w, TG_LABEL_ATTEMPT, c->attempt);
    if (with_kueue && c->gpus > 0 && c->gpu_class && strcmp(c->gpu_class, "any") != 0)
        md_label(w, "taugate.io/gpu-class", c->gpu_class);
    if (with_kueue) {
        md_label(w, "taugate.io/lane", tg_render_str(c->policy, NULL, "lane"));
        md_label(w, "taugate.io/profile", tg_render_str(c->policy, NULL, "profile"));
    }
    md_label(w, TG_LABEL_RUN_ID, c->opts->run_id);
    md_label(w, TG_LABEL_RUN_NAME, tg_render_str(c->rc, NULL, "name"));
    if (with_kueue)
        md_label(w, "taugate.io/team", tg_render_str(c->policy, NULL, "team"));
    md_label(w, TG_LABEL_WORKSPACE, tg_render_str(c->policy, NULL, "workspace"));
    tg_jw_end_obj(w);
}

static void md_provenance_pair(const void *arg, size_t i, const char **k, size_t *kn,
                               const char **v, size_t *vn)
{
    *k = tg_spec_prov_path(arg, i, kn);
    *v = tg_spec_prov_source(arg, i, vn);
}

tg_rc_e tg_render_provenance_text(const void *arg, tg_buf_t *b)
{
    const tg_spec_prov_t *p = arg;
    /* the table's text holds every path and source (and any replaced) */
    return tg_json_canon_quoted_pairs(p->n, md_provenance_pair, p, p->tlen, b);
}

void tg_render_k_annotations(const tg_render_ctx_t *c, const char *execution,
                             const char *payload_digest)
{
    tg_jw_t *w = c->w;
    tg_jw_kobj(w, "annotations");
    tg_jw_kstr(w, TG_ANN_CONFIG_HASH, c->config_hash);
    static const char *const keys[] = {"group", "name", "project"};
    int any = 0;
    for (size_t i = 0; i < 3; i++)
        any |= tg_render_str(c->experiment, NULL, keys[i]) != NULL;
    if (any) {
        tg_buf_t b;
        tg_jw_t ew;
        tg_buf_init(&b, 1 << 20);
        tg_jw_init(&ew, &b);
        tg_jw_obj(&ew);
        for (size_t i = 0; i < 3; i++) {
            const char *v = tg_render_str(c->experiment, NULL, keys[i]);
            if (v)
                tg_jw_kstr(&ew, keys[i], v);
        }
        tg_jw_end_obj(&ew);
        if (ew.rc == TG_OK)
            tg_jw_kstr(w, "taugate.io/experiment", b.data);
        tg_buf_clean(&b);
    }
    tg_jw_kstr(w, "taugate.io/image", c->image);
    if (payload_digest)
        tg_jw_kstr(w, TG_ANN_PAYLOAD, payload_digest);
    if (c->prov)
        tg_jw_kfill(w, TG_ANN_PROVENANCE, tg_render_provenance_text, c->prov);
    tg_jw_kstr(w, "taugate.io/workloadspec-execution", execution);
    tg_jw_end_obj(w);
}

void tg_render_k_workload_header(const tg_render_ctx_t *c, const char *api, const char *kind,
                                 const char *execution, const char *payload_digest)
{
    tg_jw_t *w = c->w;
    tg_jw_kstr(w, "apiVersion", api);
    tg_jw_kstr(w, "kind", kind);
    tg_jw_kobj(w, "metadata");
    tg_render_k_annotations(c, execution, payload_digest);
    tg_render_k_labels(c, 1);
    tg_jw_kstr(w, "name", c->name);
    tg_jw_kstr(w, "namespace", c->ns);
    tg_jw_end_obj(w);
}
