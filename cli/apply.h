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

/* Creates one object of a `create` list. OUT: *created, the server's
 * answer (a new reference; may stay NULL). Returns the exit code. */
typedef int (*tau_create_fn)(tau_ctx_t *ctx, json_t *obj, json_t **created, void *arg);

/* `create`: each object of `list` in turn, stopping at the first failure.
 * Human output says "KIND NAME created" (NAME: the created object's `key`,
 * else the sent one's); structured output lists what was created (one
 * object alone as itself). Returns the exit code. */
int tau_create_each(tau_ctx_t *ctx, const json_t *list, const char *kind, const char *key,
                    tau_create_fn create, void *arg);

#endif
