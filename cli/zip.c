/* A minimal stored-zip writer. */
#include "zip.h"

#include <string.h>

#define ZIP_LOCAL_SIG   0x04034b50u
#define ZIP_CENTRAL_SIG 0x02014b50u
#define ZIP_END_SIG     0x06054b50u
#define ZIP_FLAG_UTF8   0x0800u
#define ZIP_DOS_DATE    0x0021u           /* 1980-01-01 */
#define ZIP_MADE_BY     ((3u << 8) | 20u) /* Unix, spec 2.0 */
#define ZIP_NEEDED      10u               /* 1.0: stored */

uint32_t tau_crc32(const void *data, size_t len)
{
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    uint32_t c = 0xffffffffu;
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

void tau_zip_init(tau_zip_t *z, size_t max)
{
    tg_buf_init(&z->out, max);
    tg_buf_init(&z->cd, max);
    z->count = 0;
    z->full = 0;
}

void tau_zip_clean(tau_zip_t *z)
{
    tg_buf_clean(&z->out);
    tg_buf_clean(&z->cd);
}

static void zip_u16(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)((v >> 8) & 0xff);
}

static void zip_u32(unsigned char *p, uint32_t v)
{
    zip_u16(p, v & 0xffff);
    zip_u16(p + 2, v >> 16);
}

int tau_zip_add(tau_zip_t *z, const char *name, const void *data, size_t len, unsigned mode)
{
    size_t nlen = strlen(name);
    if (nlen == 0 || nlen > 0xffff || z->count >= 0xffff || len > 0xffffffffu ||
        z->out.len > 0xffffffffu)
        return -1;
    /* the end record and central directory must fit too: check the total */
    size_t need = z->out.len + 30 + nlen + len + z->cd.len + 46 + nlen + 22;
    if (need > z->out.max) {
        z->full = 1;
        return -1;
    }
    uint32_t crc = tau_crc32(data, len);
    unsigned char h[46];
    zip_u32(h, ZIP_LOCAL_SIG);
    zip_u16(h + 4, ZIP_NEEDED);
    zip_u16(h + 6, ZIP_FLAG_UTF8);
    zip_u16(h + 8, 0); /* stored */
    zip_u16(h + 10, 0);
    zip_u16(h + 12, ZIP_DOS_DATE);
    zip_u32(h + 14, crc);
    zip_u32(h + 18, (uint32_t)len);
    zip_u32(h + 22, (uint32_t)len);
    zip_u16(h + 26, (uint32_t)nlen);
    zip_u16(h + 28, 0);
    uint32_t offset = (uint32_t)z->out.len;
    if (tg_buf_append(&z->out, h, 30) != TG_OK || tg_buf_append(&z->out, name, nlen) != TG_OK ||
        tg_buf_append(&z->out, data, len) != TG_OK) {
        z->full = 1;
        return -1;
    }
    zip_u32(h, ZIP_CENTRAL_SIG);
    zip_u16(h + 4, ZIP_MADE_BY);
    zip_u16(h + 6, ZIP_NEEDED);
    zip_u16(h + 8, ZIP_FLAG_UTF8);
    zip_u16(h + 10, 0);
    zip_u16(h + 12, 0);
    zip_u16(h + 14, ZIP_DOS_DATE);
    zip_u32(h + 16, crc);
    zip_u32(h + 20, (uint32_t)len);
    zip_u32(h + 24, (uint32_t)len);
    zip_u16(h + 28, (uint32_t)nlen);
    zip_u16(h + 30, 0);                                              /* extra */
    zip_u16(h + 32, 0);                                              /* comment */
    zip_u16(h + 34, 0);                                              /* disk */
    zip_u16(h + 36, 0);                                              /* internal attributes */
    zip_u32(h + 38, ((uint32_t)(0100000u | (mode & 07777u))) << 16); /* regular file */
    zip_u32(h + 42, offset);
    if (tg_buf_append(&z->cd, h, 46) != TG_OK || tg_buf_append(&z->cd, name, nlen) != TG_OK) {
        z->full = 1;
        return -1;
    }
    z->count++;
    return 0;
}

int tau_zip_finish(tau_zip_t *z)
{
    unsigned char e[22];
    uint32_t cd_off = (uint32_t)z->out.len;
    zip_u32(e, ZIP_END_SIG);
    zip_u16(e + 4, 0);
    zip_u16(e + 6, 0);
    zip_u16(e + 8, z->count);
    zip_u16(e + 10, z->count);
    zip_u32(e + 12, (uint32_t)z->cd.len);
    zip_u32(e + 16, cd_off);
    zip_u16(e + 20, 0);
    if (tg_buf_append(&z->out, z->cd.data ? z->cd.data : "", z->cd.len) != TG_OK ||
        tg_buf_append(&z->out, e, sizeof(e)) != TG_OK) {
        z->full = 1;
        return -1;
    }
    return 0;
}
