/* Rendering of a resolved run config into Kubernetes manifests. */
#include "render/render.h"

#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "render/job.h"
#include "render/managed.h"
#include "render/metadata.h"
#include "render/rayjob.h"
#include "core/digest.h"
#include "tauyaml/units.h"

/* The files the resolved config recorded must be the ones supplied now. */
static int render_files_match(tg_render_ctx_t *c)
{
    const json_t *files = json_object_get(c->rc, "files");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)files, k, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *sha = json_string_value(json_object_get(v, "sha256"));
        const tg_tauyaml_file_t *f = tg_tauyaml_files_find(c->files, name);
        if (!name || !sha || !f) {
            tg_render_fail(c, "file \"%s\" named by the resolved config was not supplied",
                           name ? name : k);
            return 0;
        }
        char hex[65];
        tg_sha256_hex(f->data, f->len, hex);
        if (strcmp(hex, sha) != 0) {
            tg_render_fail(c, "file \"%s\" differs from the one the config was resolved with",
                           name);
            return 0;
        }
        if (c->nchecked < TG_ARRAY_LEN(c->checked)) {
            c->checked[c->nchecked] = f;
            c->checked_sha[c->nchecked++] = sha;
        }
    }
    return 1;
}

/* The sections the renderers read from (tg_render_ctx_t). */
static void render_sections(tg_render_ctx_t *c)
{
    c->policy = json_object_get(c->rc, "policy");
    c->runtime = json_object_get(c->rc, "runtime");
    c->compute = json_object_get(c->rc, "compute");
    c->storage = json_object_get(c->rc, "storage");
    c->execution = json_object_get(c->rc, "execution");
    c->experiment = json_object_get(c->rc, "experiment");
    c->resilience = json_object_get(c->rc, "resilience");
    c->run = json_object_get(c->rc, "run");
}

/* Each engine's workload kind and renderer. */
typedef struct {
    const char *engine, *kind;
    tg_rc_e (*render)(tg_render_ctx_t *c);
} render_engine_t;

static const render_engine_t render_engines[] = {{"job", "Job", tg_render_job},
                                                 {"rayjob", "RayJob", tg_render_rayjob}};

static const render_engine_t *render_engine(const char *engine)
{
    for (size_t i = 0; engine && i < sizeof(render_engines) / sizeof(render_engines[0]); i++)
        if (strcmp(engine, render_engines[i].engine) == 0)
            return &render_engines[i];
    return NULL;
}

tg_rc_e tg_render_workload_ref(const json_t *resolved, const char *run_id, unsigned attempt,
                               const char **ns, char name[64], const char **kind)
{
    const render_engine_t *e = render_engine(tg_render_str(resolved, NULL, "engine"));
    *ns = tg_render_str(resolved, "policy", "namespace");
    *kind = e ? e->kind : NULL;
    return e && *ns && tg_render_object_name(run_id, attempt, name, 64) == 0 ? TG_OK : TG_EINVAL;
}

tg_rc_e tg_render_manifests_text(const json_t *resolved, const tg_tauyaml_prov_t *provenance,
                                 const tg_tauyaml_files_t *files, const tg_render_opts_t *opts,
                                 tg_buf_t *out, char *err, size_t errlen)
{
    tg_rc_e rc = TG_EINVAL;
    tg_render_ctx_t c;
    tg_jw_t w;
    size_t start = out->len;
    memset(&c, 0, sizeof(c));
    c.rc = resolved;
    render_sections(&c);
    c.prov = provenance;
    c.files = files;
    c.opts = opts;
    c.err = err;
    c.errlen = errlen;
    c.w = &w;
    tg_jw_init(&w, out);
    /* Grow once to the usual size of a manifest set instead of doubling up. */
    if (out->cap - out->len < 32768 && tg_buf_append(out, "", 0) == TG_OK &&
        out->max - out->len > 32768) {
        out->data = tg_xrealloc(out->data, out->len + 32768);
        out->cap = out->len + 32768;
    }
    if (err && errlen)
        err[0] = '\0';

    if (!opts || !opts->run_id || !*opts->run_id || strlen(opts->run_id) > 63 ||
        !tg_tauyaml_label_value(opts->run_id) || opts->attempt < 1) {
        tg_render_fail(&c, "run id must be a label value of at most 63 characters and attempt "
                           ">= 1");
        goto out;
    }
    if (tg_render_object_name(opts->run_id, opts->attempt, c.name, sizeof(c.name)) != 0)
        goto out;
    tg_render_int_text(c.attempt, opts->attempt);
    const char *engine = tg_render_str(resolved, NULL, "engine");
    c.ns = tg_render_str(c.policy, NULL, "namespace");
    c.image = tg_render_str(c.runtime, NULL, "image");
    c.launcher = tg_render_str(c.execution, NULL, "launcher");
    c.entrypoint = tg_render_str(resolved, NULL, "entrypoint");
    c.gpus = tg_render_int(c.compute, NULL, "gpu_count", 0);
    c.gpu_resource = tg_render_str(c.compute, NULL, "gpu_resource");
    c.gpu_class = tg_render_str(c.policy, NULL, "gpu_class");
    if (!engine || !c.ns || !c.image || !c.launcher || !c.gpu_resource ||
        !tg_render_str(c.policy, NULL, "queue") || !tg_render_str(resolved, NULL, "name")) {
        tg_render_fail(&c, "resolved config lacks engine, namespace, image, launcher, queue, "
                           "name or gpu_resource");
        goto out;
    }
    if (!render_files_match(&c))
        goto out;
    if (opts->config_hash && strlen(opts->config_hash) == 71)
        memcpy(c.config_hash, opts->config_hash, 72);
    else
        tg_render_config_hash(resolved, c.config_hash);
    tg_jw_arr(&w);
    const render_engine_t *e = render_engine(engine);
    if (e && json_is_object(json_object_get(resolved, "managed")))
        rc = tg_render_managed(&c); /* a TauGrid managed workflow manifest */
    else if (e)
        rc = e->render(&c);
    else
        tg_render_fail(&c, "unknown engine \"%s\"", engine);
    tg_jw_end_arr(&w);
    if (rc == TG_OK && w.rc != TG_OK) {
        tg_render_fail(&c, "manifests too large");
        rc = TG_EINVAL;
    }
out:
    if (rc != TG_OK) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
    }
    return rc;
}

tg_rc_e tg_render_manifests(const json_t *resolved, const tg_tauyaml_prov_t *provenance,
                            const tg_tauyaml_files_t *files, const tg_render_opts_t *opts,
                            json_t **manifests, char *err, size_t errlen)
{
    tg_buf_t b;
    tg_buf_init(&b, 64u << 20);
    *manifests = NULL;
    tg_rc_e rc = tg_render_manifests_text(resolved, provenance, files, opts, &b, err, errlen);
    if (rc == TG_OK) {
        json_error_t je;
        *manifests = json_loadb(b.data, b.len, 0, &je);
        if (!*manifests) {
            /* Our own writer produced invalid JSON: a bug, never user input. */
            if (err && errlen)
                snprintf(err, errlen, "internal: rendered JSON does not parse: %s", je.text);
            rc = TG_EINTERNAL;
        }
    }
    tg_buf_clean(&b);
    return rc;
}
