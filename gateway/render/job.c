/* batch/v1 Job rendering (engine: job). */
#include "render/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "render/metadata.h"
#include "render/pod.h"
#include "core/base64.h"
#include "tauyaml/units.h"

#define JOB_RDZV_PORT    29500
#define JOB_SOURCE_MOUNT "/tau/source"

/* The shell program of container "main". It decodes the script from env so
 * the pod needs no ConfigMap and any image with /bin/sh and base64 works;
 * "$@" carries the flags from execution.configs (kept out of the program text
 * so they need no quoting). */
static tg_rc_e job_program(tg_render_ctx_t *c, const tg_tauyaml_file_t *script, int has_req,
                           int has_pip, json_int_t nodes, json_int_t ppn, tg_buf_t *b)
{
    const char *ep = c->entrypoint;
    int is_py = strcmp(tg_tauyaml_ext(ep), ".py") == 0;
    int shebang = script && script->len >= 2 && script->data[0] == '#' && script->data[1] == '!';
    int torchrun = strcmp(c->launcher, "torchrun") == 0;
    int direct = !is_py && !torchrun && shebang;
    /* run.source: the entrypoint is already in /tau/source */
    char srcpath[600];
    const char *dst = direct ? "/tmp/run.sh" : "/tmp/tau-entrypoint.py";
    if (!script)
        dst = tg_render_cat(srcpath, sizeof(srcpath), JOB_SOURCE_MOUNT "/", ep, NULL);
    tg_rc_e rc = tg_buf_puts(b, "set -eu\n");
    if (rc == TG_OK && script)
        rc = tg_buf_puts(b, "printf '%s' \"$TAU_SCRIPT_B64\" | base64 -d > ");
    if (rc == TG_OK && script)
        rc = tg_buf_puts(b, dst);
    if (rc == TG_OK && script)
        rc = tg_buf_puts(b, "\n");
    if (rc == TG_OK && has_req)
        rc = tg_buf_puts(b, "printf '%s' \"$TAU_REQUIREMENTS_B64\" | base64 -d > "
                            "/tmp/requirements.txt\n"
                            "python3 -m pip install -r /tmp/requirements.txt || python3 -m pip "
                            "install --user -r /tmp/requirements.txt\n");
    if (rc == TG_OK && has_pip)
        rc = tg_buf_puts(b, "printf '%s\\n' \"$TAU_PIP_REQUIREMENTS\" > /tmp/tau-pip.txt\n"
                            "python3 -m pip install -r /tmp/tau-pip.txt || python3 -m pip "
                            "install --user -r /tmp/tau-pip.txt\n");
    if (rc == TG_OK && (has_req || has_pip))
        rc = tg_buf_puts(b, "export PATH=\"$(python3 -m site --user-base)/bin:$PATH\"\n");
    if (rc != TG_OK)
        return rc;
    /* With staged publishing the command's status decides the publication,
     * so it is run, not exec'd. */
    int publish = tg_render_publishes(c);
    const char *lead = publish ? "" : "exec ";
    if (publish && tg_render_publish_head(b) != TG_OK)
        return TG_ETOOLARGE;
    if (torchrun && nodes > 1)
        rc = tg_buf_printf(b,
                           "%spython3 -m torch.distributed.run --nnodes=%" JSON_INTEGER_FORMAT
                           " --node_rank=\"$JOB_COMPLETION_INDEX\" --rdzv-backend=c10d "
                           "--rdzv-endpoint=%s-0.%s-headless:%d --rdzv-id=%s "
                           "--nproc_per_node=%" JSON_INTEGER_FORMAT " \"$@\" %s\n",
                           lead, nodes, c->name, c->name, JOB_RDZV_PORT, c->name, ppn, dst);
    else if (torchrun)
        rc = tg_buf_printf(b,
                           "%spython3 -m torch.distributed.run --standalone "
                           "--nproc_per_node=%" JSON_INTEGER_FORMAT " \"$@\" %s\n",
                           lead, ppn, dst);
    else if (direct)
        rc = tg_buf_printf(b, "chmod +x /tmp/run.sh\n%s/tmp/run.sh \"$@\"\n", lead);
    else
        rc = tg_buf_printf(b, "%spython3 %s \"$@\"\n", lead, dst);
    if (rc == TG_OK && publish)
        rc = tg_render_publish_tail(b);
    return rc;
}

