/* Kubernetes resource quantities in milli-units ("500m" = 500, "2" = 2000,
 * "1Gi" = 1073741824000), enough for cpu, memory, GPUs and pods. */
#ifndef KS_QUANTITY_H
#define KS_QUANTITY_H

#include <jansson.h>
#include <stddef.h>

/* Parse a quantity (string or JSON number); returns 0 or -1. */
int ks_qty_parse(const char *s, long long *milli);
long long ks_qty_json(json_t *v);
/* Canonical text: "1500m", "2", "64Gi", "500Mi". */
void ks_qty_fmt(long long milli, char *out, size_t n);
/* Sum container requests of a pod spec into a resource -> milli object
 * (new reference): max(sum(containers), max(init containers)). */
json_t *ks_pod_requests(json_t *podspec);

#endif
