/* The watch event ring behind ks_events_since (store.h): each published
 * change serialised once into the line watchers send, shared by reference
 * count, the oldest dropped when the window (--watch-window) is full.
 * Lock held for every call. */
#ifndef KS_EVRING_H
#define KS_EVRING_H

#include <jansson.h>
#include <stdint.h>

void ks_ring_init(size_t cap);
void ks_ring_free(void);
/* Append the change of obj (type ks_evtype_e) at resourceVersion rv. */
void ks_ring_publish(uint64_t rv, int type, int rt, json_t *obj);

#endif
