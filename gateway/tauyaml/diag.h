/* Diagnostics: the errors and warnings of one submission.
 *
 * Each entry is a JSON object {"path", "line", "column", "message"}: path is
 * dotted ("compute.gpus", "runtime.pip[0]"; "" for the document itself), line
 * and column are 1-based and point at the offending key or value, taken from
 * the position table. Every stage appends to the same collector so a reply
 * lists every problem found, not just the first. */
#ifndef TG_TAUYAML_DIAG_H
#define TG_TAUYAML_DIAG_H

#include <jansson.h>
#include <stddef.h>

#include "core/mem.h"
#include "tauyaml/pos.h"

typedef struct tg_tauyaml_diag_s {
    json_t *errors;              /* owned array */
    json_t *warnings;            /* owned array */
    const tg_tauyaml_pos_t *pos; /* borrowed; may be NULL (then 1:1) */
    size_t max_errors;
    int truncated;
} tg_tauyaml_diag_t;

/* Where a diagnostic points. */
typedef enum { TG_AT_KEY = 0, TG_AT_VALUE = 1 } tg_tauyaml_at_e;

void tg_tauyaml_diag_init(tg_tauyaml_diag_t *d, const tg_tauyaml_pos_t *pos, size_t max_errors);
/* Drop both arrays (NULL-safe for the members). */
void tg_tauyaml_diag_clean(tg_tauyaml_diag_t *d);

/* Append an error located through the position table. */
void tg_tauyaml_diag_error(tg_tauyaml_diag_t *d, const char *path, tg_tauyaml_at_e at,
                           const char *fmt, ...) TG_PRINTF(4, 5);
/* Append an error at an explicit position (parser errors, before the table). */
void tg_tauyaml_diag_error_at(tg_tauyaml_diag_t *d, const char *path, unsigned line, unsigned col,
                              const char *fmt, ...) TG_PRINTF(5, 6);
void tg_tauyaml_diag_warn(tg_tauyaml_diag_t *d, const char *path, tg_tauyaml_at_e at,
                          const char *fmt, ...) TG_PRINTF(4, 5);

void tg_tauyaml_diag_warn_at(tg_tauyaml_diag_t *d, const char *path, unsigned line, unsigned col,
                             const char *fmt, ...) TG_PRINTF(5, 6);

size_t tg_tauyaml_diag_nerrors(const tg_tauyaml_diag_t *d);

/* Sort both arrays by (line, column), keeping discovery order for ties. */
void tg_tauyaml_diag_sort(tg_tauyaml_diag_t *d);

/* A user value shortened for quoting in a message (long values are cut at 64
 * bytes on a UTF-8 boundary and end in "..."). */
typedef struct tg_tauyaml_qv_s {
    char s[80];
} tg_tauyaml_qv_t;
const char *tg_tauyaml_qv(tg_tauyaml_qv_t *q, const char *value);

#endif
