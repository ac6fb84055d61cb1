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
            json_array_append_new(objs, json_pack("{s:s,s:O}", "resource",
                                                  ks_rtype(rt)->resource, "object", items[i]));
        free(items);
    }
    json_t *doc = json_pack("{s:I,s:o}", "resourceVersion", (json_int_t)ks_store_rv(), "objects",
                            objs);
    int rc = json_dump_file(doc, tmp, JSON_COMPACT);
    json_decref(doc);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    return rc;
}

static void mark_failed(json_t *pod)
{
    const char *ph = ks_jstr(pod, "status.phase");
    if (ks_streq(ph, "Succeeded") || ks_streq(ph, "Failed") || !ks_jstr(pod, "spec.nodeName"))
        return;
    json_t *st = ks_jobj(pod, "status");
    json_object_set_new(st, "phase", json_string("Failed"));
    json_object_set_new(st, "reason", json_string("KubesimRestarted"));
    json_object_set_new(st, "message", json_string("kubesim restarted; the process was lost"));
    size_t i;
    json_t *cs;
    json_array_foreach(json_object_get(st, "containerStatuses"), i, cs)
    {
        json_t *now = ks_json_now();
        json_object_set_new(cs, "ready", json_false());
        json_object_set_new(cs, "state", json_pack("{s:{s:i,s:s,s:O}}", "terminated", "exitCode",
                                                   137, "reason", "Error", "finishedAt", now));
        json_decref(now);
    }
}

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
            if (!ks_streq(ks_rtype(rt)->resource, res))
                continue;
            json_t *o = json_deep_copy(json_object_get(e, "object"));
            if (rt == KS_RT_PODS)
                mark_failed(o);
            ks_store_create(rt, o, NULL);
        }
    }
    json_decref(doc);
    return 0;
}
