/* Base64 (RFC 4648 §4 and §5), strict on input. */
#include "core/base64.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *b64_alphabet(tg_b64_e a)
{
    return a == TG_B64_URL ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                           : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

/* 0..63 for the alphabet's characters, -1 for anything else. */
static int b64_value(unsigned char c, tg_b64_e a)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (a == TG_B64_URL ? '-' : '+'))
        return 62;
    if (c == (a == TG_B64_URL ? '_' : '/'))
        return 63;
    return -1;
}

size_t tg_base64_encoded_len(size_t len, tg_b64_e alphabet)
{
    if (alphabet == TG_B64_STD)
        return (len + 2) / 3 * 4;
    return len / 3 * 4 + (len % 3 ? len % 3 + 1 : 0);
}

size_t tg_base64_encode_to(const void *in, size_t len, tg_b64_e alphabet, char *out, size_t cap)
{
    const unsigned char *p = in;
    const char *abc = b64_alphabet(alphabet);
    size_t need = tg_base64_encoded_len(len, alphabet);
    if (cap < need + 1)
        return (size_t)-1;
    size_t o = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = ((uint32_t)p[i] << 16) | ((uint32_t)p[i + 1] << 8) | p[i + 2];
        out[o++] = abc[(v >> 18) & 63];
        out[o++] = abc[(v >> 12) & 63];
        out[o++] = abc[(v >> 6) & 63];
        out[o++] = abc[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (len - i == 2)
            v |= (uint32_t)p[i + 1] << 8;
        out[o++] = abc[(v >> 18) & 63];
        out[o++] = abc[(v >> 12) & 63];
        if (len - i == 2)
            out[o++] = abc[(v >> 6) & 63];
        while (alphabet == TG_B64_STD && o % 4)
            out[o++] = '=';
    }
    out[o] = '\0';
    return o;
}

char *tg_base64_encode(const void *in, size_t len, tg_b64_e alphabet)
{
    size_t cap = tg_base64_encoded_len(len, alphabet) + 1;
    char *out = tg_xmalloc(cap);
    (void)tg_base64_encode_to(in, len, alphabet, out, cap);
    return out;
}

/* The length without padding, or (size_t)-1 when the padding is wrong. */
static size_t b64_unpadded(const char *in, size_t len, tg_b64_e alphabet)
{
    size_t n = len;
    if (alphabet == TG_B64_STD) {
        while (n > 0 && len - n < 2 && in[n - 1] == '=')
            n--;
        if (n < len && len % 4 != 0)
            return (size_t)-1;
    }
    return n;
}

int tg_base64_valid(const char *in, size_t len, tg_b64_e alphabet, size_t *outlen)
{
    size_t n = b64_unpadded(in, len, alphabet);
    if (n == (size_t)-1 || n % 4 == 1)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (b64_value((unsigned char)in[i], alphabet) < 0)
            return 0;
    /* The unused low bits of the last character must be zero; otherwise two
     * different strings would decode to the same bytes. */
    if (n % 4 == 2 && (b64_value((unsigned char)in[n - 1], alphabet) & 0x0f))
        return 0;
    if (n % 4 == 3 && (b64_value((unsigned char)in[n - 1], alphabet) & 0x03))
        return 0;
    if (outlen)
        *outlen = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
    return 1;
}

int tg_base64_decode_to(const char *in, size_t len, tg_b64_e alphabet, unsigned char *out,
                        size_t cap, size_t *outlen)
{
    size_t want = 0;
    if (!tg_base64_valid(in, len, alphabet, &want) || cap < want)
        return -1;
    size_t n = b64_unpadded(in, len, alphabet), o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc = (acc << 6) | (uint32_t)b64_value((unsigned char)in[i], alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)((acc >> bits) & 0xff);
        }
    }
    *outlen = o;
    return 0;
}

int tg_base64_decode(const char *in, size_t len, tg_b64_e alphabet, unsigned char **out,
                     size_t *outlen)
{
    size_t want = 0;
    *out = NULL;
    *outlen = 0;
    if (!tg_base64_valid(in, len, alphabet, &want))
        return -1;
    unsigned char *buf = tg_xmalloc(want + 1);
    if (tg_base64_decode_to(in, len, alphabet, buf, want, outlen) != 0) {
        free(buf);
        return -1;
    }
    buf[*outlen] = '\0';
    *out = buf;
    return 0;
}
