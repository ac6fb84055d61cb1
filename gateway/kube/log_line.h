/* Kubelet log lines (GET .../pods/{pod}/log?timestamps=true): each line is
 * an RFC 3339 timestamp, one space, the text. Shared by the engine's log
 * collector (engine/logs.h) and the log routes (api/run_logs.h). Pure
 * functions, thread-safe. */
#ifndef TG_KUBE_LOG_LINE_H
#define TG_KUBE_LOG_LINE_H

#include <stddef.h>
#include <stdint.h>

/* Parse an RFC 3339 timestamp ("2026-01-02T03:04:05.123456789Z", any number
 * of fraction digits, 'Z' or a numeric offset) at the start of s into
 * nanoseconds since the epoch. RET: the length of the timestamp text, or 0
 * when s does not start with one. */
size_t tg_logs_ts_parse(const char *s, size_t len, int64_t *ns);

/* Split a kubelet line: timestamp, one space, text. RET: 1 with *ns, *text and *tlen set,
 * or 0 (no timestamp: *text is the whole line). */
int tg_logs_line_split(const char *line, size_t len, int64_t *ns, const char **text, size_t *tlen);

/* "2026-01-02T03:04:05Z": ns rounded down to the second (for sinceTime). */
void tg_logs_ts_format_s(int64_t ns, char *out, size_t outlen);
/* "2026-01-02T03:04:05.123456789Z". */
void tg_logs_ts_format_ns(int64_t ns, char *out, size_t outlen);

#endif
