/* Exact Kubernetes quantities (see quota_qty.h for the rules). */
#include "store/quota_qty.h"

#include <stdio.h>
#include <string.h>

typedef unsigned __int128 qty_u128;

#define QTY_MAX_DIGITS 36 /* significant digits a mantissa may carry */

static int qty_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* 10^n for 0 <= n <= 38. */
static qty_u128 qty_pow10(int n)
{
    qty_u128 v = 1;
    while (n-- > 0)
        v *= 10;
    return v;
}

/* Multiply `*v` by `m`, failing when the product passes `limit`. */
static int qty_mul_bounded(qty_u128 *v, qty_u128 m, qty_u128 limit)
{
    if (*v == 0)
        return 0;
    if (m > limit / *v)
        return -1;
    *v *= m;
    return 0;
}

/* The suffix: decimal power (*pow10), binary power (*pow1024) and notation.
 * Returns -1 when `p` is not a suffix. */
static int qty_suffix(const char *p, int *pow10, int *pow1024, tg_quota_qty_format_e *fmt)
{
    static const char dec[] = "kMGTPE";
    static const char bin[] = "KMGTPE";
    *pow10 = 0;
    *pow1024 = 0;
    *fmt = TG_QUOTA_QTY_DECIMAL_SI;
    if (!*p)
        return 0;
    if ((p[0] == 'm' || p[0] == 'u' || p[0] == 'n') && !p[1]) {
        *pow10 = p[0] == 'm' ? -3 : p[0] == 'u' ? -6 : -9;
        return 0;
    }
    if (p[0] && p[1] == 'i' && !p[2]) {
        const char *b = strchr(bin, p[0]);
        if (!b || !p[0])
            return -1;
        *pow1024 = (int)(b - bin) + 1;
        *fmt = TG_QUOTA_QTY_BINARY_SI;
        return 0;
    }
    if ((p[0] == 'e' || p[0] == 'E') && p[1]) {
        /* exponent: e<signed integer> */
        const char *q = p + 1;
        int neg = 0;
        if (*q == '+' || *q == '-')
            neg = *q++ == '-';
        if (!qty_is_digit(*q))
            return -1;
        int e = 0;
        for (; qty_is_digit(*q); q++) {
            e = e * 10 + (*q - '0');
            if (e > 1000)
                return -1;
        }
        if (*q)
            return -1;
        *pow10 = neg ? -e : e;
        *fmt = TG_QUOTA_QTY_DECIMAL_EXP;
        return 0;
    }
    if (!p[1]) {
        const char *d = strchr(dec, p[0]);
        if (!d || !p[0])
            return -1;
        *pow10 = 3 * ((int)(d - dec) + 1);
        return 0;
    }
    return -1;
}

tg_quota_qty_rc_e tg_quota_qty_parse(const char *s, tg_quota_qty_t *out)
{
    if (!s || !*s)
        return TG_QUOTA_QTY_ESYNTAX;
    const char *p = s;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    qty_u128 mant = 0;
    int sig = 0, frac = 0, digits = 0, seen_dot = 0;
    for (;; p++) {
        if (qty_is_digit(*p)) {
            digits++;
            if (seen_dot)
                frac++;
            if (mant == 0 && *p == '0') {
                continue; /* leading zeros carry no significance */
            }
            if (++sig > QTY_MAX_DIGITS)
                return TG_QUOTA_QTY_ERANGE;
            mant = mant * 10 + (qty_u128)(*p - '0');
        } else if (*p == '.' && !seen_dot) {
            seen_dot = 1;
        } else {
            break;
        }
    }
    if (!digits)
        return TG_QUOTA_QTY_ESYNTAX;
    int pow10, pow1024;
    tg_quota_qty_format_e fmt;
    if (qty_suffix(p, &pow10, &pow1024, &fmt) != 0)
        return TG_QUOTA_QTY_ESYNTAX;

    const qty_u128 limit = (qty_u128)INT64_MAX;
    /* value in milli-units = mant * 1024^pow1024 * 10^(pow10 + 3 - frac) */
    for (int i = 0; i < pow1024; i++)
        if (qty_mul_bounded(&mant, 1024, ((qty_u128)1 << 126)) != 0)
            return TG_QUOTA_QTY_ERANGE;
    int e10 = pow10 + 3 - frac;
    qty_u128 mag;
    if (e10 >= 0) {
        if (e10 > 38 && mant != 0)
            return TG_QUOTA_QTY_ERANGE;
        mag = mant;
        if (qty_mul_bounded(&mag, qty_pow10(e10 > 38 ? 0 : e10), limit) != 0)
            return TG_QUOTA_QTY_ERANGE;
    } else if (-e10 > 38) {
        mag = 0;
        if (mant != 0 && !neg)
            mag = 1; /* rounded up to one milli-unit */
    } else {
        qty_u128 d = qty_pow10(-e10);
        mag = mant / d;
        if (mant % d != 0 && !neg)
            mag++; /* round up (towards +infinity) like Quantity.MilliValue */
    }
    if (mag > limit)
        return TG_QUOTA_QTY_ERANGE;
    out->milli = neg ? -(int64_t)mag : (int64_t)mag;
    out->format = fmt;
    return TG_QUOTA_QTY_OK;
}

