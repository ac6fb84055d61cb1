/* The pure parts of log collection: kubelet timestamps, the resume rule and
 * chunk batching. No I/O here, so the unit tests cover them exactly.
 *
 * Stored form. A chunk's content is the kubelet's lines verbatim as asked
 * with timestamps=true: "<RFC3339Nano timestamp> <text>\n" per line, the
 * text made valid UTF-8 (invalid bytes and NULs become U+FFFD). The read
 * API strips the timestamps unless asked to keep them.
 *
 * The resume rule. The kubelet returns lines whose timestamp is >= sinceTime
 * and, within one container, in the order they were written. After a
 * restart (or when another replica takes a container over) the collector
 * reads the newest stored lines of that container: T = the timestamp of the
 * last stored line, k = how many stored lines at the end carry exactly T.
 * It asks for sinceTime = T rounded down to the second, and then drops
 *   - every line whose timestamp is < T,
 *   - the first k lines whose timestamp is == T (those are the k stored),
 * and keeps everything after that, including further lines at exactly T.
 * Comparisons use the full nanosecond timestamp parsed from the text (the
 * database columns first_at/last_at only keep microseconds). A line
 * without a parseable timestamp before the resume point is dropped; after
 * it, kept. Nothing is stored twice and nothing after T is lost, as long as
 * the kubelet still has the lines.
 *
 * Batching. Lines go into a batch until it holds max_bytes or its first line
 * is flush_interval old; the caller then stores the batch as one chunk. A
 * batch never holds more than max_bytes + one line.
 *
 * Memory: batches own their buffers and jansson arrays (metrics and
 * checkpoints found in the batch's lines: new references kept by the batch,
 * borrowed by callers until tg_logs_batch_reset/clean). Not thread-safe:
 * one batch belongs to one follower (under its lock). */
#ifndef TG_ENGINE_LOGS_BATCH_H
#define TG_ENGINE_LOGS_BATCH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/status.h"
#include "kube/log_line.h"

/* Append s to out as valid UTF-8: invalid sequences, overlong forms,
 * surrogates and NUL bytes become U+FFFD. RET: TG_ETOOLARGE when out is
 * full. */
tg_rc_e tg_logs_utf8_append(tg_buf_t *out, const char *s, size_t len) TG_MUSTCHECK;

/* ---- the resume rule ---- */

typedef struct tg_logs_resume_s {
    int active;      /* there is a resume point */
    int64_t last_ns; /* T */
    long equal;      /* k */
    long seen_equal; /* lines at T dropped so far */
    int passed;      /* the resume point is behind us: keep everything */
} tg_logs_resume_t;

/* No resume point: every line is kept. */
void tg_logs_resume_none(tg_logs_resume_t *r);
/* Resume after T with k stored lines at T. */
void tg_logs_resume_at(tg_logs_resume_t *r, int64_t last_ns, long equal);
/* Derive T and k from stored content, newest chunk first (contents[0] is
 * the newest). Chunks are searched further back only while every line of
 * the newer ones is at T. Leaves no resume point when nothing has a
 * timestamp. */
void tg_logs_resume_from_content(tg_logs_resume_t *r, const char *const *contents,
                                 const size_t *lens, size_t n);
/* Should this line be kept? has_ts/ns from tg_logs_line_split. */
int tg_logs_resume_keep(tg_logs_resume_t *r, int has_ts, int64_t ns);

/* ---- batching ---- */

typedef struct tg_logs_batch_s {
    tg_buf_t content;     /* the chunk text being built */
    long lines;           /* lines in content */
    int has_ts;           /* first_ns/last_ns are set */
    int64_t first_ns;     /* first line's timestamp */
    int64_t last_ns;      /* last line's timestamp */
    uint64_t opened_us;   /* monotonic time of the first line; 0 when empty */
    size_t max_bytes;     /* flush threshold */
    json_t *metrics;      /* [{name, step, at, value, raw}] from TAU_METRIC lines */
    json_t *checkpoints;  /* [{path, step, at}] from TAU_CHECKPOINT lines */
    long invalid_markers; /* marker lines refused (for the metrics counter) */
} tg_logs_batch_t;

void tg_logs_batch_init(tg_logs_batch_t *b, size_t max_bytes, size_t max_line_bytes);
void tg_logs_batch_clean(tg_logs_batch_t *b);
/* Empty the batch (after it was stored). */
void tg_logs_batch_reset(tg_logs_batch_t *b);
/* Add one kubelet line (with its timestamp, without '\n'); its text is made
 * valid UTF-8 and parsed for markers. now_us: monotonic µs.
 * RET: TG_OK, or TG_ETOOLARGE when the batch is at its hard ceiling (the
 * caller must store it first). */
tg_rc_e tg_logs_batch_add(tg_logs_batch_t *b, const char *line, size_t len,
                          uint64_t now_us) TG_MUSTCHECK;
/* Is the batch due: full, or non-empty and older than interval_us? */
int tg_logs_batch_due(const tg_logs_batch_t *b, uint64_t now_us, uint64_t interval_us);

#endif
