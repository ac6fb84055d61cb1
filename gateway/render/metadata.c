/* The metadata contract of rendered workloads. */
#include "render/metadata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_canon.h"
#include "core/digest.h"
#include "tauyaml/units.h"

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

/* Labels or annotations gathered before they are written in key order. */
typedef struct md_pairs_s {
    const char *k[40];
    const char *v[40];
    size_t n;
} md_pairs_t;

static void md_add(md_pairs_t *p, const char *key, const char *value)
{
    if (value && *value && p->n < TG_ARRAY_LEN(p->k)) {
        p->k[p->n] = key;
        p->v[p->n++] = value;
    }
}

/* `value` when it is a valid label value, else NULL (the label is left out). */
static const char *md_label_value(const char *value)
{
    return value && tg_tauyaml_label_value(value) ? value : NULL;
}

/* Sort the pairs by key and write them as object `name`. The callers add
 * them in key order already, so the sort only checks it (n-1 comparisons);
 * pairs added out of order (a caller's extras) still land in place. */
static void md_sort(md_pairs_t *p)
{
    for (size_t i = 1; i < p->n; i++)
        for (size_t j = i; j > 0 && strcmp(p->k[j - 1], p->k[j]) > 0; j--) {
            const char *tk = p->k[j - 1], *tv = p->v[j - 1];
            p->k[j - 1] = p->k[j];
            p->v[j - 1] = p->v[j];
            p->k[j] = tk;
            p->v[j] = tv;
        }
}

static void md_write(tg_jw_t *w, const char *name, md_pairs_t *p)
{
    md_sort(p);
    tg_jw_kobj(w, name);
    for (size_t i = 0; i < p->n; i++)
        tg_jw_kstr(w, p->k[i], p->v[i]);
    tg_jw_end_obj(w);
}

/* The experiment identity as TauGrid's Stellar keys carry it: the
 * experiment id falls back to the group, as TauGrid's ExperimentRunMetadata
 * does. */
static const char *md_experiment_id(const tg_render_ctx_t *c)
{
    const char *n = tg_render_str(c->experiment, NULL, "name");
    return n ? n : tg_render_str(c->experiment, NULL, "group");
}

/* taugate's labels, Kueue's, and TauGrid's workload metadata contract
 * (core/workloadmeta, which its Portal and `tau run status` select on), in
 * key order. A workload (with_kueue) carries the queue, priority and
 * scheduling labels; a pod template names its workload and its GPUs. */
static void md_labels(const tg_render_ctx_t *c, int with_kueue, int pod, json_int_t gpus)
{
    md_pairs_t p = {.n = 0};
    char ng[24];
    int pod_only = pod && !with_kueue;
    const char *run_id = md_label_value(c->opts->run_id);
    const char *name = md_label_value(tg_render_str(c->rc, NULL, "name"));
    const char *ws = md_label_value(tg_render_str(c->policy, NULL, "workspace"));
    const char *profile = NULL, *lane = NULL, *team = NULL, *gpu_class = NULL;
    if (with_kueue) {
        profile = md_label_value(tg_render_str(c->policy, NULL, "profile"));
        lane = md_label_value(tg_render_str(c->policy, NULL, "lane"));
        team = md_label_value(tg_render_str(c->policy, NULL, "team"));
        if (c->gpus > 0 && c->gpu_class && strcmp(c->gpu_class, "any") != 0)
            gpu_class = md_label_value(c->gpu_class);
    }
    md_add(&p, TG_LABEL_MANAGED_BY, "taugate");
    if (pod_only && tg_render_bool(c->policy, NULL, "workload_identity") &&
        tg_render_str(c->policy, NULL, "service_account"))
        md_add(&p, "azure.workload.identity/use", "true");
    if (with_kueue) {
        md_add(&p, TG_LABEL_PRIORITY,
               md_label_value(tg_render_str(c->policy, NULL, "workload_priority_class")));
        md_add(&p, TG_LABEL_QUEUE, md_label_value(tg_render_str(c->policy, NULL, "queue")));
    }
    md_add(&p, "tau.azure.com/gpu-class", gpu_class);
    if (pod_only && gpus > 0) {
        md_add(&p, "tau.azure.com/gpu-count", tg_render_int_text(ng, gpus));
        md_add(&p, "tau.azure.com/gpu-placement",
               md_label_value(tg_render_str(c->policy, NULL, "gpu_placement")));
    }
    if (pod_only) /* the workload the pod belongs to, TauGrid's pod selector */
        md_add(&p, "tau.azure.com/job", md_label_value(c->name));
    md_add(&p, "tau.azure.com/lane", lane);
    md_add(&p, TG_TAU_MANAGED_BY, "tau");
    md_add(&p, "tau.azure.com/profile", profile);
    md_add(&p, "tau.azure.com/run", name);
    md_add(&p, "tau.azure.com/run-id", run_id);
    if (with_kueue) {
        md_add(&p, "tau.azure.com/stellar-experiment", md_label_value(md_experiment_id(c)));
        md_add(&p, "tau.azure.com/stellar-group",
               md_label_value(tg_render_str(c->experiment, NULL, "group")));
        md_add(&p, "tau.azure.com/stellar-project",
               md_label_value(tg_render_str(c->experiment, NULL, "project")));
    }
    md_add(&p, "tau.azure.com/team", team);
    md_add(&p, "tau.azure.com/workload-kind", md_label_value(tg_render_str(c->rc, NULL, "engine")));
    md_add(&p, "tau.azure.com/workspace", ws);
    md_add(&p, TG_LABEL_ATTEMPT, md_label_value(c->attempt));
    md_add(&p, "taugate.io/gpu-class", gpu_class);
    md_add(&p, "taugate.io/lane", lane);
    md_add(&p, "taugate.io/profile", profile);
    md_add(&p, TG_LABEL_RUN_ID, run_id);
    md_add(&p, TG_LABEL_RUN_NAME, name);
    md_add(&p, "taugate.io/team", team);
    md_add(&p, TG_LABEL_WORKSPACE, ws);
    md_write(c->w, "labels", &p);
}

