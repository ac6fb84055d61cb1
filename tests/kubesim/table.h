/* meta.k8s.io/v1 Tables for kubectl get, with the columns the real server
 * prints (kube printers for built-ins, additionalPrinterColumns for CRDs). */
#ifndef KS_TABLE_H
#define KS_TABLE_H

#include <jansson.h>
#include <stddef.h>

/* New Table with rows for items (borrowed); columnDefinitions only when
 * with_cols is set (watch events after the first omit them). */
json_t *ks_table_build(int rt, json_t **items, size_t n, const char *rv, int with_cols);
/* New row for one object. */
json_t *ks_table_row(int rt, json_t *obj);
/* Evaluate a simple JSONPath (".a.b", ".a[0].b", ".a[?(@.k=='v')].b");
 * returns a borrowed value or NULL. */
json_t *ks_jsonpath(json_t *obj, const char *path);

#endif