/* "<number><suffix>" into out; -1 when it does not fit. */
static tg_quota_qty_rc_e qty_put(char *out, size_t n, int neg, uint64_t number, const char *suffix)
{
    int w = snprintf(out, n, "%s%llu%s", neg ? "-" : "", (unsigned long long)number, suffix);
    return w < 0 || (size_t)w >= n ? TG_QUOTA_QTY_ETOOSMALL : TG_QUOTA_QTY_OK;
}

tg_quota_qty_rc_e tg_quota_qty_format(const tg_quota_qty_t *q, char *out, size_t n)
{
    static const char *const dec_suffix[] = {"", "k", "M", "G", "T", "P", "E"};
    static const char *const bin_suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int neg = q->milli < 0;
    uint64_t mag = neg ? (uint64_t)(-(q->milli + 1)) + 1 : (uint64_t)q->milli;
    if (mag == 0)
        return qty_put(out, n, 0, 0, "");
    tg_quota_qty_format_e fmt = q->format;
    if (fmt == TG_QUOTA_QTY_BINARY_SI && (mag % 1000 != 0 || mag / 1000 < 1024))
        fmt = TG_QUOTA_QTY_DECIMAL_SI; /* Quantity.CanonicalizeBytes does the same */
    if (fmt == TG_QUOTA_QTY_BINARY_SI) {
        uint64_t base = mag / 1000;
        int k = 0;
        while (k < 6 && base % 1024 == 0) {
            base /= 1024;
            k++;
        }
        return qty_put(out, n, neg, base, bin_suffix[k]);
    }
    if (mag % 1000 != 0)
        return qty_put(out, n, neg, mag, fmt == TG_QUOTA_QTY_DECIMAL_EXP ? "e-3" : "m");
    uint64_t base = mag / 1000;
    int k = 0;
    while (k < 6 && base % 1000 == 0) {
        base /= 1000;
        k++;
    }
    if (fmt == TG_QUOTA_QTY_DECIMAL_EXP) {
        char suffix[8] = "";
        if (k)
            snprintf(suffix, sizeof(suffix), "e%d", 3 * k);
        return qty_put(out, n, neg, base, suffix);
    }
    return qty_put(out, n, neg, base, dec_suffix[k]);
}

tg_quota_qty_rc_e tg_quota_qty_add(const tg_quota_qty_t *a, const tg_quota_qty_t *b,
                                   tg_quota_qty_t *out)
{
    int64_t sum;
    if (__builtin_add_overflow(a->milli, b->milli, &sum))
        return TG_QUOTA_QTY_ERANGE;
    out->milli = sum;
    out->format = a->format;
    return TG_QUOTA_QTY_OK;
}

tg_quota_qty_rc_e tg_quota_qty_canonical(const char *in, char *out, size_t n)
{
    tg_quota_qty_t q;
    tg_quota_qty_rc_e rc = tg_quota_qty_parse(in, &q);
    return rc != TG_QUOTA_QTY_OK ? rc : tg_quota_qty_format(&q, out, n);
}

tg_quota_qty_rc_e tg_quota_qty_add_text(const char *a, const char *b, char *out, size_t n)
{
    tg_quota_qty_t qa, qb, sum;
    tg_quota_qty_rc_e rc = tg_quota_qty_parse(a, &qa);
    if (rc == TG_QUOTA_QTY_OK)
        rc = tg_quota_qty_parse(b, &qb);
    if (rc == TG_QUOTA_QTY_OK)
        rc = tg_quota_qty_add(&qa, &qb, &sum);
    return rc != TG_QUOTA_QTY_OK ? rc : tg_quota_qty_format(&sum, out, n);
}

int tg_quota_qty_cmp_text(const char *a, const char *b, int *ok)
{
    tg_quota_qty_t qa, qb;
    *ok = tg_quota_qty_parse(a, &qa) == TG_QUOTA_QTY_OK &&
          tg_quota_qty_parse(b, &qb) == TG_QUOTA_QTY_OK;
    if (!*ok)
        return 0;
    return qa.milli < qb.milli ? -1 : qa.milli > qb.milli;
}
