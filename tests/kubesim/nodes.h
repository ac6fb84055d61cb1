/* Node inventory: loaded from a JSON file or a default of CPU and GPU
 * nodes, created as Node objects at start. */
#ifndef KS_NODES_H
#define KS_NODES_H

/* Create the nodes (lock held). Returns 0 or -1 with a message on stderr. */
int ks_nodes_load(const char *file);
/* Faults (lock held): set a node condition, Ready or cordon state. */
int ks_node_set_condition(const char *name, const char *type, const char *status,
                          const char *reason, const char *msg);
int ks_node_set_unschedulable(const char *name, int on);

#endif
