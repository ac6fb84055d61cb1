/* Resolution of the runtime, run, storage, execution, resilience, metrics
 * and experiment sections (tauyaml/resolve_int.h). */
#include "tauyaml/resolve_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tauyaml/semantic_env.h"

void tg_tauyaml_resolve_runtime(tg_tauyaml_rs_t *r)
{
    const tg_tauyaml_facts_t *f = r->f;
    tg_tauyaml_qv_t q;
    if (r->managed && f->is_job) {
        /* TauGrid's managed Job template always runs its GPU Ray image. */
        rs_put(r, "runtime", "image", json_string(TG_TAUYAML_RAY_IMAGE_GPU), "default");
    } else if (f->image) {
        rs_put(r, "runtime", "image", rs_spec_text(r, f->image_path, f->image), "spec");
    } else if (r->prof && rs_str(r->prof, "default_image")) {
        const json_t *di = json_object_get(r->prof, "default_image");
        rs_put(r, "runtime", "image", rs_text(di, json_string_value(di)), "profile");
    } else if (f->is_ray) {
        rs_put(r, "runtime", "image",
               json_string(f->gpus_per_worker > 0 ? TG_TAUYAML_RAY_IMAGE_GPU
                                                  : TG_TAUYAML_RAY_IMAGE_CPU),
               "default");
    } else {
        if (f->is_job)
            tg_tauyaml_diag_error(r->d, "", TG_AT_KEY,
                                  "no image: profile \"%s\" declares no runtime image and the spec "
                                  "sets none; set runtime.image",
                                  tg_tauyaml_qv(&q, r->prof_name ? r->prof_name : "(none)"));
        rs_put(r, "runtime", "image", NULL, NULL);
    }
    const json_t *env = rs_spec(r, "runtime", "env");
    rs_put(r, "runtime", "env", json_is_object(env) ? rs_ref(env) : json_object(),
           env ? "spec" : NULL);
    const json_t *sec = rs_spec(r, "runtime", "env_secret");
    rs_put(r, "runtime", "env_secret", json_is_object(sec) ? rs_ref(sec) : json_object(),
           sec ? "spec" : NULL);
    const json_t *pip = rs_spec(r, "runtime", "pip");
    rs_put(r, "runtime", "pip", json_is_array(pip) ? rs_ref(pip) : json_array(),
           pip ? "spec" : NULL);
    rs_pick(r, "runtime", "working_dir", NULL, NULL);
    const char *mode = tg_tauyaml_get_str(rs_spec(r, "runtime", "security"), NULL, "mode");
    const json_t *pmode = r->prof ? json_object_get(r->prof, "security_mode") : NULL;
    if (mode && *mode)
        rs_put(r, "runtime", "security_mode", json_string(mode), "spec");
    else if (json_is_string(pmode) && *json_string_value(pmode))
        rs_put(r, "runtime", "security_mode", rs_ref(pmode), "profile");
    else
        rs_put(r, "runtime", "security_mode", NULL, NULL);
}

void tg_tauyaml_resolve_run(tg_tauyaml_rs_t *r)
{
    rs_pick(r, "run", "working_dir", NULL, NULL);
    const json_t *src = rs_spec(r, "run", "source");
    rs_put(r, "run", "source", json_is_object(src) ? rs_ref(src) : NULL, "spec");
    const json_t *ex = rs_spec(r, "run", "working_dir_excludes");
    rs_put(r, "run", "working_dir_excludes", json_is_array(ex) ? rs_ref(ex) : json_array(),
           ex ? "spec" : NULL);
    if (r->f->is_ray)
        rs_put(r, "run", "ttl_seconds_after_finished", json_integer(15), "default");
    else if (r->managed && json_is_integer(json_object_get(r->ws, "ttl_seconds")))
        rs_put(r, "run", "ttl_seconds_after_finished",
               rs_ref(json_object_get(r->ws, "ttl_seconds")), "workspace");
    else if (r->managed)
        rs_put(r, "run", "ttl_seconds_after_finished", json_integer(86400), "default");
    else
        rs_pick(r, "run", "ttl_seconds_after_finished", "ttl_seconds", "ttl_seconds");
    const json_t *ad = r->prof ? json_object_get(r->prof, "active_deadline_seconds") : NULL;
    rs_put(r, "run", "active_deadline_seconds",
           json_is_integer(ad) && json_integer_value(ad) > 0 ? rs_ref(ad) : NULL, "profile");
}

