/* Kubernetes resource quantities, exactly (k8s.io/apimachinery
 * pkg/api/resource): the one implementation the gateway, the CLI and kubesim
 * share.
 *
 * Grammar (as documented on resource.Quantity):
 *   quantity  ::= [+-] number [suffix]
 *   number    ::= digits | digits "." [digits] | "." digits
 *   suffix    ::= binarySI: Ki Mi Gi Ti Pi Ei
 *               | decimalSI: n u m "" k M G T P E
 *               | exponent: ("e" | "E") [+-] digits       ("E" alone is exa)
 * No blanks anywhere. Kubernetes' scanner also takes a number without digits
 * ("." or "Ki" alone as zero); the documented grammar does not, nor does
 * this parser.
 *
 * Value, as ParseQuantity computes it: the exact decimal, times 2^(10k) for
 * a binary suffix, rounded up (away from zero) to a multiple of 10^-9; a
 * binary-suffixed value is capped at 2^63-1, and one strictly between 0 and
 * 1 becomes decimal SI. Every such value is kept exactly: a coefficient of
 * at most 38 significant digits times a power of ten. A number with more
 * significant digits, or an exponent beyond +-100000, is refused with
 * TG_QTY_ERANGE rather than rounded (Kubernetes would accept some of them;
 * no resource needs them, and refusing keeps every comparison exact).
 *
 * Text (tg_qty_format) is Quantity.String(): the canonical form of the
 * value's notation (see there).
 *
 * Pure functions, no allocation, thread-safe. */
#ifndef TG_CORE_QUANTITY_H
#define TG_CORE_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include "core/mem.h"

typedef enum {
    TG_QTY_DECIMAL_SI = 0, /* n, u, m, "", k, M, G, T, P, E */
    TG_QTY_BINARY_SI,      /* Ki, Mi, Gi, Ti, Pi, Ei */
    TG_QTY_DECIMAL_EXP,    /* 1e3, 5E-3 */
} tg_qty_format_e;

typedef enum {
    TG_QTY_OK = 0,
    TG_QTY_ESYNTAX = -1,   /* not a quantity */
    TG_QTY_ERANGE = -2,    /* a quantity, but beyond what is kept exactly */
    TG_QTY_ETOOSMALL = -3, /* the output buffer is too small */
} tg_qty_rc_e;

/* value = (neg ? -1 : 1) * coef * 10^exp10. Normalised: coef has no factor
 * of ten (exp10 carries them), zero is {0, 0, 0}, exp10 >= -9. */
typedef struct tg_qty_s {
    unsigned __int128 coef;
    int32_t exp10;
    int neg;
    tg_qty_format_e format;
} tg_qty_t;

/* Enough for every text tg_qty_format writes. */
#define TG_QTY_MAX_TEXT 64

/* Parse NUL-terminated `s`. OUT: *out. RET: TG_QTY_OK, _ESYNTAX or _ERANGE. */
tg_qty_rc_e tg_qty_parse(const char *s, tg_qty_t *out) TG_MUSTCHECK;
/* Parse exactly len bytes of s (no NUL needed). */
tg_qty_rc_e tg_qty_parsen(const char *s, size_t len, tg_qty_t *out) TG_MUSTCHECK;

/* Quantity.String() of q into out[n]: "0" for zero; decimal SI and exponent
 * notations move factors of ten into a power that is a multiple of three
 * ("1500m", "2k", "1080n", "12e6"); binary SI writes the largest 2^(10k)
 * suffix that divides the value ("1536Mi"), and falls back to decimal SI for
 * values under 1024 in magnitude or not whole. Beyond "E" (10^18) decimal SI
 * keeps the "E" suffix ("1000E"; Kubernetes itself drops the suffix there,
 * misprinting the value), or turns to exponent notation when that would not
 * fit. RET: TG_QTY_OK or _ETOOSMALL (n >= TG_QTY_MAX_TEXT always fits). */
tg_qty_rc_e tg_qty_format(const tg_qty_t *q, char *out, size_t n) TG_MUSTCHECK;

/* -1, 0 or 1 as a < b, a == b, a > b (values; notation ignored). */
int tg_qty_cmp(const tg_qty_t *a, const tg_qty_t *b);
/* Compare the quantities written a and b, exactly. OUT: *cmp as
 * tg_qty_cmp. RET: TG_QTY_OK, or the first parse failure (*cmp untouched). */
tg_qty_rc_e tg_qty_cmp_text(const char *a, const char *b, int *cmp) TG_MUSTCHECK;
/* out = a + b (or a - b), exactly, in a's notation (Quantity.Add keeps the
 * receiver's format). RET: TG_QTY_OK or _ERANGE. out may alias a or b. */
tg_qty_rc_e tg_qty_add(const tg_qty_t *a, const tg_qty_t *b, tg_qty_t *out) TG_MUSTCHECK;
tg_qty_rc_e tg_qty_sub(const tg_qty_t *a, const tg_qty_t *b, tg_qty_t *out) TG_MUSTCHECK;
int tg_qty_is_zero(const tg_qty_t *q);
/* 1 when q > 0. */
int tg_qty_is_positive(const tg_qty_t *q);

/* The value in milli-units rounded towards +infinity (Quantity.MilliValue).
 * RET: TG_QTY_OK or _ERANGE when it does not fit in int64. */
tg_qty_rc_e tg_qty_to_milli(const tg_qty_t *q, int64_t *milli) TG_MUSTCHECK;
/* The quantity of `milli` milli-units in notation fmt. */
void tg_qty_from_milli(int64_t milli, tg_qty_format_e fmt, tg_qty_t *out);
/* The nearest double (correctly rounded; +-HUGE_VAL beyond its range). */
double tg_qty_to_double(const tg_qty_t *q);

#endif
