/* What a platform admin's node operation (api/node_ops.c) writes besides
 * the Node itself: the node's row shows the cordon at once, without waiting
 * for the nodes loop to see the Node change (it writes the same values when
 * it does). A node the loop has not seen yet gets a row in health Unknown.
 *
 * Thread-safety: as the connection. */
#ifndef TG_STORE_NODE_OPS_H
#define TG_STORE_NODE_OPS_H

#include "store/pool.h"

/* Cordoned (by, reason, at RFC 3339, source "admin" or "drain") or, with
 * by NULL, uncordoned. */
tg_rc_e tg_store_node_cordon_set(tg_db_conn_t *conn, const char *name, const char *by,
                                 const char *reason, const char *at,
                                 const char *source) TG_MUSTCHECK;

#endif