void tg_render_k_labels(const tg_render_ctx_t *c, int with_kueue)
{
    md_labels(c, with_kueue, 0, 0);
}

void tg_render_k_pod_labels(const tg_render_ctx_t *c, json_int_t gpus)
{
    md_labels(c, 0, 1, gpus);
}

static void md_provenance_pair(const void *arg, size_t i, const char **k, size_t *kn,
                               const char **v, size_t *vn)
{
    *k = tg_tauyaml_prov_path(arg, i, kn);
    *v = tg_tauyaml_prov_source(arg, i, vn);
}

tg_rc_e tg_render_provenance_text(const void *arg, tg_buf_t *b)
{
    const tg_tauyaml_prov_t *p = arg;
    /* the table's text holds every path and source (and any replaced) */
    return tg_json_canon_quoted_pairs(p->n, md_provenance_pair, p, p->tlen, b);
}

/* The storage mounts as TauGrid's tau.azure.com/storage-mounts records
 * them, [{"path","source","source_ref"}], as JSON text into b. */
static void md_storage_mounts(const tg_render_ctx_t *c, tg_buf_t *b)
{
    tg_jw_t w;
    tg_jw_init(&w, b);
    tg_jw_arr(&w);
    const char *pvc = tg_render_str(c->storage, NULL, "data_pvc");
    tg_jw_obj(&w);
    tg_jw_kstr(&w, "path", "/data");
    tg_jw_kstr(&w, "source", pvc ? "pvc" : "emptyDir");
    if (pvc)
        tg_jw_kstr(&w, "source_ref", pvc);
    tg_jw_end_obj(&w);
    const json_t *vols = tg_render_get(c->storage, NULL, "volumes");
    size_t i;
    const json_t *v;
    json_array_foreach(vols, i, v) {
        tg_jw_obj(&w);
        tg_jw_kstr(&w, "path", json_string_value(json_object_get(v, "path")));
        tg_jw_kstr(&w, "source", "pvc");
        tg_jw_kstr(&w, "source_ref", json_string_value(json_object_get(v, "pvc")));
        tg_jw_end_obj(&w);
    }
    tg_jw_end_arr(&w);
    if (w.rc != TG_OK)
        tg_buf_reset(b);
}

