/* Admission webhooks (Kueue) and field validation (unknown fields of
 * built-in kinds and CRs under fieldValidation Ignore, Warn or Strict). */
#include "admission.h"

#include <stdio.h>
#include <string.h>

#include "btypes.h"
#include "rtypes.h"
#include "store.h"
#include "util.h"
#include "validate.h"

#define KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"

static void deny(ks_req_t *r, const char *hook, const char *msg)
{
    char full[1200];
    snprintf(full, sizeof(full), "admission webhook \"%s\" denied the request: %s", hook, msg);
    ks_reply_status(r, 403, "Forbidden", full, NULL);
}

/* LocalQueueDefaulting: a namespace with a LocalQueue named "default"
 * gets that queue for unlabelled jobs. */
static const char *queue_name(json_t *obj, int create)
{
    const char *q = ks_label(obj, KUEUE_QUEUE_LABEL);
    if (q || !create)
        return q;
    if (ks_label(obj, "ray.io/originated-from-crd") || ks_jget(obj, "metadata.ownerReferences"))
        return NULL;
    if (ks_store_get(KS_RT_LOCALQUEUES, ks_meta_ns(obj), "default")) {
        json_object_set_new(ks_jobj(obj, "metadata.labels"), KUEUE_QUEUE_LABEL,
                            json_string("default"));
        return "default";
    }
    return NULL;
}

/* Objects created by KubeRay for a Kueue-managed RayJob are not managed
 * separately (their owner is). */
static int owned_by_managed(json_t *obj)
{
    size_t i;
    json_t *ref;
    json_array_foreach(ks_jget(obj, "metadata.ownerReferences"), i, ref)
    {
        const char *k = ks_jstr(ref, "kind");
        if (ks_streq(k, "RayJob") || ks_streq(k, "RayCluster") || ks_streq(k, "Job"))
            return 1;
    }
    return 0;
}

static int rayjob_rules(ks_req_t *r, json_t *obj)
{
    char msg[600];
    if (ks_jget(obj, "spec.clusterSelector") &&
        json_object_size(ks_jget(obj, "spec.clusterSelector"))) {
        deny(r, "vrayjob.kb.io",
             "spec.clusterSelector: Forbidden: a kueue managed job should not "
             "use an existing cluster");
        return -1;
    }
    if (!ks_jbool(obj, "spec.shutdownAfterJobFinishes", 0)) {
        deny(r, "vrayjob.kb.io",
             "spec.shutdownAfterJobFinishes: Invalid value: false: a kueue "
             "managed job should delete the cluster after finishing");
        return -1;
    }
    if (!ks_jget(obj, "spec.rayClusterSpec")) {
        deny(r, "vrayjob.kb.io",
             "spec.rayClusterSpec: Required value: a kueue managed job "
             "should have a rayClusterSpec");
        return -1;
    }
    if (ks_jbool(obj, "spec.rayClusterSpec.enableInTreeAutoscaling", 0)) {
        deny(r, "vrayjob.kb.io",
             "spec.rayClusterSpec.enableInTreeAutoscaling: Invalid value: "
             "true: a kueue managed job should not use autoscaling");
        return -1;
    }
    json_t *wgs = ks_jget(obj, "spec.rayClusterSpec.workerGroupSpecs");
    if (json_array_size(wgs) > 7) {
        snprintf(msg, sizeof(msg),
                 "spec.rayClusterSpec.workerGroupSpecs: Too many: %zu: must "
                 "have at most 7 items",
                 json_array_size(wgs));
        deny(r, "vrayjob.kb.io", msg);
        return -1;
    }
    size_t i;
    json_t *wg;
    json_array_foreach(wgs, i, wg)
    {
        if (ks_streq(ks_jstr(wg, "groupName"), "head")) {
            snprintf(msg, sizeof(msg),
                     "spec.rayClusterSpec.workerGroupSpecs[%zu].groupName: "
                     "Forbidden: \"head\" is reserved for the head group",
                     i);
            deny(r, "vrayjob.kb.io", msg);
            return -1;
        }
    }
    return 0;
}

/* Warning values, one per unknown field, comma-joined into one header;
 * a warning that does not fit is left out whole. */
static void warn_unknown(ks_req_t *r, json_t *unknown, int crd)
{
    size_t i, len = strlen(r->warning);
    json_t *u;
    json_array_foreach(unknown, i, u)
    {
        char one[400];
        const char *path = json_string_value(u) + (crd ? 1 : 0); /* CR paths start with '.' */
        int n = snprintf(one, sizeof(one), "%s299 - \"unknown field \\\"%s\\\"\"", len ? ", " : "",
                         path);
        if (n < 0 || (size_t)n >= sizeof(one) || len + (size_t)n >= sizeof(r->warning))
            break;
        memcpy(r->warning + len, one, (size_t)n + 1);
        len += (size_t)n;
    }
}

int ks_admission_fields(ks_req_t *r, int rt, json_t *obj)
{
    const ks_rtype_t *t = ks_rtype(rt);
    const char *fv = ks_req_query(r, "fieldValidation");
    if (fv && fv[0] && strcmp(fv, "Ignore") && strcmp(fv, "Warn") && strcmp(fv, "Strict")) {
        char msg[400];
        snprintf(msg, sizeof(msg),
                 "fieldValidation: Unsupported value: \"%.100s\": supported "
                 "values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
                 fv);
        ks_reply_status(r, 422, "Invalid", msg, NULL);
        return -1;
    }
    if (!fv || !fv[0])
        fv = "Warn"; /* the server's default */
    char gv[128];
    ks_rtype_gv(t, gv, sizeof(gv));
    const ks_bt_msg_t *m = t->crd_file ? NULL : ks_bt_root(gv, t->kind);
    if (!t->crd_file && !m)
        return 0;
    json_t *unknown = json_array();
    /* Unknown fields are dropped whatever the directive, as decoding does. */
    if (t->crd_file)
        ks_prune_unknown(rt, obj, unknown);
    else
        ks_bt_unknown(m, obj, unknown, 1);
    int rc = 0;
    if (json_array_size(unknown) && !strcmp(fv, "Strict")) {
        tg_buf_t b;
        tg_buf_init(&b, 8192);
        size_t i;
        json_t *u;
        int brc = 0;
        if (!t->crd_file)
            brc |= tg_buf_puts(&b, "strict decoding error: ");
        json_array_foreach(unknown, i, u)
        {
            if (t->crd_file)
                brc |= tg_buf_printf(&b, "%s%s: field not declared in schema", i ? ", " : "",
                                     json_string_value(u));
            else
                brc |= tg_buf_printf(&b, "%sunknown field \"%s\"", i ? ", " : "",
                                     json_string_value(u));
        }
        (void)brc; /* a cut message still names the first fields */
        ks_reply_badrequest(r, b.data ? b.data : "unknown field");
        tg_buf_clean(&b);
        rc = -1;
    } else if (json_array_size(unknown) && !strcmp(fv, "Warn")) {
        warn_unknown(r, unknown, t->crd_file != NULL);
    }
    json_decref(unknown);
    return rc;
}

int ks_admission(ks_req_t *r, int rt, json_t *obj, json_t *old)
{
    if (rt != KS_RT_JOBS && rt != KS_RT_RAYJOBS)
        return 0;
    if (owned_by_managed(obj))
        return 0;
    const char *q = queue_name(obj, old == NULL);
    if (!q)
        return 0;
    if (rt == KS_RT_RAYJOBS && rayjob_rules(r, obj))
        return -1;
    if (!old)
        ks_jset(obj, "spec.suspend", json_true());
    return 0;
}
