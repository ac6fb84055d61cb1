/* PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and the
 * subset of strategic merge patch that kubectl apply sends. */
#ifndef KS_PATCH_H
#define KS_PATCH_H

#include <jansson.h>
#include <stddef.h>

/* Apply an RFC 7386 merge patch to target in place (patch is borrowed). */
void ks_merge_patch(json_t *target, json_t *patch);
/* Apply a strategic merge patch in place: lists with a known merge key
 * (containers by name, env by name, ...) merge element-wise, and the
 * $patch / $setElementOrder / $retainKeys / $deleteFromPrimitiveList
 * directives are honoured or dropped. */
void ks_strategic_patch(json_t *target, json_t *patch);
/* Apply an RFC 6902 patch; returns 0, or -1 with a message in err. */
int ks_json_patch(json_t **target, json_t *ops, char *err, size_t errn);

#endif
