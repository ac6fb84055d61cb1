/* Internal interface between table.c (the Table envelope and the core
 * printers) and table_deploy.c (the deployment-manifest kinds). */
#ifndef KS_TABLE_INT_H
#define KS_TABLE_INT_H

#include <jansson.h>

/* One columnDefinition; tables end with a {NULL} entry. */
typedef struct {
    const char *name, *type, *format;
    int priority;
} ks_col_t;

/* Age cell ("5m2s") from metadata.creationTimestamp. */
json_t *ks_table_age(json_t *obj);
/* The wide Containers, Images and Selector cells of a pod-template owner. */
void ks_table_template_cells(json_t *obj, json_t *cells);

/* table_deploy.c: columns of rt, or NULL when it is not one of its kinds;
 * the cells after Name of one row. */
const ks_col_t *ks_table_deploy_cols(int rt);
void ks_table_deploy_row(int rt, json_t *obj, json_t *cells);

#endif
