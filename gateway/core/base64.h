/* Base64 (RFC 4648): the one codec of the project.
 *
 * Two spellings: TG_B64_STD (§4, "+/", padded on output) for payloads,
 * pod-template files and key material, and TG_B64_URL (§5, "-_", never
 * padded) for JOSE. Decoding is strict in both: only the alphabet's
 * characters, no whitespace, a length that can be base64 (not 4n+1), zero
 * unused bits in the last character, and for TG_B64_STD at most two '='
 * which, when present, complete a multiple of four. One accepted spelling per
 * byte string means the bytes a signature covers are the bytes decoded. */
#ifndef TG_CORE_BASE64_H
#define TG_CORE_BASE64_H

#include <stddef.h>

#include "core/mem.h"

typedef enum { TG_B64_STD, TG_B64_URL } tg_b64_e;

/* Characters tg_base64_encode_to writes for `len` bytes (without the NUL). */
size_t tg_base64_encoded_len(size_t len, tg_b64_e alphabet);

/* Encode into `out` (capacity `cap`, including the NUL).
 * RET: the number of characters written, or (size_t)-1 when `cap` is too
 *      small (`out` is then untouched). */
size_t tg_base64_encode_to(const void *in, size_t len, tg_b64_e alphabet, char *out, size_t cap);

/* Encode into a new NUL-terminated string (caller frees with free()). */
char *tg_base64_encode(const void *in, size_t len, tg_b64_e alphabet);

/* Whether `len` characters of `in` decode under the rules above; *outlen (if
 * not NULL) gets the decoded size. */
int tg_base64_valid(const char *in, size_t len, tg_b64_e alphabet, size_t *outlen);

/* Decode into `out` (capacity `cap`, at least the decoded size).
 * RET: 0 with *outlen set; -1 for input outside the rules or a `cap` too
 *      small (`out` is then untouched). */
int tg_base64_decode_to(const char *in, size_t len, tg_b64_e alphabet, unsigned char *out,
                        size_t cap, size_t *outlen) TG_MUSTCHECK;

/* Decode into a new buffer (caller frees with free(); NUL-terminated for
 * convenience, the NUL not counted).
 * RET: 0, or -1 for input outside the rules (*out is then NULL). */
int tg_base64_decode(const char *in, size_t len, tg_b64_e alphabet, unsigned char **out,
                     size_t *outlen) TG_MUSTCHECK;

#endif
