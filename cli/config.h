/* The client's configuration file: $XDG_CONFIG_HOME/tau/config (default
 * ~/.config/tau/config), written by `tau login`.
 *
 * Format: one "key = value" per line, '#' starts a comment. Keys: gateway,
 * token, workspace. The folder is created 0700 and the file written 0600
 * (atomically: temp file + rename), since it holds a bearer token. */
#ifndef TAU_CONFIG_H
#define TAU_CONFIG_H

#include "core/mem.h"

typedef struct tau_config_s {
    char *gateway;
    char *token;
    char *workspace;
} tau_config_t;

/* The config file path (new string; free()), or NULL when neither
 * XDG_CONFIG_HOME nor HOME is set. */
char *tau_config_path(void);

/* Read `path` into cfg (zeroed first). A missing file is not an error.
 * Returns 0, or -1 with a message in err (unreadable or malformed). Sets
 * *loose when the file is readable by group or others. */
int tau_config_load(const char *path, tau_config_t *cfg, int *loose, char *err,
                    size_t errlen) TG_MUSTCHECK;

/* Write cfg to `path` with mode 0600, creating the folder 0700. Returns 0 or
 * -1 with a message in err. */
int tau_config_save(const char *path, const tau_config_t *cfg, char *err,
                    size_t errlen) TG_MUSTCHECK;

/* Free the strings (the token is wiped first). */
void tau_config_clean(tau_config_t *cfg);

/* Free a secret string after overwriting it. NULL-safe. */
void tau_secret_free(char *s);

#endif
