/* Limits for tau.yaml submissions.
 *
 * Every bound the spec pipeline enforces lives here so the daemon can set them
 * from its config table and tests can shrink them. Values of 0 are not
 * "unlimited": call tg_tauyaml_limits_default() first, then override. */
#ifndef TG_TAUYAML_LIMITS_H
#define TG_TAUYAML_LIMITS_H

#include <stddef.h>

typedef struct tg_tauyaml_limits_s {
    size_t max_doc_bytes;          /* YAML text size (1 MiB) */
    unsigned max_depth;            /* nesting of mappings/sequences (64) */
    size_t max_nodes;              /* scalars + mappings + sequences (20000) */
    size_t max_key_bytes;          /* one mapping key (1024) */
    size_t max_errors;             /* errors kept before "too many errors" (200) */
    size_t max_env_value_bytes;    /* one literal runtime.env value (64 KiB) */
    size_t max_env_total_bytes;    /* all literal env, name + "=" + value + NUL (128 KiB) */
    size_t max_script_bytes;       /* entrypoint script (64 KiB; it travels base64 in env) */
    size_t max_requirements_bytes; /* requirements.txt (16 KiB) */
    size_t max_project_bytes;      /* run.working_dir project archive (45 KiB, as TauGrid) */
    size_t max_files;              /* submitted files (16) */
} tg_tauyaml_limits_t;

/* Fill `l` with the documented defaults above. */
void tg_tauyaml_limits_default(tg_tauyaml_limits_t *l);

#endif