/* The init containers that copy trees out of images: run.source into the
 * tau-source volume, each storage.image_assets entry into its own. */
static void job_init_containers(tg_render_ctx_t *c, const json_t *source, const json_t *assets)
{
    tg_jw_t *w = c->w;
    if (!source && json_array_size(assets) == 0)
        return;
    tg_jw_karr(w, "initContainers");
    size_t i;
    const json_t *a;
    json_array_foreach(assets, i, a) {
        char vname[80], src[4200];
        const char *name = json_string_value(json_object_get(a, "name"));
        tg_render_cat(vname, sizeof(vname), "tau-asset-", name ? name : "", NULL);
        tg_render_cat(src, sizeof(src), json_string_value(json_object_get(a, "source_path")), "/.",
                      NULL);
        tg_jw_obj(w);
        tg_jw_karr(w, "command");
        tg_jw_str(w, "/bin/cp");
        tg_jw_str(w, "-a");
        tg_jw_str(w, "--");
        tg_jw_str(w, src);
        tg_jw_str(w, "/tau-asset/");
        tg_jw_end_arr(w);
        tg_jw_kstr(w, "image", json_string_value(json_object_get(a, "image")));
        tg_jw_kstr(w, "name", vname);
        tg_render_k_small_resources(c);
        tg_render_k_container_security(c);
        tg_jw_karr(w, "volumeMounts");
        tg_jw_obj(w);
        tg_jw_kstr(w, "mountPath", "/tau-asset");
        tg_jw_kstr(w, "name", vname);
        tg_jw_end_obj(w);
        tg_jw_end_arr(w);
        tg_jw_end_obj(w);
    }
    if (source) {
        tg_jw_obj(w);
        tg_jw_karr(w, "command");
        tg_jw_str(w, "/bin/sh");
        tg_jw_str(w, "-c");
        tg_jw_str(w, "cp -R -- \"$1\"/. /tau-source/ && chmod -R a+rwX /tau-source && chmod a+x "
                     "\"/tau-source/$2\"");
        tg_jw_str(w, "tau-source");
        tg_jw_str(w, json_string_value(json_object_get(source, "path")));
        tg_jw_str(w, c->entrypoint);
        tg_jw_end_arr(w);
        tg_jw_kstr(w, "image", json_string_value(json_object_get(source, "image")));
        tg_jw_kstr(w, "name", "tau-source");
        tg_render_k_small_resources(c);
        tg_render_k_container_security(c);
        tg_jw_karr(w, "volumeMounts");
        tg_render_k_mount(w, "tau-source", "/tau-source", 0);
        tg_jw_end_arr(w);
        tg_jw_end_obj(w);
    }
    tg_jw_end_arr(w);
}

static void job_service(tg_render_ctx_t *c)
{
    tg_jw_t *w = c->w;
    char svc[80];
    tg_render_cat(svc, sizeof(svc), c->name, "-headless", NULL);
    tg_jw_obj(w);
    tg_jw_kstr(w, "apiVersion", "v1");
    tg_jw_kstr(w, "kind", "Service");
    tg_jw_kobj(w, "metadata");
    tg_render_k_labels(c, 0);
    tg_jw_kstr(w, "name", svc);
    tg_jw_kstr(w, "namespace", c->ns);
    tg_jw_end_obj(w);
    tg_jw_kobj(w, "spec");
    tg_jw_kstr(w, "clusterIP", "None");
    tg_jw_karr(w, "ports");
    tg_jw_obj(w);
    tg_jw_kstr(w, "name", "c10d");
    tg_jw_kint(w, "port", JOB_RDZV_PORT);
    tg_jw_kstr(w, "protocol", "TCP");
    tg_jw_kint(w, "targetPort", JOB_RDZV_PORT);
    tg_jw_end_obj(w);
    tg_jw_end_arr(w);
    tg_jw_kbool(w, "publishNotReadyAddresses", 1);
    tg_jw_kobj(w, "selector");
    tg_jw_kstr(w, "batch.kubernetes.io/job-name", c->name);
    tg_jw_end_obj(w);
    tg_jw_end_obj(w);
    tg_jw_end_obj(w);
}