void tg_tauyaml_resolve_storage(tg_tauyaml_rs_t *r)
{
    tg_tauyaml_qv_t q, q2;
    const json_t *pvcs = json_object_get(r->ws, "pvcs");
    const char *data = tg_tauyaml_get_str(r->root, "storage", "data_pvc");
    if (data && json_is_array(pvcs) && !rs_in(pvcs, data))
        tg_tauyaml_diag_error(r->d, "storage.data_pvc", TG_AT_VALUE,
                              "storage.data_pvc \"%s\" is not a PVC of workspace \"%s\"; ask a "
                              "platform admin to register it",
                              tg_tauyaml_qv(&q, data), tg_tauyaml_qv(&q2, r->ws_name));
    rs_put(r, "storage", "data_pvc", data ? json_string(data) : NULL, "spec");
    const char *out = tg_tauyaml_get_str(r->root, "storage", "output");
    const char *root = rs_str(r->ws, "output_root");
    if (out) {
        rs_put(r, "storage", "output", json_string(out), "spec");
    } else if (root && r->f->name) {
        char buf[4200];
        size_t n = strlen(root);
        snprintf(buf, sizeof(buf), "%s%s%s", root, n && root[n - 1] == '/' ? "" : "/", r->f->name);
        rs_put(r, "storage", "output", json_string(buf), "workspace");
    } else {
        rs_put(r, "storage", "output", NULL, NULL);
    }
    const char *ck = tg_tauyaml_get_str(r->root, "storage", "checkpoint");
    int ck_set = 0;
    for (const char *c = ck; c && *c && !ck_set; c++)
        ck_set = *c != ' ' && *c != '\t' && *c != '\n' && *c != '\r';
    rs_put(r, "storage", "checkpoint",
           ck_set ? rs_ref(tg_tauyaml_get(r->root, "storage", "checkpoint")) : NULL, "spec");
    const char *pub = tg_tauyaml_get_str(r->root, "storage", "publish");
    rs_put(r, "storage", "publish", pub && *pub ? json_string(pub) : NULL, "spec");
    const json_t *assets = rs_spec(r, "storage", "image_assets");
    rs_put(r, "storage", "image_assets", json_is_array(assets) ? rs_ref(assets) : json_array(),
           json_array_size(assets) ? "spec" : NULL);

    json_t *vols = json_array();
    const json_t *sv = rs_spec(r, "storage", "volumes");
    const json_t *sm = rs_spec(r, "storage", "mounts");
    size_t i, j;
    const json_t *v, *m;
    json_array_foreach(sv, i, v) {
        if (!json_is_string(v))
            continue;
        const char *pvc = json_string_value(v);
        char path[48];
        snprintf(path, sizeof(path), "storage.volumes[%zu]", i);
        if (json_is_array(pvcs) && !rs_in(pvcs, pvc))
            tg_tauyaml_diag_error(r->d, path, TG_AT_VALUE,
                                  "storage.volumes PVC \"%s\" is not a PVC of workspace \"%s\"",
                                  tg_tauyaml_qv(&q, pvc), tg_tauyaml_qv(&q2, r->ws_name));
        int mounted = 0;
        json_array_foreach(sm, j, m) {
            const char *s = json_string_value(m);
            const char *colon = s ? strchr(s, ':') : NULL;
            if (!colon || (size_t)(colon - s) != strlen(pvc) || strncmp(s, pvc, strlen(pvc)) != 0)
                continue;
            char mp[520];
            snprintf(mp, sizeof(mp), "%s", colon + 1);
            size_t ml = strlen(mp);
            int ro = ml > 3 && strcmp(mp + ml - 3, ":ro") == 0;
            if (ro)
                mp[ml - 3] = '\0';
            json_array_append_new(
                vols, json_pack("{s:s, s:s, s:b}", "pvc", pvc, "path", mp, "read_only", ro));
            mounted = 1;
        }
        if (!mounted) {
            char mp[300];
            snprintf(mp, sizeof(mp), "/volumes/%s", pvc);
            json_array_append_new(
                vols, json_pack("{s:s, s:s, s:b}", "pvc", pvc, "path", mp, "read_only", 0));
        }
    }
    rs_put(r, "storage", "volumes", vols, json_array_size(vols) ? "spec" : NULL);
}

