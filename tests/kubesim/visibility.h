/* visibility.kueue.x-k8s.io/v1beta1 pending workloads with positions. */
#ifndef KS_VISIBILITY_H
#define KS_VISIBILITY_H

#include "server.h"

/* rest: the path segments after /apis/visibility.kueue.x-k8s.io/v1beta1. */
void ks_visibility_serve(ks_req_t *r, char **rest, int n);

#endif
