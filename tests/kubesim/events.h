/* core/v1 Events about objects, as controllers record them. */
#ifndef KS_EVENTS_H
#define KS_EVENTS_H

#include <jansson.h>

/* Record an event about obj (borrowed) of type rt; lock held. */
void ks_event_emit(int rt, json_t *obj, const char *type, const char *reason, const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));

#endif
