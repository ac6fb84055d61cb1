/* Request bodies in application/vnd.kubernetes.protobuf, as kubectl's typed
 * clients send built-in kinds (kubectl create namespace|configmap|secret|
 * job|deployment|..., auth can-i, drain): the "k8s\0" envelope around a
 * runtime.Unknown whose raw bytes are the object's message, decoded into
 * the JSON object a real API server would decode, field by field from the
 * built-in type table (btypes.h). Replies stay JSON: every client that
 * sends protobuf also accepts application/json. */
#ifndef KS_PBDECODE_H
#define KS_PBDECODE_H

#include <jansson.h>
#include <stddef.h>

/* Non-zero when the Content-Type names the Kubernetes protobuf encoding. */
int ks_pb_is_protobuf(const char *content_type);
/* New reference: the object with apiVersion and kind from the envelope;
 * NULL with a message in err (for a 400 reply) when the body is not a
 * well-formed envelope or its kind is not a built-in type. */
json_t *ks_pb_decode(const void *data, size_t len, char *err, size_t errn);

#endif
