/* Process mode: a container spec becomes argv, envp and a working
 * directory. Paths under volume mounts (and the --map-paths prefixes) are
 * rewritten to folders under the state dir, secrets and config maps are
 * resolved from the store. */
#ifndef KS_PROCENV_H
#define KS_PROCENV_H

#include <jansson.h>

typedef struct ks_procspec_s {
    char **argv;
    char **envp;
    char cwd[1100];
} ks_procspec_t;

/* Build for container spec cspec of pod in sandbox dir (lock held).
 * Returns 0; ks_procspec_clean must be called either way. */
int ks_procspec_build(ks_procspec_t *ps, json_t *pod, json_t *cspec, const char *sandbox);
void ks_procspec_clean(ks_procspec_t *ps);
/* Host folder for a volume path (for tests and tools). */
void ks_volume_dir(const char *ns, const char *volume, char *out, size_t n);

#endif
