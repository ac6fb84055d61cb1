/* GET pods/{name}/log: container selection, tailLines, sinceSeconds,
 * sinceTime, timestamps, limitBytes, previous and follow (chunked). */
#ifndef KS_LOGS_H
#define KS_LOGS_H

#include "api.h"

void ks_logs_serve(ks_req_t *r, ks_target_t *t);

#endif
