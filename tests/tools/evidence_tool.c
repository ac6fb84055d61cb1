/* evidence_tool: seal and verify evidence records straight against a
 * database, without a gateway. For tests and for checking the sealer before
 * the engine runs it.
 *
 *   evidence_tool seal   DATABASE_URL KEY_PEM [LOG_GRACE_S]   seal every due run
 *   evidence_tool seal-run DATABASE_URL KEY_PEM RUN_ID       seal one ended run now
 *   evidence_tool verify DATABASE_URL KEY_PEM RUN_ID [--allow-pruned]
 *   evidence_tool show   DATABASE_URL RUN_ID                 print the live record
 *   evidence_tool keyid  KEY_PEM                             print the key id
 *
 * KEY_PEM may be a private or a public key for verify. Exit status of
 * verify: 0 verified, 1 a difference, 2 not sealed, 3 trouble.
 *
 * Build: cc $(CFLAGS) -Igateway tests/tools/evidence_tool.c build/libtaugate.a $(LDLIBS) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "evidence/signer.h"
#include "evidence/sealer.h"
#include "store/evidence.h"
#include "evidence/verify.h"
#include "store/pool.h"

static tg_db_pool_t *tool_pool(const char *url)
{
    tg_db_pool_config_t pc = {
        .conninfo = url, .size = 1, .checkout_timeout_ms = 5000, .connect_timeout_s = 5};
    return tg_db_pool_new(&pc);
}

static int tool_seal(const char *url, const char *key_pem, long grace)
{
    char err[512];
    tg_signer_t *s = tg_signer_load(key_pem, err, sizeof(err));
    if (!s) {
        fprintf(stderr, "evidence_tool: %s\n", err);
        return 3;
    }
    tg_db_pool_t *pool = tool_pool(url);
    int total = 0, n;
    while ((n = tg_evidence_seal_pending(pool, NULL, s, grace)) > 0)
        total += n;
    printf("%d\n", total);
    tg_db_pool_free(pool);
    tg_signer_free(s);
    return n < 0 ? 3 : 0;
}

static int tool_with_conn(const char *url, const char *key_pem, const char *run_id, int verify,
                          unsigned flags)
{
    char err[512], why[1024];
    tg_signer_t *s = verify ? tg_signer_load_public(key_pem, err, sizeof(err))
                            : tg_signer_load(key_pem, err, sizeof(err));
    if (!s) {
        fprintf(stderr, "evidence_tool: %s\n", err);
        return 3;
    }
    tg_db_pool_t *pool = tool_pool(url);
    tg_db_conn_t *conn = NULL;
    int status = 3;
    if (tg_db_checkout(pool, &conn) != TG_OK) {
        fprintf(stderr, "evidence_tool: cannot reach the database\n");
        goto out;
    }
    tg_rc_e rc;
    if (verify) {
        rc = tg_evidence_verify(conn, run_id, s, flags, stdout, why, sizeof(why));
        status = rc == TG_OK ? 0 : rc == TG_ECONFLICT ? 1 : rc == TG_ENOTFOUND ? 2 : 3;
        if (rc != TG_OK && rc != TG_ECONFLICT)
            fprintf(stderr, "evidence_tool: %s\n", why);
    } else {
        rc = tg_evidence_seal_run(conn, s, run_id);
        status = rc == TG_OK ? 0 : 1;
        if (rc != TG_OK)
            fprintf(stderr, "evidence_tool: not sealed (%s)\n", tg_rc_slug(rc));
    }
out:
    tg_db_release(pool, conn);
    tg_db_pool_free(pool);
    tg_signer_free(s);
    return status;
}

static int tool_show(const char *url, const char *run_id)
{
    tg_db_pool_t *pool = tool_pool(url);
    tg_db_conn_t *conn = NULL;
    json_t *rec = NULL;
    int status = 3;
    if (tg_db_checkout(pool, &conn) == TG_OK && tg_evidence_build(conn, run_id, &rec) == TG_OK) {
        char *text = tg_evidence_canonical(rec, NULL);
        printf("%s\n", text ? text : "null");
        free(text);
        status = 0;
    }
    json_decref(rec);
    tg_db_release(pool, conn);
    tg_db_pool_free(pool);
    return status;
}

int main(int argc, char **argv)
{
    tg_log_set_level(TG_LOG_WARN);
    if (argc == 3 && !strcmp(argv[1], "keyid")) {
        char err[512];
        tg_signer_t *s = tg_signer_load_public(argv[2], err, sizeof(err));
        if (!s) {
            fprintf(stderr, "evidence_tool: %s\n", err);
            return 3;
        }
        printf("%s\n", tg_signer_key_id(s));
        tg_signer_free(s);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "show"))
        return tool_show(argv[2], argv[3]);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "seal"))
        return tool_seal(argv[2], argv[3], argc == 5 ? atol(argv[4]) : 60);
    if (argc == 5 && !strcmp(argv[1], "seal-run"))
        return tool_with_conn(argv[2], argv[3], argv[4], 0, 0);
    if ((argc == 5 || argc == 6) && !strcmp(argv[1], "verify"))
        return tool_with_conn(
            argv[2], argv[3], argv[4], 1,
            argc == 6 && !strcmp(argv[5], "--allow-pruned") ? TG_EVIDENCE_VERIFY_ALLOW_PRUNED : 0);
    fprintf(stderr, "usage: evidence_tool seal URL KEY [GRACE_S] | seal-run URL KEY RUN |"
                    " verify URL KEY RUN [--allow-pruned] | show URL RUN | keyid KEY\n");
    return 3;
}
