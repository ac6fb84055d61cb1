/* Resolution of a validated tau.yaml against workspace and compute profile:
 * identity, profile, policy and compute here; the other sections in
 * resolve_run.c. */
#include "tauyaml/resolve.h"

#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/mem.h"
#include "core/log.h"
#include "core/digest.h"
#include "tauyaml/path.h"
#include "tauyaml/resolve_int.h"
#include "tauyaml/units.h"
#include "core/quantity.h"

static void rs_list(const json_t *arr, tg_buf_t *b)
{
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v) {
        if (!json_is_string(v))
            continue;
        if (tg_buf_puts(b, b->len ? ", " : "") != TG_OK ||
            tg_buf_puts(b, json_string_value(v)) != TG_OK)
            return;
    }
    if (b->len == 0 && tg_buf_puts(b, "none") != TG_OK)
        return;
}

/* --- workspace, namespace, profile ---------------------------------------------------------- */

static void rs_identity(tg_tauyaml_rs_t *r)
{
    const tg_tauyaml_facts_t *f = r->f;
    tg_tauyaml_qv_t q, q2;
    rs_put(r, NULL, "version", json_integer(1), NULL);
    rs_put(r, NULL, "name", rs_spec_text(r, f->name_path, f->name), "spec");
    rs_put(r, NULL, "engine", f->engine ? json_string(f->engine) : NULL, "spec");
    rs_put(r, NULL, "entrypoint", rs_spec_text(r, f->entrypoint_path, f->entrypoint), "spec");

    const char *sws = tg_tauyaml_get_str(r->root, "policy", "workspace");
    if (sws && strcmp(sws, r->ws_name) != 0)
        tg_tauyaml_diag_error(r->d, "policy.workspace", TG_AT_VALUE,
                              "policy.workspace \"%s\" does not match the workspace this run is "
                              "submitted to (\"%s\"); submit it to workspace \"%s\" or remove "
                              "policy.workspace",
                              tg_tauyaml_qv(&q, sws), tg_tauyaml_qv(&q2, r->ws_name), q.s);
    rs_put(r, "policy", "workspace", rs_text(json_object_get(r->ws, "name"), r->ws_name),
           sws ? "spec" : "workspace");
    const char *wns = rs_str(r->ws, "namespace");
    const char *sns = tg_tauyaml_get_str(r->root, "policy", "namespace");
    if (sns && strcmp(sns, wns) != 0)
        tg_tauyaml_diag_error(r->d, "policy.namespace", TG_AT_VALUE,
                              "policy.namespace \"%s\" is not the namespace of workspace \"%s\" "
                              "(\"%s\"); remove policy.namespace or submit to the workspace that "
                              "owns it",
                              tg_tauyaml_qv(&q, sns), tg_tauyaml_qv(&q2, r->ws_name), wns);
    rs_put(r, "policy", "namespace", rs_text(json_object_get(r->ws, "namespace"), wns),
           sns ? "spec" : "workspace");
}

