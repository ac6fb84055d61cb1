/* Strict base64url (RFC 4648 §5, no padding) for JOSE.
 *
 * JWS compact serialisation forbids padding and whitespace, and a lenient
 * decoder lets many byte strings name the same token; these routines accept
 * exactly one spelling per value so the bytes we check are the bytes that
 * were signed. */
#ifndef TG_AUTH_B64URL_H
#define TG_AUTH_B64URL_H

#include <stddef.h>

#include "core/mem.h"

/* Decoded size of `len` base64url characters (upper bound is exact for valid
 * input). */
size_t tg_auth_b64url_decoded_len(size_t len);

/* Decode `len` characters of `in` into a new buffer.
 * RET: 0 on success with *out (caller frees with free(); NUL-terminated for
 *      convenience, the NUL is not counted) and *outlen set; -1 when the input
 *      has a character outside [A-Za-z0-9_-], padding, a length of 4n+1, or
 *      non-zero trailing bits. *out is NULL on failure. */
int tg_auth_b64url_decode(const char *in, size_t len, unsigned char **out,
                          size_t *outlen) TG_MUSTCHECK;

/* Check the same rules as tg_auth_b64url_decode without allocating. */
int tg_auth_b64url_valid(const char *in, size_t len);

/* Encode into a new NUL-terminated string (caller frees with free()). */
char *tg_auth_b64url_encode(const unsigned char *in, size_t len);

/* Encode into `out` (capacity `cap`, including the NUL).
 * RET: the number of characters written (0 for empty input), or (size_t)-1
 *      when `cap` is too small; `out` is then untouched. */
size_t tg_auth_b64url_encode_to(const unsigned char *in, size_t len, char *out, size_t cap);

#endif
