/* The resolution context of a workspace: what tauyaml/resolve.h needs to know
 * about the workspace, its LocalQueues, the compute profiles it may use and
 * the priority classes, read in one statement. */
#ifndef TG_STORE_CONTEXT_H
#define TG_STORE_CONTEXT_H

#include <jansson.h>

#include "store/pool.h"

/* New reference in *out; TG_ENOTFOUND when the workspace does not exist. */
tg_rc_e tg_store_resolve_context(tg_db_conn_t *conn, const char *workspace,
                                 json_t **out) TG_MUSTCHECK;

#endif