static void rs_profile(tg_tauyaml_rs_t *r)
{
    tg_tauyaml_qv_t q, q2;
    const json_t *pnode = tg_tauyaml_get(r->root, "policy", "profile");
    const char *pname = json_string_value(pnode);
    const char *src = "spec";
    const char *where = "policy.profile";
    if (!pname) {
        pnode = json_object_get(r->ws, "default_profile");
        pname = json_string_value(pnode);
        src = "workspace";
        where = "policy";
    }
    rs_put(r, "policy", "profile", rs_text(pnode, pname), src);
    if (!pname)
        return;
    const json_t *allowed = json_object_get(r->ws, "allowed_profiles");
    if (json_is_array(allowed) && !rs_in(allowed, pname)) {
        tg_buf_t b;
        tg_buf_init(&b, 2048);
        rs_list(allowed, &b);
        tg_tauyaml_diag_error(r->d, where, TG_AT_VALUE,
                              "compute profile \"%s\" is not allowed in workspace \"%s\" (allowed: "
                              "%s); choose one of those in policy.profile",
                              tg_tauyaml_qv(&q, pname), tg_tauyaml_qv(&q2, r->ws_name), b.data);
        tg_buf_clean(&b);
        return;
    }
    const json_t *profs = json_object_get(r->ctx, "profiles");
    size_t i;
    const json_t *p;
    json_array_foreach(profs, i, p)
        if (json_is_object(p) && rs_str(p, "name") && strcmp(rs_str(p, "name"), pname) == 0)
            r->prof = p;
    if (!r->prof) {
        tg_tauyaml_diag_error(r->d, where, TG_AT_VALUE,
                              "compute profile \"%s\" does not exist; ask a platform admin which "
                              "profiles workspace \"%s\" offers",
                              tg_tauyaml_qv(&q, pname), tg_tauyaml_qv(&q2, r->ws_name));
        return;
    }
    r->prof_name = pname;
    const json_t *aw = json_object_get(r->prof, "allowed_workspaces");
    if (json_is_array(aw) && !rs_in(aw, r->ws_name))
        tg_tauyaml_diag_error(r->d, where, TG_AT_VALUE,
                              "compute profile \"%s\" is not available to workspace \"%s\"",
                              tg_tauyaml_qv(&q, pname), tg_tauyaml_qv(&q2, r->ws_name));
    const char *pe = rs_str(r->prof, "engine");
    if (pe && r->f->engine) {
        const char *canon = strcmp(pe, "ray") == 0 ? "rayjob" : pe;
        if (strcmp(canon, r->f->engine) != 0)
            tg_tauyaml_diag_error(r->d, where, TG_AT_VALUE,
                                  "compute profile \"%s\" is for engine: %s, but this spec has "
                                  "engine: %s; pick a %s profile",
                                  tg_tauyaml_qv(&q, pname), canon, r->f->engine, r->f->engine);
    }
    static const char *const applic[][2] = {{"teams", "team"}, {"lanes", "lane"}};
    for (size_t k = 0; k < 2; k++) {
        const json_t *list = json_object_get(r->prof, applic[k][0]);
        const char *val = tg_tauyaml_get_str(r->root, "policy", applic[k][1]);
        if (json_is_array(list) && json_array_size(list) && val && !rs_in(list, val)) {
            tg_buf_t b;
            tg_buf_init(&b, 2048);
            rs_list(list, &b);
            char path[32];
            snprintf(path, sizeof(path), "policy.%s", applic[k][1]);
            tg_tauyaml_diag_error(
                r->d, path, TG_AT_VALUE, "compute profile \"%s\" applies to %s %s, not \"%s\"",
                tg_tauyaml_qv(&q, pname), applic[k][0], b.data, tg_tauyaml_qv(&q2, val));
            tg_buf_clean(&b);
        }
    }
}

/* --- policy: queue, priority, placement ----------------------------------------------------- */

static void rs_queue(tg_tauyaml_rs_t *r)
{
    tg_tauyaml_qv_t q, q2;
    const json_t *qnode = tg_tauyaml_get(r->root, "policy", "queue");
    const char *qn = json_string_value(qnode);
    const char *src = "spec";
    if (qn && strcmp(qn, "auto") == 0)
        qn = NULL;
    if (!qn && r->prof &&
        (qn = json_string_value(qnode = json_object_get(r->prof, "default_queue"))))
        src = "profile";
    if (!qn && (qn = json_string_value(qnode = json_object_get(r->ws, "default_queue"))))
        src = "workspace";
    if (!qn) {
        qn = TG_TAUYAML_DEFAULT_QUEUE;
        src = "default";
    }
    rs_put(r, "policy", "queue", rs_text(qnode, qn), src);
    const json_t *queues = json_object_get(r->ws, "queues");
    if (json_is_array(queues) && !rs_in(queues, qn)) {
        tg_buf_t b;
        tg_buf_init(&b, 2048);
        rs_list(queues, &b);
        if (strcmp(src, "spec") == 0)
            tg_tauyaml_diag_error(r->d, "policy.queue", TG_AT_VALUE,
                                  "policy.queue \"%s\" is not a LocalQueue of workspace \"%s\" "
                                  "(queues: %s)",
                                  tg_tauyaml_qv(&q, qn), tg_tauyaml_qv(&q2, r->ws_name), b.data);
        else
            tg_tauyaml_diag_error(r->d, "policy", TG_AT_KEY,
                                  "workspace LocalQueue \"%s\" (the %s default) not found in "
                                  "workspace \"%s\" (queues: %s); set policy.queue",
                                  tg_tauyaml_qv(&q, qn), src, tg_tauyaml_qv(&q2, r->ws_name),
                                  b.data);
        tg_buf_clean(&b);
    }
}

