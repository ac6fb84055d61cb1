/* Quota quantities in milli-units, on core/quantity (see quota_qty.h). */
#include "core/quota_qty.h"

#include "core/quantity.h"

static tg_quota_qty_rc_e qty_rc(tg_qty_rc_e rc)
{
    return rc == TG_QTY_OK          ? TG_QUOTA_QTY_OK
           : rc == TG_QTY_ERANGE    ? TG_QUOTA_QTY_ERANGE
           : rc == TG_QTY_ETOOSMALL ? TG_QUOTA_QTY_ETOOSMALL
                                    : TG_QUOTA_QTY_ESYNTAX;
}

tg_quota_qty_rc_e tg_quota_qty_parse(const char *s, tg_quota_qty_t *out)
{
    tg_qty_t q;
    tg_qty_rc_e rc = tg_qty_parse(s, &q);
    int64_t milli = 0;
    if (rc == TG_QTY_OK)
        rc = tg_qty_to_milli(&q, &milli);
    if (rc != TG_QTY_OK)
        return qty_rc(rc);
    out->milli = milli;
    out->format = (tg_quota_qty_format_e)q.format;
    return TG_QUOTA_QTY_OK;
}

tg_quota_qty_rc_e tg_quota_qty_format(const tg_quota_qty_t *q, char *out, size_t n)
{
    tg_qty_t exact;
    tg_qty_from_milli(q->milli, (tg_qty_format_e)q->format, &exact);
    return qty_rc(tg_qty_format(&exact, out, n));
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

/* The text-level helpers work on the exact values: "100n" stays "100n". */
tg_quota_qty_rc_e tg_quota_qty_canonical(const char *in, char *out, size_t n)
{
    tg_qty_t q;
    tg_qty_rc_e rc = tg_qty_parse(in, &q);
    return qty_rc(rc != TG_QTY_OK ? rc : tg_qty_format(&q, out, n));
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
    tg_qty_t qa, qb;
    *ok = tg_qty_parse(a, &qa) == TG_QTY_OK && tg_qty_parse(b, &qb) == TG_QTY_OK;
    return *ok ? tg_qty_cmp(&qa, &qb) : 0;
}
