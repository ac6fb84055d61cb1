/* Runs by their TauGrid experiment identity (tau.yaml `experiment`:
 * project, name, group), and runs side by side:
 *   GET /v1/workspaces/{ws}/experiments     experiments with their groups,
 *                                           run counts and last activity
 *   GET /v1/workspaces/{ws}/runs:compare    2 to 10 runs: config
 *                                           differences, metric summaries,
 *                                           attempts
 * An experiment's runs are the runs list filtered by project and
 * experiment (api/runs_list.h). */
#ifndef TG_API_EXPERIMENTS_H
#define TG_API_EXPERIMENTS_H

#include <jansson.h>

#include "http/request.h"

void tg_api_experiments_list(tg_req_t *req);
void tg_api_runs_compare(tg_req_t *req);

/* The leaves of each config that are not the same in all of them:
 * [{path, values: [one per config, null where absent]}], sorted by path.
 * Paths are dotted (`compute.gpus`); list items are `[i]`; a key that is
 * not a plain identifier is written `["key"]`. Empty objects and lists are
 * leaves. `configs` is borrowed; the result is a new reference. */
json_t *tg_api_config_differences(json_t *const *configs, size_t n);

#endif