static const json_t *rs_find_class(const json_t *list, const char *name)
{
    size_t i;
    const json_t *c;
    json_array_foreach(list, i, c)
        if (rs_str(c, "name") && strcmp(rs_str(c, "name"), name) == 0)
            return c;
    return NULL;
}

static void rs_priority(tg_tauyaml_rs_t *r)
{
    tg_tauyaml_qv_t q;
    int dis = 0;
    tg_tauyaml_get_bool(r->root, "policy", "disable_default_priorities", &dis);
    const char *tier = tg_tauyaml_get_str(r->root, "policy", "priority_tier");
    if (!tier)
        tier = tg_tauyaml_get_str(r->root, "policy", "priority");
    rs_put(r, "policy", "priority_tier", tier ? json_string(tier) : NULL, "spec");
    rs_put(r, "policy", "disable_default_priorities", json_boolean(dis),
           rs_spec(r, "policy", "disable_default_priorities") ? "spec" : "default");

    const char *w = tg_tauyaml_get_str(r->root, "policy", "workload_priority_class");
    const char *src = "spec";
    if (!w && tier)
        w = strcmp(tier, "priority") == 0 ? TG_TAUYAML_PRIORITY_TIER_CLASS
                                          : TG_TAUYAML_DEFAULT_PRIORITY;
    if (!w && !dis && r->prof && (w = rs_str(r->prof, "workload_priority_class")))
        src = "profile";
    if (!w && !dis && (w = rs_str(r->ws, "default_priority")))
        src = "workspace";
    if (!w && !dis) {
        w = TG_TAUYAML_DEFAULT_PRIORITY;
        src = "default";
    }
    const json_t *classes = json_object_get(r->ctx, "priority_classes");
    json_t *value = NULL;
    if (w && json_is_array(classes)) {
        const json_t *c = rs_find_class(classes, w);
        if (c && json_is_integer(json_object_get(c, "value"))) {
            value = rs_ref(json_object_get(c, "value"));
        } else if (!c && strcmp(src, "spec") == 0) {
            tg_buf_t b;
            tg_buf_init(&b, 2048);
            size_t i;
            const json_t *x;
            json_array_foreach(classes, i, x)
                if (rs_str(x, "name") && (tg_buf_puts(&b, b.len ? ", " : "") != TG_OK ||
                                          tg_buf_puts(&b, rs_str(x, "name")) != TG_OK))
                    break;
            tg_tauyaml_diag_error(r->d,
                                  rs_spec(r, "policy", "workload_priority_class")
                                      ? "policy.workload_priority_class"
                                      : (rs_spec(r, "policy", "priority_tier")
                                             ? "policy.priority_tier"
                                             : "policy.priority"),
                                  TG_AT_VALUE,
                                  "WorkloadPriorityClass \"%s\" does not exist in this cluster "
                                  "(known: %s)",
                                  tg_tauyaml_qv(&q, w), b.len ? b.data : "none");
            tg_buf_clean(&b);
        } else if (!c) {
            tg_tauyaml_diag_warn(r->d, "policy", TG_AT_KEY,
                                 "the %s WorkloadPriorityClass \"%s\" does not exist in this "
                                 "cluster; the run is queued without a priority class",
                                 src, tg_tauyaml_qv(&q, w));
            w = NULL;
        }
    }
    rs_put(r, "policy", "workload_priority_class", w ? json_string(w) : NULL, src);
    rs_put(r, "policy", "workload_priority_value", value, src);

    const char *pod = tg_tauyaml_get_str(r->root, "policy", "pod_priority_class");
    const char *psrc = "spec";
    if (!pod && !dis && r->prof && (pod = rs_str(r->prof, "pod_priority_class")))
        psrc = "profile";
    const json_t *pclasses = json_object_get(r->ctx, "pod_priority_classes");
    if (pod && json_is_array(pclasses) && !rs_find_class(pclasses, pod)) {
        if (strcmp(psrc, "spec") == 0)
            tg_tauyaml_diag_error(r->d, "policy.pod_priority_class", TG_AT_VALUE,
                                  "PriorityClass \"%s\" does not exist in this cluster",
                                  tg_tauyaml_qv(&q, pod));
        pod = NULL;
    }
    rs_put(r, "policy", "pod_priority_class", pod ? json_string(pod) : NULL, psrc);
}

