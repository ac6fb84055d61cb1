/* OpenAPI v3: the saved Kubernetes 1.32 documents served verbatim, and one
 * document per other group/version generated from the type table (CRD
 * schemas, or just the envelope for built-ins without a saved document),
 * so that kubectl apply finds fieldValidation and validates server-side. */
#ifndef KS_OPENAPI_H
#define KS_OPENAPI_H

#include <jansson.h>

#include "server.h"

/* Handle any /openapi/... path (404 for v2 and unknown ones). */
void ks_openapi_serve(ks_req_t *r);
/* The CRD's openAPIV3Schema for a served CR type (borrowed, loaded once),
 * or NULL for built-ins or when the schema files are missing. */
json_t *ks_openapi_crd_schema(int rt);
/* Printer columns (additionalPrinterColumns) of a CRD, borrowed or NULL. */
json_t *ks_openapi_crd_columns(int rt);
void ks_openapi_free(void);

#endif
