/* `apply`, the declarative way (kubectl apply's contract): create what is
 * missing, patch only what differs, leave the rest, and say which. */
#ifndef TAU_APPLY_H
#define TAU_APPLY_H

#include <jansson.h>

#include "cmd.h"

/* Creates the object (its 404 seen); returns the exit code. */
typedef int (*tau_apply_create_fn)(tau_ctx_t *ctx, void *arg);
/* The patch that turns `cur` (the server's object, borrowed) into the wanted
 * one: a new object, empty when nothing differs. */
typedef json_t *(*tau_apply_diff_fn)(const json_t *cur, void *arg);

/* GET `path`: a 404 (of an object, not of a missing route) creates, a 200
 * patches what `diff` returns at `path`; anything else prints the problem.
 * Prints "KIND NAME created|configured|unchanged". Returns the exit code. */
int tau_apply_one(tau_ctx_t *ctx, const char *path, const char *kind, const char *name,
                  tau_apply_create_fn create, tau_apply_diff_fn diff, void *arg);

#endif
