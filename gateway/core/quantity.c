/* Exact Kubernetes quantities (see quantity.h for the rules). */
#include "core/quantity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 qty_u128;

#define QTY_MAX_DIGITS 38     /* significant digits a coefficient keeps (< 10^38) */
#define QTY_MAX_EXP    100000 /* |power of ten| a text may carry */
#define QTY_NANO       (-9)   /* values are rounded up to a multiple of 10^-9 */

static int qty_digit(char c)
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

static int qty_ndigits(qty_u128 v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* Decimal text of v into out (at least 40 bytes); returns its length. */
static size_t qty_u128_text(qty_u128 v, char *out)
{
    char tmp[40];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* Move factors of ten from coef into exp10; zero becomes {0, 0, 0}. */
static void qty_normalise(tg_qty_t *q)
{
    if (q->coef == 0) {
        q->exp10 = 0;
        q->neg = 0;
        return;
    }
    while (q->coef % 10 == 0) {
        q->coef /= 10;
        q->exp10++;
    }
}

/* Round |q| up to a multiple of 10^-9 (Kubernetes rounds away from zero). */
static void qty_round_nano(tg_qty_t *q, int64_t exp10)
{
    if (exp10 >= QTY_NANO) {
        q->exp10 = (int32_t)exp10;
        return;
    }
    int64_t drop = QTY_NANO - exp10;
    if (drop > QTY_MAX_DIGITS) {
        q->coef = 1; /* less than a nano-unit, not zero: one nano-unit */
    } else {
        qty_u128 d = qty_pow10((int)drop);
        qty_u128 rest = q->coef % d;
        q->coef = q->coef / d + (rest != 0);
    }
    q->exp10 = QTY_NANO;
}

/* The suffix: a power of ten (*pow10) and of 1024 (*pow1024), and the
 * notation it stands for. */
static tg_qty_rc_e qty_suffix(const char *p, size_t n, int64_t *pow10, int *pow1024,
                              tg_qty_format_e *fmt)
{
    static const char dec[] = "num kMGTPE"; /* 10^-9 .. 10^18 in steps of 10^3 */
    static const char bin[] = "KMGTPE";
    *pow10 = 0;
    *pow1024 = 0;
    *fmt = TG_QTY_DECIMAL_SI;
    if (n == 0)
        return TG_QTY_OK;
    if (n == 1) {
        const char *d = p[0] != ' ' ? memchr(dec, p[0], sizeof(dec) - 1) : NULL;
        if (!d)
            return TG_QTY_ESYNTAX;
        *pow10 = 3 * ((int64_t)(d - dec) - 3);
        return TG_QTY_OK;
    }
    if (n == 2 && p[1] == 'i') {
        const char *b = memchr(bin, p[0], sizeof(bin) - 1);
        if (!b)
            return TG_QTY_ESYNTAX;
        *pow1024 = (int)(b - bin) + 1;
        *fmt = TG_QTY_BINARY_SI;
        return TG_QTY_OK;
    }
    if (p[0] != 'e' && p[0] != 'E')
        return TG_QTY_ESYNTAX;
    size_t i = 1;
    int neg = 0;
    if (p[i] == '+' || p[i] == '-')
        neg = p[i++] == '-';
    if (i == n)
        return TG_QTY_ESYNTAX;
    int64_t e = 0;
    int too_big = 0;
    for (; i < n; i++) {
        if (!qty_digit(p[i]))
            return TG_QTY_ESYNTAX;
        if (e <= QTY_MAX_EXP)
            e = e * 10 + (p[i] - '0');
        else
            too_big = 1;
    }
    if (too_big || e > QTY_MAX_EXP)
        return TG_QTY_ERANGE;
    *pow10 = neg ? -e : e;
    *fmt = TG_QTY_DECIMAL_EXP;
    return TG_QTY_OK;
}

/* coef * 10^exp10 > 2^63 - 1, for any coefficient a u128 holds. */
static int qty_above_int64(qty_u128 coef, int32_t exp10)
{
    if (coef == 0)
        return 0;
    if (exp10 >= 0) {
        if (exp10 > 19)
            return 1;
        qty_u128 scale = qty_pow10(exp10);
        return coef > ~(qty_u128)0 / scale || coef * scale > (qty_u128)INT64_MAX;
    }
    if (exp10 <= -20) /* (2^63 - 1) * 10^20 is beyond any u128 */
        return 0;
    return coef > (qty_u128)INT64_MAX * qty_pow10(-exp10);
}

tg_qty_rc_e tg_qty_parsen(const char *s, size_t len, tg_qty_t *out)
{
    if (!s || !len)
        return TG_QTY_ESYNTAX;
    size_t i = 0;
    int neg = 0;
    if (s[0] == '+' || s[0] == '-')
        neg = s[i++] == '-';
    size_t int_start = i;
    while (i < len && qty_digit(s[i]))
        i++;
    size_t int_end = i, frac_start = i, frac_end = i;
    if (i < len && s[i] == '.') {
        frac_start = ++i;
        while (i < len && qty_digit(s[i]))
            i++;
        frac_end = i;
    }
    size_t nint = int_end - int_start, nfrac = frac_end - frac_start;
    if (nint + nfrac == 0)
        return TG_QTY_ESYNTAX;
    int64_t pow10;
    int pow1024;
    tg_qty_format_e fmt;
    tg_qty_rc_e rc = qty_suffix(s + i, len - i, &pow10, &pow1024, &fmt);
    if (rc != TG_QTY_OK)
        return rc;

    /* The significant digits of int.frac, positions counted over both. */
    size_t total = nint + nfrac, first = total, last = 0;
    for (size_t k = 0; k < total; k++) {
        char c = k < nint ? s[int_start + k] : s[frac_start + k - nint];
        if (c != '0') {
            if (first == total)
                first = k;
            last = k;
        }
    }
    tg_qty_t q = {0, 0, 0, fmt};
    if (first == total) { /* zero, in whichever notation it was written */
        *out = q;
        return TG_QTY_OK;
    }
    if (last - first + 1 > QTY_MAX_DIGITS)
        return TG_QTY_ERANGE;
    for (size_t k = first; k <= last; k++) {
        char c = k < nint ? s[int_start + k] : s[frac_start + k - nint];
        q.coef = q.coef * 10 + (qty_u128)(c - '0');
    }
    q.neg = neg;
    /* digits after `last` are zeros: they and the fraction set the power */
    int64_t exp10 = (int64_t)(total - 1 - last) - (int64_t)nfrac + pow10;
    if (exp10 > QTY_MAX_EXP)
        return TG_QTY_ERANGE;
    if (pow1024) {
        int shift = 10 * pow1024;
        if (q.coef > (~(qty_u128)0 >> shift)) {
            /* at least 2^128 * 10^exp10: over the binary cap unless a very
             * long fraction brings it down, which is not worth keeping */
            if (exp10 < -19)
                return TG_QTY_ERANGE;
            q.coef = (qty_u128)INT64_MAX;
            exp10 = 0;
        } else {
            q.coef <<= shift;
        }
    }
    qty_round_nano(&q, exp10);
    qty_normalise(&q);
    if (fmt == TG_QTY_BINARY_SI) {
        if (qty_above_int64(q.coef, q.exp10)) { /* Kubernetes caps binary quantities */
            q.coef = (qty_u128)INT64_MAX;
            q.exp10 = 0;
        }
        if (q.exp10 < 0 && qty_ndigits(q.coef) + q.exp10 <= 0)
            q.format = TG_QTY_DECIMAL_SI; /* between 0 and 1 */
    }
    if (q.coef >= qty_pow10(QTY_MAX_DIGITS))
        return TG_QTY_ERANGE;
    *out = q;
    return TG_QTY_OK;
}

tg_qty_rc_e tg_qty_parse(const char *s, tg_qty_t *out)
{
    return s ? tg_qty_parsen(s, strlen(s), out) : TG_QTY_ESYNTAX;
}

/* ---- text ---- */

static tg_qty_rc_e qty_put(char *out, size_t n, int neg, const char *digits, int zeros,
                           const char *suffix)
{
    size_t dl = strlen(digits), sl = strlen(suffix);
    size_t need = (neg ? 1 : 0) + dl + (size_t)zeros + sl + 1;
    if (need > n)
        return TG_QTY_ETOOSMALL;
    char *p = out;
    if (neg)
        *p++ = '-';
    memcpy(p, digits, dl);
    p += dl;
    memset(p, '0', (size_t)zeros);
    p += zeros;
    memcpy(p, suffix, sl + 1);
    return TG_QTY_OK;
}

/* Binary SI text, or -1 when the value is not whole, under 1024 or too wide
 * to print this way (decimal SI then). */
static int qty_format_binary(const tg_qty_t *q, char *out, size_t n, tg_qty_rc_e *rc)
{
    static const char *const suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    if (q->exp10 < 0 || q->exp10 > QTY_MAX_DIGITS)
        return -1;
    qty_u128 scale = qty_pow10(q->exp10);
    if (q->coef > ~(qty_u128)0 / scale)
        return -1;
    qty_u128 v = q->coef * scale;
    if (v < 1024)
        return -1;
    int k = 0;
    while (k < 6 && v % 1024 == 0) {
        v /= 1024;
        k++;
    }
    char digits[40];
    qty_u128_text(v, digits);
    *rc = qty_put(out, n, q->neg, digits, 0, suffix[k]);
    return 0;
}

tg_qty_rc_e tg_qty_format(const tg_qty_t *q, char *out, size_t n)
{
    static const char *const dec_suffix[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    if (q->coef == 0)
        return qty_put(out, n, 0, "0", 0, "");
    tg_qty_rc_e rc = TG_QTY_OK;
    if (q->format == TG_QTY_BINARY_SI && qty_format_binary(q, out, n, &rc) == 0)
        return rc;
    char digits[40];
    size_t dl = qty_u128_text(q->coef, digits);
    int32_t e = q->exp10;
    int zeros = 0;
    while (e % 3 != 0) { /* down to a multiple of three: 1e4 is "10k" */
        zeros++;
        e--;
    }
    int exp_notation = q->format == TG_QTY_DECIMAL_EXP;
    if (!exp_notation && e > 18) {
        /* beyond exa: more zeros before "E", unless that gets too long */
        if ((size_t)(e - 18 + zeros) + dl + 3 <= TG_QTY_MAX_TEXT) {
            zeros += e - 18;
            e = 18;
        } else {
            exp_notation = 1;
        }
    }
    if (exp_notation) {
        char suffix[16] = "";
        if (e != 0)
            snprintf(suffix, sizeof(suffix), "e%d", (int)e);
        return qty_put(out, n, q->neg, digits, zeros, suffix);
    }
    return qty_put(out, n, q->neg, digits, zeros, dec_suffix[(e + 9) / 3]);
}

/* ---- arithmetic ---- */

static int qty_cmp_mag(const tg_qty_t *a, const tg_qty_t *b)
{
    if (a->coef == 0 || b->coef == 0)
        return (a->coef != 0) - (b->coef != 0);
    int64_t oa = (int64_t)qty_ndigits(a->coef) + a->exp10;
    int64_t ob = (int64_t)qty_ndigits(b->coef) + b->exp10;
    if (oa != ob)
        return oa < ob ? -1 : 1;
    /* same order of magnitude: the exponents differ by less than 38 */
    qty_u128 ca = a->coef, cb = b->coef;
    if (a->exp10 > b->exp10)
        ca *= qty_pow10(a->exp10 - b->exp10);
    else
        cb *= qty_pow10(b->exp10 - a->exp10);
    return ca < cb ? -1 : ca > cb;
}

int tg_qty_cmp(const tg_qty_t *a, const tg_qty_t *b)
{
    int sa = a->coef == 0 ? 0 : a->neg ? -1 : 1;
    int sb = b->coef == 0 ? 0 : b->neg ? -1 : 1;
    if (sa != sb)
        return sa < sb ? -1 : 1;
    int m = qty_cmp_mag(a, b);
    return sa < 0 ? -m : m;
}

tg_qty_rc_e tg_qty_cmp_text(const char *a, const char *b, int *cmp)
{
    tg_qty_t qa, qb;
    tg_qty_rc_e rc = tg_qty_parse(a, &qa);
    if (rc == TG_QTY_OK)
        rc = tg_qty_parse(b, &qb);
    if (rc == TG_QTY_OK)
        *cmp = tg_qty_cmp(&qa, &qb);
    return rc;
}

/* coef * 10^k within the coefficient limit. */
static int qty_scale_up(qty_u128 *coef, int64_t k)
{
    if (*coef == 0)
        return 0;
    if (k > QTY_MAX_DIGITS || (int64_t)qty_ndigits(*coef) + k > QTY_MAX_DIGITS)
        return -1;
    *coef *= qty_pow10((int)k);
    return 0;
}

static tg_qty_rc_e qty_add_signed(const tg_qty_t *a, const tg_qty_t *b, int bneg, tg_qty_t *out)
{
    tg_qty_format_e fmt = a->format;
    if (b->coef == 0) {
        *out = *a;
        return TG_QTY_OK;
    }
    if (a->coef == 0) {
        *out = *b;
        out->neg = bneg;
        out->format = fmt;
        return TG_QTY_OK;
    }
    int32_t e = a->exp10 < b->exp10 ? a->exp10 : b->exp10;
    qty_u128 ca = a->coef, cb = b->coef;
    if (qty_scale_up(&ca, (int64_t)a->exp10 - e) != 0 ||
        qty_scale_up(&cb, (int64_t)b->exp10 - e) != 0)
        return TG_QTY_ERANGE;
    tg_qty_t r = {0, e, 0, fmt};
    if (a->neg == bneg) {
        r.coef = ca + cb; /* both < 10^38: no overflow */
        r.neg = a->neg;
    } else if (ca >= cb) {
        r.coef = ca - cb;
        r.neg = a->neg;
    } else {
        r.coef = cb - ca;
        r.neg = bneg;
    }
    qty_normalise(&r);
    if (r.coef >= qty_pow10(QTY_MAX_DIGITS))
        return TG_QTY_ERANGE;
    *out = r;
    return TG_QTY_OK;
}

tg_qty_rc_e tg_qty_add(const tg_qty_t *a, const tg_qty_t *b, tg_qty_t *out)
{
    return qty_add_signed(a, b, b->neg, out);
}

tg_qty_rc_e tg_qty_sub(const tg_qty_t *a, const tg_qty_t *b, tg_qty_t *out)
{
    return qty_add_signed(a, b, b->coef != 0 && !b->neg, out);
}

int tg_qty_is_zero(const tg_qty_t *q)
{
    return q->coef == 0;
}

int tg_qty_is_positive(const tg_qty_t *q)
{
    return q->coef != 0 && !q->neg;
}

/* ---- conversions ---- */

tg_qty_rc_e tg_qty_to_milli(const tg_qty_t *q, int64_t *milli)
{
    int64_t e = (int64_t)q->exp10 + 3;
    qty_u128 mag;
    if (e >= 0) {
        mag = q->coef;
        qty_u128 limit = (qty_u128)INT64_MAX + (q->neg ? 1 : 0);
        if (qty_scale_up(&mag, e) != 0 || mag > limit)
            return TG_QTY_ERANGE;
    } else {
        qty_u128 d = qty_pow10((int)-e); /* e >= -6 */
        mag = q->coef / d;
        if (q->coef % d != 0 && !q->neg)
            mag++; /* towards +infinity, as MilliValue */
    }
    *milli = q->neg ? (int64_t)(0 - (uint64_t)mag) : (int64_t)mag;
    return TG_QTY_OK;
}

void tg_qty_from_milli(int64_t milli, tg_qty_format_e fmt, tg_qty_t *out)
{
    out->neg = milli < 0;
    out->coef = milli < 0 ? (qty_u128)(-(milli + 1)) + 1 : (qty_u128)milli;
    out->exp10 = -3;
    out->format = fmt;
    qty_normalise(out);
}

double tg_qty_to_double(const tg_qty_t *q)
{
    char text[64];
    char digits[40];
    qty_u128_text(q->coef, digits);
    snprintf(text, sizeof(text), "%s%se%d", q->neg ? "-" : "", digits, (int)q->exp10);
    return strtod(text, NULL);
}
