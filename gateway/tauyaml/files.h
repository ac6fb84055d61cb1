/* Files submitted with a tau.yaml: the entrypoint script, an optional
 * requirements.txt, and for run.working_dir the project archive.
 *
 * The tau CLI sends files by name: the entrypoint under the name the spec
 * gives it ("train.py", "scripts/train.sh"), requirements under
 * "requirements.txt", and the run.working_dir project as a zip archive named
 * TG_TAUYAML_PROJECT_ARCHIVE (at most 45 KiB by default, as TauGrid). Ray
 * unpacks that archive as the job's working_dir; a zip holding one top-level
 * directory is accepted too. */
#ifndef TG_TAUYAML_FILES_H
#define TG_TAUYAML_FILES_H

#include <jansson.h>
#include <stddef.h>

#include "core/status.h"
#include "tauyaml/diag.h"
#include "tauyaml/limits.h"
#include "tauyaml/semantic.h"

#define TG_TAUYAML_PROJECT_ARCHIVE "_tau_project.zip"
#define TG_TAUYAML_REQUIREMENTS    "requirements.txt"

typedef struct tg_tauyaml_file_s {
    const char *name;
    const unsigned char *data;
    size_t len;
} tg_tauyaml_file_t;

typedef struct tg_tauyaml_files_s {
    tg_tauyaml_file_t *v;
    size_t n;
    int owned; /* set by tg_tauyaml_files_from_json: names and data are heap copies */
} tg_tauyaml_files_t;

/* The file called `name`, or NULL. `files` may be NULL. Borrowed. */
const tg_tauyaml_file_t *tg_tauyaml_files_find(const tg_tauyaml_files_t *files, const char *name);

/* Decode a JSON object {"<name>": "<base64>", ...} (borrowed) into `out`
 * (owned copies; release with tg_tauyaml_files_clean). Bad base64 or a non-string
 * value adds an error with path files["<name>"] and returns TG_EUNPROCESSABLE. */
tg_rc_e tg_tauyaml_files_from_json(const json_t *obj, tg_tauyaml_files_t *out,
                                   tg_tauyaml_diag_t *diag);
void tg_tauyaml_files_clean(tg_tauyaml_files_t *files);

/* The file checks: names, count and sizes; entrypoint present; project archive
 * present, a zip, within the limit and holding the entrypoint; shebang rule
 * for Jobs. Unused files get a warning. */
void tg_tauyaml_files_check(const json_t *root, const tg_tauyaml_facts_t *f,
                            const tg_tauyaml_files_t *files, const tg_tauyaml_limits_t *limits,
                            tg_tauyaml_diag_t *diag);

/* Digests of the files the run uses, for the resolved config: a new object
 * {"entrypoint"|"requirements"|"project": {"name","size","sha256"}} (keys only
 * for files present). */
json_t *tg_tauyaml_files_describe(const tg_tauyaml_facts_t *f, const tg_tauyaml_files_t *files);

/* Append the entry names of a zip archive to `names` (a JSON array).
 * Returns 0, or -1 when the archive is malformed. */
int tg_tauyaml_zip_names(const unsigned char *data, size_t len, json_t *names);

#endif
