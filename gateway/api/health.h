/* Liveness, readiness, metrics and version.
 *
 * Readiness. The gateway serves from its first second, with or without a
 * database: /healthz answers 200 as long as the process runs. Start-up work
 * that needs the database (migrations, the platform policy's database
 * rules, the background loops) happens as soon as it is reachable, and
 * until it is done every request that needs the database answers 503
 * (tg_app_db_or_reply). GET /readyz answers
 *   200 {"status": "ready", "database": "ok", "migrations": "current",
 *        "policy": "loaded", "cluster": "reachable" | "unreachable" |
 *        "unknown" | "not configured"}
 *   503 problem+json (type .../not-ready) whose errors[] name each thing
 *       missing ({path: "database" | "migrations" | "policy", message}) and
 *       whose detail states all five.
 * The cluster is reported, never required: runs are accepted and kept
 * while it is away.
 *
 * Thread-safety: any thread. */
#ifndef TG_API_HEALTH_H
#define TG_API_HEALTH_H

#include "http/request.h"

/* Start-up's progress, kept in the application context (tg_app_t.health). */
typedef struct tg_health_s tg_health_t;

/* A new one, waiting for the database. Caller frees (tg_health_free, NULL
 * is fine) after the server has stopped. */
tg_health_t *tg_health_new(void);
void tg_health_free(tg_health_t *h);
/* What start-up still waits for: component "migrations" or "policy", and
 * why (copied). */
void tg_health_starting(tg_health_t *h, const char *component, const char *why);
/* Start-up is done: the database is migrated and the policy loaded. */
void tg_health_started(tg_health_t *h);
/* 1 once start-up is done; else 0 with what it waits for in why. */
int tg_health_is_started(tg_health_t *h, char *why, size_t whylen);

void tg_api_healthz(tg_req_t *req);
void tg_api_readyz(tg_req_t *req);
void tg_api_metrics(tg_req_t *req);
void tg_api_version(tg_req_t *req);

#endif
