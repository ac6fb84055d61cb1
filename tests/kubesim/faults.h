/* Fault injection and test control under /kubesim/ (see README.md). */
#ifndef KS_FAULTS_H
#define KS_FAULTS_H

#include "server.h"

/* Maybe fail an API request; returns 1 when it did (reply or drop set). */
int ks_fault_request(ks_req_t *r);
/* Serve /kubesim/... */
void ks_fault_serve(ks_req_t *r);

#endif