/* What a compute profile sets on every pod of its runs: pull secrets, the
 * service account (and Azure workload identity), a DRA claim template for
 * GPUs, GPU packing, the KubeRay version. */
static void rs_pod_settings(tg_tauyaml_rs_t *r)
{
    static const char *const strs[] = {"service_account", "dra_claim_template", "gpu_placement",
                                       "ray_version"};
    for (size_t i = 0; i < TG_ARRAY_LEN(strs); i++) {
        const json_t *v = r->prof ? json_object_get(r->prof, strs[i]) : NULL;
        rs_put(r, "policy", strs[i], json_is_string(v) ? rs_ref(v) : NULL, "profile");
    }
    const json_t *wi = r->prof ? json_object_get(r->prof, "workload_identity") : NULL;
    rs_put(r, "policy", "workload_identity", json_boolean(json_is_true(wi)),
           json_is_true(wi) ? "profile" : NULL);
    const json_t *ps = r->prof ? json_object_get(r->prof, "image_pull_secrets") : NULL;
    rs_put(r, "policy", "image_pull_secrets", json_is_array(ps) ? rs_ref(ps) : json_array(),
           json_array_size(ps) ? "profile" : NULL);
}

static void rs_placement(tg_tauyaml_rs_t *r)
{
    tg_tauyaml_qv_t q;
    rs_pick(r, "policy", "team", NULL, NULL);
    rs_pick(r, "policy", "lane", NULL, NULL);
    rs_pick(r, "policy", "topology", "topology", NULL);
    rs_put(r, "policy", "topology_name",
           r->prof && rs_str(r->prof, "topology_name")
               ? json_string(rs_str(r->prof, "topology_name"))
               : NULL,
           "profile");
    rs_pick(r, "policy", "gpu_class", "gpu_class", NULL);
    static const char *const alias[][2] = {{"a100-nvlink-80gb", "a100-80gb"},
                                           {"h100-standalone-95gb", "h100-95gb"},
                                           {"h200-nvlink-141gb", "h200-141gb"}};
    const char *gc = rs_str(json_object_get(r->out, "policy"), "gpu_class");
    for (size_t i = 0; gc && i < TG_ARRAY_LEN(alias); i++) {
        if (strcmp(gc, alias[i][0]) == 0) {
            tg_tauyaml_diag_warn(r->d, "policy.gpu_class", TG_AT_VALUE,
                                 "policy.gpu_class \"%s\" is a deprecated alias; use \"%s\"",
                                 tg_tauyaml_qv(&q, gc), alias[i][1]);
            json_object_set_new(json_object_get(r->out, "policy"), "gpu_class",
                                json_string(alias[i][1]));
            break;
        }
    }
    int clear = 0;
    tg_tauyaml_get_bool(r->root, "policy", "clear_node_selector", &clear);
    rs_put(r, "policy", "clear_node_selector", json_boolean(clear),
           rs_spec(r, "policy", "clear_node_selector") ? "spec" : "default");
    json_t *sel = json_object();
    tg_tauyaml_path_t p;
    tg_tauyaml_path_init(&p);
    tg_tauyaml_path_push_key(&p, "policy", 6);
    tg_tauyaml_path_push_key(&p, "node_selector", 13);
    size_t base = p.len;
    const json_t *ps = r->prof ? json_object_get(r->prof, "node_selector") : NULL;
    const char *k;
    json_t *v;
    for (int pass = 0; pass < 2; pass++) {
        const json_t *src = pass == 0 ? (clear ? NULL : ps) : rs_spec(r, "policy", "node_selector");
        if (!json_is_object(src))
            continue;
        json_object_foreach((json_t *)src, k, v) {
            if (!json_is_string(v))
                continue;
            json_object_set_new(sel, k, json_string(json_string_value(v)));
            tg_tauyaml_path_push_key(&p, k, strlen(k));
            tg_tauyaml_prov_set_path(r->prov, tg_tauyaml_path_str(&p), p.len,
                                     pass == 0 ? "profile" : "spec");
            tg_tauyaml_path_pop(&p, base);
        }
    }
    tg_tauyaml_path_clean(&p);
    rs_put(r, "policy", "node_selector", sel, NULL);
    json_t *tol = json_array();
    const json_t *pt = r->prof ? json_object_get(r->prof, "tolerations") : NULL;
    size_t i;
    json_array_foreach(pt, i, v)
        if (json_is_object(v))
            json_array_append_new(tol, rs_ref(v));
    rs_put(r, "policy", "tolerations", tol, json_array_size(tol) ? "profile" : NULL);
    rs_pod_settings(r);
}

