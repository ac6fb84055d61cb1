/* GET pods/{name}/log: container selection, tailLines, sinceSeconds,
 * sinceTime, timestamps, limitBytes, previous and follow (chunked). */
#ifndef KS_LOGS_H
#define KS_LOGS_H

#include "api.h"

void ks_logs_serve(ks_req_t *r, ks_target_t *t);
/* A published change (the controller's observer, store lock held): wakes
 * the followers of a changed pod's logs. */
void ks_logs_observe(int rt, json_t *old, json_t *obj);
/* Wake every follower (kubesim is stopping). */
void ks_logs_stop(void);

#endif
