/* RFC 9457 problem details: application/problem+json answers.
 *
 * Every error taugate returns goes through here, so the shape is the same
 * everywhere: a stable `type` URI built from the status slug, `title`,
 * `status`, `detail`, `instance` (the request id) and, for validation
 * problems, `errors[]` of {path, line, column, message}. */
#ifndef TG_HTTP_PROBLEM_H
#define TG_HTTP_PROBLEM_H

#include <jansson.h>

#include "core/mem.h"
#include "http/request.h"

#define TG_PROBLEM_TYPE_BASE "https://taugate.dev/problems/"

/* Answer with a problem. `errors` (may be NULL) is stolen. */
void tg_problem(tg_req_t *req, tg_rc_e rc, json_t *errors, const char *fmt, ...) TG_PRINTF(4, 5);
/* Same, with a specific problem type slug instead of the status's. */
void tg_problem_typed(tg_req_t *req, tg_rc_e rc, const char *type_slug, json_t *errors,
                      const char *fmt, ...) TG_PRINTF(5, 6);
/* Same, for an HTTP status no tg_rc_e stands for (408, 414, 417, 431,
 * 501, 505: answers about the request's framing). */
void tg_problem_http(tg_req_t *req, unsigned status, const char *slug, const char *title,
                     const char *fmt, ...) TG_PRINTF(5, 6);
/* One {path, line, column, message} entry; line/column 0 are left out. New reference. */
json_t *tg_problem_error(const char *path, int line, int column, const char *message);

#endif
