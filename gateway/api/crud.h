/* Generic REST handlers for admin resources kept one per row (store/crud.h).
 *
 * A route names a tg_crud_t in its `arg`; the five handlers then list,
 * create, read, patch and delete that resource with the same conventions
 * everywhere: 422 listing every field problem, 409 on duplicates and on
 * deleting what is still referenced, 404 for what does not exist, cursor
 * pagination for lists, Location on create. */
#ifndef TG_API_CRUD_H
#define TG_API_CRUD_H

#include <jansson.h>

#include "api/fields.h"
#include "http/request.h"
#include "store/crud.h"

/* Extra checks a field table cannot say; append to errors, return the count.
 * `req` gives the checks the application (its configuration). */
typedef int (*tg_crud_check_fn)(tg_req_t *req, const json_t *body, int partial, json_t *errors);
/* Runs before a delete; returns 0 to go on, or answers (409, 503...) and
 * returns non-zero. `parent` is NULL for top-level resources. It takes the
 * database with tg_app_db_or_reply and may give it back (tg_app_db_release)
 * before asking the cluster; the delete takes its connection afterwards. */
typedef int (*tg_crud_before_delete_fn)(tg_req_t *req, const char *parent, const char *key);

typedef struct tg_crud_s {
    const char *kind;         /* "compute profile", for messages */
    const char *collection;   /* "/v1/admin/profiles"; nested: "/v1/admin/workspaces/%s/queues" */
    const char *parent_param; /* "ws" for nested resources, else NULL */
    const char *key_param;    /* the route parameter holding the key */
    const char *key_field;    /* the row field holding the key */
    const tg_field_t *fields;
    int nfields;
    const char *const *immutable; /* NULL-terminated: fields a PATCH may not change */
    tg_crud_check_fn check;
    tg_crud_stmts_t *stmts;
    const char *in_use;                     /* 409 detail when a delete is refused */
    const char *bad_ref;                    /* 422 detail when an insert names something missing */
    tg_crud_before_delete_fn before_delete; /* optional guard (e.g. queue in use) */
    int kueue;                              /* a change is carried to the cluster: kick */
} tg_crud_t;

void tg_crud_list(tg_req_t *req);
void tg_crud_create(tg_req_t *req);
void tg_crud_get(tg_req_t *req);
void tg_crud_patch(tg_req_t *req);
void tg_crud_delete(tg_req_t *req);

#endif
