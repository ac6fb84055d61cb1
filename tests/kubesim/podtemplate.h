/* A pod from a controller's pod template, as the Job and ReplicaSet
 * controllers create them. */
#ifndef KS_PODTEMPLATE_H
#define KS_PODTEMPLATE_H

#include <jansson.h>

/* New reference: a Pod named `name` in the owner's namespace with the
 * template's metadata and spec (deep copies), generateName "<owner>-" and
 * a controller ownerReference to the owner (apiVersion/kind as given).
 * Defaults are not applied. */
json_t *ks_pod_from_template(json_t *owner, const char *api_version, const char *kind, json_t *tmpl,
                             const char *name);

#endif
