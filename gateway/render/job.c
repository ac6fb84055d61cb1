/* batch/v1 Job rendering (engine: job). */
#include "render/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "render/metadata.h"
#include "spec/digest.h"
#include "spec/units.h"

#define JOB_RDZV_PORT 29500

/* The shell program of container "main". It decodes the script from env so
 * the pod needs no ConfigMap and any image with /bin/sh and base64 works;
 * "$@" carries the flags from execution.configs (kept out of the program text
 * so they need no quoting). */
static tg_rc_e job_program(tg_render_ctx_t *c, const tg_spec_file_t *script, int has_req,
                           int has_pip, json_int_t nodes, json_int_t ppn, tg_buf_t *b)
{
    const char *ep = c->entrypoint;
    int is_py = strcmp(tg_spec_ext(ep), ".py") == 0;
    int shebang = script->len >= 2 && script->data[0] == '#' && script->data[1] == '!';
    int torchrun = strcmp(c->launcher, "torchrun") == 0;
    int direct = !is_py && !torchrun && shebang;
    const char *dst = direct ? "/tmp/run.sh" : "/tmp/tau-entrypoint.py";
    tg_rc_e rc = tg_buf_printf(b, "set -eu\nprintf '%%s' \"$TAU_SCRIPT_B64\" | base64 -d > %s\n",
                               dst);
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
    if (torchrun && nodes > 1)
        return tg_buf_printf(b,
                             "exec python3 -m torch.distributed.run --nnodes=%" JSON_INTEGER_FORMAT
                             " --node_rank=\"$JOB_COMPLETION_INDEX\" --rdzv-backend=c10d "
                             "--rdzv-endpoint=%s-0.%s-headless:%d --rdzv-id=%s "
                             "--nproc_per_node=%" JSON_INTEGER_FORMAT " \"$@\" %s\n",
                             nodes, c->name, c->name, JOB_RDZV_PORT, c->name, ppn, dst);
    if (torchrun)
        return tg_buf_printf(b,
                             "exec python3 -m torch.distributed.run --standalone "
                             "--nproc_per_node=%" JSON_INTEGER_FORMAT " \"$@\" %s\n",
                             ppn, dst);
    if (direct)
        return tg_buf_printf(b, "chmod +x %s\nexec %s \"$@\"\n", dst, dst);
    return tg_buf_printf(b, "exec python3 %s \"$@\"\n", dst);
}

static json_t *job_service(tg_render_ctx_t *c)
{
    char svc[80];
    snprintf(svc, sizeof(svc), "%s-headless", c->name);
    json_t *s = json_object();
    json_object_set_new(s, "apiVersion", json_string("v1"));
    json_object_set_new(s, "kind", json_string("Service"));
    json_object_set_new(s, "metadata", json_pack("{s:s, s:s, s:o}", "name", svc, "namespace", c->ns,
                                                 "labels", tg_render_labels(c, 0)));
    json_object_set_new(
        s, "spec",
        json_pack("{s:s, s:b, s:{s:s}, s:[{s:s, s:i, s:s, s:i}]}", "clusterIP", "None",
                  "publishNotReadyAddresses", 1, "selector", "batch.kubernetes.io/job-name",
                  c->name, "ports", "name", "c10d", "port", JOB_RDZV_PORT, "protocol", "TCP",
                  "targetPort", JOB_RDZV_PORT));
    return s;
}

