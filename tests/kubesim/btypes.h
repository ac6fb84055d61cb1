/* The built-in Kubernetes types kubesim serves, field by field: JSON name,
 * protobuf number, shape and Go flags, read from builtin_types.txt
 * (generated from the 1.32 Go API types by tools/gen_builtin_types.py and
 * compiled into the binary). Used to decode protobuf request bodies
 * (pbdecode.h) and to find fields a 1.32 server does not know
 * (fieldValidation). Read-only after ks_bt_init. */
#ifndef KS_BTYPES_H
#define KS_BTYPES_H

#include <jansson.h>
#include <stddef.h>

typedef enum {
    KS_BT_STR = 0,
    KS_BT_BOOL,
    KS_BT_I32,
    KS_BT_I64,
    KS_BT_F64,
    KS_BT_BYTES,
    KS_BT_MSG,
    /* Types with their own protobuf form and JSON rendering. */
    KS_BT_TIME,      /* metav1.Time: {seconds, nanos} <-> RFC 3339 */
    KS_BT_MICROTIME, /* metav1.MicroTime: the same with microseconds */
    KS_BT_FIELDSV1,  /* {Raw bytes} holding JSON */
    KS_BT_QUANTITY,  /* {string} */
    KS_BT_INTORSTR,  /* {type, intVal, strVal} */
    KS_BT_RAWEXT,    /* runtime.RawExtension {raw bytes} holding JSON */
    KS_BT_STRLIST,   /* authorization ExtraValue {repeated string items} */
} ks_bt_kind_e;

#define KS_BT_PTR    1u /* Go pointer: a zero value on the wire is kept */
#define KS_BT_OMIT   2u /* omitempty */
#define KS_BT_INLINE 4u /* embedded with json:",inline": fields join the parent */

typedef struct ks_bt_msg_s ks_bt_msg_t;

typedef struct ks_bt_field_s {
    int num;
    const char *json; /* "" when inlined */
    char shape;       /* '1' one value, 'r' list, 'm' map with string keys */
    int kind;         /* ks_bt_kind_e */
    unsigned flags;
    const ks_bt_msg_t *msg; /* KS_BT_MSG only */
} ks_bt_field_t;

struct ks_bt_msg_s {
    const char *name; /* "core.v1.Pod" */
    const ks_bt_field_t *fields;
    size_t nfields;
};

/* Parse the compiled-in table; 0, or -1 with a message on stderr. */
int ks_bt_init(void);
void ks_bt_shutdown(void);
/* The message of a top-level object (apiVersion "batch/v1", kind "Job"),
 * or NULL for kinds the table does not hold (custom resources). */
const ks_bt_msg_t *ks_bt_root(const char *api_version, const char *kind);
/* Field by protobuf number (inlined messages are separate fields), or by
 * JSON name (searching inlined messages too); NULL when unknown. */
const ks_bt_field_t *ks_bt_field_num(const ks_bt_msg_t *m, int num);
const ks_bt_field_t *ks_bt_field_json(const ks_bt_msg_t *m, const char *json);
/* Append to `unknown` (a JSON array) the path of every field of obj the
 * type does not declare, as the API server's strict decoder spells them
 * ("spec.template.spec.containers[0].imagee"). With prune, those fields
 * are also removed from obj, as a non-strict decode drops them. */
void ks_bt_unknown(const ks_bt_msg_t *m, json_t *obj, json_t *unknown, int prune);

#endif
