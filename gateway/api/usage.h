/* GET /v1/admin/usage?since=&until=&workspace= (platform admins): GPU-hours
 * and run counts per workspace and per user over a time range, from the run
 * records (store/quota.h tg_store_quota_usage for the rules).
 *   {since, until, workspace (the filter or null),
 *    totals: {runs, succeeded, failed, cancelled, active, attempts,
 *             gpu_hours, gpu_seconds},
 *    workspaces: [{workspace, ...the same counters}],
 *    users: [{workspace, user, ...the same counters}]}
 * since/until are RFC 3339 times; until defaults to now and since to 30 days
 * before until. gpu_hours is rounded to 4 decimals, gpu_seconds to whole
 * seconds. 400 for a malformed time or since >= until. */
#ifndef TG_API_USAGE_H
#define TG_API_USAGE_H

#include "http/request.h"

void tg_api_admin_usage(tg_req_t *req);

#endif
