/* Marker lines: metrics and checkpoints a workload reports on stdout/stderr.
 *
 * The log collector (engine/logs.c) hands every stored line to
 * tg_marker_parse; docs/workload-markers.md is the user-facing contract.
 *
 * Where a marker may start: at the beginning of the line text (after the
 * kubelet timestamp), after optional spaces/tabs, and after at most one
 * Ray-style origin prefix "(<anything but ')'>) " such as
 * "(RayTrainWorker pid=123, ip=10.0.0.1) ". The marker word is
 * case-sensitive and followed by at least one space or tab, then one JSON
 * object and optional trailing whitespace.
 *
 *   TAU_METRIC {json}          also:  ##tau-metric {json}
 *   TAU_CHECKPOINT {json}      also:  ##tau-checkpoint {json}
 *
 * Metric object (TauGrid's metrics.history row rules, relaxed for stdout
 * where both reserved fields are optional):
 *   "_step"       optional; a JSON integer >= 0. Anything else (a real such
 *                 as 5.0, a string, a negative number) rejects the line.
 *   "_timestamp"  optional; Unix seconds, a finite number > 0 (integer or
 *                 real, up to year 9999). Anything else rejects the line.
 *                 Absent: the kubelet timestamp of the line.
 *   other keys starting with '_' are reserved and ignored.
 *   every other key is a metric name (1..TG_MARKER_NAME_MAX bytes, no
 *   control characters) whose value is
 *     - a JSON number: stored as is;
 *     - one of the strings "NaN", "nan", "Infinity", "-Infinity", "inf",
 *       "-inf", "+inf", "+Infinity" (any letter case): stored as a
 *       non-finite value (value NULL, raw = the string as written);
 *     - anything else (other strings, booleans, null, arrays, objects): the
 *       field is skipped and counted in `skipped`.
 *   At most TG_MARKER_FIELDS_MAX fields are kept per line (more are
 *   skipped). A line without any usable field is INVALID.
 *
 * Checkpoint object:
 *   "path"  required; a non-empty string (<= TG_MARKER_PATH_MAX bytes, no
 *           control characters).
 *   "step"  optional; a JSON integer >= 0; anything else rejects the line.
 *   other keys are ignored. The time is the line's kubelet timestamp.
 *
 * Lines that carry a marker word but fail these rules are INVALID (the line
 * is still stored as log text; only the marker is dropped).
 *
 * Memory: a tg_marker_t owns its strings; tg_marker_clean frees them. No
 * jansson values cross this interface. Pure functions, thread-safe. */
#ifndef TG_ENGINE_MARKERS_H
#define TG_ENGINE_MARKERS_H

#include <stddef.h>
#include <stdint.h>

#define TG_MARKER_NAME_MAX   256
#define TG_MARKER_PATH_MAX   4096
#define TG_MARKER_FIELDS_MAX 256

typedef enum {
    TG_MARKER_NONE = 0,   /* an ordinary log line */
    TG_MARKER_METRIC,     /* metric fields in m->fields */
    TG_MARKER_CHECKPOINT, /* m->path, m->step */
    TG_MARKER_INVALID,    /* a marker word with a bad payload; m->error says why */
} tg_marker_kind_e;

typedef struct tg_marker_field_s {
    char *name;   /* owned */
    int finite;   /* 1: value holds the number; 0: non-finite, see raw */
    double value; /* when finite */
    char *raw;    /* owned; the non-finite spelling as written, else NULL */
} tg_marker_field_t;

typedef struct tg_marker_s {
    tg_marker_kind_e kind;
    int has_step;
    int64_t step;
    int64_t at_us; /* µs since the epoch: `_timestamp`, or the line's time */
    tg_marker_field_t *fields;
    size_t nfields;
    size_t skipped;    /* metric fields ignored (non-numeric, too many, bad name) */
    char *path;        /* checkpoint path (owned) */
    const char *error; /* static text when kind is TG_MARKER_INVALID */
} tg_marker_t;

/* Classify one log line's text (without the kubelet timestamp) and parse its
 * payload into *m (overwritten; clean it with tg_marker_clean whatever the
 * result). line_at_us is the line's kubelet time (µs since the epoch), the
 * default for `_timestamp`. RET: m->kind. */
tg_marker_kind_e tg_marker_parse(const char *text, size_t len, int64_t line_at_us, tg_marker_t *m);
/* Free what *m owns and zero it. NULL-safe. */
void tg_marker_clean(tg_marker_t *m);

/* Is s (len bytes) one of the accepted non-finite spellings? Sets *v to NaN,
 * +inf or -inf. Exposed for the tests and the history reader. */
int tg_marker_nonfinite(const char *s, size_t len, double *v);

#endif
