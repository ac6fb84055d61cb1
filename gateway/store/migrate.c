/* Forward-only migration runner. */
#include "store/migrate.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "core/log.h"
#include "core/mem.h"

#define MIGRATE_MAX_FILES 1000
#define MIGRATE_MAX_BYTES (4 * 1024 * 1024)
/* "taugate1" as a 64-bit advisory lock key */
#define MIGRATE_LOCK_KEY "8385895474398799153"

typedef struct {
    int version;
    char name[256];
} migrate_file_t;

static int migrate_name_ok(const char *n)
{
    size_t len = strlen(n);
    if (len < 10 || len >= 256 || strcmp(n + len - 4, ".sql") != 0)
        return 0;
    for (int i = 0; i < 4; i++)
        if (!isdigit((unsigned char)n[i]))
            return 0;
    if (n[4] != '_')
        return 0;
    for (size_t i = 5; i < len - 4; i++)
        if (!(islower((unsigned char)n[i]) || isdigit((unsigned char)n[i]) || n[i] == '_'))
            return 0;
    return 1;
}

static int migrate_cmp(const void *a, const void *b)
{
    return ((const migrate_file_t *)a)->version - ((const migrate_file_t *)b)->version;
}

static char *migrate_read(const char *dir, const char *name, size_t *len, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read migration %s", path);
        return NULL;
    }
    char *buf = tg_xmalloc(MIGRATE_MAX_BYTES + 1);
    size_t n = fread(buf, 1, MIGRATE_MAX_BYTES + 1, f);
    fclose(f);
    if (n > MIGRATE_MAX_BYTES) {
        snprintf(err, errlen, "migration %s is larger than %d bytes", name, MIGRATE_MAX_BYTES);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int migrate_ok(PGresult *r, char *err, size_t errlen, const char *what)
{
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        return 1;
    snprintf(err, errlen, "%s: %s", what, PQresultErrorMessage(r));
    size_t n = strlen(err);
    while (n && err[n - 1] == '\n')
        err[--n] = '\0';
    return 0;
}

static int migrate_list(const char *dir, migrate_file_t **out, int *count, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot open migrations folder %s", dir);
        return -1;
    }
    migrate_file_t *files = tg_xcalloc(MIGRATE_MAX_FILES, sizeof(*files));
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MIGRATE_MAX_FILES) {
        if (e->d_name[0] == '.')
            continue;
        if (!migrate_name_ok(e->d_name)) {
            tg_log_warn("migrate", "ignoring %s: not named NNNN_name.sql", e->d_name);
            continue;
        }
        files[n].version = atoi(e->d_name);
        snprintf(files[n].name, sizeof(files[n].name), "%s", e->d_name);
        n++;
    }
    closedir(d);
    qsort(files, (size_t)n, sizeof(*files), migrate_cmp);
    for (int i = 1; i < n; i++)
        if (files[i].version == files[i - 1].version) {
            snprintf(err, errlen, "two migrations share version %04d: %s and %s", files[i].version,
                     files[i - 1].name, files[i].name);
            free(files);
            return -1;
        }
    *out = files;
    *count = n;
    return 0;
}

static tg_rc_e migrate_apply_one(PGconn *pg, const migrate_file_t *f, const char *sql,
                                 const char *sum, char *err, size_t errlen)
{
    PGresult *r = PQexec(pg, "BEGIN");
    int ok = migrate_ok(r, err, errlen, "BEGIN");
    PQclear(r);
    if (!ok)
        return TG_EUNAVAILABLE;
    char what[300];
    snprintf(what, sizeof(what), "migration %s failed", f->name);
    r = PQexec(pg, sql);
    ok = migrate_ok(r, err, errlen, what);
    PQclear(r);
    if (ok) {
        char ver[16];
        snprintf(ver, sizeof(ver), "%d", f->version);
        const char *vals[] = {ver, f->name, sum};
        r = PQexecParams(pg,
                         "INSERT INTO schema_migrations (version, name, checksum) "
                         "VALUES ($1::int, $2, $3)",
                         3, NULL, vals, NULL, NULL, 0);
        ok = migrate_ok(r, err, errlen, "recording the migration");
        PQclear(r);
    }
    r = PQexec(pg, ok ? "COMMIT" : "ROLLBACK");
    if (ok)
        ok = migrate_ok(r, err, errlen, "COMMIT");
    PQclear(r);
    return ok ? TG_OK : TG_EINTERNAL;
}

tg_rc_e tg_migrate(PGconn *pg, const char *dir, int *applied, char *err, size_t errlen)
{
    tg_rc_e rc = TG_EINTERNAL;
    migrate_file_t *files = NULL;
    PGresult *have = NULL;
    int nfiles = 0, locked = 0;
    *applied = 0;

    if (migrate_list(dir, &files, &nfiles, err, errlen) != 0)
        return TG_EINVAL;

    /* "relation already exists, skipping" notices are expected on every start */
    PQclear(PQexec(pg, "SET client_min_messages TO warning"));
    PGresult *r = PQexec(pg, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")");
    locked = migrate_ok(r, err, errlen, "taking the migration lock");
    PQclear(r);
    if (!locked) {
        rc = TG_EUNAVAILABLE;
        goto out;
    }
    r = PQexec(pg, "CREATE TABLE IF NOT EXISTS schema_migrations ("
                   " version integer PRIMARY KEY,"
                   " name text NOT NULL,"
                   " checksum text NOT NULL,"
                   " applied_at timestamptz NOT NULL DEFAULT now())");
    int ok = migrate_ok(r, err, errlen, "creating schema_migrations");
    PQclear(r);
    if (!ok)
        goto out;
    have = PQexec(pg, "SELECT version, name, checksum FROM schema_migrations ORDER BY version");
    if (!migrate_ok(have, err, errlen, "reading schema_migrations"))
        goto out;

    for (int i = 0; i < nfiles; i++) {
        size_t len = 0;
        char *sql = migrate_read(dir, files[i].name, &len, err, errlen);
        if (!sql) {
            rc = TG_EINVAL;
            goto out;
        }
        char sum[65];
        tg_sha256_hex(sql, len, sum);
        const char *applied_sum = NULL;
        for (int row = 0; row < PQntuples(have); row++)
            if (atoi(PQgetvalue(have, row, 0)) == files[i].version)
                applied_sum = PQgetvalue(have, row, 2);
        if (applied_sum) {
            free(sql);
            if (strcmp(applied_sum, sum) != 0) {
                snprintf(err, errlen,
                         "migration %s was edited after it was applied (recorded sha256 %.12s…, "
                         "file has %.12s…); add a new migration instead",
                         files[i].name, applied_sum, sum);
                rc = TG_ECONFLICT;
                goto out;
            }
            continue;
        }
        rc = migrate_apply_one(pg, &files[i], sql, sum, err, errlen);
        free(sql);
        if (rc != TG_OK)
            goto out;
        tg_log_info("migrate", "applied %s", files[i].name);
        (*applied)++;
    }
    for (int row = 0; row < PQntuples(have); row++) {
        int v = atoi(PQgetvalue(have, row, 0));
        int known = 0;
        for (int i = 0; i < nfiles; i++)
            known |= files[i].version == v;
        if (!known)
            tg_log_warn("migrate", "the database has migration %s, which this build lacks",
                        PQgetvalue(have, row, 1));
    }
    rc = TG_OK;
out:
    PQclear(have);
    if (locked) {
        r = PQexec(pg, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")");
        PQclear(r);
    }
    free(files);
    return rc;
}
