/* Personal access tokens: the pure part.
 *
 * A PAT is "tgp_" followed by 32 random bytes in base64url (47 characters).
 * Only its SHA-256 (hex) is stored; a 256-bit random secret needs neither a
 * slow hash nor a salt. The prefix lets the request path tell a PAT from a
 * JWT without parsing, and lets secret scanners recognise leaked ones. */
#ifndef TG_AUTH_PAT_H
#define TG_AUTH_PAT_H

#include <stddef.h>

#include "core/mem.h"
#include "core/status.h"

#define TG_AUTH_PAT_PREFIX       "tgp_"
#define TG_AUTH_PAT_PREFIX_LEN   4
#define TG_AUTH_PAT_RANDOM       32
#define TG_AUTH_PAT_LEN          (TG_AUTH_PAT_PREFIX_LEN + 43)
#define TG_AUTH_PAT_BUFSIZE      (TG_AUTH_PAT_LEN + 1)
#define TG_AUTH_PAT_HASH_HEX     64
#define TG_AUTH_PAT_HASH_BUFSIZE (TG_AUTH_PAT_HASH_HEX + 1)

/* Write a new token into `out` (at least TG_AUTH_PAT_BUFSIZE bytes).
 * RET: TG_OK; TG_EINVAL when `cap` is too small; TG_EINTERNAL when the CSPRNG
 *      fails (never hand out a weak token). `out` is "" on failure. */
tg_rc_e tg_auth_pat_generate(char *out, size_t cap) TG_MUSTCHECK;

/* 1 when a bearer value is meant as a PAT (it starts with the prefix), so the
 * caller looks it up instead of verifying it as a JWT. */
int tg_auth_pat_detect(const char *tok, size_t len);

/* 1 when `tok` has exactly the shape tg_auth_pat_generate produces. Check
 * this before hashing to spare the database obviously bad lookups. */
int tg_auth_pat_well_formed(const char *tok, size_t len);

/* Lower-case hex SHA-256 of the token text (prefix included) into `out` (at
 * least TG_AUTH_PAT_HASH_BUFSIZE bytes). RET: TG_OK or TG_EINVAL (small cap). */
tg_rc_e tg_auth_pat_hash(const char *tok, size_t len, char *out, size_t cap) TG_MUSTCHECK;

#endif
