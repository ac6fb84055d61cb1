/* Authentication and rate limits: the server's `before` hook.
 *
 * A bearer JWT is verified by auth/; a personal access token ("tgp_...") is
 * looked up by its sha256 in PostgreSQL. Failures are 401 problems with a
 * WWW-Authenticate header that says why in general terms. Admin routes need
 * a platform admin (403 otherwise). Then each principal's token bucket is
 * charged (a stricter one for submissions); an empty one answers 429 with
 * Retry-After. */
#ifndef TG_API_AUTHN_H
#define TG_API_AUTHN_H

#include "core/config.h"
#include "http/request.h"

typedef struct tg_authn_s tg_authn_t;

/* NULL with a message when the configuration is not usable. */
tg_authn_t *tg_authn_new(const tg_config_t *cfg, char *err, size_t errlen);
void tg_authn_free(tg_authn_t *a);
/* Keep remote key sets fresh; call every few seconds. */
void tg_authn_tick(tg_authn_t *a);
/* Re-read key files (SIGHUP). */
void tg_authn_reload(tg_authn_t *a);
int tg_authn_before(tg_req_t *req, void *app);

#endif