/* The volume name of image asset `a`: its mount and its volume must agree. */
static void job_asset_volume(const json_t *a, char *out, size_t n)
{
    const char *name = json_string_value(json_object_get(a, "name"));
    tg_render_cat(out, n, "tau-asset-", name ? name : "", NULL);
}

/* The common mounts, then run.source's tree and the image assets
 * (read-only). */
static void job_mounts(tg_render_ctx_t *c, int dshm, const json_t *source, const json_t *assets)
{
    tg_jw_t *w = c->w;
    tg_render_k_mounts_open(c, 0, dshm);
    size_t i;
    const json_t *a;
    json_array_foreach(assets, i, a) {
        char vname[80];
        job_asset_volume(a, vname, sizeof(vname));
        tg_render_k_mount(w, vname, json_string_value(json_object_get(a, "mount_path")), 1);
    }
    if (source)
        tg_render_k_mount(w, "tau-source", JOB_SOURCE_MOUNT, 0);
    tg_jw_end_arr(w);
}

static void job_volumes(tg_render_ctx_t *c, int dshm, const json_t *source, const json_t *assets)
{
    tg_jw_t *w = c->w;
    tg_render_k_volumes_open(c, 0, dshm);
    size_t i;
    const json_t *a;
    json_array_foreach(assets, i, a) {
        char vname[80];
        job_asset_volume(a, vname, sizeof(vname));
        tg_render_k_empty_dir(w, vname, NULL, NULL);
    }
    if (source)
        tg_render_k_empty_dir(w, "tau-source", NULL, NULL);
    tg_jw_end_arr(w);
}

