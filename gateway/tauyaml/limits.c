/* Default limits for tau.yaml submissions (see limits.h for the reasons). */
#include "tauyaml/limits.h"

void tg_tauyaml_limits_default(tg_tauyaml_limits_t *l)
{
    l->max_doc_bytes = 1024 * 1024;
    l->max_depth = 64;
    l->max_nodes = 20000;
    l->max_key_bytes = 1024;
    l->max_errors = 200;
    l->max_env_value_bytes = 64 * 1024;
    l->max_env_total_bytes = 128 * 1024;
    /* The script reaches the pod base64-encoded in one env var; Linux caps a
     * single env string at 128 KiB (MAX_ARG_STRLEN), so 64 KiB of script
     * (~87 KiB encoded) leaves headroom. */
    l->max_script_bytes = 64 * 1024;
    l->max_requirements_bytes = 16 * 1024;
    l->max_project_bytes = 45 * 1024;
    l->max_files = 16;
}
