/* Canonical JSON text: compact, object keys sorted bytewise, strings in UTF-8
 * with only the escapes JSON requires, integers in decimal, reals with a
 * fixed precision. Used for the config hash (so a resolved config that went
 * through the database hashes the same), the provenance annotation and JSON
 * values placed in env vars. Faster than json_dumps(JSON_SORT_KEYS), which
 * matters on the submission path. */
#ifndef TG_RENDER_CANON_H
#define TG_RENDER_CANON_H

#include <jansson.h>

#include "core/buf.h"

/* Append the canonical text of `v` (borrowed) to `out`; reals use
 * `precision` significant digits (17 round-trips every double). */
tg_rc_e tg_render_canon(const json_t *v, int precision, tg_buf_t *out) TG_MUSTCHECK;

/* Length of the leading run of s[n] that JSON writes as is (no control
 * byte, quote or backslash), eight bytes at a time. */
size_t tg_render_plain_run(const char *s, size_t n);

/* The canonical text as a new string (free()); 15-digit reals, so decimals
 * users wrote read back as written. */
char *tg_render_canon_text(const json_t *v);

#endif
