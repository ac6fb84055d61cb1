/* Strict base64url: one accepted spelling per byte string. */
#include "auth/b64url.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char b64url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* 0..63 for alphabet characters, -1 for anything else (including '=' and
 * whitespace, which compact JWS never contains). */
static int b64url_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

size_t tg_auth_b64url_decoded_len(size_t len)
{
    size_t full = len / 4 * 3;
    switch (len % 4) {
    case 2:
        return full + 1;
    case 3:
        return full + 2;
    default:
        return full;
    }
}

int tg_auth_b64url_valid(const char *in, size_t len)
{
    if (len % 4 == 1)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (b64url_val((unsigned char)in[i]) < 0)
            return 0;
    /* The unused low bits of the last character must be zero; otherwise two
     * different strings would decode to the same bytes. */
    if (len % 4 == 2 && (b64url_val((unsigned char)in[len - 1]) & 0x0f))
        return 0;
    if (len % 4 == 3 && (b64url_val((unsigned char)in[len - 1]) & 0x03))
        return 0;
    return 1;
}

int tg_auth_b64url_decode(const char *in, size_t len, unsigned char **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (!tg_auth_b64url_valid(in, len))
        return -1;
    size_t n = tg_auth_b64url_decoded_len(len);
    unsigned char *p = tg_xmalloc(n + 1);
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        acc = (acc << 6) | (uint32_t)b64url_val((unsigned char)in[i]);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            p[o++] = (unsigned char)((acc >> bits) & 0xff);
        }
    }
    p[o] = '\0';
    *out = p;
    *outlen = o;
    return 0;
}

size_t tg_auth_b64url_encode_to(const unsigned char *in, size_t len, char *out, size_t cap)
{
    size_t need = len / 3 * 4 + (len % 3 ? len % 3 + 1 : 0);
    if (cap < need + 1)
        return (size_t)-1;
    size_t o = 0;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = ((uint32_t)in[i] << 16) | ((uint32_t)in[i + 1] << 8) | in[i + 2];
        out[o++] = b64url_alphabet[(v >> 18) & 63];
        out[o++] = b64url_alphabet[(v >> 12) & 63];
        out[o++] = b64url_alphabet[(v >> 6) & 63];
        out[o++] = b64url_alphabet[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = b64url_alphabet[(v >> 18) & 63];
        out[o++] = b64url_alphabet[(v >> 12) & 63];
    } else if (len - i == 2) {
        uint32_t v = ((uint32_t)in[i] << 16) | ((uint32_t)in[i + 1] << 8);
        out[o++] = b64url_alphabet[(v >> 18) & 63];
        out[o++] = b64url_alphabet[(v >> 12) & 63];
        out[o++] = b64url_alphabet[(v >> 6) & 63];
    }
    out[o] = '\0';
    return o;
}

char *tg_auth_b64url_encode(const unsigned char *in, size_t len)
{
    size_t cap = len / 3 * 4 + 4 + 1;
    char *out = tg_xmalloc(cap);
    (void)tg_auth_b64url_encode_to(in, len, out, cap);
    return out;
}
