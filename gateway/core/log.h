/* Structured logging: one JSON object per line on stderr.
 *
 * Never pass secrets (tokens, DSNs with passwords, signing keys) to these
 * functions; callers redact first (see tg_log_redact_dsn). */
#ifndef TG_CORE_LOG_H
#define TG_CORE_LOG_H

#include "core/mem.h"

typedef enum {
    TG_LOG_DEBUG = 0,
    TG_LOG_INFO,
    TG_LOG_WARN,
    TG_LOG_ERROR,
    TG_LOG_OFF
} tg_log_level_e;

void tg_log_set_level(tg_log_level_e level);
tg_log_level_e tg_log_get_level(void);
/* Parse "debug|info|warn|error|off"; returns -1 when unknown. */
int tg_log_level_parse(const char *s);
int tg_log_enabled(tg_log_level_e level);

/* Log a message; `component` names the module ("http", "store"...). */
void tg_log(tg_log_level_e level, const char *component, const char *fmt, ...) TG_PRINTF(3, 4);
/* Write one preformatted JSON object line (the access log uses this). */
void tg_log_json_line(const char *json, size_t len);

#define tg_log_debug(c, ...)                                                                       \
    do {                                                                                           \
        if (tg_log_enabled(TG_LOG_DEBUG))                                                          \
            tg_log(TG_LOG_DEBUG, (c), __VA_ARGS__);                                                \
    } while (0)
#define tg_log_info(c, ...)  tg_log(TG_LOG_INFO, (c), __VA_ARGS__)
#define tg_log_warn(c, ...)  tg_log(TG_LOG_WARN, (c), __VA_ARGS__)
#define tg_log_error(c, ...) tg_log(TG_LOG_ERROR, (c), __VA_ARGS__)

#endif
