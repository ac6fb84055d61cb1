/* Pods from pod templates (podtemplate.h). */
#include "podtemplate.h"

#include <stdio.h>

#include "util.h"

json_t *ks_pod_from_template(json_t *owner, const char *api_version, const char *kind, json_t *tmpl,
                             const char *name)
{
    char gen[300];
    snprintf(gen, sizeof(gen), "%s-", ks_meta_name(owner));
    json_t *meta = json_deep_copy(json_object_get(tmpl, "metadata"));
    if (!meta)
        meta = json_object();
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "generateName", json_string(gen));
    json_object_set_new(meta, "namespace", json_string(ks_meta_ns(owner)));
    json_object_set_new(meta, "ownerReferences",
                        json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion", api_version, "kind",
                                  kind, "name", ks_meta_name(owner), "uid", ks_meta_uid(owner),
                                  "controller", 1, "blockOwnerDeletion", 1));
    json_t *spec = json_deep_copy(json_object_get(tmpl, "spec"));
    return json_pack("{s:s,s:s,s:o,s:o}", "kind", "Pod", "apiVersion", "v1", "metadata", meta,
                     "spec", spec ? spec : json_object());
}
