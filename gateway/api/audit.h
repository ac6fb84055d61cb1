/* The audit trail: recorded after every mutating request, read by admins. */
#ifndef TG_API_AUDIT_H
#define TG_API_AUDIT_H

#include "http/request.h"
#include "store/audit.h"

/* The audit entry of this request, were it answered with `status`. A
 * handler that stores it in the same statement as its change (a run
 * submission) sets req->audited, and the hook below leaves it be. */
void tg_audit_entry_of(tg_req_t *req, unsigned status, tg_audit_entry_t *e);
/* Server `after` hook: records POST, PUT, PATCH and DELETE requests. */
void tg_audit_after(tg_req_t *req, void *app);
/* GET /v1/admin/audit?subject=&workspace=&since=&until=&limit=&cursor= */
void tg_api_admin_audit(tg_req_t *req);

#endif
