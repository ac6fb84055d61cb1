/* Declarative checks for JSON request bodies.
 *
 * A handler lists the fields it accepts in a table; tg_fields_check reports
 * every problem at once (unknown field, wrong type, missing, out of range,
 * bad pattern) as {path, message} entries for a 422 problem. */
#ifndef TG_API_FIELDS_H
#define TG_API_FIELDS_H

#include <jansson.h>

typedef enum {
    TG_F_STRING,
    TG_F_INT,
    TG_F_BOOL,
    TG_F_STRING_ARRAY,
    TG_F_OBJECT,
    TG_F_ARRAY,
} tg_field_type_e;

typedef enum {
    TG_FP_NONE = 0,
    TG_FP_DNS_LABEL,     /* RFC 1123 label, at most 63 characters */
    TG_FP_DNS_SUBDOMAIN, /* RFC 1123 subdomain, at most 253 characters */
} tg_field_pattern_e;

typedef struct {
    const char *name;
    tg_field_type_e type;
    int required;
    int nullable;
    long min, max; /* ints: value bounds; strings: length bounds (0,0: none) */
    tg_field_pattern_e pattern;
    const char *const *choices; /* strings: allowed values, NULL-terminated */
} tg_field_t;

/* Check `body` (an object) against the table; append problems to `errors`.
 * Returns the number of problems found. With `partial`, required fields may
 * be absent (PATCH). */
int tg_fields_check(const json_t *body, const tg_field_t *fields, int nfields, int partial,
                    json_t *errors);
/* 1 when s is an RFC 1123 label (or subdomain when `subdomain`). */
int tg_fields_dns_ok(const char *s, int subdomain);

/* 1 when s is a Kubernetes resource quantity ("500m", "16Gi", "1.5", "2e3",
 * "100n"; core/quantity.h). */
int tg_fields_quantity_ok(const char *s);
/* Structural checks for Kubernetes-shaped values; each appends problems
 * under `path` and returns how many it found. */
int tg_fields_check_string_map(const json_t *v, const char *path, json_t *errors);
int tg_fields_check_tolerations(const json_t *v, const char *path, json_t *errors);
int tg_fields_check_taints(const json_t *v, const char *path, json_t *errors);

#endif
