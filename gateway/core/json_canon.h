/* Canonical JSON text: compact, object keys sorted bytewise, strings in UTF-8
 * with only the escapes JSON requires, integers in decimal, reals with a
 * fixed precision. Used for the config hash (so a resolved config that went
 * through the database hashes the same), the provenance annotation and JSON
 * values placed in env vars. Faster than json_dumps(JSON_SORT_KEYS), which
 * matters on the submission path. */
#ifndef TG_CORE_JSON_CANON_H
#define TG_CORE_JSON_CANON_H

#include <endian.h>
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "core/buf.h"

/* Append the canonical text of `v` (borrowed) to `out`; reals use
 * `precision` significant digits (17 round-trips every double). */
tg_rc_e tg_json_canon(const json_t *v, int precision, tg_buf_t *out) TG_MUSTCHECK;

/* A string (s[n], UTF-8) as a quoted JSON string, and an integer. */
tg_rc_e tg_json_canon_string(const char *s, size_t n, tg_buf_t *out) TG_MUSTCHECK;
tg_rc_e tg_json_canon_int(json_int_t v, tg_buf_t *out) TG_MUSTCHECK;
/* The decimal text of v into out (NUL-terminated); returns its length. */
size_t tg_json_int_text(char out[24], json_int_t v);

/* Writes the escape of a byte that needs one (not tg_json_plain) at esc and
 * returns its length (at most 7): the short forms JSON has (\" \\ \n \t
 * \r \b \f), \u00XX for other control bytes; with q set, escaped once
 * more, for text that is itself the contents of a JSON string. The one
 * escape of every JSON writer of the project (a tg_json_escape_fn). */
size_t tg_json_escape(unsigned char c, char *esc, int q);

/* Member i of a flat object of strings: key k[kn] -> value v[vn]. */
typedef void (*tg_json_pair_fn)(const void *arg, size_t i, const char **k, size_t *kn,
                                const char **v, size_t *vn);

/* The canonical text of the flat object whose n members `pair` gives, in
 * bytewise key order and with distinct keys, escaped as the contents of a
 * JSON string (the provenance annotation): the bytes a JSON string writer
 * would make of tg_json_canon's text ({\"key\":\"value\",...}), without
 * the intermediate copy. One pass when the worst case fits (every byte
 * escaped; `bytes` bounds the keys' and values' total length). */
tg_rc_e tg_json_canon_quoted_pairs(size_t n, tg_json_pair_fn pair, const void *arg, size_t bytes,
                                   tg_buf_t *out) TG_MUSTCHECK;

/* The bytes of the word w (8 bytes of text, as loaded from memory) that need
 * a JSON escape (control byte, quote or backslash), as a mask with the high
 * bit of each such byte set; 0 when none does. The "has a byte below n" and
 * "has a zero byte" bit tricks can flag a byte above a flagged one
 * spuriously (a borrow), never below it, so the first flagged byte is exact
 * (tg_json_first8). */
static inline uint64_t tg_json_special_w(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    return ((w - ones * 0x20) & ~w & highs) | ((q - ones) & ~q & highs) | ((b - ones) & ~b & highs);
}

/* tg_json_special_w of the 8 bytes at s. */
static inline uint64_t tg_json_special8(const char *s)
{
    uint64_t w;
    memcpy(&w, s, 8);
    return tg_json_special_w(w);
}

/* The last k (1 to 7) bytes of a string, s[0..k), as the word memcpy would
 * load from 8 bytes starting at s, the bytes past k an 'a' that needs no
 * escape: the tail of a string checked and copied as one word, without
 * reading past its end (most keys and values are shorter than 8 bytes or
 * end in a partial word). Two overlapping loads, whose shared bytes agree. */
static inline uint64_t tg_json_tail(const char *s, size_t k)
{
    uint64_t v;
    if (k >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, s, 4);
        memcpy(&hi, s + k - 4, 4);
        v = (uint64_t)le32toh(lo) | (uint64_t)le32toh(hi) << (8 * (k - 4));
    } else {
        const unsigned char *u = (const unsigned char *)s;
        v = (uint64_t)u[0] | (uint64_t)u[k / 2] << (8 * (k / 2)) |
            (uint64_t)u[k - 1] << (8 * (k - 1));
    }
    v |= 0x6161616161616161u << (8 * k);
    return htole64(v);
}

/* Writers that store a whole tail word (tg_json_tail) may write up to 7
 * bytes past their output: the room they check for includes this. */
#define TG_JSON_TAIL_SLACK 8

/* Whether none of the 8 bytes at s needs a JSON escape, for writers that
 * copy plain text a word at a time. */
static inline int tg_json_plain8(const char *s)
{
    return tg_json_special8(s) == 0;
}

/* The offset of the first byte a non-zero tg_json_special8 mask flags. */
static inline size_t tg_json_first8(uint64_t mask)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (size_t)__builtin_ctzll(mask) >> 3;
#else
    return (size_t)__builtin_clzll(mask) >> 3;
#endif
}

/* Whether byte c goes into a JSON string as it is. */
static inline int tg_json_plain(unsigned char c)
{
    return c >= 0x20 && c != '"' && c != '\\';
}

/* Writes the escape of byte c at o and returns its length; `arg` is the
 * writer's own (the canonical writer's "quoted again" flag). */
typedef size_t (*tg_json_escape_fn)(unsigned char c, char *o, int arg);

/* The text of s[n] at o, each byte that needs it through `esc`; returns the
 * end. The caller has checked room for the escapes' worst case plus
 * TG_JSON_TAIL_SLACK. A word at a time: eight bytes are copied whatever
 * they hold (the room covers it), then the output advances past the plain
 * ones only, so text dense in quotes (the provenance annotation) costs one
 * step per escape. Inline, so each writer gets a copy with its escape. */
static inline char *tg_json_escape_into(char *o, const char *s, size_t n, tg_json_escape_fn esc,
                                        int arg)
{
    size_t i = 0;
    while (n - i >= 8) {
        uint64_t m = tg_json_special8(s + i);
        memcpy(o, s + i, 8);
        if (!m) {
            o += 8;
            i += 8;
            continue;
        }
        size_t k = tg_json_first8(m);
        o += k;
        i += k;
        o += esc((unsigned char)s[i++], o, arg);
    }
    if (i < n) {
        uint64_t t = tg_json_tail(s + i, n - i);
        if (!tg_json_special_w(t)) {
            memcpy(o, &t, 8);
            return o + (n - i);
        }
    }
    while (i < n) {
        unsigned char c = (unsigned char)s[i++];
        if (tg_json_plain(c))
            *o++ = (char)c;
        else
            o += esc(c, o, arg);
    }
    return o;
}

/* The canonical text as a new string (free()); 15-digit reals, so decimals
 * users wrote read back as written. */
char *tg_json_canon_text(const json_t *v);

#endif
