/* Canonical JSON text: compact, object keys sorted bytewise, strings in UTF-8
 * with only the escapes JSON requires, integers in decimal, reals with a
 * fixed precision. Used for the config hash (so a resolved config that went
 * through the database hashes the same), the provenance annotation and JSON
 * values placed in env vars. Faster than json_dumps(JSON_SORT_KEYS), which
 * matters on the submission path. */
#ifndef TG_RENDER_CANON_H
#define TG_RENDER_CANON_H

#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "core/buf.h"

/* Append the canonical text of `v` (borrowed) to `out`; reals use
 * `precision` significant digits (17 round-trips every double). */
tg_rc_e tg_render_canon(const json_t *v, int precision, tg_buf_t *out) TG_MUSTCHECK;

/* Whether none of the 8 bytes at s needs a JSON escape (no control byte,
 * quote or backslash), for writers that copy plain text a word at a time.
 * The "has a byte below n" and "has a zero byte" bit tricks are exact as
 * yes/no tests. */
static inline int tg_render_plain8(const char *s)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t w, q, b;
    memcpy(&w, s, 8);
    q = w ^ (ones * '"');
    b = w ^ (ones * '\\');
    return !(((w - ones * 0x20) & ~w & highs) | ((q - ones) & ~q & highs) |
             ((b - ones) & ~b & highs));
}

/* The canonical text as a new string (free()); 15-digit reals, so decimals
 * users wrote read back as written. */
char *tg_render_canon_text(const json_t *v);

#endif
