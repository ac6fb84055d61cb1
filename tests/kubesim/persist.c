/* State file. */
#include "persist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtypes.h"
#include "store.h"
#include "util.h"

int ks_persist_save(const char *path)
{
    if (!path || !path[0])
        return 0;
    char tmp[1200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    json_t *objs = json_array();
    for (int rt = 0; rt < KS_RT_COUNT; rt++) {
        json_t **items = NULL;
        size_t n = ks_store_list(rt, NULL, &items);
        for (size_t i = 0; i < n; i++)
            json_array_append_new(objs, json_pack("{s:s,s:O}", "resource", ks_rtype(rt)->resource,
                                                  "object", items[i]));
        free(items);
    }
    json_t *doc =
        json_pack("{s:I,s:o}", "resourceVersion", (json_int_t)ks_store_rv(), "objects", objs);
    int rc = json_dump_file(doc, tmp, JSON_COMPACT);
    json_decref(doc);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    return rc;
}

/* A pod that was running when kubesim stopped lost its processes: it
 * fails now, as a new change (new resourceVersion, MODIFIED event). */
static void fail_lost_pod(json_t *pod)
{
    const char *ph = ks_jstr(pod, "status.phase");
    if (ks_streq(ph, "Succeeded") || ks_streq(ph, "Failed") || !ks_jstr(pod, "spec.nodeName"))
        return;
    json_t *c = ks_copy_for_status(pod);
    json_t *st = ks_jobj(c, "status");
    json_object_set_new(st, "phase", json_string("Failed"));
    json_object_set_new(st, "reason", json_string("KubesimRestarted"));
    json_object_set_new(st, "message", json_string("kubesim restarted; the process was lost"));
    size_t i;
    json_t *cs;
    json_array_foreach(json_object_get(st, "containerStatuses"), i, cs)
    {
        json_t *now = ks_json_now();
        json_object_set_new(cs, "ready", json_false());
        json_object_set_new(cs, "started", json_false());
        json_object_set_new(cs, "state",
                            json_pack("{s:{s:i,s:s,s:O}}", "terminated", "exitCode", 137, "reason",
                                      "Error", "finishedAt", now));
        json_decref(now);
    }
    ks_cond_set(st, "Ready", "False", "PodFailed", "", 0);
    ks_cond_set(st, "ContainersReady", "False", "PodFailed", "", 0);
    ks_store_update(KS_RT_PODS, c, NULL);
}

static int lost_pod(json_t *pod, void *arg)
{
    json_array_append((json_t *)arg, pod);
    return 0;
}

/* Restore what the state file holds as a restarted API server finds it in
 * etcd: same objects, uids and resourceVersions, counting on from the
 * saved one; the watch window starts there (older watches get 410 Gone);
 * then what the restart itself changed (lost pod processes) is written as
 * new changes. */
int ks_persist_load(const char *path)
{
    if (!path || !path[0] || access(path, R_OK) != 0)
        return 0;
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc) {
        fprintf(stderr, "kubesim: state file %s: %s\n", path, je.text);
        return -1;
    }
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "objects"), i, e)
    {
        const char *res = ks_jstr(e, "resource");
        for (int rt = 0; rt < KS_RT_COUNT; rt++) {
            if (ks_streq(ks_rtype(rt)->resource, res))
                ks_store_restore(rt, json_incref(json_object_get(e, "object")));
        }
    }
    ks_store_restart_at((uint64_t)ks_jint(doc, "resourceVersion", 0));
    json_decref(doc);
    json_t *pods = json_array();
    ks_store_each(KS_RT_PODS, lost_pod, pods);
    json_array_foreach(pods, i, e) fail_lost_pod(e);
    json_decref(pods);
    return 0;
}
