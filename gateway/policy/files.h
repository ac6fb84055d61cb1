/* Policy file texts: what a snapshot was built from.
 *
 * The files of policy_dir are read once per reload and kept with the
 * snapshot they built, so a change made through the admin API rebuilds the
 * policy from the same file texts (files are re-read only on SIGHUP or
 * POST /v1/admin/policies:reload, never as a side effect). */
#ifndef TG_POLICY_FILES_H
#define TG_POLICY_FILES_H

#include <jansson.h>
#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"

#define TG_POLICY_MAX_FILE_BYTES (1u << 20)
#define TG_POLICY_MAX_FILES      64

/* Policy file texts, as read from a directory (or given by a test). */
typedef struct tg_policy_file_s {
    char *name; /* owned: shown in errors and provenance ("default.yaml") */
    char *text; /* owned, NUL-terminated */
    size_t len;
} tg_policy_file_t;

typedef struct tg_policy_files_s {
    tg_policy_file_t *v; /* owned */
    size_t n;
} tg_policy_files_t;

/* Read every *.yaml / *.yml regular file directly in `dir` (not in
 * subfolders, not hidden), sorted by name. Problems (a missing folder, a
 * file too large, too many files) are appended to `errors` (borrowed array)
 * and make it return TG_EINVAL; `out` is then still cleanable. */
tg_rc_e tg_policy_files_read(const char *dir, tg_policy_files_t *out, json_t *errors) TG_MUSTCHECK;
/* Add one file from memory (copies name and text). */
void tg_policy_files_add(tg_policy_files_t *f, const char *name, const char *text, size_t len);
/* Copy every file of `src` into `dst` (which must be empty or initialised). */
void tg_policy_files_copy(tg_policy_files_t *dst, const tg_policy_files_t *src);
void tg_policy_files_clean(tg_policy_files_t *f);

#endif