/* --- compute -------------------------------------------------------------------------------- */

typedef struct rs_q_s {
    const char *val;
    const json_t *node; /* the string node val was read from (NULL for a default) */
    const char *src;
    const char *from; /* field it came from, for messages */
} rs_q_t;

static rs_q_t rs_q_found(const json_t *n, const char *src, const char *from)
{
    return (rs_q_t){.val = json_string_value(n), .node = n, .src = src, .from = from};
}

/* First set of: spec keys (in order), then profile keys. */
static rs_q_t rs_quantity(tg_tauyaml_rs_t *r, const char *const *keys, size_t nkeys)
{
    const json_t *compute = tg_tauyaml_get(r->root, NULL, "compute");
    for (size_t i = 0; i < nkeys; i++) {
        const json_t *n = tg_tauyaml_get(compute, NULL, keys[i]);
        if (json_is_string(n))
            return rs_q_found(n, "spec", keys[i]);
    }
    const json_t *res = r->prof ? json_object_get(r->prof, "resources") : NULL;
    for (size_t i = 0; json_is_object(res) && i < nkeys; i++) {
        const json_t *n = json_object_get(res, keys[i]);
        if (!json_is_string(n) && strcmp(keys[i], "cpu_request") == 0)
            n = json_object_get(res, "cpu");
        if (!json_is_string(n) && strcmp(keys[i], "memory_request") == 0)
            n = json_object_get(res, "memory");
        if (json_is_string(n))
            return rs_q_found(n, "profile", keys[i]);
    }
    return (rs_q_t){0};
}

/* a > b, both quantities. */
static int rs_qcmp_gt(const char *a, const char *b)
{
    int cmp;
    return a && b && tg_qty_cmp_text(a, b, &cmp) == TG_QTY_OK && cmp > 0;
}

/* Decide request and limit of one resource of one role; `prefix` is "" (Job
 * container / Ray default), "head_" or "worker_". Ray roles use TauGrid's
 * rule that a request set without its limit also sets the limit. */
static void rs_role_resource(tg_tauyaml_rs_t *r, const char *prefix, const char *res,
                             const char *def_req, const char *def_lim, int ray,
                             const char *out_prefix)
{
    char rk[48], lk[48], grk[48], glk[48];
    tg_tauyaml_path_cat(rk, sizeof(rk), prefix, res, "_request");
    tg_tauyaml_path_cat(lk, sizeof(lk), prefix, res, "_limit");
    tg_tauyaml_path_cat(grk, sizeof(grk), "", res, "_request");
    tg_tauyaml_path_cat(glk, sizeof(glk), "", res, "_limit");
    const char *rkeys[2] = {rk, grk}, *lkeys[2] = {lk, glk};
    size_t nk = *prefix ? 2 : 1;
    rs_q_t req = rs_quantity(r, rkeys, nk);
    rs_q_t lim = rs_quantity(r, lkeys, nk);
    if (ray && req.val && !lim.val)
        lim = req;
    if (!req.val) {
        req.val = def_req;
        req.src = "default";
        if (lim.val && rs_qcmp_gt(def_req, lim.val))
            req = lim; /* a default request never exceeds an explicit limit */
    }
    if (!lim.val && def_lim) {
        lim.val = def_lim;
        lim.src = "default";
        if (rs_qcmp_gt(req.val, def_lim))
            lim = req;
    }
    if (rs_qcmp_gt(req.val, lim.val)) {
        if (strcmp(req.src, "spec") == 0 && strcmp(lim.src, "spec") == 0 &&
            strcmp(req.from, rk) == 0 && strcmp(lim.from, lk) == 0) {
            /* Same-scope pair: semantic.c already reported it. */
        } else if (strcmp(req.src, "spec") == 0 || strcmp(lim.src, "spec") == 0) {
            char path[64];
            snprintf(path, sizeof(path), "compute.%s",
                     strcmp(req.src, "spec") == 0 ? req.from : lim.from);
            tg_tauyaml_qv_t q1, q2;
            tg_tauyaml_diag_error(
                r->d, path, TG_AT_VALUE,
                "the %s%s request %s (from %s compute.%s) is larger than its limit "
                "%s (from %s compute.%s); a request may not exceed its limit",
                prefix, res, tg_tauyaml_qv(&q1, req.val), req.src, req.from,
                tg_tauyaml_qv(&q2, lim.val), lim.src, lim.from);
        } else {
            req = lim;
        }
    }
    char ok_r[64], ok_l[64];
    tg_tauyaml_path_cat(ok_r, sizeof(ok_r), out_prefix, res, "_request");
    tg_tauyaml_path_cat(ok_l, sizeof(ok_l), out_prefix, res, "_limit");
    rs_put(r, "compute", ok_r, rs_text(req.node, req.val), req.src);
    rs_put(r, "compute", ok_l, rs_text(lim.node, lim.val), lim.src);
}