tg_rc_e tg_render_job(tg_render_ctx_t *c)
{
    tg_rc_e rc = TG_EINVAL;
    const json_t *r = c->rc;
    tg_jw_t *w = c->w;
    tg_render_env_t env;
    tg_render_env_init(&env);
    tg_buf_t prog;
    tg_buf_init(&prog, 1 << 20);
    char *b64 = NULL;

    json_int_t nodes = tg_render_int(c->execution, NULL, "nodes", 1);
    json_int_t ppn = tg_render_int(c->execution, NULL, "processes_per_node", 1);
    int torchrun = strcmp(c->launcher, "torchrun") == 0;
    int multi = torchrun && nodes > 1;
    int dshm = torchrun && (nodes > 1 || ppn > 1);
    const tg_tauyaml_file_t *script = NULL, *req = NULL;
    const json_t *pip = tg_render_get(c->runtime, NULL, "pip");
    int has_pip = json_array_size(pip) > 0;

    /* Env in merge order: storage base, user, platform (set last, wins). */
    tg_render_env_set(&env, "TAU_DATA_DIR", "/data");
    tg_render_env_set(&env, "TAU_HOT_DIR", "/mnt");
    tg_render_env_user(&env, r);
    const char *profile = tg_render_str(c->policy, NULL, "profile");
    if (profile)
        tg_render_env_set(&env, "TAU_PROFILE", profile);
    const json_t *source = tg_render_get(c->run, NULL, "source");
    const json_t *assets = tg_render_get(c->storage, NULL, "image_assets");
    if (c->entrypoint && source) {
        if (job_program(c, NULL, 0, has_pip, nodes, ppn, &prog) != TG_OK) {
            tg_render_fail(c, "entrypoint program too large");
            goto out;
        }
        tg_render_env_set(&env, "TAU_SCRIPT_SRC", c->entrypoint);
    } else if (c->entrypoint) {
        script = tg_tauyaml_files_find(c->files, c->entrypoint);
        if (!script) {
            tg_render_fail(c, "entrypoint \"%s\" is not among the files", c->entrypoint);
            goto out;
        }
        req = tg_tauyaml_files_find(c->files, TG_TAUYAML_REQUIREMENTS);
        if (job_program(c, script, req != NULL, has_pip, nodes, ppn, &prog) != TG_OK) {
            tg_render_fail(c, "entrypoint program too large");
            goto out;
        }
        b64 = tg_base64_encode(script->data, script->len, TG_B64_STD);
        tg_render_env_set(&env, "TAU_SCRIPT_SRC", c->entrypoint);
        tg_render_env_set(&env, "TAU_SCRIPT_B64", b64);
        if (req) {
            char *rb64 = tg_base64_encode(req->data, req->len, TG_B64_STD);
            tg_render_env_set(&env, "TAU_REQUIREMENTS_B64", rb64);
            free(rb64);
        }
        if (has_pip) {
            tg_buf_t pl;
            tg_buf_init(&pl, 1 << 20);
            size_t i;
            const json_t *p;
            json_array_foreach(pip, i, p)
                if (json_is_string(p) && (tg_buf_puts(&pl, i ? "\n" : "") != TG_OK ||
                                          tg_buf_puts(&pl, json_string_value(p)) != TG_OK))
                    break;
            tg_render_env_set(&env, "TAU_PIP_REQUIREMENTS", pl.data ? pl.data : "");
            tg_buf_clean(&pl);
        }
    }
    if (torchrun) {
        char addr[160], num[32];
        if (multi)
            snprintf(addr, sizeof(addr), "%s-0.%s-headless", c->name, c->name);
        else
            snprintf(addr, sizeof(addr), "127.0.0.1");
        tg_render_env_set(&env, "MASTER_ADDR", addr);
        tg_render_int_text(num, JOB_RDZV_PORT);
        tg_render_env_set(&env, "MASTER_PORT", num);
        if (nodes > 1 || ppn > 1)
            tg_render_env_set(&env, "OMP_NUM_THREADS", "1");
        tg_render_env_set(&env, "TAU_DIST_BACKEND", c->gpus > 0 ? "nccl" : "gloo");
        tg_render_int_text(num, nodes * ppn);
        tg_render_env_set(&env, "TAU_WORLD_SIZE", num);
    }
    if (tg_render_publishes(c))
        tg_render_env_set(&env, "TAU_OUTPUT_STAGING_DIR", TG_RENDER_STAGING_DIR);
    tg_render_env_platform(&env, c);

    char digest[72], *pd = NULL;
    if (script) {
        char hex[65];
        tg_render_file_sha256(c, script, hex);
        memcpy(digest, "sha256:", 7);
        memcpy(digest + 7, hex, 65);
        pd = digest;
    } else if (source) {
        /* the code is the pinned source image's */
        const char *img = json_string_value(json_object_get(source, "image"));
        const char *at = img ? strchr(img, '@') : NULL;
        if (at && strlen(at + 1) < sizeof(digest)) {
            memcpy(digest, at + 1, strlen(at + 1) + 1);
            pd = digest;
        }
    }
    char exec[160];
    if (torchrun)
        snprintf(exec, sizeof(exec),
                 "{\"launcher\":\"%s\",\"nodes\":%" JSON_INTEGER_FORMAT
                 ",\"processes_per_node\":%" JSON_INTEGER_FORMAT "}",
                 c->launcher, nodes, ppn);
    else
        tg_render_cat(exec, sizeof(exec), "{\"launcher\":\"", c->launcher, "\"}");

    /* The Service goes first so the rendezvous name resolves when pods start. */
    if (multi)
        job_service(c);
    tg_jw_obj(w);
    tg_render_k_workload_header(c, "batch/v1", "Job", exec, pd);
    tg_jw_kobj(w, "spec");
    json_int_t ads = tg_render_int(c->run, NULL, "active_deadline_seconds", 0);
    if (ads > 0)
        tg_jw_kint(w, "activeDeadlineSeconds", ads);
    tg_jw_kint(w, "backoffLimit", 0);
    if (multi) {
        tg_jw_kstr(w, "completionMode", "Indexed");
        tg_jw_kint(w, "completions", nodes);
        tg_jw_kint(w, "parallelism", nodes);
    }
    tg_jw_kbool(w, "suspend", 1);
    tg_jw_kobj(w, "template");
    tg_jw_kobj(w, "metadata");
    if (tg_render_str(c->policy, NULL, "topology") &&
        tg_render_str(c->policy, NULL, "topology_name")) {
        tg_jw_kobj(w, "annotations");
        tg_render_topology_annotation(c);
        tg_jw_end_obj(w);
    }
    tg_render_k_pod_labels(c, c->gpus);
    tg_jw_end_obj(w);

    tg_jw_kobj(w, "spec"); /* pod */
    tg_render_k_packing_affinity(c, c->gpus);
    tg_jw_karr(w, "containers");
    tg_jw_obj(w);
    const json_t *configs = tg_render_get(c->execution, NULL, "configs");
    if ((script || source) && json_object_size(configs) > 0) {
        tg_jw_karr(w, "args");
        tg_render_config_flags(w, configs);
        tg_jw_end_arr(w);
    }
    if (script || source) {
        tg_jw_karr(w, "command");
        tg_jw_str(w, "/bin/sh");
        tg_jw_str(w, "-c");
        tg_jw_str(w, prog.data);
        tg_jw_str(w, "tau-entrypoint");
        tg_jw_end_arr(w);
    }
    tg_render_k_env(w, &env);
    tg_jw_kstr(w, "image", c->image);
    tg_jw_kstr(w, "name", "main");
    tg_render_k_resources(c, "", c->gpus);
    tg_render_k_container_security(c);
    job_mounts(c, dshm, source, assets);
    const char *wd = tg_render_str(c->runtime, NULL, "working_dir");
    if (!wd && source)
        wd = JOB_SOURCE_MOUNT;
    if (!wd && tg_render_str(c->storage, NULL, "data_pvc"))
        wd = "/data";
    if (wd)
        tg_jw_kstr(w, "workingDir", wd);
    tg_jw_end_obj(w);
    tg_jw_end_arr(w); /* containers */
    tg_render_k_image_pull_secrets(c);
    job_init_containers(c, source, assets);
    tg_render_k_scheduling(c, 1, c->gpus);
    tg_jw_kstr(w, "restartPolicy", "Never");
    tg_render_k_pod_security(c);
    tg_render_k_service_account(c);
    if (multi) {
        char sub[80];
        tg_jw_kstr(w, "subdomain", tg_render_cat(sub, sizeof(sub), c->name, "-headless", NULL));
    }
    tg_jw_kint(w, "terminationGracePeriodSeconds", 600);
    tg_render_k_tolerations(c, 0, c->gpus > 0);
    job_volumes(c, dshm, source, assets);
    tg_jw_end_obj(w); /* pod spec */
    tg_jw_end_obj(w); /* template */
    tg_jw_kint(w, "ttlSecondsAfterFinished",
               tg_render_int(c->run, NULL, "ttl_seconds_after_finished", 28800));
    tg_jw_end_obj(w); /* spec */
    tg_jw_end_obj(w); /* Job */
    rc = TG_OK;
out:
    tg_render_env_clean(&env);
    tg_buf_clean(&prog);
    free(b64);
    return rc;
}
