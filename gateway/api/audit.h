/* The audit trail: recorded after every mutating request, read by admins. */
#ifndef TG_API_AUDIT_H
#define TG_API_AUDIT_H

#include "http/request.h"

/* Server `after` hook: records POST, PUT, PATCH and DELETE requests. */
void tg_audit_after(tg_req_t *req, void *app);
/* GET /v1/admin/audit?subject=&workspace=&since=&until=&limit=&cursor= */
void tg_api_admin_audit(tg_req_t *req);

#endif