/* A managed manifest's sizing, in the direct config's compute fields (the
 * policy engine and the renderers read those). rayjob-eval's GPU actor
 * worker is the "worker" and its CPU fan-out the "cpu_worker". */
static void rs_managed_compute(tg_tauyaml_rs_t *r)
{
    const json_t *z = json_object_get(r->managed, "sizing");
    json_int_t cpu_workers = json_integer_value(json_object_get(r->managed, "cpu_workers"));
    static const char *const train[][2] = {{"head", "control"}, {"worker", "worker"}};
    static const char *const eval[][2] = {
        {"head", "control"}, {"worker", "head"}, {"cpu_worker", "worker"}};
    const char *const(*roles)[2] = cpu_workers > 0 ? eval : train;
    size_t nroles = cpu_workers > 0 ? TG_ARRAY_LEN(eval) : TG_ARRAY_LEN(train);
    static const char *const keys[][2] = {{"cpu", "cpu_request"},
                                          {"cpu_limit", "cpu_limit"},
                                          {"memory", "memory_request"},
                                          {"memory_limit", "memory_limit"}};
    json_int_t gpus = json_integer_value(json_object_get(r->managed, "gpus"));
    rs_put(r, "compute", "gpu_resource", json_string("nvidia.com/gpu"), "default");
    for (size_t k = 0; k < TG_ARRAY_LEN(keys); k++) {
        char key[48];
        if (r->f->is_job) {
            tg_tauyaml_path_cat(key, sizeof(key), "", keys[k][1], "");
            rs_put(r, "compute", key,
                   rs_ref(json_object_get(json_object_get(z, "head"), keys[k][0])), "spec");
            continue;
        }
        for (size_t i = 0; i < nroles; i++) {
            tg_tauyaml_path_cat(key, sizeof(key), roles[i][0], "_", keys[k][1]);
            rs_put(r, "compute", key,
                   rs_ref(json_object_get(json_object_get(z, roles[i][1]), keys[k][0])), "spec");
        }
    }
    if (r->f->is_job) {
        rs_put(r, "compute", "gpus", json_integer(gpus), "spec");
    } else {
        rs_put(r, "compute", "workers", rs_ref(json_object_get(r->managed, "workers")), "spec");
        rs_put(r, "compute", "gpus_per_worker", json_integer(gpus), "spec");
        if (cpu_workers > 0)
            rs_put(r, "compute", "cpu_workers", json_integer(cpu_workers), "spec");
        else
            rs_put(r, "compute", "cpu_workers", json_integer(0), "default");
    }
    rs_put(r, "compute", "gpu_count", json_integer(gpus), NULL);
}

