/* Pod-level settings: placement, identity, security, DRA (render/pod.h). */
#include "render/pod.h"

#include <string.h>

int tg_render_dra(const tg_render_ctx_t *c, json_int_t gpus)
{
    return gpus > 0 && tg_render_str(c->policy, NULL, "dra_claim_template") != NULL;
}

void tg_render_k_resource_claims(const tg_render_ctx_t *c, json_int_t gpus)
{
    if (!tg_render_dra(c, gpus))
        return;
    tg_jw_t *w = c->w;
    tg_jw_karr(w, "resourceClaims");
    tg_jw_obj(w);
    tg_jw_kstr(w, "name", "gpu");
    tg_jw_kstr(w, "resourceClaimTemplateName",
               tg_render_str(c->policy, NULL, "dra_claim_template"));
    tg_jw_end_obj(w);
    tg_jw_end_arr(w);
}

void tg_render_k_image_pull_secrets(const tg_render_ctx_t *c)
{
    const json_t *ps = tg_render_get(c->policy, NULL, "image_pull_secrets");
    if (json_array_size(ps) == 0)
        return;
    tg_jw_karr(c->w, "imagePullSecrets");
    size_t i;
    const json_t *v;
    json_array_foreach(ps, i, v) {
        if (!json_is_string(v))
            continue;
        tg_jw_obj(c->w);
        tg_jw_kstr(c->w, "name", json_string_value(v));
        tg_jw_end_obj(c->w);
    }
    tg_jw_end_arr(c->w);
}

void tg_render_k_service_account(const tg_render_ctx_t *c)
{
    const char *sa = tg_render_str(c->policy, NULL, "service_account");
    if (sa)
        tg_jw_kstr(c->w, "serviceAccountName", sa);
}

int tg_render_packs(const tg_render_ctx_t *c, json_int_t gpus)
{
    const char *pl = tg_render_str(c->policy, NULL, "gpu_placement");
    return gpus > 0 && pl && (strcmp(pl, "single-device") == 0 || strcmp(pl, "same-node") == 0);
}

void tg_render_k_packing_affinity(const tg_render_ctx_t *c, json_int_t gpus)
{
    if (!tg_render_packs(c, gpus))
        return;
    /* TauGrid's GPU bin packing: prefer a node already running small GPU
     * pods, so whole nodes stay free for large runs. */
    tg_jw_t *w = c->w;
    tg_jw_kobj(w, "affinity");
    tg_jw_kobj(w, "podAffinity");
    tg_jw_karr(w, "preferredDuringSchedulingIgnoredDuringExecution");
    tg_jw_obj(w);
    tg_jw_kobj(w, "podAffinityTerm");
    tg_jw_kobj(w, "labelSelector");
    tg_jw_karr(w, "matchExpressions");
    tg_jw_obj(w);
    tg_jw_kstr(w, "key", "tau.azure.com/gpu-count");
    tg_jw_kstr(w, "operator", "Exists");
    tg_jw_end_obj(w);
    tg_jw_obj(w);
    tg_jw_kstr(w, "key", "tau.azure.com/gpu-placement");
    tg_jw_kstr(w, "operator", "In");
    tg_jw_karr(w, "values");
    tg_jw_str(w, "single-device");
    tg_jw_str(w, "same-node");
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
    tg_jw_kstr(w, "topologyKey", "kubernetes.io/hostname");
    tg_jw_end_obj(w);
    tg_jw_kint(w, "weight", 100);
    tg_jw_end_obj(w);
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
    tg_jw_end_obj(w);
}

static void render_toleration(tg_jw_t *w, const char *key, const char *op, const char *value)
{
    tg_jw_obj(w);
    tg_jw_kstr(w, "effect", "NoSchedule");
    tg_jw_kstr(w, "key", key);
    tg_jw_kstr(w, "operator", op);
    if (value)
        tg_jw_kstr(w, "value", value);
    tg_jw_end_obj(w);
}

/* Does `list` hold a NoSchedule toleration equal to key/op/value (an
 * absent operator is Equal, an absent effect matches every effect)? */
static int render_has_toleration(const json_t *list, const char *key, const char *op,
                                 const char *value)
{
    size_t i;
    const json_t *t;
    json_array_foreach(list, i, t) {
        const char *k = json_string_value(json_object_get(t, "key"));
        const char *o = json_string_value(json_object_get(t, "operator"));
        const char *v = json_string_value(json_object_get(t, "value"));
        const char *e = json_string_value(json_object_get(t, "effect"));
        if (!k || strcmp(k, key) != 0 || strcmp(o ? o : "Equal", op) != 0)
            continue;
        if (value && (!v || strcmp(v, value) != 0))
            continue;
        if (e && *e && strcmp(e, "NoSchedule") != 0)
            continue;
        return 1;
    }
    return 0;
}

