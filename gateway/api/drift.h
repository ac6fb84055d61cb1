/* GET /v1/admin/drift?state=open|resolved|all&kind=&name=&limit=&cursor=
 * (platform admins): what the Kueue reconciler found in the cluster that did
 * not match the database (store/kueue_sync.h, engine/reconcile.h), newest
 * first, default state=open:
 *   {items: [{id, kind, namespace, name, problem (edited | unmanaged |
 *             orphan_in_use | failed), summary, live, desired, detected_at,
 *             last_seen_at, seen_count, resolved_at, resolution}],
 *    next_cursor,
 *    sync: {holder, step_at, report {created, updated, corrected, deleted,
 *           in_sync, drifted, unmanaged, kept, failed, error?}} | null,
 *    leader: whether this replica runs the reconciler} */
#ifndef TG_API_DRIFT_H
#define TG_API_DRIFT_H

#include "http/request.h"

void tg_api_admin_drift(tg_req_t *req);

#endif
