/* Reading YAML files: tau.yaml (lookups by dotted path with line:column, for
 * local error messages) and admin object files (-f FILE, YAML or JSON, to
 * JSON values). */
#ifndef TAU_YAMLDOC_H
#define TAU_YAMLDOC_H

#include <jansson.h>
#include <stddef.h>
#include <yaml.h>

#include "core/mem.h"

typedef struct tau_ydoc_s {
    yaml_document_t doc;
    int loaded;
    char *text; /* the file's bytes (NUL-terminated) */
    size_t len;
} tau_ydoc_t;

/* Parse text (copied). Returns 0, or -1 with the problem in err and its
 * 1-based position in *line and *col (0 when it has none). */
int tau_ydoc_parse(tau_ydoc_t *d, const char *text, size_t len, char *err, size_t errlen, int *line,
                   int *col) TG_MUSTCHECK;
void tau_ydoc_clean(tau_ydoc_t *d);

/* The node at a dotted path of mapping keys ("run.working_dir"), or NULL. */
yaml_node_t *tau_ydoc_get(tau_ydoc_t *d, const char *path);
/* The scalar text at a path, or NULL when absent, empty or not a scalar. */
const char *tau_ydoc_str(tau_ydoc_t *d, const char *path);
/* 1-based line and column of a node. */
void tau_ydoc_pos(const yaml_node_t *n, int *line, int *col);

/* The whole document as a new JSON value (plain scalars typed as YAML 1.2
 * core: null, booleans, integers, floats), or NULL with a message. */
json_t *tau_ydoc_to_json(tau_ydoc_t *d, char *err, size_t errlen);

/* Read a JSON or YAML file ("-" reads stdin) into a new JSON value. */
json_t *tau_load_object_file(const char *path, char *err, size_t errlen);

/* Read a whole file ("-" for stdin) into a new buffer (NUL-terminated).
 * Returns 0, or -1 with a message (missing, unreadable, larger than max). */
int tau_read_file(const char *path, size_t max, char **out, size_t *len, char *err,
                  size_t errlen) TG_MUSTCHECK;

#endif
