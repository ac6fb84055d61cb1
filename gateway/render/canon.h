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

/* The bytes among the 8 at s that need a JSON escape (control byte, quote
 * or backslash), as a mask with the high bit of each such byte set; 0 when
 * none does. The "has a byte below n" and "has a zero byte" bit tricks can
 * flag a byte above a flagged one spuriously (a borrow), never below it, so
 * the first flagged byte is exact (tg_render_first8). */
static inline uint64_t tg_render_special8(const char *s)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t w, q, b;
    memcpy(&w, s, 8);
    q = w ^ (ones * '"');
    b = w ^ (ones * '\\');
    return ((w - ones * 0x20) & ~w & highs) | ((q - ones) & ~q & highs) | ((b - ones) & ~b & highs);
}

/* Whether none of the 8 bytes at s needs a JSON escape, for writers that
 * copy plain text a word at a time. */
static inline int tg_render_plain8(const char *s)
{
    return tg_render_special8(s) == 0;
}

/* The offset of the first byte a non-zero tg_render_special8 mask flags. */
static inline size_t tg_render_first8(uint64_t mask)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (size_t)__builtin_ctzll(mask) >> 3;
#else
    return (size_t)__builtin_clzll(mask) >> 3;
#endif
}

/* The canonical text as a new string (free()); 15-digit reals, so decimals
 * users wrote read back as written. */
char *tg_render_canon_text(const json_t *v);

#endif
