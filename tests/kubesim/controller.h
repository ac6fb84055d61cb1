/* The controller loop: one thread running the controllers (garbage
 * collector, KubeRay, Kueue, Job, scheduler, kubelet) over the work their
 * observers queued from store changes and timers (work.h). */
#ifndef KS_CONTROLLER_H
#define KS_CONTROLLER_H

/* Hook the controllers to the store; before any object is created. */
void ks_controller_init(void);
int ks_controller_start(void);
void ks_controller_stop(void);
/* Free the controllers' indexes and queues (after stop, before the store). */
void ks_controller_shutdown(void);
/* Rounds run so far (stats). */
unsigned long ks_controller_passes(void);

#endif