void tg_render_k_tolerations(const tg_render_ctx_t *c, int head, int gpu)
{
    const json_t *pt = tg_render_get(c->policy, NULL, "tolerations");
    if (json_array_size(pt) == 0 && !head && !gpu)
        return;
    tg_jw_t *w = c->w;
    tg_jw_karr(w, "tolerations");
    size_t i;
    const json_t *t;
    json_array_foreach(pt, i, t) {
        /* Keep only the Toleration fields; a DB row may carry more. */
        static const char *const keys[] = {"effect", "key", "operator", "tolerationSeconds",
                                           "value"};
        tg_jw_obj(w);
        for (size_t k = 0; k < TG_ARRAY_LEN(keys); k++) {
            const json_t *v = json_object_get(t, keys[k]);
            if (k == 3 && json_is_integer(v))
                tg_jw_kint(w, keys[k], json_integer_value(v));
            else if (k != 3 && json_is_string(v))
                tg_jw_kstr(w, keys[k], json_string_value(v));
        }
        tg_jw_end_obj(w);
    }
    /* The built-in ones, unless the profile already lists the same. */
    if (head && !render_has_toleration(pt, "CriticalAddonsOnly", "Exists", NULL))
        render_toleration(w, "CriticalAddonsOnly", "Exists", NULL);
    if (gpu && !render_has_toleration(pt, "sku", "Equal", "gpu"))
        render_toleration(w, "sku", "Equal", "gpu");
    if (gpu && !render_has_toleration(pt, "nvidia.com/gpu", "Exists", NULL))
        render_toleration(w, "nvidia.com/gpu", "Exists", NULL);
    tg_jw_end_arr(w);
}

void tg_render_k_node_selector(const tg_render_ctx_t *c, int gpu_pod)
{
    const json_t *ns = tg_render_get(c->policy, NULL, "node_selector");
    int gpu_label = gpu_pod && c->gpu_class && strcmp(c->gpu_class, "any") != 0 &&
                    !tg_render_bool(c->policy, NULL, "clear_node_selector") &&
                    !json_object_get(ns, "tau.azure.com/gpu-class");
    if (json_object_size(ns) == 0 && !gpu_label)
        return;
    tg_jw_kobj(c->w, "nodeSelector");
    size_t n;
    const char **keys = tg_render_sorted_keys(ns, &n);
    for (size_t i = 0; i < n; i++) {
        const char *v = json_string_value(json_object_get(ns, keys[i]));
        if (v)
            tg_jw_kstr(c->w, keys[i], v);
    }
    free(keys);
    if (gpu_label)
        tg_jw_kstr(c->w, "tau.azure.com/gpu-class", c->gpu_class);
    tg_jw_end_obj(c->w);
}

/* Extra workspace PVCs: volume names pvc-<i> per distinct claim. */
static void render_seccomp(tg_jw_t *w)
{
    tg_jw_kobj(w, "seccompProfile");
    tg_jw_kstr(w, "type", "RuntimeDefault");
    tg_jw_end_obj(w);
}

void tg_render_k_pod_security(const tg_render_ctx_t *c)
{
    if (!tg_render_str(c->runtime, NULL, "security_mode"))
        return;
    tg_jw_t *w = c->w;
    tg_jw_kobj(w, "securityContext");
    tg_jw_kint(w, "fsGroup", 65532);
    tg_jw_kint(w, "runAsGroup", 65532);
    tg_jw_kbool(w, "runAsNonRoot", 1);
    tg_jw_kint(w, "runAsUser", 65532);
    render_seccomp(w);
    tg_jw_end_obj(w);
}

void tg_render_k_container_security(const tg_render_ctx_t *c)
{
    if (!tg_render_str(c->runtime, NULL, "security_mode"))
        return;
    tg_jw_t *w = c->w;
    tg_jw_kobj(w, "securityContext");
    tg_jw_kbool(w, "allowPrivilegeEscalation", 0);
    tg_jw_kobj(w, "capabilities");
    tg_jw_karr(w, "drop");
    tg_jw_str(w, "ALL");
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
    tg_jw_kbool(w, "runAsNonRoot", 1);
    render_seccomp(w);
    tg_jw_end_obj(w);
}

void tg_render_k_system_affinity(const tg_render_ctx_t *c)
{
    /* The AKS system pool, or any node without the pool label (every
     * non-AKS cluster). */
    tg_jw_t *w = c->w;
    tg_jw_kobj(w, "affinity");
    tg_jw_kobj(w, "nodeAffinity");
    tg_jw_kobj(w, "requiredDuringSchedulingIgnoredDuringExecution");
    tg_jw_karr(w, "nodeSelectorTerms");
    tg_jw_obj(w);
    tg_jw_karr(w, "matchExpressions");
    tg_jw_obj(w);
    tg_jw_kstr(w, "key", "kubernetes.azure.com/mode");
    tg_jw_kstr(w, "operator", "In");
    tg_jw_karr(w, "values");
    tg_jw_str(w, "system");
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
    tg_jw_obj(w);
    tg_jw_karr(w, "matchExpressions");
    tg_jw_obj(w);
    tg_jw_kstr(w, "key", "kubernetes.azure.com/mode");
    tg_jw_kstr(w, "operator", "DoesNotExist");
    tg_jw_end_obj(w);
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
    tg_jw_end_arr(w);
    tg_jw_end_obj(w);
    tg_jw_end_obj(w);
    tg_jw_end_obj(w);
}

void tg_render_k_scheduling(const tg_render_ctx_t *c, int with_node_selector, json_int_t gpus)
{
    if (with_node_selector)
        tg_render_k_node_selector(c, gpus > 0);
    const char *ppc = tg_render_str(c->policy, NULL, "pod_priority_class");
    if (ppc)
        tg_jw_kstr(c->w, "priorityClassName", ppc);
    tg_render_k_resource_claims(c, gpus);
}
