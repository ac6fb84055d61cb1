/* Forward-only schema migrations.
 *
 * migrations/NNNN_name.sql are applied in order, each in its own transaction
 * and recorded in schema_migrations with the sha256 of its text. Concurrent
 * migrators (several replicas starting at once) are serialised by a
 * PostgreSQL advisory lock. Editing a file that was already applied is an
 * error: a migration, once run, is history. */
#ifndef TG_STORE_MIGRATE_H
#define TG_STORE_MIGRATE_H

#include <libpq-fe.h>
#include <stddef.h>

#include "core/status.h"

/* Apply what is pending. *applied gets the number applied now. On failure
 * err says which file and why; nothing of the failing file is kept. */
tg_rc_e tg_migrate(PGconn *pg, const char *dir, int *applied, char *err, size_t errlen);

#endif