static void rs_compute(tg_tauyaml_rs_t *r)
{
    const tg_tauyaml_facts_t *f = r->f;
    if (r->managed) {
        rs_managed_compute(r);
        return;
    }
    rs_pick(r, "compute", "gpu_resource_mode", NULL, NULL);
    rs_pick(r, "compute", "mig_profile", NULL, NULL);
    const char *mode = rs_str(json_object_get(r->out, "compute"), "gpu_resource_mode");
    const char *mig = rs_str(json_object_get(r->out, "compute"), "mig_profile");
    if (mode && strcmp(mode, "mig") == 0 && mig) {
        char res[64];
        snprintf(res, sizeof(res), "nvidia.com/mig-%s", mig);
        rs_put(r, "compute", "gpu_resource", json_string(res), "spec");
    } else if (r->prof && rs_str(r->prof, "gpu_resource")) {
        rs_put(r, "compute", "gpu_resource", json_string(rs_str(r->prof, "gpu_resource")),
               "profile");
    } else {
        rs_put(r, "compute", "gpu_resource", json_string("nvidia.com/gpu"), "default");
    }
    if (f->is_ray) {
        rs_pick(r, "compute", "workers", NULL, NULL);
        rs_pick(r, "compute", "gpus_per_worker", NULL, NULL);
        rs_pick(r, "compute", "cpu_workers", NULL, NULL);
        int gpu = f->gpus_per_worker > 0;
        rs_role_resource(r, "head_", "cpu", "2", "4", 1, "head_");
        rs_role_resource(r, "head_", "memory", "8Gi", "16Gi", 1, "head_");
        rs_role_resource(r, "worker_", "cpu", gpu ? "8" : "2", gpu ? "16" : "4", 1, "worker_");
        rs_role_resource(r, "worker_", "memory", gpu ? "64Gi" : "8Gi", gpu ? "128Gi" : "16Gi", 1,
                         "worker_");
        if (f->cpu_workers > 0) {
            rs_role_resource(r, "", "cpu", "2", "4", 1, "cpu_worker_");
            rs_role_resource(r, "", "memory", "8Gi", "16Gi", 1, "cpu_worker_");
        }
        rs_put(r, "compute", "gpu_count", json_integer(f->gpus_per_worker), NULL);
    } else {
        rs_pick(r, "compute", "gpus", NULL, NULL);
        /* Built-in Job sizing when neither spec nor profile sets one, so Kueue
         * always has a request to count against quota. */
        rs_role_resource(r, "", "cpu", "1", NULL, 0, "");
        rs_role_resource(r, "", "memory", "2Gi", NULL, 0, "");
        rs_put(r, "compute", "gpu_count", json_integer(f->gpus), NULL);
    }
}

tg_rc_e tg_tauyaml_resolve(const tg_tauyaml_resolve_in_t *in, tg_tauyaml_diag_t *diag,
                           json_t **resolved, tg_tauyaml_prov_t *provenance)
{
    const json_t *context = in->context, *managed = in->managed;
    *resolved = NULL;
    const json_t *ws = json_object_get(context, "workspace");
    if (!json_is_object(ws) || !rs_str(ws, "name") || !rs_str(ws, "namespace")) {
        tg_log_error("spec", "resolve: context.workspace needs string name and namespace");
        return TG_EINVAL;
    }
    tg_tauyaml_rs_t r = {.schema = in->schema,
                         .root = in->root,
                         .f = in->facts,
                         .ctx = context,
                         .ws = ws,
                         .ws_name = rs_str(ws, "name"),
                         .d = diag,
                         .out = json_object(),
                         .prov = provenance,
                         .managed = managed};
    rs_identity(&r);
    rs_profile(&r);
    rs_queue(&r);
    rs_priority(&r);
    rs_placement(&r);
    tg_tauyaml_resolve_runtime(&r);
    tg_tauyaml_resolve_run(&r);
    rs_compute(&r);
    tg_tauyaml_resolve_storage(&r);
    tg_tauyaml_resolve_execution(&r);
    tg_tauyaml_resolve_resilience(&r);
    tg_tauyaml_resolve_metrics(&r);
    if (managed) {
        tg_tauyaml_resolve_managed_pvcs(&r);
        rs_put(&r, NULL, "managed", rs_ref(managed), "spec");
        json_t *fl = json_object();
        const tg_tauyaml_file_t *t =
            tg_tauyaml_files_find(in->files, rs_str(managed, "main_script"));
        if (t) {
            char hex[65];
            tg_sha256_hex(t->data, t->len, hex);
            json_object_set_new(fl, "entrypoint",
                                json_pack("{s:s, s:I, s:s}", "name", t->name, "size",
                                          (json_int_t)t->len, "sha256", hex));
        }
        rs_put(&r, NULL, "files", fl, NULL);
    } else {
        rs_put(&r, NULL, "files", tg_tauyaml_files_describe(in->facts, in->files), NULL);
    }
    *resolved = r.out;
    return TG_OK;
}
