/* The controller loop: one thread running every controller pass (garbage
 * collector, Kueue, KubeRay, Job, scheduler, kubelet) whenever the store
 * changes, and at least every 100 ms for timers. */
#ifndef KS_CONTROLLER_H
#define KS_CONTROLLER_H

int ks_controller_start(void);
void ks_controller_stop(void);
/* Passes run so far (stats). */
unsigned long ks_controller_passes(void);

#endif
