/* Group commit for the audit trail. Every mutating request must be on the
 * record before it is answered, yet a commit per request would make the
 * audit row cost as much as the request itself. Requests hand their entry
 * to one writer thread and wait; the writer stores everything that arrived
 * meanwhile in one statement and one commit, then wakes them all. Under
 * load a batch holds many entries; alone, a request waits for exactly one
 * insert, as before. The writer has its own connection, so it never waits
 * on the request pool that the waiting requests hold. */
#ifndef TG_STORE_AUDIT_WRITER_H
#define TG_STORE_AUDIT_WRITER_H

#include "store/audit.h"

typedef struct tg_audit_writer_s tg_audit_writer_t;

/* NULL when the thread cannot be started. */
tg_audit_writer_t *tg_audit_writer_start(const tg_db_pool_config_t *db);
/* Write what is queued, then stop (no appends may be running). */
void tg_audit_writer_stop(tg_audit_writer_t *w);

/* Record one entry; returns once it is committed, or the error that kept
 * its batch out. */
tg_rc_e tg_audit_writer_append(tg_audit_writer_t *w, const tg_audit_entry_t *e) TG_MUSTCHECK;

#endif
