/* The watch event ring behind ks_events_since (store.h): each published
 * change serialised once into the line watchers send, shared by reference
 * count, the oldest dropped when the window is full: it keeps at most
 * --watch-window events and --watch-window-mib of their text (but always
 * the newest 1,000 events), as a real watch cache is bounded.
 *
 * The ring has its own small lock, so that watchers read and wait without
 * the store lock and never hold up the API or the controllers. The store
 * publishes with its lock held (taking the ring's inside it). */
#ifndef KS_EVRING_H
#define KS_EVRING_H

#include <jansson.h>
#include <stdint.h>

typedef struct ks_evline_s ks_evline_t;

void ks_ring_init(size_t cap, size_t max_bytes);
void ks_ring_free(void);
/* Append the change of obj (type ks_evtype_e) at resourceVersion rv.
 * Returns its line with a reference for the caller: the store keeps an
 * object's last line as its text once it is cold (store.h), so the window
 * and the cold objects share their text. Store lock held. */
ks_evline_t *ks_ring_publish(uint64_t rv, int type, int rt, json_t *obj);
/* A line for obj outside the ring (an object restored from a state file
 * has none); one reference. Store lock held. */
ks_evline_t *ks_evline_of(json_t *obj);
/* The object's compact JSON within the line (not NUL-terminated). */
const char *ks_evline_object(const ks_evline_t *line, size_t *len);
void ks_evline_release(ks_evline_t *line);
/* Wake the watchers waiting in ks_ring_wait: after publishing, or to make
 * them look at their own state (stream closed, shutdown). */
void ks_ring_notify(void);
/* Wait up to secs for an event newer than rv, or a notify; returns 1 when
 * there is one. */
int ks_ring_wait(uint64_t rv, double secs);
/* Start the window at rv (a restored state): watches from an older
 * resourceVersion get 410 Gone, as after an API server restart. */
void ks_ring_restart(uint64_t rv);
/* The newest published resourceVersion the ring holds. */
uint64_t ks_ring_last_rv(void);

#endif
