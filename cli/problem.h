/* Printing the gateway's RFC 9457 problem+json answers.
 *
 *   tau: error: <detail> (HTTP <status> <title>)
 *   <FILE>:<LINE>:<COLUMN>: <path>: <message>     one per errors[] entry
 *
 * FILE is the tau.yaml path the user gave; without one (or without a line)
 * entries print as "  <path>: <message>". The format of an entry lives in
 * tau_problem_entry so that validate's warnings print the same way. */
#ifndef TAU_PROBLEM_H
#define TAU_PROBLEM_H

#include <jansson.h>
#include <stdio.h>

#include "http.h"
#include "tau.h"

/* Print an error answer (problem+json or anything else) on stderr. */
void tau_problem_print(const tau_ctx_t *ctx, const tau_http_resp_t *resp, const char *file);

/* Print one {path, line, column, message} entry (borrowed) to `out`, with an
 * optional severity prefix ("warning") after the position. */
void tau_problem_entry(FILE *out, const json_t *e, const char *file, const char *severity);

#endif