void tg_tauyaml_resolve_execution(tg_tauyaml_rs_t *r)
{
    const tg_tauyaml_facts_t *f = r->f;
    rs_put(r, "execution", "launcher",
           rs_text(tg_tauyaml_get(r->root, "execution", "launcher"), f->launcher),
           f->launcher_explicit ? "spec" : "default");
    if (f->is_job) {
        rs_pick(r, "execution", "nodes", NULL, NULL);
        rs_pick(r, "execution", "processes_per_node", NULL, NULL);
    }
    const json_t *cfg = rs_spec(r, "execution", "configs");
    rs_put(r, "execution", "configs", json_is_object(cfg) ? rs_ref(cfg) : json_object(),
           cfg ? "spec" : NULL);
    if (strcmp(f->launcher, "ray-tune") == 0) {
        rs_pick(r, "execution", "metric", NULL, NULL);
        const char *mode = tg_tauyaml_get_str(r->root, "execution", "mode");
        if (mode && *mode)
            rs_put(r, "execution", "mode",
                   json_string(strcasecmp(mode, "max") == 0 ? "max" : "min"), "spec");
        else
            rs_pick(r, "execution", "mode", NULL, NULL);
        rs_pick(r, "execution", "num_samples", NULL, NULL);
        rs_pick(r, "execution", "max_concurrent_trials", NULL, NULL);
    }
    rs_pick(r, "execution", "allow_nccl_override", NULL, NULL);
    const json_t *bf = rs_spec(r, "execution", "beta_features");
    rs_put(r, "execution", "beta_features", json_is_array(bf) ? rs_ref(bf) : json_array(),
           json_array_size(bf) ? "spec" : NULL);
}

void tg_tauyaml_resolve_resilience(tg_tauyaml_rs_t *r)
{
    rs_pick(r, "resilience", "max_retries", NULL, NULL);
    rs_pick(r, "resilience", "retry_on", NULL, NULL);
    rs_pick(r, "resilience", "backoff_initial", NULL, NULL);
    rs_pick(r, "resilience", "backoff_max", NULL, NULL);
    const char *cp = tg_tauyaml_get_str(r->root, "resilience", "checkpoint_path");
    if (cp) {
        rs_put(r, "resilience", "checkpoint_path", json_string(cp), "spec");
    } else if (r->f->name) {
        char buf[128];
        tg_tauyaml_path_cat(buf, sizeof(buf), "/data/checkpoints/finetunes/", r->f->name, "");
        rs_put(r, "resilience", "checkpoint_path", json_string(buf), "default");
    } else {
        rs_put(r, "resilience", "checkpoint_path", NULL, NULL);
    }
}

void tg_tauyaml_resolve_metrics(tg_tauyaml_rs_t *r)
{
    const json_t *h = rs_spec(r, "metrics", "history");
    rs_put(r, "metrics", "history", json_is_array(h) ? rs_ref(h) : json_array(), h ? "spec" : NULL);
    int off = 0;
    const json_t *offload = rs_spec(r, "metrics", "offload");
    tg_tauyaml_get_bool(offload, NULL, "enabled", &off);
    rs_put(r, "metrics", "offload_enabled", json_boolean(off), offload ? "spec" : "default");
    rs_pick(r, "experiment", "project", NULL, NULL);
    rs_pick(r, "experiment", "name", NULL, NULL);
    /* A legacy title names the experiment when experiment.name does not. */
    const char *title = tg_tauyaml_get_str(r->root, "experiment", "title");
    if (!tg_tauyaml_get_str(r->root, "experiment", "name") && title && *title) {
        char id[64];
        tg_tauyaml_experiment_id_from_title(title, id, sizeof(id));
        if (*id)
            rs_put(r, "experiment", "name", json_string(id), "spec");
    }
    rs_pick(r, "experiment", "group", NULL, NULL);
}

/* The PVCs a managed manifest mounts must be the workspace's. */
void tg_tauyaml_resolve_managed_pvcs(tg_tauyaml_rs_t *r)
{
    const json_t *pvcs = json_object_get(r->ws, "pvcs");
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(r->managed, "mounts"), i, m) {
        const char *pvc = rs_str(m, "pvc");
        if (!pvc || !json_is_array(pvcs) || rs_in(pvcs, pvc))
            continue;
        char path[48];
        snprintf(path, sizeof(path), "storage.mounts[%zu]", i);
        tg_tauyaml_qv_t q, q2;
        tg_tauyaml_diag_error(r->d, path, TG_AT_VALUE,
                              "storage.mounts PVC \"%s\" is not a PVC of workspace \"%s\"",
                              tg_tauyaml_qv(&q, pvc), tg_tauyaml_qv(&q2, r->ws_name));
    }
}
