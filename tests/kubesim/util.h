/* Small helpers shared by every kubesim module: time, names, JSON paths.
 *
 * JSON ownership: functions returning json_t* say whether the reference is
 * borrowed (valid while the parent lives) or new (caller must json_decref). */
#ifndef KS_UTIL_H
#define KS_UTIL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/buf.h"
#include "core/mem.h"

/* Wall-clock seconds with fractions; all controller deadlines use this. */
double ks_now(void);
/* RFC 3339 UTC with second precision ("2026-01-02T03:04:05Z"). */
void ks_fmt_time(double t, char *out, size_t n);
/* RFC 3339 UTC with nanoseconds, as kubelet log timestamps. */
void ks_fmt_time_nano(double t, char *out, size_t n);
/* Parse RFC 3339 (fraction and zone "Z" only); returns -1 when malformed. */
double ks_parse_time(const char *s);
/* New JSON string holding the current time (RFC 3339). */
json_t *ks_json_now(void);
/* Human age as kubectl prints it ("5m2s", "3h", "2d"). */
void ks_fmt_age(double secs, char *out, size_t n);

/* Five random characters from Kubernetes' generateName alphabet. */
void ks_rand_suffix(char *out, size_t n);
/* Random RFC 4122 v4 UUID, 36 characters. */
void ks_uuid(char *out, size_t n);
/* Lower-case hex SHA-1 of data. */
void ks_sha1_hex(const void *data, size_t len, char *out, size_t n);

/* Borrowed value at a dotted path ("spec.template.spec"), or NULL. */
json_t *ks_jget(json_t *o, const char *path);
const char *ks_jstr(json_t *o, const char *path);
long long ks_jint(json_t *o, const char *path, long long dflt);
int ks_jbool(json_t *o, const char *path, int dflt);
/* Borrowed object at path, creating empty objects on the way. */
json_t *ks_jobj(json_t *o, const char *path);
/* Set the value at path (steals val), creating parents. */
void ks_jset(json_t *o, const char *path, json_t *val);
/* Remove the key at path if present. */
void ks_jdel(json_t *o, const char *path);

/* metadata helpers (borrowed strings) */
const char *ks_meta_name(json_t *o);
const char *ks_meta_ns(json_t *o);
const char *ks_meta_uid(json_t *o);
const char *ks_label(json_t *o, const char *key);
const char *ks_annotation(json_t *o, const char *key);

/* Condition helpers on an object holding `conditions` (e.g. status).
 * ks_cond_get returns the borrowed condition of that type or NULL. */
json_t *ks_cond_get(json_t *status, const char *type);
int ks_cond_true(json_t *status, const char *type);
/* Set or update a condition; lastTransitionTime moves only when status
 * changes. Returns 1 when something changed. `job_style` adds
 * lastProbeTime as batch/v1 Job conditions carry it. */
int ks_cond_set(json_t *status, const char *type, const char *st, const char *reason,
                const char *msg, int job_style);

/* Bounded string copy that always terminates; returns 0 or -1 if cut. */
int ks_strlcpy(char *dst, const char *src, size_t n);
/* Lower-case copy. */
void ks_lower(char *dst, const char *src, size_t n);
/* URL-decode in place ('+' stays '+', as Go's PathUnescape for queries is
 * done by MHD already). */
int ks_streq(const char *a, const char *b);

/* snprintf that reports truncation (-1) instead of warning about it; for
 * paths and names whose parts are bounded elsewhere. */
int ks_fmt(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* mkdir -p; returns 0 or -1. */
int ks_mkdirs(const char *path, int mode);
/* Read a whole file (NUL-terminated); NULL on error. */
char *ks_read_file(const char *path, size_t *len);

#endif
