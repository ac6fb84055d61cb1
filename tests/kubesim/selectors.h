/* Label and field selectors as list and watch requests carry them. */
#ifndef KS_SELECTORS_H
#define KS_SELECTORS_H

#include <jansson.h>
#include <stddef.h>

typedef struct ks_sel_s ks_sel_t;

/* Parse a labelSelector; NULL input gives an empty (match-all) selector.
 * Returns NULL and writes a message into err on a syntax error. */
ks_sel_t *ks_labelsel_parse(const char *s, char *err, size_t errn);
/* Parse a fieldSelector for resource type rt; unsupported fields give NULL
 * with "field label not supported: <f>" in err. */
ks_sel_t *ks_fieldsel_parse(int rt, const char *s, char *err, size_t errn);
void ks_sel_free(ks_sel_t *sel);
/* Does the selector match everything (no terms)? */
int ks_sel_empty(const ks_sel_t *sel);
int ks_labelsel_match(const ks_sel_t *sel, json_t *obj);
int ks_fieldsel_match(const ks_sel_t *sel, json_t *obj);
/* Match a metav1.LabelSelector object ({matchLabels, matchExpressions})
 * against a labels map. A NULL selector matches nothing, {} matches all. */
int ks_labelselector_obj_match(json_t *selector, json_t *labels);
/* Match a labels map (object) against a set-based selector string. */
int ks_labels_match(const ks_sel_t *sel, json_t *labels);

#endif
