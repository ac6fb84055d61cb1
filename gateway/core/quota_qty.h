/* Kubernetes resource quantities in milli-units, for quota arithmetic: a
 * view of core/quantity.h (the one quantity parser and formatter).
 *
 * A quantity ("500m", "8", "64Gi", "1.5", "2e3", "1k") is parsed into an
 * exact integer number of milli-units (milli-cores for cpu, milli-bytes for
 * memory: "1Ki" = 1024000), remembering which notation it was written in,
 * and formatted back in Kubernetes' canonical form for that notation:
 *   decimal SI:   "1500m", "2", "2k", "5M"  (largest 10^3n suffix that is exact)
 *   binary SI:    "64Gi", "1536" (largest 2^10n suffix that is exact; values
 *                 under 1024 or not a whole number fall back to decimal SI)
 *   exponent:     "1500e-3", "2e3"
 * as resource.Quantity.String() does. Precision finer than a milli-unit is
 * rounded up, as Quantity.MilliValue() does. Values must fit in int64
 * milli-units (about 9.2e15 base units, 8 PiB of memory); larger ones are
 * refused, never wrapped. The text-level helpers (canonical, compare) work
 * on the exact value: "100n" stays "100n".
 *
 * Pure functions, no allocation, thread-safe. No jansson values. */
#ifndef TG_STORE_QUOTA_QTY_H
#define TG_STORE_QUOTA_QTY_H

#include <stddef.h>
#include <stdint.h>

#include "core/mem.h"

typedef enum {
    TG_QUOTA_QTY_DECIMAL_SI = 0, /* n, u, m, "", k, M, G, T, P, E */
    TG_QUOTA_QTY_BINARY_SI,      /* Ki, Mi, Gi, Ti, Pi, Ei */
    TG_QUOTA_QTY_DECIMAL_EXP,    /* e3, E-3 */
} tg_quota_qty_format_e;

typedef struct tg_quota_qty_s {
    int64_t milli; /* exact value in milli-units */
    tg_quota_qty_format_e format;
} tg_quota_qty_t;

#define TG_QUOTA_QTY_MAX_TEXT 32 /* enough for any formatted quantity */

typedef enum {
    TG_QUOTA_QTY_OK = 0,
    TG_QUOTA_QTY_ESYNTAX = -1,   /* not a quantity */
    TG_QUOTA_QTY_ERANGE = -2,    /* does not fit in int64 milli-units */
    TG_QUOTA_QTY_ETOOSMALL = -3, /* the output buffer is too small */
} tg_quota_qty_rc_e;

/* Parse `s` (NUL-terminated, no surrounding blanks). OUT: *out.
 * RET: TG_QUOTA_QTY_OK, _ESYNTAX or _ERANGE. */
tg_quota_qty_rc_e tg_quota_qty_parse(const char *s, tg_quota_qty_t *out) TG_MUSTCHECK;

/* Canonical text of `q` in its notation into out[n] (n >= TG_QUOTA_QTY_MAX_TEXT
 * always suffices). RET: TG_QUOTA_QTY_OK or _ETOOSMALL. */
tg_quota_qty_rc_e tg_quota_qty_format(const tg_quota_qty_t *q, char *out, size_t n) TG_MUSTCHECK;

/* out = a + b in a's notation (Kubernetes' Quantity.Add keeps the receiver's
 * format). RET: TG_QUOTA_QTY_OK or _ERANGE. */
tg_quota_qty_rc_e tg_quota_qty_add(const tg_quota_qty_t *a, const tg_quota_qty_t *b,
                                   tg_quota_qty_t *out) TG_MUSTCHECK;

/* Text-level helpers. Canonical form of `in` into out[n]. */
tg_quota_qty_rc_e tg_quota_qty_canonical(const char *in, char *out, size_t n) TG_MUSTCHECK;
/* a + b, formatted in a's notation, into out[n]. */
tg_quota_qty_rc_e tg_quota_qty_add_text(const char *a, const char *b, char *out,
                                        size_t n) TG_MUSTCHECK;
/* -1, 0 or 1 comparing the values; *ok is 0 when either does not parse. */
int tg_quota_qty_cmp_text(const char *a, const char *b, int *ok);

#endif
