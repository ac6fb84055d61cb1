/* Bytewise key order by word compares.
 *
 * Keys are sorted and searched bytewise in several hot places (the
 * canonical JSON writer, the provenance table, the schema's property
 * tables). Most keys differ in their first eight bytes, so each carries
 * those bytes as a big-endian integer, zero-padded: two keys whose prefixes
 * differ are ordered by one integer compare, the way memcmp of their bytes
 * would order them (padding only ever meets a longer key's byte, and a key
 * sorts before its extensions). Only equal prefixes go on to the bytes. */
#ifndef TG_CORE_KEYORDER_H
#define TG_CORE_KEYORDER_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t tg_key_prefix(const char *k, size_t n)
{
    uint64_t p = 0;
    if (n >= 8) {
        memcpy(&p, k, 8);
        return be64toh(p);
    }
    for (size_t i = 0; i < n; i++)
        p |= (uint64_t)(unsigned char)k[i] << (56 - 8 * i);
    return p;
}

/* <0, 0 or >0 as key a (an bytes, prefix ap) sorts before, with or after
 * key b: memcmp order, a shorter key first when it is the other's start.
 * Keys that share their first eight bytes (fields of one section:
 * "compute.head_cpu_limit", "compute.head_memory_request") are told apart
 * by their next eight the same way before any memcmp. */
static inline int tg_key_cmp(uint64_t ap, const char *a, size_t an, uint64_t bp, const char *b,
                             size_t bn)
{
    if (ap != bp)
        return ap < bp ? -1 : 1;
    if (an > 8 && bn > 8) {
        uint64_t a2 = tg_key_prefix(a + 8, an - 8), b2 = tg_key_prefix(b + 8, bn - 8);
        if (a2 != b2)
            return a2 < b2 ? -1 : 1;
        size_t m = an < bn ? an : bn;
        int c = m > 16 ? memcmp(a + 16, b + 16, m - 16) : 0;
        if (c)
            return c;
    }
    return an < bn ? -1 : an > bn;
}

#endif