tg_rc_e tg_render_job(tg_render_ctx_t *c, json_t *out)
{
    tg_rc_e rc = TG_EINVAL;
    const json_t *rc_ = c->rc;
    json_t *job = NULL, *env = json_array(), *volumes = json_array(), *mounts = json_array();
    tg_buf_t prog;
    tg_buf_init(&prog, 1 << 20);
    char *b64 = NULL, *rb64 = NULL;

    json_int_t nodes = tg_render_int(rc_, "execution", "nodes", 1);
    json_int_t ppn = tg_render_int(rc_, "execution", "processes_per_node", 1);
    int torchrun = strcmp(c->launcher, "torchrun") == 0;
    int multi = torchrun && nodes > 1;
    const tg_spec_file_t *script = NULL, *req = NULL;
    const json_t *pip = tg_render_get(rc_, "runtime", "pip");
    int has_pip = json_array_size(pip) > 0;

    /* Env in merge order: storage base, user, platform (set last, wins). */
    tg_render_env_set(env, "TAU_DATA_DIR", "/data");
    tg_render_env_set(env, "TAU_HOT_DIR", "/mnt");
    tg_render_env_user(env, rc_);
    const char *profile = tg_render_str(rc_, "policy", "profile");
    if (profile)
        tg_render_env_set(env, "TAU_PROFILE", profile);

    json_t *container = json_object();
    json_object_set_new(container, "name", json_string("main"));
    json_object_set_new(container, "image", json_string(c->image));
    if (c->entrypoint) {
        script = tg_spec_files_find(c->files, c->entrypoint);
        if (!script) {
            tg_render_fail(c, "entrypoint \"%s\" is not among the files", c->entrypoint);
            json_decref(container);
            goto out;
        }
        req = tg_spec_files_find(c->files, TG_SPEC_REQUIREMENTS);
        if (job_program(c, script, req != NULL, has_pip, nodes, ppn, &prog) != TG_OK) {
            tg_render_fail(c, "entrypoint program too large");
            json_decref(container);
            goto out;
        }
        json_object_set_new(container, "command",
                            json_pack("[s, s, s, s]", "/bin/sh", "-c", prog.data, "tau-entrypoint"));
        json_t *args = json_array();
        tg_render_config_flags(tg_render_get(rc_, "execution", "configs"), args);
        if (json_array_size(args))
            json_object_set_new(container, "args", args);
        else
            json_decref(args);
        b64 = tg_spec_b64_encode(script->data, script->len);
        tg_render_env_set(env, "TAU_SCRIPT_SRC", c->entrypoint);
        tg_render_env_set(env, "TAU_SCRIPT_B64", b64);
        if (req) {
            rb64 = tg_spec_b64_encode(req->data, req->len);
            tg_render_env_set(env, "TAU_REQUIREMENTS_B64", rb64);
        }
        if (has_pip) {
            tg_buf_t pl;
            tg_buf_init(&pl, 1 << 20);
            size_t i;
            const json_t *p;
            json_array_foreach(pip, i, p) if (json_is_string(p) &&
                                              (tg_buf_puts(&pl, i ? "\n" : "") != TG_OK ||
                                               tg_buf_puts(&pl, json_string_value(p)) != TG_OK)) break;
            tg_render_env_set(env, "TAU_PIP_REQUIREMENTS", pl.data ? pl.data : "");
            tg_buf_clean(&pl);
        }
    }
    if (torchrun) {
        char addr[160], num[32];
        if (multi)
            snprintf(addr, sizeof(addr), "%s-0.%s-headless", c->name, c->name);
        else
            snprintf(addr, sizeof(addr), "127.0.0.1");
        tg_render_env_set(env, "MASTER_ADDR", addr);
        snprintf(num, sizeof(num), "%d", JOB_RDZV_PORT);
        tg_render_env_set(env, "MASTER_PORT", num);
        if (nodes > 1 || ppn > 1)
            tg_render_env_set(env, "OMP_NUM_THREADS", "1");
        tg_render_env_set(env, "TAU_DIST_BACKEND", c->gpus > 0 ? "nccl" : "gloo");
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, nodes * ppn);
        tg_render_env_set(env, "TAU_WORLD_SIZE", num);
    }
    tg_render_env_platform(env, c);
    json_object_set_new(container, "env", env);
    env = NULL;
    const char *wd = tg_render_str(rc_, "runtime", "working_dir");
    if (!wd && tg_render_str(rc_, "storage", "data_pvc"))
        wd = "/data";
    if (wd)
        json_object_set_new(container, "workingDir", json_string(wd));
    json_object_set_new(container, "resources", tg_render_resources(c, "", c->gpus));
    tg_render_volumes(c, volumes, mounts, torchrun && (nodes > 1 || ppn > 1));
    json_object_set_new(container, "volumeMounts", mounts);
    mounts = NULL;
    json_t *csec = tg_render_container_security(rc_);
    if (csec)
        json_object_set_new(container, "securityContext", csec);

    json_t *pod = json_object();
    json_object_set_new(pod, "restartPolicy", json_string("Never"));
    json_object_set_new(pod, "terminationGracePeriodSeconds", json_integer(600));
    const char *ppc = tg_render_str(rc_, "policy", "pod_priority_class");
    if (ppc)
        json_object_set_new(pod, "priorityClassName", json_string(ppc));
    json_t *sel = tg_render_node_selector(c, c->gpus > 0);
    if (sel)
        json_object_set_new(pod, "nodeSelector", sel);
    json_t *tol = json_array();
    tg_render_profile_tolerations(tol, rc_);
    if (c->gpus > 0)
        tg_render_gpu_tolerations(tol);
    if (json_array_size(tol))
        json_object_set_new(pod, "tolerations", tol);
    else
        json_decref(tol);
    json_t *psec = tg_render_pod_security(rc_);
    if (psec)
        json_object_set_new(pod, "securityContext", psec);
    if (multi) {
        char sub[80];
        snprintf(sub, sizeof(sub), "%s-headless", c->name);
        json_object_set_new(pod, "subdomain", json_string(sub));
    }
    json_object_set_new(pod, "containers", json_pack("[o]", container));
    json_object_set_new(pod, "volumes", volumes);
    volumes = NULL;

    json_t *tmeta = json_object();
    json_object_set_new(tmeta, "labels", tg_render_labels(c, 0));
    json_t *tann = json_object();
    tg_render_topology_annotations(rc_, tann);
    if (json_object_size(tann))
        json_object_set_new(tmeta, "annotations", tann);
    else
        json_decref(tann);

    json_t *spec = json_object();
    json_object_set_new(spec, "suspend", json_true());
    json_object_set_new(spec, "backoffLimit", json_integer(0));
    json_object_set_new(spec, "ttlSecondsAfterFinished",
                        json_integer(tg_render_int(rc_, "run", "ttl_seconds_after_finished", 28800)));
    json_int_t ads = tg_render_int(rc_, "run", "active_deadline_seconds", 0);
    if (ads > 0)
        json_object_set_new(spec, "activeDeadlineSeconds", json_integer(ads));
    if (multi) {
        json_object_set_new(spec, "completionMode", json_string("Indexed"));
        json_object_set_new(spec, "completions", json_integer(nodes));
        json_object_set_new(spec, "parallelism", json_integer(nodes));
    }
    json_object_set_new(spec, "template", json_pack("{s:o, s:o}", "metadata", tmeta, "spec", pod));

    json_t *execution = json_pack("{s:s}", "launcher", c->launcher);
    if (torchrun) {
        json_object_set_new(execution, "nodes", json_integer(nodes));
        json_object_set_new(execution, "processes_per_node", json_integer(ppn));
    }
    char digest[72], *pd = NULL;
    if (script) {
        char hex[65];
        tg_spec_sha256_hex(script->data, script->len, hex);
        snprintf(digest, sizeof(digest), "sha256:%s", hex);
        pd = digest;
    }
    job = json_object();
    json_object_set_new(job, "apiVersion", json_string("batch/v1"));
    json_object_set_new(job, "kind", json_string("Job"));
    json_object_set_new(job, "metadata",
                        json_pack("{s:s, s:s, s:o, s:o}", "name", c->name, "namespace", c->ns,
                                  "labels", tg_render_labels(c, 1), "annotations",
                                  tg_render_annotations(c, execution, pd)));
    json_decref(execution);
    json_object_set_new(job, "spec", spec);
    /* The Service goes first so the rendezvous name resolves when pods start. */
    if (multi)
        json_array_append_new(out, job_service(c));
    json_array_append_new(out, job);
    job = NULL;
    rc = TG_OK;
out:
    json_decref(env);
    json_decref(volumes);
    json_decref(mounts);
    json_decref(job);
    tg_buf_clean(&prog);
    free(b64);
    free(rb64);
    return rc;
}
