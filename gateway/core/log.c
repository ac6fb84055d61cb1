/* Structured logging to stderr, one JSON object per line, written atomically. */
#include "core/log.h"

#include "core/ids.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Per process: one log (stderr) and one level for it, set from the config
 * before any thread starts and on SIGHUP, whatever context logs. */
static volatile int log_level = TG_LOG_INFO;
static const char *const log_names[] = {"debug", "info", "warn", "error", "off"};

void tg_log_set_level(tg_log_level_e level)
{
    log_level = level;
}

tg_log_level_e tg_log_get_level(void)
{
    return (tg_log_level_e)log_level;
}

int tg_log_level_parse(const char *s)
{
    for (size_t i = 0; i < TG_ARRAY_LEN(log_names); i++)
        if (strcmp(s, log_names[i]) == 0)
            return (int)i;
    return -1;
}

int tg_log_enabled(tg_log_level_e level)
{
    return (int)level >= log_level && log_level != TG_LOG_OFF;
}

void tg_log_json_line(const char *json, size_t len)
{
    /* One write() per line keeps lines from different threads whole. */
    char stackbuf[4096];
    if (len + 1 <= sizeof(stackbuf)) {
        memcpy(stackbuf, json, len);
        stackbuf[len] = '\n';
        ssize_t w = write(STDERR_FILENO, stackbuf, len + 1);
        (void)w;
        return;
    }
    char *p = tg_xmalloc(len + 1);
    memcpy(p, json, len);
    p[len] = '\n';
    ssize_t w = write(STDERR_FILENO, p, len + 1);
    (void)w;
    free(p);
}

void tg_log(tg_log_level_e level, const char *component, const char *fmt, ...)
{
    if (!tg_log_enabled(level))
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    char ts[40];
    tg_time_rfc3339(tg_now_wall_us(), ts, sizeof(ts));

    json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "time", ts, "level",
                          log_names[level < TG_LOG_OFF ? level : TG_LOG_ERROR], "component",
                          component ? component : "main", "msg", msg);
    if (!o) /* msg was not valid UTF-8; log what we can */
        o = json_pack("{s:s, s:s, s:s, s:s}", "time", ts, "level", log_names[level], "component",
                      component ? component : "main", "msg", "(unprintable message)");
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (s) {
        tg_log_json_line(s, strlen(s));
        free(s);
    }
    json_decref(o);
}