static void md_annotations(const tg_render_ctx_t *c, const char *execution,
                           const char *payload_digest, const char *const *extra)
{
    tg_jw_t *w = c->w;
    md_pairs_t p = {.n = 0};
    char experiment[1200] = "", gpus[24];
    static const char *const keys[] = {"group", "name", "project"};
    int any = 0;
    for (size_t i = 0; i < 3; i++)
        any |= tg_render_str(c->experiment, NULL, keys[i]) != NULL;
    if (any) {
        tg_buf_t b;
        tg_jw_t ew;
        tg_buf_init(&b, sizeof(experiment) - 1);
        tg_jw_init(&ew, &b);
        tg_jw_obj(&ew);
        for (size_t i = 0; i < 3; i++) {
            const char *v = tg_render_str(c->experiment, NULL, keys[i]);
            if (v)
                tg_jw_kstr(&ew, keys[i], v);
        }
        tg_jw_end_obj(&ew);
        if (ew.rc == TG_OK && b.len < sizeof(experiment))
            memcpy(experiment, b.data, b.len + 1);
        tg_buf_clean(&b);
    }
    tg_buf_t mounts;
    tg_buf_init(&mounts, 1 << 20);
    md_storage_mounts(c, &mounts);
    /* TauGrid's keys (core/workloadmeta), then taugate's: in key order */
    md_add(&p, "tau.azure.com/checkpoint-artifact", tg_render_str(c->storage, NULL, "checkpoint"));
    md_add(&p, "tau.azure.com/config-hash", c->config_hash);
    md_add(&p, "tau.azure.com/gpu-count", tg_render_int_text(gpus, c->gpus));
    md_add(&p, "tau.azure.com/image", c->image);
    md_add(&p, "tau.azure.com/namespace", c->ns);
    md_add(&p, "tau.azure.com/payload-digest", payload_digest);
    md_add(&p, "tau.azure.com/pod-priority-class",
           tg_render_str(c->policy, NULL, "pod_priority_class"));
    md_add(&p, "tau.azure.com/result-path", tg_render_str(c->storage, NULL, "output"));
    md_add(&p, "tau.azure.com/result-pvc", tg_render_str(c->storage, NULL, "data_pvc"));
    md_add(&p, "tau.azure.com/stellar-experiment-id", md_experiment_id(c));
    md_add(&p, "tau.azure.com/stellar-group-value", tg_render_str(c->experiment, NULL, "group"));
    md_add(&p, "tau.azure.com/stellar-project-value",
           tg_render_str(c->experiment, NULL, "project"));
    md_add(&p, "tau.azure.com/storage-mounts", mounts.data);
    md_add(&p, "tau.azure.com/submission-id", c->opts->run_id);
    md_add(&p, "tau.azure.com/workload-priority-class",
           tg_render_str(c->policy, NULL, "workload_priority_class"));
    md_add(&p, "tau.azure.com/workload-profile", tg_render_str(c->policy, NULL, "profile"));
    md_add(&p, "tau.azure.com/workloadspec-execution", execution);
    md_add(&p, "tau.azure.com/workspace-id", tg_render_str(c->policy, NULL, "workspace"));
    md_add(&p, TG_ANN_CONFIG_HASH, c->config_hash);
    md_add(&p, "taugate.io/experiment", experiment);
    md_add(&p, "taugate.io/image", c->image);
    md_add(&p, TG_ANN_PAYLOAD, payload_digest);
    md_add(&p, "taugate.io/workloadspec-execution", execution);
    for (; extra && extra[0]; extra += 2)
        md_add(&p, extra[0], extra[1]);
    /* the provenance table is filled in, at its place in key order */
    md_sort(&p);
    tg_jw_kobj(w, "annotations");
    int filled = !c->prov;
    for (size_t i = 0; i <= p.n; i++) {
        if (!filled && (i == p.n || strcmp(TG_ANN_PROVENANCE, p.k[i]) < 0)) {
            tg_jw_kfill(w, TG_ANN_PROVENANCE, tg_render_provenance_text, c->prov);
            filled = 1;
        }
        if (i < p.n)
            tg_jw_kstr(w, p.k[i], p.v[i]);
    }
    tg_jw_end_obj(w);
    tg_buf_clean(&mounts);
}

void tg_render_k_annotations(const tg_render_ctx_t *c, const char *execution,
                             const char *payload_digest)
{
    md_annotations(c, execution, payload_digest, NULL);
}

void tg_render_k_workload_header(const tg_render_ctx_t *c, const char *api, const char *kind,
                                 const char *execution, const char *payload_digest)
{
    tg_render_k_workload_header_x(c, api, kind, execution, payload_digest, NULL);
}

void tg_render_k_workload_header_x(const tg_render_ctx_t *c, const char *api, const char *kind,
                                   const char *execution, const char *payload_digest,
                                   const char *const *extra)
{
    tg_jw_t *w = c->w;
    tg_jw_kstr(w, "apiVersion", api);
    tg_jw_kstr(w, "kind", kind);
    tg_jw_kobj(w, "metadata");
    md_annotations(c, execution, payload_digest, extra);
    tg_render_k_labels(c, 1);
    tg_jw_kstr(w, "name", c->name);
    tg_jw_kstr(w, "namespace", c->ns);
    tg_jw_end_obj(w);
}
