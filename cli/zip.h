/* A minimal zip writer: stored entries (no compression), UTF-8 names, Unix
 * modes, and a fixed timestamp (1980-01-01 00:00) so the same files always
 * give the same bytes, hence the same digest on the server. No zip64: the
 * archive is bounded well below 4 GiB and 65535 entries. */
#ifndef TAU_ZIP_H
#define TAU_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

typedef struct tau_zip_s {
    tg_buf_t out; /* local headers and data, then the central directory */
    tg_buf_t cd;  /* central directory records, appended on finish */
    unsigned count;
    int full; /* the bound was hit */
} tau_zip_t;

/* An empty archive whose final size may not exceed max bytes. */
void tau_zip_init(tau_zip_t *z, size_t max);
void tau_zip_clean(tau_zip_t *z);
/* Add a file (name: relative, '/'-separated; mode: Unix permission bits).
 * Returns 0, or -1 when the archive would exceed its bound (z->full) or the
 * name is unusable. */
int tau_zip_add(tau_zip_t *z, const char *name, const void *data, size_t len,
                unsigned mode) TG_MUSTCHECK;
/* Write the central directory and end record. Returns 0 or -1 (bound). The
 * archive is z->out.data / z->out.len. */
int tau_zip_finish(tau_zip_t *z) TG_MUSTCHECK;

/* CRC-32 (IEEE 802.3, as zip uses). */
uint32_t tau_crc32(const void *data, size_t len);

#endif
